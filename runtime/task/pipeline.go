package task

import (
	"context"
	"errors"
	"sync"
)

// stageDepth is how many batches may wait in front of a pipeline stage: enough for the stages to
// overlap when one of them is late to be scheduled (two cores shared with a broker), while a slow
// stage holds back the ones before it (back-pressure) and the batches a task holds stay few,
// however many records it has moved.
const stageDepth = 2

// stage runs one step of a task loop (the converters, say) on its own goroutine, so that it
// overlaps the steps before and after it, which call into other plugin instances. Batches are
// handled one at a time, in the order they were sent, which keeps the order of records per
// partition. The first error ends the stage; later sends return it.
type stage[T any] struct {
	in   chan stageItem[T]
	done chan struct{} // closed when the goroutine has ended
	err  error         // why it ended early; read after done is closed

	mu     sync.Mutex // held while sending, so that close does not close in under a sender
	closed bool
}

// stageItem is a batch, or a barrier: a channel closed once every batch sent before it is handled.
type stageItem[T any] struct {
	batch   T
	barrier chan struct{}
}

// errStageClosed is what a send to a stage that was closed returns.
var errStageClosed = errors.New("task: pipeline stage closed")

// startStage starts a stage that calls handle for each batch sent to it, with ctx: the stage's
// context outlives a graceful stop, so that batches already taken in are still handled; cancel it
// to abandon them.
func startStage[T any](ctx context.Context, handle func(context.Context, T) error) *stage[T] {
	s := &stage[T]{in: make(chan stageItem[T], stageDepth), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for it := range s.in {
			if it.barrier != nil {
				close(it.barrier)
				continue
			}
			err := ctx.Err()
			if err == nil {
				err = handle(ctx, it.batch)
			}
			if err != nil {
				s.err = err
				return
			}
		}
	}()
	return s
}

// send hands a batch to the stage, waiting while the stage is stageDepth batches behind. It fails
// with the stage's error when the stage has ended early, or when the stage was closed or ctx is
// done.
func (s *stage[T]) send(ctx context.Context, batch T) error {
	return s.put(ctx, stageItem[T]{batch: batch})
}

func (s *stage[T]) put(ctx context.Context, it stageItem[T]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStageClosed
	}
	select {
	case <-s.done:
		return s.err // not closed: the stage ended on an error
	default:
	}
	select {
	case s.in <- it:
		return nil
	case <-s.done:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain waits until the stage has handled every batch sent before the call, and returns the
// stage's error if it ended early.
func (s *stage[T]) drain(ctx context.Context) error {
	barrier := make(chan struct{})
	err := s.put(ctx, stageItem[T]{barrier: barrier})
	switch {
	case errors.Is(err, errStageClosed):
		barrier = nil // close is handling what was sent; wait for the stage to end
	case err != nil:
		return err
	}
	select {
	case <-barrier:
		return nil
	case <-s.done:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close tells the stage that no more batches come, waits until it has handled the ones it has, and
// returns the error that ended it, if any. Later sends fail and drains return at once.
func (s *stage[T]) close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.in)
	}
	s.mu.Unlock()
	<-s.done
	return s.err
}

// failed returns the error that ended the stage early, or nil while it runs (or after it was
// closed without one). It does not wait.
func (s *stage[T]) failed() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

package task

import "sync/atomic"

// freeList keeps the memory of a task's batches for the next ones, so that a steady stream of
// batches allocates none (at a file source's rates, batch memory is most of what the worker
// allocates, and what it allocates is what its GC marks). It keeps at most its capacity, and
// nothing once the task went idle.
type freeList[T any] struct {
	free chan *T
	// idle is set by release and cleared by get: the batches still in the pipeline when the task
	// went idle are not kept either.
	idle atomic.Bool
}

func newFreeList[T any](n int) freeList[T] { return freeList[T]{free: make(chan *T, n)} }

// get returns a kept element, or a new zero one.
func (l *freeList[T]) get() *T {
	l.idle.Store(false)
	select {
	case b := <-l.free:
		return b
	default:
		return new(T)
	}
}

// keep keeps b unless the list is full or the task is idle. Safe from any goroutine (the
// producer's promises return send buffers).
func (l *freeList[T]) keep(b *T) {
	if l.idle.Load() {
		return
	}
	select {
	case l.free <- b:
	default:
	}
}

// release drops every kept element: a task that has gone idle holds no batch memory, whatever it
// moved before (the next batches allocate it again).
func (l *freeList[T]) release() {
	l.idle.Store(true)
	for {
		select {
		case <-l.free:
		default:
			return
		}
	}
}

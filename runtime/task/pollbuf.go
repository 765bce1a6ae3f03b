package task

import (
	"context"
	"sync"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// bufferedPoller is a SourcePlugin that can poll into buffers the task hands it (wasmhost.Object):
// the result bytes are copied into buf and decoded into recs when they are large enough, and the
// records alias the returned buffer, which is the record batch (sdk/ABI.md §5.2) they were decoded
// from, as it is: a fused transform chain takes it as its input instead of the records encoded
// again. Without it, every POLL allocates a result copy and a record
// slice, at a file source's rates the largest part of what the worker allocates.
type bufferedPoller interface {
	PollInto(ctx context.Context, buf []byte, recs []wire.Record) ([]wire.Record, []byte, error)
}

// pollBuffer is the memory one polled batch lives in: the copy of the POLL result and the records
// decoded from it, and what the transform chain made of them. It goes down the pipeline with its
// batch and back to the free list once the batch was handed to the producer (which keeps the
// converters' outputs and copies of the headers, see setKafkaRecord).
type pollBuffer struct {
	bytes []byte
	recs  []wire.Record
	chain chainMemory
}

// chainMemory is where the transform chain's results for b's batch go. The records are b's POLL
// result decoded and unchanged since, so those bytes are the chain's input batch.
func (b *pollBuffer) chainMemory() *chainMemory {
	b.chain.batch = b.bytes
	return &b.chain
}

// pollBuffers is a free list of pollBuffers, bounded by what the pipeline holds at once (one being
// polled, stageDepth waiting in front of each of the three stages and one in each).
type pollBuffers struct{ freeList[pollBuffer] }

// maxKeptPollBuffer is the largest result buffer the free list keeps: a one-off huge batch is
// not held for the task's lifetime.
const maxKeptPollBuffer = 16 << 20

func newPollBuffers() *pollBuffers {
	return &pollBuffers{newFreeList[pollBuffer](3*(stageDepth+1) + 1)}
}

// put returns b (nil: nothing) to the free list, or drops it when the list is full or b is huge.
// Its records are cleared, so that a kept buffer does not keep headers or topic names reachable.
func (p *pollBuffers) put(b *pollBuffer) {
	if b == nil {
		return
	}
	if cap(b.bytes) > maxKeptPollBuffer || cap(b.chain.result) > maxKeptPollBuffer || p.idle.Load() {
		return
	}
	clear(b.recs[:cap(b.recs)])
	b.chain.res.Reset()
	b.chain.batch = nil
	p.keep(b)
}

// poll runs POLL, into a buffer from the free list when the plugin supports it. The returned
// buffer (nil without that support) is the batch's, to put back once the batch is converted.
func (p *pollBuffers) poll(ctx context.Context, plugin SourcePlugin) ([]wire.Record, *pollBuffer, error) {
	bp, ok := plugin.(bufferedPoller)
	if !ok {
		recs, err := plugin.Poll(ctx)
		return recs, nil, err
	}
	b := p.get()
	recs, buf, err := bp.PollInto(ctx, b.bytes, b.recs)
	b.bytes = buf
	if cap(recs) > cap(b.recs) {
		b.recs = recs
	}
	if err != nil || len(recs) == 0 {
		p.put(b) // before the caller's release, if it goes idle
		return nil, nil, err
	}
	return recs, b, nil
}

// scratch is a slice reused from one batch to the next, in a sync.Pool: a steady stream of batches
// allocates none, and the collections after a burst drop it, so that an idle task does not hold
// its largest batch's worth.
type scratch[T any] struct {
	pool sync.Pool // of *[]T
}

// get returns a slice of n zero elements and what to hand back to put once it is no longer used.
func (s *scratch[T]) get(n int) (*[]T, []T) {
	p, _ := s.pool.Get().(*[]T)
	if p == nil {
		p = new([]T)
	}
	return p, reuse(p, n)
}

// put clears what get returned, so that the pool keeps nothing else reachable, and keeps it.
func (s *scratch[T]) put(p *[]T) {
	clear((*p)[:cap(*p)])
	s.pool.Put(p)
}

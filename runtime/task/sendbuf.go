package task

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// sendBuffer is the memory of a converted batch that the producer holds until it has acknowledged
// every record of it: the converters' outputs (the records' keys and values alias them) and the
// kgo records themselves. It goes back to its free list with the batch's last acknowledgement, as
// kgo no longer touches a record once its promise is called; a batch with a record that failed is
// left to the GC (the task fails anyway).
type sendBuffer struct {
	bad          []bool   // the records that failed, not produced
	keys, values [][]byte // the batch's serialised keys and values; nil: every one is null
	// What the converters decode into and copy their results to, kept when keys or values are
	// nil or come from elsewhere (a converter that rejected records is called one at a time).
	keyOut, valOut     [][]byte
	keyBytes, valBytes []byte
	krs                []kgo.Record
	// A chain that converts (SourceConfig.Converting): its result, copied into converted, which
	// its records (ChainResult.Converted) alias; keys and values are not used then.
	chain     wire.ChainResult
	converted []byte
}

// maxSendBuffers bounds the send buffers a task keeps: enough for the batches a producer
// acknowledges about at once (a linger's worth), not for all it may hold (max.buffered.bytes).
const maxSendBuffers = 8

type sendBuffers struct{ freeList[sendBuffer] }

func newSendBuffers() *sendBuffers { return &sendBuffers{newFreeList[sendBuffer](maxSendBuffers)} }

// put returns b to the free list unless it is huge. It runs in the producer's promise, which must
// be quick: the records are cleared when the buffer is used again (reuse), not here. What a kept
// buffer keeps reachable meanwhile is bounded by maxSendBuffers and dropped once the task idles.
func (p *sendBuffers) put(b *sendBuffer) {
	if cap(b.keyBytes) > maxKeptPollBuffer || cap(b.valBytes) > maxKeptPollBuffer || cap(b.converted) > maxKeptPollBuffer {
		return
	}
	p.keep(b)
}

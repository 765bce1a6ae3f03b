package task

import (
	"context"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// bufferPoller answers PollInto with n records into the buffers it is given, and notes them. As
// wasmhost's, the buffer it returns is the record batch the records are decoded from.
type bufferPoller struct {
	fakeSource
	n        int
	gotBytes [][]byte
}

func (p *bufferPoller) PollInto(_ context.Context, buf []byte, recs []wire.Record) ([]wire.Record, []byte, error) {
	p.gotBytes = append(p.gotBytes, buf)
	if p.n == 0 {
		return nil, buf, nil
	}
	batch := make([]wire.Record, p.n)
	for i := range batch {
		batch[i] = wire.Record{Topic: "t", Partition: -1, Offset: -1, Timestamp: -1, Value: wire.Bytes([]byte("value"))}
	}
	buf = wire.AppendRecords(buf[:0], batch)
	recs, err := wire.DecodeRecordsInto(recs, buf)
	return recs, buf, err
}

func TestPollBuffersReuseAndRelease(t *testing.T) {
	ctx := context.Background()
	p := newPollBuffers()
	plugin := &bufferPoller{n: 3}
	recs, b, err := p.poll(ctx, plugin)
	if err != nil || len(recs) != 3 || b == nil {
		t.Fatalf("poll: %d records, buffer %v, %v", len(recs), b, err)
	}
	p.put(b)
	if b.recs[0].Topic != "" {
		t.Fatal("a returned buffer keeps its records' fields reachable")
	}
	// The next POLL gets the returned buffer.
	if _, b2, _ := p.poll(ctx, plugin); b2 != b || cap(plugin.gotBytes[1]) == 0 {
		t.Fatalf("the returned buffer was not reused: %p, %p", b2, b)
	}
	// A batch still in the pipeline when the task goes idle is dropped when it comes back.
	plugin.n = 0
	if recs, b3, _ := p.poll(ctx, plugin); recs != nil || b3 != nil {
		t.Fatalf("an empty POLL returned %d records and buffer %v", len(recs), b3)
	}
	p.release()
	p.put(b)
	if len(p.free) != 0 {
		t.Fatalf("%d buffers kept by an idle task", len(p.free))
	}
}

func TestPollBuffersDoNotKeepHugeOnes(t *testing.T) {
	p := newPollBuffers()
	p.put(&pollBuffer{bytes: make([]byte, 0, maxKeptPollBuffer+1)})
	if len(p.free) != 0 {
		t.Fatal("a one-off huge buffer was kept")
	}
}

// A plugin without PollInto polls as before, and its batches have no buffer to return.
func TestPollBuffersPlainPlugin(t *testing.T) {
	plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{sourceRec("t", "a", 1, "x")}}}}
	recs, b, err := newPollBuffers().poll(context.Background(), plugin)
	if err != nil || len(recs) != 1 || b != nil {
		t.Fatalf("got %d records, buffer %v, %v", len(recs), b, err)
	}
}

// batchChain is a FusedChain that notes the batch it is given and passes every record through.
type batchChain struct{ batch []byte }

func (c *batchChain) TransformInto(_ context.Context, records []wire.Record, batch []byte, res *wire.ChainResult, buf []byte) ([]byte, error) {
	c.batch = batch
	buf = wire.AppendU32(buf[:0], uint32(len(records)))
	for i := range records {
		buf = append(wire.AppendU32(buf, uint32(i)), byte(wire.StatusUnchanged))
	}
	return buf, res.Decode(buf, records, 1)
}

// A fused chain applied to a polled batch gets the POLL result its records were decoded from, as
// it is, and a buffer back in the free list forgets it.
func TestFusedChainGetsThePolledBatch(t *testing.T) {
	ctx := context.Background()
	fused := &batchChain{}
	p := newPollBuffers()
	recs, b, err := p.poll(ctx, &bufferPoller{n: 3})
	if err != nil || b == nil {
		t.Fatal(b, err)
	}
	out, _, _, err := Chain{{Alias: "a", Fused: fused}}.apply(ctx, recs, b.chainMemory())
	if err != nil || len(out) != 3 {
		t.Fatalf("apply: %d records, %v", len(out), err)
	}
	if len(fused.batch) == 0 || &fused.batch[0] != &b.bytes[0] || len(fused.batch) != len(b.bytes) {
		t.Fatal("the chain did not get the polled batch")
	}
	p.put(b)
	if b.chain.batch != nil {
		t.Fatal("a returned buffer still names its batch")
	}
}

func TestScratchReusesAndClears(t *testing.T) {
	var s scratch[*int]
	kept, in := s.get(3)
	if len(in) != 3 || in[0] != nil {
		t.Fatalf("get(3) = %v", in)
	}
	x := 1
	in[0], in[2] = &x, &x
	s.put(kept)
	if (*kept)[0] != nil || (*kept)[2] != nil {
		t.Fatal("put kept what the slice pointed to reachable")
	}
	// Shorter uses reuse the slice; longer ones grow it.
	if _, in := s.get(5); len(in) != 5 || in[4] != nil {
		t.Fatalf("get(5) = %v", in)
	}
}

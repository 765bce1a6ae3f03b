package sdk

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkEncodeSourceBatch measures the SDK's share of a POLL: 2000 records of one source partition,
// the shape of a FileStreamSource batch.
func BenchmarkEncodeSourceBatch(b *testing.B) {
	part := map[string]any{"filename": "/data/in.txt"}
	recs := make([]SourceRecord, 2000)
	now := time.Now()
	for i := range recs {
		recs[i] = SourceRecord{Topic: "lines", Value: String(fmt.Sprintf("line-%d", i)), Timestamp: now, SourcePartition: part,
			SourceOffset: map[string]any{"position": int64(i * 10)}}
	}
	var e sourceEncoder
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = e.encode(out[:0], recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}

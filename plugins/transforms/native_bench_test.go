//go:build !wasip1

package main

import (
	"encoding/json"
	"testing"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// BenchmarkNative runs InsertField$Value and MaskField$Value natively through the dispatcher on the
// benchmark batch: the guest-side cost without WebAssembly.
func BenchmarkNative(b *testing.B) {
	in := wire.AppendRecords(nil, benchBatch())
	for _, c := range []struct {
		class string
		cfg   map[string]string
	}{
		{"InsertField$Value", map[string]string{"static.field": "source", "static.value": "bench", "timestamp.field": "ts"}},
		{"MaskField$Value", map[string]string{"fields": "email"}},
		{"RegexRouter", map[string]string{"regex": "(.*)-raw", "replacement": "$1"}},
	} {
		b.Run(c.class, func(b *testing.B) {
			req, _ := json.Marshal(wire.OpenRequest{Plugin: c.class, Role: wire.RoleTransformation, Config: c.cfg})
			out, err := sdk.Invoke(wire.OpOpen, 0, req)
			var opened wire.OpenResponse
			if err == nil {
				err = json.Unmarshal(out, &opened)
			}
			if err != nil {
				b.Fatal(err)
			}
			h := opened.Handle
			defer sdk.Invoke(wire.OpClose, h, nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sdk.Invoke(wire.OpTransform, h, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

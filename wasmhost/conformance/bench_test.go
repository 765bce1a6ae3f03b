package conformance

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// BenchmarkTransform runs each SDK's conformance transformation, which reads every JSON value
// into its SDK's data model and writes it back, over batches of 1000 records with a small struct
// value, through the host: the SDKs' cost per record side by side, with their module sizes.
//
//	go test -run '^$' -bench BenchmarkTransform -benchtime 20x ./wasmhost/conformance/
func BenchmarkTransform(b *testing.B) {
	schema := []byte(`{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"},{"type":"double","optional":true,"field":"score"}],"optional":false,"name":"bench.Row"}`)
	batch := make([]wire.Record, 1000)
	for i := range batch {
		batch[i] = wire.Record{Topic: "t", Partition: 0, Offset: int64(i), Timestamp: -1, Key: wire.String(fmt.Sprint(i)),
			Value: wire.JSON(schema, fmt.Appendf(nil, `{"id":%d,"name":"name-%d","score":%d.5}`, i, i, i))}
	}
	for _, sdk := range SDKs {
		b.Run(sdk.Name, func(b *testing.B) {
			e := newEnv(b, pluginbuild.DirOf(b, sdk.Pkg))
			tr := e.open(b, "conformance.Transform", wire.KindTransformation, wire.RoleTransformation, nil, nil)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				out, _, err := tr.Transform(ctx, batch)
				if err != nil || len(out) != len(batch) {
					b.Fatalf("%d outputs, %v", len(out), err)
				}
			}
			b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "records/s")
			if fi, err := os.Stat(e.module); err == nil {
				b.ReportMetric(float64(fi.Size()), "module-bytes")
			}
		})
	}
}

//go:build !wasip1

package main

import (
	"fmt"
	"testing"

	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// BenchmarkSinkPutNative is BenchmarkSinkPut with the task run natively: the guest code's own cost,
// to profile (-cpuprofile) without the WebAssembly runtime in the way.
func BenchmarkSinkPutNative(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Options{})
	task := &sinkTask{}
	if err := task.Start(sdk.NewTaskContext("bench", 0), sdk.Config(sinkConfig(srv, "auto.create", "true", "insert.mode", "upsert",
		"pk.mode", "record_value", "pk.fields", "orderid"))); err != nil {
		b.Fatal(err)
	}
	defer task.Stop()
	const batch = 500
	recs := make([]sdk.SinkRecord, batch)
	id := 0
	b.ResetTimer()
	for range b.N {
		for i := range recs {
			recs[i] = sdk.SinkRecord{Topic: "orders", Offset: int64(id), Key: sdk.Null(), Value: sdk.JSON([]byte(orderSchema),
				[]byte(fmt.Sprintf(`{"ordertime":1500000000000,"orderid":%d,"itemid":"Item_%d","orderunits":3.5,"address_city":"City_1","address_state":"State_2","address_zipcode":12345}`, id, id)))}
			id++
		}
		if err := task.Put(recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
}

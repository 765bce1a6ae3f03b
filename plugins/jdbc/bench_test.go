//go:build !wasip1

package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

const orderSchema = `{"type":"struct","name":"ksql.orders","fields":[{"field":"ordertime","type":"int64"},{"field":"orderid","type":"int32"},
{"field":"itemid","type":"string"},{"field":"orderunits","type":"double"},{"field":"address_city","type":"string"},
{"field":"address_state","type":"string"},{"field":"address_zipcode","type":"int64"}]}`

// BenchmarkSinkPut puts batches of 500 order records (upsert by orderid) through the module into
// PostgreSQL: the sink's own cost, without the worker's consumer, converters and transforms.
func BenchmarkSinkPut(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Options{})
	h := jdbcHostB(b, srv.Addr())
	task := mustOpenB(b, h, sinkConfig(srv, "auto.create", "true", "insert.mode", "upsert", "pk.mode", "record_value", "pk.fields", "orderid"))
	const batch = 500
	recs := make([]wire.Record, batch)
	b.ResetTimer()
	id := 0
	for range b.N {
		for i := range recs {
			recs[i] = wire.Record{Topic: "orders", Offset: int64(id), Timestamp: -1, Key: wire.Null(), Value: wire.JSON([]byte(orderSchema),
				[]byte(fmt.Sprintf(`{"ordertime":1500000000000,"orderid":%d,"itemid":"Item_%d","orderunits":3.5,"address_city":"City_1","address_state":"State_2","address_zipcode":12345}`, id, id)))}
			id++
		}
		if err := task.Put(context.Background(), recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
}

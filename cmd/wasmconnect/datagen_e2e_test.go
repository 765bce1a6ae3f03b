//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDatagenOrdersReachTheTopic runs kafka-connect-datagen's orders quickstart, by its Confluent
// class name and config keys, in a worker: iterations records arrive, each once, as JsonConverter
// envelopes of the orders schema keyed by orderid, and the task's stored offset is
// kafka-connect-datagen's.
func TestDatagenOrdersReachTheTopic(t *testing.T) {
	const n = 5000
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, nil)
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "orders", "config": map[string]string{
		"connector.class": "io.confluent.kafka.connect.datagen.DatagenConnector",
		"kafka.topic":     "orders", "quickstart": "orders", "max.interval": "0", "iterations": fmt.Sprint(n),
		"random.seed": "5", "tasks.max": "1",
	}})
	recs := consumeN(t, addr, "orders", n, time.Minute)
	seen := make(map[int]bool, n)
	for i, r := range recs {
		var key struct {
			Schema  struct{ Type string }
			Payload int
		}
		var value struct {
			Schema struct {
				Name   string
				Fields []struct{ Field, Type string }
			}
			Payload struct {
				OrderID    int     `json:"orderid"`
				OrderUnits float64 `json:"orderunits"`
				Address    struct{ Zipcode int64 }
			}
		}
		if err := json.Unmarshal(r.Key, &key); err != nil {
			t.Fatalf("record %d key %s: %v", i, r.Key, err)
		}
		if err := json.Unmarshal(r.Value, &value); err != nil {
			t.Fatalf("record %d value %s: %v", i, r.Value, err)
		}
		if value.Schema.Name != "ksql.orders" || len(value.Schema.Fields) != 5 || value.Schema.Fields[1].Field != "orderid" ||
			value.Schema.Fields[1].Type != "int32" || key.Schema.Type != "int32" || key.Payload != value.Payload.OrderID ||
			value.Payload.Address.Zipcode < 10000 {
			t.Fatalf("record %d: key %s value %s", i, r.Key, r.Value)
		}
		if seen[value.Payload.OrderID] {
			t.Fatalf("orderid %d twice", value.Payload.OrderID)
		}
		seen[value.Payload.OrderID] = true
	}
	for id := range n {
		if !seen[id] {
			t.Fatalf("orderid %d missing", id)
		}
	}
	want := fmt.Sprintf(`{"offsets":[{"partition":{"task.id":0},"offset":{"current.iteration":%d,"random.seed":5,"task.generation":1}}]}`, n)
	waitFor(t, 30*time.Second, "the stored offset "+want, func() bool {
		_, body := w.call(t, "GET", "/connectors/orders/offsets", nil)
		return string(body) == want
	})
	if s := w.mustStatus(t, "orders"); s.Tasks[0].State != "RUNNING" {
		t.Fatalf("after its iterations the task is %+v, want RUNNING (idle)", s)
	}
	if more := consumeN(t, addr, "orders", n+1, 2*time.Second); len(more) != n {
		t.Fatalf("%d records after iterations=%d", len(more), n)
	}
}

// consumeN reads topic from its start until it has n records or timeout passes, and returns what
// it read.
func consumeN(t *testing.T, addr, topic string, n int, timeout time.Duration) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
	}
	return recs
}

// BenchmarkDatagenToTopic measures a datagen task writing orders (max.interval 0) into a topic
// with JsonConverter, records/s from the first record to the last:
//
//	go test -tags e2e -run '^$' -bench DatagenToTopic -benchtime 1x ./cmd/wasmconnect/
func BenchmarkDatagenToTopic(b *testing.B) {
	const n = 300_000
	_, addr := startBroker(b)
	w := startWorker(b, "worker", addr, nil)
	waitCompiled(b, w)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	createTopic(b, adm, "orders")
	w.mustCall(b, 201, "POST", "/connectors", map[string]any{"name": "orders", "config": map[string]string{
		"connector.class": "DatagenConnector", "kafka.topic": "orders", "quickstart": "orders",
		"max.interval": "0", "iterations": fmt.Sprint(n), "random.seed": "1",
	}})
	waitEnd(b, adm, "orders", 1)
	first := time.Now()
	waitEnd(b, adm, "orders", n)
	b.ReportMetric(float64(n)/time.Since(first).Seconds(), "records/s")
}

//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestOffsetsAfterWorkerRestart checks that a restarted worker answers GET /connectors/x/offsets
// with the offsets stored before it started, from its first answer on: Kafka Connect reads the
// offsets topic to its end before it answers, so an empty list there means "no offsets", never
// "not read yet".
func TestOffsetsAfterWorkerRestart(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	props := map[string]string{"plugin.fs.allow": files}
	w := startWorker(t, "worker-1", addr, props)
	in := filepath.Join(files, "in.txt")
	writeLines(t, in, "l-", 0, 100)
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "src", "tasks.max": "1",
	}})
	size := fileSize(t, in)
	waitFor(t, time.Minute, "the whole file's offset committed", func() bool { return sourcePosition(t, w, "src") == size })
	w.stop(syscall.SIGKILL)
	// A long offsets topic, so that a worker which answered before reading it to the end would be
	// caught doing so: 100,000 offsets of other connectors, then the connector's own offset again,
	// last in its partition.
	fillOffsetsTopic(t, addr, 100_000, offsetRecord(t, "src", map[string]any{"filename": in}, map[string]any{"position": size}))

	w = startWorkerNoWait(t, "worker-2", addr, props)
	answers, running := 0, time.Time{}
	waitFor(t, time.Minute, "the restarted task to run for 2 s", func() bool {
		code, b := w.call(t, "GET", "/connectors/src/offsets", nil)
		if code == 200 {
			answers++
			var offs struct {
				Offsets []struct {
					Offset map[string]float64 `json:"offset"`
				} `json:"offsets"`
			}
			if err := json.Unmarshal(b, &offs); err != nil {
				t.Fatalf("GET /connectors/src/offsets: %v: %s", err, b)
			}
			if len(offs.Offsets) != 1 || int64(offs.Offsets[0].Offset["position"]) != size {
				t.Fatalf("answer %d of the restarted worker: GET /connectors/src/offsets = %s, want the stored position %d", answers, b, size)
			}
		}
		if running.IsZero() {
			if s, ok := w.status(t, "src"); ok && len(s.Tasks) > 0 && s.Tasks[0].State == "RUNNING" {
				running = time.Now()
			}
			return false
		}
		return time.Since(running) > 2*time.Second
	})
	t.Logf("%d answers, every one with the stored offset", answers)
}

// offsetRecord is a record of the offsets topic as a worker writes it: the key
// ["<connector>",{partition}], the offset as the value.
func offsetRecord(t *testing.T, connector string, partition, offset map[string]any) *kgo.Record {
	t.Helper()
	key, err := json.Marshal([]any{connector, partition})
	if err != nil {
		t.Fatal(err)
	}
	value, err := json.Marshal(offset)
	if err != nil {
		t.Fatal(err)
	}
	return &kgo.Record{Topic: "connect-offsets", Key: key, Value: value}
}

// fillOffsetsTopic writes n offsets of other connectors to the offsets topic, spread over its
// partitions, and then last.
func fillOffsetsTopic(t *testing.T, addr string, n int, last *kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make(chan error, 1)
	for i := range n {
		r := offsetRecord(t, fmt.Sprintf("other-%d", i%100), map[string]any{"p": i}, map[string]any{"position": i})
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, last).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

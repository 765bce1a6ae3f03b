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

// TestOffsetsOfAConnectorWithItsOwnTopic runs a FileStreamSource with offsets.storage.topic
// (KIP-618) on a distributed worker: it starts from the offset it committed to the worker's
// offsets topic before it was moved to its own (the fallback), writes each offset to both topics
// in Kafka's ["<connector>",{partition}] form, resumes from its own topic after a restart, and the
// REST offsets endpoints read and reset it in both.
func TestOffsetsOfAConnectorWithItsOwnTopic(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})
	in := filepath.Join(files, "in.txt")
	writeLines(t, in, "l-", 0, 50)
	half := fileSize(t, in)
	writeLines(t, in, "l-", 50, 100)
	size := fileSize(t, in)
	partition := map[string]any{"filename": in}
	// What the connector committed before it had a topic of its own: the first 50 lines.
	produceOffset(t, addr, offsetRecord(t, "src", partition, map[string]any{"position": half}))

	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "src", "tasks.max": "1",
		"offsets.storage.topic": "src-offsets",
	}})
	waitFor(t, time.Minute, "the whole file's offset committed", func() bool { return sourcePosition(t, w, "src") == size })
	if n := len(readTopic(t, addr, "src")); n != 50 {
		t.Fatalf("the source wrote %d records, want the 50 lines after the worker's topic's offset", n)
	}
	key := fmt.Sprintf(`["src",{"filename":%q}]`, in)
	own, global := newOffsetsReader(t, addr, "src-offsets", false), newOffsetsReader(t, addr, "connect-offsets", false)
	for _, r := range []*offsetsReader{own, global} {
		waitFor(t, time.Minute, r.topic+" to hold the committed position", func() bool { return r.position(t, key) == size })
	}

	// After a restart the task reads its own topic first: an older offset in the worker's topic
	// (written here by hand) is only a fallback, so no line is read again.
	w.stop(syscall.SIGTERM)
	produceOffset(t, addr, offsetRecord(t, "src", partition, map[string]any{"position": 0}))
	writeLines(t, in, "l-", 100, 120)
	size = fileSize(t, in)
	w.start()
	w.waitReady(t)
	waitFor(t, time.Minute, "the appended lines' offset committed", func() bool { return sourcePosition(t, w, "src") == size })
	if n := len(readTopic(t, addr, "src")); n != 70 {
		t.Fatalf("after the restart the source topic holds %d records, want 70 (resumed from its own offsets topic)", n)
	}
	waitFor(t, time.Minute, "the worker's topic to get the new position too", func() bool { return global.position(t, key) == size })

	// DELETE /connectors/src/offsets tombstones the partition in both topics.
	w.mustCall(t, 204, "PUT", "/connectors/src/stop", nil)
	waitFor(t, time.Minute, "the connector to stop", func() bool {
		s, ok := w.status(t, "src")
		return ok && s.Connector.State == "STOPPED" && len(s.Tasks) == 0
	})
	w.mustCall(t, 200, "DELETE", "/connectors/src/offsets", nil)
	for _, r := range []*offsetsReader{own, global} {
		waitFor(t, time.Minute, r.topic+" to hold the reset's tombstone", func() bool { return r.tombstoned(t, key) })
	}
	if p := sourcePosition(t, w, "src"); p != 0 {
		t.Fatalf("GET /connectors/src/offsets after the reset: position %d, want none", p)
	}
}

// TestExactlyOnceOffsetsInTheConnectorsTopic: with exactly.once.source.support=enabled, a source
// connector with offsets.storage.topic writes its offsets to that topic inside the task's
// transactions, and copies them to the worker's offsets topic outside them.
func TestExactlyOnceOffsetsInTheConnectorsTopic(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files, "exactly.once.source.support": "enabled"})
	in := filepath.Join(files, "in.txt")
	writeLines(t, in, "e-", 0, 100)
	size := fileSize(t, in)
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "eos", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "eos-topic",
		"offsets.storage.topic": "eos-offsets",
	}})
	waitFor(t, time.Minute, "the whole file's offset committed", func() bool { return sourcePosition(t, w, "eos") == size })
	key := fmt.Sprintf(`["eos",{"filename":%q}]`, in)
	own, global := newOffsetsReader(t, addr, "eos-offsets", true), newOffsetsReader(t, addr, "connect-offsets", true)
	waitFor(t, time.Minute, "eos-offsets to hold the committed position", func() bool { return own.position(t, key) == size })
	waitFor(t, time.Minute, "connect-offsets to hold the copy", func() bool { return global.position(t, key) == size })
	if !own.transactional[key] {
		t.Fatal("the connector's offsets topic got its offset outside a transaction")
	}
	if global.transactional[key] {
		t.Fatal("the worker's offsets topic got the copy inside the task's transaction; Kafka writes it outside")
	}
}

// offsetsReader follows an offsets topic, keeping each key's last value.
type offsetsReader struct {
	topic         string
	cl            *kgo.Client
	values        map[string][]byte // nil: a tombstone
	transactional map[string]bool   // whether the key's last record was in a transaction
}

func newOffsetsReader(t *testing.T, addr, topic string, readCommitted bool) *offsetsReader {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &offsetsReader{topic: topic, cl: cl, values: map[string][]byte{}, transactional: map[string]bool{}}
}

// poll reads what arrived since the last poll (waiting up to a second for it).
func (r *offsetsReader) poll(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fs := r.cl.PollFetches(ctx)
	fs.EachError(func(topic string, p int32, err error) {
		if ctx.Err() == nil {
			t.Logf("reading %s[%d]: %v", topic, p, err)
		}
	})
	fs.EachRecord(func(rec *kgo.Record) {
		r.values[string(rec.Key)] = rec.Value
		r.transactional[string(rec.Key)] = rec.Attrs.IsTransactional()
	})
}

// position is the FileStreamSource position stored under key, -1 if none.
func (r *offsetsReader) position(t *testing.T, key string) int64 {
	t.Helper()
	r.poll(t)
	v, ok := r.values[key]
	if !ok || v == nil {
		return -1
	}
	var off struct{ Position int64 }
	if err := json.Unmarshal(v, &off); err != nil {
		t.Fatalf("%s: the value of %s is %s: %v", r.topic, key, v, err)
	}
	return off.Position
}

// tombstoned reports whether key's last record is a tombstone.
func (r *offsetsReader) tombstoned(t *testing.T, key string) bool {
	t.Helper()
	r.poll(t)
	v, ok := r.values[key]
	return ok && v == nil
}

func produceOffset(t *testing.T, addr string, r *kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

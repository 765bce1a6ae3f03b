package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const offsetsTopic = "connect-offsets"

func startOffsetStore(t *testing.T, e *testEnv) *OffsetStore {
	t.Helper()
	s := NewOffsetStore(e.options(), TopicSpec{Name: offsetsTopic, Partitions: 25, ReplicationFactor: -1})
	must(t, s.Start(e.ctx))
	t.Cleanup(s.Close)
	return s
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// javaPartition is where Java's default partitioner puts a key:
// toPositive(murmur2(key)) % n. The hashes are the test vectors of Kafka's
// UtilsTest.testMurmur2.
func javaPartition(t *testing.T, key string, n int32) int32 {
	t.Helper()
	hashes := map[string]int32{
		"21":                       -973932308,
		"foobar":                   -790332482,
		"abc":                      479470107,
		"a-little-bit-long-string": -985981536,
	}
	h, ok := hashes[key]
	if !ok {
		t.Fatalf("no murmur2 test vector for %q", key)
	}
	return (h & 0x7fffffff) % n
}

func TestOffsetsRoundTrip(t *testing.T) {
	e := newEnv(t)
	s := startOffsetStore(t, e)

	must(t, s.Put(e.ctx, "file-src", []OffsetEntry{
		{Partition: raw(`{"filename":"/tmp/a.txt"}`), Offset: raw(`{"position":30}`)},
		{Partition: raw(` { "z": 1, "a": "x<y" } `), Offset: raw(`{"pos": 1.50, "done": false}`)},
	}))
	must(t, s.Put(e.ctx, "other", []OffsetEntry{{Partition: raw(`{"filename":"/tmp/a.txt"}`), Offset: raw(`{"position":1}`)}}))

	// Lookups do not depend on key order or whitespace.
	if got, ok := s.Get("file-src", []byte(`{"a":"x<y","z":1}`)); !ok || string(got) != `{"done":false,"pos":1.50}` {
		t.Fatalf("Get = %s, %v", got, ok)
	}
	if got, ok := s.Get("file-src", []byte(`{"filename":"/tmp/a.txt"}`)); !ok || string(got) != `{"position":30}` {
		t.Fatalf("Get = %s, %v", got, ok)
	}
	if _, ok := s.Get("file-src", []byte(`{"filename":"/tmp/none"}`)); ok {
		t.Fatal("Get found an offset that was never written")
	}
	want := []OffsetEntry{
		{Partition: raw(`{"a":"x<y","z":1}`), Offset: raw(`{"done":false,"pos":1.50}`)},
		{Partition: raw(`{"filename":"/tmp/a.txt"}`), Offset: raw(`{"position":30}`)},
	}
	if got := s.Offsets("file-src"); !reflect.DeepEqual(got, want) {
		t.Fatalf("Offsets = %s, want %s", got, want)
	}

	// The exact keys and values in the topic.
	got := map[string]string{}
	for _, r := range e.records(offsetsTopic) {
		got[r.Key] = r.Value
	}
	wantRaw := map[string]string{
		`["file-src",{"filename":"/tmp/a.txt"}]`: `{"position":30}`,
		`["file-src",{"a":"x<y","z":1}]`:         `{"done":false,"pos":1.50}`,
		`["other",{"filename":"/tmp/a.txt"}]`:    `{"position":1}`,
	}
	if !reflect.DeepEqual(got, wantRaw) {
		t.Fatalf("offsets topic:\ngot  %q\nwant %q", got, wantRaw)
	}

	// Reset one partition: a tombstone, and Get no longer finds it.
	must(t, s.Put(e.ctx, "file-src", []OffsetEntry{{Partition: raw(`{"filename":"/tmp/a.txt"}`)}}))
	if _, ok := s.Get("file-src", []byte(`{"filename":"/tmp/a.txt"}`)); ok {
		t.Fatal("offset still present after reset")
	}
	recs := e.records(offsetsTopic)
	var sawTombstone bool
	for _, r := range recs {
		if r.Key == `["file-src",{"filename":"/tmp/a.txt"}]` && r.Value == tombstone {
			sawTombstone = true
		}
	}
	if !sawTombstone {
		t.Fatalf("no tombstone in %q", recs)
	}
	if got := s.Offsets("other"); len(got) != 1 {
		t.Fatalf("resetting file-src touched other: %s", got)
	}

	// A restarted worker sees the same offsets.
	s2 := startOffsetStore(t, e)
	if a, b := s.Offsets("file-src"), s2.Offsets("file-src"); !reflect.DeepEqual(a, b) {
		t.Fatalf("second store: %s, first: %s", b, a)
	}
}

// TestOffsetsJavaKeys checks that keys written by Java workers, whose bytes
// we would not produce ourselves, are found and updated in place.
func TestOffsetsJavaKeys(t *testing.T) {
	e := newEnv(t)
	e.createTopic(offsetsTopic, 25, map[string]string{"cleanup.policy": "compact"})
	javaKey := `["jdbc",{"table":"t1","protocol":"1"}]`
	e.produce(offsetsTopic, javaKey, `{"incrementing":7}`, "not json", `{"x":1}`)
	s := startOffsetStore(t, e)

	if got, ok := s.Get("jdbc", []byte(`{"protocol":"1","table":"t1"}`)); !ok || string(got) != `{"incrementing":7}` {
		t.Fatalf("Get = %s, %v", got, ok)
	}
	must(t, s.Put(e.ctx, "jdbc", []OffsetEntry{{Partition: raw(`{"protocol":"1","table":"t1"}`), Offset: raw(`{"incrementing":8}`)}}))
	recs := e.records(offsetsTopic)
	last := recs[len(recs)-1]
	for _, r := range recs {
		if r.Value == `{"incrementing":8}` {
			last = r
		}
	}
	if last.Key != javaKey || last.Value != `{"incrementing":8}` {
		t.Fatalf("update went to %q = %q, want the Java key %q", last.Key, last.Value, javaKey)
	}
}

// TestOffsetsPartitioning checks that records land where Java's murmur2
// partitioner would put them.
func TestOffsetsPartitioning(t *testing.T) {
	e := newEnv(t)
	l := NewLog(LogConfig{Topic: TopicSpec{Name: "hashed", Partitions: 25}, SeedBrokers: []string{e.addr}, ClientID: "t"})
	must(t, l.Start(e.ctx))
	defer l.Close()
	keys := []string{"21", "foobar", "abc", "a-little-bit-long-string"}
	for _, k := range keys {
		must(t, l.Send(e.ctx, []byte(k), []byte("v")))
	}
	for _, r := range e.records("hashed") {
		if want := javaPartition(t, r.Key, 25); r.Partition != want {
			t.Errorf("key %q in partition %d, Java puts it in %d", r.Key, r.Partition, want)
		}
	}
}

func TestOffsetsValidation(t *testing.T) {
	e := newEnv(t)
	s := startOffsetStore(t, e)
	for _, tc := range []struct {
		entry OffsetEntry
		want  string
	}{
		{OffsetEntry{Partition: raw(`["a"]`), Offset: raw(`{}`)}, "want a JSON object"},
		{OffsetEntry{Partition: raw(`{"a":{"nested":1}}`), Offset: raw(`{}`)}, "only allows primitive values"},
		{OffsetEntry{Partition: raw(`{"a":1}`), Offset: raw(`{"pos":[1]}`)}, "only allows primitive values"},
		{OffsetEntry{Partition: raw(`{"a":1`), Offset: raw(`{}`)}, "not valid JSON"},
	} {
		err := s.Put(e.ctx, "c", []OffsetEntry{tc.entry})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `connector "c"`) {
			t.Errorf("Put(%s, %s) error = %v, want one containing %q", tc.entry.Partition, tc.entry.Offset, err, tc.want)
		}
	}
}

func TestFileOffsetStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "connect.offsets")
	open := func() *FileOffsetStore {
		s := NewFileOffsetStore(path)
		if err := s.Start(t.Context()); err != nil {
			t.Fatalf("Start: %v", err)
		}
		return s
	}

	s := open()
	if got := s.Offsets("c"); len(got) != 0 {
		t.Fatalf("new store has offsets %s", got)
	}
	must(t, s.Put(t.Context(), "c", []OffsetEntry{
		{Partition: raw(`{"file":"a<b"}`), Offset: raw(`{"line":1}`)},
		{Partition: raw(`{"file":"b"}`), Offset: raw(`{"line":2}`)},
	}))
	must(t, s.Put(t.Context(), "c", []OffsetEntry{{Partition: raw(`{"file":"a<b"}`), Offset: raw(`{"line":3}`)}}))
	s.Close()

	s = open()
	if got, ok := s.Get("c", []byte(`{"file":"a<b"}`)); !ok || string(got) != `{"line":3}` {
		t.Fatalf("after reopen Get = %s, %v", got, ok)
	}
	must(t, s.Put(t.Context(), "c", []OffsetEntry{{Partition: raw(`{"file":"b"}`), Offset: nil}}))
	s.Close()

	s = open()
	want := []OffsetEntry{{Partition: raw(`{"file":"a<b"}`), Offset: raw(`{"line":3}`)}}
	if got := s.Offsets("c"); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reset and reopen Offsets = %s, want %s", got, want)
	}
	data, err := os.ReadFile(path)
	must(t, err)
	if !strings.Contains(string(data), `{"key":["c",{"file":"a<b"}],"value":{"line":3}}`) {
		t.Fatalf("file does not hold the raw key and value:\n%s", data)
	}

	must(t, os.WriteFile(path, []byte("garbage"), 0o644))
	if err := NewFileOffsetStore(path).Start(t.Context()); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("corrupt file: error %v, want one naming the file", err)
	}
}

package store

import (
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The internal topics are written by every worker of the group, by Java workers, and by anyone with
// a Kafka client: their records are outside bytes. These targets check that no record, or sequence
// of records, makes a store panic or hold the worker's memory hostage (a commit record once asked
// for 2^40 task slots), and that what it keeps stays readable.

func fuzzOptions() Options { return Options{Logger: slog.New(slog.DiscardHandler)} }

func FuzzConfigRecords(f *testing.F) {
	f.Add("connector-a", []byte(`{"properties":{"connector.class":"FileStreamSource","name":"a"}}`),
		"task-a-0", []byte(`{"properties":{"file":"/f"}}`), "commit-a", []byte(`{"tasks":1}`))
	f.Add("target-state-a", []byte(`{"state":"PAUSED","state.v2":"PAUSED"}`), "commit-a", []byte(`{"tasks":1099511627776}`),
		"tasks-count-a", []byte(`{"task-count":3}`))
	f.Add("session-key", []byte(`{"key":"AAAA","algorithm":"HmacSHA256","creation-timestamp":1}`),
		"restart-connector-a", []byte(`{"include-tasks":true,"only-failed":false}`), "logger-cluster-org.apache", []byte(`{"level":"DEBUG"}`))
	f.Fuzz(func(t *testing.T, k1 string, v1 []byte, k2 string, v2 []byte, k3 string, v3 []byte) {
		s := newConfigStore(fuzzOptions(), "fuzz")
		for i, r := range []struct {
			k string
			v []byte
		}{{k1, v1}, {k2, v2}, {k3, v3}, {k1, nil}} {
			s.apply(&kgo.Record{Key: []byte(r.k), Value: r.v, Offset: int64(i)})
		}
		snap := s.Snapshot()
		for name, tasks := range snap.Tasks {
			if len(tasks) > 1<<16 {
				t.Fatalf("connector %q has %d task configs from 3 records", name, len(tasks))
			}
		}
	})
}

func FuzzStatusRecords(f *testing.F) {
	f.Add("status-connector-a", []byte(`{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":3}`),
		"status-task-a-0", []byte(`{"state":"FAILED","trace":"boom","worker_id":"w:8083","generation":3}`))
	f.Add("status-topic-t:connector-a", []byte(`{"topic":{"name":"t","connector":"a","task":0,"discoverTimestamp":1}}`),
		"status-task-a-x", []byte(`{}`))
	f.Fuzz(func(t *testing.T, k1 string, v1 []byte, k2 string, v2 []byte) {
		s := newStatusStore(fuzzOptions(), "fuzz")
		for i, r := range []struct {
			k string
			v []byte
		}{{k1, v1}, {k2, v2}, {k2, nil}} {
			s.apply(&kgo.Record{Key: []byte(r.k), Value: r.v, Offset: int64(i)})
		}
		s.Connector("a")
	})
}

func FuzzOffsetRecords(f *testing.F) {
	f.Add([]byte(`["src",{"filename":"/f"}]`), []byte(`{"position":42}`))
	f.Add([]byte(`["src",{"b":1,"a":[1,2]}]`), []byte(`null`))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		var x offsetIndex
		if err := x.apply(key, value); err != nil {
			return
		}
		// A record that applied is found again under its canonical partition.
		connector, canonical, err := parseOffsetKey(key)
		if err != nil {
			t.Fatalf("applied a key that does not parse: %v", err)
		}
		if value != nil && x.slot(connector, canonical) == nil {
			t.Fatalf("offset of %q %s applied but not found", connector, canonical)
		}
	})
}

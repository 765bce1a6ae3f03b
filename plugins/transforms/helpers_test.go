package transforms_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// These tests drive the plugins through the WebAssembly boundary: the package is built to a .wasm
// module with the documented command and every OPEN, TRANSFORM and TEST goes through the worker's
// plugin host (wasmhost), in a session of its own per opened object, with records and configs from
// Kafka's documentation and the unit tests of its transformations.

var boundary struct {
	once sync.Once
	host *wasmhost.Host
	err  error

	mu       sync.Mutex
	next     int32
	objects  map[int32]*wasmhost.Object
	sessions map[int32]*wasmhost.Session
}

func loadHost() (*wasmhost.Host, error) {
	boundary.once.Do(func() {
		dir, err := pluginbuild.Dir("plugins/transforms")
		if err != nil {
			boundary.err = err
			return
		}
		boundary.host, boundary.err = wasmhost.New(context.Background(), wasmhost.Config{
			PluginPath:       []string{dir},
			CallTimeout:      10 * time.Second,
			MemoryLimitBytes: 128 << 20,
			CacheDir:         filepath.Join(os.TempDir(), "wasmconnect-transforms-test-cache"),
			Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		boundary.objects = map[int32]*wasmhost.Object{}
		boundary.sessions = map[int32]*wasmhost.Session{}
	})
	if boundary.err != nil {
		return nil, fmt.Errorf("building or loading the transforms module: %w", boundary.err)
	}
	return boundary.host, nil
}

func object(t *testing.T, h int32) *wasmhost.Object {
	boundary.mu.Lock()
	defer boundary.mu.Unlock()
	o := boundary.objects[h]
	if o == nil {
		t.Fatalf("no open object %d", h)
	}
	return o
}

// open opens a transformation or predicate and returns its handle; it fails the test on error.
func open(t *testing.T, class string, role wire.Role, cfg map[string]string) int32 {
	t.Helper()
	h, err := tryOpen(class, role, cfg)
	if err != nil {
		t.Fatalf("OPEN %s %v: %v", class, cfg, err)
	}
	t.Cleanup(func() {
		boundary.mu.Lock()
		sess := boundary.sessions[h]
		delete(boundary.objects, h)
		delete(boundary.sessions, h)
		boundary.mu.Unlock()
		sess.Close(context.Background()) // closes the object and frees the instance
	})
	return h
}

func tryOpen(class string, role wire.Role, cfg map[string]string) (int32, error) {
	host, err := loadHost()
	if err != nil {
		return 0, err
	}
	kind := wire.KindTransformation
	if role == wire.RolePredicate {
		kind = wire.KindPredicate
	}
	p, err := host.Resolve(class, kind)
	if err != nil {
		return 0, err
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	sess := host.NewSession(wasmhost.Env{Connector: "test", Task: 0})
	o, err := sess.Open(context.Background(), p, role, cfg)
	if err != nil {
		sess.Close(context.Background())
		return 0, err
	}
	boundary.mu.Lock()
	defer boundary.mu.Unlock()
	boundary.next++
	boundary.objects[boundary.next] = o
	boundary.sessions[boundary.next] = sess
	return boundary.next, nil
}

// transform applies a transformation to records.
func transform(t *testing.T, h int32, in ...wire.Record) ([]wire.TransformedRecord, []wire.RecordFailure) {
	t.Helper()
	recs, failed, err := object(t, h).Transform(context.Background(), in)
	if err != nil {
		t.Fatalf("TRANSFORM: %v", err)
	}
	return recs, failed
}

func test(t *testing.T, h int32, in ...wire.Record) []bool {
	t.Helper()
	m, failed, err := object(t, h).Test(context.Background(), in)
	if err != nil || len(failed) > 0 {
		t.Fatalf("TEST result: %v %v", failed, err)
	}
	return m
}

// js is a JSON-tagged value with a schema ("" = schemaless).
func js(schema, payload string) wire.Data {
	if schema == "" {
		return wire.JSON(nil, []byte(payload))
	}
	return wire.JSON([]byte(schema), []byte(payload))
}

// sourceRec is a source record of topic "test", partition 0, with no timestamp, as Kafka's tests
// build them (new SourceRecord(null, null, "test", 0, ...)).
func sourceRec(key, value wire.Data) wire.Record {
	return wire.Record{Topic: "test", Partition: 0, Offset: -1, Timestamp: -1, Key: key, Value: value}
}

// sinkRec is a sink record of topic "test", partition 0, offset 42 with a timestamp.
func sinkRec(key, value wire.Data, ts int64) wire.Record {
	return wire.Record{Topic: "test", Partition: 0, Offset: 42, Timestamp: ts, Key: key, Value: value}
}

// show renders data for comparisons: the tag and, for JSON, the schema and the canonical payload.
func show(d wire.Data) string {
	switch d.Tag {
	case wire.TagNull:
		return "null"
	case wire.TagString:
		return fmt.Sprintf("string %q", d.Bytes)
	case wire.TagBytes:
		return fmt.Sprintf("bytes %q", d.Bytes)
	}
	return fmt.Sprintf("json schema=%s payload=%s", orNone(d.Schema), canon(d.Bytes))
}

func orNone(b []byte) string {
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}

// canon re-encodes JSON with sorted object keys, so that maps compare regardless of order.
func canon(b []byte) string {
	var v any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return "invalid JSON " + string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// tcase is one transformation case: a class, a config, an input record and what Kafka's
// transformation gives for it.
type tcase struct {
	name  string
	class string
	cfg   map[string]string
	in    wire.Record
	want  *wire.Record // nil with err == "" and !dropped: unchanged
	err   string       // a record failure containing this
	drop  bool
}

func runCases(t *testing.T, cases []tcase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := open(t, tc.class, wire.RoleTransformation, tc.cfg)
			out, failed := transform(t, h, tc.in)
			switch {
			case tc.err != "":
				if len(failed) != 1 || !strings.Contains(failed[0].Message, tc.err) {
					t.Fatalf("want a failure with %q, got failures %+v, outputs %+v", tc.err, failed, out)
				}
				return
			case len(failed) > 0:
				t.Fatalf("failed: %+v", failed)
			case tc.drop:
				if len(out) != 0 {
					t.Fatalf("want the record dropped, got %+v", out)
				}
				return
			case len(out) != 1:
				t.Fatalf("want one output, got %+v", out)
			case tc.want == nil:
				if !out[0].Unchanged {
					t.Fatalf("want the record unchanged, got %+v", out[0].Record)
				}
				return
			}
			got, want := out[0].Record, *tc.want
			if got.Topic != want.Topic || got.Partition != want.Partition || got.Timestamp != want.Timestamp {
				t.Errorf("topic/partition/timestamp = %s/%d/%d, want %s/%d/%d", got.Topic, got.Partition, got.Timestamp, want.Topic, want.Partition, want.Timestamp)
			}
			if g, w := show(got.Key), show(want.Key); g != w {
				t.Errorf("key:\n got %s\nwant %s", g, w)
			}
			if g, w := show(got.Value), show(want.Value); g != w {
				t.Errorf("value:\n got %s\nwant %s", g, w)
			}
			if len(got.Headers) != len(want.Headers) {
				t.Fatalf("headers %+v, want %+v", got.Headers, want.Headers)
			}
			for i := range got.Headers {
				if got.Headers[i].Key != want.Headers[i].Key || show(got.Headers[i].Value) != show(want.Headers[i].Value) {
					t.Errorf("header %d: %s=%s, want %s=%s", i, got.Headers[i].Key, show(got.Headers[i].Value), want.Headers[i].Key, show(want.Headers[i].Value))
				}
			}
			if !reflect.DeepEqual(got.Offset, tc.in.Offset) {
				t.Errorf("offset changed")
			}
		})
	}
}

// with returns a copy of r changed by f.
func with(r wire.Record, f func(*wire.Record)) *wire.Record {
	f(&r)
	return &r
}

package datagen_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/hosttest"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// These tests run the datagen module (the Rust crate of this directory) in the worker's plugin
// host, through the WebAssembly boundary.

func TestMain(m *testing.M) {
	code := m.Run()
	pluginbuild.Cleanup()
	os.Exit(code)
}

const class = "io.confluent.kafka.connect.datagen.DatagenConnector"

type offsets map[string]string

func (o offsets) Offset(p []byte) ([]byte, bool) {
	v, ok := o[string(p)]
	return []byte(v), ok
}

type fixture struct {
	t    testing.TB
	h    *wasmhost.Host
	logs *hosttest.Log
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	h, logs := hosttest.New(t, wasmhost.Config{PluginPath: []string{pluginbuild.DirOf(t, "plugins/datagen")}})
	return &fixture{t: t, h: h, logs: logs}
}

// open opens the datagen plugin (by name) in role with cfg, in a session of task task whose stored
// offsets are offs.
func (f *fixture) open(name string, role wire.Role, cfg map[string]string, task int, offs offsets) (*wasmhost.Object, error) {
	f.t.Helper()
	p, err := f.h.Resolve(name, wire.KindSource)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx := context.Background()
	sess := f.h.NewSession(wasmhost.Env{Connector: "datagen", Task: task, Offsets: offs})
	f.t.Cleanup(func() { sess.Close(ctx) })
	return sess.Open(ctx, p, role, cfg)
}

func (f *fixture) task(cfg map[string]string, task int, offs offsets) *wasmhost.Object {
	f.t.Helper()
	o, err := f.open(class, wire.RoleTask, cfg, task, offs)
	if err != nil {
		f.t.Fatal(err)
	}
	return o
}

// pollN polls until it has n records, failing after a while.
func pollN(t *testing.T, task *wasmhost.Object, n int) []wire.Record {
	t.Helper()
	var recs []wire.Record
	deadline := time.Now().Add(30 * time.Second)
	for len(recs) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d records after 30 s, want %d", len(recs), n)
		}
		rs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			recs = append(recs, copyRecord(r))
		}
	}
	return recs
}

// copyRecord copies a polled record out of the host's reused buffers.
func copyRecord(r wire.Record) wire.Record {
	cp := func(d wire.Data) wire.Data {
		return wire.Data{Tag: d.Tag, Schema: bytes.Clone(d.Schema), Bytes: bytes.Clone(d.Bytes)}
	}
	out := r
	out.Key, out.Value = cp(r.Key), cp(r.Value)
	out.Headers = nil
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, wire.Header{Key: h.Key, Value: cp(h.Value)})
	}
	out.SourcePartition, out.SourceOffset = bytes.Clone(r.SourcePartition), bytes.Clone(r.SourceOffset)
	return out
}

func decode(t *testing.T, d wire.Data) (*connect.Schema, any) {
	t.Helper()
	s, v, err := connect.Decode(d)
	if err != nil {
		t.Fatalf("decoding %s / %s: %v", d.Schema, d.Bytes, err)
	}
	return s, v
}

func field(t *testing.T, s *connect.Struct, name string) any {
	t.Helper()
	v, err := s.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// schemaShape is "name{field:type ...}" of a struct schema, nested structs inline.
func schemaShape(s *connect.Schema) string {
	var b strings.Builder
	b.WriteString(s.Name + "{")
	for i, f := range s.Fields {
		if i > 0 {
			b.WriteByte(' ')
		}
		typ := string(f.Schema.Type)
		if f.Schema.Type == connect.TypeStruct {
			typ = schemaShape(f.Schema)
		}
		if f.Schema.Optional {
			typ += "?"
		}
		fmt.Fprintf(&b, "%s:%s", f.Name, typ)
	}
	b.WriteString("}")
	return b.String()
}

// TestQuickstartSchemas checks that each quickstart writes Struct values with kafka-connect-datagen's
// field names and types, keyed by its key field, with its headers, source partition and offset.
func TestQuickstartSchemas(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		quickstart, shape, keyType, keyField string
		check                                func(t *testing.T, i int, v *connect.Struct)
	}{
		{"orders", "ksql.orders{ordertime:int64 orderid:int32 itemid:string orderunits:double address:ksql.address{city:string state:string zipcode:int64}}",
			"int32", "orderid", func(t *testing.T, i int, v *connect.Struct) {
				if id := field(t, v, "orderid"); id != int32(i) {
					t.Errorf("orderid %v, want %d", id, i)
				}
				if ot := field(t, v, "ordertime").(int64); ot < 1487715775521 || ot >= 1519273364600 {
					t.Errorf("ordertime %d", ot)
				}
				if item := field(t, v, "itemid").(string); !regexp.MustCompile(`^Item_[1-9][0-9]{0,2}$`).MatchString(item) {
					t.Errorf("itemid %q", item)
				}
				if u := field(t, v, "orderunits").(float64); u < 0.1 || u >= 10 {
					t.Errorf("orderunits %v", u)
				}
				addr := field(t, v, "address").(*connect.Struct)
				if c := field(t, addr, "city").(string); !regexp.MustCompile(`^City_[1-9]{0,2}$`).MatchString(c) {
					t.Errorf("city %q", c)
				}
				if z := field(t, addr, "zipcode").(int64); z < 10000 || z > 99999 {
					t.Errorf("zipcode %d", z)
				}
			}},
		{"users", "ksql.users{registertime:int64 userid:string regionid:string gender:string}", "string", "userid",
			func(t *testing.T, i int, v *connect.Struct) {
				if g := field(t, v, "gender").(string); g != "MALE" && g != "FEMALE" && g != "OTHER" {
					t.Errorf("gender %q", g)
				}
				if r := field(t, v, "regionid").(string); !regexp.MustCompile(`^Region_[1-9]$`).MatchString(r) {
					t.Errorf("regionid %q", r)
				}
			}},
		{"PageViews", "ksql.pageviews{viewtime:int64 userid:string pageid:string}", "int64", "viewtime",
			func(t *testing.T, i int, v *connect.Struct) {
				if vt := field(t, v, "viewtime"); vt != int64(1+10*i) {
					t.Errorf("viewtime %v, want %d", vt, 1+10*i)
				}
				if p := field(t, v, "pageid").(string); !regexp.MustCompile(`^Page_[1-9][0-9]$`).MatchString(p) {
					t.Errorf("pageid %q", p)
				}
			}},
	} {
		t.Run(tc.quickstart, func(t *testing.T) {
			task := f.task(map[string]string{"kafka.topic": "t", "quickstart": tc.quickstart, "max.interval": "0", "iterations": "50", "random.seed": "7"}, 0, nil)
			recs := pollN(t, task, 50)
			if len(recs) != 50 {
				t.Fatalf("%d records, want 50", len(recs))
			}
			for i, r := range recs {
				s, v := decode(t, r.Value)
				if got := schemaShape(s); got != tc.shape {
					t.Fatalf("schema %s\nwant %s", got, tc.shape)
				}
				ks, k := decode(t, r.Key)
				if string(ks.Type) != tc.keyType || ks.Optional || k != field(t, v.(*connect.Struct), tc.keyField) {
					t.Errorf("record %d: key %s %v, want the %s field", i, r.Key.Schema, k, tc.keyField)
				}
				tc.check(t, i, v.(*connect.Struct))
				var hs []string
				for _, h := range r.Headers {
					hs = append(hs, fmt.Sprintf("%s=%s:%s", h.Key, h.Value.Schema, h.Value.Bytes))
				}
				long := `{"type":"int64","optional":false}`
				if want := fmt.Sprintf("task.generation=%s:0 task.id=%s:0 current.iteration=%s:%d", long, long, long, i); strings.Join(hs, " ") != want {
					t.Errorf("headers %v\nwant %s", hs, want)
				}
				if r.Topic != "t" || r.Partition != -1 {
					t.Errorf("record %d: %+v", i, r)
				}
			}
			last := recs[len(recs)-1]
			if string(last.SourcePartition) != `{"task.id":0}` || string(last.SourceOffset) != `{"current.iteration":50,"random.seed":7,"task.generation":1}` {
				t.Errorf("partition %s offset %s", last.SourcePartition, last.SourceOffset)
			}
			// iterations: the task has written its 50 and writes no more.
			for range 3 {
				if rs, err := task.Poll(context.Background()); err != nil || len(rs) != 0 {
					t.Fatalf("after iterations: %d records, %v", len(rs), err)
				}
			}
		})
	}
}

func values(t *testing.T, recs []wire.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Value.Bytes)
	}
	return out
}

// TestSeedIsDeterministic checks that one seed gives the same records, that tasks and seeds differ,
// and that a task restarted from its stored offset goes on with the records it would have written.
func TestSeedIsDeterministic(t *testing.T) {
	f := newFixture(t)
	cfg := func(seed string) map[string]string {
		return map[string]string{"kafka.topic": "t", "quickstart": "orders", "max.interval": "0", "random.seed": seed}
	}
	a := values(t, pollN(t, f.task(cfg("42"), 0, nil), 2000))[:2000]
	b := values(t, pollN(t, f.task(cfg("42"), 0, nil), 2000))[:2000]
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatal("two tasks with one seed wrote different records")
	}
	other := values(t, pollN(t, f.task(cfg("43"), 0, nil), 10))
	task1 := values(t, pollN(t, f.task(cfg("42"), 1, nil), 10))
	for i := range 10 {
		if other[i] == a[i] || task1[i] == a[i] {
			t.Fatalf("record %d is the same for another seed or task: %s", i, a[i])
		}
	}
	// Stop after 1000 and resume from the stored offset (the same seed, configured or stored).
	first := pollN(t, f.task(cfg("42"), 0, nil), 1000)
	off := first[len(first)-1]
	if string(off.SourceOffset) != `{"current.iteration":1000,"random.seed":42,"task.generation":1}` {
		t.Fatalf("offset after 1000: %s", off.SourceOffset)
	}
	stored := offsets{string(off.SourcePartition): string(off.SourceOffset)}
	for _, c := range []map[string]string{cfg("42"), cfg("")} {
		rest := pollN(t, f.task(c, 0, stored), 1000)
		if got := values(t, rest)[:1000]; strings.Join(got, "\n") != strings.Join(a[1000:], "\n") {
			t.Fatalf("resumed task (random.seed %q) wrote other records: %s..., want %s...", c["random.seed"], got[0], a[1000])
		}
		if h := rest[0].Headers[0]; h.Key != "task.generation" || string(h.Value.Bytes) != "1" {
			t.Errorf("resumed generation header %s=%s", h.Key, h.Value.Bytes)
		}
	}
}

// TestMaxIntervalPacesRecords checks that records come max.interval * random ms apart: about
// 2 / max.interval per ms, from polls that never block.
func TestMaxIntervalPacesRecords(t *testing.T) {
	f := newFixture(t)
	task := f.task(map[string]string{"kafka.topic": "t", "quickstart": "users", "max.interval": "40"}, 0, nil)
	start := time.Now()
	n := 0
	for time.Since(start) < 2*time.Second {
		t0 := time.Now()
		rs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d > 500*time.Millisecond {
			t.Fatalf("a poll took %v", d)
		}
		n += len(rs)
		time.Sleep(20 * time.Millisecond)
	}
	// 2 s at a mean wait of 20 ms: 100 expected.
	if n < 40 || n > 200 {
		t.Fatalf("%d records in 2 s with max.interval 40, want about 100", n)
	}
}

func guestMessage(err error) string {
	var ge *wasmhost.GuestError
	if errors.As(err, &ge) {
		return ge.Message
	}
	if err == nil {
		return "<nil>"
	}
	return "not a guest error: " + err.Error()
}

// TestBadConfigs checks /validate's messages per setting and that a task refuses the same configs.
func TestBadConfigs(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p, err := f.h.Resolve("DatagenConnector", wire.KindSource)
	if err != nil || p.Class != class {
		t.Fatalf("%+v %v", p, err)
	}
	for _, tc := range []struct {
		cfg  map[string]string
		key  string
		want string
	}{
		{map[string]string{"kafka.topic": "t"}, "quickstart", "Must set exactly one of schema.string, schema.filename, quickstart"},
		{map[string]string{"kafka.topic": "t", "quickstart": "orders", "schema.string": "{}"}, "schema.string", "Must set exactly one of schema.string, schema.filename, quickstart"},
		{map[string]string{"kafka.topic": "t", "schema.filename": "/x.avro"}, "schema.filename",
			"schema.filename is not supported by this plugin, which generates the quickstarts only: set quickstart to one of orders, users, pageviews"},
		{map[string]string{"kafka.topic": "t", "quickstart": "clickstream"}, "quickstart",
			"Invalid value clickstream for configuration quickstart: not a quickstart of this plugin (it has orders, users, pageviews)"},
		{map[string]string{"kafka.topic": "t", "quickstart": "orders", "schema.keyfield": "address"}, "schema.keyfield",
			"The schema does not contain the field provided in 'schema.keyfield' (a top-level field of orders that is not a struct)"},
		{map[string]string{"kafka.topic": "t", "quickstart": "orders", "max.interval": "-1"}, "max.interval", "Invalid value -1 for configuration max.interval: Value must be at least 0"},
		{map[string]string{"kafka.topic": "t", "quickstart": "orders", "random.seed": "x"}, "random.seed", "Invalid value x for configuration random.seed: Not a number of type LONG"},
		{map[string]string{"quickstart": "orders"}, "kafka.topic", `Missing required configuration "kafka.topic" which has no default value.`},
	} {
		errs, err := f.h.Validate(ctx, p, tc.cfg)
		if err != nil || len(errs[tc.key]) == 0 || errs[tc.key][0] != tc.want {
			t.Errorf("Validate %v: %v %v\nwant %s: %s", tc.cfg, errs, err, tc.key, tc.want)
		}
		if tc.key == "kafka.topic" {
			continue // the SDK's required check, not the plugin's
		}
		_, err = f.open(class, wire.RoleTask, tc.cfg, 0, nil)
		if msg := guestMessage(err); !strings.Contains(msg, tc.want) {
			t.Errorf("OPEN task %v: %s\nwant it to contain %s", tc.cfg, msg, tc.want)
		}
	}
	errs, err := f.h.Validate(ctx, p, map[string]string{"kafka.topic": "t", "quickstart": "users", "schema.keyfield": "gender"})
	if err != nil || len(errs) != 0 {
		t.Errorf("valid config: %v %v", errs, err)
	}
	conn, err := f.open("Datagen", wire.RoleConnector, map[string]string{"kafka.topic": "t", "quickstart": "orders"}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := conn.TaskConfigs(ctx, 3)
	if err != nil || len(cfgs) != 3 || cfgs[2]["task.id"] != "2" || cfgs[0]["max.interval"] != "500" {
		t.Errorf("TaskConfigs: %v %v", cfgs, err)
	}
}

// BenchmarkPollOrders measures how fast a task generates orders, through the boundary
// (records/s in the output).
func BenchmarkPollOrders(b *testing.B) {
	f := newFixture(b)
	task := f.task(map[string]string{"kafka.topic": "t", "quickstart": "orders", "max.interval": "0", "random.seed": "1"}, 0, nil)
	n := 0
	b.ResetTimer()
	for range b.N {
		rs, err := task.Poll(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		n += len(rs)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func TestSourceTaskPollRoundTrip(t *testing.T) {
	h, logs := newTestHost(t, Config{})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c1", Task: 3, Offsets: offsets{`{"fixture":"p"}`: `{"n":41}`}})
	defer s.Close(ctx)
	task, err := s.Open(ctx, mustResolve(t, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t", "batch.size": "3"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := task.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 3 {
		t.Fatalf("got %d records, want 3", len(first))
	}
	r := first[1]
	if r.Topic != "fixture-topic" || r.Partition != -1 || r.Offset != -1 || r.Timestamp != 1700000000001 ||
		!r.Key.IsNull() || r.Value.Tag != wire.TagString || string(r.Value.Bytes) != "value-1" ||
		len(r.Headers) != 1 || r.Headers[0].Key != "h" || string(r.Headers[0].Value.Bytes) != "x" ||
		string(r.SourcePartition) != `{"fixture":"p"}` || string(r.SourceOffset) != `{"n":2}` {
		t.Fatalf("record 1 = %+v", r)
	}
	// The guest rebuilds its result buffer in place on every call: records must not alias it.
	if _, err := task.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	for i, r := range first {
		if want := fmt.Sprintf("value-%d", i); string(r.Value.Bytes) != want {
			t.Fatalf("record %d changed after the next poll: %q", i, r.Value.Bytes)
		}
	}
	if err := task.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := task.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Poll(ctx); err == nil || !strings.Contains(err.Error(), "closed object") {
		t.Fatalf("poll after close: %v", err)
	}

	// OPEN read the stored offset through offset_get (retrying with a bigger buffer) and logged it
	// through the log import, tagged with the session's connector and task.
	rec := logs.find(t, "stored offset ")
	if rec["msg"] != `stored offset {"n":41}` || rec["connector"] != "c1" || rec["task"] != 3.0 ||
		rec["module"] != "good.wasm" || rec["level"] != "INFO" {
		t.Fatalf("log record = %v", rec)
	}
}

func TestConnectorTaskConfigs(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c1", Task: -1})
	defer s.Close(ctx)
	conn, err := s.Open(ctx, mustResolve(t, h, "SeqSource"), wire.RoleConnector, map[string]string{"topic": "t"})
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := conn.TaskConfigs(ctx, 2)
	if err != nil || len(cfgs) != 2 || cfgs[1]["task"] != "1" {
		t.Fatalf("TaskConfigs(2) = %v, %v", cfgs, err)
	}
	var ge *GuestError
	if _, err := conn.TaskConfigs(ctx, 1); !errors.As(err, &ge) || !strings.Contains(err.Error(), "2 task configs, more than the maximum of 1") {
		t.Fatalf("TaskConfigs(1) = %v", err)
	}
	if _, err := conn.Poll(ctx); err == nil || !strings.Contains(err.Error(), "does not support POLL") {
		t.Fatalf("POLL on a connector: %v", err)
	}
}

func TestSinkPutFlush(t *testing.T) {
	h, logs := newTestHost(t, Config{})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "sink", Task: 0})
	defer s.Close(ctx)
	task, err := s.Open(ctx, mustResolve(t, h, "CountSink"), wire.RoleTask, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := []wire.Record{{Topic: "a", Value: wire.String("x")}, {Topic: "a"}, {Topic: "b", Offset: 7}}
	if err := task.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if rec := logs.find(t, "put "); rec["msg"] != "put 3 records" || rec["level"] != "DEBUG" || rec["connector"] != "sink" {
		t.Fatalf("log record = %v", rec)
	}
	if err := task.Flush(ctx, []wire.TopicPartitionOffset{{Topic: "a", Partition: 0, Offset: 8}}); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Poll(ctx); err == nil {
		t.Fatal("POLL on a sink task succeeded")
	}
	if _, err := s.Open(ctx, mustResolve(t, h, "CountSink"), wire.RoleConverter, nil); err == nil {
		t.Fatal("a sink opened as a converter")
	}
}

func TestConvertersShareOneInstance(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c", Task: 1})
	defer s.Close(ctx)
	echo := mustResolve(t, h, "Echo")
	key, err := s.Open(ctx, echo, wire.RoleConverter, map[string]string{"converter.type": "key"})
	if err != nil {
		t.Fatal(err)
	}
	value, err := s.Open(ctx, echo, wire.RoleConverter, map[string]string{"converter.type": "value"})
	if err != nil {
		t.Fatal(err)
	}
	if key.in != value.in || key.handle == value.handle {
		t.Fatal("two converters of one module must share the session's instance, with their own handles")
	}
	source, err := s.Open(ctx, mustResolve(t, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t"})
	if err != nil {
		t.Fatal(err)
	}
	if source.in != key.in {
		t.Fatal("the source of the same module must share the instance too")
	}

	in := []wire.TopicData{
		{Topic: "t", Value: wire.String("text")},
		{Topic: "t", Value: wire.Null()},
		{Topic: "t", Value: wire.Bytes([]byte{0, 1, 2})},
		{Topic: "t", Value: wire.JSON([]byte(`{"type":"string"}`), []byte(`"j"`))},
		{Topic: "t", Value: wire.String("")},
	}
	out, err := value.FromConnect(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{[]byte("text"), nil, {0, 1, 2}, []byte(`"j"`), {}}
	if len(out) != len(want) {
		t.Fatalf("FromConnect = %q", out)
	}
	for i := range want {
		if string(out[i]) != string(want[i]) || (out[i] == nil) != (want[i] == nil) {
			t.Fatalf("FromConnect[%d] = %q, want %q", i, out[i], want[i])
		}
	}
	data, err := key.ToConnect(ctx, []wire.TopicBytes{{Topic: "t", Bytes: []byte("k")}, {Topic: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 2 || data[0].Tag != wire.TagBytes || string(data[0].Bytes) != "k" || !data[1].IsNull() {
		t.Fatalf("ToConnect = %+v", data)
	}

	// A batch far bigger than the first input buffer makes the host free it and allocate anew.
	big := make([]wire.TopicData, 5000)
	for i := range big {
		big[i] = wire.TopicData{Topic: "t", Value: wire.String(strings.Repeat("v", 100) + fmt.Sprint(i))}
	}
	before := value.in.inCap
	out, err = value.FromConnect(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	if value.in.inCap <= before || string(out[4999]) != strings.Repeat("v", 100)+"4999" {
		t.Fatalf("big batch: buffer %d -> %d bytes, last = %q", before, value.in.inCap, out[4999])
	}
	// The input is encoded straight into that buffer: one that fills it to the byte, one a byte
	// longer (encoded elsewhere and written, growing the buffer) and a small one after them each
	// reach the guest whole.
	capacity := int(value.in.inCap)
	for _, extra := range []int{0, 1, -capacity + 20} {
		one := wire.AppendDataBatch(nil, []wire.TopicData{{Topic: "t", Value: wire.String("")}})
		n := capacity + extra - len(one) // the string that makes the batch that long
		if n < 0 {
			n = 3
		}
		v := strings.Repeat("x", n-1) + "y"
		batch := []wire.TopicData{{Topic: "t", Value: wire.String(v)}}
		if got := len(wire.AppendDataBatch(nil, batch)); extra >= 0 && got != capacity+extra {
			t.Fatalf("a batch of %d bytes, want %d", got, capacity+extra)
		}
		out, err := value.FromConnect(ctx, batch)
		if err != nil || len(out) != 1 || string(out[0]) != v {
			t.Fatalf("a %d-byte input into a %d-byte buffer: %d values, %v", capacity+extra, capacity, len(out), err)
		}
	}
	if err := value.Put(ctx, nil); err == nil {
		t.Fatal("PUT on a converter succeeded")
	}
}

func TestValidate(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	seq := mustResolve(t, h, "SeqSource")
	for _, tc := range []struct {
		cfg  map[string]string
		want map[string][]string
	}{
		{map[string]string{"topic": "t", "batch.size": "10"}, map[string][]string{}},
		{nil, map[string][]string{"topic": {`Missing required configuration "topic" which has no default value.`}}},
		{map[string]string{"topic": ""}, map[string][]string{"topic": {"must not be empty"}}},
		{map[string]string{"topic": "t", "batch.size": "ten"},
			map[string][]string{"batch.size": {"Invalid value ten for configuration batch.size: Not a number of type INT"}}},
	} {
		got, err := h.Validate(ctx, seq, tc.cfg)
		if err != nil {
			t.Fatalf("Validate(%v): %v", tc.cfg, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("Validate(%v) = %v, want %v", tc.cfg, got, tc.want)
		}
	}
}

func TestSessionClose(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c", Task: 0})
	task, err := s.Open(ctx, mustResolve(t, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Poll(ctx); err == nil || err.Error() != `wasmhost: plugin "SeqSource" POLL on a closed object` {
		t.Fatalf("poll after session close: %v", err)
	}
	if _, err := s.Open(ctx, mustResolve(t, h, "Echo"), wire.RoleConverter, nil); err == nil {
		t.Fatal("open after session close succeeded")
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal("second close:", err)
	}
}

// TestConcurrentSessions runs several sessions in parallel and shares one object between
// goroutines, for the race detector.
func TestConcurrentSessions(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	seq := mustResolve(t, h, "SeqSource")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for task := range 4 {
		s := h.NewSession(Env{Connector: "c", Task: task, Logger: slog.New(slog.DiscardHandler)})
		defer s.Close(ctx)
		o, err := s.Open(ctx, seq, wire.RoleTask, map[string]string{"topic": "t", "batch.size": "50"})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					rs, err := o.Poll(ctx)
					if err == nil && len(rs) != 50 {
						err = fmt.Errorf("%d records", len(rs))
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFSAllow(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	h, logs := newTestHost(t, Config{FSAllow: []string{data}})
	s := h.NewSession(Env{Connector: "fs", Task: 0})
	defer s.Close(ctx)
	if _, err := s.Open(ctx, mustResolve(t, h, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t"}); err != nil {
		t.Fatal(err)
	}
	if rec := logs.find(t, "preopen: "); rec["msg"] != "preopen: "+data {
		t.Fatalf("the granted directory must be mounted at its own path: %v", rec["msg"])
	}

	h2, logs2 := newTestHost(t, Config{})
	s2 := h2.NewSession(Env{Connector: "nofs", Task: 0})
	defer s2.Close(ctx)
	if _, err := s2.Open(ctx, mustResolve(t, h2, "SeqSource"), wire.RoleTask, map[string]string{"topic": "t"}); err != nil {
		t.Fatal(err)
	}
	logs2.find(t, "no preopen")
	logs2.find(t, "no stored offset")
	if !slices.Equal(h.cfg.FSAllow, []string{data}) {
		t.Fatalf("FSAllow = %v", h.cfg.FSAllow)
	}
}

// A batch that FromConnectInto splits into several FROM_CONNECT calls is checked call by call: a
// converter whose later call answers one value short (testdata/miscount.wat) fails the batch as a
// malformed result, rather than the host taking its values short or shifted.
func TestFromConnectSplitBatchMiscountFails(t *testing.T) {
	h, _ := newTestHost(t, Config{PluginPath: []string{pluginDir(t, map[string]string{"miscount.wasm": "miscount"})}})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c"})
	defer s.Close(ctx)
	o, err := s.Open(ctx, mustResolve(t, h, "Miscount"), wire.RoleConverter, nil)
	if err != nil {
		t.Fatal(err)
	}
	values := make([]wire.TopicData, 3000) // ~350 KB encoded: several calls
	for i := range values {
		values[i] = wire.TopicData{Topic: "t", Value: wire.String(strings.Repeat("v", 100))}
	}
	out, err := o.FromConnect(ctx, values)
	var ge *GuestError
	if !errors.As(err, &ge) || !strings.Contains(ge.Message, "malformed result") || !strings.Contains(ge.Message, "results for") {
		t.Fatalf("FromConnect of a split batch whose second call miscounts: %d values, %v", len(out), err)
	}
}

package task

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// TestFusedChainMatchesStepByStep runs one chain of the real transforms module both ways, one
// TRANSFORM (and TEST) per step and in one TRANSFORM_CHAIN call, and wants the same records, origins
// and failures: predicates with and without negate, a record failure, drops, records a step leaves
// unchanged, and sink offsets that InsertField reads at a later step.
func TestFusedChainMatchesStepByStep(t *testing.T) {
	dir := pluginbuild.DirOf(t, "plugins/transforms")
	ctx := context.Background()
	h, err := wasmhost.New(ctx, wasmhost.Config{PluginPath: []string{dir}, CallTimeout: 10 * time.Second,
		CacheDir: filepath.Join(os.TempDir(), "wasmconnect-task-test-cache"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	sess := h.NewSession(wasmhost.Env{Connector: "fused", Task: 0})
	defer sess.Close(ctx)
	open := func(class string, role wire.Role, cfg map[string]string) *wasmhost.Object {
		kind := wire.KindTransformation
		if role == wire.RolePredicate {
			kind = wire.KindPredicate
		}
		p, err := h.Resolve(class, kind)
		if err != nil {
			t.Fatal(err)
		}
		o, err := sess.Open(ctx, p, role, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	tomb := open("RecordIsTombstone", wire.RolePredicate, nil)
	orders := open("TopicNameMatches", wire.RolePredicate, map[string]string{"pattern": "orders-.*"})
	steps := []struct {
		alias, class string
		cfg          map[string]string
		pred         *wasmhost.Object
		negate       bool
	}{
		{"drop", "Filter", nil, tomb, false},
		{"hoist", "HoistField$Value", map[string]string{"field": "line"}, orders, true},
		{"insert", "InsertField$Value", map[string]string{"offset.field": "off", "topic.field": "t"}, nil, false},
		{"route", "RegexRouter", map[string]string{"regex": "orders-(.*)", "replacement": "o-$1"}, nil, false},
		{"mask", "MaskField$Value", map[string]string{"fields": "t"}, orders, false},
	}
	var chain Chain
	var fused []wasmhost.ChainStep
	for _, s := range steps {
		o := open(s.class, wire.RoleTransformation, s.cfg)
		st := Step{Alias: s.alias, Class: "org.apache.kafka.connect.transforms." + s.class, Transform: o, Negate: s.negate}
		fs := wasmhost.ChainStep{Transform: o, Negate: s.negate}
		if s.pred != nil {
			st.Predicate, fs.Predicate = s.pred, s.pred
		}
		chain = append(chain, st)
		fused = append(fused, fs)
	}
	fc := wasmhost.NewChain(fused)
	if fc == nil {
		t.Fatal("the transforms module does not run TRANSFORM_CHAIN")
	}
	in := []wire.Record{
		{Topic: "lines", Partition: 0, Offset: 10, Timestamp: -1, Value: wire.String("a line")},
		{Topic: "lines", Partition: 0, Offset: 11, Timestamp: -1, Value: wire.Null()},
		{Topic: "orders-eu", Partition: 1, Offset: 12, Timestamp: 5, Value: wire.JSON(nil, []byte(`{"id":1}`))},
		{Topic: "orders-us", Partition: 1, Offset: 13, Timestamp: 5, Value: wire.String("not a map")},
		{Topic: "other", Partition: 2, Offset: 14, Timestamp: -1, Value: wire.String("x"),
			Headers: []wire.Header{{Key: "h", Value: wire.String("v")}}},
	}
	render := func(out []wire.Record, origin []int, failed []failure, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for i, r := range out {
			s += fmt.Sprintf("%d<-%d %s/%d@%d %s %s %v\n", i, origin[i], r.Topic, r.Partition, r.Offset, r.Value.Schema, r.Value.Bytes, r.Headers)
		}
		for _, f := range failed {
			s += fmt.Sprintf("failed %d %s %s: %v\n", f.index, f.stage, f.class, f.err)
		}
		return s
	}
	want := render(chain.Apply(ctx, in))
	chain[0].Fused = fc
	got := render(chain.Apply(ctx, in))
	if got != want {
		t.Errorf("fused:\n%s\nstep by step:\n%s", got, want)
	}
	// As a source task runs it: the batch the records were decoded from goes to the chain as it is.
	if batch := render(chain.apply(ctx, in, &chainMemory{batch: wire.AppendRecords(nil, in)})); batch != want {
		t.Errorf("fused from the encoded batch:\n%s\nstep by step:\n%s", batch, want)
	}
	for _, line := range []string{
		`0<-0 lines/0@10 {"type":"struct","fields":[{"type":"string","optional":false,"field":"line"},{"type":"string","optional":true,"field":"t"},{"type":"int64","optional":true,"field":"off"}],"optional":false} {"line":"a line","t":"lines","off":10}`,
		`1<-2 o-eu/1@12  {"id":1,"off":12,"t":"orders-eu"}`, // routed before mask: its predicate no longer matches
		`failed 3 TRANSFORMATION org.apache.kafka.connect.errors.DataException: transform insert (org.apache.kafka.connect.transforms.InsertField$Value): Only Struct objects supported for [field insertion], found: java.lang.String`,
	} {
		if !strings.Contains(got, line) {
			t.Errorf("missing %q in\n%s", line, got)
		}
	}
}

package task

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
	open := transformsSession(t)
	ctx := context.Background()
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
	for _, s := range steps {
		chain = append(chain, step(s.alias, s.class, open(s.class, wire.RoleTransformation, s.cfg), s.pred, s.negate))
	}
	fc := fuse(t, chain)
	in := []wire.Record{
		{Topic: "lines", Partition: 0, Offset: 10, Timestamp: -1, Value: wire.String("a line")},
		{Topic: "lines", Partition: 0, Offset: 11, Timestamp: -1, Value: wire.Null()},
		{Topic: "orders-eu", Partition: 1, Offset: 12, Timestamp: 5, Value: wire.JSON(nil, []byte(`{"id":1}`))},
		{Topic: "orders-us", Partition: 1, Offset: 13, Timestamp: 5, Value: wire.String("not a map")},
		{Topic: "other", Partition: 2, Offset: 14, Timestamp: -1, Value: wire.String("x"),
			Headers: []wire.Header{{Key: "h", Value: wire.String("v")}}},
	}
	render := renderer(t)
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
		`0<-0 lines/0@10 ts -1 key 0   value 3 {"type":"struct","fields":[{"type":"string","optional":false,"field":"line"},{"type":"string","optional":true,"field":"t"},{"type":"int64","optional":true,"field":"off"}],"optional":false} {"line":"a line","t":"lines","off":10}`,
		`1<-2 o-eu/1@12 ts 5 key 0   value 3  {"id":1,"off":12,"t":"orders-eu"}`, // routed before mask: its predicate no longer matches
		`failed 3 TRANSFORMATION org.apache.kafka.connect.errors.DataException: transform insert (org.apache.kafka.connect.transforms.InsertField$Value): Only Struct objects supported for [field insertion], found: java.lang.String`,
	} {
		if !strings.Contains(got, line) {
			t.Errorf("missing %q in\n%s", line, got)
		}
	}
}

// transformsSession opens objects of the real transforms module in one session: every object of
// a chain runs in one instance, as a task's do.
func transformsSession(t *testing.T) func(class string, role wire.Role, cfg map[string]string) *wasmhost.Object {
	dir := pluginbuild.DirOf(t, "plugins/transforms")
	ctx := context.Background()
	h, err := wasmhost.New(ctx, wasmhost.Config{PluginPath: []string{dir}, CallTimeout: 10 * time.Second,
		CacheDir: filepath.Join(os.TempDir(), "wasmconnect-task-test-cache"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	sess := h.NewSession(wasmhost.Env{Connector: "fused", Task: 0})
	t.Cleanup(func() { sess.Close(ctx) })
	return func(class string, role wire.Role, cfg map[string]string) *wasmhost.Object {
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
}

// step is a chain step of a transforms module object; pred nil: every record.
func step(alias, class string, o, pred *wasmhost.Object, negate bool) Step {
	st := Step{Alias: alias, Class: "org.apache.kafka.connect.transforms." + class, Transform: o, Negate: negate}
	if pred != nil {
		st.Predicate = pred
	}
	return st
}

// fuse is the TRANSFORM_CHAIN runner of chain's objects.
func fuse(t *testing.T, chain Chain) FusedChain {
	var steps []wasmhost.ChainStep
	for _, s := range chain {
		fs := wasmhost.ChainStep{Transform: s.Transform.(*wasmhost.Object), Negate: s.Negate}
		if s.Predicate != nil {
			fs.Predicate = s.Predicate.(*wasmhost.Object)
		}
		steps = append(steps, fs)
	}
	fc := wasmhost.NewChain(steps)
	if fc == nil {
		t.Fatal("the transforms module does not run TRANSFORM_CHAIN")
	}
	return fc
}

// renderer prints what Chain.Apply returns, every field a step may change.
func renderer(t *testing.T) func(out []wire.Record, origin []int, failed []failure, err error) string {
	return func(out []wire.Record, origin []int, failed []failure, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for i, r := range out {
			s += fmt.Sprintf("%d<-%d %s/%d@%d ts %d key %d %s %s value %d %s %s %v\n", i, origin[i], r.Topic, r.Partition, r.Offset, r.Timestamp,
				r.Key.Tag, r.Key.Schema, r.Key.Bytes, r.Value.Tag, r.Value.Schema, r.Value.Bytes, r.Headers)
		}
		// In record order: step by step, a later step's failures come after an earlier one's; the
		// task sorts them before it reports them.
		failed = slices.Clone(failed)
		sort.SliceStable(failed, func(i, j int) bool { return failed[i].index < failed[j].index })
		for _, f := range failed {
			s += fmt.Sprintf("failed %d %s %s: %v\n", f.index, f.stage, f.class, f.err)
		}
		return s
	}
}

// TestFusedChainMatchesStepByStepGenerated is TestFusedChainMatchesStepByStep for chains and
// batches drawn at random from steps with the fast paths of their own (RegexRouter's routes by
// topic, InsertField's plan by schema, HoistField's kept schema) and from records that change
// topic, schema and value type from one to the next: the fast paths remember what they derived
// from the record before, and a batch where it no longer holds is where they would go wrong.
func TestFusedChainMatchesStepByStepGenerated(t *testing.T) {
	open := transformsSession(t)
	ctx := context.Background()
	preds := []func() *wasmhost.Object{
		func() *wasmhost.Object { return nil },
		func() *wasmhost.Object { return open("RecordIsTombstone", wire.RolePredicate, nil) },
		func() *wasmhost.Object {
			return open("TopicNameMatches", wire.RolePredicate, map[string]string{"pattern": "orders-.*"})
		},
		func() *wasmhost.Object {
			return open("HasHeaderKey", wire.RolePredicate, map[string]string{"name": "h"})
		},
	}
	type stepDef struct {
		class string
		cfg   map[string]string
	}
	defs := []stepDef{
		{"Filter", nil},
		{"HoistField$Value", map[string]string{"field": "line"}},
		{"HoistField$Key", map[string]string{"field": "k"}},
		{"InsertField$Value", map[string]string{"offset.field": "off", "topic.field": "t"}},
		{"InsertField$Value", map[string]string{"static.field": "s", "static.value": "v", "partition.field": "p", "timestamp.field": "ts"}},
		{"InsertField$Value", map[string]string{"topic.field": "t!"}},
		{"InsertField$Value", map[string]string{"static.field": "origin", "static.value": "bench"}},
		{"RegexRouter", map[string]string{"regex": "orders-(.*)", "replacement": "o-$1"}},
		{"RegexRouter", map[string]string{"regex": "(.*)", "replacement": "orders-$1"}},
		{"RegexRouter", map[string]string{"regex": "o-(.*)", "replacement": "lines"}},
		{"MaskField$Value", map[string]string{"fields": "t"}},
		{"ReplaceField$Value", map[string]string{"exclude": "id"}},
		{"ValueToKey", map[string]string{"fields": "id"}},
		{"ExtractField$Value", map[string]string{"field": "line"}},
		{"InsertHeader", map[string]string{"header": "h", "value.literal": "x"}},
		{"DropHeaders", map[string]string{"headers": "h"}},
		{"Cast$Value", map[string]string{"spec": "id:string"}},
		{"Flatten$Value", nil},
		{"SetSchemaMetadata$Value", map[string]string{"schema.name": "n", "schema.version": "2"}},
		{"TimestampRouter", map[string]string{"topic.format": "${topic}-x"}},
		{"HeaderFrom$Value", map[string]string{"fields": "t", "headers": "ht", "operation": "copy"}},
	}
	schemaA := []byte(`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"t"}],"optional":false}`)
	schemaB := []byte(`{"type":"struct","fields":[{"type":"string","optional":true,"field":"line"}],"optional":false}`)
	// schemaA with another field name of the same length: a plan remembered by length alone
	// would be wrong for it.
	schemaC := []byte(`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"u"}],"optional":false}`)
	values := []wire.Data{
		wire.Null(),
		wire.String("a line"),
		wire.JSON(schemaA, []byte(`{"id":1,"t":"x"}`)),
		wire.JSON(schemaA, []byte(`{"id":2,"t":null}`)),
		wire.JSON(schemaC, []byte(`{"id":3,"u":"y"}`)),
		wire.JSON(schemaB, []byte(`{"line":"l"}`)),
		wire.JSON(schemaB, []byte(` { "line" : null } `)),
		wire.JSON(nil, []byte(`{"id":4,"t":"z"}`)),
		wire.JSON(nil, []byte(`{}`)),
		wire.JSON(nil, []byte(`[1,2]`)),
		wire.JSON(nil, []byte(`"s"`)),
		wire.JSON([]byte(`{"type":"string","optional":false}`), []byte(`"s"`)),
		wire.JSON([]byte(`{"type":"struct","fields":[],"optional":false}`), []byte(`{}`)),
		wire.Bytes([]byte{0, 1}),
		wire.JSON([]byte(`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"struct","fields":[{"type":"int64","optional":true,"field":"x"}],"optional":true,"field":"n"}],"optional":false}`),
			[]byte(`{"id":5,"n":{"x":1}}`)),
		wire.JSON(nil, []byte(`{"id":6,"n":{"x":[1,{"y":"\u00e9"}]},"t":"\ud83d\ude00"}`)),
	}
	topics := []string{"lines", "orders-eu", "orders-us", "o-eu", "other"}
	rng := uint64(0x2545f4914f6cdd1d)
	next := func(n int) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	render := renderer(t)
	for round := 0; round < 40; round++ {
		var chain Chain
		for i, n := 0, 1+next(5); i < n; i++ {
			d := defs[next(len(defs))]
			chain = append(chain, step(fmt.Sprintf("s%d", i), d.class, open(d.class, wire.RoleTransformation, d.cfg), preds[next(len(preds))](), next(3) == 0))
		}
		fc := fuse(t, chain)
		for batch := 0; batch < 3; batch++ {
			in := make([]wire.Record, 1+next(30))
			for i := range in {
				in[i] = wire.Record{Topic: topics[next(len(topics))], Partition: int32(next(3)), Offset: int64(100*batch + i), Timestamp: int64(next(3)) - 1,
					Key: values[next(len(values))], Value: values[next(len(values))]}
				if next(4) == 0 {
					in[i].Headers = []wire.Header{{Key: "h", Value: wire.String("v")}}
				}
			}
			chain[0].Fused = nil
			want := render(chain.Apply(ctx, in))
			chain[0].Fused = fc
			if got := render(chain.Apply(ctx, in)); got != want {
				var names []string
				for _, s := range chain {
					names = append(names, fmt.Sprintf("%s(pred %v negate %v)", s.Class, s.Predicate != nil, s.Negate))
				}
				t.Fatalf("round %d batch %d, chain %v:\nfused:\n%s\nstep by step:\n%s", round, batch, names, got, want)
			}
		}
	}
}

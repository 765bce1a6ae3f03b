package wasmhost

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// recordedCalls is a CallMetrics that keeps every call it is told of.
type recordedCalls struct {
	mu    sync.Mutex
	calls []recordedCall
}

type recordedCall struct {
	plugin, module string
	op             wire.Op
	took           time.Duration
	fuel, memory   uint64
	trapped        bool
}

func (r *recordedCalls) Plugin(plugin, module string) PluginCalls {
	return pluginRecorder{r, plugin, module}
}

type pluginRecorder struct {
	r              *recordedCalls
	plugin, module string
}

func (p pluginRecorder) Call(op wire.Op, took time.Duration, fuel, memory uint64, trapped bool) {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	p.r.calls = append(p.r.calls, recordedCall{p.plugin, p.module, op, took, fuel, memory, trapped})
}

func (r *recordedCalls) all() []recordedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedCall(nil), r.calls...)
}

// TestSessionReportsEveryCall: each wc_call of a session's objects is reported with its plugin,
// module, op, duration, fuel burned and memory, and a trap as a trap; the instance counts follow
// the instances' lives.
func TestSessionReportsEveryCall(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	rec := &recordedCalls{}
	s := h.NewSession(Env{Connector: "c", Task: 0, Calls: rec})
	seq := openTask(t, h, s, "SeqSource")
	trapper := openTask(t, h, s, "Trapper")
	if n := h.Instances("good.wasm"); n != 1 {
		t.Fatalf("good.wasm has %d instances, want 1", n)
	}
	if _, err := seq.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	var te *TrapError
	if _, err := trapper.Poll(ctx); !errors.As(err, &te) {
		t.Fatalf("want a trap, got %v", err)
	}
	calls := rec.all()
	byKey := map[string]recordedCall{}
	for _, c := range calls {
		byKey[c.plugin+" "+c.op.String()] = c
	}
	poll, ok := byKey["SeqSource POLL"]
	if !ok || poll.module != "good.wasm" || poll.took <= 0 || poll.fuel == 0 || poll.memory == 0 || poll.trapped {
		t.Fatalf("SeqSource POLL reported as %+v (all: %+v)", poll, calls)
	}
	if _, ok := byKey["SeqSource OPEN"]; !ok {
		t.Fatalf("OPEN not reported: %+v", calls)
	}
	trap := byKey["Trapper POLL"]
	if !trap.trapped || trap.memory == 0 {
		t.Fatalf("Trapper POLL reported as %+v", trap)
	}
	before := len(rec.all())
	if _, err := trapper.Poll(ctx); err == nil {
		t.Fatal("a call after a trap succeeded")
	}
	if after := len(rec.all()); after != before {
		t.Fatalf("a call refused without running the guest was reported (%d calls, then %d)", before, after)
	}
	s.Close(ctx)
	for _, m := range h.ModuleNames() {
		if n := h.Instances(m); n != 0 {
			t.Errorf("%s has %d instances after the session closed", m, n)
		}
	}
}

// TestPollIntoReusesTheCallersBuffers: PollInto copies the result into the buffer it is given and
// decodes into the records it is given when they are large enough, with the same records as Poll.
func TestPollIntoReusesTheCallersBuffers(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c"})
	plain, reusing := openTask(t, h, s, "SeqSource"), openTask(t, h, s, "SeqSource")
	buf, recs := make([]byte, 0, 1<<20), make([]wire.Record, 0, 1<<12)
	for range 2 {
		want, err := plain.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, out, err := reusing.PollInto(ctx, buf, recs)
		if err != nil || len(got) == 0 {
			t.Fatalf("PollInto: %d records, %v", len(got), err)
		}
		if &out[:1][0] != &buf[:1][0] || &got[0] != &recs[:1][0] {
			t.Fatal("PollInto did not use the buffers it was given")
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("PollInto returned %+v, Poll %+v", got, want)
		}
	}
}

package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// fakeCluster is an in-memory Kafka Connect: connectors whose class is "Missing" cannot be created
// (like a plugin that is not installed), and "Hang" makes every call wait for its context.
type fakeCluster struct {
	mu    sync.Mutex
	conns map[string]Actual
	calls []string
}

func newFake() *fakeCluster { return &fakeCluster{conns: map[string]Actual{}} }

func (f *fakeCluster) record(s string) {
	f.calls = append(f.calls, s)
}

func (f *fakeCluster) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func (f *fakeCluster) List(context.Context) (map[string]Actual, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]Actual{}
	for k, v := range f.conns {
		v.Config = maps.Clone(v.Config)
		out[k] = v
	}
	return out, nil
}

func (f *fakeCluster) check(ctx context.Context, cfg map[string]string) error {
	switch cfg["connector.class"] {
	case "Missing":
		return connect.BadRequest("Failed to find any class that implements Connector and which name matches Missing")
	case "Hang":
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (f *fakeCluster) Create(ctx context.Context, name string, cfg map[string]string, initial string) error {
	if err := f.check(ctx, cfg); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("create " + name)
	if _, ok := f.conns[name]; ok {
		return connect.AlreadyExists("Connector %s already exists", name)
	}
	st := map[string]string{"RUNNING": "RUNNING", "PAUSED": "PAUSED", "STOPPED": "STOPPED"}[initial]
	c := maps.Clone(cfg)
	c["name"] = name
	f.conns[name] = Actual{Name: name, Config: c, State: st}
	return nil
}

func (f *fakeCluster) Update(ctx context.Context, name string, cfg map[string]string) error {
	if err := f.check(ctx, cfg); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("update " + name)
	a := f.conns[name]
	a.Name, a.Config = name, maps.Clone(cfg)
	a.Config["name"] = name
	if a.State == "" {
		a.State = "RUNNING"
	}
	f.conns[name] = a
	return nil
}

func (f *fakeCluster) SetState(_ context.Context, name string, op Op) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record(string(op) + " " + name)
	a, ok := f.conns[name]
	if !ok {
		return connect.NotFound("Connector %s not found", name)
	}
	a.State = map[Op]string{OpPause: "PAUSED", OpResume: "RUNNING", OpStop: "STOPPED"}[op]
	f.conns[name] = a
	return nil
}

func (f *fakeCluster) Delete(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("delete " + name)
	delete(f.conns, name)
	return nil
}

func (f *fakeCluster) set(name string, fn func(*Actual)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.conns[name]
	a.Config = maps.Clone(a.Config)
	fn(&a)
	f.conns[name] = a
}

func (f *fakeCluster) get(name string) (Actual, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.conns[name]
	return a, ok
}

func writeFile(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Make sure the change is seen even within the file system's timestamp granularity.
	later := time.Now().Add(time.Duration(len(src)) * time.Millisecond)
	os.Chtimes(filepath.Join(dir, name), later, later)
}

func connectorHCL(name, class, topic string) string {
	return fmt.Sprintf("connector %q {\n  class = %q\n  config = {\n    topic = %q\n  }\n}\n", name, class, topic)
}

func newTestReconciler(t *testing.T, dir string, c Client, leader *bool) *Reconciler {
	return New(Config{
		Dir: dir, Options: Options{Owner: "test"}, Client: c,
		IsLeader:   func() bool { return leader == nil || *leader },
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		Apply:  ApplyOptions{Timeout: 300 * time.Millisecond, Conflicts: -1},
		Logger: slog.New(slog.NewTextHandler(&testWriter{t}, nil)),
	})
}

type testWriter struct{ t *testing.T }

func (w *testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// settle runs cycles until the calls under way are done and a cycle makes none.
func settle(t *testing.T, r *Reconciler) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r.Cycle(context.Background())
		r.wg.Wait()
		r.mu.Lock()
		busy := len(r.inflight) > 0
		r.mu.Unlock()
		if !busy {
			r.Cycle(context.Background())
			r.mu.Lock()
			busy = len(r.inflight) > 0
			r.mu.Unlock()
			r.wg.Wait()
			if !busy {
				return
			}
		}
	}
	t.Fatal("did not settle")
}

func TestReconcilerLifecycle(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	writeFile(t, dir, "a.hcl", connectorHCL("a", "FileStreamSource", "ta"))
	writeFile(t, dir, "b.hcl", connectorHCL("b", "FileStreamSource", "tb"))
	writeFile(t, dir, "c.hcl", connectorHCL("c", "FileStreamSink", "tc"))
	f.conns["rest"] = Actual{Name: "rest", State: "RUNNING", Config: map[string]string{"connector.class": "X", "name": "rest"}}
	r := newTestReconciler(t, dir, f, nil)

	settle(t, r)
	if calls := strings.Join(f.takeCalls(), ","); calls != "create a,create b,create c" && !sameSet(calls, "create a,create b,create c") {
		t.Fatalf("calls %s", calls)
	}
	st := r.Status()
	if !st.Active || len(st.Connectors) != 3 || st.Connectors["a"].Result != ResultInSync || st.Connectors["a"].Declared != filepath.Join(dir, "a.hcl")+":1,1" {
		t.Fatalf("status %+v", st)
	}

	// Editing one file changes only that connector.
	writeFile(t, dir, "b.hcl", connectorHCL("b", "FileStreamSource", "tb2"))
	settle(t, r)
	if calls := f.takeCalls(); len(calls) != 1 || calls[0] != "update b" {
		t.Fatalf("calls %v", calls)
	}
	// A REST change to an owned connector is reverted and counted.
	f.set("a", func(a *Actual) { a.Config["topic"] = "hacked" })
	settle(t, r)
	if a, _ := f.get("a"); a.Config["topic"] != "ta" || r.Status().DriftCount != 1 {
		t.Fatalf("drift not reverted: %v, %+v", a.Config, r.Status())
	}
	f.takeCalls()
	// A REST pause of an owned connector is reverted.
	f.set("c", func(a *Actual) { a.State = "PAUSED" })
	settle(t, r)
	if calls := f.takeCalls(); len(calls) != 1 || calls[0] != "resume c" || r.Status().DriftCount != 2 {
		t.Fatalf("calls %v, %+v", calls, r.Status())
	}

	// Deleting a file deletes only that owned connector; the REST-created one stays.
	os.Remove(filepath.Join(dir, "c.hcl"))
	settle(t, r)
	if calls := f.takeCalls(); len(calls) != 1 || calls[0] != "delete c" {
		t.Fatalf("calls %v", calls)
	}
	if _, ok := f.get("rest"); !ok {
		t.Fatal("the REST-created connector was deleted")
	}
	if _, ok := r.Status().Connectors["c"]; ok {
		t.Fatalf("deleted connector still shown: %+v", r.Status().Connectors)
	}

	// A syntax error changes nothing and is reported with its position.
	writeFile(t, dir, "a.hcl", "connector \"a\" {\n  class = \"FileStreamSource\"\n  config = {\n    topic = \n  }\n}\n")
	settle(t, r)
	if calls := f.takeCalls(); len(calls) != 0 {
		t.Fatalf("calls %v", calls)
	}
	st = r.Status()
	if len(st.FileErrors) != 1 || st.FileErrors[0].Line != 4 || st.FileErrors[0].File != filepath.Join(dir, "a.hcl") || len(st.Connectors) != 2 {
		t.Fatalf("status %+v", st)
	}
	if _, ok := f.get("a"); !ok {
		t.Fatal("a was deleted")
	}
	writeFile(t, dir, "a.hcl", connectorHCL("a", "FileStreamSource", "ta"))
	settle(t, r)
	if st := r.Status(); len(st.FileErrors) != 0 {
		t.Fatalf("%+v", st.FileErrors)
	}

	var b bytes.Buffer
	r.WritePrometheus(&b)
	for _, want := range []string{
		MetricRuns, MetricDrift + " 2", MetricFileErrors + " 0",
		MetricResult + `{connector="a",result="in_sync"} 1`, MetricResult + `{connector="a",result="failed"} 0`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), `connector="c"`) {
		t.Errorf("metrics of a deleted connector:\n%s", b.String())
	}
}

func sameSet(a, b string) bool {
	x, y := strings.Split(a, ","), strings.Split(b, ",")
	if len(x) != len(y) {
		return false
	}
	m := map[string]int{}
	for _, s := range x {
		m[s]++
	}
	for _, s := range y {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

// A connector whose plugin is missing, or whose calls hang, does not hold the others back; it is
// reported and retried with back-off.
func TestReconcilerFailingConnectorDoesNotBlockOthers(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	writeFile(t, dir, "bad.hcl", connectorHCL("bad", "Missing", "t"))
	writeFile(t, dir, "hang.hcl", connectorHCL("hang", "Hang", "t"))
	writeFile(t, dir, "good.hcl", connectorHCL("good", "FileStreamSource", "t"))
	r := newTestReconciler(t, dir, f, nil)

	r.Cycle(context.Background())
	waitUntil(t, func() bool { _, ok := f.get("good"); return ok })
	r.wg.Wait()
	st := r.Status()
	if st.Connectors["bad"].Result != ResultFailed || !strings.Contains(st.Connectors["bad"].Message, "Failed to find any class") ||
		st.Connectors["bad"].Attempts != 1 || st.Connectors["bad"].NextRetry == nil {
		t.Fatalf("bad: %+v", st.Connectors["bad"])
	}
	if st.Connectors["hang"].Result != ResultFailed || !strings.Contains(st.Connectors["hang"].Message, "no answer within") {
		t.Fatalf("hang: %+v", st.Connectors["hang"])
	}
	// Retried after the back-off, with the attempts counted.
	time.Sleep(60 * time.Millisecond)
	r.Cycle(context.Background())
	r.wg.Wait()
	if n := r.Status().Connectors["bad"].Attempts; n != 2 {
		t.Fatalf("attempts %d", n)
	}
	// Fixing the file retries at once, whatever the back-off.
	r.cfg.MinBackoff, r.cfg.MaxBackoff = time.Hour, time.Hour
	r.Cycle(context.Background())
	r.wg.Wait()
	writeFile(t, dir, "bad.hcl", connectorHCL("bad", "FileStreamSink", "t"))
	r.Cycle(context.Background())
	r.wg.Wait()
	if _, ok := f.get("bad"); !ok {
		t.Fatalf("bad not created after the fix: %+v", r.Status().Connectors["bad"])
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestReconcilerOnlyOnTheLeaderAndNeverWithoutValidFiles(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	f.conns["owned"] = Actual{Name: "owned", State: "RUNNING", Config: map[string]string{"connector.class": "X", KeyManagedBy: "test"}}
	writeFile(t, dir, "a.hcl", "connector \"a\" {\n  class = \n}\n")
	leader := true
	r := newTestReconciler(t, dir, f, &leader)
	settle(t, r)
	// The first files are invalid: nothing is deleted or created.
	if calls := f.takeCalls(); len(calls) != 0 {
		t.Fatalf("calls %v", calls)
	}
	if st := r.Status(); len(st.FileErrors) == 0 || !strings.Contains(st.FileErrors[0].String(), "a.hcl:2,") {
		t.Fatalf("%+v", st)
	}
	leader = false
	writeFile(t, dir, "a.hcl", connectorHCL("a", "X", "t"))
	settle(t, r)
	if calls := f.takeCalls(); len(calls) != 0 || r.Status().Active {
		t.Fatalf("a follower reconciled: %v", calls)
	}
	leader = true
	settle(t, r)
	if calls := f.takeCalls(); !sameSet(strings.Join(calls, ","), "create a,delete owned") {
		t.Fatalf("calls %v", calls)
	}
}

func TestDefaultOwner(t *testing.T) {
	if DefaultOwner("/x/examples/connectors/") != "connectors" {
		t.Fatal(DefaultOwner("/x/examples/connectors/"))
	}
}

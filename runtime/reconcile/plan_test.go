package reconcile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/hcl"
)

func conn(name string, state hcl.State, kv ...string) hcl.Connector {
	c := hcl.Connector{Name: name, State: state, Config: map[string]string{}, File: name + ".hcl", Line: 1, Column: 1}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Config[kv[i]] = kv[i+1]
	}
	return c
}

// owned is the config the reconciler would have written for c.
func owned(c hcl.Connector, owner string, extra ...string) map[string]string {
	cfg := Want(c, owner)
	cfg["name"] = c.Name
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return cfg
}

func kinds(p Plan) map[string]Kind {
	out := map[string]Kind{}
	for _, a := range p.Actions {
		out[a.Connector] = a.Kind
	}
	return out
}

func action(t *testing.T, p Plan, name string) Action {
	t.Helper()
	for _, a := range p.Actions {
		if a.Connector == name {
			return a
		}
	}
	t.Fatalf("no action for %s in %+v", name, p.Actions)
	return Action{}
}

func TestDiffCreateUpdateDeleteAndLeaveAlone(t *testing.T) {
	a := conn("a", hcl.StateRunning, "connector.class", "FileStreamSource", "topic", "t1")
	b := conn("b", hcl.StatePaused, "connector.class", "FileStreamSink", "topics", "t1")
	c := conn("c", hcl.StateRunning, "connector.class", "FileStreamSource", "topic", "t2")
	bOld := conn("b", hcl.StatePaused, "connector.class", "FileStreamSink", "topics", "t0")
	actual := map[string]Actual{
		// b: the declaration changed (topics), server added keys that are ignored.
		"b": {Name: "b", State: "PAUSED", Config: owned(bOld, "dir", "__internal.config.version", "2")},
		// c: in sync.
		"c": {Name: "c", State: "RUNNING", Config: owned(c, "dir")},
		// gone: owned, no longer declared.
		"gone": {Name: "gone", State: "RUNNING", Config: map[string]string{"connector.class": "X", KeyManagedBy: "dir"}},
		// rest: created through REST, left alone; other: another owner's, left alone.
		"rest":  {Name: "rest", State: "RUNNING", Config: map[string]string{"connector.class": "X"}},
		"other": {Name: "other", State: "RUNNING", Config: map[string]string{"connector.class": "X", KeyManagedBy: "team-b"}},
	}
	p := Diff([]hcl.Connector{a, b, c}, actual, Options{Owner: "dir"})
	want := map[string]Kind{"a": KindCreate, "b": KindUpdate, "gone": KindDelete}
	if got := kinds(p); len(got) != len(want) || got["a"] != want["a"] || got["b"] != want["b"] || got["gone"] != want["gone"] {
		t.Fatalf("kinds %v", got)
	}
	if len(p.InSync) != 1 || p.InSync[0] != "c" || p.Changes() != 3 {
		t.Fatalf("in sync %v, changes %d", p.InSync, p.Changes())
	}
	ca := action(t, p, "a")
	if ca.Steps[0].Op != OpCreate || ca.Steps[0].Initial != "RUNNING" || ca.Steps[0].Config[KeyManagedBy] != "dir" || ca.Steps[0].Config["topic"] != "t1" {
		t.Fatalf("create %+v", ca)
	}
	ub := action(t, p, "b")
	if len(ub.Steps) != 1 || ub.Steps[0].Op != OpUpdate || ub.Drift {
		t.Fatalf("update %+v", ub)
	}
	if len(ub.Changes) != 1 || ub.Changes[0].Key != "topics" || *ub.Changes[0].Old != "t0" || *ub.Changes[0].New != "t1" {
		t.Fatalf("changes %+v", ub.Changes)
	}

	// With pruning, the REST-created connector goes too; another owner's never.
	p = Diff([]hcl.Connector{a, b, c}, actual, Options{Owner: "dir", Prune: true})
	if got := kinds(p); got["rest"] != KindPrune || got["other"] != "" {
		t.Fatalf("prune: %v", got)
	}
}

func TestDiffIgnoresUndeclaredAndMaskedKeys(t *testing.T) {
	c := conn("c", hcl.StateRunning, "connector.class", "X", "db.password", "${env:PW}", "tasks.max", "1")
	cfg := owned(c, "dir", "added.by.rest", "x", "__internal.config.version", "3")
	cfg["db.password"] = "[hidden]" // masked by the server: not comparable
	p := Diff([]hcl.Connector{c}, map[string]Actual{"c": {Name: "c", State: "RUNNING", Config: cfg}}, Options{Owner: "dir"})
	if len(p.Actions) != 0 {
		t.Fatalf("%+v", p.Actions)
	}
}

func TestDiffDriftRevertOrReport(t *testing.T) {
	c := conn("c", hcl.StateRunning, "connector.class", "X", "topic", "t1")
	cfg := owned(c, "dir", "rest.added", "y")
	cfg["topic"] = "changed-through-rest"
	actual := map[string]Actual{"c": {Name: "c", State: "RUNNING", Config: cfg}}

	p := Diff([]hcl.Connector{c}, actual, Options{Owner: "dir"})
	a := action(t, p, "c")
	if a.Kind != KindDrift || !a.Drift || a.Reported || len(a.Steps) != 1 || a.Steps[0].Op != OpUpdate {
		t.Fatalf("revert: %+v", a)
	}
	// The PUT drops the key added through REST, and the plan says so.
	if len(a.Changes) != 2 || a.Changes[1].Key != "rest.added" || a.Changes[1].New != nil {
		t.Fatalf("changes %+v", a.Changes)
	}

	p = Diff([]hcl.Connector{c}, actual, Options{Owner: "dir", Drift: DriftReport})
	a = action(t, p, "c")
	if !a.Reported || len(a.Steps) != 0 || p.Changes() != 0 {
		t.Fatalf("report: %+v", a)
	}

	// A paused connector declared running: resumed; drift when this reconciler had it running.
	actual = map[string]Actual{"c": {Name: "c", State: "PAUSED", Config: owned(c, "dir")}}
	p = Diff([]hcl.Connector{c}, actual, Options{Owner: "dir"})
	if a := action(t, p, "c"); a.Kind != KindState || a.Drift || a.Steps[0].Op != OpResume {
		t.Fatalf("%+v", a)
	}
	p = Diff([]hcl.Connector{c}, actual, Options{Owner: "dir", Drift: DriftReport, Applied: map[string]hcl.State{"c": hcl.StateRunning}})
	if a := action(t, p, "c"); !a.Drift || !a.Reported || len(a.Steps) != 0 {
		t.Fatalf("%+v", a)
	}
}

func TestDiffAdoptAndConflict(t *testing.T) {
	c := conn("c", hcl.StateRunning, "connector.class", "X", "topic", "t1")
	p := Diff([]hcl.Connector{c}, map[string]Actual{"c": {Name: "c", State: "RUNNING",
		Config: map[string]string{"name": "c", "connector.class": "X", "topic": "t1"}}}, Options{Owner: "dir"})
	a := action(t, p, "c")
	if a.Kind != KindAdopt || len(a.Steps) != 1 || a.Steps[0].Config[KeyManagedBy] != "dir" {
		t.Fatalf("%+v", a)
	}
	p = Diff([]hcl.Connector{c}, map[string]Actual{"c": {Name: "c", State: "RUNNING",
		Config: map[string]string{"connector.class": "X", KeyManagedBy: "other"}}}, Options{Owner: "dir"})
	if a := action(t, p, "c"); a.Kind != KindConflict || len(a.Steps) != 0 {
		t.Fatalf("%+v", a)
	}
}

func TestDiffStates(t *testing.T) {
	for _, tc := range []struct {
		want   hcl.State
		actual string
		op     Op
		kind   Kind
	}{
		{hcl.StateRunning, "RUNNING", "", ""},
		{hcl.StateRunning, "PAUSED", OpResume, KindState},
		{hcl.StateRunning, "STOPPED", OpResume, KindState},
		{hcl.StateRunning, "FAILED", "", ""},
		{hcl.StatePaused, "RUNNING", OpPause, KindState},
		{hcl.StatePaused, "UNASSIGNED", "", ""},
		{hcl.StatePaused, "FAILED", "", KindBlocked},
		{hcl.StateStopped, "RUNNING", OpStop, KindState},
		{hcl.StateStopped, "FAILED", OpStop, KindState},
		{hcl.StateStopped, "STOPPED", "", ""},
	} {
		c := conn("c", tc.want, "connector.class", "X")
		p := Diff([]hcl.Connector{c}, map[string]Actual{"c": {Name: "c", State: tc.actual, Config: owned(c, "dir")}}, Options{Owner: "dir"})
		if tc.kind == "" {
			if len(p.Actions) != 0 {
				t.Errorf("%s/%s: %+v", tc.want, tc.actual, p.Actions)
			}
			continue
		}
		a := action(t, p, "c")
		if a.Kind != tc.kind || (tc.op != "" && (len(a.Steps) != 1 || a.Steps[0].Op != tc.op)) || (tc.op == "" && len(a.Steps) != 0) {
			t.Errorf("%s/%s: %+v", tc.want, tc.actual, a)
		}
	}
	// Created in its declared state.
	c := conn("c", hcl.StateStopped, "connector.class", "X")
	if a := action(t, Diff([]hcl.Connector{c}, nil, Options{Owner: "dir"}), "c"); a.Steps[0].Initial != "STOPPED" {
		t.Fatalf("%+v", a)
	}
}

func TestPlanTextHidesSecrets(t *testing.T) {
	c := conn("db", hcl.StateRunning, "connector.class", "X", "db.password", "${env:NEW_PW}", "topic", "t")
	c.Secret = map[string]bool{"db.password": true}
	cfg := owned(conn("db", hcl.StateRunning, "connector.class", "X", "db.password", "${env:OLD_PW}", "topic", "t0"), "dir")
	cfg["api.token"] = "clear-token-value" // set through REST, in clear: dropped, never shown
	p := Diff([]hcl.Connector{c, conn("new", hcl.StatePaused, "connector.class", "Y", "ssl.key.password", "literal-secret")},
		map[string]Actual{"db": {Name: "db", State: "RUNNING", Config: cfg}}, Options{Owner: "dir"})
	var b bytes.Buffer
	Write(&b, p)
	out := b.String()
	for _, want := range []string{
		"~ update db  (db.hcl:1,1)",
		`~ db.password = "${env:OLD_PW}" -> "${env:NEW_PW}"`,
		`~ topic       = "t0" -> "t"`,
		"- api.token   (not declared: dropped)",
		"+ create new  (new.hcl:1,1; initial state PAUSED)",
		"+ ssl.key.password       = (sensitive value)",
		"Plan: 1 to create, 1 to update.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "clear-token-value") || strings.Contains(out, "literal-secret") {
		t.Fatalf("plan shows a secret:\n%s", out)
	}
}

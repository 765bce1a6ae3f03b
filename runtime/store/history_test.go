package store

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// The history lists what changed, once per change, with the trace of a failure and the deletion
// of a connector, as read back from the status topic.
func TestStatusHistory(t *testing.T) {
	e := newEnv(t)
	s := startStatusStore(t, e)
	before := time.Now().Add(-time.Minute)

	must(t, s.PutConnector(e.ctx, "orders", Status{State: StateRunning, WorkerID: "a:8083", Generation: 1}))
	must(t, s.PutTask(e.ctx, "orders", 0, Status{State: StateRunning, WorkerID: "a:8083", Generation: 1}))
	// The same state again (a worker repeats its report on every rebalance): not a change.
	must(t, s.PutTask(e.ctx, "orders", 0, Status{State: StateRunning, WorkerID: "a:8083", Generation: 2}))
	must(t, s.PutTask(e.ctx, "orders", 0, Status{State: StateFailed, Trace: "plugin trapped", WorkerID: "a:8083", Generation: 2}))
	must(t, s.PutTask(e.ctx, "orders", 0, Status{State: StateRunning, WorkerID: "b:8083", Generation: 3}))
	must(t, s.DeleteConnector(e.ctx, "orders"))

	type change struct {
		Connector string
		Task      int
		State     string
		Worker    string
		Trace     string
		Recent    bool
	}
	var got []change
	for _, c := range s.History() {
		got = append(got, change{c.Connector, c.Task, c.State, c.WorkerID, c.Trace, c.Time.After(before)})
	}
	want := []change{
		{"orders", -1, StateRunning, "a:8083", "", true},
		{"orders", 0, StateRunning, "a:8083", "", true},
		{"orders", 0, StateFailed, "a:8083", "plugin trapped", true},
		{"orders", 0, StateRunning, "b:8083", "", true},
		{"orders", 0, StateDestroyed, "", "", true},
		{"orders", -1, StateDestroyed, "", "", true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("History:\ngot  %+v\nwant %+v", got, want)
	}
}

// The history keeps the last HistoryLength changes, oldest first.
func TestStatusHistoryIsBounded(t *testing.T) {
	s := NewMemoryStatusStore(Options{})
	ctx := t.Context()
	for i := range HistoryLength + 10 {
		must(t, s.PutConnector(ctx, fmt.Sprintf("c%d", i), Status{State: StateRunning, WorkerID: "a"}))
	}
	h := s.History()
	if len(h) != HistoryLength || h[0].Connector != "c10" || h[len(h)-1].Connector != fmt.Sprintf("c%d", HistoryLength+9) {
		t.Fatalf("History has %d changes from %s to %s, want %d from c10", len(h), h[0].Connector, h[len(h)-1].Connector, HistoryLength)
	}
}

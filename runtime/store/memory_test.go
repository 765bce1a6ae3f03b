package store

import (
	"context"
	"testing"
)

func TestMemoryStoresApplyTheTopicRules(t *testing.T) {
	ctx := context.Background()
	cs := NewMemoryConfigStore(Options{})
	if err := cs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	woken := 0
	cs.OnChange(func() { woken++ })
	if err := cs.CreateConnector(ctx, "a", map[string]string{"connector.class": "X"}, TargetPaused); err != nil {
		t.Fatal(err)
	}
	if err := cs.PutTaskConfigs(ctx, "a", []map[string]string{{"t": "0"}, {"t": "1"}}); err != nil {
		t.Fatal(err)
	}
	snap := cs.Snapshot()
	if snap.Connectors["a"]["connector.class"] != "X" || snap.TargetState("a") != TargetPaused || len(snap.Tasks["a"]) != 2 {
		t.Fatalf("snapshot %+v", snap)
	}
	if snap.Offset != 5 || woken == 0 { // target state, connector, two tasks, commit
		t.Fatalf("offset %d, woken %d", snap.Offset, woken)
	}

	ss := NewMemoryStatusStore(Options{})
	if err := ss.PutTask(ctx, "a", 1, Status{State: StateRunning, WorkerID: "w"}); err != nil {
		t.Fatal(err)
	}
	if st, ok := ss.Task("a", 1); !ok || st.State != StateRunning {
		t.Fatalf("task status %+v %v", st, ok)
	}
}

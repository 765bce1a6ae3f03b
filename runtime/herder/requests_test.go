package herder

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wasmconnect/wasmconnect/runtime/cluster"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// A connector in the config topic that no worker has started yet is known: its status is
// UNASSIGNED, not a 404.
func TestStatusOfAConnectorNotStartedYet(t *testing.T) {
	e := newEnv(t)
	// Written as another worker would, with no loop here to start it.
	if err := e.configs.CreateConnector(e.ctx, "src", withName("src", sourceCfg), ""); err != nil {
		t.Fatal(err)
	}
	if err := e.configs.PutTaskConfigs(e.ctx, "src", []map[string]string{{"task": "0"}}); err != nil {
		t.Fatal(err)
	}
	st, err := e.h.ConnectorStatus(e.ctx, "src")
	if err != nil || st.Connector.State != connect.StateUnassigned || len(st.Tasks) != 1 || st.Tasks[0].State != connect.StateUnassigned {
		t.Fatalf("status %+v %v, want the connector and its task UNASSIGNED", st, err)
	}
	wantErr(t, "status of a connector that does not exist", func() error { _, err := e.h.ConnectorStatus(e.ctx, "nope"); return err }(),
		404, "No status found for connector nope")
}

// A create answers once the connector's task configs and status exist, so that a status and a
// task restart sent right after it succeed, as with Kafka Connect's herder.
func TestCreateAnswersOnceTheConnectorStarted(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); e.h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	failures := 0
	const n = 20
	for i := range n {
		name := "src-" + string(rune('a'+i))
		info, err := e.h.CreateConnector(e.ctx, name, sourceCfg, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Tasks) != 1 {
			t.Errorf("%s: create answered with %d tasks, want 1", name, len(info.Tasks))
		}
		if _, err := e.h.ConnectorStatus(e.ctx, name); err != nil {
			failures++
			t.Logf("%s: status right after the create: %v", name, err)
		}
		if err := e.h.RestartTask(e.ctx, connect.TaskID{Connector: name, Task: 0}); err != nil {
			failures++
			t.Logf("%s: task restart right after the create: %v", name, err)
		}
	}
	if failures > 0 {
		t.Fatalf("%d of %d requests right after a create failed", failures, 2*n)
	}
}

// A task restart that reaches a follower while the round that gives it the task is still under way
// (the leader assigned the task to it and forwarded the request) waits for that assignment and
// restarts the task there, rather than sending the request back to the leader: on its last hop
// that is a 409 "conflicting operation".
func TestRestartTaskWaitsForTheAssignmentUnderWay(t *testing.T) {
	e := newEnv(t)
	if err := e.configs.CreateConnector(e.ctx, "src", withName("src", sourceCfg), ""); err != nil {
		t.Fatal(err)
	}
	if err := e.configs.PutTaskConfigs(e.ctx, "src", []map[string]string{{"task": "0"}}); err != nil {
		t.Fatal(err)
	}
	// A follower that owns nothing, in a round that the leader has assigned. The round completes
	// once the restart has looked at the group: the herder takes up its part, and then the member
	// says the round is over.
	var group atomic.Pointer[cluster.State]
	group.Store(&cluster.State{Generation: 2, Rebalancing: true})
	looked := make(chan struct{})
	var once sync.Once
	e.h.groupState = func() cluster.State { once.Do(func() { close(looked) }); return *group.Load() }
	e.h.role.Store(&role{leaderURL: "http://leader:8083/"})
	e.h.assigned = &cluster.Allocation{}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); e.h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	id := connect.TaskID{Connector: "src", Task: 0}
	completed := make(chan struct{})
	go func() {
		defer close(completed)
		select {
		case <-looked:
		case <-ctx.Done():
			return
		}
		e.h.OnAssigned(e.ctx, cluster.Assignment{Generation: 2, LeaderURL: "http://leader:8083/",
			Owned: cluster.Allocation{Tasks: []connect.TaskID{id}}})
		group.Store(&cluster.State{Generation: 2})
	}()
	err := e.h.RestartTask(e.ctx, id)
	cancel()
	<-completed
	if err != nil {
		t.Fatalf("restart of a task the round under way assigns here: %v, want it restarted here", err)
	}
}

package herder

import (
	"context"
	"testing"

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

package store

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

const statusTopic = "connect-status"

func startStatusStore(t *testing.T, e *testEnv) *StatusStore {
	t.Helper()
	s := NewStatusStore(e.options(), TopicSpec{Name: statusTopic, Partitions: 5, ReplicationFactor: -1})
	must(t, s.Start(e.ctx))
	t.Cleanup(s.Close)
	return s
}

func TestStatusRecordFormats(t *testing.T) {
	e := newEnv(t)
	s := startStatusStore(t, e)

	must(t, s.PutConnector(e.ctx, "my-conn", Status{State: StateRunning, WorkerID: "h:8083", Generation: 7}))
	must(t, s.PutTask(e.ctx, "my-conn", 0, Status{State: StateFailed, Trace: "java.lang.Exception: boom\n\tat X", WorkerID: "h:8083", Generation: 7}))
	must(t, s.PutTopic(e.ctx, TopicStatus{Topic: "t", Connector: "my-conn", Task: 0, Discovered: time.UnixMilli(1700000000000)}))
	must(t, s.PutTask(e.ctx, "my-conn", 1, Status{State: StateDestroyed, WorkerID: "h:8083", Generation: 7}))

	want := map[string]string{
		"status-connector-my-conn":         `{"state":"RUNNING","trace":null,"worker_id":"h:8083","generation":7}`,
		"status-task-my-conn-0":            `{"state":"FAILED","trace":"java.lang.Exception: boom\n\tat X","worker_id":"h:8083","generation":7}`,
		"status-topic-t:connector-my-conn": `{"topic":{"name":"t","connector":"my-conn","task":0,"discoverTimestamp":1700000000000}}`,
		"status-task-my-conn-1":            tombstone,
	}
	got := map[string]string{}
	for _, r := range e.records(statusTopic) {
		got[r.Key] = r.Value
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("status topic:\ngot  %q\nwant %q", got, want)
	}

	// Read-your-writes, and the parsed values.
	if st, ok := s.Connector("my-conn"); !ok || st != (Status{State: StateRunning, WorkerID: "h:8083", Generation: 7}) {
		t.Fatalf("Connector = %+v, %v", st, ok)
	}
	if tasks := s.Tasks("my-conn"); len(tasks) != 1 || tasks[0].Trace != "java.lang.Exception: boom\n\tat X" {
		t.Fatalf("Tasks = %+v", tasks)
	}
	if got := s.Topics("my-conn"); len(got) != 1 || got[0].Topic != "t" || got[0].Discovered.UnixMilli() != 1700000000000 {
		t.Fatalf("Topics = %+v", got)
	}
}

// TestStatusPutSafe checks Kafka Connect's putSafe rule: write only if
// there is no current status, it came from the same worker, or its
// generation is not newer.
func TestStatusPutSafe(t *testing.T) {
	e := newEnv(t)
	s := startStatusStore(t, e)
	task := func() Status { st, _ := s.Task("c", 0); return st }

	// No current value: written.
	must(t, s.PutTaskSafe(e.ctx, "c", 0, Status{State: StateFailed, WorkerID: "a", Generation: 5}))
	if got := task(); got.State != StateFailed || got.WorkerID != "a" {
		t.Fatalf("no current value: status %+v not written", got)
	}
	// Other worker, older generation: skipped.
	must(t, s.PutTaskSafe(e.ctx, "c", 0, Status{State: StateUnassigned, WorkerID: "b", Generation: 4}))
	if got := task(); got.WorkerID != "a" {
		t.Fatalf("older generation from another worker overwrote: %+v", got)
	}
	// Other worker, same generation: written.
	must(t, s.PutTaskSafe(e.ctx, "c", 0, Status{State: StateFailed, WorkerID: "b", Generation: 5}))
	if got := task(); got.WorkerID != "b" {
		t.Fatalf("same generation from another worker not written: %+v", got)
	}
	// Same worker, older generation: written.
	must(t, s.PutTaskSafe(e.ctx, "c", 0, Status{State: StateFailed, WorkerID: "b", Generation: 1}))
	if got := task(); got.Generation != 1 {
		t.Fatalf("same worker not written: %+v", got)
	}

	must(t, s.PutConnector(e.ctx, "c", Status{State: StateRunning, WorkerID: "a", Generation: 9}))
	must(t, s.PutConnectorSafe(e.ctx, "c", Status{State: StateUnassigned, WorkerID: "b", Generation: 8}))
	if st, _ := s.Connector("c"); st.State != StateRunning {
		t.Fatalf("connector putSafe from an older generation overwrote: %+v", st)
	}
	must(t, s.PutConnectorSafe(e.ctx, "c", Status{State: StateUnassigned, WorkerID: "b", Generation: 10}))
	if st, _ := s.Connector("c"); st.State != StateUnassigned {
		t.Fatalf("connector putSafe from a newer generation not written: %+v", st)
	}
}

// statusStep is a task status written, and the state the store shows for the task after it.
type statusStep struct {
	what string
	put  Status
	want string
}

// putTaskStatuses writes each step's status for one task of a new store, in order, and checks
// what the store shows after each.
func putTaskStatuses(t *testing.T, steps []statusStep) {
	t.Helper()
	e := newEnv(t)
	s := startStatusStore(t, e)
	for _, step := range steps {
		must(t, s.PutTask(e.ctx, "c", 0, step.put))
		if st, _ := s.Task("c", 0); st.State != step.want {
			t.Fatalf("after %s: task %s, want %s", step.what, st.State, step.want)
		}
	}
}

// TestStatusStaleUnassigned checks which UNASSIGNED task statuses are ignored when read: KAFKA-12525's
// (another worker, same generation as the RUNNING one), one from a worker that was paused while its
// task moved and comes back in a newer generation, and not the current owner's own.
func TestStatusStaleUnassigned(t *testing.T) {
	putTaskStatuses(t, []statusStep{
		{"the new owner's RUNNING", Status{State: StateRunning, WorkerID: "new-owner", Generation: 6}, StateRunning},
		{"KAFKA-12525: the old owner's UNASSIGNED of the same generation", Status{State: StateUnassigned, WorkerID: "old-owner", Generation: 6}, StateRunning},
		{"a paused old owner's UNASSIGNED of a newer generation", Status{State: StateUnassigned, WorkerID: "old-owner", Generation: 8}, StateRunning},
		{"the owner's UNASSIGNED of the generation it reported RUNNING in", Status{State: StateUnassigned, WorkerID: "new-owner", Generation: 6}, StateRunning},
		{"the owner's own UNASSIGNED of a newer generation", Status{State: StateUnassigned, WorkerID: "new-owner", Generation: 7}, StateUnassigned},
		{"RUNNING after UNASSIGNED", Status{State: StateRunning, WorkerID: "old-owner", Generation: 9}, StateRunning},
	})
}

// TestStatusStaleFailed checks which FAILED task statuses are ignored when read: one from a worker
// that lost the task to the one whose RUNNING is current, in that generation or an older one (the
// zombie TestChaos found: paused past its session, it wrote FAILED as its fenced task stopped,
// then UNASSIGNED, after the new owner's RUNNING); and not a failure where the task runs now.
func TestStatusStaleFailed(t *testing.T) {
	putTaskStatuses(t, []statusStep{
		{"the new owner's RUNNING", Status{State: StateRunning, WorkerID: "new-owner", Generation: 10}, StateRunning},
		{"the old owner's FAILED of an older generation", Status{State: StateFailed, WorkerID: "old-owner", Generation: 9}, StateRunning},
		{"the old owner's UNASSIGNED after it", Status{State: StateUnassigned, WorkerID: "old-owner", Generation: 9}, StateRunning},
		{"the old owner's FAILED of the same generation", Status{State: StateFailed, WorkerID: "old-owner", Generation: 10}, StateRunning},
		{"the owner's own FAILED", Status{State: StateFailed, WorkerID: "new-owner", Generation: 10}, StateFailed},
		{"the old owner's RUNNING, having got the task back", Status{State: StateRunning, WorkerID: "old-owner", Generation: 11}, StateRunning},
		{"another worker's FAILED of a newer generation", Status{State: StateFailed, WorkerID: "new-owner", Generation: 12}, StateFailed},
	})
}

func TestStatusDeleteAndRestart(t *testing.T) {
	e := newEnv(t)
	s := startStatusStore(t, e)
	run := Status{State: StateRunning, WorkerID: "w", Generation: 1}
	for _, name := range []string{"keep", "drop"} {
		must(t, s.PutConnector(e.ctx, name, run))
		must(t, s.PutTask(e.ctx, name, 0, run))
		must(t, s.PutTask(e.ctx, name, 1, run))
		must(t, s.PutTopic(e.ctx, TopicStatus{Topic: "t1", Connector: name, Task: 1}))
		must(t, s.PutTopic(e.ctx, TopicStatus{Topic: "t2", Connector: name}))
	}

	must(t, s.ResetTopics(e.ctx, "keep"))
	if got := s.Topics("keep"); len(got) != 0 {
		t.Fatalf("topics after reset: %+v", got)
	}
	must(t, s.DeleteConnector(e.ctx, "drop"))
	if _, ok := s.Connector("drop"); ok {
		t.Fatal("connector status survived DeleteConnector")
	}
	if len(s.Tasks("drop")) != 0 || len(s.Topics("drop")) != 0 {
		t.Fatalf("DeleteConnector left tasks %v, topics %v", s.Tasks("drop"), s.Topics("drop"))
	}
	if len(s.Tasks("keep")) != 2 {
		t.Fatalf("DeleteConnector touched another connector: %v", s.Tasks("keep"))
	}

	// Java's connector tombstone also drops cached task statuses.
	must(t, s.PutConnector(e.ctx, "keep", Status{State: StateDestroyed}))
	if len(s.Tasks("keep")) != 0 {
		t.Fatalf("tasks survived the connector tombstone: %v", s.Tasks("keep"))
	}
	must(t, s.PutConnector(e.ctx, "again", run))
	must(t, s.PutTask(e.ctx, "again", 3, run))
	must(t, s.PutTopic(e.ctx, TopicStatus{Topic: "t9", Connector: "again", Task: 3, Discovered: time.UnixMilli(5)}))

	s2 := startStatusStore(t, e)
	if !reflect.DeepEqual(s.Connectors(), s2.Connectors()) || !reflect.DeepEqual(s.Tasks("again"), s2.Tasks("again")) ||
		!reflect.DeepEqual(s.Topics("again"), s2.Topics("again")) {
		t.Fatalf("second store differs: %v %v %v vs %v %v %v",
			s.Connectors(), s.Tasks("again"), s.Topics("again"), s2.Connectors(), s2.Tasks("again"), s2.Topics("again"))
	}
}

func TestStoresFromSettings(t *testing.T) {
	e := newEnv(t)
	topics := InternalTopicsFrom(config.InternalTopics{
		Config:  config.Topic{Name: "cfg", Key: "config.storage.topic", Partitions: 1, ReplicationFactor: -1},
		Offsets: config.Topic{Name: "off", Key: "offset.storage.topic", Partitions: 3, ReplicationFactor: -1},
		Status:  config.Topic{Name: "st", Key: "status.storage.topic", Partitions: 5, ReplicationFactor: -1},
	})
	s := NewStores(e.options(), topics)
	must(t, s.Start(e.ctx))
	defer s.Close()
	must(t, s.Config.PutConnectorConfig(e.ctx, "c", map[string]string{"name": "c"}))
	must(t, s.Status.PutConnector(e.ctx, "c", Status{State: StateRunning, WorkerID: "w"}))
	must(t, s.Offsets.Put(e.ctx, "c", []OffsetEntry{{Partition: raw(`{"p":1}`), Offset: raw(`{"o":2}`)}}))
	d, err := e.adm.ListTopics(e.ctx, "cfg", "off", "st")
	must(t, err)
	if len(d["cfg"].Partitions) != 1 || len(d["off"].Partitions) != 3 || len(d["st"].Partitions) != 5 {
		t.Fatalf("partitions: cfg %d, off %d, st %d", len(d["cfg"].Partitions), len(d["off"].Partitions), len(d["st"].Partitions))
	}

	// A failing store fails Start and names the topic.
	e.createTopic("bad", 1, nil)
	topics.Status.Name = "bad"
	bad := NewStores(e.options(), topics)
	if err := bad.Start(e.ctx); err == nil || !strings.Contains(err.Error(), `internal topic "bad" (status.storage.topic) has cleanup.policy=delete`) {
		t.Fatalf("Start with a bad status topic: %v", err)
	}
}

// A FAILED status is written whatever the length of its trace: a plugin's error text has no bound,
// and before, one over the status topic's max.message.bytes kept the FAILED status from being
// written at all. The trace is cut on a UTF-8 boundary and says how much is missing.
func TestLongTraceIsCutToFitTheStatusTopic(t *testing.T) {
	e := newEnv(t)
	s := startStatusStore(t, e)
	trace := "x" + strings.Repeat("é", DefaultMaxMessageBytes)
	must(t, s.PutTask(e.ctx, "c", 0, Status{State: StateFailed, Trace: trace, WorkerID: "h:8083"}))
	got, ok := s.Task("c", 0)
	if !ok || got.State != StateFailed || len(got.Trace) > maxTraceBytes+100 ||
		!strings.HasPrefix(trace, strings.TrimSuffix(got.Trace, "\n... (2031642 more bytes cut)")) ||
		!strings.HasSuffix(got.Trace, "\n... (2031642 more bytes cut)") {
		t.Errorf("read back %v %s with a trace of %d bytes ending %q", ok, got.State, len(got.Trace), got.Trace[max(0, len(got.Trace)-40):])
	}
}

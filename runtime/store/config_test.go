package store

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const configsTopic = "connect-configs"

func startConfigStore(t *testing.T, e *testEnv) *ConfigStore {
	t.Helper()
	s := NewConfigStore(e.options(), TopicSpec{Name: configsTopic, ReplicationFactor: -1, Property: "config.storage.topic"})
	must(t, s.Start(e.ctx))
	t.Cleanup(s.Close)
	return s
}

// TestConfigRecordFormats writes one of everything and checks the exact
// bytes in the topic against what Kafka Connect writes.
func TestConfigRecordFormats(t *testing.T) {
	e := newEnv(t)
	s := startConfigStore(t, e)

	cfg := map[string]string{"name": "my-conn", "connector.class": "FileStreamSource", "file": "/tmp/a.txt", "tasks.max": "2"}
	must(t, s.CreateConnector(e.ctx, "my-conn", cfg, TargetStopped))
	must(t, s.PutTaskConfigs(e.ctx, "my-conn", []map[string]string{{"file": "/tmp/a.txt", "task.id": "0"}, {"file": "/tmp/b.txt", "task.id": "1"}}))
	must(t, s.PutTargetState(e.ctx, "my-conn", TargetPaused))
	must(t, s.PutTargetState(e.ctx, "my-conn", TargetStarted))
	must(t, s.PutConnectorConfig(e.ctx, "my-conn", map[string]string{"name": "my-conn", "quote": `a"b<c>&d` + "\n\x01é"}))
	must(t, s.PutRestartRequest(e.ctx, RestartRequest{Connector: "my-conn", IncludeTasks: true}))
	must(t, s.PutSessionKey(e.ctx, SessionKey{Key: []byte("0123456789abcdef"), Algorithm: "HmacSHA256", Created: time.UnixMilli(1700000000123)}))
	must(t, s.PutLoggerLevel(e.ctx, "org.apache.kafka.connect", "DEBUG"))
	must(t, s.PutTaskConfigs(e.ctx, "my-conn", nil))
	must(t, s.RemoveConnector(e.ctx, "my-conn"))

	want := []rawRecord{
		{0, "target-state-my-conn", `{"state":"PAUSED","state.v2":"STOPPED"}`},
		{0, "connector-my-conn", `{"properties":{"connector.class":"FileStreamSource","file":"/tmp/a.txt","name":"my-conn","tasks.max":"2"}}`},
		{0, "task-my-conn-0", `{"properties":{"file":"/tmp/a.txt","task.id":"0"}}`},
		{0, "task-my-conn-1", `{"properties":{"file":"/tmp/b.txt","task.id":"1"}}`},
		{0, "commit-my-conn", `{"tasks":2}`},
		{0, "target-state-my-conn", `{"state":"PAUSED","state.v2":"PAUSED"}`},
		{0, "target-state-my-conn", `{"state":"STARTED","state.v2":"STARTED"}`},
		{0, "connector-my-conn", `{"properties":{"name":"my-conn","quote":"a\"b<c>&d\n\u0001é"}}`},
		{0, "restart-connector-my-conn", `{"include-tasks":true,"only-failed":false}`},
		{0, "session-key", `{"key":"MDEyMzQ1Njc4OWFiY2RlZg==","algorithm":"HmacSHA256","creation-timestamp":1700000000123}`},
		{0, "logger-cluster-org.apache.kafka.connect", `{"level":"DEBUG"}`},
		{0, "commit-my-conn", `{"tasks":0}`},
		{0, "connector-my-conn", tombstone},
		{0, "target-state-my-conn", tombstone},
	}
	if got := e.records(configsTopic); !reflect.DeepEqual(got, want) {
		t.Fatalf("config topic records:\ngot  %q\nwant %q", got, want)
	}
}

// TestConfigReadYourWrites checks that every write is in the snapshot as
// soon as the write returns, with no ReadToEnd in between.
func TestConfigReadYourWrites(t *testing.T) {
	e := newEnv(t)
	s := startConfigStore(t, e)
	if snap := s.Snapshot(); snap.Offset != -1 || len(snap.Connectors) != 0 {
		t.Fatalf("empty topic: snapshot %+v, want offset -1 and no connectors", snap)
	}

	cfg := map[string]string{"name": "c", "tasks.max": "1"}
	must(t, s.CreateConnector(e.ctx, "c", cfg, TargetPaused))
	snap := s.Snapshot()
	if !reflect.DeepEqual(snap.Connectors["c"], cfg) || snap.TargetState("c") != TargetPaused || snap.Offset != 2 {
		t.Fatalf("after create: %+v", snap)
	}
	if _, ok := snap.Tasks["c"]; ok {
		t.Fatal("tasks before any commit")
	}

	must(t, s.PutTaskConfigs(e.ctx, "c", []map[string]string{{"t": "0"}}))
	if got := s.Snapshot().Tasks["c"]; !reflect.DeepEqual(got, []map[string]string{{"t": "0"}}) {
		t.Fatalf("tasks after PutTaskConfigs = %v", got)
	}
	must(t, s.PutTargetState(e.ctx, "c", TargetStopped))
	must(t, s.PutTaskConfigs(e.ctx, "c", nil))
	snap = s.Snapshot()
	if snap.TargetState("c") != TargetStopped {
		t.Fatalf("target state = %s, want STOPPED", snap.TargetState("c"))
	}
	if tasks, ok := snap.Tasks["c"]; !ok || len(tasks) != 0 {
		t.Fatalf("stopped connector tasks = %v, %v; want an empty entry", tasks, ok)
	}

	// The snapshot is a deep copy.
	snap.Connectors["c"]["name"] = "mutated"
	if s.Snapshot().Connectors["c"]["name"] != "c" {
		t.Fatal("mutating a snapshot changed the store")
	}

	must(t, s.RemoveConnector(e.ctx, "c"))
	snap = s.Snapshot()
	if _, ok := snap.Connectors["c"]; ok {
		t.Fatal("connector still present after RemoveConnector")
	}
	if _, ok := snap.Tasks["c"]; ok {
		t.Fatal("tasks still present after RemoveConnector")
	}
}

// TestConfigTaskBuffering replays records as Java workers (and compaction)
// leave them, including the cases the read protocol guards against.
func TestConfigTaskBuffering(t *testing.T) {
	e := newEnv(t)
	e.createTopic(configsTopic, 1, map[string]string{"cleanup.policy": "compact"})
	e.produce(configsTopic,
		// A connector whose name contains '-', and two committed tasks.
		"connector-a-b", `{"properties":{"name":"a-b","tasks.max":"2"}}`,
		"task-a-b-1", `{"properties":{"id":"1"}}`,
		"task-a-b-0", `{"properties":{"id":"0"}}`,
		"commit-a-b", `{"tasks":2}`,
		// Task records without a commit yet: not applied.
		"task-a-b-0", `{"properties":{"id":"0-new"}}`,
		// A connector that lost task 1 to compaction: inconsistent.
		"connector-lossy", `{"properties":{"name":"lossy"}}`,
		"task-lossy-0", `{"properties":{"id":"0"}}`,
		"commit-lossy", `{"tasks":2}`,
		// A commit for a connector that has no config: ignored, and its
		// buffered task does not leak into a later connector.
		"task-ghost-0", `{"properties":{"id":"ghost"}}`,
		"commit-ghost", `{"tasks":1}`,
		"connector-ghost", `{"properties":{"name":"ghost"}}`,
		// An old worker's target state (no state.v2), a new one's.
		"target-state-a-b", `{"state":"PAUSED"}`,
		"target-state-lossy", `{"state":"PAUSED","state.v2":"STOPPED"}`,
		// Records to drop: unknown key, bad JSON, bad state, null task.
		"something-else", `{"x":1}`,
		"connector-bad", `{"properties":`,
		"target-state-ghost", `{"state":"SLEEPING"}`,
		"task-a-b-7", tombstone,
		// Kept: tasks-fencing, logger level.
		"tasks-fencing-a-b", `{"task-count":2}`,
		"logger-cluster-root", `{"level":"WARN"}`,
	)
	s := startConfigStore(t, e)
	snap := s.Snapshot()

	if snap.Offset != 19 {
		t.Errorf("Offset = %d, want 19 (last offset read + 1, counting dropped records)", snap.Offset)
	}
	if got := snap.ConnectorNames(); !slices.Equal(got, []string{"a-b", "ghost", "lossy"}) {
		t.Errorf("connectors = %v", got)
	}
	if got, want := snap.Tasks["a-b"], []map[string]string{{"id": "0"}, {"id": "1"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("tasks of a-b = %v, want %v (the uncommitted 0-new must not be applied)", got, want)
	}
	if _, ok := snap.Inconsistent["lossy"]; !ok {
		t.Errorf("lossy not inconsistent: %v", snap.Inconsistent)
	}
	if _, ok := snap.Tasks["lossy"]; ok {
		t.Error("inconsistent connector has tasks")
	}
	if _, ok := snap.Tasks["ghost"]; ok {
		t.Errorf("commit before the connector config was applied: %v", snap.Tasks["ghost"])
	}
	for name, want := range map[string]TargetState{"a-b": TargetPaused, "lossy": TargetStopped, "ghost": TargetStarted} {
		if got := snap.TargetStates[name]; got != want {
			t.Errorf("target state of %s = %q, want %s", name, got, want)
		}
	}
	if snap.TaskCountRecords["a-b"] != 2 || snap.LoggerLevels["root"] != "WARN" {
		t.Errorf("task counts %v, logger levels %v", snap.TaskCountRecords, snap.LoggerLevels)
	}

	// A complete fresh set repairs the inconsistent connector; a stale
	// buffered task (0-new for a-b) is replaced by the fresh one.
	must(t, s.PutTaskConfigs(e.ctx, "lossy", []map[string]string{{"id": "0"}, {"id": "1"}}))
	snap = s.Snapshot()
	if _, ok := snap.Inconsistent["lossy"]; ok || len(snap.Tasks["lossy"]) != 2 {
		t.Errorf("after rewriting tasks: inconsistent %v, tasks %v", snap.Inconsistent, snap.Tasks["lossy"])
	}
	must(t, s.PutTaskConfigs(e.ctx, "a-b", []map[string]string{{"id": "0-b"}}))
	if got := s.Snapshot().Tasks["a-b"]; !reflect.DeepEqual(got, []map[string]string{{"id": "0-b"}}) {
		t.Errorf("tasks of a-b after shrinking to 1 = %v", got)
	}
}

// TestConfigRestart checks that a second store reading an existing topic,
// as a restarted worker does, builds the same snapshot.
func TestConfigRestart(t *testing.T) {
	e := newEnv(t)
	s := startConfigStore(t, e)
	must(t, s.CreateConnector(e.ctx, "one", map[string]string{"name": "one"}, TargetPaused))
	must(t, s.PutTaskConfigs(e.ctx, "one", []map[string]string{{"a": "1"}, {"a": "2"}}))
	must(t, s.CreateConnector(e.ctx, "two", map[string]string{"name": "two"}, ""))
	must(t, s.PutTaskConfigs(e.ctx, "two", []map[string]string{{"b": "1"}}))
	must(t, s.PutSessionKey(e.ctx, SessionKey{Key: []byte{1, 2, 3}, Algorithm: "HmacSHA256", Created: time.UnixMilli(42)}))
	must(t, s.RemoveConnector(e.ctx, "two"))
	first := s.Snapshot()

	s2 := startConfigStore(t, e)
	second := s2.Snapshot()
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("snapshots differ:\nfirst  %+v\nsecond %+v", first, second)
	}
	if second.SessionKey == nil || second.SessionKey.Created.UnixMilli() != 42 {
		t.Fatalf("session key = %+v", second.SessionKey)
	}

	// The second store hears about the first store's writes.
	must(t, s.PutTargetState(e.ctx, "one", TargetStarted))
	must(t, s2.ReadToEnd(e.ctx))
	if got := s2.Snapshot().TargetState("one"); got != TargetStarted {
		t.Fatalf("second store: target state %s after ReadToEnd, want STARTED", got)
	}
}

func TestConfigChanges(t *testing.T) {
	e := newEnv(t)
	e.createTopic(configsTopic, 1, map[string]string{"cleanup.policy": "compact"})
	e.produce(configsTopic, "connector-old", `{"properties":{}}`)
	s := startConfigStore(t, e)
	if c := s.Changes(); len(c) != 0 {
		t.Fatalf("records read during Start produced changes: %+v", c)
	}
	poked := make(chan struct{}, 100)
	s.OnChange(func() { poked <- struct{}{} })

	must(t, s.CreateConnector(e.ctx, "c", map[string]string{}, TargetPaused))
	must(t, s.PutTaskConfigs(e.ctx, "c", []map[string]string{{}, {}}))
	must(t, s.PutRestartRequest(e.ctx, RestartRequest{Connector: "c", OnlyFailed: true}))
	must(t, s.RemoveConnector(e.ctx, "c"))

	select {
	case <-s.Updates():
	default:
		t.Fatal("Updates was not signalled")
	}
	if len(poked) == 0 {
		t.Fatal("OnChange callback not called")
	}
	want := []Change{
		{Kind: TargetStateChanged, Connector: "c"},
		{Kind: ConnectorConfigChanged, Connector: "c"},
		{Kind: TaskConfigsChanged, Connector: "c", Tasks: []int{0, 1}},
		{Kind: RestartRequested, Connector: "c", Restart: RestartRequest{Connector: "c", OnlyFailed: true}},
		{Kind: ConnectorRemoved, Connector: "c"},
	}
	if got := s.Changes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("changes:\ngot  %+v\nwant %+v", got, want)
	}
	if got := s.Changes(); got != nil {
		t.Fatalf("Changes did not drain: %+v", got)
	}
}

func TestConfigTopicChecks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		partitions int32
		policy     string
		want       string
	}{
		{"delete policy", 1, "delete", `internal topic "connect-configs" (config.storage.topic) has cleanup.policy=delete; Kafka Connect requires cleanup.policy=compact (set it with kafka-configs or delete the topic)`},
		{"compact and delete", 1, "compact,delete", `has cleanup.policy=compact,delete; Kafka Connect requires cleanup.policy=compact`},
		{"three partitions", 3, "compact", `internal topic "connect-configs" (config.storage.topic) has 3 partitions; Kafka Connect requires the config topic to have exactly 1 partition`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.createTopic(configsTopic, tc.partitions, map[string]string{"cleanup.policy": tc.policy})
			s := NewConfigStore(e.options(), TopicSpec{Name: configsTopic, Property: "config.storage.topic"})
			err := s.Start(e.ctx)
			if err == nil {
				s.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q\ndoes not contain %q", err, tc.want)
			}
		})
	}
}

func TestConfigValueEncoders(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{string(targetStateValue(TargetStarted)), `{"state":"STARTED","state.v2":"STARTED"}`},
		{string(targetStateValue(TargetPaused)), `{"state":"PAUSED","state.v2":"PAUSED"}`},
		{string(targetStateValue(TargetStopped)), `{"state":"PAUSED","state.v2":"STOPPED"}`},
		{string(connectorValue(nil)), `{"properties":{}}`},
		{string(commitValue(3)), `{"tasks":3}`},
		{string(restartValue(RestartRequest{OnlyFailed: true})), `{"include-tasks":false,"only-failed":true}`},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

// A corrupt task count in a commit record cannot be complete: the connector is marked
// inconsistent (the leader regenerates its tasks), and the count allocates nothing. Before, a
// count of 2^40 ended every worker that read it ("fatal error: runtime: out of memory").
func TestCorruptTaskCountMarksConnectorInconsistent(t *testing.T) {
	e := newEnv(t)
	s := startConfigStore(t, e)
	must(t, s.CreateConnector(e.ctx, "c", map[string]string{"name": "c"}, ""))
	must(t, s.PutTaskConfigs(e.ctx, "c", []map[string]string{{"t": "0"}}))
	e.produce(configsTopic, "commit-c", `{"tasks":1099511627776}`)
	must(t, s.ReadToEnd(e.ctx))
	snap := s.Snapshot()
	if _, ok := snap.Inconsistent["c"]; !ok || len(snap.Tasks["c"]) != 0 {
		t.Errorf("after a commit of 2^40 tasks: inconsistent %v, tasks %v", snap.Inconsistent, snap.Tasks["c"])
	}
}

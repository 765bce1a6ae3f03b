package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

// Connector and task states as written to the status topic.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
	// StateDestroyed is never stored: putting it writes a tombstone.
	StateDestroyed = "DESTROYED"
)

func validState(s string) bool {
	switch s {
	case StateUnassigned, StateRunning, StatePaused, StateStopped, StateFailed, StateRestarting, StateDestroyed:
		return true
	}
	return false
}

// Status is the state of a connector or task as reported by the worker
// running it.
type Status struct {
	State string
	// Trace is the stack trace or error text of a FAILED instance; empty
	// (written as null) otherwise.
	Trace    string
	WorkerID string
	// Generation is the writer's group generation. Together with
	// WorkerID it decides which of two conflicting writes wins; see
	// PutConnectorSafe.
	Generation int32
}

// TopicStatus records that a connector's task used a topic (KIP-558).
type TopicStatus struct {
	Topic      string
	Connector  string
	Task       int32
	Discovered time.Time
}

// Status topic record key prefixes, from KafkaStatusBackingStore.
const (
	connectorStatusPrefix = "status-connector-"
	taskStatusPrefix      = "status-task-"
	topicStatusPrefix     = "status-topic-"
	topicStatusSeparator  = ":connector-"
)

// StatusStore is the status topic: connector, task and active-topic
// statuses, read and written as Kafka Connect's KafkaStatusBackingStore
// does. A status is visible only once it has been read back from the
// topic; the Put methods wait for that, so a caller sees its own write.
type StatusStore struct {
	log    recordLog
	logger *slog.Logger

	mu         sync.Mutex
	connectors map[string]Status
	tasks      map[string]map[int]Status
	topics     map[string]map[string]TopicStatus // connector -> topic
	history    history
}

// NewStatusStore returns a status store over topic. It does no I/O until
// Start.
func NewStatusStore(o Options, topic TopicSpec) *StatusStore {
	s := newStatusStore(o, topic.Name)
	s.log = NewLog(o.logConfig(topic, "statuses", s.apply))
	return s
}

// NewMemoryStatusStore returns a status store kept in memory only, for a standalone worker.
func NewMemoryStatusStore(o Options) *StatusStore {
	s := newStatusStore(o, "memory")
	s.log = newMemoryLog("connect-status", s.apply)
	return s
}

func newStatusStore(o Options, topic string) *StatusStore {
	return &StatusStore{
		logger:     o.logger().With("topic", topic),
		connectors: make(map[string]Status),
		tasks:      make(map[string]map[int]Status),
		topics:     make(map[string]map[string]TopicStatus),
	}
}

// Start creates or checks the topic and reads it to the end.
func (s *StatusStore) Start(ctx context.Context) error { return s.log.Start(ctx) }

// Close stops the store.
func (s *StatusStore) Close() { s.log.Close() }

// ReadToEnd waits until every status written so far, by any worker, is
// visible.
func (s *StatusStore) ReadToEnd(ctx context.Context) error { return s.log.ReadToEnd(ctx) }

// Connector returns the status of a connector.
func (s *StatusStore) Connector(name string) (Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.connectors[name]
	return st, ok
}

// Connectors returns the connectors that have a status, sorted.
func (s *StatusStore) Connectors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.connectors))
}

// Task returns the status of one task.
func (s *StatusStore) Task(connector string, task int) (Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.tasks[connector][task]
	return st, ok
}

// Tasks returns the statuses of a connector's tasks by task number. The map
// is a copy.
func (s *StatusStore) Tasks(connector string) map[int]Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.tasks[connector])
}

// PutConnector writes a connector status unconditionally. StateDestroyed
// writes a tombstone.
func (s *StatusStore) PutConnector(ctx context.Context, name string, st Status) error {
	_, err := s.put(ctx, connectorStatusKey(name), st, false, nil)
	if err != nil {
		return fmt.Errorf("writing status %s of connector %q: %w", st.State, name, err)
	}
	return nil
}

// PutTask writes a task status unconditionally. StateDestroyed writes a
// tombstone.
func (s *StatusStore) PutTask(ctx context.Context, connector string, task int, st Status) error {
	_, err := s.put(ctx, taskStatusKey(connector, task), st, false, nil)
	if err != nil {
		return fmt.Errorf("writing status %s of task %s-%d: %w", st.State, connector, task, err)
	}
	return nil
}

// PutConnectorSafe writes a connector status only if it cannot overwrite a
// newer one: if there is no current status, the current one came from the
// same worker, or the current one's generation is not newer than st's.
// This is Kafka Connect's putSafe, used for FAILED and UNASSIGNED, which a
// worker may write after a rebalance already moved the connector elsewhere.
// A skipped write is not an error; it is logged at debug level.
func (s *StatusStore) PutConnectorSafe(ctx context.Context, name string, st Status) error {
	_, err := s.put(ctx, connectorStatusKey(name), st, true, func() (Status, bool) {
		cur, ok := s.connectors[name]
		return cur, ok
	})
	if err != nil {
		return fmt.Errorf("writing status %s of connector %q: %w", st.State, name, err)
	}
	return nil
}

// PutTaskSafe is PutConnectorSafe for a task.
func (s *StatusStore) PutTaskSafe(ctx context.Context, connector string, task int, st Status) error {
	_, err := s.put(ctx, taskStatusKey(connector, task), st, true, func() (Status, bool) {
		cur, ok := s.tasks[connector][task]
		return cur, ok
	})
	if err != nil {
		return fmt.Errorf("writing status %s of task %s-%d: %w", st.State, connector, task, err)
	}
	return nil
}

// put writes st under key. With safe, current (called under the lock)
// returns the cached status to check against.
//
// The check and the write are not atomic across workers, exactly as in
// Java: the rule only protects against writes from an older generation
// that the cache already knows about.
func (s *StatusStore) put(ctx context.Context, key string, st Status, safe bool, current func() (Status, bool)) (bool, error) {
	if !validState(st.State) {
		return false, fmt.Errorf("invalid state %q", st.State)
	}
	if safe {
		s.mu.Lock()
		cur, ok := current()
		s.mu.Unlock()
		if ok && cur.WorkerID != st.WorkerID && cur.Generation > st.Generation {
			s.logger.Debug("not overwriting a newer status", "key", key,
				"state", st.State, "generation", st.Generation, "worker_id", st.WorkerID,
				"current_state", cur.State, "current_generation", cur.Generation, "current_worker_id", cur.WorkerID)
			return false, nil
		}
	}
	var value []byte
	if st.State != StateDestroyed {
		value = statusValue(st)
	}
	if err := s.log.Write(ctx, Record{[]byte(key), value}); err != nil {
		return false, err
	}
	return true, nil
}

// DeleteConnector tombstones the statuses of a deleted connector: its
// active topics, every task status known, and the connector status last,
// as Kafka Connect's herder does on deletion.
func (s *StatusStore) DeleteConnector(ctx context.Context, connector string) error {
	s.mu.Lock()
	recs := s.topicTombstones(connector)
	for _, task := range slices.Sorted(maps.Keys(s.tasks[connector])) {
		recs = append(recs, Record{Key: []byte(taskStatusKey(connector, task))})
	}
	s.mu.Unlock()
	recs = append(recs, Record{Key: []byte(connectorStatusKey(connector))})
	if err := s.log.Write(ctx, recs...); err != nil {
		return fmt.Errorf("deleting statuses of connector %q: %w", connector, err)
	}
	return nil
}

// PutTopic records that a connector's task used a topic. A zero
// Discovered means now.
func (s *StatusStore) PutTopic(ctx context.Context, ts TopicStatus) error {
	if ts.Topic == "" || ts.Connector == "" {
		return fmt.Errorf("writing topic status: topic (%q) and connector (%q) are required", ts.Topic, ts.Connector)
	}
	if ts.Discovered.IsZero() {
		ts.Discovered = time.Now()
	}
	if err := s.log.Write(ctx, Record{[]byte(topicStatusKey(ts.Topic, ts.Connector)), topicStatusValue(ts)}); err != nil {
		return fmt.Errorf("writing active topic %q of connector %q: %w", ts.Topic, ts.Connector, err)
	}
	return nil
}

// Topic returns the status of one of a connector's active topics.
func (s *StatusStore) Topic(connector, topic string) (TopicStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, ok := s.topics[connector][topic]
	return ts, ok
}

// Topics returns a connector's active topics, sorted by topic name.
func (s *StatusStore) Topics(connector string) []TopicStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.topics[connector]
	out := make([]TopicStatus, 0, len(m))
	for _, topic := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[topic])
	}
	return out
}

// ResetTopics tombstones all of a connector's active topics.
func (s *StatusStore) ResetTopics(ctx context.Context, connector string) error {
	s.mu.Lock()
	recs := s.topicTombstones(connector)
	s.mu.Unlock()
	if len(recs) == 0 {
		return nil
	}
	if err := s.log.Write(ctx, recs...); err != nil {
		return fmt.Errorf("resetting active topics of connector %q: %w", connector, err)
	}
	return nil
}

// topicTombstones returns tombstones for a connector's active topics, sorted by topic. s.mu is
// held.
func (s *StatusStore) topicTombstones(connector string) []Record {
	var recs []Record
	for _, topic := range slices.Sorted(maps.Keys(s.topics[connector])) {
		recs = append(recs, Record{Key: []byte(topicStatusKey(topic, connector))})
	}
	return recs
}

func connectorStatusKey(name string) string { return connectorStatusPrefix + name }

func taskStatusKey(connector string, task int) string {
	return taskStatusPrefix + connector + "-" + strconv.Itoa(task)
}

func topicStatusKey(topic, connector string) string {
	return topicStatusPrefix + topic + topicStatusSeparator + connector
}

// statusValue is {"state":…,"trace":…,"worker_id":…,"generation":…}, the
// field order of Java's STATUS_SCHEMA_V0.
func statusValue(st Status) []byte {
	b := connect.AppendJSONString([]byte(`{"state":`), st.State)
	b = append(b, `,"trace":`...)
	if st.Trace == "" {
		b = append(b, "null"...)
	} else {
		b = connect.AppendJSONString(b, cutTrace(st.Trace))
	}
	b = connect.AppendJSONString(append(b, `,"worker_id":`...), st.WorkerID)
	b = strconv.AppendInt(append(b, `,"generation":`...), int64(st.Generation), 10)
	return append(b, '}')
}

// maxTraceBytes bounds the trace a status record carries. A trace is for people reading a status,
// and a plugin's error text has no bound of its own: uncut, a long enough one would make the record
// too large for the status topic, and the FAILED status would never be written.
const maxTraceBytes = 64 << 10

// cutTrace cuts a trace to maxTraceBytes, on a UTF-8 boundary, saying how much was cut.
func cutTrace(trace string) string {
	if len(trace) <= maxTraceBytes {
		return trace
	}
	n := maxTraceBytes
	for n > 0 && !utf8.RuneStart(trace[n]) {
		n--
	}
	return trace[:n] + "\n... (" + strconv.Itoa(len(trace)-n) + " more bytes cut)"
}

// topicStatusValue is {"topic":{"name":…,"connector":…,"task":…,
// "discoverTimestamp":…}}.
func topicStatusValue(ts TopicStatus) []byte {
	b := connect.AppendJSONString([]byte(`{"topic":{"name":`), ts.Topic)
	b = connect.AppendJSONString(append(b, `,"connector":`...), ts.Connector)
	b = strconv.AppendInt(append(b, `,"task":`...), int64(ts.Task), 10)
	b = strconv.AppendInt(append(b, `,"discoverTimestamp":`...), ts.Discovered.UnixMilli(), 10)
	return append(b, "}}"...)
}

// apply is the log handler.
func (s *StatusStore) apply(r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := string(r.Key)
	var err error
	switch {
	case strings.HasPrefix(key, connectorStatusPrefix):
		err = s.applyConnector(r, strings.TrimPrefix(key, connectorStatusPrefix), r.Value)
	case strings.HasPrefix(key, taskStatusPrefix):
		err = s.applyTask(r, strings.TrimPrefix(key, taskStatusPrefix), r.Value)
	case strings.HasPrefix(key, topicStatusPrefix):
		err = s.applyTopic(strings.TrimPrefix(key, topicStatusPrefix), r.Value)
	default:
		s.logger.Warn("discarding status record with unknown key", "key", key, "offset", r.Offset)
		return
	}
	if err != nil {
		s.logger.Error("ignoring invalid status record", "key", key, "offset", r.Offset, "err", err)
	}
}

func (s *StatusStore) applyConnector(r *kgo.Record, name string, value []byte) error {
	if name == "" {
		return errors.New("empty connector name")
	}
	prev, had := s.connectors[name]
	if value == nil {
		// As in Java, a connector tombstone also forgets its tasks.
		delete(s.connectors, name)
		delete(s.tasks, name)
		s.recordChange(r, name, -1, prev, had, Status{State: StateDestroyed})
		return nil
	}
	st, err := parseStatus(value)
	if err != nil {
		return err
	}
	s.connectors[name] = st
	s.recordChange(r, name, -1, prev, had, st)
	return nil
}

func (s *StatusStore) applyTask(r *kgo.Record, rest string, value []byte) error {
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return errors.New("task status key has no connector name and task number")
	}
	name := rest[:i]
	task, err := strconv.Atoi(rest[i+1:])
	if err != nil || task < 0 {
		return fmt.Errorf("task status key has task number %q, want a non-negative integer", rest[i+1:])
	}
	cur, ok := s.tasks[name][task]
	if value == nil {
		delete(s.tasks[name], task)
		if len(s.tasks[name]) == 0 {
			delete(s.tasks, name)
		}
		s.recordChange(r, name, task, cur, ok, Status{State: StateDestroyed})
		return nil
	}
	st, err := parseStatus(value)
	if err != nil {
		return err
	}
	if ok && staleTaskStatus(st, cur) {
		s.logger.Debug("ignoring a stale task status", "connector", name, "task", task, "state", st.State,
			"generation", st.Generation, "worker_id", st.WorkerID,
			"current_state", cur.State, "current_generation", cur.Generation, "current_worker_id", cur.WorkerID)
		return nil
	}
	if s.tasks[name] == nil {
		s.tasks[name] = make(map[int]Status)
	}
	s.tasks[name][task] = st
	s.recordChange(r, name, task, cur, ok, st)
	return nil
}

// staleTaskStatus reports whether st, an incoming task status, says less than cur, the one read
// before it: a stale UNASSIGNED (staleUnassigned), or a FAILED from another worker than the one that
// reported RUNNING since, in the same generation or an older one. In one generation a task runs on
// one worker, so that FAILED is about an earlier run of the task, which the group had already
// moved: a zombie that failed as it lost the task (a worker paused past its session, whose task was
// fenced by its successor). A FAILED from a newer generation is the task failing where it runs now.
func staleTaskStatus(st, cur Status) bool {
	if st.State == StateFailed {
		return cur.State == StateRunning && cur.WorkerID != st.WorkerID && st.Generation <= cur.Generation
	}
	return staleUnassigned(st, cur)
}

// staleUnassigned reports whether st, an incoming task status, is an UNASSIGNED that says less
// than cur, the one read before it. A worker writes UNASSIGNED only for a task it stops, so:
//   - KAFKA-12525: a worker that lost the task in a rebalance writes UNASSIGNED, possibly after the
//     new owner wrote RUNNING in the same generation; that UNASSIGNED is stale (Java's rule).
//   - Beyond Java: an UNASSIGNED from another worker than the one whose status is current is stale
//     whatever its generation. A worker paused (SIGSTOP, a long GC, a frozen VM) while its task moved
//     on stops the task when it comes back and stamps UNASSIGNED with the generation it rejoined in,
//     newer than the one the new owner reported RUNNING in; the new owner does not report again, so
//     Java's rule would show the task UNASSIGNED for as long as it runs (found by TestChaos).
//     The current status is the other worker's word about a task it ran later than this one did.
func staleUnassigned(st, cur Status) bool {
	if st.State != StateUnassigned || cur.State == StateUnassigned {
		return false
	}
	if cur.WorkerID != st.WorkerID {
		return true
	}
	return cur.State == StateRunning && st.Generation <= cur.Generation
}

func (s *StatusStore) applyTopic(rest string, value []byte) error {
	topic, connector, ok := strings.Cut(rest, topicStatusSeparator)
	if !ok || topic == "" || connector == "" {
		return errors.New("topic status key is not status-topic-<topic>:connector-<connector>")
	}
	if value == nil {
		delete(s.topics[connector], topic)
		if len(s.topics[connector]) == 0 {
			delete(s.topics, connector)
		}
		return nil
	}
	obj, err := decodeObject(value)
	if err != nil || obj == nil {
		return fmt.Errorf("topic status: %w", orNull(err))
	}
	inner, ok := obj["topic"].(map[string]any)
	if !ok {
		return fmt.Errorf(`topic status: field "topic" is %s, want an object`, jsonKind(obj["topic"]))
	}
	task, err1 := intField(inner, "task")
	ts, err2 := intField(inner, "discoverTimestamp")
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("topic status: %w", err)
	}
	name, _ := inner["name"].(string)
	conn, _ := inner["connector"].(string)
	if name == "" {
		name = topic
	}
	if conn == "" {
		conn = connector
	}
	if s.topics[connector] == nil {
		s.topics[connector] = make(map[string]TopicStatus)
	}
	s.topics[connector][topic] = TopicStatus{Topic: name, Connector: conn, Task: int32(task), Discovered: time.UnixMilli(ts)}
	return nil
}

func parseStatus(value []byte) (Status, error) {
	obj, err := decodeObject(value)
	if err != nil || obj == nil {
		return Status{}, fmt.Errorf("status: %w", orNull(err))
	}
	state, _ := obj["state"].(string)
	if !validState(state) {
		return Status{}, fmt.Errorf("status: state is %v, want one of UNASSIGNED, RUNNING, PAUSED, STOPPED, FAILED, RESTARTING", obj["state"])
	}
	worker, ok := obj["worker_id"].(string)
	if !ok {
		return Status{}, fmt.Errorf("status: worker_id is %s, want a string", jsonKind(obj["worker_id"]))
	}
	gen, err := intField(obj, "generation")
	if err != nil {
		return Status{}, fmt.Errorf("status: %w", err)
	}
	trace, _ := obj["trace"].(string)
	return Status{State: state, Trace: trace, WorkerID: worker, Generation: int32(gen)}, nil
}

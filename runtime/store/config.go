package store

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	rtconnect "github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

// TargetState is the state an operator asked a connector to be in. It is
// stored in the config topic; the absence of a record means TargetStarted.
type TargetState string

// The target states. TargetStopped (KIP-875) also shuts down the tasks and
// clears their configs; workers older than Kafka 3.5 do not know it, so it
// is written to the legacy "state" field as PAUSED.
const (
	TargetStarted TargetState = "STARTED"
	TargetPaused  TargetState = "PAUSED"
	TargetStopped TargetState = "STOPPED"
)

// Valid reports whether s is one of the three target states.
func (s TargetState) Valid() bool {
	return s == TargetStarted || s == TargetPaused || s == TargetStopped
}

// RestartRequest asks the owners of a connector (and optionally its tasks)
// to restart them (KIP-745). It travels through the config topic and is
// not part of the snapshot: it is only delivered as a Change.
type RestartRequest struct {
	Connector    string
	IncludeTasks bool
	OnlyFailed   bool
}

// SessionKey is the key the leader distributes for signing internal REST
// requests (KIP-507).
type SessionKey struct {
	Key       []byte // the raw secret
	Algorithm string // a javax.crypto name, such as "HmacSHA256"
	Created   time.Time
}

// Config topic record key prefixes, from KafkaConfigBackingStore.
const (
	targetStateKeyPrefix = "target-state-"
	connectorKeyPrefix   = "connector-"
	taskKeyPrefix        = "task-"
	commitKeyPrefix      = "commit-"
	restartKeyPrefix     = "restart-connector-"
	taskCountKeyPrefix   = "tasks-fencing-"
	sessionKeyKey        = "session-key"
	loggerLevelKeyPrefix = "logger-cluster-"
)

// ConfigSnapshot is a consistent, deep-copied view of the config topic.
type ConfigSnapshot struct {
	// Offset is the offset of the last record read plus one, or -1 if
	// the topic was empty. Workers compare it with the leader's config
	// offset in the group protocol.
	Offset int64

	// Connectors maps each connector to its (raw, unresolved) config.
	Connectors map[string]map[string]string

	// TargetStates holds the target state of every connector in
	// Connectors; TargetStarted where no record says otherwise.
	TargetStates map[string]TargetState

	// Tasks holds the committed task configs of each connector, indexed
	// by task number. A connector whose task configs were never
	// committed, or are inconsistent, has no entry; a stopped connector
	// has an empty one.
	Tasks map[string][]map[string]string

	// Inconsistent holds connectors whose last task commit named tasks
	// the log no longer has (compaction or a crash lost some). The
	// leader must regenerate their task configs.
	Inconsistent map[string]struct{}

	// TaskCountRecords holds the task counts of the tasks-fencing-
	// records (KIP-618) written by exactly-once leaders.
	TaskCountRecords map[string]int

	// PendingFencing holds the connectors whose last task commit came
	// after their last tasks-fencing record: with exactly-once support,
	// their tasks may not start until the leader has fenced the previous
	// generation's producers and recorded the new task count, as Kafka's
	// ClusterConfigState.pendingFencing.
	PendingFencing map[string]struct{}

	// SessionKey is the latest session key, or nil.
	SessionKey *SessionKey

	// LoggerLevels maps logger namespaces to the levels set cluster-wide
	// through the admin API (KIP-976).
	LoggerLevels map[string]string

	// Skipped lists, by offset, the records that could not be read and
	// were left out of the state above, each until a newer record for its
	// key replaces it.
	Skipped []SkippedRecord
}

// SkippedRecord is a config topic record that could not be read.
type SkippedRecord struct {
	Offset int64
	Key    string
	// Connector is the connector the record is about, "" if none. A
	// connector whose config record was skipped is not in the snapshot,
	// but deleting it (RemoveConnector) still clears the record.
	Connector string
	Reason    string // why it cannot be read
}

// String describes the record for an operator, e.g.
// `offset 7, key "connector-orders": config of connector "orders": no "properties" field`.
func (r SkippedRecord) String() string {
	return fmt.Sprintf("offset %d, key %s: %s", r.Offset, shortKey([]byte(r.Key)), r.Reason)
}

// SkippedConnector reports whether a record about the connector was skipped.
func (s ConfigSnapshot) SkippedConnector(name string) bool {
	return slices.ContainsFunc(s.Skipped, func(r SkippedRecord) bool { return r.Connector == name })
}

// TargetState returns the target state of a connector, TargetStarted if the
// snapshot has none.
func (s ConfigSnapshot) TargetState(connector string) TargetState {
	if ts, ok := s.TargetStates[connector]; ok {
		return ts
	}
	return TargetStarted
}

// ConnectorNames returns the configured connectors, sorted.
func (s ConfigSnapshot) ConnectorNames() []string {
	return slices.Sorted(maps.Keys(s.Connectors))
}

// ChangeKind says what a Change is about.
type ChangeKind uint8

// Kinds of config topic changes.
const (
	ConnectorConfigChanged ChangeKind = iota + 1 // a connector config was written
	ConnectorRemoved                             // a connector config was tombstoned
	TargetStateChanged                           // a target state was written
	TaskConfigsChanged                           // a task commit was applied (or found inconsistent)
	RestartRequested                             // a restart request was written
	SessionKeyChanged                            // a new session key was written
	LoggerLevelChanged                           // a cluster-wide logger level was written
	TaskCountRecorded                            // a tasks-fencing record was written (KIP-618)
)

func (k ChangeKind) String() string {
	switch k {
	case ConnectorConfigChanged:
		return "connector-config"
	case ConnectorRemoved:
		return "connector-removed"
	case TargetStateChanged:
		return "target-state"
	case TaskConfigsChanged:
		return "task-configs"
	case RestartRequested:
		return "restart-request"
	case SessionKeyChanged:
		return "session-key"
	case LoggerLevelChanged:
		return "logger-level"
	case TaskCountRecorded:
		return "task-count"
	default:
		return "ChangeKind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Change describes one record read from the config topic after Start.
type Change struct {
	Kind      ChangeKind
	Connector string // empty for SessionKeyChanged and LoggerLevelChanged

	// Tasks are the task numbers a TaskConfigsChanged commit applied;
	// empty if the commit found the connector inconsistent.
	Tasks []int

	// Restart is the request of a RestartRequested change.
	Restart RestartRequest

	// Namespace and Level are set for LoggerLevelChanged.
	Namespace, Level string
}

// ConfigStore is the config topic: connector configs, target states, task
// configs, restart requests and session keys, read and written exactly as
// Kafka Connect's KafkaConfigBackingStore does.
//
// A herder learns about changes in two steps. After Start, every record
// read is appended to a queue and the herder is woken, either through the
// Updates channel or an OnChange callback (use whichever fits its loop).
// The herder then drains the queue with Changes, which names the connector
// and what happened to it, and reads the state itself with Snapshot.
// Wake-ups are coalesced; the queue is not, so no restart request is lost.
// Records read during Start are not queued (the snapshot already holds
// them), matching Java, which only notifies its listener once started.
type ConfigStore struct {
	log    recordLog
	logger *slog.Logger

	updates chan struct{}

	mu           sync.Mutex
	started      bool
	offset       int64
	connectors   map[string]map[string]string
	targets      map[string]TargetState
	tasks        map[string][]map[string]string
	deferred     map[string]map[int]map[string]string
	inconsistent map[string]struct{}
	taskCounts   map[string]int
	pending      map[string]struct{} // PendingFencing
	sessionKey   *SessionKey
	loggerLevels map[string]string
	skipped      map[string]SkippedRecord // by key
	changes      []Change
	onChange     []func()
}

// NewConfigStore returns a config store over topic, which is always created
// and checked as a single-partition topic. It does no I/O until Start.
func NewConfigStore(o Options, topic TopicSpec) *ConfigStore {
	topic.SinglePartition = true
	topic.Partitions = 1
	s := newConfigStore(o, topic.Name)
	s.log = NewLog(o.logConfig(topic, "configs", s.apply))
	return s
}

// NewMemoryConfigStore returns a config store kept in memory only, for a standalone worker: the
// same records and rules as the config topic, without Kafka.
func NewMemoryConfigStore(o Options) *ConfigStore {
	s := newConfigStore(o, "memory")
	s.log = newMemoryLog("connect-configs", s.apply)
	return s
}

func newConfigStore(o Options, topic string) *ConfigStore {
	return &ConfigStore{
		logger:       o.logger().With("topic", topic),
		updates:      make(chan struct{}, 1),
		offset:       -1,
		connectors:   make(map[string]map[string]string),
		targets:      make(map[string]TargetState),
		tasks:        make(map[string][]map[string]string),
		deferred:     make(map[string]map[int]map[string]string),
		inconsistent: make(map[string]struct{}),
		taskCounts:   make(map[string]int),
		pending:      make(map[string]struct{}),
		loggerLevels: make(map[string]string),
		skipped:      make(map[string]SkippedRecord),
	}
}

// Start creates or checks the topic and reads it to the end.
func (s *ConfigStore) Start(ctx context.Context) error {
	if err := s.log.Start(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	return nil
}

// Close stops the store.
func (s *ConfigStore) Close() { s.log.Close() }

// ReadToEnd waits until everything written to the topic so far, by any
// worker, is reflected in Snapshot.
func (s *ConfigStore) ReadToEnd(ctx context.Context) error { return s.log.ReadToEnd(ctx) }

// Updates returns a channel that receives a value whenever Changes has
// something new. Signals are coalesced: one receive may stand for many
// changes.
func (s *ConfigStore) Updates() <-chan struct{} { return s.updates }

// OnChange registers fn to be called whenever Changes has something new.
// It runs on the goroutine that reads the topic, with the store locked, so
// it must return quickly and must not call the store: signal a channel or
// similar and do the work elsewhere.
func (s *ConfigStore) OnChange(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChange = append(s.onChange, fn)
}

// Changes returns, and forgets, the changes read since the last call, in
// the order they were read.
func (s *ConfigStore) Changes() []Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.changes
	s.changes = nil
	return c
}

// Snapshot returns a deep copy of the current state.
func (s *ConfigStore) Snapshot() ConfigSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := ConfigSnapshot{
		Offset:           s.offset,
		Connectors:       make(map[string]map[string]string, len(s.connectors)),
		TargetStates:     make(map[string]TargetState, len(s.connectors)),
		Tasks:            make(map[string][]map[string]string, len(s.tasks)),
		Inconsistent:     maps.Clone(s.inconsistent),
		TaskCountRecords: maps.Clone(s.taskCounts),
		PendingFencing:   maps.Clone(s.pending),
		LoggerLevels:     maps.Clone(s.loggerLevels),
	}
	for name, cfg := range s.connectors {
		snap.Connectors[name] = maps.Clone(cfg)
		snap.TargetStates[name] = TargetStarted
		if ts, ok := s.targets[name]; ok {
			snap.TargetStates[name] = ts
		}
		if tasks, ok := s.tasks[name]; ok {
			cp := make([]map[string]string, len(tasks))
			for i, t := range tasks {
				cp[i] = maps.Clone(t)
			}
			snap.Tasks[name] = cp
		}
	}
	for _, r := range s.skipped {
		snap.Skipped = append(snap.Skipped, r)
	}
	slices.SortFunc(snap.Skipped, func(a, b SkippedRecord) int { return cmp.Compare(a.Offset, b.Offset) })
	if s.sessionKey != nil {
		k := *s.sessionKey
		k.Key = slices.Clone(k.Key)
		snap.SessionKey = &k
	}
	return snap
}

// PutConnectorConfig writes a connector's config, creating or replacing it.
func (s *ConfigStore) PutConnectorConfig(ctx context.Context, name string, cfg map[string]string) error {
	if name == "" {
		return errors.New("writing connector config: empty connector name")
	}
	if err := s.leaderWrite(ctx, Record{[]byte(connectorKeyPrefix + name), connectorValue(cfg)}); err != nil {
		return fmt.Errorf("writing config of connector %q: %w", name, err)
	}
	return nil
}

// CreateConnector writes a new connector with an initial target state
// (KIP-980). The target state record goes first and the config right
// after it, in one batch, so no worker sees the connector without its
// state. An empty initial state writes only the config, leaving the
// connector STARTED.
func (s *ConfigStore) CreateConnector(ctx context.Context, name string, cfg map[string]string, initial TargetState) error {
	if name == "" {
		return errors.New("creating connector: empty connector name")
	}
	var recs []Record
	if initial != "" {
		if !initial.Valid() {
			return fmt.Errorf("creating connector %q: invalid initial target state %q, want STARTED, PAUSED or STOPPED", name, initial)
		}
		recs = append(recs, Record{[]byte(targetStateKeyPrefix + name), targetStateValue(initial)})
	}
	recs = append(recs, Record{[]byte(connectorKeyPrefix + name), connectorValue(cfg)})
	if err := s.leaderWrite(ctx, recs...); err != nil {
		return fmt.Errorf("creating connector %q: %w", name, err)
	}
	return nil
}

// PutTargetState writes a connector's target state. Any worker may do this
// (pause and resume are not forwarded to the leader).
func (s *ConfigStore) PutTargetState(ctx context.Context, name string, state TargetState) error {
	if !state.Valid() {
		return fmt.Errorf("writing target state of connector %q: invalid state %q, want STARTED, PAUSED or STOPPED", name, state)
	}
	if err := s.log.Write(ctx, Record{[]byte(targetStateKeyPrefix + name), targetStateValue(state)}); err != nil {
		return fmt.Errorf("writing target state %s of connector %q: %w", state, name, err)
	}
	return nil
}

// PutTaskConfigs replaces a connector's task configs with Kafka Connect's
// write protocol: read to the end, write task-<name>-0..N-1, read to the
// end, write commit-<name> with N, read to the end. Readers apply the task
// records only when the commit arrives, so they never see a partial set.
// An empty tasks slice commits zero tasks, as stopping a connector does.
func (s *ConfigStore) PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error {
	if name == "" {
		return errors.New("writing task configs: empty connector name")
	}
	if err := s.log.ReadToEnd(ctx); err != nil {
		return fmt.Errorf("writing task configs of connector %q: %w", name, err)
	}
	if len(tasks) > 0 {
		recs := make([]Record, len(tasks))
		for i, t := range tasks {
			recs[i] = Record{[]byte(taskKeyPrefix + name + "-" + strconv.Itoa(i)), connectorValue(t)}
		}
		if err := s.leaderWrite(ctx, recs...); err != nil {
			return fmt.Errorf("writing task configs of connector %q: %w", name, err)
		}
	}
	if err := s.leaderWrite(ctx, Record{[]byte(commitKeyPrefix + name), commitValue(len(tasks))}); err != nil {
		return fmt.Errorf("committing %d task configs of connector %q: %w", len(tasks), name, err)
	}
	return nil
}

// exclusiveWriter is a log whose leader writes can be transactional (Log; not the memory log).
type exclusiveWriter interface {
	WriteExclusive(ctx context.Context, recs ...Record) error
	ClaimWrites(ctx context.Context, transactionalID string) error
	ReleaseWrites()
}

// leaderWrite writes records only the leader writes: in a transaction once ClaimWrites was called.
func (s *ConfigStore) leaderWrite(ctx context.Context, recs ...Record) error {
	if w, ok := s.log.(exclusiveWriter); ok {
		return w.WriteExclusive(ctx, recs...)
	}
	return s.log.Write(ctx, recs...)
}

// ClaimWrites makes this worker's leader writes transactional with transactionalID (Kafka's
// connect-cluster-<group.id>), fencing the previous leader's writer. The memory store ignores it.
func (s *ConfigStore) ClaimWrites(ctx context.Context, transactionalID string) error {
	if w, ok := s.log.(exclusiveWriter); ok {
		return w.ClaimWrites(ctx, transactionalID)
	}
	return nil
}

// ReleaseWrites ends ClaimWrites (the worker is no longer the leader).
func (s *ConfigStore) ReleaseWrites() {
	if w, ok := s.log.(exclusiveWriter); ok {
		w.ReleaseWrites()
	}
}

// PutTaskCount writes the tasks-fencing-<name> record {"task-count":n}: the leader has fenced the
// producers of the connector's previous generation of tasks, whose new generation has n tasks
// (KIP-618).
func (s *ConfigStore) PutTaskCount(ctx context.Context, name string, n int) error {
	if name == "" {
		return errors.New("writing task count: empty connector name")
	}
	v := []byte(`{"task-count":` + strconv.Itoa(n) + `}`)
	if err := s.leaderWrite(ctx, Record{[]byte(taskCountKeyPrefix + name), v}); err != nil {
		return fmt.Errorf("writing task count record of connector %q: %w", name, err)
	}
	return nil
}

// RemoveConnector tombstones a connector's config and target state. Its
// task records stay in the log until compaction; readers drop them with the
// connector.
func (s *ConfigStore) RemoveConnector(ctx context.Context, name string) error {
	if name == "" {
		return errors.New("removing connector: empty connector name")
	}
	err := s.leaderWrite(ctx,
		Record{Key: []byte(connectorKeyPrefix + name)},
		Record{Key: []byte(targetStateKeyPrefix + name)},
	)
	if err != nil {
		return fmt.Errorf("removing connector %q: %w", name, err)
	}
	return nil
}

// PutRestartRequest writes a restart request for the connector's owners to
// act on.
func (s *ConfigStore) PutRestartRequest(ctx context.Context, req RestartRequest) error {
	if req.Connector == "" {
		return errors.New("writing restart request: empty connector name")
	}
	if err := s.leaderWrite(ctx, Record{[]byte(restartKeyPrefix + req.Connector), restartValue(req)}); err != nil {
		return fmt.Errorf("writing restart request for connector %q: %w", req.Connector, err)
	}
	return nil
}

// PutSessionKey writes a new session key.
func (s *ConfigStore) PutSessionKey(ctx context.Context, key SessionKey) error {
	if err := s.leaderWrite(ctx, Record{[]byte(sessionKeyKey), sessionKeyValue(key)}); err != nil {
		return fmt.Errorf("writing session key: %w", err)
	}
	return nil
}

// PutLoggerLevel writes a cluster-wide logger level for a namespace.
func (s *ConfigStore) PutLoggerLevel(ctx context.Context, namespace, level string) error {
	v := connect.AppendJSONString([]byte(`{"level":`), level)
	v = append(v, '}')
	if err := s.log.Write(ctx, Record{[]byte(loggerLevelKeyPrefix + namespace), v}); err != nil {
		return fmt.Errorf("writing logger level %s for %q: %w", level, namespace, err)
	}
	return nil
}

// Record values, byte for byte as JsonConverter writes the Java structs.

func connectorValue(props map[string]string) []byte {
	b := appendStringMap([]byte(`{"properties":`), props)
	return append(b, '}')
}

func targetStateValue(state TargetState) []byte {
	legacy := state
	if legacy == TargetStopped {
		legacy = TargetPaused
	}
	b := connect.AppendJSONString([]byte(`{"state":`), string(legacy))
	b = connect.AppendJSONString(append(b, `,"state.v2":`...), string(state))
	return append(b, '}')
}

func commitValue(n int) []byte {
	return []byte(`{"tasks":` + strconv.Itoa(n) + `}`)
}

func restartValue(r RestartRequest) []byte {
	return []byte(`{"include-tasks":` + strconv.FormatBool(r.IncludeTasks) +
		`,"only-failed":` + strconv.FormatBool(r.OnlyFailed) + `}`)
}

func sessionKeyValue(k SessionKey) []byte {
	b := connect.AppendJSONString([]byte(`{"key":`), base64.StdEncoding.EncodeToString(k.Key))
	b = connect.AppendJSONString(append(b, `,"algorithm":`...), k.Algorithm)
	b = strconv.AppendInt(append(b, `,"creation-timestamp":`...), k.Created.UnixMilli(), 10)
	return append(b, '}')
}

// apply is the log handler: it folds one config record into the state. A record that cannot be
// read is skipped, logged with its offset and kept in Skipped until a newer record for its key
// replaces it: one bad record (written by hand, by a broken client, or by an older worker that
// accepted a name nobody can use) must never stop the cluster from reading the rest.
func (s *ConfigStore) apply(r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offset = r.Offset + 1
	key := string(r.Key)
	delete(s.skipped, key) // a newer record for the key replaces the skipped one, as compaction will
	connector, err := s.applyRecord(key, r.Value, r.Offset)
	if err != nil {
		s.skipped[key] = SkippedRecord{Offset: r.Offset, Key: key, Connector: connector, Reason: err.Error()}
		s.logger.Error("skipping config record that cannot be read", "offset", r.Offset, "key", shortKey(r.Key), "err", err)
	}
}

// applyRecord applies one record and returns the connector it is about, if any.
func (s *ConfigStore) applyRecord(key string, value []byte, offset int64) (connector string, err error) {
	// named applies a record about a connector, once the name is one a worker can use.
	named := func(prefix string, apply func(name string, value []byte) error) (string, error) {
		name := strings.TrimPrefix(key, prefix)
		if i := strings.LastIndexByte(name, '-'); prefix == taskKeyPrefix && i >= 0 {
			name = name[:i] // task-<name>-<n>
		}
		if value != nil { // a tombstone removes whatever the name was
			if err := readableName(name); err != nil {
				return name, err
			}
		}
		return name, apply(strings.TrimPrefix(key, prefix), value)
	}
	switch {
	case strings.HasPrefix(key, targetStateKeyPrefix):
		return named(targetStateKeyPrefix, s.applyTargetState)
	case strings.HasPrefix(key, connectorKeyPrefix):
		return named(connectorKeyPrefix, s.applyConnector)
	case strings.HasPrefix(key, taskKeyPrefix):
		return named(taskKeyPrefix, s.applyTask)
	case strings.HasPrefix(key, commitKeyPrefix):
		return named(commitKeyPrefix, s.applyCommit)
	case strings.HasPrefix(key, restartKeyPrefix):
		return named(restartKeyPrefix, s.applyRestart)
	case strings.HasPrefix(key, taskCountKeyPrefix):
		return named(taskCountKeyPrefix, s.applyTaskCount)
	case key == sessionKeyKey:
		return "", s.applySessionKey(value)
	case strings.HasPrefix(key, loggerLevelKeyPrefix):
		return "", s.applyLoggerLevel(strings.TrimPrefix(key, loggerLevelKeyPrefix), value)
	default:
		// Kafka Connect ignores keys it does not know, which newer versions may add.
		s.logger.Warn("discarding config record with unknown key", "key", shortKey([]byte(key)), "offset", offset)
		return "", nil
	}
}

// readableName refuses a connector name no worker could have created: an empty one, or one too
// long for the Kafka protocol strings it is written into (the group's assignments among them).
func readableName(name string) error {
	if name == "" {
		return errors.New("the connector name is empty")
	}
	return rtconnect.CheckConnectorNameLength(name)
}

// notify queues a change, if the initial read is over, and signals Updates.
func (s *ConfigStore) notify(c Change) {
	if !s.started {
		return
	}
	s.changes = append(s.changes, c)
	select {
	case s.updates <- struct{}{}:
	default:
	}
	for _, fn := range s.onChange {
		fn()
	}
}

func (s *ConfigStore) applyTargetState(name string, value []byte) error {
	if value == nil {
		// Java sends no notification for a removed target state.
		delete(s.targets, name)
		return nil
	}
	obj, err := decodeObject(value)
	if err != nil || obj == nil {
		return fmt.Errorf("target state: %w", orNull(err))
	}
	v, ok := obj["state.v2"]
	if !ok || v == nil {
		v = obj["state"]
	}
	str, _ := v.(string)
	state := TargetState(str)
	if !state.Valid() {
		return fmt.Errorf("target state of connector %q is %s, want STARTED, PAUSED or STOPPED", name, jsonKind(v))
	}
	s.targets[name] = state
	s.notify(Change{Kind: TargetStateChanged, Connector: name})
	return nil
}

func (s *ConfigStore) applyConnector(name string, value []byte) error {
	if value == nil {
		delete(s.connectors, name)
		delete(s.tasks, name)
		delete(s.deferred, name)
		delete(s.inconsistent, name)
		delete(s.pending, name)
		// Deleting a connector also clears the records about it that could not be read.
		maps.DeleteFunc(s.skipped, func(_ string, r SkippedRecord) bool { return r.Connector == name })
		s.notify(Change{Kind: ConnectorRemoved, Connector: name})
		return nil
	}
	props, err := propertiesOf(value)
	if err != nil {
		return fmt.Errorf("config of connector %q: %w", name, err)
	}
	s.connectors[name] = props
	s.notify(Change{Kind: ConnectorConfigChanged, Connector: name})
	return nil
}

// applyTask buffers a task config until its connector's commit arrives.
// The key is split on its last '-', so connector names may contain '-'.
func (s *ConfigStore) applyTask(rest string, value []byte) error {
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return errors.New("task key has no task number")
	}
	name := rest[:i]
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 0 {
		return fmt.Errorf("task key has task number %q, want a non-negative integer", rest[i+1:])
	}
	if value == nil {
		return fmt.Errorf("task %d of connector %q is unexpectedly null", n, name)
	}
	props, err := propertiesOf(value)
	if err != nil {
		return fmt.Errorf("config of task %d of connector %q: %w", n, name, err)
	}
	if s.deferred[name] == nil {
		s.deferred[name] = make(map[int]map[string]string)
	}
	s.deferred[name][n] = props
	return nil
}

// applyCommit applies the buffered task configs of a connector if they
// hold every task 0..N-1; otherwise it marks the connector inconsistent.
// The buffer is cleared either way: after a commit, only a complete fresh
// set of task records may be applied.
func (s *ConfigStore) applyCommit(name string, value []byte) error {
	if value == nil {
		return fmt.Errorf("task commit of connector %q is unexpectedly null", name)
	}
	obj, err := decodeObject(value)
	if err != nil || obj == nil {
		return fmt.Errorf("task commit of connector %q: %w", name, orNull(err))
	}
	n64, err := intField(obj, "tasks")
	if err != nil || n64 < 0 {
		return fmt.Errorf("task commit of connector %q: %w", name, orValue(err, "negative task count"))
	}
	n := int(n64)
	deferred := s.deferred[name]
	delete(s.deferred, name)
	if _, ok := s.connectors[name]; !ok {
		s.logger.Debug("ignoring task commit for a connector without config", "connector", name, "tasks", n)
		return nil
	}
	// The first task missing from the buffer, if any. The search never goes beyond one more than
	// the tasks buffered, so a corrupt count costs nothing.
	missing := -1
	for i := range min(n, len(deferred)+1) {
		if _, ok := deferred[i]; !ok {
			missing = i
			break
		}
	}
	if missing >= 0 {
		s.logger.Info("task configs of connector are incomplete, probably because of compaction; marking it inconsistent",
			"connector", name, "tasks", n, "missing_task", missing)
		delete(s.tasks, name)
		s.inconsistent[name] = struct{}{}
		s.notify(Change{Kind: TaskConfigsChanged, Connector: name})
		return nil
	}
	tasks := make([]map[string]string, n)
	ids := make([]int, n)
	for i := range n {
		tasks[i], ids[i] = deferred[i], i
	}
	s.tasks[name] = tasks
	delete(s.inconsistent, name)
	s.pending[name] = struct{}{}
	s.notify(Change{Kind: TaskConfigsChanged, Connector: name, Tasks: ids})
	return nil
}

func (s *ConfigStore) applyRestart(name string, value []byte) error {
	if value == nil {
		return fmt.Errorf("restart request for connector %q is unexpectedly null", name)
	}
	obj, err := decodeObject(value)
	if err != nil || obj == nil {
		return fmt.Errorf("restart request for connector %q: %w", name, orNull(err))
	}
	// Java falls back to false for a missing or non-boolean flag.
	includeTasks, _ := obj["include-tasks"].(bool)
	onlyFailed, _ := obj["only-failed"].(bool)
	s.notify(Change{Kind: RestartRequested, Connector: name, Restart: RestartRequest{
		Connector: name, IncludeTasks: includeTasks, OnlyFailed: onlyFailed,
	}})
	return nil
}

func (s *ConfigStore) applyTaskCount(name string, value []byte) error {
	if value == nil {
		return fmt.Errorf("task count record of connector %q is unexpectedly null", name)
	}
	obj, err := decodeObject(value)
	if err != nil || obj == nil {
		return fmt.Errorf("task count record of connector %q: %w", name, orNull(err))
	}
	n, err := intField(obj, "task-count")
	if err != nil {
		return fmt.Errorf("task count record of connector %q: %w", name, err)
	}
	s.taskCounts[name] = int(n)
	delete(s.pending, name)
	s.notify(Change{Kind: TaskCountRecorded, Connector: name})
	return nil
}

func (s *ConfigStore) applySessionKey(value []byte) error {
	if value == nil {
		return errors.New("session key is unexpectedly null")
	}
	obj, err := decodeObject(value)
	if err != nil || obj == nil {
		return fmt.Errorf("session key: %w", orNull(err))
	}
	enc, ok1 := obj["key"].(string)
	alg, ok2 := obj["algorithm"].(string)
	ts, err := intField(obj, "creation-timestamp")
	if !ok1 || !ok2 || err != nil {
		return errors.New(`session key: want string fields "key" and "algorithm" and an integer "creation-timestamp"`)
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return fmt.Errorf("session key: key is not base64: %w", err)
	}
	s.sessionKey = &SessionKey{Key: raw, Algorithm: alg, Created: time.UnixMilli(ts)}
	s.notify(Change{Kind: SessionKeyChanged})
	return nil
}

func (s *ConfigStore) applyLoggerLevel(namespace string, value []byte) error {
	if value == nil {
		return fmt.Errorf("logger level for %q is unexpectedly null", namespace)
	}
	obj, err := decodeObject(value)
	if err != nil || obj == nil {
		return fmt.Errorf("logger level for %q: %w", namespace, orNull(err))
	}
	level, ok := obj["level"].(string)
	if !ok {
		return fmt.Errorf("logger level for %q: level is %s, want a string", namespace, jsonKind(obj["level"]))
	}
	s.loggerLevels[namespace] = level
	s.notify(Change{Kind: LoggerLevelChanged, Namespace: namespace, Level: level})
	return nil
}

// propertiesOf reads the {"properties":{...}} value of connector and task
// records.
func propertiesOf(value []byte) (map[string]string, error) {
	obj, err := decodeObject(value)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("value is JSON null")
	}
	props, ok := obj["properties"]
	if !ok {
		return nil, errors.New(`no "properties" field`)
	}
	m, err := stringMap(props)
	if err != nil {
		return nil, fmt.Errorf(`"properties": %w`, err)
	}
	return m, nil
}

// orNull describes the outcome of decodeObject: its error, or, if the
// value was JSON null, that.
func orNull(err error) error {
	return orValue(err, "value is JSON null")
}

func orValue(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

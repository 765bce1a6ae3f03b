package metrics

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Metric names. They are the Prometheus form of Kafka Connect's JMX names (doc.go has the mapping).
const (
	NameConnectorCount = "wasmconnect_connector_count"
	NameTaskCount      = "wasmconnect_task_count"

	NameConnectorState         = "wasmconnect_connector_state"
	NameConnectorGuestCallSecs = "wasmconnect_connector_guest_call_duration_seconds"

	NameTaskState             = "wasmconnect_task_state"
	NameSourceRecordsPolled   = "wasmconnect_source_records_polled_total"
	NameSourceRecordsWritten  = "wasmconnect_source_records_written_total"
	NameSinkRecordsRead       = "wasmconnect_sink_records_read_total"
	NameSinkRecordsPut        = "wasmconnect_sink_records_put_total"
	NameOffsetCommits         = "wasmconnect_offset_commits_total"
	NameTaskGuestCallDuration = "wasmconnect_guest_call_duration_seconds"
)

// CommitResult is the result label of wasmconnect_offset_commits_total.
type CommitResult int

const (
	CommitSuccess CommitResult = iota // offsets were committed
	CommitFailure                     // the commit failed (guest COMMIT/FLUSH error, producer or broker error)
	CommitSkipped                     // nothing to commit, or a commit was skipped because one is in flight
	numCommitResults
)

var commitResultNames = [numCommitResults]string{"success", "failure", "skipped"}

// String returns the label value.
func (r CommitResult) String() string {
	if r < 0 || r >= numCommitResults {
		return "unknown"
	}
	return commitResultNames[r]
}

// taskStates and connectorStates are the label values of the state gauges, in a fixed order. Tasks have
// no STOPPED state: a stopped connector has no tasks.
var (
	taskStates = []connect.State{
		connect.StateUnassigned, connect.StateRunning, connect.StatePaused,
		connect.StateFailed, connect.StateRestarting,
	}
	connectorStates = []connect.State{
		connect.StateUnassigned, connect.StateRunning, connect.StatePaused,
		connect.StateStopped, connect.StateFailed, connect.StateRestarting,
	}
)

// GuestCallBuckets are the upper bounds, in seconds, of the guest call duration histograms: 50 µs to 30 s.
var GuestCallBuckets = []float64{
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
}

// maxOp bounds the wire ops a histogram array holds; ops outside [1, maxOp) are recorded as "unknown".
const maxOp = 16

// Registry owns one worker's metrics: a VictoriaMetrics Set, registered for the process-wide
// metrics.WritePrometheus unless Unregistered is given. Create one per worker; Close it when the
// worker stops.
type Registry struct {
	set    *vm.Set
	labels string // constant labels, rendered `k="v",` (with the trailing comma), or ""
	global bool

	mu         sync.Mutex
	tasks      map[connect.TaskID]*Task
	connectors map[string]*Connector
	nets       map[string]*Net
	nTasks     atomic.Int64
	nConns     atomic.Int64
	closed     bool
}

// Option configures a Registry.
type Option func(*Registry)

// Label adds a constant label to every series of the registry, e.g. Label("worker_id", "10.0.0.12:8083")
// when several workers share one process and one /metrics. It must be a valid Prometheus label name.
func Label(name, value string) Option {
	return func(r *Registry) { r.labels += name + `="` + escapeLabel(value) + `",` }
}

// Unregistered keeps the registry out of the process-wide metrics.WritePrometheus; only
// Registry.WritePrometheus shows it. For tests.
func Unregistered() Option { return func(r *Registry) { r.global = false } }

// New creates a worker's registry with the worker-level gauges wasmconnect_connector_count and
// wasmconnect_task_count, which count the live Connector and Task handles.
func New(opts ...Option) *Registry {
	r := &Registry{
		set:        vm.NewSet(),
		global:     true,
		tasks:      make(map[connect.TaskID]*Task),
		connectors: make(map[string]*Connector),
	}
	for _, o := range opts {
		o(r)
	}
	r.set.NewGauge(r.seriesName(NameConnectorCount, ""), func() float64 { return float64(r.nConns.Load()) })
	r.set.NewGauge(r.seriesName(NameTaskCount, ""), func() float64 { return float64(r.nTasks.Load()) })
	if r.global {
		vm.RegisterSet(r.set)
	}
	return r
}

// Set returns the underlying VictoriaMetrics set, to register further worker metrics in it.
func (r *Registry) Set() *vm.Set { return r.set }

// WritePrometheus writes this registry's series only (no process metrics) in Prometheus text format.
func (r *Registry) WritePrometheus(w io.Writer) { r.set.WritePrometheus(w) }

// Close unregisters the registry from the process-wide output and drops all its series. Handles
// obtained from it keep working but are no longer exported.
func (r *Registry) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	tasks, conns := r.tasks, r.connectors
	r.tasks, r.connectors = map[connect.TaskID]*Task{}, map[string]*Connector{}
	r.mu.Unlock()
	for _, t := range tasks {
		t.close()
	}
	for _, c := range conns {
		c.close()
	}
	vm.UnregisterSet(r.set, true)
}

// seriesName renders name{<const labels>,<labels>}. labels is `k="v",...` without a trailing comma, or "".
func (r *Registry) seriesName(name, labels string) string {
	all := r.labels + labels
	all = strings.TrimSuffix(all, ",")
	if all == "" {
		return name
	}
	return name + "{" + all + "}"
}

// escapeLabel escapes a label value for the Prometheus text format.
func escapeLabel(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return v
	}
	var b strings.Builder
	for _, c := range v {
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// opLabel is the op label value of a guest call: the ABI name in lower case ("poll", "task_configs").
func opLabel(op wire.Op) string { return strings.ToLower(op.String()) }

// series is the shared part of Task and Connector: the names it registered, so Unregister can drop them.
type series struct {
	r      *Registry
	labels string // `connector="x",task="0"`

	mu     sync.Mutex
	names  []string
	closed bool
	calls  [maxOp]atomic.Pointer[vm.PrometheusHistogram]
	call   string // histogram metric name
}

func (s *series) counter(name, extra string) *vm.Counter {
	n := s.r.seriesName(name, s.labels+extra)
	s.names = append(s.names, n)
	return s.r.set.GetOrCreateCounter(n)
}

func (s *series) gauge(name, extra string, f func() float64) {
	n := s.r.seriesName(name, s.labels+extra)
	s.names = append(s.names, n)
	s.r.set.GetOrCreateGauge(n, f)
}

// observe records one guest call. The op's histogram is created on first use, so only the ops a task
// actually calls show up; afterwards it costs one atomic load and the histogram's update.
func (s *series) observe(op wire.Op, d time.Duration) {
	i := int(op)
	if i <= 0 || i >= maxOp {
		i = 0
	}
	h := s.calls[i].Load()
	if h == nil {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		if h = s.calls[i].Load(); h == nil {
			label := "unknown"
			if i != 0 {
				label = opLabel(op)
			}
			n := s.r.seriesName(s.call, s.labels+`,op="`+label+`"`)
			h = s.r.set.GetOrCreatePrometheusHistogramExt(n, GuestCallBuckets)
			s.names = append(s.names, n)
			s.calls[i].Store(h)
		}
		s.mu.Unlock()
	}
	h.Update(d.Seconds())
}

func (s *series) unregister() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.closed = true
	for _, n := range s.names {
		s.r.set.UnregisterMetric(n)
	}
	s.names = nil
	return true
}

// Task holds one task's pre-resolved series. Its methods are safe for concurrent use, cheap enough for
// the task loop (an atomic add each), and no-ops on a nil *Task, so code can run without metrics.
type Task struct {
	id    connect.TaskID
	state atomic.Int32 // index into taskStates, -1 for none
	s     series

	polled, written, read, put *vm.Counter
	commits                    [numCommitResults]*vm.Counter
}

// Task returns the handle of a task running on this worker, creating its series: the state gauges,
// the offset commit counters, and for a source task (typ "source") the polled/written counters, for a
// sink the read/put counters (both sets for any other type). The state starts as UNASSIGNED. Asking
// again for a live task returns the same handle. Call Unregister when the task stops on this worker.
func (r *Registry) Task(id connect.TaskID, typ connect.ConnectorType) *Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.tasks[id]; t != nil {
		return t
	}
	t := &Task{id: id}
	t.s = series{
		r:      r,
		labels: `connector="` + escapeLabel(id.Connector) + `",task="` + strconv.Itoa(id.Task) + `"`,
		call:   NameTaskGuestCallDuration,
	}
	t.state.Store(0)
	for i, st := range taskStates {
		t.s.gauge(NameTaskState, `,state="`+string(st)+`"`, func() float64 {
			if int(t.state.Load()) == i {
				return 1
			}
			return 0
		})
	}
	if typ != connect.TypeSink {
		t.polled = t.s.counter(NameSourceRecordsPolled, "")
		t.written = t.s.counter(NameSourceRecordsWritten, "")
	}
	if typ != connect.TypeSource {
		t.read = t.s.counter(NameSinkRecordsRead, "")
		t.put = t.s.counter(NameSinkRecordsPut, "")
	}
	for i := range t.commits {
		t.commits[i] = t.s.counter(NameOffsetCommits, `,result="`+commitResultNames[i]+`"`)
	}
	if r.closed {
		// A closed registry exports nothing; hand out a working handle that is not counted.
		t.s.unregister()
		return t
	}
	r.tasks[id] = t
	r.nTasks.Add(1)
	return t
}

// ID returns the task's id.
func (t *Task) ID() connect.TaskID {
	if t == nil {
		return connect.TaskID{}
	}
	return t.id
}

// SetState sets the task state gauge: wasmconnect_task_state{state=<st>} is 1, the others 0. A state a
// task cannot have (STOPPED, or unknown) sets them all to 0.
func (t *Task) SetState(st connect.State) {
	if t == nil {
		return
	}
	t.state.Store(stateIndex(taskStates, st))
}

// SourceRecordsPolled counts records returned by the guest's POLL (Kafka: source-record-poll-total).
func (t *Task) SourceRecordsPolled(n int) {
	if t != nil && t.polled != nil {
		t.polled.Add(n)
	}
}

// SourceRecordsWritten counts records acknowledged by Kafka (Kafka: source-record-write-total).
func (t *Task) SourceRecordsWritten(n int) {
	if t != nil && t.written != nil {
		t.written.Add(n)
	}
}

// SinkRecordsRead counts records consumed from Kafka (Kafka: sink-record-read-total).
func (t *Task) SinkRecordsRead(n int) {
	if t != nil && t.read != nil {
		t.read.Add(n)
	}
}

// SinkRecordsPut counts records passed to the guest's PUT after transforms (Kafka: sink-record-send-total).
func (t *Task) SinkRecordsPut(n int) {
	if t != nil && t.put != nil {
		t.put.Add(n)
	}
}

// OffsetCommit counts one offset commit attempt by result.
func (t *Task) OffsetCommit(res CommitResult) {
	if t == nil || res < 0 || res >= numCommitResults {
		return
	}
	t.commits[res].Inc()
}

// GuestCall records the duration of one wc_call into the guest: use it as
// `defer t.GuestCall(wire.OpPoll, time.Now())` or call it with the start time after the call.
func (t *Task) GuestCall(op wire.Op, start time.Time) {
	if t == nil {
		return
	}
	t.s.observe(op, time.Since(start))
}

// GuestCallDuration records a guest call whose duration is already known.
func (t *Task) GuestCallDuration(op wire.Op, d time.Duration) {
	if t == nil {
		return
	}
	t.s.observe(op, d)
}

// Unregister drops all of the task's series and removes it from wasmconnect_task_count. Calls on the
// handle afterwards are harmless and not exported. Unregister is idempotent.
func (t *Task) Unregister() {
	if t == nil {
		return
	}
	r := t.s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	// Drop the series under r.mu, so a Task call for the same id cannot pick them up half-removed.
	if r.tasks[t.id] == t {
		delete(r.tasks, t.id)
		r.nTasks.Add(-1)
	}
	t.s.unregister()
}

func (t *Task) close() {
	if t.s.unregister() {
		t.s.r.nTasks.Add(-1)
	}
}

// Connector holds one connector instance's series (the connector, not its tasks). Nil-safe like Task.
type Connector struct {
	name  string
	state atomic.Int32
	s     series
}

// Connector returns the handle of a connector instance running on this worker, creating its state
// gauges (state UNASSIGNED). Asking again for a live connector returns the same handle. Call Unregister
// when the connector stops on this worker.
func (r *Registry) Connector(name string) *Connector {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.connectors[name]; c != nil {
		return c
	}
	c := &Connector{name: name}
	c.s = series{r: r, labels: `connector="` + escapeLabel(name) + `"`, call: NameConnectorGuestCallSecs}
	for i, st := range connectorStates {
		c.s.gauge(NameConnectorState, `,state="`+string(st)+`"`, func() float64 {
			if int(c.state.Load()) == i {
				return 1
			}
			return 0
		})
	}
	if r.closed {
		c.s.unregister()
		return c
	}
	r.connectors[name] = c
	r.nConns.Add(1)
	return c
}

// SetState sets the connector state gauge.
func (c *Connector) SetState(st connect.State) {
	if c == nil {
		return
	}
	c.state.Store(stateIndex(connectorStates, st))
}

// GuestCall records the duration of a connector-level wc_call (OPEN, VALIDATE, TASK_CONFIGS, CLOSE).
func (c *Connector) GuestCall(op wire.Op, start time.Time) {
	if c == nil {
		return
	}
	c.s.observe(op, time.Since(start))
}

// Unregister drops the connector's series and removes it from wasmconnect_connector_count. Idempotent.
func (c *Connector) Unregister() {
	if c == nil {
		return
	}
	r := c.s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.connectors[c.name] == c {
		delete(r.connectors, c.name)
		r.nConns.Add(-1)
	}
	c.s.unregister()
}

func (c *Connector) close() {
	if c.s.unregister() {
		c.s.r.nConns.Add(-1)
	}
}

func stateIndex(states []connect.State, st connect.State) int32 {
	for i, s := range states {
		if s == st {
			return int32(i)
		}
	}
	return -1
}

package metrics

import (
	"io"
	"strings"
	"sync"
	"sync/atomic"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Kafka Connect's metric groups (ConnectMetricsRegistry), as the JMX exporter names them without
// rewrite rules: kafka_connect_<group>_<attribute>, dashes turned into underscores (doc.go).
const (
	groupWorker    = "connect-worker-metrics"
	groupRebalance = "connect-worker-rebalance-metrics"
	groupConnector = "connector-metrics"
	groupTask      = "connector-task-metrics"
	groupSource    = "source-task-metrics"
	groupSink      = "sink-task-metrics"
	groupErrors    = "task-error-metrics"
)

// Naming is how a Kafka Connect metric's group and attribute become a Prometheus name: the JMX
// exporter's way without rewrite rules, or Strimzi's example rules.
type Naming int

const (
	// JMXNames: kafka_connect_<group>_<attribute>, as the JMX exporter names them without rules and
	// Aiven documents them (kafka_connect_connect_worker_metrics_connector_count).
	JMXNames Naming = iota
	// StrimziNames: as Strimzi's kafka-connect-metrics.yaml rules name them, the group without
	// "-metrics" and the worker groups without "connect-" (kafka_connect_worker_connector_count,
	// kafka_connect_source_task_source_record_poll_total, kafka_connect_connector_status).
	StrimziNames
)

// Name returns the Prometheus name of attribute of group.
func (n Naming) Name(group, attribute string) string {
	if n == StrimziNames {
		group = strings.TrimPrefix(strings.TrimSuffix(group, "-metrics"), "connect-")
	}
	return "kafka_connect_" + strings.ReplaceAll(group, "-", "_") + "_" + strings.ReplaceAll(attribute, "-", "_")
}

// Kafka returns the Prometheus name of a Kafka Connect metric under JMXNames: Kafka("source-task-metrics",
// "source-record-poll-total") is kafka_connect_source_task_metrics_source_record_poll_total.
func Kafka(group, attribute string) string { return JMXNames.Name(group, attribute) }

// CommitResult is the outcome of one offset commit attempt.
type CommitResult int

const (
	CommitSuccess CommitResult = iota // offsets were committed
	CommitFailure                     // the commit failed (guest COMMIT/FLUSH error, producer or broker error)
	CommitSkipped                     // nothing to commit, or a commit was skipped because one is in flight
	numCommitResults
)

var commitResultNames = [numCommitResults]string{"success", "failure", "skipped"}

// String returns the result's name.
func (r CommitResult) String() string {
	if r < 0 || r >= numCommitResults {
		return "unknown"
	}
	return commitResultNames[r]
}

// Registry owns one worker's metrics: a VictoriaMetrics Set, registered for the process-wide
// metrics.WritePrometheus unless Unregistered is given. Create one per worker; Close it when the
// worker stops.
type Registry struct {
	set    *vm.Set
	labels string // constant labels, rendered `k="v",` (with the trailing comma), or ""
	global bool
	naming Naming

	mu         sync.Mutex
	tasks      map[connect.TaskID]*Task
	connectors map[string]*Connector
	nets       map[string]*Net
	nTasks     atomic.Int64
	nConns     atomic.Int64
	closed     bool

	worker workerSeries
}

// Option configures a Registry.
type Option func(*Registry)

// Label adds a constant label to every series of the registry, e.g. Label("worker_id", "10.0.0.12:8083")
// when several workers share one process and one /metrics. It must be a valid Prometheus label name.
func Label(name, value string) Option {
	return func(r *Registry) { r.labels += name + `="` + escapeLabel(value) + `",` }
}

// Names chooses how the Kafka Connect series are named (JMXNames by default).
func Names(n Naming) Option { return func(r *Registry) { r.naming = n } }

// kafka names a Kafka Connect series the registry's way.
func (r *Registry) kafka(group, attribute string) string { return r.naming.Name(group, attribute) }

// Unregistered keeps the registry out of the process-wide metrics.WritePrometheus; only
// Registry.WritePrometheus shows it. For tests.
func Unregistered() Option { return func(r *Registry) { r.global = false } }

// New creates a worker's registry with Kafka's worker-level series (connect-worker-metrics): the
// connector and task counts, which count the live Connector and Task handles, and the startup
// counters (ConnectorStartup, TaskStartup).
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
	r.worker.register(r)
	if r.global {
		vm.RegisterSet(r.set)
	}
	return r
}

// Set returns the underlying VictoriaMetrics set, to register further worker metrics in it.
func (r *Registry) Set() *vm.Set { return r.set }

// WritePrometheus writes this registry's series only (no process metrics) in Prometheus text format.
func (r *Registry) WritePrometheus(w io.Writer) { r.set.WritePrometheus(w) }

// Gauge registers a worker-level gauge with one label, e.g. Gauge(NameModuleInstances, "module",
// "file.wasm", f). It lives as long as the registry.
func (r *Registry) Gauge(name, label, value string, f func() float64) {
	r.set.GetOrCreateGauge(r.seriesName(name, label+`="`+escapeLabel(value)+`"`), f)
}

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

// seriesName renders name{<const labels>,<labels>}. labels is `k="v",...`, or "", and may start
// with a comma.
func (r *Registry) seriesName(name, labels string) string {
	all := strings.Trim(r.labels+strings.TrimPrefix(labels, ","), ",")
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

// statusLabel is Kafka's status attribute value: the state in lower case ("running").
func statusLabel(st connect.State) string { return strings.ToLower(string(st)) }

// series is what a handle registered, so that unregister can drop it: a task's, a connector's, or
// a connector's network series.
type series struct {
	r      *Registry
	labels string // `connector="x",task="0"`

	mu     sync.Mutex
	names  []string
	status string // the current status series (one at a time, as the JMX exporter shows it)
	closed bool
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

// rate registers a gauge with the per-second rate of c (Kafka's *-rate attributes).
func (s *series) rate(name string, c *vm.Counter) {
	r := newRate(func() float64 { return float64(c.Get()) })
	s.gauge(name, "", r.perSecond)
}

// info registers a gauge that is always 1 and carries a value in a label, as the JMX exporter turns
// a string attribute (connector-class: "FileStreamSource") into connector_class="FileStreamSource".
func (s *series) info(name, label, value string) {
	s.gauge(name, ","+label+`="`+escapeLabel(value)+`"`, one)
}

func one() float64 { return 1 }

// setStatus makes name{status=<value>} the one status series of the handle, replacing the previous.
func (s *series) setStatus(name, value string) {
	n := s.r.seriesName(name, s.labels+`,status="`+value+`"`)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || n == s.status {
		return
	}
	if s.status != "" {
		s.r.set.UnregisterMetric(s.status)
	}
	s.status = ""
	if value != "" {
		s.status = n
		s.r.set.GetOrCreateGauge(n, one)
	}
}

// registerHandle keeps a new task's or connector's handle h under key in the registry's map *m and
// counts it. A closed registry exports nothing: h's series are dropped at once, and h is a working
// handle that is not counted. The caller holds r.mu.
func registerHandle[K, H comparable](s *series, m *map[K]H, key K, h H, count *atomic.Int64) {
	if s.r.closed {
		s.unregister()
		return
	}
	(*m)[key] = h
	count.Add(1)
}

// unregisterHandle drops a task's or connector's handle h, kept under key in the registry's map
// *m: it leaves the map and count, if still there, and its series are unregistered, all under
// r.mu, so that a Task or Connector call for the same key cannot pick the series up half-removed.
// Idempotent.
func unregisterHandle[K, H comparable](s *series, m *map[K]H, key K, h H, count *atomic.Int64) {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if (*m)[key] == h {
		delete(*m, key)
		count.Add(-1)
	}
	s.unregister()
}

// closeCounted unregisters the series of a handle the registry let go of (Close) and takes it off
// count, once.
func (s *series) closeCounted(count *atomic.Int64) {
	if s.unregister() {
		count.Add(-1)
	}
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
	if s.status != "" {
		s.r.set.UnregisterMetric(s.status)
	}
	s.names, s.status = nil, ""
	return true
}

package config

import (
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
)

// Worker is a worker's validated settings, parsed once at start-up: each part of the worker
// receives its section (Kafka, Topics, REST, Cluster, Reconcile, Providers) or the fields it
// needs, never the properties. Field comments give the key and its default.
type Worker struct {
	// Source is the file the settings came from, for error messages.
	Source string
	// Warnings are the settings given that do nothing: keys no part reads, and keys accepted
	// for compatibility with Kafka Connect that have no effect here. The worker logs them at start.
	Warnings []Warning

	BootstrapServers []string      // bootstrap.servers (localhost:9092)
	GroupID          string        // group.id (required in a cluster)
	ClientID         string        // client.id ("" = connect-<worker id>): the group membership client's id
	APITimeout       time.Duration // default.api.timeout.ms (60000): how long start-up waits for Kafka

	KeyConverter        string            // key.converter (required)
	ValueConverter      string            // value.converter (required)
	KeyConverterProps   map[string]string // key.converter.* (prefix removed)
	ValueConverterProps map[string]string // value.converter.* (prefix removed)

	PluginPath        []string      // plugin.path
	PluginFSAllow     []string      // plugin.fs.allow: directories plugins may read and write
	PluginCacheDir    string        // plugin.cache.dir: wazero compilation cache
	PluginMemoryMax   uint64        // plugin.memory.max.bytes (256 MiB): linear memory cap per plugin instance
	PluginCallTimeout time.Duration // plugin.call.timeout.ms (30000): bound on one call into a plugin
	// PluginNoCPUBound is plugin.cpu.bound=none: guest calls run without the fuel bound, so neither
	// plugin.call.timeout.ms nor the GC's need to stop the world can interrupt them. For measuring
	// what the bound costs (make bench) and for diagnostics, never for production.
	PluginNoCPUBound bool

	PluginNetAllow netgrant.Grant // plugin.net.allow: TCP destinations plugins may connect to (none)

	OffsetFlushInterval time.Duration // offset.flush.interval.ms (60000)
	OffsetFlushTimeout  time.Duration // offset.flush.timeout.ms (5000)
	TaskShutdownTimeout time.Duration // task.shutdown.graceful.timeout.ms (5000)
	OffsetFile          string        // offset.storage.file.filename: a standalone worker's source offsets

	LogFormat string // log.format (text): "text" (slog's key=value) or "json", one object per line
	// MetricsNames is metrics.names (jmx): how /metrics names Kafka Connect's series, "jmx" (the JMX
	// exporter without rules, as Aiven) or "strimzi" (Strimzi's example exporter rules).
	MetricsNames string

	// ExactlyOnceSource is exactly.once.source.support (disabled): with enabled, source tasks
	// write their records and offsets in one transaction each; preparing (the step of a rolling
	// upgrade) already reads the internal topics read_committed and writes the config topic
	// transactionally from the leader, but tasks still write at least once.
	ExactlyOnceSource ExactlyOnce

	TopicTracking      bool // topic.tracking.enable (true): KIP-558 active topics are recorded
	TopicTrackingReset bool // topic.tracking.allow.reset (true): PUT /connectors/x/topics/reset is allowed

	Kafka     Kafka          // the Kafka clients' settings, checked by kafkaclient
	Topics    InternalTopics // the internal topics (distributed workers only)
	REST      REST           // listeners, TLS and authentication of the REST server
	Cluster   Cluster        // group membership
	Reconcile Reconcile      // connectors.dir and its reconciler
	Providers []Provider     // config.providers
}

// DefaultScheduledRebalanceMaxDelay is wasmconnect's default for scheduled.rebalance.max.delay.ms.
// Kafka Connect waits 5 minutes before it moves a departed worker's tasks; a worker that is really
// gone then leaves its connectors dead for that long. The delay starts only when the group notices
// the departure: at once for a graceful stop (which must hand its tasks over within 5 s), one
// session timeout (10 s) after a kill -9. 3 s brings a killed worker's tasks back in about 14 s and
// a stopped one's in about 4 s, and a worker that restarts before its old session expires still
// gets its own work back (it joins empty, and the leader gives lost work to empty workers first).
const DefaultScheduledRebalanceMaxDelay = 3 * time.Second

// workerKeys are the keys of the worker itself: how it reaches Kafka, its converters and its
// tasks' offsets.
var workerKeys = []Key{
	{Name: "bootstrap.servers", Default: "localhost:9092", Doc: "Kafka brokers"},
	{Name: "group.id", Doc: "the Connect cluster this worker belongs to"},
	{Name: "client.id", Doc: "client id of the worker's group membership"},
	{Name: "default.api.timeout.ms", Default: "60000", Doc: "how long start-up waits for bootstrap.servers"},
	{Name: "key.converter", Doc: "default key converter"},
	{Name: "value.converter", Doc: "default value converter"},
	{Name: "key.converter.", Doc: "the key converter's settings"},
	{Name: "value.converter.", Doc: "the value converter's settings"},
	{Name: "header.converter", Doc: "header converter; compared across the cluster"},
	{Name: "header.converter.", Ignored: "header values are written and read as SimpleHeaderConverter does, which has no settings"},
	{Name: "offset.flush.interval.ms", Default: "60000", Doc: "how often offsets are committed"},
	{Name: "offset.flush.timeout.ms", Default: "5000", Doc: "how long a source offset commit may take"},
	{Name: "task.shutdown.graceful.timeout.ms", Default: "5000", Doc: "how long a stopping task is waited for"},
	{Name: "offset.storage.file.filename", Doc: "a standalone worker's source offsets file"},
	{Name: "topic.tracking.enable", Default: "true", Doc: "KIP-558 active topics"},
	{Name: "topic.tracking.allow.reset", Default: "true", Doc: "allow resetting a connector's active topics"},
	{Name: "exactly.once.source.support", Default: "disabled", Doc: "KIP-618 exactly-once source delivery: disabled, preparing or enabled"},
	{Name: "log.format", Default: "text", Doc: "text (key=value) or json, one object per line, for log shippers"},
	{Name: "metrics.names", Default: "jmx", Doc: "how /metrics names Kafka Connect's series: jmx (the JMX exporter's default, as Aiven) or strimzi"},
}

// Mode says which settings are required: a distributed worker needs group.id and the three topics;
// a standalone worker needs neither.
type Mode int

const (
	Distributed Mode = iota
	Standalone
)

// Parse validates props (read from source) into a Worker, in one pass over every part's keys. An
// error lists every bad setting, each with the file and the key.
func Parse(source string, props map[string]string, mode Mode) (*Worker, error) {
	p := &parser{source: source, props: props}
	w := &Worker{Source: source, Warnings: warnings(props)}
	w.BootstrapServers = p.list("bootstrap.servers")
	if mode == Distributed {
		w.GroupID = p.required("group.id")
	}
	w.ClientID = p.str("client.id")
	w.APITimeout = p.millis("default.api.timeout.ms")

	w.KeyConverter = p.required("key.converter")
	w.ValueConverter = p.required("value.converter")
	w.KeyConverterProps = p.under("key.converter.")
	w.ValueConverterProps = p.under("value.converter.")

	w.OffsetFlushInterval = p.millis("offset.flush.interval.ms")
	w.OffsetFlushTimeout = p.millis("offset.flush.timeout.ms")
	w.TaskShutdownTimeout = p.millis("task.shutdown.graceful.timeout.ms")
	w.OffsetFile = p.str("offset.storage.file.filename")
	w.LogFormat = strings.ToLower(p.str("log.format"))
	if w.LogFormat != "text" && w.LogFormat != "json" {
		p.fail("log.format", w.LogFormat, "want text or json")
	}
	w.MetricsNames = strings.ToLower(p.str("metrics.names"))
	if w.MetricsNames != "jmx" && w.MetricsNames != "strimzi" {
		p.fail("metrics.names", w.MetricsNames, "want jmx (kafka_connect_connect_worker_metrics_connector_count) or strimzi (kafka_connect_worker_connector_count)")
	}
	w.ExactlyOnceSource = ExactlyOnce(strings.ToLower(p.str("exactly.once.source.support")))
	switch w.ExactlyOnceSource {
	case ExactlyOnceDisabled, ExactlyOncePreparing, ExactlyOnceEnabled:
	default:
		p.fail("exactly.once.source.support", string(w.ExactlyOnceSource), "want disabled, preparing or enabled")
	}
	if w.ExactlyOnceSource != ExactlyOnceDisabled && mode == Standalone {
		// As Kafka: exactly-once source delivery needs the offsets topic and zombie fencing.
		p.fail("exactly.once.source.support", string(w.ExactlyOnceSource), "exactly-once source delivery needs a distributed worker (standalone workers support only disabled)")
	}
	w.TopicTracking = p.bool("topic.tracking.enable")
	w.TopicTrackingReset = p.bool("topic.tracking.allow.reset")

	parsePlugins(p, w)
	w.Kafka = parseKafka(p)
	if mode == Distributed {
		w.Topics = parseTopics(p)
	}
	w.REST = parseREST(p)
	w.Cluster = parseCluster(p)
	w.Reconcile = parseReconcile(p)
	w.Providers = parseProviders(p)
	if err := p.err(); err != nil {
		return nil, err
	}
	return w, nil
}

// ExactlyOnce is a value of exactly.once.source.support.
type ExactlyOnce string

const (
	ExactlyOnceDisabled  ExactlyOnce = "disabled"
	ExactlyOncePreparing ExactlyOnce = "preparing"
	ExactlyOnceEnabled   ExactlyOnce = "enabled"
)

// ReadCommitted reports whether the internal topics are read with isolation.level=read_committed
// and the leader writes the config topic in transactions: preparing and enabled.
func (e ExactlyOnce) ReadCommitted() bool {
	return e == ExactlyOncePreparing || e == ExactlyOnceEnabled
}

// RESTAddr returns the address the REST server listens on (the first listener).
func (w *Worker) RESTAddr() string { return w.REST.Listeners[0].Host }

// AdvertisedURL returns the URL other workers and clients reach this worker at, built like Kafka
// Connect's: rest.advertised.* where set, else the listener's host (the machine's hostname if the
// listener binds all interfaces) and port.
func (w *Worker) AdvertisedURL(boundPort int) *url.URL {
	r := w.REST
	l := r.Listeners[0]
	scheme := l.Scheme
	if r.AdvertisedListener != "" {
		scheme = r.AdvertisedListener
	}
	host := r.AdvertisedHost
	if host == "" {
		host = l.Hostname()
		if host == "" || host == "0.0.0.0" || host == "::" {
			if h, err := os.Hostname(); err == nil {
				host = h
			} else {
				host = "localhost"
			}
		}
	}
	port := r.AdvertisedPort
	if port == 0 {
		port = boundPort
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: "/"}
}

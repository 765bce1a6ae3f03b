package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
)

// Worker is a worker's validated settings. Field comments give the Kafka Connect key and default.
type Worker struct {
	// Source is the file the settings came from, for error messages.
	Source string

	BootstrapServers []string // bootstrap.servers (localhost:9092)
	GroupID          string   // group.id (required)
	ClientID         string   // client.id ("" = derived from the worker id)

	// The internal topics' names; their partitions, replication factors and topic configs are read
	// by store.InternalTopicsFromProperties from Props.
	ConfigTopic string // config.storage.topic (required)
	OffsetTopic string // offset.storage.topic (required)
	StatusTopic string // status.storage.topic (required)

	KeyConverter        string            // key.converter (required)
	ValueConverter      string            // value.converter (required)
	KeyConverterProps   map[string]string // key.converter.* (prefix removed)
	ValueConverterProps map[string]string // value.converter.* (prefix removed)

	Listeners          []*url.URL // listeners (http://:8083); rest.host.name/rest.port when listeners is absent
	AdvertisedHost     string     // rest.advertised.host.name
	AdvertisedPort     int        // rest.advertised.port
	AdvertisedListener string     // rest.advertised.listener (http)

	PluginPath          []string      // plugin.path
	PluginFSAllow       []string      // plugin.fs.allow: directories plugins may read and write
	PluginCacheDir      string        // plugin.cache.dir: wazero compilation cache
	PluginMemoryMax     uint64        // plugin.memory.max.bytes (256 MiB): linear memory cap per plugin instance
	PluginCallTimeout   time.Duration // plugin.call.timeout.ms (30000): bound on one call into a plugin
	OffsetFlushInterval time.Duration // offset.flush.interval.ms (60000)
	OffsetFlushTimeout  time.Duration // offset.flush.timeout.ms (5000)
	TaskShutdownTimeout time.Duration // task.shutdown.graceful.timeout.ms (5000)

	PluginNetAllow netgrant.Grant // plugin.net.allow: TCP destinations plugins may connect to (none)

	SessionTimeout        time.Duration // session.timeout.ms (10000)
	HeartbeatInterval     time.Duration // heartbeat.interval.ms (3000)
	RebalanceTimeout      time.Duration // rebalance.timeout.ms (60000)
	ScheduledRebalanceMax time.Duration // scheduled.rebalance.max.delay.ms (DefaultScheduledRebalanceMaxDelay)
	SyncTimeout           time.Duration // worker.sync.timeout.ms (3000)
	APITimeout            time.Duration // default.api.timeout.ms (60000): how long start-up waits for Kafka

	ConnectorsDir string // connectors.dir: HCL files reconciled into the cluster ("" = none)

	// Props holds every setting as given, for the keys passed through to clients
	// (producer.*, consumer.*, admin.*) and for internal topic settings.
	Props map[string]string
}

// DefaultScheduledRebalanceMaxDelay is wasmconnect's default for scheduled.rebalance.max.delay.ms.
// Kafka Connect waits 5 minutes before it moves a departed worker's tasks; a worker that is really
// gone then leaves its connectors dead for that long. The delay starts only when the group notices
// the departure: at once for a graceful stop (which must hand its tasks over within 5 s), one
// session timeout (10 s) after a kill -9. 3 s brings a killed worker's tasks back in about 14 s and
// a stopped one's in about 4 s, and a worker that restarts before its old session expires still
// gets its own work back (it joins empty, and the leader gives lost work to empty workers first).
const DefaultScheduledRebalanceMaxDelay = 3 * time.Second

// keys lists every setting the worker reads, to warn about unknown ones (as Kafka does).
var keys = []string{
	"bootstrap.servers", "group.id", "client.id",
	"config.storage.topic", "offset.storage.topic", "status.storage.topic",
	"config.storage.replication.factor", "offset.storage.replication.factor", "status.storage.replication.factor",
	"offset.storage.partitions", "status.storage.partitions",
	"key.converter", "value.converter", "header.converter",
	"listeners", "rest.host.name", "rest.port", "rest.advertised.host.name", "rest.advertised.port", "rest.advertised.listener",
	"plugin.path", "plugin.fs.allow", "plugin.net.allow", "plugin.cache.dir", "plugin.memory.max.bytes", "plugin.call.timeout.ms",
	"offset.flush.interval.ms", "offset.flush.timeout.ms", "task.shutdown.graceful.timeout.ms",
	"session.timeout.ms", "heartbeat.interval.ms", "rebalance.timeout.ms", "scheduled.rebalance.max.delay.ms",
	"connectors.dir", "connectors.owner", "connectors.prune", "connectors.drift", "connect.protocol", "worker.sync.timeout.ms", "worker.unsync.backoff.ms",
	"default.api.timeout.ms",
	"offset.storage.file.filename", "topic.tracking.enable", "topic.tracking.allow.reset",
	"access.control.allow.origin", "access.control.allow.methods", "admin.listeners",
	// read by rest.FromProperties (rest.PropertyKeys)
	"rest.auth.basic.file", "rest.auth.tokens.file", "rest.auth.anonymous.read",
	// read by kafkaclient (with the sasl.* and ssl.* keys, and producer.*, consumer.*, admin.*)
	"security.protocol", "connector.client.config.override.policy",
}

var passThroughPrefixes = []string{
	// kafkaclient reads producer.*, consumer.*, admin.*, sasl.* and ssl.*, and warns about the
	// keys it has no franz-go equivalent for.
	"key.converter.", "value.converter.", "header.converter.", "producer.", "consumer.", "admin.", "sasl.", "ssl.",
	"config.storage.", "offset.storage.", "status.storage.", "config.providers", "listeners.https.",
}

// UnknownKeys returns the settings that the worker does not read, sorted.
func UnknownKeys(props map[string]string) []string {
	known := make(map[string]bool, len(keys))
	for _, k := range keys {
		known[k] = true
	}
	var unknown []string
	for k := range props {
		if known[k] {
			continue
		}
		passed := false
		for _, p := range passThroughPrefixes {
			if strings.HasPrefix(k, p) {
				passed = true
				break
			}
		}
		if !passed {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	return unknown
}

// Mode says which settings are required: a distributed worker needs group.id and the three topics;
// a standalone worker needs neither.
type Mode int

const (
	Distributed Mode = iota
	Standalone
)

// Parse validates props (read from source) into a Worker.
func Parse(source string, props map[string]string, mode Mode) (*Worker, error) {
	p := parser{source: source, props: props}
	w := &Worker{Source: source, Props: props}
	w.BootstrapServers = p.list("bootstrap.servers", "localhost:9092")
	if mode == Distributed {
		w.GroupID = p.required("group.id")
		w.ConfigTopic = p.required("config.storage.topic")
		w.OffsetTopic = p.required("offset.storage.topic")
		w.StatusTopic = p.required("status.storage.topic")
	}
	w.ClientID = p.str("client.id", "")

	w.KeyConverter = p.required("key.converter")
	w.ValueConverter = p.required("value.converter")
	w.KeyConverterProps = WithPrefix(props, "key.converter.")
	w.ValueConverterProps = WithPrefix(props, "value.converter.")

	w.Listeners = p.listeners()
	w.AdvertisedHost = p.str("rest.advertised.host.name", "")
	w.AdvertisedPort = p.intRange("rest.advertised.port", 0, 0, 65535)
	w.AdvertisedListener = p.str("rest.advertised.listener", "")

	w.PluginPath = p.list("plugin.path", "")
	w.PluginFSAllow = p.list("plugin.fs.allow", "")
	for i, d := range w.PluginFSAllow {
		abs, err := filepath.Abs(d)
		if err != nil {
			p.fail("plugin.fs.allow", d, err.Error())
			continue
		}
		w.PluginFSAllow[i] = abs
		// Checked here, before anything starts, rather than when the plugins load.
		if st, err := os.Stat(abs); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is in the message already
			}
			p.fail("plugin.fs.allow", d, err.Error())
		} else if !st.IsDir() {
			p.fail("plugin.fs.allow", d, "not a directory (plugins are granted directories, not files)")
		}
	}
	if g, err := netgrant.Parse(p.str("plugin.net.allow", "")); err != nil {
		p.fail("plugin.net.allow", p.str("plugin.net.allow", ""), err.Error())
	} else {
		w.PluginNetAllow = g
	}
	w.PluginCacheDir = p.str("plugin.cache.dir", defaultCacheDir())
	w.PluginMemoryMax = uint64(p.intRange("plugin.memory.max.bytes", 256<<20, 1<<16, 1<<32))
	w.PluginCallTimeout = p.millis("plugin.call.timeout.ms", 30*time.Second)
	w.OffsetFlushInterval = p.millis("offset.flush.interval.ms", 60*time.Second)
	w.OffsetFlushTimeout = p.millis("offset.flush.timeout.ms", 5*time.Second)
	w.TaskShutdownTimeout = p.millis("task.shutdown.graceful.timeout.ms", 5*time.Second)
	w.SessionTimeout = p.millis("session.timeout.ms", 10*time.Second)
	w.HeartbeatInterval = p.millis("heartbeat.interval.ms", 3*time.Second)
	w.RebalanceTimeout = p.millis("rebalance.timeout.ms", 60*time.Second)
	w.ScheduledRebalanceMax = p.millis("scheduled.rebalance.max.delay.ms", DefaultScheduledRebalanceMaxDelay)
	w.SyncTimeout = p.millis("worker.sync.timeout.ms", 3*time.Second)
	w.APITimeout = p.millis("default.api.timeout.ms", 60*time.Second)
	w.ConnectorsDir = p.str("connectors.dir", "")
	if err := p.err(); err != nil {
		return nil, err
	}
	return w, nil
}

// WithPrefix returns the settings that start with prefix, with the prefix removed.
func WithPrefix(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}

// RESTAddr returns the address the REST server listens on (the first listener).
func (w *Worker) RESTAddr() string { return w.Listeners[0].Host }

// AdvertisedURL returns the URL other workers and clients reach this worker at, built like Kafka
// Connect's: rest.advertised.* where set, else the listener's host (the machine's hostname if the
// listener binds all interfaces) and port.
func (w *Worker) AdvertisedURL(boundPort int) *url.URL {
	l := w.Listeners[0]
	scheme := l.Scheme
	if w.AdvertisedListener != "" {
		scheme = w.AdvertisedListener
	}
	host := w.AdvertisedHost
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
	port := w.AdvertisedPort
	if port == 0 {
		port = boundPort
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: "/"}
}

func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "wasmconnect")
	}
	return ""
}

// parser collects every bad setting, so one run reports them all.
type parser struct {
	source string
	props  map[string]string
	errs   []string
}

func (p *parser) fail(key, value, why string) {
	p.errs = append(p.errs, fmt.Sprintf("%s: invalid value %q for %s: %s", p.source, value, key, why))
}

func (p *parser) err() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("invalid worker config: %s", p.errs[0])
	}
	return fmt.Errorf("invalid worker config:\n  %s", strings.Join(p.errs, "\n  "))
}

func (p *parser) str(key, def string) string {
	if v, ok := p.props[key]; ok {
		return strings.TrimSpace(v)
	}
	return def
}

func (p *parser) required(key string) string {
	v := p.str(key, "")
	if v == "" {
		p.errs = append(p.errs, fmt.Sprintf("%s: missing required setting %s", p.source, key))
	}
	return v
}

func (p *parser) list(key, def string) []string { return SplitList(p.str(key, def)) }

func (p *parser) intRange(key string, def, lo, hi int) int {
	v, ok := p.props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case err != nil:
		p.fail(key, v, "not an integer")
	case n < lo || n > hi:
		p.fail(key, v, fmt.Sprintf("must be between %d and %d", lo, hi))
	default:
		return n
	}
	return def
}

func (p *parser) millis(key string, def time.Duration) time.Duration {
	n := p.intRange(key, int(def/time.Millisecond), 0, 1<<31-1)
	return time.Duration(n) * time.Millisecond
}

func (p *parser) listeners() []*url.URL {
	raw := p.list("listeners", "")
	if len(raw) == 0 {
		host := p.str("rest.host.name", "")
		port := p.str("rest.port", "8083")
		raw = []string{"http://" + net.JoinHostPort(host, port)}
	}
	var out []*url.URL
	for _, l := range raw {
		u, err := url.Parse(l)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Port() == "" {
			p.fail("listeners", l, "expected a URL like http://:8083 or https://host:8443")
			continue
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		out = []*url.URL{{Scheme: "http", Host: ":8083"}}
	}
	return out
}

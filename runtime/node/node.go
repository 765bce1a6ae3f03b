package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/cluster"
	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/configprovider"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/herder"
	"github.com/wasmconnect/wasmconnect/runtime/kafkaclient"
	"github.com/wasmconnect/wasmconnect/runtime/logging"
	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/runtime/reconcile"
	"github.com/wasmconnect/wasmconnect/runtime/rest"
	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/runtime/worker"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// The herder serves the REST API.
var _ rest.Herder = (*herder.Herder)(nil)

// Node is a running worker process.
type Node struct {
	cfg      *config.Worker
	mode     config.Mode
	log      *slog.Logger
	workerID string
	url      string
	ln       net.Listener // the REST listener, until the server serves it

	clients   *kafkaclient.Clients
	seeds     kgo.Opt
	clusterID string

	host     *wasmhost.Host
	configs  *store.ConfigStore
	offsets  store.OffsetBackingStore
	statuses *store.StatusStore
	metrics  *metrics.Registry
	worker   *worker.Worker
	admin    *kgo.Client
	group    *kgo.Client // group membership; nil without a group
	herder   *herder.Herder
	server   *rest.Server
	peers    *http.Client          // how this worker reaches the others' REST APIs (set by serveREST)
	rec      *reconcile.Reconciler // connectors.dir's reconciler; nil without
	recDone  chan struct{}

	// connectorOffsets opens source connectors' own offsets topics; nil in standalone mode.
	connectorOffsets worker.ConnectorOffsetsFunc

	cancel context.CancelFunc
	done   chan struct{}
	// compileAfter is closed once the worker has joined its group, or compileDelay after its start
	// if it has not (releaseCompiles): the plugin host's background compiles wait for it, so that
	// a cold start is REST-ready as fast as a warm one.
	compileAfter chan struct{}
}

// Start starts a worker: it reads the internal topics to their end, loads the plugins, starts the
// REST server and the herder. It returns once the worker serves requests.
//
// In config.Standalone mode (Kafka's connect-standalone) the worker joins no group and keeps its
// connectors and statuses in memory and its source offsets in offset.storage.file.filename; Kafka
// carries only the data.
//
// A start-up error names the setting at fault and its cause, and releases what was opened.
func Start(ctx context.Context, cfg *config.Worker, log *slog.Logger, mode config.Mode) (_ *Node, err error) {
	log = logging.Wrap(log) // per-logger levels for GET/PUT /admin/loggers
	for _, w := range cfg.Warnings {
		log.Warn(w.Msg, "key", w.Key, "file", cfg.Source)
	}
	// n is not the named result: every error return sets that to nil before the deferred close.
	n := &Node{cfg: cfg, mode: mode, log: log, done: make(chan struct{}), compileAfter: make(chan struct{})}
	defer func() {
		if err != nil {
			n.close()
		}
	}()
	// Each step builds one component from the settings and the components before it.
	for _, build := range []func(context.Context) error{
		n.listen, n.connectKafka, n.openStores, n.loadPlugins, n.newWorker, n.newHerder, n.newReconciler, n.serveREST,
	} {
		if err := build(ctx); err != nil {
			return nil, err
		}
	}
	n.run()
	go n.releaseCompiles()
	n.log.Info("worker started", "url", n.url, "group_id", cfg.GroupID, "kafka_cluster_id", n.clusterID)
	return n, nil
}

// compileDelay bounds how long the background plugin compiles wait for the group join: a worker
// that does not join (a member of its group that stopped without leaving holds the rebalance for
// its session timeout; a broker that answers slowly) still compiles its modules, so that a module
// that does not compile is reported at start-up rather than at its first use. A worker usually
// joins well within it; the compile of a large module takes seconds.
const compileDelay = 5 * time.Second

// releaseCompiles lets the plugin host's background compiles start (wasmhost.Config.CompileAfter)
// once the worker has joined its group or compileDelay after it started serving, whichever comes
// first: the compiles do not share the CPUs with the join, and are not held back by it for ever.
// It runs after Start has returned, off the REST-ready path.
func (n *Node) releaseCompiles() {
	delay := time.NewTimer(compileDelay)
	defer delay.Stop()
	select {
	case <-n.herder.Joined():
	case <-delay.C:
		n.log.Info("compiling the plugin modules before the group join", "waited", compileDelay)
	case <-n.done:
	}
	close(n.compileAfter)
}

// listen binds the REST listener first: the worker id is the advertised host:port.
func (n *Node) listen(context.Context) error {
	ln, err := net.Listen("tcp", n.cfg.RESTAddr())
	if err != nil {
		return fmt.Errorf("listeners=%s: %w", n.cfg.REST.Listeners[0], err)
	}
	n.ln = ln
	adv := n.cfg.AdvertisedURL(ln.Addr().(*net.TCPAddr).Port)
	n.workerID, n.url = adv.Host, adv.String()
	n.log = n.log.With("worker_id", n.workerID)
	return nil
}

// connectKafka checks the client settings of every role (security.protocol, sasl.*, ssl.* and
// the producer.*, consumer.*, admin.* keys) and asks the brokers for the cluster id.
func (n *Node) connectKafka(ctx context.Context) error {
	clients, err := kafkaclient.NewClients(n.cfg.Kafka)
	if err != nil {
		return fmt.Errorf("%s: %w", n.cfg.Source, err)
	}
	for _, w := range clients.Warnings {
		n.log.Warn("Kafka client setting not applied", "setting", w, "file", n.cfg.Source)
	}
	n.clients = clients
	n.seeds = kgo.SeedBrokers(n.cfg.BootstrapServers...)
	n.clusterID, err = clusterID(ctx, n.cfg, n.log, n.internalOpts(), clients.Internal.Auth)
	return err
}

// internalOpts are the options of the worker's own clients, with extra ones after them.
func (n *Node) internalOpts(extra ...kgo.Opt) []kgo.Opt {
	opts := append([]kgo.Opt{n.seeds}, n.clients.Internal.Opts...)
	return append(opts, extra...)
}

// openStores opens the config, offset and status stores and reads them to their end: the
// internal topics, or memory and offset.storage.file.filename for a standalone worker.
func (n *Node) openStores(ctx context.Context) error {
	cfg := n.cfg
	opts := store.Options{SeedBrokers: cfg.BootstrapServers, ClientIDPrefix: cfg.GroupID, ClientOpts: n.clients.Internal.Opts, Logger: n.log}
	// With exactly-once source support the offsets topic holds tasks' transactions, and the
	// config topic the leader's: what was aborted must not be applied.
	opts.ReadCommitted = cfg.ExactlyOnceSource.ReadCommitted()
	if n.mode == config.Standalone {
		if cfg.OffsetFile == "" {
			return fmt.Errorf("%s: missing required setting offset.storage.file.filename (standalone workers keep source offsets in that file)", cfg.Source)
		}
		n.configs = store.NewMemoryConfigStore(opts)
		n.statuses = store.NewMemoryStatusStore(opts)
		n.offsets = store.NewFileOffsetStore(cfg.OffsetFile)
	} else {
		topics := store.InternalTopicsFrom(cfg.Topics)
		n.configs = store.NewConfigStore(opts, topics.Config)
		n.offsets = store.NewOffsetStore(opts, topics.Offsets)
		// A connector's own offsets topic is created like the worker's (Kafka's
		// KafkaOffsetBackingStore.newTopicDescription): same partitions, replication and configs.
		n.connectorOffsets = func(topic string) *store.OffsetStore {
			spec := topics.Offsets
			spec.Name = topic
			return store.NewOffsetStore(opts, spec)
		}
		n.statuses = store.NewStatusStore(opts, topics.Status)
	}
	for _, s := range []interface{ Start(context.Context) error }{n.configs, n.offsets, n.statuses} {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	return nil
}

// loadPlugins loads and compiles the plugin modules of plugin.path, and watches it for changes.
// The host logs each module it skips, with the file and the reason.
func (n *Node) loadPlugins(ctx context.Context) error {
	cfg := n.cfg
	start := time.Now()
	var err error
	n.host, err = wasmhost.New(ctx, wasmhost.Config{
		PluginPath:       cfg.PluginPath,
		CacheDir:         cfg.PluginCacheDir,
		MemoryLimitBytes: cfg.PluginMemoryMax,
		CallTimeout:      cfg.PluginCallTimeout,
		NoCPUBound:       cfg.PluginNoCPUBound,
		FSAllow:          cfg.PluginFSAllow,
		NetAllow:         cfg.PluginNetAllow,
		CompileAfter:     n.compileAfter,
		Logger:           n.log,
	})
	if err != nil {
		return fmt.Errorf("loading plugins: %w", err)
	}
	if cfg.PluginNoCPUBound {
		n.log.Warn("plugin.cpu.bound=none: plugin calls run without a CPU bound; a call that never returns hangs its task and stalls the whole worker's garbage collector (for benchmarks and diagnostics only)")
	}
	n.log.Info("plugins loaded", "plugins", len(n.host.Plugins()), "modules_failed", len(n.host.LoadErrors()), "took", time.Since(start).Round(time.Millisecond))
	// Hot reload: a module added, replaced or removed in plugin.path is picked up without a
	// restart; new tasks use what is there then, running tasks keep the code they started with.
	if err := n.host.Watch(); err != nil {
		n.log.Warn("plugin.path is not watched: modules added or replaced there are loaded at the next start", "plugin_path", cfg.PluginPath, "error", err)
	}
	return nil
}

// newWorker creates the worker that runs the plugins, with the config providers its tasks'
// configs are resolved by.
func (n *Node) newWorker(context.Context) error {
	cfg := n.cfg
	providers, err := configprovider.New(cfg.Providers)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.Source, err)
	}
	naming := metrics.JMXNames
	if cfg.MetricsNames == "strimzi" {
		naming = metrics.StrimziNames
	}
	n.metrics = metrics.New(metrics.Label("worker_id", n.workerID), metrics.Names(naming))
	for _, module := range n.host.ModuleNames() {
		n.metrics.Gauge(metrics.NameModuleInstances, "module", module, func() float64 { return float64(n.host.Instances(module)) })
	}
	wc := worker.Config{
		Worker:           cfg,
		Host:             n.host,
		Offsets:          n.offsets,
		ConnectorOffsets: n.connectorOffsets,
		ClientOpts:       []kgo.Opt{n.seeds}, // the tasks' clients add the producer.*, consumer.* settings
		Clients:          n.clients,
		Providers:        providers,
		Metrics:          n.metrics,
		Logger:           n.log,
	}
	if cfg.TopicTracking {
		wc.Statuses = n.statuses // KIP-558 active topics
	}
	n.worker = worker.New(wc)
	return nil
}

// newHerder creates the herder and, for a distributed worker, its group membership.
func (n *Node) newHerder(context.Context) error {
	cfg := n.cfg
	var err error
	n.admin, err = kgo.NewClient(append([]kgo.Opt{n.seeds, kgo.ClientID(cfg.GroupID + "-shared-admin")}, n.clients.Admin.Opts...)...)
	if err != nil {
		return fmt.Errorf("bootstrap.servers=%v: %w", cfg.BootstrapServers, err)
	}
	hcfg := herder.Config{
		WorkerID: n.workerID, ClusterID: n.clusterID, Worker: n.worker,
		Configs: n.configs, Statuses: n.statuses, Admin: kadm.NewClient(n.admin), Logger: n.log,
		SyncTimeout: cfg.Cluster.SyncTimeout, Metrics: n.metrics, AskLeaderToFence: n.askLeaderToFence,
	}
	if n.mode == config.Distributed && cfg.ExactlyOnceSource.ReadCommitted() {
		hcfg.ConfigTransactionalID = "connect-cluster-" + cfg.GroupID
	}
	if n.mode == config.Distributed {
		clientID := cfg.ClientID
		if clientID == "" {
			clientID = "connect-" + n.workerID
		}
		n.group, err = kgo.NewClient(n.internalOpts(kgo.ClientID(clientID))...)
		if err != nil {
			return fmt.Errorf("bootstrap.servers=%v: %w", cfg.BootstrapServers, err)
		}
		c := cfg.Cluster
		hcfg.Group = &cluster.Config{
			Client:            n.group,
			GroupID:           cfg.GroupID,
			URL:               n.url,
			Protocol:          c.Protocol,
			SessionTimeout:    c.SessionTimeout,
			HeartbeatInterval: c.HeartbeatInterval,
			RebalanceTimeout:  c.RebalanceTimeout,
			MaxDelay:          c.ScheduledRebalanceMax,
			Settings:          n.sharedSettings(),
			Version:           herder.Version,
			Logger:            n.log,
			Rebalances:        n.metrics.Rebalance(),
		}
	}
	n.herder = herder.New(hcfg)
	return nil
}

// serveREST starts the REST server on the listener: the herder's API, with GET /reconciler when
// there is a reconciler. Forwarded requests are signed with the cluster's session key.
func (n *Node) serveREST(context.Context) error {
	setup, err := rest.NewSetup(n.cfg.REST)
	if err != nil {
		return fmt.Errorf("%s: %w", n.cfg.Source, err)
	}
	var served rest.Herder = n.herder
	if n.rec != nil {
		served = reconcilingHerder{n.herder, n.rec}
	}
	n.peers = setup.Client
	fwd := &rest.Forwarder{Client: setup.Client, Key: n.herder.SessionKey}
	n.server = rest.New(served, append(setup.Options,
		rest.WithTopicTracking(n.cfg.TopicTracking, n.cfg.TopicTrackingReset),
		rest.WithLogger(n.log), rest.WithInternalKey(n.herder.SessionKey), rest.WithForwarder(fwd),
		rest.WithStateHistory(n.stateHistory))...)
	go n.server.Serve(n.ln)
	n.ln = nil // the server's now
	return nil
}

// stateHistory answers GET /state-changes from the status store, which sees every worker's writes.
func (n *Node) stateHistory() []connect.StateChange {
	changes := n.statuses.History()
	out := make([]connect.StateChange, len(changes))
	for i, c := range changes {
		out[i] = connect.StateChange{Time: c.Time, Connector: c.Connector, State: connect.State(c.State),
			WorkerID: c.WorkerID, Generation: c.Generation, Trace: c.Trace}
		if c.Task >= 0 {
			task := c.Task
			out[i].Task = &task
		}
	}
	return out
}

// run runs the herder and the reconciler until Stop.
func (n *Node) run() {
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() {
		defer close(n.done)
		n.herder.Run(runCtx)
	}()
	n.startReconciler(runCtx)
}

// Stop stops the worker gracefully: tasks stop and commit their offsets, then the REST server and
// the Kafka clients close.
func (n *Node) Stop(ctx context.Context) error {
	if n.cancel != nil {
		n.cancel()
		select {
		case <-n.done:
		case <-ctx.Done():
			return fmt.Errorf("stopping worker: %w", ctx.Err())
		}
		if n.recDone != nil {
			select {
			case <-n.recDone:
			case <-ctx.Done():
				return fmt.Errorf("stopping the reconciler: %w", ctx.Err())
			}
		}
	}
	if n.server != nil {
		n.server.Shutdown(ctx)
	}
	n.close()
	n.log.Info("worker stopped")
	return nil
}

func (n *Node) close() {
	if n.ln != nil {
		n.ln.Close()
	}
	if n.configs != nil {
		n.configs.Close()
	}
	if n.offsets != nil {
		n.offsets.Close()
	}
	if n.statuses != nil {
		n.statuses.Close()
	}
	if n.admin != nil {
		n.admin.Close()
	}
	if n.group != nil {
		n.group.Close()
	}
	if n.host != nil {
		n.host.Close(context.Background())
	}
	if n.metrics != nil {
		n.metrics.Close()
	}
	if n.rec != nil {
		n.rec.Close()
	}
}

// brokerRetryInterval is how often an unreachable bootstrap.servers is retried and reported.
const brokerRetryInterval = 5 * time.Second

// clusterID asks the brokers for the Kafka cluster id, which also checks that they are reachable.
// A broker that does not answer is retried every brokerRetryInterval, with a warning naming
// bootstrap.servers and the cause, for up to default.api.timeout.ms: a worker started together
// with its broker (compose, systemd) waits for it, and a wrong address shows at once in the log
// instead of after a long silence. An error the broker itself gives that retrying cannot cure
// (authentication, say) ends the wait at once, and so do wrong SASL credentials or a failed TLS
// handshake, which franz-go would retry (kafkaclient.FailFast names the setting at fault).
func clusterID(ctx context.Context, cfg *config.Worker, log *slog.Logger, opts []kgo.Opt, auth kafkaclient.Auth) (string, error) {
	fctx, failFast, stop := kafkaclient.FailFast(ctx, auth)
	defer stop()
	// No retries inside the client: each attempt then fails with its cause (connection refused,
	// no such host) rather than with the deadline of the attempt.
	cl, err := kgo.NewClient(append(opts, failFast, kgo.RequestRetries(0))...)
	if err != nil {
		return "", fmt.Errorf("bootstrap.servers=%v: %w", cfg.BootstrapServers, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	servers := strings.Join(cfg.BootstrapServers, ",")
	start := time.Now()
	deadline := start.Add(cfg.APITimeout)
	var cause error
	for {
		next := time.Now().Add(brokerRetryInterval)
		if next.After(deadline) {
			next = deadline
		}
		actx, cancel := context.WithDeadline(fctx, next)
		m, err := adm.BrokerMetadata(actx)
		cancel()
		if failed := kafkaclient.Cause(fctx, nil); failed != nil {
			return "", fmt.Errorf("bootstrap.servers=%s: %w", servers, failed)
		}
		// An attempt cut short by its deadline says less than the failure before it (connection
		// refused, no such host): report that one.
		if errors.Is(err, context.DeadlineExceeded) && cause != nil {
			err = cause
		}
		cause = err
		switch {
		case err == nil:
			return m.Cluster, nil
		case ctx.Err() != nil:
			return "", fmt.Errorf("bootstrap.servers=%s: %w", servers, ctx.Err())
		case !retriable(err):
			return "", fmt.Errorf("bootstrap.servers=%s: reading cluster metadata: %w", servers, err)
		case !time.Now().Before(deadline):
			return "", fmt.Errorf("bootstrap.servers=%s: Kafka not reachable within %v (default.api.timeout.ms): %w",
				servers, cfg.APITimeout, err)
		}
		log.Warn("Kafka not reachable yet, retrying", "bootstrap.servers", servers, "err", err,
			"waited", time.Since(start).Round(time.Second), "gives_up_after", cfg.APITimeout)
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(next)):
		}
	}
}

// retriable reports whether a failed metadata request may succeed later: a broker that is down or
// still starting, yes; an error code the broker answered with that retrying cannot cure, no.
func retriable(err error) bool {
	var ke *kerr.Error
	return !errors.As(err, &ke) || ke.Retriable
}

// Herder returns the worker's herder, through which a standalone worker's connectors are created.
func (n *Node) Herder() *herder.Herder { return n.herder }

// sharedSettings are the settings every worker of the group must share, with converter aliases
// resolved to their class names, so that a worker saying JsonConverter is not refused by one saying
// org.apache.kafka.connect.json.JsonConverter.
func (n *Node) sharedSettings() map[string]string { return SharedSettings(n.cfg, n.host) }

// SharedSettings returns the settings a worker with cfg sends the group to be compared with the
// leader's (config.SharedKeys it sets), with converter aliases resolved by host to their classes,
// so that JsonConverter and org.apache.kafka.connect.json.JsonConverter agree.
func SharedSettings(cfg *config.Worker, host *wasmhost.Host) map[string]string {
	s := maps.Clone(cfg.Cluster.Shared)
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		if v, ok := s[k]; ok {
			if p, err := host.Resolve(v, wire.KindConverter); err == nil {
				s[k] = p.Class
			}
		}
	}
	return s
}

package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/cluster"
	"github.com/wasmconnect/wasmconnect/runtime/config"
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
	log      *slog.Logger
	workerID string
	url      string

	host     *wasmhost.Host
	configs  *store.ConfigStore
	offsets  store.OffsetBackingStore
	statuses *store.StatusStore
	metrics  *metrics.Registry
	admin    *kgo.Client
	group    *kgo.Client // group membership; nil without a group
	herder   *herder.Herder
	server   *rest.Server
	rec      *reconcile.Reconciler // connectors.dir's reconciler; nil without
	recDone  chan struct{}

	cancel context.CancelFunc
	done   chan struct{}
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
	for _, k := range config.UnknownKeys(cfg.Props) {
		log.Warn("The configuration was supplied but isn't a known config", "key", k, "file", cfg.Source)
	}
	// n is not the named result: every error return sets that to nil before the deferred close.
	n := &Node{cfg: cfg, log: log, done: make(chan struct{})}
	defer func() {
		if err != nil {
			n.close()
		}
	}()

	// Bind the REST listener first: the worker id is the advertised host:port.
	ln, err := net.Listen("tcp", cfg.RESTAddr())
	if err != nil {
		return nil, fmt.Errorf("listeners=%s: %w", cfg.Listeners[0], err)
	}
	adv := cfg.AdvertisedURL(ln.Addr().(*net.TCPAddr).Port)
	n.workerID, n.url = adv.Host, adv.String()
	log = log.With("worker_id", n.workerID)
	n.log = log

	// security.protocol, sasl.*, ssl.* and the producer.*, consumer.*, admin.* client settings.
	clients, err := kafkaclient.NewClients(cfg.Props)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	for _, w := range clients.Warnings {
		log.Warn("Kafka client setting not applied", "setting", w, "file", cfg.Source)
	}
	seeds := kgo.SeedBrokers(cfg.BootstrapServers...)
	internal := append([]kgo.Opt{seeds}, clients.Internal.Opts...)
	internal = internal[:len(internal):len(internal)] // each client appends its own

	clusterID, err := clusterID(ctx, cfg, log, internal, clients.Internal.Auth)
	if err != nil {
		ln.Close()
		return nil, err
	}

	opts := store.Options{SeedBrokers: cfg.BootstrapServers, ClientIDPrefix: cfg.GroupID, ClientOpts: clients.Internal.Opts, Logger: log}
	if mode == config.Standalone {
		file := strings.TrimSpace(cfg.Props["offset.storage.file.filename"])
		if file == "" {
			ln.Close()
			return nil, fmt.Errorf("%s: missing required setting offset.storage.file.filename (standalone workers keep source offsets in that file)", cfg.Source)
		}
		n.configs = store.NewMemoryConfigStore(opts)
		n.statuses = store.NewMemoryStatusStore(opts)
		n.offsets = store.NewFileOffsetStore(file)
	} else {
		topics, err := store.InternalTopicsFromProperties(cfg.Props)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("%s: %w", cfg.Source, err)
		}
		n.configs = store.NewConfigStore(opts, topics.Config)
		n.offsets = store.NewOffsetStore(opts, topics.Offsets)
		n.statuses = store.NewStatusStore(opts, topics.Status)
	}
	for _, s := range []interface{ Start(context.Context) error }{n.configs, n.offsets, n.statuses} {
		if err := s.Start(ctx); err != nil {
			ln.Close()
			return nil, err
		}
	}

	start := time.Now()
	n.host, err = wasmhost.New(ctx, wasmhost.Config{
		PluginPath:       cfg.PluginPath,
		CacheDir:         cfg.PluginCacheDir,
		MemoryLimitBytes: cfg.PluginMemoryMax,
		CallTimeout:      cfg.PluginCallTimeout,
		FSAllow:          cfg.PluginFSAllow,
		NetAllow:         cfg.PluginNetAllow,
		Logger:           log,
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("loading plugins: %w", err)
	}
	for _, e := range n.host.LoadErrors() {
		log.Error("plugin module not loaded", "module", e.Path, "err", e.Err)
	}
	log.Info("plugins loaded", "plugins", len(n.host.Plugins()), "modules_failed", len(n.host.LoadErrors()), "took", time.Since(start).Round(time.Millisecond))

	n.metrics = metrics.New(metrics.Label("worker_id", n.workerID))
	w := worker.New(worker.Config{
		Worker:     cfg,
		Host:       n.host,
		Offsets:    n.offsets,
		ClientOpts: []kgo.Opt{seeds}, // the tasks' clients add the producer.*, consumer.* settings
		Metrics:    n.metrics,
		Logger:     log,
		Statuses:   n.statuses, // KIP-558 active topics
	})
	n.admin, err = kgo.NewClient(append([]kgo.Opt{seeds, kgo.ClientID(cfg.GroupID + "-shared-admin")}, clients.Admin.Opts...)...)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("bootstrap.servers=%v: %w", cfg.BootstrapServers, err)
	}
	setup, err := rest.FromProperties(cfg.Props)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	hcfg := herder.Config{
		WorkerID: n.workerID, ClusterID: clusterID, Worker: w,
		Configs: n.configs, Statuses: n.statuses, Offsets: n.offsets, Admin: kadm.NewClient(n.admin), Logger: log,
		SyncTimeout: cfg.SyncTimeout,
	}
	if mode == config.Distributed {
		n.group, err = kgo.NewClient(append(internal, kgo.ClientID("connect-"+n.workerID))...)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("bootstrap.servers=%v: %w", cfg.BootstrapServers, err)
		}
		hcfg.Group = &cluster.Config{
			Client:            n.group,
			GroupID:           cfg.GroupID,
			URL:               n.url,
			Protocol:          cfg.Props["connect.protocol"],
			SessionTimeout:    cfg.SessionTimeout,
			HeartbeatInterval: cfg.HeartbeatInterval,
			RebalanceTimeout:  cfg.RebalanceTimeout,
			MaxDelay:          cfg.ScheduledRebalanceMax,
			Settings:          clusterSettings(cfg.Props, n.host),
			Version:           herder.Version,
			Logger:            log,
		}
	}
	n.herder = herder.New(hcfg)
	// Forwarded requests are signed with the cluster's session key.
	fwd := &rest.Forwarder{Client: setup.Client, Key: n.herder.SessionKey}
	served, err := n.reconciler(cfg, log)
	if err != nil {
		ln.Close()
		return nil, err
	}
	n.server = rest.New(served, append(setup.Options, rest.WithLogger(log), rest.WithInternalKey(n.herder.SessionKey), rest.WithForwarder(fwd))...)
	go n.server.Serve(ln)

	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() {
		defer close(n.done)
		n.herder.Run(runCtx)
	}()
	n.startReconciler(runCtx)
	log.Info("worker started", "url", n.url, "group_id", cfg.GroupID, "kafka_cluster_id", clusterID)
	return n, nil
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

// clusterSettings are the settings every worker of the group must share, with converter aliases
// resolved to their class names, so that a worker saying JsonConverter is not refused by one saying
// org.apache.kafka.connect.json.JsonConverter.
func clusterSettings(props map[string]string, host *wasmhost.Host) map[string]string {
	s := cluster.Settings(props)
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		if v, ok := s[k]; ok {
			if p, err := host.Resolve(v, wire.KindConverter); err == nil {
				s[k] = p.Class
			}
		}
	}
	return s
}

package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultLogCleanerBackoff is how often the broker compacts topics and applies
// retention when Config.LogCleanerBackoff is zero. It is Apache Kafka's
// default log.cleaner.backoff.ms; kfake's own default is one hour, which
// would let the Connect internal topics grow without bound.
const DefaultLogCleanerBackoff = 15 * time.Second

// startupTimeout bounds the requests Start makes to the broker it just
// started. They go over loopback, so anything slower means something is
// badly wrong.
const startupTimeout = 10 * time.Second

// Config configures the embedded broker. The zero value (plus Listen) gives a
// broker with Apache Kafka's defaults that keeps its data in memory.
type Config struct {
	// Listen is the host:port the broker listens on and advertises to
	// clients, such as "127.0.0.1:9092". Port 0 picks a free port; Addr
	// reports the one chosen. An empty Listen means "127.0.0.1:0".
	//
	// The host must be a concrete address: the broker advertises the
	// address it is bound to in metadata responses, so a wildcard such as
	// 0.0.0.0 would send clients to an address they cannot reach.
	Listen string

	// DataDir is the directory the broker persists its state to and
	// reloads it from on the next Start. Each batch is fsynced before it
	// is acknowledged, so a killed broker keeps every record it
	// acknowledged. Empty keeps everything in memory and loses it on Close.
	DataDir string

	// ClusterID is the cluster id reported to clients. It only applies to
	// a new data directory: a restarted broker keeps the id it was first
	// started with. Empty means kfake's default.
	ClusterID string

	// Logger receives the broker's log lines. kfake's per-request lines are
	// logged at Debug. Nil discards everything.
	Logger *slog.Logger

	// LogCleanerBackoff is how often compaction and retention run (Kafka's
	// log.cleaner.backoff.ms). Zero means DefaultLogCleanerBackoff. It
	// cannot be changed while the broker runs.
	LogCleanerBackoff time.Duration

	// NumPartitions is the partition count for auto-created topics and for
	// CreateTopics requests that ask for the default (Kafka's
	// num.partitions). Zero means 1, Kafka's default.
	NumPartitions int

	// DisableAutoTopicCreation turns off creating topics on first use
	// (Kafka's auto.create.topics.enable, which defaults to true).
	DisableAutoTopicCreation bool

	// BrokerConfigs are extra broker-level configs, such as
	// "message.max.bytes". They override the settings above.
	BrokerConfigs map[string]string

	// SASLUsers, when any, make clients authenticate as one of them
	// (security.protocol SASL_PLAINTEXT, or SASL_SSL with TLS).
	SASLUsers []SASLUser

	// TLS, when set, makes the listener speak TLS only, with its
	// certificate; with ClientAuth set to tls.RequireAndVerifyClientCert
	// and ClientCAs, clients need a certificate signed by one of those CAs
	// (mutual TLS).
	TLS *tls.Config
}

// Broker is a running embedded broker.
type Broker struct {
	cluster   *kfake.Cluster
	client    []kgo.Opt // how the broker's own start-up client gets in
	dataDir   string
	addr      string
	clusterID string
}

// Start starts a broker as configured, reloading DataDir if it holds the
// state of an earlier run. It returns once the broker accepts connections.
func Start(cfg Config) (*Broker, error) {
	host, port, err := parseListen(cfg.Listen)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	backoff := cfg.LogCleanerBackoff
	if backoff <= 0 {
		backoff = DefaultLogCleanerBackoff
	}
	parts := cfg.NumPartitions
	if parts <= 0 {
		parts = 1
	}
	bcfgs := map[string]string{
		"log.cleaner.backoff.ms": strconv.FormatInt(backoff.Milliseconds(), 10),
	}
	for k, v := range cfg.BrokerConfigs {
		bcfgs[k] = v
	}

	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.DefaultNumPartitions(parts),
		kfake.BrokerConfigs(bcfgs),
		kfake.WithLogger(slogAdapter{logger}),
	}
	if cfg.DataDir != "" {
		// Without SyncWrites kfake fsyncs segments only when it rolls them or
		// stops: records it has acknowledged would live only in the page
		// cache until then.
		opts = append(opts, kfake.DataDir(cfg.DataDir), kfake.SyncWrites())
	}
	if cfg.ClusterID != "" {
		opts = append(opts, kfake.ClusterID(cfg.ClusterID))
	}
	client, secOpts, err := securityOpts(cfg)
	if err == nil {
		err = forgetSASL(cfg.DataDir)
	}
	if err != nil {
		return nil, err
	}
	opts = append(opts, secOpts...)

	if cfg.DataDir != "" {
		if err := setAsideOrphanPartitions(cfg.DataDir, logger); err != nil {
			return nil, fmt.Errorf("starting embedded broker with data dir %s: %w", cfg.DataDir, err)
		}
		if err := endOpenTransactions(cfg.DataDir, opts, client, logger); err != nil {
			return nil, fmt.Errorf("starting embedded broker with data dir %s: ending the transactions a killed broker left open: %w", cfg.DataDir, err)
		}
	}

	opts = append(opts, kfake.Ports(port))
	// kfake always binds 127.0.0.1; rebind to the configured host.
	if host != "127.0.0.1" {
		opts = append(opts, kfake.ListenFn(func(network, addr string) (net.Listener, error) {
			_, p, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			return net.Listen(network, net.JoinHostPort(host, p))
		}))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		if cfg.DataDir != "" {
			return nil, fmt.Errorf("starting embedded broker on %s with data dir %s: %w", cfg.Listen, cfg.DataDir, err)
		}
		return nil, fmt.Errorf("starting embedded broker on %s: %w", cfg.Listen, err)
	}
	if !cfg.DisableAutoTopicCreation {
		autoCreateTopics(c)
	}
	b := &Broker{cluster: c, addr: c.ListenAddrs()[0], client: client, dataDir: cfg.DataDir}

	ctx, cancel := context.WithTimeout(context.Background(), startupTimeout)
	defer cancel()
	if err := b.init(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if cfg.ClusterID != "" && b.clusterID != cfg.ClusterID {
		logger.Warn("embedded broker keeps the cluster id of its data directory",
			"cluster_id", b.clusterID, "configured_cluster_id", cfg.ClusterID, "data_dir", cfg.DataDir)
	}
	logger.Info("embedded broker started", "addr", b.addr, "cluster_id", b.clusterID, "data_dir", cfg.DataDir)
	return b, nil
}

// init talks to the fresh broker once: it learns the cluster id and makes
// sure compaction runs.
//
// kfake starts its compaction ticker only when a CreateTopics, DeleteTopics
// or AlterConfigs request is handled, not after reloading a data directory.
// Without a nudge, compacted topics that survive a restart (the Connect
// internal topics) would never be compacted again until some client happens
// to create a topic. A validate-only IncrementalAlterConfigs on the broker
// resource with no configs changes nothing, but runs the ticker refresh.
func (b *Broker) init(ctx context.Context) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.addr)}, b.client...)...)
	if err != nil {
		return fmt.Errorf("embedded broker: creating startup client: %w", err)
	}
	defer cl.Close()

	meta := kmsg.NewPtrMetadataRequest()
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("embedded broker at %s does not answer metadata requests: %w", b.addr, err)
	}
	if mresp.ClusterID != nil {
		b.clusterID = *mresp.ClusterID
	}

	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	alter.ValidateOnly = true
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeBroker
	alter.Resources = append(alter.Resources, res)
	if _, err := alter.RequestWith(ctx, cl); err != nil {
		return fmt.Errorf("embedded broker at %s: starting the log cleaner: %w", b.addr, err)
	}
	return nil
}

// Addr returns the host:port clients use to reach the broker, with the port
// resolved if Config.Listen asked for port 0.
func (b *Broker) Addr() string { return b.addr }

// ClusterID returns the cluster id the broker reports to clients.
func (b *Broker) ClusterID() string { return b.clusterID }

// Close stops the broker, closing client connections and, with a data
// directory, flushing its state to disk so the next Start sees it.
func (b *Broker) Close() {
	b.cluster.Close()
	forgetSASL(b.dataDir) // kfake saved the SASL users, PLAIN passwords in clear
}

// parseListen splits Listen into a bindable host and a port.
func parseListen(listen string) (string, int, error) {
	if listen == "" {
		return "127.0.0.1", 0, nil
	}
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("embedded broker listen address %q: want host:port, e.g. 127.0.0.1:9092: %w", listen, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("embedded broker listen address %q: port %q is not a number between 0 and 65535", listen, p)
	}
	if host == "" {
		return "", 0, errors.New("embedded broker listen address " + strconv.Quote(listen) +
			": a host is required because the broker advertises the address it binds; use e.g. 127.0.0.1:" + p)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "", 0, fmt.Errorf("embedded broker listen address %q: the broker advertises the address it binds, "+
			"so a wildcard address cannot be used; listen on a concrete address such as 127.0.0.1:%s", listen, p)
	}
	return host, port, nil
}

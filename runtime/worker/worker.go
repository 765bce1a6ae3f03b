package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/configprovider"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/kafkaclient"
	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/runtime/task"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// Config is what a Worker needs.
type Config struct {
	Worker  *config.Worker
	Host    *wasmhost.Host
	Offsets store.OffsetBackingStore
	// ConnectorOffsets opens source connectors' own offsets topics (offsets.storage.topic) in
	// distributed mode. Nil: the setting has no effect, as in a standalone worker.
	ConnectorOffsets ConnectorOffsetsFunc
	ClientOpts       []kgo.Opt // how to reach Kafka (seed brokers...)
	// Clients are the worker's client settings, checked at start, from which each task's
	// clients are built with the connector's overrides. Nil: none, and every override allowed.
	Clients *kafkaclient.Clients
	// Providers resolve the config-provider placeholders of the configs plugins are opened
	// with. Nil: none, placeholders are left as they are.
	Providers *configprovider.Providers
	Metrics   *metrics.Registry // nil: none
	Logger    *slog.Logger
	// Statuses receives the topics tasks use (KIP-558); nil when topic.tracking.enable is false.
	Statuses TopicStatuses
}

// Worker runs connectors' task-config generation and task loops.
type Worker struct {
	cfg       *config.Worker
	clients   *kafkaclient.Clients
	providers *configprovider.Providers
	host      *wasmhost.Host
	offsets   store.OffsetBackingStore
	// connectorOffsets opens connectors' own offsets topics; nil in standalone mode.
	connectorOffsets ConnectorOffsetsFunc
	opts             []kgo.Opt
	metrics          *metrics.Registry
	log              *slog.Logger
	topics           *topicWriter // nil: topic tracking is off

	mu    sync.Mutex
	tasks map[connect.TaskID]*running
}

// New returns a Worker.
func New(c Config) *Worker {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clients == nil {
		c.Clients, _ = kafkaclient.NewClients(config.Kafka{}) // no settings: nothing to refuse
	}
	w := &Worker{
		cfg: c.Worker, clients: c.Clients, providers: c.Providers, host: c.Host, offsets: c.Offsets,
		connectorOffsets: c.ConnectorOffsets, opts: c.ClientOpts, metrics: c.Metrics, log: c.Logger, tasks: map[connect.TaskID]*running{},
	}
	if c.Statuses != nil {
		w.topics = newTopicWriter(c.Statuses, c.Logger)
	}
	return w
}

// activeTopics returns what a task reports its topics to: nil when tracking is off.
func (w *Worker) activeTopics(id connect.TaskID) task.TopicRecorder {
	if w.topics == nil {
		return nil
	}
	return w.topics.recorder(id)
}

// SinkGroupID is the consumer group of a sink connector: consumer.override.group.id if the
// connector sets it, else Kafka Connect's connect-<name>.
func SinkGroupID(name string, cfg map[string]string) string {
	if g := cfg["consumer.override.group.id"]; g != "" {
		return g
	}
	return "connect-" + name
}

// Host returns the plugin host.
func (w *Worker) Host() *wasmhost.Host { return w.host }

// TaskConfigs asks a connector for its task configs (at most tasks.max), in a session of its own
// that is closed afterwards: a connector object lives only as long as this call.
func (w *Worker) TaskConfigs(ctx context.Context, name string, cfg map[string]string) ([]map[string]string, error) {
	p, _, err := w.ResolveConnector(cfg)
	if err != nil {
		return nil, err
	}
	maxTasks, err := TasksMax(cfg)
	if err != nil {
		return nil, err
	}
	resolved, err := w.resolve(cfg)
	if err != nil {
		return nil, err
	}
	env, release, err := w.withNet(wasmhost.Env{Connector: name, Task: -1, Logger: w.log}, resolved)
	if err != nil {
		return nil, err
	}
	defer release()
	sess := w.host.NewSession(env)
	defer sess.Close(context.WithoutCancel(ctx))
	conn, err := sess.Open(ctx, p, wire.RoleConnector, resolved)
	if err != nil {
		return nil, err
	}
	configs, err := conn.TaskConfigs(ctx, maxTasks)
	if err != nil {
		return nil, err
	}
	if len(configs) > maxTasks {
		return nil, fmt.Errorf("connector %s generated %d task configs, more than tasks.max=%d", name, len(configs), maxTasks)
	}
	// The task configs are stored: placeholders go back in place of the values they resolved to.
	return configprovider.Unresolve(cfg, configs), nil
}

// running is one task goroutine.
type running struct {
	connCfg, taskCfg map[string]string
	cancel           context.CancelFunc
	done             chan struct{}
	mu               sync.Mutex
	pauser           interface{ SetPaused(bool) } // set once the loop exists
	paused           bool
}

func (r *running) setPaused(p bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paused = p
	if r.pauser != nil {
		r.pauser.SetPaused(p)
	}
}

// Same reports whether the running task was started with these configs.
func (w *Worker) Same(id connect.TaskID, connCfg, taskCfg map[string]string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.tasks[id]
	return r != nil && maps.Equal(r.connCfg, connCfg) && maps.Equal(r.taskCfg, taskCfg)
}

// Tasks returns the IDs of the tasks this worker runs.
func (w *Worker) Tasks() []connect.TaskID {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]connect.TaskID, 0, len(w.tasks))
	for id := range w.tasks {
		ids = append(ids, id)
	}
	return ids
}

// StartTask starts a task loop and returns at once; the loop reports its states (including a
// FAILED state with a trace if it cannot start) through onState.
func (w *Worker) StartTask(id connect.TaskID, connCfg, taskCfg map[string]string, paused bool, onState task.StateFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{connCfg: connCfg, taskCfg: taskCfg, cancel: cancel, done: make(chan struct{}), paused: paused}
	w.mu.Lock()
	w.tasks[id] = r
	w.mu.Unlock()
	go func() {
		defer close(r.done)
		defer cancel()
		backoff := lostTransactionBackoff
		for {
			began := time.Now()
			err := w.runTask(ctx, id, r, onState)
			if err == nil || ctx.Err() != nil {
				return
			}
			if !task.TransactionLost(err) {
				w.log.Error("task failed", "connector", id.Connector, "task", id.Task, "err", err)
				return
			}
			// An exactly-once source task whose transaction the broker ended starts again from its
			// committed offsets, after a pause: a task that really lost its transactional.id to a
			// successor on another worker is a zombie, which its herder stops meanwhile (the
			// rebalance revokes it, or the member stops all work once the coordinator has been
			// silent for session.timeout.ms), so it does not fence the successor in turn.
			if time.Since(began) > lostTransactionBackoffMax {
				backoff = lostTransactionBackoff
			}
			w.log.Warn("the broker ended the task's transaction; starting the task again from its committed offsets",
				"connector", id.Connector, "task", id.Task, "in", backoff, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, lostTransactionBackoffMax)
		}
	}()
}

// The pause before an exactly-once source task whose transaction was lost starts again, doubled
// after each loss up to the maximum (and reset when the task ran that long).
const (
	lostTransactionBackoff    = 2 * time.Second
	lostTransactionBackoffMax = 30 * time.Second
)

// SetPaused pauses or resumes a running task.
func (w *Worker) SetPaused(id connect.TaskID, paused bool) {
	w.mu.Lock()
	r := w.tasks[id]
	w.mu.Unlock()
	if r != nil {
		r.setPaused(paused)
	}
}

// StopTasks stops tasks and waits for them up to task.shutdown.graceful.timeout.ms; a task that
// does not stop in time is abandoned (its plugin call is bounded by plugin.call.timeout.ms).
func (w *Worker) StopTasks(ids ...connect.TaskID) {
	var stopping []*running
	w.mu.Lock()
	for _, id := range ids {
		if r := w.tasks[id]; r != nil {
			r.cancel()
			stopping = append(stopping, r)
			delete(w.tasks, id)
		}
	}
	w.mu.Unlock()
	deadline := time.NewTimer(w.cfg.TaskShutdownTimeout)
	defer deadline.Stop()
	for _, r := range stopping {
		select {
		case <-r.done:
		case <-deadline.C:
			w.log.Warn("tasks did not stop within task.shutdown.graceful.timeout.ms; abandoning them", "timeout", w.cfg.TaskShutdownTimeout)
			return
		}
	}
}

// Stop stops every task.
func (w *Worker) Stop() { w.StopTasks(w.Tasks()...) }

func (w *Worker) runTask(ctx context.Context, id connect.TaskID, r *running, onState task.StateFunc) (err error) {
	p, typ, err := w.ResolveConnector(r.connCfg)
	// The task's metrics exist from the start, so that its plugins' calls are observed from OPEN
	// on and a task that fails to start shows as failed.
	var m *metrics.Task
	if w.metrics != nil {
		ctyp := typ
		if err != nil {
			ctyp = connect.TypeUnknown
		}
		m = w.metrics.Task(id, ctyp)
		defer m.Unregister()
		report := onState
		onState = func(st connect.State, trace string) { m.SetState(st); report(st, trace) }
	}
	started := false
	defer func() {
		if !started {
			w.metrics.TaskStartup(false)
		}
	}()
	fail := func(err error) error {
		onState(connect.StateFailed, err.Error())
		return err
	}
	if err != nil {
		return fail(err)
	}
	// Config-provider placeholders are resolved for the plugins only; r keeps the raw configs.
	connCfg, err := w.resolve(r.connCfg)
	if err != nil {
		return fail(fmt.Errorf("resolving the config of connector %s: %w", id.Connector, err))
	}
	taskCfg, err := w.resolve(r.taskCfg)
	if err != nil {
		return fail(fmt.Errorf("resolving the config of task %s: %w", id, err))
	}
	keySpec, valueSpec, err := w.converters(connCfg)
	if err != nil {
		return fail(err)
	}

	var producer *kgo.Client
	var txns *task.Transactions
	offsets := w.offsets
	if typ == connect.TypeSource {
		var closeOffsets func()
		if offsets, closeOffsets, err = w.OffsetStore(ctx, connCfg); err != nil {
			return fail(fmt.Errorf("connector %s: %w", id.Connector, err))
		}
		defer closeOffsets()
		if producer, txns, err = w.sourceProducer(id, connCfg, offsets); err != nil {
			return fail(err)
		}
		defer producer.Close()
		if txns != nil {
			if err := fenceOnStart(ctx, producer, id); err != nil {
				return fail(err)
			}
		}
		// Another worker may have run this task until a moment ago: read its last offsets first.
		if err := offsets.ReadToEnd(ctx); err != nil {
			return fail(fmt.Errorf("reading source offsets: %w", err))
		}
	}
	env, release, err := w.withNet(wasmhost.Env{
		Connector: id.Connector, Task: id.Task, Logger: w.log,
		Offsets: offsetReader{offsets, id.Connector}, Calls: callMetrics(m),
	}, connCfg)
	if err != nil {
		return fail(err)
	}
	defer release()
	sess := w.host.NewSession(env)
	defer sess.Close(context.Background())
	plugin, err := sess.Open(ctx, p, wire.RoleTask, taskCfg)
	if err != nil {
		return fail(fmt.Errorf("starting task %s: %w", id, err))
	}
	keyConv, err := sess.Open(ctx, keySpec.plugin, wire.RoleConverter, keySpec.config)
	if err != nil {
		return fail(fmt.Errorf("configuring key.converter %s: %w", keySpec.plugin.Class, err))
	}
	valueConv, err := sess.Open(ctx, valueSpec.plugin, wire.RoleConverter, valueSpec.config)
	if err != nil {
		return fail(fmt.Errorf("configuring value.converter %s: %w", valueSpec.plugin.Class, err))
	}
	chain, err := w.chain(ctx, sess, connCfg)
	if err != nil {
		return fail(err)
	}
	policy, closePolicy, err := w.errorPolicy(ctx, id, typ, connCfg)
	if err != nil {
		return fail(err)
	}
	defer closePolicy()
	r.mu.Lock()
	paused := r.paused
	r.mu.Unlock()
	switch typ {
	case connect.TypeSource:
		src := task.NewSource(task.SourceConfig{
			ID: id, Plugin: plugin, KeyConverter: keyConv, ValueConverter: valueConv, Producer: producer,
			Chain: chain, Converting: convertingChain(chain, keyConv, valueConv), Errors: policy,
			Offsets: offsetWriter{offsets}, FlushInterval: w.cfg.OffsetFlushInterval, FlushTimeout: w.cfg.OffsetFlushTimeout,
			Paused: paused, OnState: onState, Metrics: m, Logger: w.log, ActiveTopics: w.activeTopics(id),
			Transactions: txns,
		})
		w.attach(r, src)
		started = true
		w.metrics.TaskStartup(true)
		return src.Run(ctx)
	default:
		settings, err := w.client(id, connCfg, kafkaclient.Consumer)
		if err != nil {
			return fail(err)
		}
		sink := task.NewSink(task.SinkConfig{
			ID: id, Plugin: plugin, KeyConverter: keyConv, ValueConverter: valueConv,
			Chain: chain, Errors: policy,
			ClientOpts: slices.Concat(w.opts,
				[]kgo.Opt{kgo.ClientID(fmt.Sprintf("connector-consumer-%s-%d", id.Connector, id.Task))}, settings.Opts),
			MaxPollRecords: settings.MaxPollRecords,
			GroupID:        SinkGroupID(id.Connector, connCfg),
			Topics:         config.SplitList(connCfg["topics"]),
			TopicsRegex:    strings.TrimSpace(connCfg["topics.regex"]),
			FlushInterval:  w.cfg.OffsetFlushInterval,
			Paused:         paused, OnState: onState, Metrics: m, Logger: w.log,
			ActiveTopics: w.activeTopics(id),
		})
		w.attach(r, sink)
		started = true
		w.metrics.TaskStartup(true)
		return sink.Run(ctx)
	}
}

// sourceProducer creates a source task's producer: transactional, with how the task commits to
// offsets, when the worker runs source tasks exactly-once.
func (w *Worker) sourceProducer(id connect.TaskID, connCfg map[string]string, offsets store.OffsetBackingStore) (*kgo.Client, *task.Transactions, error) {
	settings, err := w.client(id, connCfg, kafkaclient.Producer)
	if err != nil {
		return nil, nil, err
	}
	opts := slices.Concat(w.opts, task.ProducerOpts(),
		[]kgo.Opt{kgo.ClientID(fmt.Sprintf("connector-producer-%s-%d", id.Connector, id.Task))}, settings.Opts)
	var txns *task.Transactions
	if w.ExactlyOnce() {
		if txns, err = w.transactionsOf(connCfg, offsets); err != nil {
			return nil, nil, fmt.Errorf("connector %s: %w", id.Connector, err)
		}
		opts = append(opts, kgo.TransactionalID(TransactionalID(w.cfg.GroupID, id)))
	}
	producer, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("creating producer: %w", err)
	}
	return producer, txns, nil
}

// client returns the settings of a task's client of the role: the worker's producer.*,
// consumer.* or admin.* keys, then the connector's <role>.override.* keys where
// connector.client.config.override.policy allows them (checked again here, as Kafka does, in
// case the worker's policy changed since the connector was created). Warnings about the
// connector's keys are logged; the worker's were logged at start.
func (w *Worker) client(id connect.TaskID, connCfg map[string]string, role kafkaclient.Role) (*kafkaclient.Client, error) {
	c, err := w.clients.ForConnector(connCfg, role)
	if err != nil {
		return nil, fmt.Errorf("connector %s %s client settings: %w", id.Connector, role, err)
	}
	for _, warning := range c.Warnings {
		w.log.Warn("Kafka client setting not applied", "connector", id.Connector, "task", id.Task, "setting", warning)
	}
	return c, nil
}

func (w *Worker) attach(r *running, p interface{ SetPaused(bool) }) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pauser = p
	p.SetPaused(r.paused)
}

// taskCalls lets a task's metrics observe its session's guest calls (wasmhost.CallMetrics).
type taskCalls struct{ m *metrics.Task }

func (c taskCalls) Plugin(plugin, module string) wasmhost.PluginCalls {
	return c.m.Plugin(plugin, module)
}

// callMetrics returns the observer of a task's guest calls, nil without metrics.
func callMetrics(m *metrics.Task) wasmhost.CallMetrics {
	if m == nil {
		return nil
	}
	return taskCalls{m}
}

// offsetReader gives a plugin session read access to its connector's offsets.
type offsetReader struct {
	offsets   store.OffsetBackingStore
	connector string
}

func (o offsetReader) Offset(partition []byte) ([]byte, bool) {
	if !json.Valid(partition) {
		return nil, false
	}
	return o.offsets.Get(o.connector, partition)
}

type offsetWriter struct{ offsets store.OffsetBackingStore }

func (o offsetWriter) WriteOffsets(ctx context.Context, connector string, offsets map[string][]byte) error {
	return o.offsets.Put(ctx, connector, offsetEntries(offsets))
}

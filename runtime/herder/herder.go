package herder

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/wasmconnect/wasmconnect/runtime/cluster"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/runtime/worker"
)

// Config is what a Herder needs.
type Config struct {
	WorkerID  string // <advertised host>:<port>, written with every status
	ClusterID string // the Kafka cluster id, for GET /
	Worker    *worker.Worker
	Configs   *store.ConfigStore
	Statuses  *store.StatusStore
	Admin     *kadm.Client // sink connectors' consumer groups
	Logger    *slog.Logger
	// Metrics receives connector-metrics for the connectors this worker leads, and connector
	// startups; nil: none.
	Metrics *metrics.Registry

	// Group makes this worker a member of a Connect cluster (its Handler is set by the herder).
	// Nil runs the worker alone: it leads itself and runs everything (standalone mode).
	Group *cluster.Config
	// SyncTimeout is worker.sync.timeout.ms: how long a worker may take to read the config topic up
	// to the offset of a new assignment before it asks for another rebalance.
	SyncTimeout time.Duration
	// AskLeaderToFence sends the internal PUT /connectors/{name}/fence to the leader at leaderURL
	// (exactly-once source support, see fencing.go). Nil: a worker that does not lead cannot ask,
	// and its exactly-once source tasks wait until it leads.
	AskLeaderToFence func(ctx context.Context, leaderURL, connector string) error
	// ConfigTransactionalID, when set (exactly.once.source.support preparing or enabled), makes the
	// leader write the config topic in transactions with this id (Kafka's
	// connect-cluster-<group.id>): a new leader fences its predecessor's writer.
	ConfigTransactionalID string
}

// Herder keeps the connectors and tasks this worker runs equal to the config topic.
type Herder struct {
	cfg     Config
	log     *slog.Logger
	wake    chan struct{}
	calls   chan func()   // run on the loop: requests that touch loop state
	closing chan struct{} // closed when the loop has stopped serving calls
	result  chan generated

	member *cluster.Member // nil without a group
	// groupState is the member's State (nil without a group); a field so that tests can stand in
	// for a group in the middle of a rebalance.
	groupState func() cluster.State
	// changeHooks are told every config-topic change (see handleChanges); set before Run.
	changeHooks []func(store.Change)

	// Loop state: touched only by the loop goroutine.
	connectors map[string]*connectorState // the connectors this worker leads (all, on the leader)
	generation int32
	assigned   *cluster.Allocation // what the group gave this worker; nil without a group: everything
	fencing    map[string]bool     // connectors whose zombie fencing is under way (requestFencing)

	fenceMu sync.Mutex  // one round of fencing at a time (fence)
	claimed atomic.Bool // the config topic's leader writes are claimed (ConfigTransactionalID)

	started  atomic.Bool   // the loop is running
	joined   chan struct{} // closed once the group first answered (Joined)
	joinOnce sync.Once
	role     atomic.Pointer[role]         // leadership, for REST requests on other goroutines
	lastWork atomic.Pointer[cluster.Work] // the work of the last assignment this worker computed as leader
}

// role is what this worker knows of the group's leader.
type role struct {
	leader    bool
	leaderURL string
	err       error // why the group gave this worker no work, if it did not
}

// connectorState is the herder's memory of one connector.
type connectorState struct {
	applied    map[string]string // the config the current task configs were generated from; nil: generate
	generating bool
	failed     bool
	reported   connect.State
	m          *metrics.Connector // nil without metrics
}

// generated is the result of asking a connector for its task configs.
type generated struct {
	name    string
	config  map[string]string
	configs []map[string]string
	err     error
}

// New returns a Herder; Run starts it.
func New(cfg Config) *Herder {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SyncTimeout <= 0 {
		cfg.SyncTimeout = 3 * time.Second
	}
	h := &Herder{
		cfg:        cfg,
		log:        cfg.Logger,
		wake:       make(chan struct{}, 1),
		calls:      make(chan func()),
		closing:    make(chan struct{}),
		result:     make(chan generated),
		connectors: map[string]*connectorState{},
		fencing:    map[string]bool{},
		joined:     make(chan struct{}),
	}
	if cfg.Group == nil {
		h.role.Store(&role{leader: true})
	} else {
		g := *cfg.Group
		g.Handler = h
		h.member = cluster.New(g)
		h.groupState = h.member.State
		h.role.Store(&role{})
		h.assigned = &cluster.Allocation{}
	}
	h.followClusterLoggerLevels()
	return h
}

// Joined is closed once the worker knows its place in the group (its first assignment, or the
// group's refusal), when GET /health stops answering "starting"; at Run without a group. The worker
// holds its background plugin compiles back until then (for a few seconds at most), so that they do
// not slow its start.
func (h *Herder) Joined() <-chan struct{} { return h.joined }

func (h *Herder) markJoined() { h.joinOnce.Do(func() { close(h.joined) }) }

// Poke asks the loop to look at the config topic again.
func (h *Herder) Poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Run reconciles until ctx is cancelled, then stops every task gracefully (committing offsets) and
// leaves the group, so that the other workers take the work over at once.
func (h *Herder) Run(ctx context.Context) error {
	h.cfg.Configs.OnChange(h.Poke)
	memberDone := make(chan error, 1)
	memberCtx, stopMember := context.WithCancel(context.Background())
	defer stopMember()
	if h.member != nil {
		go func() { memberDone <- h.member.Run(memberCtx) }()
	}
	h.started.Store(true)
	if h.member == nil {
		h.markJoined()
	}
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		h.reconcile(ctx)
		select {
		case <-ctx.Done():
			h.shutdown()
			if h.member != nil {
				// Leaving the group revokes what is left; the loop no longer serves calls, so the
				// member's callbacks run inline (this goroutine only waits for the member).
				close(h.closing)
				stopMember()
				if err := <-memberDone; err != nil {
					h.log.Warn("leaving the group", "err", err)
				}
			}
			return nil
		case err := <-memberDone:
			// Run returns early only for a configuration error (say, a group.id that a consumer group
			// uses): the worker cannot be part of the cluster, which the operator must fix.
			h.log.Error("group membership stopped", "err", err)
			h.role.Store(&role{err: err})
			h.markJoined()
			memberDone = nil
		case <-h.wake:
		case <-tick.C:
		case f := <-h.calls:
			f()
		case g := <-h.result:
			h.applyGenerated(ctx, g)
		}
	}
}

// onLoop runs f on the loop goroutine and waits for it.
func (h *Herder) onLoop(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case h.calls <- func() { f(); close(done) }:
	case <-h.closing:
		f()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Herder) shutdown() {
	ids := h.cfg.Worker.Tasks()
	h.cfg.Worker.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, id := range ids {
		h.putTaskStatus(ctx, id, connect.StateUnassigned, "")
	}
	for name, cs := range h.connectors {
		if cs.reported != "" {
			h.putConnectorStatus(ctx, name, cs, connect.StateUnassigned, "")
		}
	}
}

// reconcile makes the running connectors and tasks match the config snapshot: on the leader, the
// connectors (task configs, connector statuses); on every worker, the tasks assigned to it.
func (h *Herder) reconcile(ctx context.Context) {
	h.handleChanges(ctx)
	snap := h.cfg.Configs.Snapshot()
	if h.isLeader() {
		h.leadConnectors(ctx, snap)
	} else if len(h.connectors) > 0 {
		h.dropConnectors() // a new leader took over; it regenerates
	}
	h.runTasks(ctx, snap)
}

// changeHandlers are the config-topic changes that are events rather than state (the herder reads
// state from the snapshot): restart requests, cluster-wide logger levels. The herder drains the
// store's change queue and hands each change to the handler for its kind.
func (h *Herder) handleChanges(ctx context.Context) {
	for _, c := range h.cfg.Configs.Changes() {
		switch c.Kind {
		case store.RestartRequested:
			h.applyRestart(ctx, c.Restart)
		}
		for _, f := range h.changeHooks {
			f(c)
		}
	}
}

// leadConnectors is the leader's part: Kafka Connect runs each connector on the worker it is
// assigned to, but a wasmconnect connector object only lives while it validates and generates task
// configs, and every config-topic write goes through the leader anyway; so the leader does this for
// all connectors, and connector statuses name the leader.
func (h *Herder) leadConnectors(ctx context.Context, snap store.ConfigSnapshot) {
	h.ensureSessionKey(ctx, snap)
	for name, cs := range h.connectors {
		if _, ok := snap.Connectors[name]; !ok {
			cs.m.Unregister()
			delete(h.connectors, name)
			if err := h.cfg.Statuses.DeleteConnector(ctx, name); err != nil {
				h.log.Warn("deleting statuses of removed connector failed", "connector", name, "err", err)
			}
		}
	}
	for name, cfg := range snap.Connectors {
		cs := h.connectors[name]
		if cs == nil {
			cs = &connectorState{m: h.connectorMetrics(name, cfg)}
			h.connectors[name] = cs
		}
		cs.m.SetTasks(len(snap.Tasks[name]))
		target := targetOf(snap, name)
		if target == connect.TargetStopped {
			h.stopConnector(ctx, name, cs, len(snap.Tasks[name]) > 0)
			continue
		}
		_, inconsistent := snap.Inconsistent[name]
		if !cs.generating && (!maps.Equal(cs.applied, cfg) || inconsistent) {
			h.generate(ctx, name, cfg)
			cs.generating = true
		}
		if cs.applied != nil && !cs.failed {
			want := connect.StateRunning
			if target == connect.TargetPaused {
				want = connect.StatePaused
			}
			if cs.reported != want {
				h.putConnectorStatus(ctx, name, cs, want, "")
			}
		}
	}
	// A connector or task count the last assignment did not know needs a rebalance to be placed.
	if h.member != nil {
		if last := h.lastWork.Load(); last != nil && !sameWork(*last, workOf(snap)) {
			h.member.Rejoin("the connectors or their task counts changed")
		}
	}
}

// runTasks starts, pauses and stops this worker's tasks to match the snapshot and the assignment.
func (h *Herder) runTasks(ctx context.Context, snap store.ConfigSnapshot) {
	mine := func(connect.TaskID) bool { return true }
	if h.assigned != nil {
		set := make(map[connect.TaskID]bool, len(h.assigned.Tasks))
		for _, id := range h.assigned.Tasks {
			set[id] = true
		}
		mine = func(id connect.TaskID) bool { return set[id] }
	}
	desired := map[connect.TaskID]desiredTask{}
	for name, cfg := range snap.Connectors {
		target := targetOf(snap, name)
		if target == connect.TargetStopped {
			continue
		}
		for i, tc := range snap.Tasks[name] {
			if id := (connect.TaskID{Connector: name, Task: i}); mine(id) {
				desired[id] = desiredTask{connCfg: cfg, taskCfg: tc, paused: target == connect.TargetPaused}
			}
		}
	}

	var stop []connect.TaskID
	for _, id := range h.cfg.Worker.Tasks() {
		d, ok := desired[id]
		if !ok || !h.cfg.Worker.Same(id, d.connCfg, d.taskCfg) {
			stop = append(stop, id)
		}
	}
	if len(stop) > 0 {
		h.cfg.Worker.StopTasks(stop...)
		for _, id := range stop {
			if _, exists := snap.Connectors[id.Connector]; exists {
				h.putTaskStatus(ctx, id, connect.StateUnassigned, "")
			}
		}
	}
	running := map[connect.TaskID]bool{}
	for _, id := range h.cfg.Worker.Tasks() {
		running[id] = true
	}
	for _, id := range slices.SortedFunc(maps.Keys(desired), compareTaskIDs) {
		d := desired[id]
		if running[id] {
			h.cfg.Worker.SetPaused(id, d.paused)
			continue
		}
		if h.awaitsFencing(snap, id.Connector) {
			h.requestFencing(id.Connector)
			continue
		}
		h.cfg.Worker.StartTask(id, d.connCfg, d.taskCfg, d.paused, h.taskStateFunc(id))
	}
}

type desiredTask struct {
	connCfg, taskCfg map[string]string
	paused           bool
}

func compareTaskIDs(a, b connect.TaskID) int {
	if a.Connector != b.Connector {
		if a.Connector < b.Connector {
			return -1
		}
		return 1
	}
	return a.Task - b.Task
}

func targetOf(snap store.ConfigSnapshot, name string) connect.TargetState {
	if t, ok := snap.TargetStates[name]; ok && t != "" {
		return connect.TargetState(t)
	}
	return connect.TargetStarted
}

// generate asks the connector for task configs off the loop, so plugin code never blocks it.
func (h *Herder) generate(ctx context.Context, name string, cfg map[string]string) {
	go func() {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		configs, err := h.cfg.Worker.TaskConfigs(cctx, name, cfg)
		select {
		case h.result <- generated{name: name, config: cfg, configs: configs, err: err}:
		case <-ctx.Done():
		}
	}()
}

// applyGenerated writes new task configs if they differ from the stored ones (Kafka Connect's
// rule: tasks restart only when their configs change).
func (h *Herder) applyGenerated(ctx context.Context, g generated) {
	cs := h.connectors[g.name]
	if cs == nil {
		return
	}
	cs.generating = false
	snap := h.cfg.Configs.Snapshot()
	current, ok := snap.Connectors[g.name]
	if !ok || !maps.Equal(current, g.config) {
		return // changed or deleted meanwhile: the next reconcile generates again
	}
	cs.applied = g.config
	h.cfg.Metrics.ConnectorStartup(g.err == nil)
	if g.err != nil {
		cs.failed = true
		h.log.Error("connector failed", "connector", g.name, "err", g.err)
		h.putConnectorStatus(ctx, g.name, cs, connect.StateFailed, g.err.Error())
		return
	}
	cs.failed = false
	if !slices.EqualFunc(g.configs, snap.Tasks[g.name], maps.Equal) {
		err := h.cfg.Configs.PutTaskConfigs(ctx, g.name, g.configs)
		var tooLarge *store.RecordTooLargeError
		switch {
		case errors.As(err, &tooLarge):
			// Retrying cannot help: the connector fails until its config changes or it restarts.
			cs.failed = true
			h.log.Error("connector failed: its task configs do not fit in the config topic", "connector", g.name, "err", err)
			h.putConnectorStatus(ctx, g.name, cs, connect.StateFailed, "Task configs do not fit in the config topic: "+err.Error())
		case err != nil:
			h.log.Error("writing task configs failed; will retry", "connector", g.name, "err", err)
			cs.applied = nil
		}
	}
}

func (h *Herder) stopConnector(ctx context.Context, name string, cs *connectorState, hasTasks bool) {
	cs.applied = nil
	cs.failed = false
	if hasTasks {
		// Kafka Connect's STOPPED state: the connector has no tasks at all.
		if err := h.cfg.Configs.PutTaskConfigs(ctx, name, nil); err != nil {
			h.log.Error("clearing task configs of stopped connector failed", "connector", name, "err", err)
		}
	}
	if cs.reported != connect.StateStopped {
		h.putConnectorStatus(ctx, name, cs, connect.StateStopped, "")
	}
}

func (h *Herder) putConnectorStatus(ctx context.Context, name string, cs *connectorState, st connect.State, trace string) {
	err := h.cfg.Statuses.PutConnector(ctx, name, store.Status{
		State: string(st), Trace: trace, WorkerID: h.cfg.WorkerID, Generation: h.generation,
	})
	if err != nil {
		h.log.Warn("writing connector status failed", "connector", name, "state", st, "err", err)
		return
	}
	cs.reported = st
	cs.m.SetState(st)
}

// connectorMetrics returns the connector-metrics handle of a connector this worker leads; nil
// without metrics.
func (h *Herder) connectorMetrics(name string, cfg map[string]string) *metrics.Connector {
	if h.cfg.Metrics == nil {
		return nil
	}
	p, typ, _ := h.cfg.Worker.ResolveConnector(cfg)
	class := p.Class
	if class == "" {
		class = cfg["connector.class"]
	}
	states := func() map[int]connect.State {
		out := map[int]connect.State{}
		for i, st := range h.cfg.Statuses.Tasks(name) {
			out[i] = connect.State(st.State)
		}
		return out
	}
	return h.cfg.Metrics.Connector(name, metrics.ConnectorInfo{Class: class, Type: typ, Version: p.Version, TaskStates: states})
}

// dropConnectors forgets the connectors this worker led, and their metrics.
func (h *Herder) dropConnectors() {
	for _, cs := range h.connectors {
		cs.m.Unregister()
	}
	h.connectors = map[string]*connectorState{}
}

func (h *Herder) putTaskStatus(ctx context.Context, id connect.TaskID, st connect.State, trace string) {
	s := store.Status{State: string(st), Trace: trace, WorkerID: h.cfg.WorkerID, Generation: h.generation}
	var err error
	if st == connect.StateFailed || st == connect.StateUnassigned {
		err = h.cfg.Statuses.PutTaskSafe(ctx, id.Connector, id.Task, s)
	} else {
		err = h.cfg.Statuses.PutTask(ctx, id.Connector, id.Task, s)
	}
	if err != nil {
		h.log.Warn("writing task status failed", "connector", id.Connector, "task", id.Task, "state", st, "err", err)
	}
}

// taskStateFunc returns the callback a task loop reports its states through.
func (h *Herder) taskStateFunc(id connect.TaskID) func(connect.State, string) {
	var mu sync.Mutex
	return func(st connect.State, trace string) {
		mu.Lock()
		defer mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.putTaskStatus(ctx, id, st, trace)
	}
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Defaults, as Kafka Connect's DistributedConfig.
const (
	DefaultSessionTimeout    = 10 * time.Second
	DefaultHeartbeatInterval = 3 * time.Second
	DefaultRebalanceTimeout  = 60 * time.Second
)

// Config configures a Member. Zero durations take the Kafka Connect defaults, except MaxDelay.
type Config struct {
	// Client talks to the brokers; required. kgo finds the group coordinator for group requests
	// and follows it when it moves (NOT_COORDINATOR). The Member does not close the client.
	Client *kgo.Client
	// GroupID is group.id; required. It must differ from every consumer group id, including
	// the sink connectors' connect-<name>.
	GroupID string
	// URL is the worker's advertised REST URL, which the leader hands to every member.
	URL string
	// Protocol is connect.protocol: eager, compatible or sessioned (the default).
	Protocol string
	// SessionTimeout is session.timeout.ms (10 s). It is also how long heartbeats may fail
	// before the worker stops its work on its own (KAFKA-9184).
	SessionTimeout time.Duration
	// HeartbeatInterval is heartbeat.interval.ms (3 s).
	HeartbeatInterval time.Duration
	// RebalanceTimeout is rebalance.timeout.ms (60 s), sent in JoinGroup.
	RebalanceTimeout time.Duration
	// MaxDelay is scheduled.rebalance.max.delay.ms: how long the work of a departed worker
	// stays unassigned in case it returns. Unlike the durations above, zero means zero: lost
	// work is reassigned at once, as in Kafka.
	MaxDelay time.Duration
	// Settings are the settings that must agree across the cluster (config.Cluster.Shared, the
	// config.SharedKeys a worker sets). A wasmconnect leader refuses workers whose values differ
	// from its own for a key both report.
	Settings map[string]string
	// Version is the wasmconnect version, shown by GET /workers.
	Version string
	// Logger receives the Member's logs; nil means slog.Default().
	Logger *slog.Logger
	// Handler runs the work; required.
	Handler Handler
	// Rebalances is told when rebalances start and complete (Kafka's
	// connect-worker-rebalance-metrics); nil: no one.
	Rebalances RebalanceObserver
	// Clock is the time the assignor reads (scheduled rebalances); nil means time.Now.
	Clock func() time.Time
	// RefusedBackoff is how long a worker refused by the leader (settings mismatch) waits
	// before it tries to join again; zero means a random 10–30 s.
	RefusedBackoff time.Duration
}

// Handler is the worker side of membership. The Member calls it from the goroutine running
// Run, one call at a time; heartbeats continue meanwhile.
type Handler interface {
	// ConfigOffset is this worker's config topic position (last offset read + 1, -1 if none),
	// sent in every JoinGroup.
	ConfigOffset() int64
	// LeaderSnapshot is called on the leader to compute an assignment. It reads the config
	// topic to the end and reports the work. If the result is behind a member's config offset,
	// it is called once more; if that is still behind, or both calls fail, every member gets
	// CONFIG_MISMATCH and rejoins.
	LeaderSnapshot(ctx context.Context) (Work, error)
	// OnRevoked stops the given connectors and tasks, and returns once they have stopped: the
	// Member rejoins only afterwards, so another worker never starts them while they run here.
	// It is also called with everything the worker runs when it stops, when the coordinator
	// has been unreachable for SessionTimeout, when the leader refuses the worker, and before
	// an eager rebalance.
	OnRevoked(ctx context.Context, revoked Allocation)
	// OnAssigned reports a completed rebalance: the worker's full assignment and what changed.
	// Before starting new work the handler reads the config topic up to a.ConfigOffset (Kafka's
	// worker.sync.timeout.ms applies); if it cannot, or reads past it, it calls Member.Rejoin.
	// When a.Err is a CONFIG_MISMATCH the handler reads to the end before returning; the
	// Member then rejoins.
	OnAssigned(ctx context.Context, a Assignment)
}

// RebalanceObserver watches this worker's rebalances (runtime/metrics implements it).
type RebalanceObserver interface {
	// RebalanceStarted is called when the worker starts a JoinGroup round.
	RebalanceStarted()
	// RebalanceCompleted is called when the worker has applied the work of a generation.
	RebalanceCompleted(generation int32)
}

// Assignment is the outcome of one rebalance for this worker.
type Assignment struct {
	Generation   int32
	MemberID     string
	LeaderID     string
	LeaderURL    string
	Leader       bool   // this worker is the leader
	Protocol     string // the sub-protocol in use
	ConfigOffset int64  // the config offset the assignment was computed at
	Owned        Allocation
	Assigned     Allocation // new in this round
	Revoked      Allocation // taken away in this round (already passed to OnRevoked)
	Delay        time.Duration
	// Err is nil, or an *AssignmentError: the leader gave no work (CONFIG_MISMATCH, or a
	// wasmconnect leader refused this worker).
	Err error
}

// Sentinels matched by *AssignmentError with errors.Is.
var (
	// ErrConfigMismatch is Kafka's CONFIG_MISMATCH: the leader's config is behind a member's.
	ErrConfigMismatch = errors.New("the group leader is behind the config topic (CONFIG_MISMATCH)")
	// ErrRefused: a wasmconnect leader refused this worker, e.g. for different settings.
	ErrRefused = errors.New("the group leader refused this worker")
)

// AssignmentError is an assignment that carries an error instead of work.
type AssignmentError struct {
	Code    int16
	Message string // the wasmconnect extension's reason; "" for Kafka's CONFIG_MISMATCH
	Offset  int64  // the group's config offset
}

func (e *AssignmentError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("the group leader could not assign work: its config is behind offset %d (CONFIG_MISMATCH); "+
		"if this repeats, check that all workers use the same config.storage.topic", e.Offset)
}

// Is makes errors.Is(err, ErrRefused) and errors.Is(err, ErrConfigMismatch) work.
func (e *AssignmentError) Is(target error) bool {
	return (target == ErrRefused && e.Message != "") || (target == ErrConfigMismatch && e.Message == "")
}

// State is a snapshot of a Member, for logs and the REST API.
type State struct {
	GroupID       string
	MemberID      string // "" while not a member
	Generation    int32  // of the last completed rebalance; -1 before the first
	Protocol      string
	LeaderID      string
	LeaderURL     string
	Leader        bool
	Assignment    Allocation
	ConfigOffset  int64     // of the last assignment
	NextRebalance time.Time // a rebalance the leader scheduled (lost work), zero if none
	// Err says why the worker has no work from the last rebalance: the leader's refusal
	// (settings mismatch) or a CONFIG_MISMATCH; nil after a successful one.
	Err error
	// Workers lists, on the leader, every member as of its last assignment (for GET /workers).
	// The leader records it when it assigns, before the others have received their part.
	Workers []Worker
	// Rebalancing is true from JoinGroup's answer until the round's assignment has been handed to
	// the Handler (or the round failed): the window in which the leader has assigned work that
	// this worker has not taken up yet. A worker asked about work the leader has just given it
	// waits for its part.
	Rebalancing bool
}

// Worker is one group member as the leader saw it.
type Worker struct {
	MemberID     string
	URL          string
	Version      string // wasmconnect version; "" for Java workers
	ConfigOffset int64
	Assignment   Allocation
	Refused      string // why the leader refused it, "" if it did not
}

// Member is one worker's membership in a Connect group. Create it with New and call Run.
type Member struct {
	cfg       Config
	log       *slog.Logger
	protocols []string
	cfgErr    error
	running   atomic.Bool
	wake      chan struct{}

	mu          sync.Mutex
	memberID    string
	generation  int32 // current generation, -1 none
	stable      bool  // synced; heartbeat demands apply
	syncing     bool  // JoinGroup answered, the assignment not applied yet (State.Rebalancing)
	lastContact time.Time
	hbDemand    error // a heartbeat's demand to rejoin, for hbGen
	hbGen       int32
	hbFatal     error
	rejoinWhy   string
	rejoinSeq   uint64
	state       State

	// Owned by the goroutine running Run.
	owned         workSet
	snapshot      *MemberAssignment // last assignment applied (leader, offset) for the metadata
	protocol      string            // of the last completed rebalance
	appliedGen    int32
	lastCompleted int32
	scheduled     time.Time
	failures      int
	coop          coopState
	leaving       bool // stopping: the last rebalance hands the work over (see shutdown)
}

// New returns a Member for cfg. Configuration errors are returned by Run.
func New(cfg Config) *Member {
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.RebalanceTimeout <= 0 {
		cfg.RebalanceTimeout = DefaultRebalanceTimeout
	}
	if cfg.MaxDelay < 0 {
		cfg.MaxDelay = 0
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	m := &Member{
		cfg:           cfg,
		log:           cfg.Logger.With("group_id", cfg.GroupID),
		wake:          make(chan struct{}, 1),
		generation:    -1,
		owned:         newWorkSet(),
		appliedGen:    -1,
		lastCompleted: -1,
		coop:          newCoopState(),
	}
	m.protocols, m.cfgErr = Protocols(cfg.Protocol)
	switch {
	case cfg.Client == nil:
		m.cfgErr = errors.New("cluster: Config.Client is required")
	case cfg.GroupID == "":
		m.cfgErr = errors.New("cluster: group.id is required")
	case cfg.Handler == nil:
		m.cfgErr = errors.New("cluster: Config.Handler is required")
	}
	m.state = State{GroupID: cfg.GroupID, Generation: -1, ConfigOffset: -1}
	return m
}

// State returns a snapshot of the membership.
func (m *Member) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.state
	s.Workers = append([]Worker(nil), s.Workers...)
	return s
}

// Rejoin asks for a rebalance, e.g. after this worker's task configs changed or it could not
// catch up with an assignment's config offset. It does not block. Note that in a stable group
// a follower's JoinGroup with unchanged metadata does not start a rebalance (the coordinator
// answers with the current generation); the leader's always does.
func (m *Member) Rejoin(reason string) {
	m.mu.Lock()
	m.rejoinWhy = reason
	m.rejoinSeq++
	m.mu.Unlock()
	m.notify()
}

func (m *Member) notify() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// plan is what the loop does next.
type plan struct {
	rejoin bool
	after  time.Duration
	why    string
}

// Run joins the group and stays in it until ctx is cancelled; then it stops the work
// (OnRevoked), leaves the group, so that the others rebalance at once, and returns nil. It
// returns an error only when membership is impossible: a configuration error, a closed client,
// or a group.id used by a group of another protocol type; the work is stopped first then too.
func (m *Member) Run(ctx context.Context) error {
	if m.cfgErr != nil {
		return m.cfgErr
	}
	if !m.running.CompareAndSwap(false, true) {
		return errors.New("cluster: Member.Run called twice")
	}
	hbCtx, stopHB := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { m.heartbeatLoop(hbCtx) })
	defer func() {
		stopHB()
		wg.Wait()
	}()

	m.touch()
	p := plan{rejoin: true, why: "worker starting"}
	for {
		if ctx.Err() != nil {
			return m.shutdown(ctx)
		}
		var err error
		switch {
		case p.rejoin && p.after > 0:
			if m.sleep(ctx, p.after) {
				p.after = 0
			}
		case p.rejoin:
			p, err = m.rebalance(ctx, p.why)
		default:
			p, err = m.idle(ctx)
		}
		if err != nil {
			m.revokeAll(context.WithoutCancel(ctx), "membership failed")
			m.mu.Lock()
			m.state.Err, m.state.MemberID, m.state.Leader, m.state.Workers = err, "", false, nil
			m.mu.Unlock()
			m.log.Error("leaving the Connect group for good", "error", err)
			return err
		}
	}
}

// idle waits in a stable group for a reason to rejoin.
func (m *Member) idle(ctx context.Context) (plan, error) {
	for {
		sched, stopSched := timerAt(m.scheduled)
		zombie, stopZombie := m.zombieTimer()
		var p plan
		var err error
		done := true
		select {
		case <-ctx.Done():
		case <-m.wake:
			why, forgotten, fatal := m.takeDemand()
			if forgotten {
				m.forgotten(ctx)
			}
			p, err, done = plan{rejoin: why != "", why: why}, fatal, why != "" || fatal != nil
		case <-sched:
			m.scheduled = time.Time{}
			p = plan{rejoin: true, why: "scheduled rebalance (the delay for lost work is over)"}
		case <-zombie:
			if done = m.zombie(ctx); done {
				p = plan{rejoin: true, why: "coordinator unreachable for longer than the session timeout"}
			}
		}
		stopSched()
		stopZombie()
		if done {
			return p, err
		}
	}
}

// sleep waits d (a backoff), still watching for zombie work; false if ctx ended first.
func (m *Member) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		zombie, stopZombie := m.zombieTimer()
		select {
		case <-ctx.Done():
			stopZombie()
			return false
		case <-t.C:
			stopZombie()
			return true
		case <-zombie:
			m.zombie(ctx)
		}
	}
}

// await runs a group request while still watching for zombie work, so that the loop keeps its
// single goroutine for Handler calls.
func await[R any](ctx context.Context, m *Member, do func(context.Context) (R, error)) (R, error) {
	type result struct {
		r   R
		err error
	}
	ch := make(chan result, 1)
	go func() {
		r, err := do(ctx)
		ch <- result{r, err}
	}()
	for {
		zombie, stopZombie := m.zombieTimer()
		select {
		case res := <-ch:
			stopZombie()
			return res.r, res.err
		case <-zombie:
			m.zombie(ctx)
		}
	}
}

// timerAt returns a channel that fires at t, or nil if t is zero.
func timerAt(t time.Time) (<-chan time.Time, func()) {
	if t.IsZero() {
		return nil, func() {}
	}
	tm := time.NewTimer(time.Until(t))
	return tm.C, func() { tm.Stop() }
}

// zombieTimer fires when the coordinator has not answered for SessionTimeout while this worker
// runs work; its channel is nil when the worker runs nothing.
func (m *Member) zombieTimer() (<-chan time.Time, func()) {
	if m.owned.empty() {
		return nil, func() {}
	}
	m.mu.Lock()
	at := m.lastContact.Add(m.cfg.SessionTimeout)
	m.mu.Unlock()
	return timerAt(at)
}

// zombie stops all work if the coordinator has been silent for longer than the session timeout:
// by now it has dropped this worker and the leader may give the work to others (KAFKA-9184).
func (m *Member) zombie(ctx context.Context) bool {
	m.mu.Lock()
	silent := time.Since(m.lastContact)
	m.mu.Unlock()
	if silent < m.cfg.SessionTimeout || m.owned.empty() {
		return false
	}
	m.log.Warn("group coordinator unreachable for longer than the session timeout; stopping all work so that it cannot run twice",
		"silent", silent.Round(time.Millisecond), "session_timeout", m.cfg.SessionTimeout)
	m.revokeAll(ctx, "coordinator unreachable")
	return true
}

// takeDemand returns why the loop must rejoin (a Rejoin call or a heartbeat's answer), and
// applies what a heartbeat's error implies for the member id and generation; forgotten says that
// the coordinator no longer knows this member (UNKNOWN_MEMBER_ID).
func (m *Member) takeDemand() (why string, forgotten bool, fatal error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hbFatal != nil {
		return "", false, m.hbFatal
	}
	if m.rejoinWhy != "" {
		why := m.rejoinWhy
		m.rejoinWhy = ""
		return why, false, nil
	}
	demand := m.hbDemand
	m.hbDemand = nil
	if demand == nil || !m.stable || m.hbGen != m.generation {
		return "", false, nil
	}
	switch {
	case errors.Is(demand, kerr.UnknownMemberID):
		m.memberID, m.generation = "", -1
		forgotten = true
	case errors.Is(demand, kerr.IllegalGeneration), errors.Is(demand, kerr.FencedInstanceID):
		m.generation = -1
	}
	return "heartbeat: " + demand.Error(), forgotten, nil
}

// forgotten stops all work when the coordinator answers that it does not know this member: it
// dropped the member (a session that expired, or a coordinator that lost the group's state, as
// the embedded broker does when it restarts), and a rebalance without it may already have given
// its work to others. Keeping the work until the next assignment, as a member still in the group
// does, would run it twice until then (found by TestChaos: after a broker restart, a worker that
// rejoined first led a group of one and took every task).
func (m *Member) forgotten(ctx context.Context) {
	m.revokeAll(ctx, "the group coordinator no longer knows this member")
}

// heartbeatLoop heartbeats every HeartbeatInterval whenever the member has a generation,
// including while it waits in JoinGroup or SyncGroup: Kafka counts those heartbeats (and
// answers REBALANCE_IN_PROGRESS), and they keep a member that is waiting for a slow rebalance
// from being timed out.
func (m *Member) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(m.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.mu.Lock()
		id, gen := m.memberID, m.generation
		m.mu.Unlock()
		if id == "" || gen < 0 {
			continue
		}
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.MemberID, req.Generation = m.cfg.GroupID, id, gen
		hctx, cancel := context.WithTimeout(ctx, m.cfg.SessionTimeout)
		resp, err := req.RequestWith(hctx, m.cfg.Client)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		m.mu.Lock()
		switch {
		case err == nil:
			m.lastContact = time.Now()
		case errors.Is(err, kgo.ErrClientClosed):
			m.hbFatal = fmt.Errorf("heartbeat: %w", err)
		case errors.Is(err, kerr.RebalanceInProgress), errors.Is(err, kerr.UnknownMemberID),
			errors.Is(err, kerr.IllegalGeneration), errors.Is(err, kerr.FencedInstanceID):
			m.lastContact = time.Now()
			if id == m.memberID && gen == m.generation {
				m.hbDemand, m.hbGen = err, gen
			}
		default:
			m.log.Debug("heartbeat failed", "error", err)
		}
		m.mu.Unlock()
		if err != nil {
			m.notify()
		}
	}
}

func (m *Member) touch() {
	m.mu.Lock()
	m.lastContact = time.Now()
	m.mu.Unlock()
}

// contact records an answer from the coordinator, unless the answer is that there is none
// (kgo retries those itself and passes them on only when it gives up).
func (m *Member) contact(code int16) {
	if !coordinatorUnavailable(kerr.ErrorForCode(code)) {
		m.touch()
	}
}

func coordinatorUnavailable(err error) bool {
	return errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.NotCoordinator) ||
		errors.Is(err, kerr.CoordinatorLoadInProgress)
}

// backoff returns the next retry delay after a failure: 200 ms doubling to 10 s, ±20 %.
func (m *Member) backoff() time.Duration {
	m.failures++
	d := 200 * time.Millisecond << min(m.failures-1, 6)
	d = min(d, 10*time.Second)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// failed decides what a failed group request means: stop, give up, or retry after a backoff.
func (m *Member) failed(ctx context.Context, api string, err error) (plan, error) {
	switch {
	case ctx.Err() != nil:
		return plan{}, nil
	case errors.Is(err, kgo.ErrClientClosed):
		return plan{}, fmt.Errorf("%s: %w", api, err)
	}
	d := m.backoff()
	m.log.Warn("group request failed; retrying", "request", api, "error", err, "retry_in", d.Round(time.Millisecond))
	return plan{rejoin: true, after: d, why: "retry after " + api + " failed"}, nil
}

// groupError maps a JoinGroup or SyncGroup error code to the next step.
func (m *Member) groupError(ctx context.Context, api string, err error) (plan, error) {
	switch {
	case errors.Is(err, kerr.UnknownMemberID):
		m.setSession("", -1)
		m.forgotten(ctx)
		return plan{rejoin: true, why: api + ": unknown member id"}, nil
	case errors.Is(err, kerr.IllegalGeneration), errors.Is(err, kerr.FencedInstanceID):
		m.setSession(m.memberIDNow(), -1)
		return plan{rejoin: true, why: api + ": " + err.Error()}, nil
	case errors.Is(err, kerr.RebalanceInProgress):
		return plan{rejoin: true, why: api + ": rebalance in progress"}, nil
	case errors.Is(err, kerr.InconsistentGroupProtocol):
		return plan{}, fmt.Errorf("%s: group %q is used by a group with another protocol type or no common sub-protocol "+
			"(a consumer group? sink connectors use connect-<name>): %w", api, m.cfg.GroupID, err)
	case errors.Is(err, kerr.InvalidSessionTimeout):
		return plan{}, fmt.Errorf("%s: session.timeout.ms %v is outside the brokers' group.min/max.session.timeout.ms: %w",
			api, m.cfg.SessionTimeout, err)
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return plan{}, fmt.Errorf("%s: not authorized for group %q: %w", api, m.cfg.GroupID, err)
	}
	return m.failed(ctx, api, err)
}

func (m *Member) setSession(id string, gen int32) {
	m.mu.Lock()
	m.memberID, m.generation = id, gen
	m.state.MemberID = id
	m.mu.Unlock()
}

func (m *Member) memberIDNow() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID
}

func (m *Member) setStable(stable bool) {
	m.mu.Lock()
	m.stable = stable
	m.mu.Unlock()
}

func (m *Member) setSyncing(syncing bool) {
	m.mu.Lock()
	m.syncing = syncing
	m.state.Rebalancing = syncing
	m.mu.Unlock()
}

// rebalance runs one JoinGroup and SyncGroup round, assigning if this worker leads, and applies
// the result.
func (m *Member) rebalance(ctx context.Context, why string) (plan, error) {
	if m.cfg.Rebalances != nil {
		m.cfg.Rebalances.RebalanceStarted()
	}
	m.mu.Lock()
	m.stable, m.hbDemand, m.rejoinWhy = false, nil, ""
	seq := m.rejoinSeq
	memberID := m.memberID
	m.mu.Unlock()

	if m.protocol == ProtocolDefault || (m.protocol == "" && m.protocols[0] == ProtocolDefault) {
		m.revokeAll(ctx, "eager rebalance") // eager members give up everything before joining
	}
	protocols, err := m.joinProtocols()
	if err != nil {
		return plan{}, err
	}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group = m.cfg.GroupID
	join.SessionTimeoutMillis = millis(m.cfg.SessionTimeout)
	join.RebalanceTimeoutMillis = millis(m.cfg.RebalanceTimeout)
	join.MemberID = memberID
	join.ProtocolType = ProtocolType
	join.Protocols = protocols
	join.Reason = kmsg.StringPtr(why)
	m.log.Debug("joining group", "reason", why, "member_id", memberID)
	jresp, err := await(ctx, m, func(ctx context.Context) (*kmsg.JoinGroupResponse, error) {
		return join.RequestWith(ctx, m.cfg.Client)
	})
	if err != nil {
		return m.failed(ctx, "JoinGroup", err)
	}
	m.contact(jresp.ErrorCode)
	if err := kerr.ErrorForCode(jresp.ErrorCode); err != nil {
		if errors.Is(err, kerr.MemberIDRequired) {
			m.setSession(jresp.MemberID, -1)
			return plan{rejoin: true, why: why}, nil
		}
		return m.groupError(ctx, "JoinGroup", err)
	}
	m.setSession(jresp.MemberID, jresp.Generation)
	m.setSyncing(true)
	defer m.setSyncing(false) // after apply has handed the assignment over
	protocol := ""
	if jresp.Protocol != nil {
		protocol = *jresp.Protocol
	}
	if protocol == ProtocolDefault && !m.owned.empty() {
		// The group has just switched to the eager protocol (an eager worker joined) while this
		// worker joined cooperatively, still running its work. The eager assignor hands all
		// work out afresh, so stop everything and rejoin instead of syncing: the round that
		// follows starts with every worker empty, as eager rebalancing requires.
		m.revokeAll(ctx, "the group switched to the eager protocol")
		return plan{rejoin: true, why: "rejoining empty for the eager protocol"}, nil
	}

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = m.cfg.GroupID, jresp.MemberID, jresp.Generation
	sync.ProtocolType, sync.Protocol = kmsg.StringPtr(ProtocolType), kmsg.StringPtr(protocol)
	if jresp.LeaderID == jresp.MemberID {
		sync.GroupAssignment, err = m.lead(ctx, jresp, protocol)
		if err != nil {
			return plan{}, err
		}
		if ctx.Err() != nil {
			return plan{}, nil
		}
	}
	sresp, err := await(ctx, m, func(ctx context.Context) (*kmsg.SyncGroupResponse, error) {
		return sync.RequestWith(ctx, m.cfg.Client)
	})
	if err != nil {
		return m.failed(ctx, "SyncGroup", err)
	}
	m.contact(sresp.ErrorCode)
	if err := kerr.ErrorForCode(sresp.ErrorCode); err != nil {
		return m.groupError(ctx, "SyncGroup", err)
	}
	var a MemberAssignment
	if err := a.UnmarshalBinary(sresp.MemberAssignment); err != nil {
		return m.failed(ctx, "SyncGroup", fmt.Errorf("assignment from leader %s: %w", jresp.LeaderID, err))
	}
	p := m.apply(ctx, jresp, protocol, a)
	m.mu.Lock()
	if m.rejoinSeq != seq && !p.rejoin {
		p = plan{rejoin: true, why: m.rejoinWhy}
	}
	m.rejoinWhy = ""
	m.mu.Unlock()
	return p, nil
}

// joinProtocols builds the JoinGroup protocols with this worker's metadata.
func (m *Member) joinProtocols() ([]kmsg.JoinGroupRequestProtocol, error) {
	offset := m.cfg.Handler.ConfigOffset()
	ext := &MetadataExtension{Version: m.cfg.Version, Settings: m.cfg.Settings, Leaving: m.leaving}
	var out []kmsg.JoinGroupRequestProtocol
	for _, name := range m.protocols {
		v, _ := ProtocolVersion(name)
		md := MemberMetadata{Version: v, URL: m.cfg.URL, ConfigOffset: offset, Ext: ext}
		if v >= 1 && m.snapshot != nil {
			alloc := *m.snapshot
			alloc.Version, alloc.Error, alloc.Message = v, CodeNone, ""
			alloc.Assigned, alloc.Revoked, alloc.Delay = m.owned.alloc(), Allocation{}, 0
			md.Allocation = &alloc
		}
		b, err := md.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("cluster: encoding member metadata: %w", err)
		}
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = name, b
		out = append(out, p)
	}
	return out, nil
}

// lead computes the assignment on the leader.
func (m *Member) lead(ctx context.Context, jresp *kmsg.JoinGroupResponse, protocol string) ([]kmsg.SyncGroupRequestGroupAssignment, error) {
	members := make([]joinedMember, len(jresp.Members))
	for i, jm := range jresp.Members {
		members[i].ID = jm.MemberID
		if err := members[i].Meta.UnmarshalBinary(jm.ProtocolMetadata); err != nil {
			members[i].Err = err
			m.log.Error("cannot decode a member's group metadata; it gets no work", "member_id", jm.MemberID, "error", err)
		}
	}
	snapshot := func() (Work, error) {
		w, err := m.cfg.Handler.LeaderSnapshot(ctx)
		if err != nil {
			return Work{}, fmt.Errorf("reading the config topic as leader: %w", err)
		}
		return w, nil
	}
	work, err := snapshot()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		m.log.Warn("leader could not read the config topic; asking all members to rejoin", "error", err)
		work = Work{Offset: math.MinInt64} // behind everyone: Refresh retries once, then CONFIG_MISMATCH
	}
	res, next := assign(m.coop, assignInput{
		Group:                   m.cfg.GroupID,
		Leader:                  jresp.LeaderID,
		Protocol:                protocol,
		Members:                 members,
		Work:                    work,
		Refresh:                 snapshot,
		LastCompletedGeneration: m.lastCompleted,
		Generation:              jresp.Generation,
		MaxDelay:                m.cfg.MaxDelay,
		Now:                     m.cfg.Clock(),
	})
	m.coop = next
	if ctx.Err() != nil {
		return nil, nil
	}
	if res.RefreshErr != nil {
		m.log.Warn("leader could not read the config topic", "error", res.RefreshErr)
	}

	workers := make([]Worker, 0, len(members))
	out := make([]kmsg.SyncGroupRequestGroupAssignment, 0, len(members))
	for _, jm := range members {
		a := res.Assignments[jm.ID]
		b, err := a.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("cluster: encoding the assignment of %s: %w", jm.ID, err)
		}
		sa := kmsg.NewSyncGroupRequestGroupAssignment()
		sa.MemberID, sa.MemberAssignment = jm.ID, b
		out = append(out, sa)
		w := Worker{MemberID: jm.ID, URL: jm.Meta.URL, ConfigOffset: jm.Meta.ConfigOffset, Assignment: res.Owned[jm.ID], Refused: a.Message}
		if jm.Meta.Ext != nil {
			w.Version = jm.Meta.Ext.Version
		}
		workers = append(workers, w)
		if a.Message != "" {
			m.log.Warn("refusing a worker whose settings differ from the group's", "member_id", jm.ID, "url", jm.Meta.URL, "message_to_worker", a.Message)
		}
	}
	m.mu.Lock()
	m.state.Workers = workers
	m.mu.Unlock()
	m.log.Info("assigned work as group leader", "generation", jresp.Generation, "protocol", protocol,
		"members", len(members), "config_offset", res.Offset, "delay", m.coop.delay)
	return out, nil
}

// apply acts on this worker's assignment: stop what is revoked, record the new assignment, tell
// the handler, and decide on the next rebalance.
func (m *Member) apply(ctx context.Context, jresp *kmsg.JoinGroupResponse, protocol string, a MemberAssignment) plan {
	if m.cfg.Rebalances != nil {
		// Whatever the assignment says, the round is over (Kafka's onAssigned counts it too).
		defer m.cfg.Rebalances.RebalanceCompleted(jresp.Generation)
	}
	// The leader is the member the assignment names, as in Kafka's DistributedHerder.isLeader, not
	// whoever JoinGroup called the leader: the embedded broker (kfake), when the previous leader
	// is not among the members of a round, names each member the leader in its own response, and
	// then hands out the assignments of one of them. The others would otherwise take up the
	// leader's duties too (the config topic's transactional writer, fencing tasks), fencing each
	// other and the tasks they do not run.
	leader := a.Leader == jresp.MemberID
	if jresp.Generation == m.appliedGen {
		// The coordinator answered a follower's rejoin in a stable group with the current
		// generation and assignment: already applied.
		m.setStable(true)
		return plan{}
	}
	m.appliedGen, m.lastCompleted, m.protocol = jresp.Generation, jresp.Generation, protocol
	out := Assignment{
		Generation: jresp.Generation, MemberID: jresp.MemberID, LeaderID: a.Leader, LeaderURL: a.LeaderURL,
		Leader: leader, Protocol: protocol, ConfigOffset: a.ConfigOffset, Delay: a.Delay,
	}
	var next plan
	switch {
	case a.Error != CodeNone && a.Message != "":
		err := &AssignmentError{Code: a.Error, Message: a.Message, Offset: a.ConfigOffset}
		m.log.Error("the group leader refused this worker; leaving the group and retrying later",
			"error", a.Message, "leader_url", a.LeaderURL)
		m.revokeAll(ctx, "refused by the leader")
		out.Err = err
		m.record(out, err)
		m.cfg.Handler.OnAssigned(ctx, out)
		m.leave(ctx, "refused by the group leader: "+a.Message)
		d := m.cfg.RefusedBackoff
		if d <= 0 {
			d = 10*time.Second + rand.N(20*time.Second)
		}
		return plan{rejoin: true, after: d, why: "retrying after the leader refused this worker"}
	case a.Error != CodeNone:
		err := &AssignmentError{Code: a.Error, Offset: a.ConfigOffset}
		m.log.Warn("the group leader could not assign work (CONFIG_MISMATCH); rejoining", "leader_url", a.LeaderURL,
			"config_offset", a.ConfigOffset, "local_config_offset", m.cfg.Handler.ConfigOffset())
		out.Owned, out.Err = m.owned.alloc(), err
		m.record(out, err)
		m.cfg.Handler.OnAssigned(ctx, out)
		m.setStable(true)
		return plan{rejoin: true, after: m.backoff(), why: "CONFIG_MISMATCH"}
	case protocol == ProtocolDefault:
		full := setOf(a.Assigned)
		out.Revoked = m.owned.minus(full).alloc()
		out.Assigned = full.minus(m.owned).alloc()
		if !out.Revoked.Empty() {
			m.cfg.Handler.OnRevoked(ctx, out.Revoked)
		}
		m.owned = full
	default:
		out.Revoked = m.owned.intersect(setOf(a.Revoked)).alloc()
		if !out.Revoked.Empty() {
			m.cfg.Handler.OnRevoked(ctx, out.Revoked)
		}
		m.owned.removeSet(setOf(a.Revoked))
		out.Assigned = setOf(a.Assigned).minus(m.owned).alloc()
		m.owned.addSet(setOf(a.Assigned))
		if !a.Revoked.Empty() {
			next = plan{rejoin: true, why: "second round of a cooperative rebalance (work was revoked)"}
		}
	}
	m.failures = 0
	snap := a
	m.snapshot = &snap
	m.scheduled = time.Time{}
	if a.Delay > 0 {
		m.scheduled = time.Now().Add(a.Delay)
	}
	out.Owned = m.owned.alloc()
	m.record(out, nil)
	m.setStable(true)
	m.log.Info("rebalance completed", "generation", out.Generation, "leader_url", out.LeaderURL, "leader", leader,
		"protocol", protocol, "assigned", out.Assigned.String(), "revoked", out.Revoked.String(),
		"connectors", len(out.Owned.Connectors), "tasks", len(out.Owned.Tasks), "delay", out.Delay)
	m.cfg.Handler.OnAssigned(ctx, out)
	return next
}

// record publishes an assignment in State.
func (m *Member) record(a Assignment, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &m.state
	s.MemberID, s.Generation, s.Protocol = a.MemberID, a.Generation, a.Protocol
	s.LeaderID, s.LeaderURL, s.Leader = a.LeaderID, a.LeaderURL, a.Leader
	s.Assignment, s.ConfigOffset, s.Err = a.Owned, a.ConfigOffset, err
	s.NextRebalance = m.scheduled
	if !a.Leader {
		s.Workers = nil
	}
}

// revokeAll stops everything this worker runs.
func (m *Member) revokeAll(ctx context.Context, why string) {
	if m.owned.empty() {
		return
	}
	all := m.owned.alloc()
	m.log.Info("stopping all work", "reason", why, "revoked", all.String())
	m.cfg.Handler.OnRevoked(ctx, all)
	m.owned = newWorkSet()
	m.mu.Lock()
	m.state.Assignment = Allocation{}
	m.mu.Unlock()
}

// leave sends LeaveGroup so that the others rebalance at once, and forgets the member id.
func (m *Member) leave(ctx context.Context, reason string) {
	id := m.memberIDNow()
	m.setSession("", -1)
	m.mu.Lock()
	m.stable, m.state.Leader, m.state.Workers = false, false, nil
	m.mu.Unlock()
	m.appliedGen = -1
	if id == "" {
		return
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group, req.MemberID = m.cfg.GroupID, id
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID, lm.Reason = id, kmsg.StringPtr(reason)
	req.Members = append(req.Members, lm)
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	resp, err := req.RequestWith(lctx, m.cfg.Client)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err == nil && len(resp.Members) > 0 {
			err = kerr.ErrorForCode(resp.Members[0].ErrorCode)
		}
	}
	if err != nil {
		m.log.Warn("LeaveGroup failed; the coordinator drops this worker after the session timeout", "error", err)
		return
	}
	m.log.Info("left the group", "member_id", id, "reason", reason)
}

// handOver runs one last rebalance as a leaving member, with nothing running, so that the leader
// gives this worker's work to the others at once. A plain LeaveGroup would make the leader treat
// the work as lost and hold it for scheduled.rebalance.max.delay.ms, in case the worker comes
// back, which a worker that is being stopped will not do soon. Eager groups and workers that are
// not members skip it; a hand-over that does not complete in time is abandoned.
func (m *Member) handOver(ctx context.Context) {
	if m.memberIDNow() == "" || m.protocol == "" || m.protocol == ProtocolDefault {
		return
	}
	m.leaving = true
	hctx, cancel := context.WithTimeout(ctx, min(m.cfg.RebalanceTimeout, handOverTimeout))
	defer cancel()
	start := time.Now()
	if _, err := m.rebalance(hctx, "worker stopping: handing its work over"); err != nil {
		m.log.Warn("handing work over before leaving failed; the leader will treat it as lost", "error", err)
		return
	}
	m.log.Info("handed work over to the group", "took", time.Since(start).Round(time.Millisecond))
}

// handOverTimeout bounds the last rebalance of a stopping worker.
const handOverTimeout = 8 * time.Second

// shutdown stops the work, hands it over, then leaves the group.
func (m *Member) shutdown(ctx context.Context) error {
	bg := context.WithoutCancel(ctx)
	m.revokeAll(bg, "worker stopping")
	m.handOver(bg)
	m.leave(bg, "worker stopping")
	m.mu.Lock()
	m.state.MemberID, m.state.Assignment = "", Allocation{}
	m.mu.Unlock()
	return nil
}

func millis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), math.MaxInt32))
}

package herder

import (
	"context"
	"crypto/rand"
	"errors"
	"maps"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/cluster"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
)

// The herder is the worker side of group membership (cluster.Handler). The Member calls these
// from its own goroutine; whatever touches loop state runs on the loop.

var _ cluster.Handler = (*Herder)(nil)

// ConfigOffset is this worker's config topic position, sent in JoinGroup.
func (h *Herder) ConfigOffset() int64 { return h.cfg.Configs.Snapshot().Offset }

// LeaderSnapshot reads the config topic to its end and reports the work to assign.
func (h *Herder) LeaderSnapshot(ctx context.Context) (cluster.Work, error) {
	if err := h.cfg.Configs.ReadToEnd(ctx); err != nil {
		return cluster.Work{}, err
	}
	w := workOf(h.cfg.Configs.Snapshot())
	h.lastWork.Store(&w)
	return w, nil
}

// OnRevoked stops revoked tasks and returns once they have stopped (and committed their offsets),
// so that their new owner never runs them at the same time.
func (h *Herder) OnRevoked(ctx context.Context, revoked cluster.Allocation) {
	err := h.onLoop(ctx, func() {
		if h.assigned != nil {
			h.assigned = &cluster.Allocation{
				Connectors: without(h.assigned.Connectors, revoked.Connectors),
				Tasks:      without(h.assigned.Tasks, revoked.Tasks),
			}
		}
		h.stopTasks(ctx, revoked.Tasks)
	})
	if err != nil {
		// The loop has ended (the worker is stopping) and stopped every task itself.
		h.log.Debug("revocation after the herder stopped", "err", err)
	}
}

// OnAssigned applies a completed rebalance: it catches up with the config topic to the offset the
// leader assigned at (Kafka's worker.sync.timeout.ms applies), then runs the assignment.
func (h *Herder) OnAssigned(ctx context.Context, a cluster.Assignment) {
	if a.Err != nil {
		h.log.Error("the group gave this worker no work", "err", a.Err)
		if errors.Is(a.Err, cluster.ErrConfigMismatch) {
			rctx, cancel := context.WithTimeout(ctx, h.cfg.SyncTimeout)
			h.cfg.Configs.ReadToEnd(rctx)
			cancel()
		}
		h.role.Store(&role{leaderURL: a.LeaderURL, err: a.Err})
		h.markJoined()
		h.onLoop(ctx, func() { h.assigned = &cluster.Allocation{} })
		return
	}
	rctx, cancel := context.WithTimeout(ctx, h.cfg.SyncTimeout)
	err := h.cfg.Configs.ReadToEnd(rctx)
	cancel()
	if offset := h.cfg.Configs.Snapshot().Offset; err != nil || offset < a.ConfigOffset {
		h.log.Warn("could not read the config topic up to the assignment's offset; asking for another rebalance",
			"have", offset, "want", a.ConfigOffset, "err", err)
		h.member.Rejoin("behind the config topic")
		return
	}
	h.claimConfigWrites(ctx, a.Leader)
	h.role.Store(&role{leader: a.Leader, leaderURL: a.LeaderURL})
	h.markJoined()
	if !a.Leader {
		h.lastWork.Store(nil)
	}
	owned := a.Owned
	h.onLoop(ctx, func() {
		h.assigned = &owned
		h.generation = a.Generation
		for _, cs := range h.connectors {
			cs.reported = "" // the new generation re-reports every status
		}
	})
	// The member logged "rebalance completed" with the assignment.
}

// stopTasks stops tasks and records them as UNASSIGNED (a safe write: a newer owner's status wins).
func (h *Herder) stopTasks(ctx context.Context, ids []connect.TaskID) {
	if len(ids) == 0 {
		return
	}
	h.cfg.Worker.StopTasks(ids...)
	for _, id := range ids {
		h.putTaskStatus(ctx, id, connect.StateUnassigned, "")
	}
}

func (h *Herder) isLeader() bool { return h.role.Load().leader }

// leaderURL returns the leader's REST URL, "" when unknown (mid-rebalance).
func (h *Herder) leaderURL() string { return h.role.Load().leaderURL }

// requireLeader returns nil on the leader, which serves the writes only it may make, and on any
// other worker a *connect.RequestTargetError naming the leader, to which the REST layer forwards.
//
// A request that arrives while the group is forming or rebalancing waits for a leader (up to
// leaderWait) rather than failing at once: the common case is a script that starts a worker and
// creates connectors right away.
func (h *Herder) requireLeader(ctx context.Context) error {
	if h.isLeader() {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, leaderWait)
	defer cancel()
	for h.leaderURL() == "" && !h.isLeader() {
		select {
		case <-wctx.Done():
			return connect.Conflict("Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if h.isLeader() {
		return nil
	}
	return &connect.RequestTargetError{Reason: "this worker is not the leader", URL: h.leaderURL()}
}

// awaitAssignment waits, up to leaderWait, while this worker is between JoinGroup's answer and
// taking up its assignment, the window in which the leader has assigned work this worker does not
// know of yet (not for a whole rebalance: a JoinGroup waits up to a heartbeat for the others to
// join, before the leader assigns anything). Kafka's herder thread serves requests only between
// rebalances, after it has started its assignment; without this wait a worker the leader names as
// a task's owner, the leader having just assigned it, answers the forwarded request before its own
// part of the assignment arrives, and sends the request back: a 409 on the last hop.
func (h *Herder) awaitAssignment(ctx context.Context) error {
	if h.groupState == nil {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, leaderWait)
	defer cancel()
	for h.groupState().Rebalancing {
		select {
		case <-wctx.Done():
			return ctx.Err() // past leaderWait, answer with what this worker knows
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// CatchUp reads the config and status topics up to their end. The REST layer calls it after the
// leader answered a write this worker forwarded, so that a client's next request to this worker (a
// status right after a create, say) sees the write as it would on the leader.
func (h *Herder) CatchUp(ctx context.Context) error {
	for _, s := range []interface{ ReadToEnd(context.Context) error }{h.cfg.Configs, h.cfg.Statuses} {
		if err := s.ReadToEnd(ctx); err != nil {
			return err
		}
	}
	return nil
}

// leaderWait bounds how long a REST write waits for the group to have a leader.
const leaderWait = 15 * time.Second

// MemberState returns this worker's view of the group, nil without a group.
func (h *Herder) MemberState() *cluster.State {
	if h.member == nil {
		return nil
	}
	st := h.member.State()
	return &st
}

// sessionKeyTTL is inter.worker.key.ttl.ms: how long the leader's request-signing key lives.
const sessionKeyTTL = time.Hour

// SessionKey returns the key workers sign forwarded requests with (nil before one is read).
func (h *Herder) SessionKey() []byte {
	if k := h.cfg.Configs.Snapshot().SessionKey; k != nil {
		return k.Key
	}
	return nil
}

// ensureSessionKey makes the leader write a new session key when there is none or it expired.
func (h *Herder) ensureSessionKey(ctx context.Context, snap store.ConfigSnapshot) {
	if h.member == nil {
		return // alone: nothing is forwarded
	}
	if k := snap.SessionKey; k != nil && time.Since(k.Created) < sessionKeyTTL {
		return
	}
	key := make([]byte, 32)
	rand.Read(key)
	if err := h.cfg.Configs.PutSessionKey(ctx, store.SessionKey{Key: key, Algorithm: "HmacSHA256", Created: time.Now()}); err != nil {
		h.log.Warn("writing the session key failed; will retry", "err", err)
	}
}

// workOf is the work a snapshot describes, as the assignor sees it.
func workOf(snap store.ConfigSnapshot) cluster.Work {
	w := cluster.Work{Offset: snap.Offset, Connectors: map[string]int{}, Stopped: map[string]bool{}}
	for name := range snap.Connectors {
		w.Connectors[name] = len(snap.Tasks[name])
		if targetOf(snap, name) == connect.TargetStopped {
			w.Stopped[name] = true
		}
	}
	return w
}

// sameWork compares what the assignor would place (the offset aside).
func sameWork(a, b cluster.Work) bool {
	return maps.Equal(a.Connectors, b.Connectors) && maps.Equal(a.Stopped, b.Stopped)
}

func without[T comparable](items, remove []T) []T {
	drop := make(map[T]bool, len(remove))
	for _, r := range remove {
		drop[r] = true
	}
	var out []T
	for _, it := range items {
		if !drop[it] {
			out = append(out, it)
		}
	}
	return out
}

// Workers answers GET /workers.
func (h *Herder) Workers(context.Context) (connect.WorkersInfo, error) {
	info := connect.WorkersInfo{WorkerID: h.cfg.WorkerID, Generation: -1}
	r := h.role.Load()
	info.Leader, info.LeaderURL = r.leader, r.leaderURL
	if r.err != nil {
		info.Error = r.err.Error()
	}
	st := h.MemberState()
	if st == nil {
		info.Assignment = assignmentOf(cluster.Allocation{Tasks: h.cfg.Worker.Tasks()})
		return info, nil
	}
	info.GroupID, info.MemberID, info.Generation = st.GroupID, st.MemberID, st.Generation
	info.Assignment = assignmentOf(st.Assignment)
	if st.Err != nil && info.Error == "" {
		info.Error = st.Err.Error()
	}
	for _, w := range st.Workers {
		info.Workers = append(info.Workers, connect.WorkerInfo{
			URL: w.URL, MemberID: w.MemberID, Version: w.Version, ConfigOffset: w.ConfigOffset,
			Assignment: assignmentOf(w.Assignment), Refused: w.Refused,
		})
	}
	return info, nil
}

func assignmentOf(a cluster.Allocation) connect.WorkAssignment {
	w := connect.WorkAssignment{Connectors: a.Connectors, Tasks: a.Tasks}
	if w.Connectors == nil {
		w.Connectors = []string{}
	}
	if w.Tasks == nil {
		w.Tasks = []connect.TaskID{}
	}
	return w
}

// RequireLeader returns nil on the leader and a *connect.RequestTargetError naming the leader on
// any other worker: for requests only the leader can answer, such as GET /reconciler.
func (h *Herder) RequireLeader(ctx context.Context) error { return h.requireLeader(ctx) }

package herder

import (
	"context"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
)

// Zombie fencing (KIP-618). With exactly-once source support, a new generation of a source
// connector's tasks (new task configs were committed) must not start while a task of the previous
// generation may still write: a worker that lost it in a rebalance but has not noticed, say. The
// leader fences the previous generation's transactional producers, whose number the last
// tasks-fencing-<name> record gives, then writes a new one with the new task count; tasks start
// once the worker that runs them has read it. A worker that is not the leader asks it with the
// internal PUT /connectors/{name}/fence.

// claimConfigWrites makes a new leader's config-topic writes transactional (fencing the previous
// leader's writer) and drops the writer of a worker that no longer leads, when ConfigTransactionalID
// is set. A claim that fails leaves the writes plain, with a warning: they are still correct
// while no deposed leader writes, which the group protocol makes rare.
func (h *Herder) claimConfigWrites(ctx context.Context, leader bool) {
	if h.cfg.ConfigTransactionalID == "" {
		return
	}
	switch {
	case leader && !h.claimed.Load():
		if err := h.cfg.Configs.ClaimWrites(ctx, h.cfg.ConfigTransactionalID); err != nil {
			h.log.Warn("cannot write the config topic transactionally; writing without a transaction", "transactional_id", h.cfg.ConfigTransactionalID, "err", err)
			return
		}
		h.claimed.Store(true)
	case !leader && h.claimed.Load():
		h.cfg.Configs.ReleaseWrites()
		h.claimed.Store(false)
	}
}

// fenceTimeout bounds one round of fencing, requested from the loop.
const fenceTimeout = time.Minute

// awaitsFencing reports whether the tasks of a connector may not start yet: this worker runs
// source tasks exactly-once and the connector's last task commit has no task count record after it.
func (h *Herder) awaitsFencing(snap store.ConfigSnapshot, name string) bool {
	if !h.cfg.Worker.ExactlyOnce() {
		return false
	}
	if _, pending := snap.PendingFencing[name]; !pending {
		return false
	}
	_, typ, err := h.cfg.Worker.ResolveConnector(snap.Connectors[name])
	return err == nil && typ == connect.TypeSource
}

// requestFencing has the connector's zombies fenced, by this worker if it leads or by the leader,
// off the loop; one request per connector at a time. The task count record it leads to wakes the
// loop, which then starts the tasks; a failure is retried on a later pass.
func (h *Herder) requestFencing(name string) {
	if h.fencing[name] {
		return
	}
	h.fencing[name] = true
	leader, leaderURL := h.isLeader(), h.leaderURL()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), fenceTimeout)
		defer cancel()
		var err error
		switch {
		case leader:
			err = h.fence(ctx, name)
		case h.cfg.AskLeaderToFence == nil || leaderURL == "":
			err = connect.Conflict("no leader to ask for fencing")
		default:
			err = h.cfg.AskLeaderToFence(ctx, leaderURL, name)
		}
		if err != nil {
			h.log.Warn("fencing the previous generation of a connector's tasks failed; retrying", "connector", name, "err", err)
		}
		h.onLoop(ctx, func() { delete(h.fencing, name) })
		if err != nil {
			time.AfterFunc(time.Second, h.Poke)
		}
	}()
}

// FenceZombies serves the internal PUT /connectors/{name}/fence on the leader (others forward it):
// it fences the producers of the connector's previous generation of tasks and writes its new task
// count. A connector that needs no fencing (its task count record is up to date) is left alone.
func (h *Herder) FenceZombies(ctx context.Context, name string) error {
	if err := h.requireLeader(ctx); err != nil {
		return err
	}
	if err := h.cfg.Configs.ReadToEnd(ctx); err != nil {
		return err
	}
	cfg, ok := h.cfg.Configs.Snapshot().Connectors[name]
	if !ok {
		return connect.NotFound("Connector %s not found", name)
	}
	if _, typ, err := h.cfg.Worker.ResolveConnector(cfg); err == nil && typ != connect.TypeSource {
		return connect.BadRequest("Connector %s is not a source connector", name)
	}
	return h.fence(ctx, name)
}

// fence is the leader's part. Fencing is skipped when the previous generation and the new one both
// have exactly one task, as in Kafka: that task's own producer fences its predecessor when it
// starts. Without a task count record there is nothing to fence (a new connector, or one whose
// tasks ran before exactly-once support was enabled, whose producers were not transactional).
func (h *Herder) fence(ctx context.Context, name string) error {
	h.fenceMu.Lock()
	defer h.fenceMu.Unlock()
	if err := h.cfg.Configs.ReadToEnd(ctx); err != nil {
		return err
	}
	snap := h.cfg.Configs.Snapshot()
	if _, pending := snap.PendingFencing[name]; !pending {
		return nil
	}
	cfg, ok := snap.Connectors[name]
	if !ok {
		return connect.NotFound("Connector %s not found", name)
	}
	count := len(snap.Tasks[name])
	if prev, ok := snap.TaskCountRecords[name]; ok && !(prev == 1 && count == 1) && prev > 0 {
		if err := h.cfg.Worker.FenceZombies(ctx, name, cfg, prev); err != nil {
			return err
		}
		h.log.Info("fenced the previous generation of a connector's tasks", "connector", name, "tasks", prev, "new_tasks", count)
	}
	return h.cfg.Configs.PutTaskCount(ctx, name, count)
}

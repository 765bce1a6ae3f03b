package herder

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// The REST API's requests (rest.Herder). Reads are served from this worker's view of the config
// and status topics; writes go to the config topic and return once they have been read back.

// ServerInfo returns the body of GET /.
func (h *Herder) ServerInfo(context.Context) connect.ServerInfo {
	return connect.ServerInfo{Version: KafkaVersion, Commit: Version, KafkaClusterID: h.cfg.ClusterID}
}

// Connectors lists connector names, sorted.
func (h *Herder) Connectors(context.Context) ([]string, error) {
	return slices.Sorted(maps.Keys(h.cfg.Configs.Snapshot().Connectors)), nil
}

func (h *Herder) config(name string) (store.ConfigSnapshot, map[string]string, error) {
	snap := h.cfg.Configs.Snapshot()
	cfg, ok := snap.Connectors[name]
	if !ok {
		return snap, nil, connect.NotFound("Connector %s not found", name)
	}
	return snap, cfg, nil
}

// ConnectorInfo returns a connector's config, tasks and type.
func (h *Herder) ConnectorInfo(_ context.Context, name string) (connect.ConnectorInfo, error) {
	snap, cfg, err := h.config(name)
	if err != nil {
		return connect.ConnectorInfo{}, err
	}
	return h.info(name, cfg, len(snap.Tasks[name])), nil
}

func (h *Herder) info(name string, cfg map[string]string, tasks int) connect.ConnectorInfo {
	_, typ, _ := h.cfg.Worker.ResolveConnector(cfg)
	ids := make([]connect.TaskID, tasks)
	for i := range ids {
		ids[i] = connect.TaskID{Connector: name, Task: i}
	}
	return connect.ConnectorInfo{Name: name, Config: maps.Clone(cfg), Tasks: ids, Type: typ}
}

// ConnectorConfig returns the config as submitted.
func (h *Herder) ConnectorConfig(_ context.Context, name string) (map[string]string, error) {
	_, cfg, err := h.config(name)
	return maps.Clone(cfg), err
}

// validName applies Kafka Connect's connector name rules.
func validName(name string) error {
	if strings.TrimSpace(name) == "" {
		return connect.BadRequest("Connector name is null or empty.")
	}
	if err := connect.CheckConnectorNameLength(name); err != nil {
		return err
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return connect.BadRequest("Connector name %q contains invalid characters: ISO control characters are not allowed", name)
	}
	return nil
}

// tooLarge turns a connector config the config topic cannot hold into a 413 with both sizes; the
// store refused it before writing anything.
func tooLarge(err error) error {
	var e *store.RecordTooLargeError
	if !errors.As(err, &e) {
		return err
	}
	if e.Err != nil {
		return &connect.Error{Code: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
			"Connector configuration is too large for the config topic: the broker refused its record of %d bytes (%s is %d bytes)", e.Size, e.Setting, e.Limit)}
	}
	return &connect.Error{Code: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
		"Connector configuration is too large for the config topic: its record would be %d bytes, more than the %d bytes the topic holds (%s)", e.Size, e.Limit, e.Setting)}
}

func withName(name string, cfg map[string]string) map[string]string {
	out := maps.Clone(cfg)
	if out == nil {
		out = map[string]string{}
	}
	out["name"] = name
	return out
}

// CreateConnector validates and creates a connector.
func (h *Herder) CreateConnector(ctx context.Context, name string, cfg map[string]string, initial connect.TargetState) (connect.ConnectorInfo, error) {
	if err := validName(name); err != nil {
		return connect.ConnectorInfo{}, err
	}
	if err := h.requireLeader(ctx); err != nil {
		return connect.ConnectorInfo{}, err
	}
	cfg = withName(name, cfg)
	if _, ok := h.cfg.Configs.Snapshot().Connectors[name]; ok {
		return connect.ConnectorInfo{}, connect.AlreadyExists("Connector %s already exists", name)
	}
	if _, err := h.cfg.Worker.Validate(ctx, cfg); err != nil {
		return connect.ConnectorInfo{}, err
	}
	if initial == "" {
		initial = connect.TargetStarted
	}
	if err := h.cfg.Configs.CreateConnector(ctx, name, cfg, store.TargetState(initial)); err != nil {
		return connect.ConnectorInfo{}, tooLarge(err)
	}
	return h.info(name, cfg, h.awaitStarted(ctx, name)), nil
}

// startWait bounds how long a create waits for its connector to start (see awaitStarted).
const startWait = 10 * time.Second

// awaitStarted waits, up to startWait, until a connector just created has started: its task
// configs are in the config topic and its status in the status topic (the leader writes RUNNING,
// PAUSED, STOPPED or FAILED only after the task configs). Kafka Connect's herder serves requests
// in order, after the rebalance that starts a new connector, and scripts rely on it: a status or a
// task restart right after the create must find them. It returns the number of tasks. A connector
// slow to start is answered all the same when the wait ends, as Kafka answers once the config is
// written. A herder whose loop is not running (a test's) would never start it, and does not wait.
func (h *Herder) awaitStarted(ctx context.Context, name string) int {
	if !h.started.Load() {
		return len(h.cfg.Configs.Snapshot().Tasks[name])
	}
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		_, hasStatus := h.cfg.Statuses.Connector(name)
		tasks := len(h.cfg.Configs.Snapshot().Tasks[name])
		if hasStatus {
			return tasks
		}
		select {
		case <-ctx.Done():
			return tasks
		case <-tick.C:
		}
	}
}

// PutConnectorConfig creates or replaces a connector's config.
func (h *Herder) PutConnectorConfig(ctx context.Context, name string, cfg map[string]string) (connect.ConnectorInfo, bool, error) {
	if err := validName(name); err != nil {
		return connect.ConnectorInfo{}, false, err
	}
	if err := h.requireLeader(ctx); err != nil {
		return connect.ConnectorInfo{}, false, err
	}
	cfg = withName(name, cfg)
	if _, err := h.cfg.Worker.Validate(ctx, cfg); err != nil {
		return connect.ConnectorInfo{}, false, err
	}
	snap := h.cfg.Configs.Snapshot()
	_, exists := snap.Connectors[name]
	if err := h.cfg.Configs.PutConnectorConfig(ctx, name, cfg); err != nil {
		return connect.ConnectorInfo{}, false, tooLarge(err)
	}
	if !exists {
		return h.info(name, cfg, h.awaitStarted(ctx, name)), true, nil
	}
	return h.info(name, cfg, len(snap.Tasks[name])), false, nil
}

// DeleteConnector removes a connector, also one whose config record could not be read (the
// tombstones replace the record, which the config topic then no longer reports).
func (h *Herder) DeleteConnector(ctx context.Context, name string) error {
	if snap, _, err := h.config(name); err != nil && !snap.SkippedConnector(name) {
		return err
	}
	if err := h.requireLeader(ctx); err != nil {
		return err
	}
	return h.cfg.Configs.RemoveConnector(ctx, name)
}

// ConnectorStatus returns the states of a connector and its current tasks.
func (h *Herder) ConnectorStatus(_ context.Context, name string) (connect.ConnectorStateInfo, error) {
	snap := h.cfg.Configs.Snapshot()
	cfg, exists := snap.Connectors[name]
	if !exists {
		return connect.ConnectorStateInfo{}, connect.NotFound("No status found for connector %s", name)
	}
	st, ok := h.cfg.Statuses.Connector(name)
	if !ok {
		// A connector in the config topic that the leader has not started yet (or whose status
		// was lost) is known, not missing.
		st = store.Status{State: string(connect.StateUnassigned)}
	}
	_, typ, _ := h.cfg.Worker.ResolveConnector(cfg)
	info := connect.ConnectorStateInfo{
		Name:      name,
		Connector: connect.ConnectorState{State: connect.State(st.State), WorkerID: st.WorkerID, Trace: st.Trace},
		Tasks:     []connect.TaskState{},
		Type:      typ,
	}
	tasks := h.cfg.Statuses.Tasks(name)
	for i := range snap.Tasks[name] {
		ts, ok := tasks[i]
		if !ok {
			ts = store.Status{State: string(connect.StateUnassigned)}
		}
		info.Tasks = append(info.Tasks, connect.TaskState{ID: i, State: connect.State(ts.State), WorkerID: ts.WorkerID, Trace: ts.Trace})
	}
	return info, nil
}

// TaskConfigs returns the connector's task configs.
func (h *Herder) TaskConfigs(_ context.Context, name string) ([]connect.TaskInfo, error) {
	snap, _, err := h.config(name)
	if err != nil {
		return nil, err
	}
	out := []connect.TaskInfo{}
	for i, tc := range snap.Tasks[name] {
		out = append(out, connect.TaskInfo{ID: connect.TaskID{Connector: name, Task: i}, Config: maps.Clone(tc)})
	}
	return out, nil
}

// SetTargetState pauses, resumes or stops a connector. Any worker may pause or resume (as in
// Kafka); stopping goes through the leader, which also clears the task configs.
func (h *Herder) SetTargetState(ctx context.Context, name string, state connect.TargetState) error {
	if _, _, err := h.config(name); err != nil {
		return err
	}
	if state == connect.TargetStopped {
		if err := h.requireLeader(ctx); err != nil {
			return err
		}
	}
	return h.cfg.Configs.PutTargetState(ctx, name, store.TargetState(state))
}

// RestartConnector restarts a connector and, as asked, its (failed) tasks. The leader writes a
// restart request to the config topic and every worker restarts what it runs, as Kafka Connect's
// KIP-745 restarts do; the answer shows what is due to restart as RESTARTING.
func (h *Herder) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*connect.ConnectorStateInfo, error) {
	if _, _, err := h.config(name); err != nil {
		return nil, connect.NotFound("Unknown connector: %s", name)
	}
	if err := h.requireLeader(ctx); err != nil {
		return nil, err
	}
	status, statusErr := h.ConnectorStatus(ctx, name)
	if statusErr == nil {
		if !onlyFailed || status.Connector.State == connect.StateFailed {
			status.Connector.State = connect.StateRestarting
		}
		for i, t := range status.Tasks {
			if includeTasks && (!onlyFailed || t.State == connect.StateFailed) {
				status.Tasks[i].State = connect.StateRestarting
			}
		}
	}
	req := store.RestartRequest{Connector: name, IncludeTasks: includeTasks, OnlyFailed: onlyFailed}
	if err := h.cfg.Configs.PutRestartRequest(ctx, req); err != nil {
		return nil, err
	}
	if !includeTasks && !onlyFailed {
		return nil, nil
	}
	return &status, nil
}

// applyRestart carries out a restart request read from the config topic, on the loop.
func (h *Herder) applyRestart(ctx context.Context, req store.RestartRequest) {
	failed := func(st store.Status, ok bool) bool { return ok && st.State == string(connect.StateFailed) }
	if cs := h.connectors[req.Connector]; cs != nil {
		st, ok := h.cfg.Statuses.Connector(req.Connector)
		if !req.OnlyFailed || failed(st, ok) {
			cs.applied, cs.reported = nil, "" // generate task configs again, report RUNNING again
		}
	}
	if !req.IncludeTasks {
		return
	}
	var restart []connect.TaskID
	for _, id := range h.cfg.Worker.Tasks() {
		if id.Connector != req.Connector {
			continue
		}
		if !req.OnlyFailed || failed(h.cfg.Statuses.Task(id.Connector, id.Task)) {
			restart = append(restart, id)
		}
	}
	for _, id := range restart {
		h.putTaskStatus(ctx, id, connect.StateRestarting, "")
	}
	h.cfg.Worker.StopTasks(restart...) // the next reconcile starts them again
}

// RestartTask restarts one task on the worker that runs it. A task that is not running yet (its
// connector was just created, or a rebalance is placing it) is restarted by starting: that is a
// success, as in Kafka Connect, whose herder serves the request after the rebalance that starts it.
func (h *Herder) RestartTask(ctx context.Context, id connect.TaskID) error {
	snap, _, err := h.config(id.Connector)
	if err != nil || id.Task < 0 || id.Task >= len(snap.Tasks[id.Connector]) {
		return connect.NotFound("Unknown task: %s", id)
	}
	if err := h.awaitAssignment(ctx); err != nil {
		return err
	}
	var here bool // the task runs here, or is assigned here and starts at the next reconcile
	if err := h.onLoop(ctx, func() {
		if slices.Contains(h.cfg.Worker.Tasks(), id) {
			h.cfg.Worker.StopTasks(id) // the next reconcile starts it again
			here = true
		} else {
			here = h.assigned == nil || slices.Contains(h.assigned.Tasks, id)
		}
	}); err != nil || here {
		return err
	}
	if h.isLeader() && h.member != nil {
		for _, w := range h.member.State().Workers {
			if slices.Contains(w.Assignment.Tasks, id) {
				return &connect.RequestTargetError{Reason: "the task is assigned to another worker", URL: w.URL}
			}
		}
		return nil // placed by no one yet: it starts fresh once the rebalance places it
	}
	return h.requireLeader(ctx)
}

// Plugins lists the loaded plugins of the given kinds.
func (h *Herder) Plugins(_ context.Context, kinds ...wire.Kind) []connect.PluginInfo {
	var out []connect.PluginInfo
	for _, p := range h.cfg.Worker.Host().Plugins() {
		if len(kinds) > 0 && !slices.Contains(kinds, p.Kind) {
			continue
		}
		out = append(out, connect.PluginInfo{Class: p.Class, Type: string(p.Kind), Version: p.Version})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Class < out[j].Class })
	return out
}

// Health answers GET /health: healthy once the loop has started and answers within ctx. Its
// Detail is for anyone; the checks (member ids, raw errors, skipped config records) are for those
// who may read the API, which the REST server decides.
func (h *Herder) Health(ctx context.Context) connect.Health {
	health := connect.Health{Status: connect.HealthHealthy}
	if g, ok := h.groupCheck(); ok {
		health.Checks = append(health.Checks, g)
	}
	health.Checks = append(health.Checks, h.configTopicCheck())
	r := h.role.Load()
	switch {
	case !h.started.Load():
		health.Status, health.Detail = connect.HealthStarting, "The worker is reading the internal topics and loading plugins."
	case r.err != nil:
		health.Status, health.Detail = connect.HealthUnhealthy, "The worker has no work from its group."
	case !r.leader && r.leaderURL == "":
		health.Status, health.Detail = connect.HealthStarting, "The worker is joining its group."
	default:
		loop := connect.HealthCheck{Name: "main loop", Status: connect.CheckOK}
		if err := h.onLoop(ctx, func() {}); err != nil {
			health.Status, health.Detail = connect.HealthUnhealthy, "The worker's main loop did not answer in time; it may be stopping or blocked."
			loop.Status, loop.Detail = connect.CheckFailed, err.Error()
		}
		health.Checks = append(health.Checks, loop)
	}
	return health
}

// groupCheck describes this worker's group membership; ok is false without a group.
func (h *Herder) groupCheck() (c connect.HealthCheck, ok bool) {
	st := h.MemberState()
	if st == nil {
		return c, false
	}
	c = connect.HealthCheck{Name: "group", Status: connect.CheckOK}
	member := fmt.Sprintf("member %q of group %q", st.MemberID, st.GroupID)
	switch r := h.role.Load(); {
	case r.err != nil:
		c.Status, c.Detail = connect.CheckFailed, member+" has no work: "+r.err.Error()
	case r.leader:
		c.Detail = fmt.Sprintf("%s, generation %d, leader", member, st.Generation)
	case r.leaderURL == "":
		c.Status, c.Detail = connect.CheckWarning, fmt.Sprintf("%s is joining (last generation %d)", member, st.Generation)
	default:
		c.Detail = fmt.Sprintf("%s, generation %d, leader %s", member, st.Generation, r.leaderURL)
	}
	return c, true
}

// configTopicCheck reports the config records that could not be read: the worker skipped them and
// works on, but an operator should delete or rewrite them.
func (h *Herder) configTopicCheck() connect.HealthCheck {
	snap := h.cfg.Configs.Snapshot()
	c := connect.HealthCheck{Name: "config topic", Status: connect.CheckOK, Detail: fmt.Sprintf("read up to offset %d", snap.Offset)}
	if len(snap.Skipped) == 0 {
		return c
	}
	c.Status = connect.CheckWarning
	c.Detail = fmt.Sprintf("%d record(s) could not be read and were skipped (read up to offset %d); DELETE /connectors/{name} removes a skipped connector", len(snap.Skipped), snap.Offset)
	for _, r := range snap.Skipped {
		c.Problems = append(c.Problems, r.String())
	}
	return c
}

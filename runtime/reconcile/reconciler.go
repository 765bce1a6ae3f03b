package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasmconnect/wasmconnect/hcl"
)

// Config configures a Reconciler.
type Config struct {
	Dir     string // the directory of *.hcl connector files
	Options        // owner, prune, drift mode (Applied is kept by the reconciler)
	Client  Client
	// IsLeader says whether this worker reconciles now; in a cluster only the leader does, the
	// others keep reading the files and serve their errors. Nil: always.
	IsLeader func() bool
	// Poll is how often the files are checked for changes and the cluster compared with them
	// (default 2 s). Poke triggers a comparison at once (the node pokes on config-topic changes,
	// so a REST change to an owned connector is seen immediately).
	Poll time.Duration
	// Reload re-reads the files even when none changed (default 30 s), for what they read with
	// file().
	Reload time.Duration
	// MinBackoff and MaxBackoff bound the retries of a connector whose apply failed (1 s to 5 min,
	// doubling). A connector waiting to retry never holds the others back.
	MinBackoff, MaxBackoff time.Duration
	Apply                  ApplyOptions
	HCL                    hcl.Options
	Logger                 *slog.Logger
	// WorkerID labels the metrics ("" for none).
	WorkerID string
	// Metrics registers wasmconnect_reconcile_* in VictoriaMetrics' process-wide output.
	Metrics bool
}

// Results of a connector in Status.
const (
	ResultInSync        = "in_sync"        // as declared
	ResultApplied       = "applied"        // the last action succeeded
	ResultPending       = "pending"        // an action is under way
	ResultFailed        = "failed"         // the last action failed; retried with back-off
	ResultConflict      = "conflict"       // managed by another owner: left alone
	ResultDriftReported = "drift_reported" // changed through REST, reported only
	ResultBlocked       = "blocked"        // its state cannot be reached (FAILED)
)

var results = []string{ResultInSync, ResultApplied, ResultPending, ResultFailed, ResultConflict, ResultDriftReported, ResultBlocked}

// ConnectorStatus is one connector's reconciliation result.
type ConnectorStatus struct {
	Declared   string     `json:"declared,omitempty"` // file:line,col
	State      hcl.State  `json:"state,omitempty"`    // declared state
	Result     string     `json:"result"`
	LastAction string     `json:"last_action,omitempty"` // e.g. "update", "create+pause", "delete"
	Message    string     `json:"message,omitempty"`     // the error, or what is left alone and why
	Attempts   int        `json:"attempts,omitempty"`    // failed attempts in a row
	NextRetry  *time.Time `json:"next_retry,omitempty"`
	Updated    time.Time  `json:"updated"`
}

// Status is what GET /reconciler answers.
type Status struct {
	Dir    string    `json:"dir"`
	Owner  string    `json:"owner"`
	Drift  DriftMode `json:"drift"`
	Prune  bool      `json:"prune"`
	Active bool      `json:"active"` // this worker reconciles (it is the leader)
	// Files are the files of the desired state in force, FileErrors the problems of the current
	// files (when there are, the last good desired state stays in force).
	Files      []string                   `json:"files"`
	FileErrors []hcl.Problem              `json:"file_errors"`
	LastLoad   *time.Time                 `json:"last_load,omitempty"` // when the desired state in force was read
	LastRun    *time.Time                 `json:"last_run,omitempty"`
	LastRunMs  float64                    `json:"last_run_ms"`
	Runs       int64                      `json:"runs"`
	DriftCount int64                      `json:"drift_count"` // changes made through REST seen on owned connectors
	Error      string                     `json:"error,omitempty"`
	Connectors map[string]ConnectorStatus `json:"connectors"`
}

// Reconciler keeps a cluster's connectors equal to the ones declared in a directory of HCL files.
type Reconciler struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}
	m    *metricSet

	mu        sync.Mutex
	st        Status
	desired   *hcl.Connectors // the last good desired state; nil before the first
	filesFP   string
	lastLoad  time.Time
	problems  string // the file problems last logged
	listErr   string // the list error last logged
	retry     map[string]*retryState
	inflight  map[string]bool
	applied   map[string]hcl.State // the state each connector was last brought to
	recent    map[string]recentOp  // state calls made lately, not yet in the status
	driftSeen map[string]string    // per connector, the drift last counted
	wg        sync.WaitGroup
}

type retryState struct {
	hash     string // the declaration that failed; a new one starts over
	attempts int
	next     time.Time
}

type recentOp struct {
	op Op
	at time.Time
}

// recentWindow is how long a state call is trusted to be on its way before it is made again: the
// status topic shows a pause a moment after the call.
const recentWindow = 15 * time.Second

// New returns a Reconciler; Run runs it.
func New(cfg Config) *Reconciler {
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	if cfg.Reload <= 0 {
		cfg.Reload = 30 * time.Second
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Minute
	}
	if cfg.Drift == "" {
		cfg.Drift = DriftRevert
	}
	if cfg.Owner == "" {
		cfg.Owner = DefaultOwner(cfg.Dir)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Reconciler{
		cfg: cfg, log: cfg.Logger.With("component", "reconciler", "dir", cfg.Dir),
		wake:  make(chan struct{}, 1),
		retry: map[string]*retryState{}, inflight: map[string]bool{}, applied: map[string]hcl.State{},
		recent: map[string]recentOp{}, driftSeen: map[string]string{},
	}
	r.st = Status{Dir: cfg.Dir, Owner: cfg.Owner, Drift: cfg.Drift, Prune: cfg.Prune,
		Files: []string{}, FileErrors: []hcl.Problem{}, Connectors: map[string]ConnectorStatus{}}
	r.m = newMetrics(cfg.WorkerID, cfg.Metrics, r)
	return r
}

// DefaultOwner is the owner id of a directory when none is configured: its name.
func DefaultOwner(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Base(dir)
}

// Poke asks for a comparison now.
func (r *Reconciler) Poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Status returns the current state of reconciliation.
func (r *Reconciler) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.Files = slices.Clone(st.Files)
	st.FileErrors = slices.Clone(st.FileErrors)
	st.Connectors = make(map[string]ConnectorStatus, len(r.st.Connectors))
	for k, v := range r.st.Connectors {
		st.Connectors[k] = v
	}
	return st
}

// Close unregisters the metrics.
func (r *Reconciler) Close() { r.m.close() }

// Run reconciles until ctx ends, then waits for the calls under way.
func (r *Reconciler) Run(ctx context.Context) {
	defer r.wg.Wait()
	tick := time.NewTicker(r.cfg.Poll)
	defer tick.Stop()
	r.log.Info("reconciling connectors declared in HCL files", "owner", r.cfg.Owner, "drift", r.cfg.Drift, "prune", r.cfg.Prune)
	for {
		r.Cycle(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-r.wake:
			// Let a burst of changes settle into one comparison.
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// Cycle reads the files if they changed and, on the leader, starts what the plan calls for. Calls
// run in the background, one connector each; a connector with a call under way is skipped.
func (r *Reconciler) Cycle(ctx context.Context) {
	start := time.Now()
	r.load(start)
	if r.cfg.IsLeader != nil && !r.cfg.IsLeader() {
		r.mu.Lock()
		if r.st.Active {
			r.log.Info("not the leader: not reconciling")
		}
		r.st.Active = false
		r.st.Connectors = map[string]ConnectorStatus{}
		r.mu.Unlock()
		r.m.sync()
		return
	}
	r.mu.Lock()
	if !r.st.Active {
		r.log.Info("reconciling as the leader")
		r.applied = map[string]hcl.State{} // what a former leader did is unknown
	}
	r.st.Active = true
	desired := r.desired
	r.mu.Unlock()
	if desired == nil {
		return // never read a valid desired state: change nothing
	}

	lctx, cancel := context.WithTimeout(ctx, r.cfg.Apply.withDefaults().Timeout)
	actual, err := r.cfg.Client.List(lctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		r.st.Error = "listing connectors: " + err.Error()
		if r.listErr != err.Error() {
			r.listErr = err.Error()
			r.log.Warn("cannot list the cluster's connectors", "err", err)
		}
		r.mu.Unlock()
		return
	}

	r.mu.Lock()
	defer func() {
		now := time.Now()
		r.st.LastRun = &now
		r.st.LastRunMs = float64(now.Sub(start).Microseconds()) / 1000
		r.st.Runs++
		r.m.runs.Inc()
		r.mu.Unlock()
		r.m.sync()
	}()
	r.st.Error, r.listErr = "", ""
	opts := r.cfg.Options
	opts.Applied = r.applied
	plan := Diff(desired.Connectors, actual, opts)
	now := time.Now()

	declared := map[string]hcl.Connector{}
	for _, c := range desired.Connectors {
		declared[c.Name] = c
	}
	for _, name := range plan.InSync {
		r.applied[name] = declared[name].State
		delete(r.retry, name)
		delete(r.recent, name)
		delete(r.driftSeen, name)
		if r.inflight[name] {
			continue
		}
		cs := r.st.Connectors[name]
		if cs.Result != ResultInSync {
			cs.Updated = now
		}
		c := declared[name]
		cs.Declared, cs.State, cs.Result, cs.Message, cs.Attempts, cs.NextRetry = c.Position(), c.State, ResultInSync, "", 0, nil
		r.st.Connectors[name] = cs
	}
	inPlan := map[string]bool{}
	for _, a := range plan.Actions {
		inPlan[a.Connector] = true
		if r.inflight[a.Connector] {
			continue
		}
		r.consider(ctx, a, now)
	}
	// Forget connectors neither declared nor in the cluster any more.
	for name := range r.st.Connectors {
		if _, ok := declared[name]; ok || inPlan[name] || r.inflight[name] {
			continue
		}
		if _, exists := actual[name]; !exists {
			delete(r.st.Connectors, name)
			delete(r.retry, name)
			delete(r.applied, name)
		}
	}
	for name := range r.applied {
		if _, ok := declared[name]; !ok {
			delete(r.applied, name)
		}
	}
}

// consider records an action's status and starts its calls unless it must wait (held by r.mu).
func (r *Reconciler) consider(ctx context.Context, a Action, now time.Time) {
	cs := r.st.Connectors[a.Connector]
	cs.Declared, cs.State = a.Declared, a.State
	set := func(result, msg string) {
		if cs.Result != result || cs.Message != msg {
			cs.Updated = now
		}
		cs.Result, cs.Message = result, msg
		r.st.Connectors[a.Connector] = cs
	}
	if len(a.Steps) == 1 {
		switch op := a.Steps[0].Op; op {
		case OpPause, OpResume, OpStop:
			if ro, ok := r.recent[a.Connector]; ok && ro.op == op && now.Sub(ro.at) < recentWindow {
				return // made lately; the status has not caught up yet
			}
		}
	}
	if a.Drift {
		// Count each distinct drift once, however long it is reported.
		key := fingerprint([]Action{{Connector: a.Connector, Changes: a.Changes, From: a.From}})
		if r.driftSeen[a.Connector] != key {
			r.driftSeen[a.Connector] = key
			r.st.DriftCount++
			r.m.drift.Inc()
			verb := "reverting it"
			if a.Reported {
				verb = "reporting it only (connectors.drift=report)"
			}
			r.log.Warn("connector changed through REST; "+verb, "connector", a.Connector, "keys", changedKeys(a), "state", a.From)
		}
	}
	switch {
	case a.Kind == KindConflict:
		set(ResultConflict, a.Note)
		return
	case len(a.Steps) == 0 && a.Reported:
		set(ResultDriftReported, a.Note)
		return
	case len(a.Steps) == 0:
		set(ResultBlocked, a.Note)
		return
	}
	if rs := r.retry[a.Connector]; rs != nil {
		if rs.hash != a.Hash {
			delete(r.retry, a.Connector) // the declaration changed: try at once
		} else if now.Before(rs.next) {
			return // waiting for its retry; its status says so
		}
	}
	r.inflight[a.Connector] = true
	set(ResultPending, "")
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		res := ApplyAction(ctx, r.cfg.Client, a, r.cfg.Apply)
		r.finish(a, res)
	}()
}

func changedKeys(a Action) []string {
	var keys []string
	for _, c := range a.Changes {
		keys = append(keys, c.Key)
	}
	return keys
}

func (r *Reconciler) finish(a Action, res Result) {
	r.mu.Lock()
	defer func() {
		r.mu.Unlock()
		r.m.sync()
	}()
	delete(r.inflight, a.Connector)
	now := time.Now()
	cs := r.st.Connectors[a.Connector]
	cs.Updated = now
	var ops []string
	for _, op := range res.Done {
		ops = append(ops, string(op))
	}
	cs.LastAction = strings.Join(ops, "+")
	for _, op := range res.Done {
		switch op {
		case OpPause, OpResume, OpStop:
			r.recent[a.Connector] = recentOp{op, now}
		case OpCreate:
			// Created paused or stopped: the status shows it a moment later.
			switch a.State {
			case hcl.StatePaused:
				r.recent[a.Connector] = recentOp{OpPause, now}
			case hcl.StateStopped:
				r.recent[a.Connector] = recentOp{OpStop, now}
			}
		}
	}
	if res.Err == nil {
		delete(r.retry, a.Connector)
		cs.Result, cs.Message, cs.Attempts, cs.NextRetry = ResultApplied, "", 0, nil
		if a.Kind == KindDelete || a.Kind == KindPrune {
			delete(r.applied, a.Connector)
		} else {
			r.applied[a.Connector] = a.State
		}
		if a.Drift {
			delete(r.driftSeen, a.Connector)
		}
		r.st.Connectors[a.Connector] = cs
		r.log.Info("connector reconciled", "connector", a.Connector, "action", a.Kind, "calls", cs.LastAction, "declared", a.Declared)
		return
	}
	if errors.Is(res.Err, context.Canceled) {
		cs.Result, cs.Message = ResultPending, "interrupted"
		r.st.Connectors[a.Connector] = cs
		return
	}
	rs := r.retry[a.Connector]
	if rs == nil || rs.hash != a.Hash {
		rs = &retryState{hash: a.Hash}
		r.retry[a.Connector] = rs
	}
	rs.attempts++
	delay := r.cfg.MinBackoff << min(rs.attempts-1, 20)
	if delay > r.cfg.MaxBackoff || delay <= 0 {
		delay = r.cfg.MaxBackoff
	}
	rs.next = now.Add(delay)
	next := rs.next
	cs.Result, cs.Attempts, cs.NextRetry = ResultFailed, rs.attempts, &next
	cs.Message = fmt.Sprintf("%s failed: %v", res.Failed, res.Err)
	r.st.Connectors[a.Connector] = cs
	r.m.failures.Inc()
	r.log.Error("connector not reconciled; retrying later", "connector", a.Connector, "action", a.Kind, "call", res.Failed,
		"err", res.Err, "attempt", rs.attempts, "retry_in", delay, "declared", a.Declared)
}

// load reads the files when they changed (or Reload passed). A file with errors changes nothing:
// the problems are reported and the last good desired state stays in force.
func (r *Reconciler) load(now time.Time) {
	fp := dirFingerprint(r.cfg.Dir)
	r.mu.Lock()
	due := fp != r.filesFP || now.Sub(r.lastLoad) >= r.cfg.Reload
	r.mu.Unlock()
	if !due {
		return
	}
	cs, err := hcl.LoadConnectorsDir(r.cfg.Dir, r.cfg.HCL)
	r.mu.Lock()
	defer func() {
		r.mu.Unlock()
		r.m.sync()
	}()
	r.filesFP, r.lastLoad = fp, now
	if err != nil {
		var he *hcl.Error
		problems := []hcl.Problem{{File: r.cfg.Dir, Message: err.Error()}}
		if errors.As(err, &he) {
			problems = he.Problems
		}
		r.st.FileErrors = problems
		if text := err.Error(); text != r.problems {
			r.problems = text
			kept := "no connector files were ever valid: nothing is changed"
			if r.desired != nil {
				kept = fmt.Sprintf("the last valid files (%s) stay in force", r.st.LastLoad.Format(time.RFC3339))
			}
			for _, p := range problems {
				r.log.Error("invalid connector file; "+kept, "problem", p.String())
			}
		}
		return
	}
	if r.problems != "" {
		r.log.Info("connector files are valid again")
	}
	r.problems = ""
	changed := r.desired == nil || !sameConnectors(r.desired.Connectors, cs.Connectors)
	r.desired = cs
	r.st.FileErrors = []hcl.Problem{}
	r.st.Files = append([]string{}, cs.Files...)
	t := now
	r.st.LastLoad = &t
	if changed {
		r.log.Info("connector files read", "files", len(cs.Files), "connectors", len(cs.Connectors))
	}
}

func sameConnectors(a, b []hcl.Connector) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].State != b[i].State || Hash(a[i].Config) != Hash(b[i].Config) || a[i].Position() != b[i].Position() {
			return false
		}
	}
	return true
}

// dirFingerprint digests the names, sizes and modification times of the directory's *.hcl files.
func dirFingerprint(dir string) string {
	files, err := hcl.ConnectorFiles(dir)
	if err != nil {
		return "error:" + err.Error()
	}
	h := sha256.New()
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			fmt.Fprintf(h, "%s\x00error\x00", f)
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", f, st.Size(), st.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))
}

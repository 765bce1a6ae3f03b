package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/wasmconnect/wasmconnect/hcl"
	"github.com/wasmconnect/wasmconnect/runtime/configprovider"
)

// Keys the reconciler writes into the configs of the connectors it owns. Kafka Connect keeps keys it
// does not know, so ownership travels with the connector, in the config topic, and is visible in
// GET /connectors/{name}/config.
const (
	// KeyManagedBy names the owner: the directory's owner id (connectors.owner, by default the
	// directory's name).
	KeyManagedBy = "wasmconnect.managed.by"
	// KeyManagedHash is a digest of the declared config as last written. When it still matches the
	// declaration but a declared key's value does not, the connector was changed through REST:
	// that is drift, not a change of the files.
	KeyManagedHash = "wasmconnect.managed.hash"
)

// DriftMode says what to do with changes made through REST to owned connectors.
type DriftMode string

const (
	DriftRevert DriftMode = "revert" // put the declared config and state back (default)
	DriftReport DriftMode = "report" // only report them
)

// Options are the diff's settings.
type Options struct {
	// Owner is written as wasmconnect.managed.by; only connectors with this owner are updated
	// without adoption and deleted when no longer declared.
	Owner string
	// Prune deletes connectors that have no owner (created through REST) and are not declared.
	// Connectors of another owner are never deleted.
	Prune bool
	Drift DriftMode
	// Applied holds the state this reconciler last set per connector, to tell a state changed
	// through REST (drift) from a state changed in the files. Nil: every state difference is a change.
	Applied map[string]hcl.State
}

// Actual is a connector as the cluster has it.
type Actual struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	// State is the connector's state from its status: RUNNING, PAUSED, STOPPED, FAILED,
	// UNASSIGNED, RESTARTING; "" when no status is known yet.
	State string `json:"state"`
}

// Op is one REST call of a plan.
type Op string

const (
	OpCreate Op = "create" // POST /connectors (with initial_state)
	OpUpdate Op = "update" // PUT /connectors/{name}/config
	OpPause  Op = "pause"  // PUT /connectors/{name}/pause
	OpResume Op = "resume" // PUT /connectors/{name}/resume
	OpStop   Op = "stop"   // PUT /connectors/{name}/stop
	OpDelete Op = "delete" // DELETE /connectors/{name}
)

// Step is one call to make.
type Step struct {
	Op Op `json:"op"`
	// Config is the whole config sent by create and update, with placeholders as declared.
	Config map[string]string `json:"config,omitempty"`
	// Initial is create's initial_state: RUNNING, PAUSED or STOPPED.
	Initial string `json:"initial_state,omitempty"`
}

// Change is one key whose value changes. Old is nil for a key added, New nil for a key dropped.
type Change struct {
	Key string  `json:"key"`
	Old *string `json:"old,omitempty"`
	New *string `json:"new,omitempty"`
	// Secret is set for keys declared with secret() and keys named like credentials: their clear
	// values are never shown (placeholders are).
	Secret bool `json:"secret,omitempty"`
}

// Kind is what an action does to a connector, as a plan shows it.
type Kind string

const (
	KindCreate   Kind = "create"
	KindUpdate   Kind = "update"   // the declaration changed
	KindAdopt    Kind = "adopt"    // declared, exists without an owner: updated and owned from now on
	KindDrift    Kind = "drift"    // changed through REST; reverted, or only reported (Reported)
	KindState    Kind = "state"    // only the state changes (pause, resume, stop)
	KindDelete   Kind = "delete"   // owned, no longer declared
	KindPrune    Kind = "prune"    // no owner, not declared, and Prune is on
	KindConflict Kind = "conflict" // declared, but owned by another owner: left alone
	KindBlocked  Kind = "blocked"  // the state cannot be reached from the current one (FAILED)
)

// Action is everything a plan does to one connector.
type Action struct {
	Connector string `json:"connector"`
	Kind      Kind   `json:"kind"`
	// Declared is where the connector is declared ("file:line,col"), empty for deletions.
	Declared string   `json:"declared,omitempty"`
	Steps    []Step   `json:"steps,omitempty"`
	Changes  []Change `json:"changes,omitempty"`
	// State is the declared state, From the connector's current one.
	State hcl.State `json:"state,omitempty"`
	From  string    `json:"from,omitempty"`
	// Drift is set when the action reverts (or, with Reported, would revert) a change made
	// through REST.
	Drift    bool   `json:"drift,omitempty"`
	Reported bool   `json:"reported,omitempty"`
	Note     string `json:"note,omitempty"`
	// Hash is the declaration's digest, to tell when it changes (retries start over).
	Hash string `json:"hash,omitempty"`
}

// Plan is what it takes to make the cluster match the declared connectors.
type Plan struct {
	Owner   string   `json:"owner"`
	Actions []Action `json:"actions"` // by connector name
	InSync  []string `json:"in_sync"` // declared connectors already as declared
	// Fingerprint digests the actions, so that `apply --plan FILE` can tell whether a saved plan
	// is still what the cluster and the files call for.
	Fingerprint string `json:"fingerprint"`
}

// Changes counts the actions that call the REST API.
func (p Plan) Changes() int {
	n := 0
	for _, a := range p.Actions {
		if len(a.Steps) > 0 {
			n++
		}
	}
	return n
}

// Hash is the digest of a declared config recorded as wasmconnect.managed.hash.
func Hash(cfg map[string]string) string {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		if k != KeyManagedBy && k != KeyManagedHash {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(cfg[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Want is the config written for a declared connector: its config plus the ownership keys.
func Want(c hcl.Connector, owner string) map[string]string {
	out := make(map[string]string, len(c.Config)+2)
	for k, v := range c.Config {
		out[k] = v
	}
	out[KeyManagedBy] = owner
	out[KeyManagedHash] = Hash(c.Config)
	return out
}

// sensitiveKey matches keys usually holding credentials, whose clear values are never shown.
var sensitiveKey = regexp.MustCompile(`(?i)(password|passwd|secret|token|credential|api[._-]?key|private[._-]?key|access[._-]?key|jaas\.config|user\.info)`)

// masked reports whether a value is one a server shows instead of the real one (Confluent Platform
// masks passwords, Kafka's validate shows "[hidden]"): it cannot be compared, so it never counts
// as a difference.
func masked(v string) bool {
	switch strings.TrimSpace(v) {
	case "[hidden]", "****", "********", "••••", "••••••••", "<hidden>", "<redacted>", "[REDACTED]":
		return true
	}
	return false
}

// serverKey reports keys a server adds by itself (name, Confluent's __internal.* keys): never
// compared, never counted as dropped.
func serverKey(k string) bool {
	return k == "name" || strings.HasPrefix(k, "__internal")
}

func strp(s string) *string { return &s }

// Diff compares the declared connectors with the cluster's and returns the plan that makes them
// equal. It does no I/O.
//
//   - A declared connector that does not exist is created, in its declared state (initial_state).
//   - One that exists is compared on the keys declared only (plus the ownership keys): keys the
//     server adds and keys nobody declared never cause an update, and values the server masks are
//     not compared. Placeholders are compared as written, never resolved.
//   - A difference while wasmconnect.managed.hash still matches the declaration is drift (a REST
//     change): reverted, or with DriftReport only reported.
//   - A connector without an owner is adopted; one owned by another owner is a conflict, left alone.
//   - The state is compared with the connector's status: paused or stopped connectors are resumed,
//     and so on. A FAILED connector is not paused (Kafka would keep it FAILED, and the plan would
//     pause it forever); it is stopped if declared stopped.
//   - An owned connector that is no longer declared is deleted; one without an owner only with
//     Prune; one owned by another owner never.
func Diff(desired []hcl.Connector, actual map[string]Actual, opts Options) Plan {
	if opts.Drift == "" {
		opts.Drift = DriftRevert
	}
	p := Plan{Owner: opts.Owner}
	declared := map[string]bool{}
	for _, c := range desired {
		declared[c.Name] = true
		a, exists := actual[c.Name]
		if act, ok := diffOne(c, a, exists, opts); ok {
			p.Actions = append(p.Actions, act)
		} else {
			p.InSync = append(p.InSync, c.Name)
		}
	}
	for _, name := range sortedNames(actual) {
		if declared[name] {
			continue
		}
		a := actual[name]
		switch owner := a.Config[KeyManagedBy]; {
		case owner == opts.Owner:
			p.Actions = append(p.Actions, Action{Connector: name, Kind: KindDelete, Steps: []Step{{Op: OpDelete}},
				From: a.State, Note: fmt.Sprintf("owned by %q, no longer declared", owner)})
		case owner == "" && opts.Prune:
			p.Actions = append(p.Actions, Action{Connector: name, Kind: KindPrune, Steps: []Step{{Op: OpDelete}},
				From: a.State, Note: "not declared, no owner, and pruning is on"})
		}
	}
	sort.Slice(p.Actions, func(i, j int) bool { return p.Actions[i].Connector < p.Actions[j].Connector })
	sort.Strings(p.InSync)
	p.Fingerprint = fingerprint(p.Actions)
	return p
}

// diffOne returns the action for one declared connector, false when it is in sync.
func diffOne(c hcl.Connector, a Actual, exists bool, opts Options) (Action, bool) {
	want := Want(c, opts.Owner)
	act := Action{Connector: c.Name, Declared: c.Position(), State: c.State, Hash: want[KeyManagedHash]}
	secret := func(k string) bool { return c.Secret[k] || sensitiveKey.MatchString(k) }
	if !exists {
		act.Kind = KindCreate
		act.Steps = []Step{{Op: OpCreate, Config: want, Initial: initialState(c.State)}}
		for _, k := range sortedNames(want) {
			if k != KeyManagedHash {
				act.Changes = append(act.Changes, Change{Key: k, New: strp(want[k]), Secret: secret(k)})
			}
		}
		return act, true
	}
	act.From = a.State
	owner := a.Config[KeyManagedBy]
	if owner != "" && owner != opts.Owner {
		act.Kind = KindConflict
		act.Note = fmt.Sprintf("exists and is managed by %q, not %q: left alone", owner, opts.Owner)
		return act, true
	}

	// Declared keys whose value differs (the hash is compared on its own).
	var changes []Change
	for _, k := range sortedNames(want) {
		if k == KeyManagedHash {
			continue
		}
		old, has := a.Config[k]
		if has && (old == want[k] || masked(old)) {
			continue
		}
		ch := Change{Key: k, New: strp(want[k]), Secret: secret(k)}
		if has {
			ch.Old = strp(old)
		}
		changes = append(changes, ch)
	}
	declChanged := a.Config[KeyManagedHash] != want[KeyManagedHash]
	update := len(changes) > 0 || declChanged
	drift := owner != "" && !declChanged && len(changes) > 0

	switch {
	case owner == "":
		act.Kind = KindAdopt
		act.Note = fmt.Sprintf("exists without an owner: adopted, managed by %q from now on", opts.Owner)
	case drift:
		act.Kind, act.Drift = KindDrift, true
	case update:
		act.Kind = KindUpdate
	}
	if update {
		act.Changes = changes
		if !(drift && opts.Drift == DriftReport) {
			// A PUT replaces the config: keys nobody declared go (server keys come back).
			for _, k := range sortedNames(a.Config) {
				if _, declared := want[k]; !declared && !serverKey(k) {
					act.Changes = append(act.Changes, Change{Key: k, Old: strp(a.Config[k]), Secret: secret(k)})
				}
			}
			act.Steps = append(act.Steps, Step{Op: OpUpdate, Config: want})
		} else {
			act.Reported = true
			act.Note = "changed through REST; reported only (connectors.drift=report)"
		}
	}

	// State.
	op, blocked := stateOp(c.State, a.State)
	if blocked != "" {
		if act.Kind == "" {
			act.Kind = KindBlocked
		}
		act.Note = joinNotes(act.Note, blocked)
	}
	if op != "" {
		stateDrift := opts.Applied != nil && opts.Applied[c.Name] == c.State && owner != ""
		if act.Kind == "" {
			act.Kind = KindState
			if stateDrift {
				act.Drift = true
			}
		}
		if stateDrift && opts.Drift == DriftReport {
			act.Drift, act.Reported = true, true
			act.Note = joinNotes(act.Note, fmt.Sprintf("%s through REST; reported only (connectors.drift=report)", strings.ToLower(a.State)))
		} else {
			act.Steps = append(act.Steps, Step{Op: op})
		}
	}
	if act.Kind == "" {
		return Action{}, false
	}
	return act, true
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// stateOp is the call that brings a connector from its current state to the declared one, if any,
// or why none can.
func stateOp(want hcl.State, actual string) (Op, string) {
	switch want {
	case hcl.StateRunning, "":
		if actual == "PAUSED" || actual == "STOPPED" {
			return OpResume, ""
		}
	case hcl.StatePaused:
		switch actual {
		case "RUNNING", "STOPPED":
			return OpPause, ""
		case "FAILED":
			return "", "the connector is FAILED: not paused (restart it, or declare it stopped)"
		}
	case hcl.StateStopped:
		switch actual {
		case "RUNNING", "PAUSED", "FAILED", "RESTARTING":
			return OpStop, ""
		}
	}
	return "", ""
}

func initialState(s hcl.State) string {
	switch s {
	case hcl.StatePaused:
		return "PAUSED"
	case hcl.StateStopped:
		return "STOPPED"
	}
	return "RUNNING"
}

func fingerprint(actions []Action) string {
	b, _ := json.Marshal(actions)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Shown is how a plan shows a value: quoted, placeholders as written, other values of secret keys
// hidden.
func Shown(v string, secret bool) string {
	if r := Redacted(v, secret); r != v {
		return r
	}
	return fmt.Sprintf("%q", v)
}

// Redacted is v, or "(sensitive value)" for a secret key's value that is not a placeholder.
func Redacted(v string, secret bool) string {
	if secret && !configprovider.HasPlaceholder(v) {
		return "(sensitive value)"
	}
	return v
}

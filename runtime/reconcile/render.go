package reconcile

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// symbols prefix each action in a printed plan.
var symbols = map[Kind]string{
	KindCreate: "+", KindUpdate: "~", KindAdopt: "~", KindDrift: "~", KindState: ">",
	KindDelete: "-", KindPrune: "-", KindConflict: "!", KindBlocked: "!",
}

// Write prints a plan for people: one paragraph per connector with the keys that change, then a
// summary line. Values of secret keys are never printed, except as placeholders.
func Write(w io.Writer, p Plan) {
	for _, a := range p.Actions {
		writeAction(w, a)
	}
	fmt.Fprintln(w, Summary(p))
}

func writeAction(w io.Writer, a Action) {
	head := fmt.Sprintf("%s %s %s", symbols[a.Kind], a.Kind, a.Connector)
	if a.Reported {
		head = fmt.Sprintf("! drift %s", a.Connector)
	}
	var tail []string
	if a.Declared != "" {
		tail = append(tail, a.Declared)
	}
	for _, s := range a.Steps {
		switch s.Op {
		case OpCreate:
			if s.Initial != "RUNNING" {
				tail = append(tail, "initial state "+s.Initial)
			}
		case OpPause, OpResume, OpStop:
			from := a.From
			if from == "" {
				from = "unknown"
			}
			tail = append(tail, fmt.Sprintf("%s: %s -> %s", s.Op, from, strings.ToUpper(string(a.State))))
		}
	}
	if a.Drift && !a.Reported {
		tail = append(tail, "changed through REST: reverted")
	}
	if len(tail) > 0 {
		head += "  (" + strings.Join(tail, "; ") + ")"
	}
	fmt.Fprintln(w, head)
	width := 0
	for _, c := range a.Changes {
		width = max(width, len(c.Key))
	}
	for _, c := range a.Changes {
		switch {
		case c.Old == nil && c.New != nil:
			fmt.Fprintf(w, "    + %-*s = %s\n", width, c.Key, Shown(*c.New, c.Secret))
		case c.Old != nil && c.New == nil:
			fmt.Fprintf(w, "    - %-*s (not declared: dropped)\n", width, c.Key)
		case c.Old != nil && c.New != nil:
			fmt.Fprintf(w, "    ~ %-*s = %s -> %s\n", width, c.Key, Shown(*c.Old, c.Secret), Shown(*c.New, c.Secret))
		}
	}
	if a.Note != "" {
		fmt.Fprintf(w, "    # %s\n", a.Note)
	}
}

// Summary is the plan's last line: "Plan: 1 to create, 2 to update, 1 to delete." or "No changes.".
func Summary(p Plan) string {
	counts := map[string]int{}
	for _, a := range p.Actions {
		for _, s := range a.Steps {
			counts[string(s.Op)]++
		}
		if a.Kind == KindConflict {
			counts["conflict"]++
		}
		if a.Reported {
			counts["drift reported"]++
		}
	}
	order := []string{"create", "update", "pause", "resume", "stop", "delete"}
	var parts []string
	for _, op := range order {
		if n := counts[op]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d to %s", n, op))
		}
	}
	var notes []string
	for _, k := range []string{"conflict", "drift reported"} {
		if n := counts[k]; n > 0 {
			notes = append(notes, fmt.Sprintf("%d %s", n, k))
		}
	}
	sort.Strings(notes)
	s := "No changes."
	if len(parts) > 0 {
		s = "Plan: " + strings.Join(parts, ", ") + "."
	}
	if len(p.InSync) > 0 {
		s += fmt.Sprintf(" %d in sync.", len(p.InSync))
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, ", ") + ")"
	}
	return s
}

package store

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// HistoryLength is how many state changes a StatusStore remembers (History).
const HistoryLength = 256

// StateChange is one change of a connector's or task's state read from the status topic: a state
// other than the one before, another worker, or a new trace. A connector or task whose status was
// removed (deleted connector, task count lowered) changes to StateDestroyed.
type StateChange struct {
	// Time is the status record's timestamp (when a worker wrote it), or when this worker read it
	// if the log has no timestamps.
	Time      time.Time
	Connector string
	// Task is the task number, or -1 for the connector itself.
	Task int
	Status
}

// history is a ring of the last HistoryLength state changes. It is guarded by StatusStore.mu.
type history struct {
	ring []StateChange
	next int // where the next change goes once the ring is full
}

func (h *history) add(c StateChange) {
	if len(h.ring) < HistoryLength {
		h.ring = append(h.ring, c)
		return
	}
	h.ring[h.next] = c
	h.next = (h.next + 1) % HistoryLength
}

// list returns the changes oldest first.
func (h *history) list() []StateChange {
	out := make([]StateChange, 0, len(h.ring))
	out = append(out, h.ring[h.next:]...)
	return append(out, h.ring[:h.next]...)
}

// History returns the last state changes of every connector and task of the cluster (not only this
// worker's: every worker reads the whole status topic), oldest first. Since the topic is compacted,
// a worker that just started sees each instance's latest state, not all that came before it. It
// is what an operator asks first about a connector that misbehaves: what happened, when, where,
// and with which trace.
func (s *StatusStore) History() []StateChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.history.list()
}

// recordChange adds a change to the history unless st repeats what prev said. Called under s.mu.
func (s *StatusStore) recordChange(r *kgo.Record, connector string, task int, prev Status, had bool, st Status) {
	if had && prev.State == st.State && prev.WorkerID == st.WorkerID && prev.Trace == st.Trace {
		return
	}
	if !had && st.State == StateDestroyed {
		return
	}
	at := r.Timestamp
	if at.IsZero() {
		at = time.Now()
	}
	s.history.add(StateChange{Time: at, Connector: connector, Task: task, Status: st})
}

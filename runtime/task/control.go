package task

import (
	"context"
	"log/slog"
	"sync"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// control is the pause/resume switch shared by both loops. A paused task keeps its plugin instance
// and its place in the data but moves nothing, as Kafka Connect's PAUSED state.
type control struct {
	mu      sync.Mutex
	paused  bool
	resumed chan struct{} // closed on resume
}

func newControl(paused bool) *control {
	c := &control{paused: paused, resumed: make(chan struct{})}
	if !paused {
		close(c.resumed)
	}
	return c
}

// SetPaused pauses or resumes the loop.
func (c *control) SetPaused(p bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p == c.paused {
		return
	}
	c.paused = p
	if p {
		c.resumed = make(chan struct{})
	} else {
		close(c.resumed)
	}
}

// isPaused reports whether the loop is to pause before its next step.
func (c *control) isPaused() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// waitResumed blocks while paused; it reports whether the loop should go on (false: ctx done).
// onPause runs once when the loop finds itself paused, before it waits.
func (c *control) waitResumed(ctx context.Context, onPause func()) bool {
	c.mu.Lock()
	ch, paused := c.resumed, c.paused
	c.mu.Unlock()
	if !paused {
		return ctx.Err() == nil
	}
	if onPause != nil {
		onPause()
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// stateReporter returns a function that passes a state to f only when it differs from the last one.
func stateReporter(f StateFunc) func(connect.State) {
	var last connect.State
	return func(st connect.State) {
		if st != last {
			last = st
			f(st, "")
		}
	}
}

// reportFailed reports err, which ended a task, as its FAILED state, unless the task had been told
// to stop (ctx done) by then. As with Kafka Connect's WorkerTask, a task that fails after its stop
// is not failed: its work was taken from it, and a newer instance may run on another worker
// already. An exactly-once source task fenced by that successor fails its last commit, and the
// FAILED it wrote would be the last word on a task that runs elsewhere (found by TestChaos: a
// worker paused past its session stopped its tasks on waking, after the group had moved them).
func reportFailed(ctx context.Context, log *slog.Logger, report StateFunc, err error) {
	if ctx.Err() != nil {
		log.Warn("the task failed while it stopped; not reported as FAILED, a newer instance may run elsewhere", "err", err)
		return
	}
	report(connect.StateFailed, err.Error())
}

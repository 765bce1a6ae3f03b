package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// ApplyOptions bound how a plan is applied.
type ApplyOptions struct {
	// Parallel is how many connectors are worked on at once (default 4). Connectors are
	// independent: one that fails or hangs does not hold the others back.
	Parallel int
	// Timeout bounds each call (default 60 s).
	Timeout time.Duration
	// Conflicts is how often a call answered 409 (a rebalance, a concurrent change) is retried,
	// with back-off from 250 ms (default 5).
	Conflicts int
}

func (o ApplyOptions) withDefaults() ApplyOptions {
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.Conflicts == 0 {
		o.Conflicts = 5
	}
	return o
}

// Result is what applying one action did.
type Result struct {
	Connector string
	Done      []Op  // the steps that succeeded
	Failed    Op    // the step that failed, if any
	Err       error // why
}

// Apply applies the plan's actions, each connector on its own (up to Parallel at once), and
// returns one result per action with steps, in plan order. Within an action the steps run in order
// and stop at the first failure.
func Apply(ctx context.Context, c Client, p Plan, o ApplyOptions) []Result {
	o = o.withDefaults()
	var todo []Action
	for _, a := range p.Actions {
		if len(a.Steps) > 0 {
			todo = append(todo, a)
		}
	}
	results := make([]Result, len(todo))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, a := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = ApplyAction(ctx, c, a, o)
		}()
	}
	wg.Wait()
	return results
}

// ApplyAction runs one action's steps in order.
func ApplyAction(ctx context.Context, c Client, a Action, o ApplyOptions) Result {
	o = o.withDefaults()
	r := Result{Connector: a.Connector}
	for _, s := range a.Steps {
		if err := retryConflicts(ctx, o, func(ctx context.Context) error { return step(ctx, c, a.Connector, s) }); err != nil {
			r.Failed, r.Err = s.Op, err
			return r
		}
		r.Done = append(r.Done, s.Op)
	}
	return r
}

func step(ctx context.Context, c Client, name string, s Step) error {
	switch s.Op {
	case OpCreate:
		return c.Create(ctx, name, s.Config, s.Initial)
	case OpUpdate:
		return c.Update(ctx, name, s.Config)
	case OpPause, OpResume, OpStop:
		return c.SetState(ctx, name, s.Op)
	case OpDelete:
		err := c.Delete(ctx, name)
		if connect.IsNotFound(err) {
			return nil // gone already
		}
		return err
	}
	return fmt.Errorf("unknown step %q", s.Op)
}

// retryConflicts runs f with a timeout per call, retrying 409s (rebalances) with back-off.
func retryConflicts(ctx context.Context, o ApplyOptions, f func(context.Context) error) error {
	delay := 250 * time.Millisecond
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, o.Timeout)
		err := f(cctx)
		cancel()
		if err == nil || attempt >= o.Conflicts || !retriable(err) {
			if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				err = fmt.Errorf("no answer within %v: %w", o.Timeout, err)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// retriable: a 409 is a rebalance or a concurrent change, worth retrying soon.
func retriable(err error) bool {
	var ce *connect.Error
	return errors.As(err, &ce) && ce.Code == http.StatusConflict && !isAlreadyExists(ce)
}

func isAlreadyExists(ce *connect.Error) bool {
	return strings.Contains(strings.ToLower(ce.Message), "already exists")
}

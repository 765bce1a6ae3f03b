package metrics

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// workerSeries is connect-worker-metrics: what this worker runs and how its starts went.
type workerSeries struct {
	connStarts, taskStarts startups
}

// startups counts startup attempts by outcome, with Kafka's windowed success and failure shares.
type startups struct {
	attempts, success, failure *vm.Counter
	results                    windowed // 1 for a success, 0 for a failure
}

func (w *workerSeries) register(r *Registry) {
	s := &series{r: r}
	s.gauge(r.kafka(groupWorker, "connector-count"), "", func() float64 { return float64(r.nConns.Load()) })
	s.gauge(r.kafka(groupWorker, "task-count"), "", func() float64 { return float64(r.nTasks.Load()) })
	for _, st := range []struct {
		prefix string
		c      *startups
	}{{"connector-startup-", &w.connStarts}, {"task-startup-", &w.taskStarts}} {
		c := st.c
		c.attempts = s.counter(r.kafka(groupWorker, st.prefix+"attempts-total"), "")
		c.success = s.counter(r.kafka(groupWorker, st.prefix+"success-total"), "")
		c.failure = s.counter(r.kafka(groupWorker, st.prefix+"failure-total"), "")
		s.gauge(r.kafka(groupWorker, st.prefix+"success-percentage"), "", c.results.avg)
		s.gauge(r.kafka(groupWorker, st.prefix+"failure-percentage"), "", func() float64 {
			n, sum, _ := c.results.stats()
			if n == 0 {
				return 0
			}
			return 1 - sum/float64(n)
		})
	}
}

func (c *startups) record(ok bool) {
	c.attempts.Inc()
	if ok {
		c.success.Inc()
		c.results.record(1)
	} else {
		c.failure.Inc()
		c.results.record(0)
	}
}

// ConnectorStartup counts one connector start on this worker (Kafka: connector-startup-*): in
// wasmconnect, the leader asking a connector for its task configs. The percentages are fractions
// (0-1) over the sample window, as Kafka's Frequencies report them.
func (r *Registry) ConnectorStartup(ok bool) {
	if r != nil {
		r.worker.connStarts.record(ok)
	}
}

// TaskStartup counts one task start on this worker (Kafka: task-startup-*): ok once its plugins are
// open and its loop runs, not ok when it failed before.
func (r *Registry) TaskStartup(ok bool) {
	if r != nil {
		r.worker.taskStarts.record(ok)
	}
}

// Rebalance holds connect-worker-rebalance-metrics, which only a worker in a group has. It
// implements cluster.RebalanceObserver.
type Rebalance struct {
	completed *vm.Counter
	epoch     atomic.Int64
	active    atomic.Bool
	times     windowed // milliseconds per rebalance

	mu    sync.Mutex
	began time.Time
	last  time.Time
}

// Rebalance registers the rebalance series; call it once, for a worker that joins a group.
func (r *Registry) Rebalance() *Rebalance {
	rb := &Rebalance{}
	rb.epoch.Store(-1)
	s := &series{r: r}
	rb.completed = s.counter(r.kafka(groupRebalance, "completed-rebalances-total"), "")
	s.gauge(r.kafka(groupRebalance, "epoch"), "", func() float64 { return float64(rb.epoch.Load()) })
	s.gauge(r.kafka(groupRebalance, "rebalancing"), "", func() float64 {
		if rb.active.Load() {
			return 1
		}
		return 0
	})
	s.gauge(r.kafka(groupRebalance, "rebalance-avg-time-ms"), "", rb.times.avg)
	s.gauge(r.kafka(groupRebalance, "rebalance-max-time-ms"), "", rb.times.max)
	s.gauge(r.kafka(groupRebalance, "time-since-last-rebalance-ms"), "", func() float64 {
		rb.mu.Lock()
		defer rb.mu.Unlock()
		if rb.last.IsZero() {
			return math.Inf(1) // as Kafka before the first rebalance
		}
		return float64(now().Sub(rb.last).Milliseconds())
	})
	return rb
}

// RebalanceStarted marks the start of a rebalance (the worker is about to join the group).
func (rb *Rebalance) RebalanceStarted() {
	if rb == nil {
		return
	}
	rb.mu.Lock()
	if !rb.active.Load() {
		rb.began = now()
	}
	rb.active.Store(true)
	rb.mu.Unlock()
}

// RebalanceCompleted marks a completed rebalance of the given generation (Kafka's epoch).
func (rb *Rebalance) RebalanceCompleted(generation int32) {
	if rb == nil {
		return
	}
	t := now()
	rb.mu.Lock()
	if rb.active.Load() {
		rb.times.record(float64(t.Sub(rb.began).Milliseconds()))
	}
	rb.active.Store(false)
	rb.last = t
	rb.mu.Unlock()
	rb.epoch.Store(int64(generation))
	rb.completed.Inc()
}

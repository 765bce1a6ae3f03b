package reconcile

import (
	"io"
	"strings"
	"sync"

	vm "github.com/VictoriaMetrics/metrics"
)

// Metric names.
const (
	MetricRuns       = "wasmconnect_reconcile_runs_total"     // comparisons of files and cluster
	MetricDrift      = "wasmconnect_reconcile_drift_total"    // REST changes seen on owned connectors
	MetricFailures   = "wasmconnect_reconcile_failures_total" // failed applies (each retry counts)
	MetricFileErrors = "wasmconnect_reconcile_file_errors"    // problems in the current files
	MetricLastRun    = "wasmconnect_reconcile_last_run_timestamp_seconds"
	MetricActive     = "wasmconnect_reconcile_active"           // 1 on the worker that reconciles
	MetricResult     = "wasmconnect_reconcile_connector_result" // 1 for each connector's current result
)

// metricSet holds the reconciler's series in their own VictoriaMetrics set.
type metricSet struct {
	set      *vm.Set
	labels   string // `worker_id="...",` or ""
	global   bool
	r        *Reconciler
	runs     *vm.Counter
	drift    *vm.Counter
	failures *vm.Counter

	mu    sync.Mutex
	names map[string][]string // per connector, its result series
}

func newMetrics(workerID string, global bool, r *Reconciler) *metricSet {
	m := &metricSet{set: vm.NewSet(), global: global, r: r, names: map[string][]string{}}
	if workerID != "" {
		m.labels = `worker_id="` + escape(workerID) + `",`
	}
	m.runs = m.set.NewCounter(m.name(MetricRuns, ""))
	m.drift = m.set.NewCounter(m.name(MetricDrift, ""))
	m.failures = m.set.NewCounter(m.name(MetricFailures, ""))
	m.set.NewGauge(m.name(MetricFileErrors, ""), func() float64 {
		r.mu.Lock()
		defer r.mu.Unlock()
		return float64(len(r.st.FileErrors))
	})
	m.set.NewGauge(m.name(MetricLastRun, ""), func() float64 {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.st.LastRun == nil {
			return 0
		}
		return float64(r.st.LastRun.UnixMilli()) / 1000
	})
	m.set.NewGauge(m.name(MetricActive, ""), func() float64 {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.st.Active {
			return 1
		}
		return 0
	})
	if global {
		vm.RegisterSet(m.set)
	}
	return m
}

func (m *metricSet) name(metric, labels string) string {
	all := strings.TrimSuffix(m.labels+labels, ",")
	if all == "" {
		return metric
	}
	return metric + "{" + all + "}"
}

// sync adds the result series of new connectors and drops those of connectors no longer shown.
func (m *metricSet) sync() {
	m.r.mu.Lock()
	current := make(map[string]bool, len(m.r.st.Connectors))
	for name := range m.r.st.Connectors {
		current[name] = true
	}
	m.r.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for name := range current {
		if _, ok := m.names[name]; ok {
			continue
		}
		var names []string
		for _, res := range results {
			n := m.name(MetricResult, `connector="`+escape(name)+`",result="`+res+`"`)
			m.set.GetOrCreateGauge(n, func() float64 {
				m.r.mu.Lock()
				defer m.r.mu.Unlock()
				if m.r.st.Connectors[name].Result == res {
					return 1
				}
				return 0
			})
			names = append(names, n)
		}
		m.names[name] = names
	}
	for name, names := range m.names {
		if current[name] {
			continue
		}
		for _, n := range names {
			m.set.UnregisterMetric(n)
		}
		delete(m.names, name)
	}
}

func (m *metricSet) close() {
	if m.global {
		vm.UnregisterSet(m.set, true)
	}
}

// WritePrometheus writes the reconciler's series (for tests and embedding).
func (r *Reconciler) WritePrometheus(w io.Writer) { r.m.set.WritePrometheus(w) }

func escape(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Plugin series: what the WebAssembly guests of a task cost. Kafka Connect has nothing like them.
const (
	// NamePluginCallDuration is a histogram of wc_call durations per plugin and ABI op; its _count is
	// the number of calls.
	NamePluginCallDuration = "wasmconnect_plugin_call_duration_seconds"
	// NamePluginFuel counts the fuel a plugin's calls burned: about one unit per WebAssembly
	// instruction run (an upper bound, counted by wasmhost's CPU bound), a measure of guest CPU that does not depend on
	// the machine's speed.
	NamePluginFuel = "wasmconnect_plugin_fuel_consumed_total"
	// NamePluginTraps counts the calls into a plugin that trapped or ran out of time (each discards
	// the instance and fails the task).
	NamePluginTraps = "wasmconnect_plugin_traps_total"
	// NamePluginMemory is the linear memory of a task's instance of a module, after its last call.
	NamePluginMemory = "wasmconnect_plugin_memory_bytes"
	// NameModuleInstances is the number of live instances of a module on this worker (Registry.Gauge).
	NameModuleInstances = "wasmconnect_plugin_module_instances"
)

// CallBuckets are the upper bounds, in seconds, of the call duration histograms: 10 µs to 30 s.
// They are Prometheus histograms (le buckets), which histogram_quantile reads in Prometheus and
// VictoriaMetrics alike.
var CallBuckets = []float64{
	0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
}

// maxOp bounds the wire ops a histogram array holds; ops outside [1, maxOp) are recorded as "unknown".
const maxOp = 16

// pluginSeries are a task's plugin series, created as its session opens plugins.
type pluginSeries struct {
	s       *series
	mu      sync.Mutex
	plugins map[string]*PluginCalls
	modules map[string]*atomic.Uint64
}

func (p *pluginSeries) init(s *series) { p.s = s }

// PluginCalls receives the calls into one plugin of a task; it implements wasmhost.PluginCalls.
// Nil-safe.
type PluginCalls struct {
	s      *series
	labels string // `,plugin="x"`
	calls  [maxOp]atomic.Pointer[vm.PrometheusHistogram]
	fuel   *vm.Counter
	traps  *vm.Counter
	memory *atomic.Uint64
}

// Plugin returns the series of one plugin (of module, a .wasm file name) in this task, creating
// them on first use: its call histograms per op, fuel, traps, and its module's memory gauge.
func (t *Task) Plugin(plugin, module string) *PluginCalls {
	if t == nil {
		return nil
	}
	p := &t.plugins
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc := p.plugins[plugin]; pc != nil {
		return pc
	}
	if p.plugins == nil {
		p.plugins, p.modules = map[string]*PluginCalls{}, map[string]*atomic.Uint64{}
	}
	pc := &PluginCalls{s: s, labels: `,plugin="` + escapeLabel(plugin) + `"`}
	mem := p.modules[module]
	if mem == nil {
		mem = new(atomic.Uint64)
		p.modules[module] = mem
		if !s.closed {
			s.gauge(NamePluginMemory, `,module="`+escapeLabel(module)+`"`, func() float64 { return float64(mem.Load()) })
		}
	}
	pc.memory = mem
	if s.closed {
		pc.fuel, pc.traps = new(vm.Counter), new(vm.Counter)
	} else {
		pc.fuel = s.counter(NamePluginFuel, pc.labels)
		pc.traps = s.counter(NamePluginTraps, pc.labels)
	}
	p.plugins[plugin] = pc
	return pc
}

// Call records one wc_call: its op, duration, the fuel it burned, the instance's memory after it,
// and whether it trapped. The op's histogram is created on its first call, so only the ops a plugin
// is called with show up; afterwards a call costs an atomic load, the histogram's update and two
// atomic adds.
func (pc *PluginCalls) Call(op wire.Op, took time.Duration, fuel, memory uint64, trapped bool) {
	if pc == nil {
		return
	}
	i := int(op)
	if i <= 0 || i >= maxOp {
		i = 0
	}
	h := pc.calls[i].Load()
	if h == nil {
		if h = pc.histogram(i, op); h == nil {
			return
		}
	}
	h.Update(took.Seconds())
	if fuel > 0 {
		pc.fuel.AddInt64(int64(fuel))
	}
	if trapped {
		pc.traps.Inc()
	}
	pc.memory.Store(memory)
}

func (pc *PluginCalls) histogram(i int, op wire.Op) *vm.PrometheusHistogram {
	s := pc.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if h := pc.calls[i].Load(); h != nil {
		return h
	}
	label := "unknown"
	if i != 0 {
		label = opLabel(op)
	}
	n := s.r.seriesName(NamePluginCallDuration, s.labels+pc.labels+`,op="`+label+`"`)
	h := s.r.set.GetOrCreatePrometheusHistogramExt(n, CallBuckets)
	s.names = append(s.names, n)
	pc.calls[i].Store(h)
	return h
}

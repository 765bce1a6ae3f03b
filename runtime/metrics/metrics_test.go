package metrics

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func dump(r *Registry) string {
	var b bytes.Buffer
	r.WritePrometheus(&b)
	return b.String()
}

// wantLines fails unless every line is in out.
func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		have[l] = true
	}
	for _, l := range lines {
		if !have[l] {
			t.Errorf("missing line %q in:\n%s", l, out)
		}
	}
}

func noSubstring(t *testing.T, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(out, s) {
			t.Errorf("unexpected %q in:\n%s", s, out)
		}
	}
}

// fakeClock replaces the windows' clock for a test.
func fakeClock(t *testing.T) *time.Time {
	t.Helper()
	at := time.Unix(1_700_000_000, 0)
	now = func() time.Time { return at }
	t.Cleanup(func() { now = time.Now })
	return &at
}

const workerSeriesWhenEmpty = `kafka_connect_connect_worker_metrics_connector_count 0
kafka_connect_connect_worker_metrics_connector_startup_attempts_total 0
kafka_connect_connect_worker_metrics_connector_startup_failure_percentage 0
kafka_connect_connect_worker_metrics_connector_startup_failure_total 0
kafka_connect_connect_worker_metrics_connector_startup_success_percentage 0
kafka_connect_connect_worker_metrics_connector_startup_success_total 0
kafka_connect_connect_worker_metrics_task_count 0
kafka_connect_connect_worker_metrics_task_startup_attempts_total 0
kafka_connect_connect_worker_metrics_task_startup_failure_percentage 0
kafka_connect_connect_worker_metrics_task_startup_failure_total 0
kafka_connect_connect_worker_metrics_task_startup_success_percentage 0
kafka_connect_connect_worker_metrics_task_startup_success_total 0
`

func TestEmptyRegistryHasWorkerSeries(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	if got := dump(r); got != workerSeriesWhenEmpty {
		t.Fatalf("got\n%s\nwant\n%s", got, workerSeriesWhenEmpty)
	}
}

func TestKafkaName(t *testing.T) {
	if got, want := Kafka("source-task-metrics", "source-record-poll-total"), "kafka_connect_source_task_metrics_source_record_poll_total"; got != want {
		t.Fatalf("Kafka() = %q, want %q", got, want)
	}
}

func TestStrimziNames(t *testing.T) {
	fakeClock(t)
	r := New(Unregistered(), Names(StrimziNames))
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSource)
	tk.SetState(connect.StateRunning)
	tk.SourcePolled(3, 0)
	tk.Error(RecordFailed)
	r.Connector("c", ConnectorInfo{Class: "X", TaskStates: func() map[int]connect.State { return nil }}).SetState(connect.StateRunning)
	r.Rebalance().RebalanceCompleted(7)
	l := `{connector="c",task="0"}`
	out := dump(r)
	wantLines(t, out,
		`kafka_connect_worker_connector_count 1`,
		`kafka_connect_worker_task_startup_attempts_total 0`,
		`kafka_connect_worker_connector_total_task_count{connector="c"} 0`,
		`kafka_connect_worker_rebalance_epoch 7`,
		`kafka_connect_connector_status{connector="c",status="running"} 1`,
		`kafka_connect_connector_connector_class{connector="c",connector_class="X"} 1`,
		`kafka_connect_connector_task_status{connector="c",task="0",status="running"} 1`,
		`kafka_connect_connector_task_running_ratio`+l+` 1`,
		`kafka_connect_source_task_source_record_poll_total`+l+` 3`,
		`kafka_connect_task_error_total_record_errors`+l+` 1`,
	)
	noSubstring(t, out, "_metrics_")
}

func TestStartups(t *testing.T) {
	fakeClock(t)
	r := New(Unregistered())
	defer r.Close()
	r.TaskStartup(true)
	r.TaskStartup(true)
	r.TaskStartup(true)
	r.TaskStartup(false)
	r.ConnectorStartup(false)
	wantLines(t, dump(r),
		`kafka_connect_connect_worker_metrics_task_startup_attempts_total 4`,
		`kafka_connect_connect_worker_metrics_task_startup_success_total 3`,
		`kafka_connect_connect_worker_metrics_task_startup_failure_total 1`,
		`kafka_connect_connect_worker_metrics_task_startup_success_percentage 0.75`,
		`kafka_connect_connect_worker_metrics_task_startup_failure_percentage 0.25`,
		`kafka_connect_connect_worker_metrics_connector_startup_failure_percentage 1`,
	)
	var none *Registry
	none.TaskStartup(true) // nil-safe
}

func TestSourceTaskSeries(t *testing.T) {
	at := fakeClock(t)
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "src", Task: 0}, connect.TypeSource)
	tk.SetState(connect.StateRunning)
	tk.SourcePolled(10, 4*time.Millisecond)
	tk.SourceSubmitted(10)
	tk.SourcePolled(0, 2*time.Millisecond) // an empty poll counts its time, not a batch
	tk.SourcePolled(20, 8*time.Millisecond)
	tk.SourceSubmitted(20)
	tk.SourceRecordsWritten(25)
	tk.SinkRecordsRead(3) // not a sink: ignored
	tk.OffsetCommit(CommitSuccess, 10*time.Millisecond)
	tk.OffsetCommit(CommitSuccess, 30*time.Millisecond)
	tk.OffsetCommit(CommitFailure, 20*time.Millisecond)
	tk.OffsetCommit(CommitSkipped, 0) // not an attempt
	*at = at.Add(10 * time.Second)

	out := dump(r)
	l := `{connector="src",task="0"}`
	wantLines(t, out,
		`kafka_connect_connect_worker_metrics_task_count 1`,
		`kafka_connect_connector_task_metrics_status{connector="src",task="0",status="running"} 1`,
		`kafka_connect_connector_task_metrics_running_ratio`+l+` 1`,
		`kafka_connect_connector_task_metrics_pause_ratio`+l+` 0`,
		`kafka_connect_connector_task_metrics_batch_size_avg`+l+` 15`,
		`kafka_connect_connector_task_metrics_batch_size_max`+l+` 20`,
		`kafka_connect_connector_task_metrics_offset_commit_avg_time_ms`+l+` 20`,
		`kafka_connect_connector_task_metrics_offset_commit_max_time_ms`+l+` 30`,
		`kafka_connect_connector_task_metrics_offset_commit_failure_percentage`+l+` 0.33333333333333337`,
		`kafka_connect_source_task_metrics_source_record_poll_total`+l+` 30`,
		`kafka_connect_source_task_metrics_source_record_poll_rate`+l+` 3`,
		`kafka_connect_source_task_metrics_source_record_write_total`+l+` 25`,
		`kafka_connect_source_task_metrics_source_record_write_rate`+l+` 2.5`,
		`kafka_connect_source_task_metrics_source_record_active_count`+l+` 5`,
		`kafka_connect_source_task_metrics_source_record_active_count_avg`+l+` 20`,
		`kafka_connect_source_task_metrics_source_record_active_count_max`+l+` 30`,
		`kafka_connect_source_task_metrics_poll_batch_avg_time_ms`+l+` 4.666666666666667`,
		`kafka_connect_source_task_metrics_poll_batch_max_time_ms`+l+` 8`,
		`kafka_connect_task_error_metrics_total_record_errors`+l+` 0`,
	)
	noSubstring(t, out, "sink_task_metrics", `status="unassigned"`)
	if tk.ID() != (connect.TaskID{Connector: "src", Task: 0}) {
		t.Errorf("ID = %v", tk.ID())
	}
}

func TestSinkTaskSeries(t *testing.T) {
	at := fakeClock(t)
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "snk", Task: 2}, connect.TypeSink)
	tk.SinkPartitions(3)
	tk.SinkRecordsRead(7)
	tk.SinkPut(6, 5*time.Millisecond)
	tk.SinkLag(40)
	tk.SinkCommitted(7)
	tk.SinkRecordsRead(3)
	tk.SourcePolled(1, 0) // not a source: ignored
	tk.OffsetCommit(CommitSuccess, time.Millisecond)
	tk.OffsetCommit(CommitSkipped, 0)
	tk.SinkLag(-2) // a lag is never negative
	*at = at.Add(2 * time.Second)
	l := `{connector="snk",task="2"}`
	out := dump(r)
	wantLines(t, out,
		`kafka_connect_connector_task_metrics_status{connector="snk",task="2",status="unassigned"} 1`,
		`kafka_connect_sink_task_metrics_sink_record_read_total`+l+` 10`,
		`kafka_connect_sink_task_metrics_sink_record_read_rate`+l+` 5`,
		`kafka_connect_sink_task_metrics_sink_record_send_total`+l+` 6`,
		`kafka_connect_sink_task_metrics_sink_record_send_rate`+l+` 3`,
		`kafka_connect_sink_task_metrics_sink_record_active_count`+l+` 3`,
		`kafka_connect_sink_task_metrics_sink_record_active_count_max`+l+` 7`,
		`kafka_connect_sink_task_metrics_put_batch_avg_time_ms`+l+` 5`,
		`kafka_connect_sink_task_metrics_put_batch_max_time_ms`+l+` 5`,
		`kafka_connect_sink_task_metrics_offset_commit_completion_total`+l+` 1`,
		`kafka_connect_sink_task_metrics_offset_commit_skip_total`+l+` 1`,
		`kafka_connect_sink_task_metrics_offset_commit_seq_no`+l+` 1`,
		`kafka_connect_sink_task_metrics_partition_count`+l+` 3`,
		`wasmconnect_sink_task_records_lag`+l+` 0`,
		`kafka_connect_connector_task_metrics_offset_commit_success_percentage`+l+` 1`,
	)
	noSubstring(t, out, "source_task_metrics")
}

func TestErrorSeries(t *testing.T) {
	at := fakeClock(t)
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "snk", Task: 0}, connect.TypeSink)
	for _, ev := range []ErrorEvent{OperationFailed, OperationFailed, Retried, RecordFailed, RecordSkipped, ErrorLogged, DLQProduced, DLQFailed} {
		tk.Error(ev)
	}
	l := `{connector="snk",task="0"}`
	wantLines(t, dump(r),
		`kafka_connect_task_error_metrics_total_record_failures`+l+` 2`,
		`kafka_connect_task_error_metrics_total_retries`+l+` 1`,
		`kafka_connect_task_error_metrics_total_record_errors`+l+` 1`,
		`kafka_connect_task_error_metrics_total_records_skipped`+l+` 1`,
		`kafka_connect_task_error_metrics_total_errors_logged`+l+` 1`,
		`kafka_connect_task_error_metrics_deadletterqueue_produce_requests`+l+` 2`,
		`kafka_connect_task_error_metrics_deadletterqueue_produce_failures`+l+` 1`,
		`kafka_connect_task_error_metrics_last_error_timestamp`+l+` `+formatMillis(at.UnixMilli()),
	)
}

func formatMillis(ms int64) string {
	var b bytes.Buffer
	s := vm.NewSet()
	s.NewGauge("x", func() float64 { return float64(ms) })
	s.WritePrometheus(&b)
	return strings.TrimSpace(strings.TrimPrefix(b.String(), "x "))
}

func TestStatusSeriesExactlyOne(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSource)
	for _, st := range taskStates {
		tk.SetState(st)
		out := dump(r)
		if n := strings.Count(out, "_status{"); n != 1 {
			t.Fatalf("state %s: %d status series:\n%s", st, n, out)
		}
		wantLines(t, out, `kafka_connect_connector_task_metrics_status{connector="c",task="0",status="`+strings.ToLower(string(st))+`"} 1`)
	}
	tk.SetState(connect.StateStopped) // tasks have no STOPPED: no status series
	if out := dump(r); strings.Contains(out, "_status{") {
		t.Fatalf("STOPPED should leave no task status:\n%s", out)
	}
}

func TestWindowsForgetOldSamples(t *testing.T) {
	at := fakeClock(t)
	var w windowed
	w.record(10)
	*at = at.Add(31 * time.Second) // a second sample
	w.record(2)
	if w.avg() != 6 || w.max() != 10 {
		t.Fatalf("two samples: avg %v max %v", w.avg(), w.max())
	}
	*at = at.Add(30 * time.Second) // the first sample is now 61 s old: gone
	if w.avg() != 2 || w.max() != 2 {
		t.Fatalf("after the window: avg %v max %v", w.avg(), w.max())
	}
	*at = at.Add(time.Minute)
	if w.avg() != 0 || w.max() != 0 {
		t.Fatalf("empty window: avg %v max %v", w.avg(), w.max())
	}
}

func TestRateSlides(t *testing.T) {
	at := fakeClock(t)
	var c vm.Counter
	r := newRate(func() float64 { return float64(c.Get()) })
	c.Add(100)
	*at = at.Add(10 * time.Second)
	if got := r.perSecond(); got != 10 {
		t.Fatalf("first 10 s: %v/s", got)
	}
	// A steady 50/s for two windows: the rate forgets the first burst.
	for i := 0; i < 60; i++ {
		*at = at.Add(time.Second)
		c.Add(50)
		r.perSecond()
	}
	if got := r.perSecond(); got < 49 || got > 51 {
		t.Fatalf("steady 50/s reads %v/s", got)
	}
	// Idle for two windows: the rate falls to 0.
	for i := 0; i < 61; i++ {
		*at = at.Add(time.Second)
		r.perSecond()
	}
	if got := r.perSecond(); got != 0 {
		t.Fatalf("idle reads %v/s", got)
	}
}

func TestRatios(t *testing.T) {
	at := fakeClock(t)
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSink)
	*at = at.Add(time.Second)
	tk.SetState(connect.StateRunning)
	*at = at.Add(2 * time.Second)
	tk.SetState(connect.StatePaused)
	*at = at.Add(time.Second)
	l := `{connector="c",task="0"}`
	wantLines(t, dump(r),
		`kafka_connect_connector_task_metrics_running_ratio`+l+` 0.5`,
		`kafka_connect_connector_task_metrics_pause_ratio`+l+` 0.25`,
	)
}

func TestPluginCallSeries(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "c", Task: 1}, connect.TypeSource)
	src := tk.Plugin("file-source", "file.wasm")
	if tk.Plugin("file-source", "file.wasm") != src {
		t.Fatal("Plugin should return the same handle for a plugin")
	}
	conv := tk.Plugin("json", "converters.wasm")
	src.Call(wire.OpPoll, 3*time.Millisecond, 1000, 1<<20, false)
	src.Call(wire.OpPoll, 2*time.Second, 500, 2<<20, false)
	src.Call(wire.OpCommit, time.Microsecond, 10, 2<<20, true)
	conv.Call(wire.OpFromConnect, time.Millisecond, 7, 65536, false)
	conv.Call(wire.Op(99), time.Millisecond, 0, 65536, false)
	out := dump(r)
	p := `connector="c",task="1",plugin="file-source"`
	wantLines(t, out,
		`wasmconnect_plugin_call_duration_seconds_bucket{`+p+`,op="poll",le="0.0025"} 0`,
		`wasmconnect_plugin_call_duration_seconds_bucket{`+p+`,op="poll",le="0.005"} 1`,
		`wasmconnect_plugin_call_duration_seconds_bucket{`+p+`,op="poll",le="+Inf"} 2`,
		`wasmconnect_plugin_call_duration_seconds_count{`+p+`,op="poll"} 2`,
		`wasmconnect_plugin_call_duration_seconds_count{`+p+`,op="commit"} 1`,
		`wasmconnect_plugin_call_duration_seconds_count{connector="c",task="1",plugin="json",op="from_connect"} 1`,
		`wasmconnect_plugin_call_duration_seconds_count{connector="c",task="1",plugin="json",op="unknown"} 1`,
		`wasmconnect_plugin_fuel_consumed_total{`+p+`} 1510`,
		`wasmconnect_plugin_traps_total{`+p+`} 1`,
		`wasmconnect_plugin_traps_total{connector="c",task="1",plugin="json"} 0`,
		`wasmconnect_plugin_memory_bytes{connector="c",task="1",module="file.wasm"} 2097152`,
		`wasmconnect_plugin_memory_bytes{connector="c",task="1",module="converters.wasm"} 65536`,
	)
	noSubstring(t, out, `op="put"`) // only ops that were called
	tk.Unregister()
	src.Call(wire.OpFlush, time.Millisecond, 1, 1, false) // must not re-create series
	if got := dump(r); got != workerSeriesWhenEmpty {
		t.Fatalf("after Unregister:\n%s", got)
	}
	var none *PluginCalls
	none.Call(wire.OpPoll, time.Second, 1, 1, true)
}

func TestModuleGauge(t *testing.T) {
	r := New(Unregistered(), Label("worker_id", "w:1"))
	defer r.Close()
	r.Gauge(NameModuleInstances, "module", "file.wasm", func() float64 { return 3 })
	wantLines(t, dump(r), `wasmconnect_plugin_module_instances{worker_id="w:1",module="file.wasm"} 3`)
}

func TestUnregisterDropsSeries(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	a := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSink)
	b := r.Task(connect.TaskID{Connector: "c", Task: 1}, connect.TypeSink)
	if again := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSink); again != a {
		t.Fatal("Task for a live id should return the same handle")
	}
	a.Plugin("p", "m.wasm").Call(wire.OpPut, time.Millisecond, 1, 1, false)
	wantLines(t, dump(r), `kafka_connect_connect_worker_metrics_task_count 2`)

	a.Unregister()
	a.Unregister() // idempotent
	a.SinkRecordsRead(1)
	a.SetState(connect.StateRunning) // must not re-create the status series
	out := dump(r)
	wantLines(t, out, `kafka_connect_connect_worker_metrics_task_count 1`, `kafka_connect_sink_task_metrics_sink_record_read_total{connector="c",task="1"} 0`)
	noSubstring(t, out, `task="0"`)

	// The same task starting again gets a fresh handle and fresh series.
	a2 := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSink)
	if a2 == a {
		t.Fatal("expected a new handle after Unregister")
	}
	a2.SinkRecordsRead(4)
	wantLines(t, dump(r), `kafka_connect_connect_worker_metrics_task_count 2`, `kafka_connect_sink_task_metrics_sink_record_read_total{connector="c",task="0"} 4`)
	b.Unregister()
	a2.Unregister()
	if got := dump(r); got != workerSeriesWhenEmpty {
		t.Fatalf("after unregistering all: got\n%s", got)
	}
}

func TestConnectorSeries(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	c := r.Connector("my-conn", ConnectorInfo{Class: "FileStreamSource", Type: connect.TypeSource, Version: "1.2"})
	if r.Connector("my-conn", ConnectorInfo{}) != c {
		t.Fatal("Connector for a live name should return the same handle")
	}
	c.SetState(connect.StateStopped)
	out := dump(r)
	wantLines(t, out,
		`kafka_connect_connect_worker_metrics_connector_count 1`,
		`kafka_connect_connector_metrics_status{connector="my-conn",status="stopped"} 1`,
		`kafka_connect_connector_metrics_connector_class{connector="my-conn",connector_class="FileStreamSource"} 1`,
		`kafka_connect_connector_metrics_connector_type{connector="my-conn",connector_type="source"} 1`,
		`kafka_connect_connector_metrics_connector_version{connector="my-conn",connector_version="1.2"} 1`,
	)
	noSubstring(t, out, `status="unassigned"`)
	c.Unregister()
	c.Unregister()
	if got := dump(r); got != workerSeriesWhenEmpty {
		t.Fatalf("after Unregister: got\n%s", got)
	}
}

func TestConnectorTaskCounts(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	states := map[int]connect.State{0: connect.StateRunning, 1: connect.StateFailed, 2: connect.StateRunning, 7: connect.StateRunning}
	c := r.Connector("c", ConnectorInfo{TaskStates: func() map[int]connect.State { return states }})
	c.SetTasks(4) // task 3 has no status yet; task 7 is a stale status of a removed task
	l := `{connector="c"}`
	wantLines(t, dump(r),
		`kafka_connect_connect_worker_metrics_connector_total_task_count`+l+` 4`,
		`kafka_connect_connect_worker_metrics_connector_running_task_count`+l+` 2`,
		`kafka_connect_connect_worker_metrics_connector_failed_task_count`+l+` 1`,
		`kafka_connect_connect_worker_metrics_connector_unassigned_task_count`+l+` 1`,
		`kafka_connect_connect_worker_metrics_connector_paused_task_count`+l+` 0`,
		`kafka_connect_connect_worker_metrics_connector_destroyed_task_count`+l+` 0`,
		`kafka_connect_connect_worker_metrics_connector_restarting_task_count`+l+` 0`,
	)
}

func TestRebalanceSeries(t *testing.T) {
	at := fakeClock(t)
	r := New(Unregistered())
	defer r.Close()
	rb := r.Rebalance()
	wantLines(t, dump(r),
		`kafka_connect_connect_worker_rebalance_metrics_epoch -1`,
		`kafka_connect_connect_worker_rebalance_metrics_time_since_last_rebalance_ms +Inf`,
	)
	rb.RebalanceStarted()
	*at = at.Add(100 * time.Millisecond)
	rb.RebalanceStarted() // a second JoinGroup round of the same rebalance
	wantLines(t, dump(r), `kafka_connect_connect_worker_rebalance_metrics_rebalancing 1`)
	*at = at.Add(200 * time.Millisecond)
	rb.RebalanceCompleted(3)
	rb.RebalanceStarted()
	*at = at.Add(100 * time.Millisecond)
	rb.RebalanceCompleted(4)
	*at = at.Add(5 * time.Second)
	wantLines(t, dump(r),
		`kafka_connect_connect_worker_rebalance_metrics_completed_rebalances_total 2`,
		`kafka_connect_connect_worker_rebalance_metrics_epoch 4`,
		`kafka_connect_connect_worker_rebalance_metrics_rebalancing 0`,
		`kafka_connect_connect_worker_rebalance_metrics_rebalance_avg_time_ms 200`,
		`kafka_connect_connect_worker_rebalance_metrics_rebalance_max_time_ms 300`,
		`kafka_connect_connect_worker_rebalance_metrics_time_since_last_rebalance_ms 5000`,
	)
	var none *Rebalance
	none.RebalanceStarted()
	none.RebalanceCompleted(1)
}

func TestLabelsAndEscaping(t *testing.T) {
	r := New(Unregistered(), Label("worker_id", "h:8083"))
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: `we"ird\name`, Task: 3}, connect.TypeSource)
	tk.SourcePolled(1, 0)
	wantLines(t, dump(r),
		`kafka_connect_connect_worker_metrics_task_count{worker_id="h:8083"} 1`,
		`kafka_connect_source_task_metrics_source_record_poll_total{worker_id="h:8083",connector="we\"ird\\name",task="3"} 1`,
	)
}

func TestNilHandlesAreNoOps(t *testing.T) {
	var tk *Task
	tk.SetState(connect.StateRunning)
	tk.SourcePolled(1, 0)
	tk.SourceSubmitted(1)
	tk.SourceRecordsWritten(1)
	tk.SourceAbandoned(1)
	tk.SinkRecordsRead(1)
	tk.SinkPut(1, 0)
	tk.SinkCommitted(1)
	tk.SinkPartitions(1)
	tk.SinkLag(1)
	tk.OffsetCommit(CommitSuccess, 0)
	tk.Error(RecordFailed)
	tk.Plugin("p", "m").Call(wire.OpPoll, 0, 0, 0, false)
	tk.Unregister()
	_ = tk.ID()
	var c *Connector
	c.SetState(connect.StateRunning)
	c.Unregister()
}

func TestGlobalRegistrationAndClose(t *testing.T) {
	r := New(Label("test", "TestGlobalRegistrationAndClose"))
	tk := r.Task(connect.TaskID{Connector: "global", Task: 0}, connect.TypeSource)
	tk.SourcePolled(42, 0)
	var b bytes.Buffer
	vm.WritePrometheus(&b, false)
	want := `kafka_connect_source_task_metrics_source_record_poll_total{test="TestGlobalRegistrationAndClose",connector="global",task="0"} 42`
	if !strings.Contains(b.String(), want) {
		t.Fatalf("global output lacks %q", want)
	}
	r.Close()
	r.Close()
	tk.SourcePolled(1, 0) // still harmless
	b.Reset()
	vm.WritePrometheus(&b, false)
	if strings.Contains(b.String(), "TestGlobalRegistrationAndClose") {
		t.Fatal("series still exported after Close")
	}
	if got := dump(r); got != "" {
		t.Fatalf("closed registry still has series:\n%s", got)
	}
	// A closed registry hands out working, unexported handles.
	late := r.Task(connect.TaskID{Connector: "late", Task: 0}, connect.TypeSource)
	late.SourcePolled(1, 0)
	late.Plugin("p", "m.wasm").Call(wire.OpPoll, time.Millisecond, 1, 1, false)
	late.Unregister()
	r.Connector("late", ConnectorInfo{}).Unregister()
	if got := dump(r); got != "" {
		t.Fatalf("closed registry got series:\n%s", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				tk := r.Task(connect.TaskID{Connector: "c", Task: i % 4}, connect.TypeSource)
				tk.SourcePolled(1, time.Microsecond)
				tk.Plugin("p", "m.wasm").Call(wire.OpPoll, time.Microsecond, 5, 1, false)
				tk.SetState(connect.StateRunning)
				if i%10 == 0 {
					tk.Unregister()
				}
				_ = dump(r)
			}
		}()
	}
	wg.Wait()
}

func TestCommitResultString(t *testing.T) {
	for r, want := range map[CommitResult]string{CommitSuccess: "success", CommitFailure: "failure", CommitSkipped: "skipped", 7: "unknown"} {
		if r.String() != want {
			t.Errorf("%d: %q", r, r.String())
		}
	}
}

// BenchmarkTaskHotPath is what a source task's loop pays per batch: a poll, its records submitted
// and acknowledged one by one, and the plugin call.
func BenchmarkTaskHotPath(b *testing.B) {
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSource)
	pc := tk.Plugin("p", "m.wasm")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tk.SourcePolled(100, time.Millisecond)
		tk.SourceSubmitted(100)
		tk.SourceRecordsWritten(1)
		pc.Call(wire.OpPoll, time.Millisecond, 1000, 1<<20, false)
	}
}

// BenchmarkPluginCall is what wasmhost pays per guest call for the plugin series.
func BenchmarkPluginCall(b *testing.B) {
	r := New(Unregistered())
	defer r.Close()
	pc := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSource).Plugin("p", "m.wasm")
	b.ReportAllocs()
	for b.Loop() {
		pc.Call(wire.OpPoll, time.Millisecond, 1000, 1<<20, false)
	}
}

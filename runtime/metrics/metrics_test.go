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

func TestEmptyRegistryHasWorkerGauges(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	if got, want := dump(r), "wasmconnect_connector_count 0\nwasmconnect_task_count 0\n"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSourceTaskSeries(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "src", Task: 0}, connect.TypeSource)
	tk.SourceRecordsPolled(10)
	tk.SourceRecordsPolled(5)
	tk.SourceRecordsWritten(12)
	tk.SinkRecordsRead(3) // not a sink: ignored
	tk.OffsetCommit(CommitSuccess)
	tk.OffsetCommit(CommitSuccess)
	tk.OffsetCommit(CommitFailure)
	tk.SetState(connect.StateRunning)

	out := dump(r)
	wantLines(t, out,
		`wasmconnect_task_count 1`,
		`wasmconnect_source_records_polled_total{connector="src",task="0"} 15`,
		`wasmconnect_source_records_written_total{connector="src",task="0"} 12`,
		`wasmconnect_offset_commits_total{connector="src",task="0",result="success"} 2`,
		`wasmconnect_offset_commits_total{connector="src",task="0",result="failure"} 1`,
		`wasmconnect_offset_commits_total{connector="src",task="0",result="skipped"} 0`,
		`wasmconnect_task_state{connector="src",task="0",state="RUNNING"} 1`,
		`wasmconnect_task_state{connector="src",task="0",state="UNASSIGNED"} 0`,
		`wasmconnect_task_state{connector="src",task="0",state="PAUSED"} 0`,
		`wasmconnect_task_state{connector="src",task="0",state="FAILED"} 0`,
		`wasmconnect_task_state{connector="src",task="0",state="RESTARTING"} 0`,
	)
	noSubstring(t, out, "wasmconnect_sink_records", `state="STOPPED"`)
	if tk.ID() != (connect.TaskID{Connector: "src", Task: 0}) {
		t.Errorf("ID = %v", tk.ID())
	}
}

func TestSinkTaskSeries(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "snk", Task: 2}, connect.TypeSink)
	tk.SinkRecordsRead(7)
	tk.SinkRecordsPut(6)
	tk.SourceRecordsPolled(1) // not a source: ignored
	tk.OffsetCommit(CommitSkipped)
	out := dump(r)
	wantLines(t, out,
		`wasmconnect_sink_records_read_total{connector="snk",task="2"} 7`,
		`wasmconnect_sink_records_put_total{connector="snk",task="2"} 6`,
		`wasmconnect_offset_commits_total{connector="snk",task="2",result="skipped"} 1`,
		`wasmconnect_task_state{connector="snk",task="2",state="UNASSIGNED"} 1`,
	)
	noSubstring(t, out, "wasmconnect_source_records")
}

func TestStateGaugeExactlyOne(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSource)
	for _, st := range taskStates {
		tk.SetState(st)
		out := dump(r)
		if n := strings.Count(out, "} 1\n"); n != 1 {
			t.Fatalf("state %s: %d series at 1:\n%s", st, n, out)
		}
		wantLines(t, out, `wasmconnect_task_state{connector="c",task="0",state="`+string(st)+`"} 1`)
	}
	tk.SetState(connect.StateStopped) // tasks have no STOPPED: all zero
	if out := dump(r); strings.Contains(out, "} 1\n") {
		t.Fatalf("STOPPED should zero every task state:\n%s", out)
	}
}

func TestGuestCallHistogram(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "c", Task: 1}, connect.TypeSource)
	tk.GuestCallDuration(wire.OpPoll, 3*time.Millisecond)
	tk.GuestCallDuration(wire.OpPoll, 2*time.Second)
	tk.GuestCall(wire.OpTaskConfigs, time.Now())
	tk.GuestCallDuration(wire.Op(99), time.Millisecond)
	out := dump(r)
	wantLines(t, out,
		`wasmconnect_guest_call_duration_seconds_bucket{connector="c",task="1",op="poll",le="0.0025"} 0`,
		`wasmconnect_guest_call_duration_seconds_bucket{connector="c",task="1",op="poll",le="0.005"} 1`,
		`wasmconnect_guest_call_duration_seconds_bucket{connector="c",task="1",op="poll",le="2.5"} 2`,
		`wasmconnect_guest_call_duration_seconds_bucket{connector="c",task="1",op="poll",le="+Inf"} 2`,
		`wasmconnect_guest_call_duration_seconds_count{connector="c",task="1",op="poll"} 2`,
		`wasmconnect_guest_call_duration_seconds_count{connector="c",task="1",op="task_configs"} 1`,
		`wasmconnect_guest_call_duration_seconds_count{connector="c",task="1",op="unknown"} 1`,
	)
	noSubstring(t, out, `op="put"`) // only ops that were called
}

func TestUnregisterDropsSeries(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	a := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSink)
	b := r.Task(connect.TaskID{Connector: "c", Task: 1}, connect.TypeSink)
	if again := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSink); again != a {
		t.Fatal("Task for a live id should return the same handle")
	}
	a.GuestCallDuration(wire.OpPut, time.Millisecond)
	wantLines(t, dump(r), `wasmconnect_task_count 2`)

	a.Unregister()
	a.Unregister() // idempotent
	a.SinkRecordsRead(1)
	a.GuestCallDuration(wire.OpFlush, time.Millisecond) // must not re-create series
	out := dump(r)
	wantLines(t, out, `wasmconnect_task_count 1`, `wasmconnect_sink_records_read_total{connector="c",task="1"} 0`)
	noSubstring(t, out, `task="0"`)

	// The same task starting again gets a fresh handle and fresh series.
	a2 := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSink)
	if a2 == a {
		t.Fatal("expected a new handle after Unregister")
	}
	a2.SinkRecordsRead(4)
	wantLines(t, dump(r), `wasmconnect_task_count 2`, `wasmconnect_sink_records_read_total{connector="c",task="0"} 4`)
	b.Unregister()
	a2.Unregister()
	if got, want := dump(r), "wasmconnect_connector_count 0\nwasmconnect_task_count 0\n"; got != want {
		t.Fatalf("after unregistering all: got\n%s", got)
	}
}

func TestConnectorSeries(t *testing.T) {
	r := New(Unregistered())
	defer r.Close()
	c := r.Connector("my-conn")
	if r.Connector("my-conn") != c {
		t.Fatal("Connector for a live name should return the same handle")
	}
	c.SetState(connect.StateStopped)
	c.GuestCall(wire.OpTaskConfigs, time.Now())
	out := dump(r)
	wantLines(t, out,
		`wasmconnect_connector_count 1`,
		`wasmconnect_connector_state{connector="my-conn",state="STOPPED"} 1`,
		`wasmconnect_connector_state{connector="my-conn",state="RUNNING"} 0`,
		`wasmconnect_connector_guest_call_duration_seconds_count{connector="my-conn",op="task_configs"} 1`,
	)
	c.Unregister()
	c.Unregister()
	if got, want := dump(r), "wasmconnect_connector_count 0\nwasmconnect_task_count 0\n"; got != want {
		t.Fatalf("after Unregister: got\n%s", got)
	}
}

func TestLabelsAndEscaping(t *testing.T) {
	r := New(Unregistered(), Label("worker_id", "h:8083"))
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: `we"ird\name`, Task: 3}, connect.TypeSource)
	tk.SourceRecordsPolled(1)
	wantLines(t, dump(r),
		`wasmconnect_task_count{worker_id="h:8083"} 1`,
		`wasmconnect_source_records_polled_total{worker_id="h:8083",connector="we\"ird\\name",task="3"} 1`,
	)
}

func TestNilHandlesAreNoOps(t *testing.T) {
	var tk *Task
	tk.SetState(connect.StateRunning)
	tk.SourceRecordsPolled(1)
	tk.SourceRecordsWritten(1)
	tk.SinkRecordsRead(1)
	tk.SinkRecordsPut(1)
	tk.OffsetCommit(CommitSuccess)
	tk.GuestCall(wire.OpPoll, time.Now())
	tk.GuestCallDuration(wire.OpPoll, time.Second)
	tk.Unregister()
	_ = tk.ID()
	var c *Connector
	c.SetState(connect.StateRunning)
	c.GuestCall(wire.OpOpen, time.Now())
	c.Unregister()
}

func TestGlobalRegistrationAndClose(t *testing.T) {
	r := New(Label("test", "TestGlobalRegistrationAndClose"))
	tk := r.Task(connect.TaskID{Connector: "global", Task: 0}, connect.TypeSource)
	tk.SourceRecordsPolled(42)
	var b bytes.Buffer
	vm.WritePrometheus(&b, false)
	want := `wasmconnect_source_records_polled_total{test="TestGlobalRegistrationAndClose",connector="global",task="0"} 42`
	if !strings.Contains(b.String(), want) {
		t.Fatalf("global output lacks %q", want)
	}
	r.Close()
	r.Close()
	tk.SourceRecordsPolled(1) // still harmless
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
	late.SourceRecordsPolled(1)
	late.Unregister()
	r.Connector("late").Unregister()
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
				tk.SourceRecordsPolled(1)
				tk.GuestCallDuration(wire.OpPoll, time.Microsecond)
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

func BenchmarkTaskHotPath(b *testing.B) {
	r := New(Unregistered())
	defer r.Close()
	tk := r.Task(connect.TaskID{Connector: "c", Task: 0}, connect.TypeSource)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tk.SourceRecordsPolled(100)
		tk.GuestCallDuration(wire.OpPoll, time.Millisecond)
	}
}

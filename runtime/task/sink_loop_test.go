package task

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

const sinkGroup = "connect-snk"

// sinkRun is a sink task consuming topic t of a kfake cluster into a fake plugin.
type sinkRun struct {
	taskRun
	task   *Sink
	plugin *fakeSink
}

// startSinkTask runs a sink task; edit adjusts its config. The task is stopped when the test ends.
func startSinkTask(t *testing.T, c *kfake.Cluster, plugin *fakeSink, edit func(*SinkConfig)) *sinkRun {
	t.Helper()
	r := &sinkRun{taskRun: taskRun{kind: "sink", states: &states{}}, plugin: plugin}
	cfg := SinkConfig{
		ID: connect.TaskID{Connector: "snk", Task: 0}, Plugin: plugin,
		KeyConverter: &textConverter{}, ValueConverter: &textConverter{},
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)},
		GroupID:    sinkGroup, Topics: []string{"t"}, FlushInterval: 100 * time.Millisecond,
		OnState: r.states.report, Logger: testLogger(),
	}
	if edit != nil {
		edit(&cfg)
	}
	r.task = NewSink(cfg)
	r.start(t, r.task.Run)
	return r
}

// waitAccepted waits until the plugin has accepted n records.
func (r *sinkRun) waitAccepted(t *testing.T, n int) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool { return len(r.plugin.accepted()) >= n },
		func() string {
			return fmt.Sprintf("plugin accepted %v, want %d records; states %s", r.plugin.accepted(), n, r.states)
		})
}

// committedAt is the group's committed offset of t-p, -1 if none.
func committedAt(t *testing.T, c *kfake.Cluster, p int32) int64 {
	t.Helper()
	if o, ok := committed(t, c, sinkGroup)["t"][p]; ok {
		return o
	}
	return -1
}

func waitCommitted(t *testing.T, c *kfake.Cluster, p int32, want int64) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool { return committedAt(t, c, p) == want },
		func() string {
			return fmt.Sprintf("committed offset of t-%d is %d, want %d", p, committedAt(t, c, p), want)
		})
}

// TestSinkCommitsOffsetsOnlyAfterFlush holds the plugin's FLUSH: the records are put, but the
// consumer offsets must not be committed before the plugin says they are durable (a crash would
// lose them), and are committed, at the offsets FLUSH was given, once it returns.
func TestSinkCommitsOffsetsOnlyAfterFlush(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	produceTo(t, c, "t", 0, "a1", "a2", "a3")
	flushing, release := make(chan struct{}), make(chan struct{})
	var released sync.Once
	plugin := &fakeSink{flush: func([]wire.TopicPartitionOffset) error {
		select {
		case <-flushing:
		default:
			close(flushing)
		}
		<-release
		return nil
	}}
	r := startSinkTask(t, c, plugin, nil)
	t.Cleanup(func() { released.Do(func() { close(release) }) }) // runs before the stop, which flushes
	r.waitAccepted(t, 3)
	select {
	case <-flushing:
	case <-time.After(10 * time.Second):
		t.Fatal("no FLUSH")
	}
	time.Sleep(200 * time.Millisecond)
	if o := committedAt(t, c, 0); o != -1 {
		t.Fatalf("offset %d committed while FLUSH has not returned", o)
	}
	released.Do(func() { close(release) })
	waitCommitted(t, c, 0, 3)
	if got := plugin.flushCalls()[0]; len(got) != 1 || got[0] != (wire.TopicPartitionOffset{Topic: "t", Partition: 0, Offset: 3}) {
		t.Fatalf("FLUSH was given %v, want t-0 at 3", got)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSinkRetriablePutRedeliversTheSameBatch has PUT fail twice with a retriable error: as for
// Kafka's RetriableException from SinkTask.put, the same batch is put again (nothing lost, nothing
// new mixed in), the task stays RUNNING, and the offsets are committed once it is accepted.
func TestSinkRetriablePutRedeliversTheSameBatch(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	produceTo(t, c, "t", 0, "a1", "a2", "a3")
	plugin := &fakeSink{put: func(n int, _ []wire.Record) error {
		if n <= 2 {
			return pluginError{msg: "database busy", retry: true}
		}
		return nil
	}}
	r := startSinkTask(t, c, plugin, nil)
	r.waitAccepted(t, 3)
	calls := plugin.calls()
	want := sinkCall{"t-0@0=a1", "t-0@1=a2", "t-0@2=a3"}
	if len(calls) < 3 || !slices.Equal(calls[0], want) || !slices.Equal(calls[1], want) || !slices.Equal(calls[2], want) {
		t.Fatalf("PUT calls %v, want the batch %v three times", calls, want)
	}
	if got := plugin.accepted(); !slices.Equal(got, want) {
		t.Fatalf("accepted %v", got)
	}
	waitCommitted(t, c, 0, 3)
	if st := r.states.last(); st != connect.StateRunning {
		t.Fatalf("states %s", r.states)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSinkToleranceAllSendsFailuresToTheDeadLetterQueue fails one record in each stage under
// errors.tolerance=all with a dead letter queue: the others reach the plugin, the failed ones are
// in the queue with their original key, value and headers plus Kafka's __connect.errors.* context
// headers, and every record counts as consumed.
func TestSinkToleranceAllSendsFailuresToTheDeadLetterQueue(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t", "dlq"))
	produceTo(t, c, "t", 0, "a1", "a2", "a3", "a4", "a5", "a6")
	plugin := &fakeSink{put: func(_ int, recs []wire.Record) error {
		for _, r := range recs {
			if string(r.Value.Bytes) == "a4" {
				return pluginError{msg: "constraint violated by a4"}
			}
		}
		return nil
	}}
	r := startSinkTask(t, c, plugin, func(cfg *SinkConfig) {
		cfg.ValueConverter = &textConverter{reject: set("a2")}
		cfg.Chain = Chain{{Alias: "x", Class: "com.example.X", Transform: valueTransform{fail: set("a3"), drop: set("a5")}}}
		cfg.Errors = ErrorPolicy{TolerateAll: true, Log: true, DLQ: &DeadLetterQueue{
			Topic: "dlq", Producer: loopClient(t, c), ContextHeaders: true, Connector: "snk", Task: 0,
		}}
	})
	waitCommitted(t, c, 0, 6)
	if got, want := plugin.accepted(), []string{"t-0@0=a1", "t-0@5=a6"}; !slices.Equal(got, want) {
		t.Fatalf("plugin accepted %v, want %v", got, want)
	}
	dead := readTopic(t, c, "dlq", 3)
	sort.Slice(dead, func(i, j int) bool { return string(dead[i].Value) < string(dead[j].Value) })
	for i, want := range []struct {
		value, offset, stage, class, exception, message string
	}{
		{"a2", "1", "VALUE_CONVERTER", "org.apache.kafka.connect.storage.Converter", dataExceptionClass, `cannot convert "a2"`},
		{"a3", "2", "TRANSFORMATION", "org.apache.kafka.connect.transforms.Transformation", dataExceptionClass, "transform x (com.example.X): cannot transform a3"},
		{"a4", "3", "TASK_PUT", "org.apache.kafka.connect.sink.SinkTask", "org.apache.kafka.connect.errors.ConnectException", "constraint violated by a4"},
	} {
		if i >= len(dead) {
			t.Fatalf("dead letter queue has %d records", len(dead))
		}
		d := dead[i]
		h := map[string]string{}
		for _, kv := range d.Headers {
			h[kv.Key] = string(kv.Value)
		}
		if string(d.Value) != want.value || string(d.Key) != "k-"+want.value || h["h"] != "hv" {
			t.Errorf("queued record %q key %q headers %v: the original record is not kept", d.Value, d.Key, h)
		}
		for k, v := range map[string]string{
			"topic": "t", "partition": "0", "offset": want.offset, "connector.name": "snk", "task.id": "0",
			"stage": want.stage, "class.name": want.class, "exception.class.name": want.exception, "exception.message": want.message,
		} {
			if got := h["__connect.errors."+k]; got != v {
				t.Errorf("record %s: __connect.errors.%s = %q, want %q", want.value, k, got, v)
			}
		}
	}
	if len(dead) != 3 {
		t.Fatalf("dead letter queue has %d records, want 3", len(dead))
	}
	if st := r.states.last(); st != connect.StateRunning {
		t.Fatalf("states %s", r.states)
	}
}

// TestSinkFailuresWithoutTolerance fails the second of three records in each stage with
// errors.tolerance=none: the task fails naming Kafka's stage and the record, the plugin never
// gets it, and no offset is committed past it. An instance failure (a trap, not a rejected
// record) fails the task even with errors.tolerance=all.
func TestSinkFailuresWithoutTolerance(t *testing.T) {
	trap := &trappingConverter{}
	for name, tc := range map[string]struct {
		edit func(*SinkConfig)
		want string
	}{
		"key converter": {func(cfg *SinkConfig) { cfg.KeyConverter = &textConverter{reject: set("k-a2")} },
			`failed in stage KEY_CONVERTER for record t-0@1: cannot convert "k-a2"`},
		"value converter": {func(cfg *SinkConfig) { cfg.ValueConverter = &textConverter{reject: set("a2")} },
			`failed in stage VALUE_CONVERTER for record t-0@1: cannot convert "a2"`},
		"transformation": {func(cfg *SinkConfig) { cfg.Chain = Chain{{Alias: "x", Transform: valueTransform{fail: set("a2")}}} },
			"failed in stage TRANSFORMATION for record t-0@1: transform x"},
		"converter trap, even with tolerance all": {func(cfg *SinkConfig) {
			cfg.ValueConverter, cfg.Errors = trap, ErrorPolicy{TolerateAll: true}
		}, "failed in VALUE_CONVERTER for records t-0@0..t-0@2: wasm trap: unreachable"},
		"put": {func(cfg *SinkConfig) {
			cfg.Plugin.(*fakeSink).put = func(_ int, recs []wire.Record) error {
				return pluginError{msg: "table missing"}
			}
		}, "failed in TASK_PUT for records t-0@0..t-0@2: table missing"},
	} {
		t.Run(name, func(t *testing.T) {
			c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
			produceTo(t, c, "t", 0, "a1", "a2", "a3")
			plugin := &fakeSink{}
			r := startSinkTask(t, c, plugin, tc.edit)
			err := r.wait(t)
			if err == nil || !strings.Contains(err.Error(), tc.want) || r.states.last() != connect.StateFailed || r.states.trace != err.Error() {
				t.Fatalf("Run returned %v (states %s), want a failure with %q", err, r.states, tc.want)
			}
			for _, rec := range plugin.accepted() {
				if strings.HasSuffix(rec, "=a2") {
					t.Fatalf("the failed record reached the plugin: %v", plugin.accepted())
				}
			}
			if o := committedAt(t, c, 0); o > 1 {
				t.Fatalf("offset %d committed past the failed record t-0@1", o)
			}
		})
	}
}

// trappingConverter fails as a plugin instance that trapped: not a rejection of one record.
type trappingConverter struct{ textConverter }

func (*trappingConverter) ToConnect(context.Context, []wire.TopicBytes) ([]wire.Data, error) {
	return nil, errors.New("wasm trap: unreachable")
}

// TestSinkTransformDropsKeepPositions has a transform drop records, the last of the batch among
// them: the plugin gets the others with their own Kafka offsets, and the committed offset is past
// the dropped last record (a dropped record is consumed, not to be fetched again).
func TestSinkTransformDropsKeepPositions(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	produceTo(t, c, "t", 0, "a1", "a2", "a3", "a4")
	plugin := &fakeSink{}
	r := startSinkTask(t, c, plugin, func(cfg *SinkConfig) {
		cfg.Chain = Chain{{Alias: "filter", Transform: valueTransform{drop: set("a2", "a4")}}}
	})
	waitCommitted(t, c, 0, 4)
	if got, want := plugin.accepted(), []string{"t-0@0=a1", "t-0@2=a3"}; !slices.Equal(got, want) {
		t.Fatalf("plugin accepted %v, want %v", got, want)
	}
	flushes := plugin.flushCalls()
	if got := flushes[len(flushes)-1]; len(got) != 1 || got[0].Offset != 4 {
		t.Fatalf("last FLUSH was given %v, want t-0 at 4", got)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSinkCommitsOnRebalanceAndStop runs two tasks of one connector, with offset flushes far
// apart: when the second joins, the first flushes and commits before it gives a partition up, so
// the newcomer does not get its records again; a stopped task flushes and commits what it put.
func TestSinkCommitsOnRebalanceAndStop(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(2, "t"))
	produceTo(t, c, "t", 0, "a1", "a2")
	produceTo(t, c, "t", 1, "b1", "b2")
	hourly := func(cfg *SinkConfig) { cfg.FlushInterval = time.Hour }
	first := startSinkTask(t, c, &fakeSink{}, hourly)
	first.waitAccepted(t, 4)
	if o := committedAt(t, c, 0); o != -1 {
		t.Fatalf("offset %d committed before any flush", o)
	}

	second := startSinkTask(t, c, &fakeSink{}, func(cfg *SinkConfig) { hourly(cfg); cfg.ID.Task = 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := c.WaitGroupStable(ctx, sinkGroup, 2); err != nil {
		t.Fatalf("the second task did not join: %v", err)
	}
	waitCommitted(t, c, 0, 2)
	waitCommitted(t, c, 1, 2)
	if len(first.plugin.flushCalls()) == 0 {
		t.Fatal("offsets committed without a FLUSH")
	}

	produceTo(t, c, "t", 0, "a3")
	produceTo(t, c, "t", 1, "b3")
	all := func() []string { return append(first.plugin.accepted(), second.plugin.accepted()...) }
	eventually(t, 10*time.Second, func() bool { return len(all()) >= 6 }, func() string { return fmt.Sprintf("accepted %v", all()) })
	time.Sleep(200 * time.Millisecond) // any redelivery would come with the new records
	got := all()
	slices.Sort(got)
	if want := []string{"t-0@0=a1", "t-0@1=a2", "t-0@2=a3", "t-1@0=b1", "t-1@1=b2", "t-1@2=b3"}; !slices.Equal(got, want) {
		t.Fatalf("accepted %v, want each record once: %v", got, want)
	}
	if len(second.plugin.accepted()) == 0 {
		t.Fatalf("the second task got no partition: first %v", first.plugin.accepted())
	}

	// Both stop with their last records put but not flushed: the stop flushes and commits them.
	if err := second.stop(t); err != nil {
		t.Fatal(err)
	}
	if err := first.stop(t); err != nil {
		t.Fatal(err)
	}
	if o0, o1 := committedAt(t, c, 0), committedAt(t, c, 1); o0 != 3 || o1 != 3 {
		t.Fatalf("committed offsets after stop: t-0 %d, t-1 %d; want 3 and 3", o0, o1)
	}
}

// TestSinkPauseAndResume pauses a running task: it reports PAUSED and puts nothing new, keeping
// its partitions, until it is resumed.
func TestSinkPauseAndResume(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	produceTo(t, c, "t", 0, "a1")
	r := startSinkTask(t, c, &fakeSink{}, nil)
	r.waitAccepted(t, 1)
	r.states.waitFor(t, connect.StateRunning)

	r.task.SetPaused(true)
	r.states.waitFor(t, connect.StatePaused)
	produceTo(t, c, "t", 0, "a2")
	time.Sleep(500 * time.Millisecond)
	if got := r.plugin.accepted(); len(got) != 1 {
		t.Fatalf("a paused task put %v", got)
	}

	r.task.SetPaused(false)
	r.states.waitFor(t, connect.StateRunning)
	r.waitAccepted(t, 2)
	waitCommitted(t, c, 0, 2)
	if got, want := r.plugin.accepted(), []string{"t-0@0=a1", "t-0@1=a2"}; !slices.Equal(got, want) {
		t.Fatalf("accepted %v, want %v", got, want)
	}
}

// TestSinkRetriesRetriableConverterFailures has the value converter fail retriably (a schema
// registry that is not reachable yet): the batch is converted again within errors.retry.timeout;
// when the retries run out, errors.tolerance=all sends the batch to the dead letter queue and goes
// on.
func TestSinkRetriesRetriableConverterFailures(t *testing.T) {
	t.Run("retried", func(t *testing.T) {
		c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
		produceTo(t, c, "t", 0, "a1", "a2", "a3")
		conv := &textConverter{failCalls: 2}
		r := startSinkTask(t, c, &fakeSink{}, func(cfg *SinkConfig) {
			cfg.ValueConverter = conv
			cfg.Errors = ErrorPolicy{RetryTimeout: 10 * time.Second, RetryDelayMax: 50 * time.Millisecond}
		})
		waitCommitted(t, c, 0, 3)
		if got, want := r.plugin.accepted(), []string{"t-0@0=a1", "t-0@1=a2", "t-0@2=a3"}; !slices.Equal(got, want) {
			t.Fatalf("accepted %v, want %v", got, want)
		}
		if n := conv.callCount(); n != 3 {
			t.Fatalf("converter called %d times, want 3 (two failures, then the batch)", n)
		}
	})
	t.Run("retries run out", func(t *testing.T) {
		c := newLoopCluster(t, kfake.SeedTopics(1, "t", "dlq"))
		produceTo(t, c, "t", 0, "a1", "a2", "a3")
		r := startSinkTask(t, c, &fakeSink{}, func(cfg *SinkConfig) {
			cfg.ValueConverter = &textConverter{failCalls: -1}
			cfg.Errors = ErrorPolicy{TolerateAll: true, RetryTimeout: 300 * time.Millisecond, RetryDelayMax: 50 * time.Millisecond,
				DLQ: &DeadLetterQueue{Topic: "dlq", Producer: loopClient(t, c), ContextHeaders: true, Connector: "snk"}}
		})
		waitCommitted(t, c, 0, 3)
		if got := r.plugin.accepted(); len(got) != 0 {
			t.Fatalf("accepted %v", got)
		}
		for _, d := range readTopic(t, c, "dlq", 3) {
			for _, h := range d.Headers {
				if h.Key == "__connect.errors.stage" && string(h.Value) != "VALUE_CONVERTER" {
					t.Fatalf("record %s queued from stage %s", d.Value, h.Value)
				}
			}
		}
	})
}

// TestSinkCommitsWhenPaused pauses a task that has put records, with the next periodic flush an
// hour away: the records are flushed and their offsets committed as it pauses, as Kafka's paused
// sink task goes on committing, so a worker that dies while a connector is paused does not deliver
// them again.
func TestSinkCommitsWhenPaused(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	produceTo(t, c, "t", 0, "a1", "a2")
	r := startSinkTask(t, c, &fakeSink{}, func(cfg *SinkConfig) { cfg.FlushInterval = time.Hour })
	r.waitAccepted(t, 2)
	r.task.SetPaused(true)
	r.states.waitFor(t, connect.StatePaused)
	waitCommitted(t, c, 0, 2)
	if got := r.plugin.flushCalls(); len(got) != 1 || len(got[0]) != 1 || got[0][0].Offset != 2 {
		t.Fatalf("FLUSH calls %v, want one with t-0 at 2", got)
	}
}

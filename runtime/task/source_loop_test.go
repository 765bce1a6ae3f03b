package task

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// sourceRun is a source task running on a kfake cluster with a fake plugin.
type sourceRun struct {
	taskRun
	task    *Source
	plugin  *fakeSource
	offsets *memOffsets
}

// startSource runs a source task; edit adjusts its config. The task is stopped when the test ends.
func startSource(t *testing.T, c *kfake.Cluster, plugin *fakeSource, edit func(*SourceConfig)) *sourceRun {
	t.Helper()
	r := &sourceRun{taskRun: taskRun{kind: "source", states: &states{}}, plugin: plugin, offsets: &memOffsets{}}
	cfg := SourceConfig{
		ID: connect.TaskID{Connector: "src", Task: 0}, Plugin: plugin,
		KeyConverter: &textConverter{}, ValueConverter: &textConverter{},
		Producer: loopClient(t, c, ProducerOpts()...), Offsets: r.offsets,
		FlushInterval: 20 * time.Millisecond, FlushTimeout: 5 * time.Second,
		OnState: r.states.report, Logger: testLogger(),
	}
	if edit != nil {
		edit(&cfg)
	}
	r.task = NewSource(cfg)
	r.start(t, r.task.Run)
	return r
}

// endOffsetAtLeast waits until a partition holds n records; it may run outside the test goroutine.
func endOffsetAtLeast(c *kfake.Cluster, topic string, n int64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		if err == nil {
			if o, ok := ends.Lookup(topic, 0); ok && o.Offset >= n {
				return nil
			}
		}
	}
	return fmt.Errorf("%s never reached %d records", topic, n)
}

// topicIDs returns the IDs of topics, for control functions that match produce requests (which
// name topics by ID from Produce v13 on). kfake must not be asked from inside a control function.
func topicIDs(c *kfake.Cluster, topics ...string) map[[16]byte]string {
	out := map[[16]byte]string{}
	for _, tp := range topics {
		out[c.TopicInfo(tp).TopicID] = tp
	}
	return out
}

func producesTo(req *kmsg.ProduceRequest, topic string, ids map[[16]byte]string) bool {
	for _, rt := range req.Topics {
		if rt.Topic == topic || ids[rt.TopicID] == topic {
			return true
		}
	}
	return false
}

// TestSourceCommitsOnlyAcknowledgedOffsetsInOrder holds the broker's acknowledgement of a first
// batch while a second one is written and acknowledged: as Kafka Connect's SubmittedRecords, no
// offset may be committed past the unacknowledged batch (a crash would then skip its records), and
// once it is acknowledged both batches' offsets are committed.
func TestSourceCommitsOnlyAcknowledgedOffsetsInOrder(t *testing.T) {
	c := newLoopCluster(t, kfake.NumBrokers(2), kfake.SeedTopics(1, "held", "free"))
	// The two topics on different brokers, so that holding one's produce does not hold the other's.
	if c.LeaderFor("held", 0) == c.LeaderFor("free", 0) {
		if err := c.MoveTopicPartition("free", 0, 1-c.LeaderFor("held", 0)); err != nil {
			t.Fatal(err)
		}
	}
	ids := topicIDs(c, "held", "free")
	release, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if producesTo(kreq.(*kmsg.ProduceRequest), "held", ids) {
			once.Do(func() { close(held) })
			c.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})

	plugin := &fakeSource{script: []pollResult{
		{recs: []wire.Record{sourceRec("held", "a", 1, "a1"), sourceRec("held", "a", 2, "a2")}},
		{recs: []wire.Record{sourceRec("free", "a", 3, "a3"), sourceRec("free", "b", 1, "b1")}},
	}}
	plugin.onPoll = func(n int) {
		if n == 2 {
			<-held // the first batch is at the broker, unacknowledged
		}
	}
	r := startSource(t, c, plugin, nil)

	if err := endOffsetAtLeast(c, "free", 2); err != nil {
		t.Fatal(err)
	}
	if got := topicValues(t, c, "free"); got != "a3,b1" {
		t.Fatalf("second batch in Kafka: %q", got)
	}
	time.Sleep(10 * 20 * time.Millisecond) // ten offset flush intervals
	if got := r.offsets.latest(); len(got) != 0 {
		t.Fatalf("offsets committed while the first batch is not acknowledged: %v", got)
	}
	close(release)
	eventually(t, 10*time.Second, func() bool { return r.offsets.of("a") == `{"position":3}` && r.offsets.of("b") == `{"position":1}` },
		func() string { return fmt.Sprintf("offsets %v", r.offsets.latest()) })
	// In order: no write ever went backwards for a source partition.
	last := ""
	for _, w := range r.offsets.history() {
		if v, ok := w[`{"file":"a"}`]; ok {
			if v < last {
				t.Fatalf("offset of a went back from %s to %s in %v", last, v, r.offsets.history())
			}
			last = v
		}
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSourceCommitsOffsetsOnGracefulStop stops a task right after a POLL, before the producer
// acknowledged the batch and long before the next periodic commit: the stop flushes the producer
// and commits the batch's offsets, then tells the plugin (COMMIT), as WorkerSourceTask's final
// offset commit.
func TestSourceCommitsOffsetsOnGracefulStop(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	var r *sourceRun
	plugin := &fakeSource{script: []pollResult{
		{recs: []wire.Record{sourceRec("t", "a", 1, "a1"), sourceRec("t", "a", 2, "a2"), sourceRec("t", "a", 3, "a3")}},
	}}
	stopped := make(chan struct{})
	plugin.onPoll = func(n int) {
		if n == 1 {
			<-stopped
			r.cancel() // the worker stops the task while this POLL's records are not yet written
		}
	}
	r = startSource(t, c, plugin, func(cfg *SourceConfig) { cfg.FlushInterval = time.Hour })
	close(stopped)
	if err := r.wait(t); err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
	if got := topicValues(t, c, "t"); got != "a1,a2,a3" {
		t.Fatalf("records in Kafka: %q", got)
	}
	if got := r.offsets.of("a"); got != `{"position":3}` {
		t.Fatalf("offset committed on stop: %q (writes %v)", got, r.offsets.history())
	}
	if _, commits := plugin.counts(); commits != 1 {
		t.Fatalf("plugin COMMIT called %d times after the final offset write, want 1", commits)
	}
	// COMMIT names what was stored, so that a plugin acknowledges upstream only that.
	plugin.mu.Lock()
	committed := plugin.committed
	plugin.mu.Unlock()
	if len(committed) != 1 || string(committed[`{"file":"a"}`]) != `{"position":3}` {
		t.Fatalf("COMMIT's offsets: %q, want the stored {\"position\":3} of a", committed)
	}
	if strings.Contains(r.states.String(), string(connect.StateFailed)) {
		t.Fatalf("states %s", r.states)
	}
}

// TestSourceRetriesAFailedOffsetWrite has the first two offset writes fail: the offsets, which are
// no longer pending once taken for a write, are kept and written at a later flush, and the plugin
// is told (COMMIT) only about a write that succeeded.
func TestSourceRetriesAFailedOffsetWrite(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{sourceRec("t", "a", 1, "a1")}}}}
	r := startSource(t, c, plugin, func(cfg *SourceConfig) { cfg.Offsets.(*memOffsets).fail = 2 })
	eventually(t, 10*time.Second, func() bool { return r.offsets.of("a") == `{"position":1}` },
		func() string { return "offsets " + fmt.Sprint(r.offsets.latest()) })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if _, commits := plugin.counts(); commits != len(r.offsets.history()) {
		t.Fatalf("plugin COMMIT called %d times for %d successful offset writes", commits, len(r.offsets.history()))
	}
}

// TestSourceRetriesRetriablePollErrors has POLL fail twice with a retriable error (a source whose
// database is restarting): the task polls again and goes on, as for Kafka's RetriableException.
func TestSourceRetriesRetriablePollErrors(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	retry := pluginError{msg: "connection reset", retry: true}
	plugin := &fakeSource{script: []pollResult{{err: retry}, {err: retry},
		{recs: []wire.Record{sourceRec("t", "a", 1, "a1")}}}}
	r := startSource(t, c, plugin, nil)
	eventually(t, 10*time.Second, func() bool { return r.offsets.of("a") == `{"position":1}` },
		func() string { return "offsets " + fmt.Sprint(r.offsets.latest()) + ", states " + r.states.String() })
	if got := topicValues(t, c, "t"); got != "a1" {
		t.Fatalf("records in Kafka: %q", got)
	}
	if st := r.states.last(); st != connect.StateRunning {
		t.Fatalf("state %s after retriable POLL errors (states %s)", st, r.states)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSourceFailsOnNonRetriablePollError has POLL fail for good after a first batch: the task
// fails with Kafka's stage name and the plugin's message, and the offsets of what was written are
// still committed on the way out.
func TestSourceFailsOnNonRetriablePollError(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{sourceRec("t", "a", 1, "a1")}}}}
	plugin.onPoll = func(n int) {
		if n == 2 {
			// Fail only once the first batch is written, so its offsets are committable.
			if err := endOffsetAtLeast(c, "t", 1); err != nil {
				panic(err)
			}
			plugin.mu.Lock()
			plugin.script = append(plugin.script, pollResult{err: pluginError{msg: "file deleted"}})
			plugin.mu.Unlock()
		}
	}
	r := startSource(t, c, plugin, nil)
	err := r.wait(t)
	if err == nil || !strings.Contains(err.Error(), "failed in TASK_POLL") || !strings.Contains(err.Error(), "file deleted") {
		t.Fatalf("Run returned %v, want a TASK_POLL failure with the plugin's message", err)
	}
	if r.states.last() != connect.StateFailed || r.states.trace != err.Error() {
		t.Fatalf("states %s", r.states)
	}
	if got := r.offsets.of("a"); got != `{"position":1}` {
		t.Fatalf("offset of the written batch: %q", got)
	}
}

// rejectProduces makes the broker answer every produce to topic with INVALID_RECORD.
func rejectProduces(c *kfake.Cluster, topic string) {
	ids := topicIDs(c, topic)
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ProduceRequest)
		if !producesTo(req, topic, ids) {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.InvalidRecord.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
}

// TestSourceProduceFailureFailsTheTask has the broker reject a batch for good: the task fails in
// KAFKA_PRODUCE, and the offsets of that batch, and of any after it, are never committed.
func TestSourceProduceFailureFailsTheTask(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t", "rejected"))
	rejectProduces(c, "rejected")
	plugin := &fakeSource{script: []pollResult{
		{recs: []wire.Record{sourceRec("t", "a", 1, "a1")}},
		{recs: []wire.Record{sourceRec("rejected", "a", 2, "a2"), sourceRec("t", "b", 1, "b1")}},
		{recs: []wire.Record{sourceRec("t", "a", 3, "a3")}},
	}}
	plugin.onPoll = func(n int) {
		if n == 2 {
			if err := endOffsetAtLeast(c, "t", 1); err != nil {
				panic(err)
			}
		}
	}
	r := startSource(t, c, plugin, nil)
	err := r.wait(t)
	if err == nil || !strings.Contains(err.Error(), "failed in KAFKA_PRODUCE") || !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("Run returned %v, want a KAFKA_PRODUCE failure", err)
	}
	if r.states.last() != connect.StateFailed {
		t.Fatalf("states %s", r.states)
	}
	if got := r.offsets.latest(); len(got) != 1 || got[`{"file":"a"}`] != `{"position":1}` {
		t.Fatalf("offsets %v: only the first batch's may be committed", got)
	}
}

// TestSourceRecordRejectedAsItStops: a record the broker rejects while a stopped task flushes is
// the stop's error (not a silent end), its offset is not committed, and the task is not FAILED.
func TestSourceRecordRejectedAsItStops(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t", "rejected"))
	rejectProduces(c, "rejected")
	var r *sourceRun
	plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{sourceRec("t", "a", 1, "a1"), sourceRec("rejected", "b", 1, "b1")}}}}
	plugin.onPoll = func(n int) {
		if n == 1 {
			r.cancel() // stopped while this POLL's records are on their way
		}
	}
	r = startSource(t, c, plugin, func(cfg *SourceConfig) { cfg.FlushInterval = time.Hour })
	err := r.wait(t)
	if err == nil || !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("Run returned %v, want the rejected record's error", err)
	}
	if got := r.offsets.of("b"); got != "" {
		t.Fatalf("the rejected record's offset was committed: %q", got)
	}
	if strings.Contains(r.states.String(), string(connect.StateFailed)) {
		t.Fatalf("a task whose record failed as it stopped reported %s", r.states)
	}
}

// TestSourceFencedAsItStopsIsNotFailed: an exactly-once task whose transactional id a successor
// took (another worker runs the task now) is stopped, and its last commit fails. Run returns that
// error, but the task does not report FAILED: it would be the last word on a task that runs
// elsewhere (TestChaos found it, as a worker paused past its session stopped its tasks on waking).
func TestSourceFencedAsItStopsIsNotFailed(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	var r *sourceRun
	plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{sourceRec("t", "a", 1, "a1")}}, {}}}
	plugin.onPoll = func(n int) {
		if n != 2 {
			return
		}
		// The first poll's transaction is open (the interval is long) once its record is in the
		// topic: a successor fences it, then the worker stops the task.
		if err := endOffsetAtLeast(c, "t", 1); err != nil {
			panic(err)
		}
		successor := loopClient(t, c, kgo.TransactionalID("src-0"))
		if err := successor.BeginTransaction(); err != nil {
			panic(err)
		}
		if err := successor.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: []byte("successor")}).FirstErr(); err != nil {
			panic(err)
		}
		r.cancel()
	}
	r = startSource(t, c, plugin, func(cfg *SourceConfig) {
		cfg.Producer = loopClient(t, c, append(ProducerOpts(), kgo.TransactionalID("src-0"))...)
		cfg.Transactions = &Transactions{Boundary: BoundaryInterval, Interval: time.Hour, OffsetRecords: func(context.Context, string, map[string][]byte) ([]*kgo.Record, error) {
			return nil, nil
		}}
	})
	err := r.wait(t)
	if err == nil {
		t.Fatal("Run returned nil; want the fenced commit's error")
	}
	if strings.Contains(r.states.String(), string(connect.StateFailed)) {
		t.Fatalf("a task fenced as it stopped reported %s (Run: %v)", r.states, err)
	}
}

// TestSourceErrorPolicy runs a batch through converters and transforms that fail, under the
// errors.* settings: errors.tolerance=all skips the records that fail, but their source offsets
// still count (the source must not read them again); none fails the task naming the stage and the
// record; retriable failures are retried for errors.retry.timeout.
func TestSourceErrorPolicy(t *testing.T) {
	for name, tc := range map[string]struct {
		values  *textConverter
		chain   Chain
		policy  ErrorPolicy
		written string // values in Kafka, sorted
		failed  string // in the task's trace; "": the task keeps running
	}{
		"tolerance all skips a record the converter rejects": {
			values: &textConverter{reject: set("a2")}, policy: ErrorPolicy{TolerateAll: true}, written: "a1,a3",
		},
		"tolerance none fails naming the stage and the record": {
			values: &textConverter{reject: set("a2")},
			failed: `failed in stage VALUE_CONVERTER for record for topic t with source partition {"file":"a"} and offset {"position":2}`,
		},
		"tolerance all skips a record a transform fails": {
			chain: Chain{{Alias: "x", Transform: valueTransform{fail: set("a2")}}}, policy: ErrorPolicy{TolerateAll: true}, written: "a1,a3",
		},
		"a dropped last record still moves the offset": {
			chain: Chain{{Alias: "x", Transform: valueTransform{drop: set("a3")}}}, written: "a1,a2",
		},
		"retriable failures are retried within errors.retry.timeout": {
			values: &textConverter{failCalls: 2}, policy: ErrorPolicy{RetryTimeout: 10 * time.Second, RetryDelayMax: 50 * time.Millisecond},
			written: "a1,a2,a3",
		},
		"retries that run out skip the batch with tolerance all": {
			values: &textConverter{failCalls: -1}, policy: ErrorPolicy{TolerateAll: true, RetryTimeout: 400 * time.Millisecond, RetryDelayMax: 50 * time.Millisecond},
		},
		"retries that run out fail the task with tolerance none": {
			values: &textConverter{failCalls: -1}, policy: ErrorPolicy{RetryTimeout: 400 * time.Millisecond, RetryDelayMax: 50 * time.Millisecond},
			failed: "failed in stage VALUE_CONVERTER for record for topic t with source partition {\"file\":\"a\"} and offset {\"position\":1}: registry unavailable",
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
			plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{
				sourceRec("t", "a", 1, "a1"), sourceRec("t", "a", 2, "a2"), sourceRec("t", "a", 3, "a3"),
			}}}}
			r := startSource(t, c, plugin, func(cfg *SourceConfig) {
				if tc.values != nil {
					cfg.ValueConverter = tc.values
				}
				cfg.Chain, cfg.Errors = tc.chain, tc.policy
			})
			if tc.failed != "" {
				err := r.wait(t)
				if err == nil || !strings.Contains(err.Error(), tc.failed) || r.states.last() != connect.StateFailed {
					t.Fatalf("Run returned %v (states %s), want a failure with %q", err, r.states, tc.failed)
				}
				if got := r.offsets.latest(); len(got) != 0 {
					t.Fatalf("offsets of the failed batch committed: %v", got)
				}
				return
			}
			eventually(t, 10*time.Second, func() bool { return r.offsets.of("a") == `{"position":3}` },
				func() string { return "offsets " + fmt.Sprint(r.offsets.latest()) + ", states " + r.states.String() })
			if tc.written != "" {
				if got := topicValues(t, c, "t"); got != tc.written {
					t.Fatalf("records in Kafka %q, want %q", got, tc.written)
				}
			}
			if tc.values != nil && tc.values.failCalls != 0 && tc.values.callCount() < 2 {
				t.Fatalf("a retriable converter failure was not retried (%d calls)", tc.values.callCount())
			}
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
			if tc.written == "" {
				if got := topicValues(t, c, "t"); got != "" {
					t.Fatalf("records in Kafka %q, want none", got)
				}
			}
		})
	}
}

// TestSourcePauseAndResume starts a task paused: it reports PAUSED and does not poll until it is
// resumed, and stops polling again when paused again.
func TestSourcePauseAndResume(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{sourceRec("t", "a", 1, "a1")}}}}
	r := startSource(t, c, plugin, func(cfg *SourceConfig) { cfg.Paused = true })
	r.states.waitFor(t, connect.StatePaused)
	time.Sleep(200 * time.Millisecond)
	if polls, _ := plugin.counts(); polls != 0 {
		t.Fatalf("a paused task polled %d times", polls)
	}

	r.task.SetPaused(false)
	r.states.waitFor(t, connect.StateRunning)
	eventually(t, 10*time.Second, func() bool { return r.offsets.of("a") == `{"position":1}` },
		func() string { return "offsets " + fmt.Sprint(r.offsets.latest()) })

	r.task.SetPaused(true)
	r.states.waitFor(t, connect.StatePaused)
	before, _ := plugin.counts()
	time.Sleep(200 * time.Millisecond)
	if after, _ := plugin.counts(); after > before+1 {
		t.Fatalf("paused again, the task polled %d more times", after-before)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if got := topicValues(t, c, "t"); got != "a1" {
		t.Fatalf("records in Kafka: %q", got)
	}
}

// TestSourceCommitsOffsetsWhenPaused pauses a task during a POLL, with the next periodic offset
// commit an hour away: the batch is written and its offsets committed while the task is paused, as
// Kafka's offset committer goes on committing a paused task's offsets, so a worker that dies while
// a connector is paused does not repeat it.
func TestSourceCommitsOffsetsWhenPaused(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	var r *sourceRun
	started := make(chan struct{})
	plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{sourceRec("t", "a", 1, "a1"), sourceRec("t", "a", 2, "a2")}}}}
	plugin.onPoll = func(n int) {
		if n == 1 {
			<-started
			r.task.SetPaused(true)
		}
	}
	r = startSource(t, c, plugin, func(cfg *SourceConfig) { cfg.FlushInterval = time.Hour })
	close(started)
	r.states.waitFor(t, connect.StatePaused)
	eventually(t, 10*time.Second, func() bool { return r.offsets.of("a") == `{"position":2}` },
		func() string { return "offsets of a paused task " + fmt.Sprint(r.offsets.latest()) })
	if got := topicValues(t, c, "t"); got != "a1,a2" {
		t.Fatalf("records in Kafka: %q", got)
	}
	if polls, _ := plugin.counts(); polls != 1 {
		t.Fatalf("a paused task polled %d times", polls)
	}
}

// TestSourceCommitThatTimesOutIsATransactionLost has the broker never answer EndTxn (what a worker
// paused with SIGSTOP mid-commit sees when it resumes: the commit's time is up): the task fails
// with an error the worker starts it again on, from its committed offsets, rather than for good.
func TestSourceCommitThatTimesOutIsATransactionLost(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	c.ControlKey(int16(kmsg.EndTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, nil, true // no answer
	})
	plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{sourceRec("t", "a", 1, "a1")}}}}
	r := startSource(t, c, plugin, func(cfg *SourceConfig) {
		cfg.Producer = loopClient(t, c, append(ProducerOpts(), kgo.TransactionalID("src-0"))...)
		cfg.FlushTimeout = 200 * time.Millisecond
		cfg.Transactions = &Transactions{Boundary: BoundaryPoll, OffsetRecords: func(context.Context, string, map[string][]byte) ([]*kgo.Record, error) {
			return nil, nil
		}}
	})
	err := r.wait(t)
	if !errors.Is(err, ErrCommitTimedOut) || !TransactionLost(err) {
		t.Fatalf("Run returned %v; want a commit that timed out, which TransactionLost reports", err)
	}
}

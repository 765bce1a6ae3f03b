package task

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// gatedConverter is a converter whose calls wait for gate before they convert, as a slow plugin
// instance; entered receives the number of each call (from 1) as it starts.
type gatedConverter struct {
	textConverter
	gate    func(ctx context.Context, call int) error
	entered chan int
	n       int // calls so far; the loop calls a converter from one goroutine at a time
}

func (c *gatedConverter) wait(ctx context.Context) error {
	c.n++
	if c.entered != nil {
		c.entered <- c.n
	}
	if c.gate != nil {
		return c.gate(ctx, c.n)
	}
	return nil
}

func (c *gatedConverter) FromConnect(ctx context.Context, in []wire.TopicData) ([][]byte, error) {
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	return c.textConverter.FromConnect(ctx, in)
}

func (c *gatedConverter) ToConnect(ctx context.Context, in []wire.TopicBytes) ([]wire.Data, error) {
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	return c.textConverter.ToConnect(ctx, in)
}

// TestSourceOverlapsPollWithConversion has the value converter, called for the first batch, wait
// until the plugin has been asked for the second batch: a loop that polls, converts and produces in
// turn never gets there, a pipelined one polls the next batch while the converter works (they are
// separate plugin instances).
func TestSourceOverlapsPollWithConversion(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	secondPoll := make(chan struct{})
	plugin := &fakeSource{script: []pollResult{
		{recs: []wire.Record{sourceRec("t", "a", 1, "a1")}},
		{recs: []wire.Record{sourceRec("t", "a", 2, "a2")}},
	}}
	plugin.onPoll = func(n int) {
		if n == 2 {
			close(secondPoll)
		}
	}
	values := &gatedConverter{gate: func(ctx context.Context, call int) error {
		if call != 1 {
			return nil
		}
		select {
		case <-secondPoll:
			return nil
		case <-time.After(3 * time.Second):
			return fmt.Errorf("the second POLL did not come while the first batch was being converted")
		}
	}}
	r := startSource(t, c, plugin, func(cfg *SourceConfig) { cfg.ValueConverter = values })
	eventually(t, 10*time.Second, func() bool { return r.offsets.of("a") == `{"position":2}` },
		func() string { return "offsets " + fmt.Sprint(r.offsets.latest()) + ", states " + r.states.String() })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if got := topicValues(t, c, "t"); got != "a1,a2" {
		t.Fatalf("records in Kafka: %q", got)
	}
}

// TestSourceConverterHoldsBackPoll blocks the value converter: the loop goes on polling only as
// far as its bounded queues allow, then waits, however much the plugin has to give; once the
// converter goes on, every record is written and its offset committed.
func TestSourceConverterHoldsBackPoll(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	const batches = 50
	var script []pollResult
	for i := 1; i <= batches; i++ {
		script = append(script, pollResult{recs: []wire.Record{sourceRec("t", "a", i, "a"+strconv.Itoa(i))}})
	}
	plugin := &fakeSource{script: script}
	release := make(chan struct{})
	values := &gatedConverter{entered: make(chan int, batches), gate: func(ctx context.Context, call int) error {
		<-release
		return nil
	}}
	r := startSource(t, c, plugin, func(cfg *SourceConfig) { cfg.ValueConverter = values })
	<-values.entered
	time.Sleep(300 * time.Millisecond) // time for the loop to poll as far as it will
	// One batch in the converter, stageDepth queued before it, and one polled that waits to be
	// queued (without a chain there is no transform stage).
	const bound = 1 + stageDepth + 1
	polls, _ := plugin.counts()
	t.Logf("polled %d batches while held", polls)
	if polls > bound {
		t.Fatalf("with the converter blocked, the loop polled %d batches, want at most %d", polls, bound)
	}
	close(release)
	eventually(t, 10*time.Second, func() bool { return r.offsets.of("a") == fmt.Sprintf(`{"position":%d}`, batches) },
		func() string { return "offsets " + fmt.Sprint(r.offsets.latest()) + ", states " + r.states.String() })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if n := len(readTopic(t, c, "t", batches)); n != batches {
		t.Fatalf("%d records in Kafka, want %d", n, batches)
	}
}

// TestSourceFullProducerHoldsBackPoll has the broker hold every produce request, with a producer
// that buffers 10 records: the stages fill up behind it and POLL stops, instead of records piling
// up in memory; once the broker answers, everything is written.
func TestSourceFullProducerHoldsBackPoll(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	release := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	const batches, perBatch = 40, 5
	var script []pollResult
	for i := 0; i < batches; i++ {
		var recs []wire.Record
		for j := 1; j <= perBatch; j++ {
			pos := i*perBatch + j
			recs = append(recs, sourceRec("t", "a", pos, "a"+strconv.Itoa(pos)))
		}
		script = append(script, pollResult{recs: recs})
	}
	plugin := &fakeSource{script: script}
	r := startSource(t, c, plugin, func(cfg *SourceConfig) {
		cfg.Producer = loopClient(t, c, append(ProducerOpts(), kgo.MaxBufferedRecords(10))...)
	})
	time.Sleep(500 * time.Millisecond)
	// Two batches in the producer's buffer, one blocked producing, stageDepth queued in front of
	// the produce stage, one converted that waits, stageDepth queued in front of the converters,
	// one polled that waits.
	const bound = 2 + 1 + stageDepth + 1 + stageDepth + 1
	polls, _ := plugin.counts()
	t.Logf("polled %d batches while held", polls)
	if polls > bound {
		t.Fatalf("with the producer's buffer full, the loop polled %d batches, want at most %d", polls, bound)
	}
	close(release)
	eventually(t, 10*time.Second, func() bool {
		return r.offsets.of("a") == fmt.Sprintf(`{"position":%d}`, batches*perBatch)
	}, func() string { return "offsets " + fmt.Sprint(r.offsets.latest()) + ", states " + r.states.String() })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSourceKeepsOrderPerPartition polls many batches of two source partitions, each written to
// its own Kafka partition, through a transform and converters that take varying time: every Kafka
// partition holds its records in the order they were polled, and the committed offsets are the
// last ones.
func TestSourceKeepsOrderPerPartition(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(2, "t"))
	const batches, perBatch = 60, 7
	var script []pollResult
	pos := map[string]int{}
	for i := 0; i < batches; i++ {
		var recs []wire.Record
		for j := 0; j < perBatch; j++ {
			file := []string{"a", "b"}[rand.IntN(2)]
			pos[file]++
			r := sourceRec("t", file, pos[file], fmt.Sprintf("%s-%04d", file, pos[file]))
			r.Partition = map[string]int32{"a": 0, "b": 1}[file]
			recs = append(recs, r)
		}
		script = append(script, pollResult{recs: recs})
	}
	jitter := func() { time.Sleep(time.Duration(rand.IntN(1500)) * time.Microsecond) }
	plugin := &fakeSource{script: script, onPoll: func(int) { jitter() }}
	r := startSource(t, c, plugin, func(cfg *SourceConfig) {
		cfg.ValueConverter = &gatedConverter{gate: func(context.Context, int) error { jitter(); return nil }}
		cfg.Chain = Chain{{Alias: "x", Transform: valueTransform{}}}
	})
	eventually(t, 10*time.Second, func() bool {
		return r.offsets.of("a") == fmt.Sprintf(`{"position":%d}`, pos["a"]) && r.offsets.of("b") == fmt.Sprintf(`{"position":%d}`, pos["b"])
	}, func() string { return "offsets " + fmt.Sprint(r.offsets.latest()) + ", states " + r.states.String() })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	got := map[int32][]string{}
	for _, kr := range readTopic(t, c, "t", batches*perBatch) {
		got[kr.Partition] = append(got[kr.Partition], string(kr.Value))
	}
	for p, file := range map[int32]string{0: "a", 1: "b"} {
		var want []string
		for i := 1; i <= pos[file]; i++ {
			want = append(want, fmt.Sprintf("%s-%04d", file, i))
		}
		if strings.Join(got[p], ",") != strings.Join(want, ",") {
			t.Errorf("partition %d holds %v, want %v", p, got[p], want)
		}
	}
}

// TestSourceFailsWhenABatchFailsWhilePausing pauses a task while its converter still works on a
// batch that it then rejects (errors.tolerance=none): the task fails at once, rather than staying
// PAUSED with the failure found only when it is resumed.
func TestSourceFailsWhenABatchFailsWhilePausing(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	var r *sourceRun
	started, paused := make(chan struct{}), make(chan struct{})
	plugin := &fakeSource{script: []pollResult{{recs: []wire.Record{sourceRec("t", "a", 1, "bad")}}}}
	values := &gatedConverter{textConverter: textConverter{reject: set("bad")}, gate: func(context.Context, int) error {
		<-paused
		return nil
	}}
	plugin.onPoll = func(n int) {
		if n == 1 {
			<-started
			r.task.SetPaused(true)
			close(paused)
		}
	}
	r = startSource(t, c, plugin, func(cfg *SourceConfig) { cfg.ValueConverter = values })
	close(started)
	err := r.wait(t)
	if err == nil || !strings.Contains(err.Error(), "failed in stage VALUE_CONVERTER") {
		t.Fatalf("Run returned %v (states %s), want a VALUE_CONVERTER failure", err, r.states)
	}
	if r.states.last() != connect.StateFailed {
		t.Fatalf("states %s", r.states)
	}
}

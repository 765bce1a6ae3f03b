package task

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// TestSinkConvertsTheNextBatchDuringPut has PUT of the first batch wait until the value converter
// has been called for the second: a loop that converts and puts in turn never gets there, a
// pipelined one converts the next batch while the plugin takes the current one.
func TestSinkConvertsTheNextBatchDuringPut(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	produceTo(t, c, "t", 0, "a1", "a2")
	secondConversion := make(chan struct{})
	values := &gatedConverter{gate: func(_ context.Context, call int) error {
		if call == 2 {
			close(secondConversion)
		}
		return nil
	}}
	plugin := &fakeSink{put: func(n int, _ []wire.Record) error {
		if n != 1 {
			return nil
		}
		select {
		case <-secondConversion:
			return nil
		case <-time.After(3 * time.Second):
			return fmt.Errorf("the second batch was not converted while the first was put")
		}
	}}
	r := startSinkTask(t, c, plugin, func(cfg *SinkConfig) { cfg.MaxPollRecords = 1; cfg.ValueConverter = values })
	r.waitAccepted(t, 2)
	waitCommitted(t, c, 0, 2)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if got := r.plugin.accepted(); !slices.Equal(got, []string{"t-0@0=a1", "t-0@1=a2"}) {
		t.Fatalf("accepted %v", got)
	}
}

// TestSinkPutHoldsBackConversion blocks PUT: the loop converts only as far as its bounded queue
// allows, then waits, however many records the topic holds; once PUT goes on, every record is put
// in order and committed.
func TestSinkPutHoldsBackConversion(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	const n = 30
	var vals []string
	for i := 0; i < n; i++ {
		vals = append(vals, "a"+strconv.Itoa(i))
	}
	produceTo(t, c, "t", 0, vals...)
	release := make(chan struct{})
	putting := make(chan struct{}, n)
	plugin := &fakeSink{put: func(int, []wire.Record) error {
		putting <- struct{}{}
		<-release
		return nil
	}}
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	values := &gatedConverter{entered: make(chan int, n)}
	r := startSinkTask(t, c, plugin, func(cfg *SinkConfig) { cfg.MaxPollRecords = 1; cfg.ValueConverter = values })
	t.Cleanup(unblock) // runs before the stop, which waits for the PUT in progress
	<-putting
	time.Sleep(300 * time.Millisecond) // time for the loop to convert as far as it will
	// One batch in PUT, stageDepth queued, one converted that waits to be queued.
	if calls, bound := len(values.entered), 1+stageDepth+1; calls > bound {
		t.Fatalf("with PUT blocked, the loop converted %d batches, want at most %d", calls, bound)
	}
	unblock()
	r.waitAccepted(t, n)
	waitCommitted(t, c, 0, n)
	var want []string
	for i, v := range vals {
		want = append(want, fmt.Sprintf("t-0@%d=%s", i, v))
	}
	if got := r.plugin.accepted(); !slices.Equal(got, want) {
		t.Fatalf("accepted %v, want %v", got, want)
	}
}

// TestSinkKeepsOrderPerPartition consumes two partitions in small batches through a converter, a
// transform and a plugin that take varying time: the plugin gets each partition's records once and
// in order, and the committed offsets are the ends.
func TestSinkKeepsOrderPerPartition(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(2, "t"))
	const n = 100
	for p := int32(0); p < 2; p++ {
		var vals []string
		for i := 0; i < n; i++ {
			vals = append(vals, fmt.Sprintf("p%d-%03d", p, i))
		}
		produceTo(t, c, "t", p, vals...)
	}
	jitter := func() { time.Sleep(time.Duration(rand.IntN(1500)) * time.Microsecond) }
	plugin := &fakeSink{put: func(int, []wire.Record) error { jitter(); return nil }}
	r := startSinkTask(t, c, plugin, func(cfg *SinkConfig) {
		cfg.MaxPollRecords = 7
		cfg.ValueConverter = &gatedConverter{gate: func(context.Context, int) error { jitter(); return nil }}
		cfg.Chain = Chain{{Alias: "x", Transform: valueTransform{}}}
	})
	r.waitAccepted(t, 2*n)
	waitCommitted(t, c, 0, n)
	waitCommitted(t, c, 1, n)
	got := map[string][]string{}
	for _, a := range r.plugin.accepted() {
		got[a[:3]] = append(got[a[:3]], a) // "t-0", "t-1"
	}
	for p := 0; p < 2; p++ {
		var want []string
		for i := 0; i < n; i++ {
			want = append(want, fmt.Sprintf("t-%d@%d=p%d-%03d", p, i, p, i))
		}
		if key := fmt.Sprintf("t-%d", p); !slices.Equal(got[key], want) {
			t.Errorf("partition %d was put as %v, want %v", p, got[key], want)
		}
	}
}

// TestSinkRebalanceWaitsForThePutInFlight has a second task join while the first one's PUT is
// blocked: the first task puts, flushes and commits the records it had fetched before it gives a
// partition up, as a loop that allows rebalances only between batches does, so the newcomer does
// not get them again.
func TestSinkRebalanceWaitsForThePutInFlight(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(2, "t"))
	produceTo(t, c, "t", 0, "a1", "a2")
	produceTo(t, c, "t", 1, "b1", "b2")
	release, putting := make(chan struct{}), make(chan struct{}, 16)
	hourly := func(cfg *SinkConfig) { cfg.FlushInterval = time.Hour }
	first := startSinkTask(t, c, &fakeSink{put: func(int, []wire.Record) error {
		select {
		case putting <- struct{}{}:
		default:
		}
		<-release
		return nil
	}}, hourly)
	<-putting
	time.Sleep(200 * time.Millisecond) // the loop fetches the rest meanwhile
	second := startSinkTask(t, c, &fakeSink{}, func(cfg *SinkConfig) { hourly(cfg); cfg.ID.Task = 1 })
	time.Sleep(500 * time.Millisecond) // the rebalance starts while the PUT is blocked
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := c.WaitGroupStable(ctx, sinkGroup, 2); err != nil {
		t.Fatalf("the second task did not join: %v", err)
	}
	produceTo(t, c, "t", 0, "a3")
	produceTo(t, c, "t", 1, "b3")
	all := func() []string { return append(first.plugin.accepted(), second.plugin.accepted()...) }
	eventually(t, 10*time.Second, func() bool { return len(all()) >= 6 }, func() string { return fmt.Sprintf("accepted %v", all()) })
	time.Sleep(300 * time.Millisecond) // any redelivery would come with the new records
	got := all()
	slices.Sort(got)
	if want := []string{"t-0@0=a1", "t-0@1=a2", "t-0@2=a3", "t-1@0=b1", "t-1@1=b2", "t-1@2=b3"}; !slices.Equal(got, want) {
		t.Fatalf("accepted %v (first %v, second %v), want each record once: %v", got, first.plugin.accepted(), second.plugin.accepted(), want)
	}
	if len(second.plugin.accepted()) == 0 {
		t.Fatalf("the second task got no partition: first %v", first.plugin.accepted())
	}
}

// brokenTransform fails every batch that holds the value v, as a transform whose instance traps.
type brokenTransform struct{ v string }

func (b brokenTransform) Transform(_ context.Context, rs []wire.Record) ([]wire.TransformedRecord, []wire.RecordFailure, error) {
	out := make([]wire.TransformedRecord, len(rs))
	for i, r := range rs {
		if string(r.Value.Bytes) == b.v {
			return nil, nil, fmt.Errorf("trapped on %s", b.v)
		}
		out[i] = wire.TransformedRecord{Input: i, Record: r}
	}
	return out, nil, nil
}

// TestSinkFailsWhileAPutIsRetried has PUT of the first batch fail retriably for good while the
// transform chain fails on the second: the task fails with the chain's error, abandoning the PUT it
// retries, instead of waiting for that PUT forever.
func TestSinkFailsWhileAPutIsRetried(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t"))
	produceTo(t, c, "t", 0, "a1", "a2")
	plugin := &fakeSink{put: func(int, []wire.Record) error { return pluginError{msg: "busy", retry: true} }}
	r := startSinkTask(t, c, plugin, func(cfg *SinkConfig) {
		cfg.MaxPollRecords = 1
		cfg.Chain = Chain{{Alias: "x", Class: "X", Transform: brokenTransform{"a2"}}}
	})
	err := r.wait(t)
	if err == nil || !strings.Contains(err.Error(), "failed in TRANSFORMATION") {
		t.Fatalf("Run returned %v (states %s), want the chain's failure", err, r.states)
	}
}

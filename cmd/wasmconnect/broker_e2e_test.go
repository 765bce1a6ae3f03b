//go:build e2e

package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestBrokerKeepsAcknowledgedRecordsAfterKill9 produces to a topic the broker creates on first use,
// kills the broker process with SIGKILL, restarts it on the same data directory and reads
// everything back: every record the broker acknowledged is there, at the offset it was given, in
// the same topic (same topic ID).
func TestBrokerKeepsAcknowledgedRecordsAfterKill9(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	broker, addr := startBroker(t)
	const topic, n = "auto-created", 20_000

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	acked := make(chan error, n)
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "record-%d", i)}, func(_ *kgo.Record, err error) { acked <- err })
	}
	for range n {
		if err := <-acked; err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	before := topicID(ctx, t, cl, topic)
	cl.Close()

	kill9AndRestart(t, broker, addr)

	// Without AllowAutoTopicCreation: a lost topic must show as missing, not be created again.
	rd, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if after := topicID(ctx, t, rd, topic); after != before {
		t.Fatalf("topic %s has ID %s after the restart, %s before: the broker lost the topic", topic, after, before)
	}
	seen := 0
	for seen < n {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d acknowledged records back after kill -9: %v", seen, n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			if want := fmt.Sprintf("record-%d", seen); string(r.Value) != want || r.Offset != int64(seen) {
				t.Fatalf("record at offset %d is %q, want %q at offset %d", r.Offset, r.Value, want, seen)
			}
			seen++
		}
	}
	rd.Close()

	// Again, killing the broker while a producer writes to it: the records acknowledged before,
	// during and after the kill are all there after the restart.
	cl, err = kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const m = 20_000
	var mu sync.Mutex
	ackedLive := map[string]bool{}
	killAt := make(chan struct{})
	for i := range m {
		v := fmt.Sprintf("live-%d", i)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}, func(_ *kgo.Record, err error) {
			if err == nil {
				mu.Lock()
				ackedLive[v] = true
				if len(ackedLive) == m/4 {
					close(killAt)
				}
				mu.Unlock()
			}
		})
		if i == m/2 {
			<-killAt
			kill9AndRestart(t, broker, addr)
		}
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("flushing the producer after the restart: %v", err)
	}
	cl.Close()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d of %d records produced around the kill were acknowledged", len(ackedLive), m)

	rd, err = kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ends, err := kadm.NewClient(rd).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	for next := int64(0); next < end.Offset; {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read up to offset %d of %d after the second kill -9: %v", next, end.Offset, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			delete(ackedLive, string(r.Value))
			next = r.Offset + 1
		}
	}
	if len(ackedLive) > 0 {
		t.Fatalf("%d acknowledged records are missing after kill -9 during produce", len(ackedLive))
	}
}

// kill9AndRestart kills the broker process with SIGKILL and starts it again with the same
// arguments (the same data directory).
func kill9AndRestart(t *testing.T, broker *process, addr string) {
	t.Helper()
	broker.stop(syscall.SIGKILL)
	broker.start()
	waitFor(t, 30*time.Second, "the restarted broker to listen", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// topicID returns the ID of topic, failing the test if the broker does not know it.
func topicID(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) kadm.TopicID {
	t.Helper()
	topics, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("listing topic %s: %v", topic, err)
	}
	d := topics[topic]
	if d.Err != nil {
		t.Fatalf("topic %s: %v", topic, d.Err)
	}
	return d.ID
}

// TestPipelineSurvivesBrokerKill9 runs a file source and a file sink through a topic the broker
// creates on first use, and kills the broker with SIGKILL mid-stream: after its restart every line
// reaches the sink file, whole, and the sink is RUNNING (it was left stalled, or the topic lost).
func TestPipelineSurvivesBrokerKill9(t *testing.T) {
	broker, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})
	in, out := pipeline(t, w, files, "bk", "bk-topic")

	const total = 60_000
	fed := make(chan error, 1)
	go func() {
		for i := 0; i < total; i += 1000 {
			if err := appendLines(in, "b-", i, i+1000); err != nil {
				fed <- err
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		fed <- nil
	}()
	waitFor(t, 2*time.Minute, "some lines through the pipeline", func() bool { return countLines(out) > 10_000 })
	kill9AndRestart(t, broker, addr)
	if err := <-fed; err != nil {
		t.Fatalf("feeding the source file: %v", err)
	}
	// Redelivered lines count once: the sink may write a line again after the restart (at least
	// once), so the file can hold total lines before the last ones arrive.
	seen := map[string]bool{}
	waitFor(t, 3*time.Minute, "every line in the sink file after the broker restart", func() bool {
		seen = map[string]bool{}
		for i, l := range readLines(t, out) {
			var n int
			if _, err := fmt.Sscanf(l, "b-%d", &n); err != nil || fmt.Sprintf("b-%d", n) != l {
				t.Fatalf("line %d of the sink file is %q, not a line of the source", i+1, l)
			}
			seen[l] = true
		}
		return len(seen) >= total
	})
	if len(seen) != total {
		var missing []int
		for i := 0; i < total; i++ {
			if !seen[fmt.Sprintf("b-%d", i)] {
				missing = append(missing, i)
			}
		}
		t.Fatalf("%d distinct lines in the sink file, want %d; missing %d lines, b-%d to b-%d", len(seen), total, len(missing), missing[0], missing[len(missing)-1])
	}
	if st := w.mustStatus(t, "bk-sink"); st.Tasks[0].State != "RUNNING" {
		t.Fatalf("sink task is %s after the broker restart: %+v", st.Tasks[0].State, st.Tasks[0])
	}
}

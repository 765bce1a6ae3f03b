package task

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func TestFetchFailuresRuns(t *testing.T) {
	cause := kerr.LeaderNotAvailable
	t0 := time.Unix(1_700_000_000, 0)
	f := newFetchFailures(time.Minute)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	// Errors a few seconds apart are one run; it fails once it has lasted retryFor.
	for d := time.Duration(0); d < time.Minute; d += 5 * time.Second {
		if err := f.failed("t", 0, cause, at(d)); err != nil {
			t.Fatalf("failed after %v of a one-minute bound: %v", d, err)
		}
	}
	err := f.failed("t", 0, cause, at(time.Minute))
	if err == nil || !errors.Is(err, cause) || !strings.Contains(err.Error(), "t-0: failing for 1m0s") {
		t.Fatalf("after a minute of errors: %v", err)
	}

	// Records from a partition end its run; other partitions keep theirs.
	f = newFetchFailures(time.Minute)
	for d := time.Duration(0); d < time.Minute; d += 5 * time.Second {
		f.failed("t", 0, cause, at(d))
		f.failed("t", 1, cause, at(d))
		if d == 30*time.Second {
			f.progressed([]*kgo.Record{{Topic: "t", Partition: 0}})
		}
	}
	if err := f.failed("t", 0, cause, at(time.Minute)); err != nil {
		t.Fatalf("run of t-0 survived records from it: %v", err)
	}
	if err := f.failed("t", 1, cause, at(time.Minute)); err == nil {
		t.Fatal("records from t-0 ended the run of t-1")
	}

	// A group session error belongs to no partition: records from any partition end its run.
	f = newFetchFailures(time.Minute)
	for d := time.Duration(0); d < time.Minute; d += 5 * time.Second {
		f.failed("", 0, &kgo.ErrGroupSession{Err: cause}, at(d))
		if d == 30*time.Second {
			f.progressed([]*kgo.Record{{Topic: "t", Partition: 3}})
		}
	}
	if err := f.failed("", 0, &kgo.ErrGroupSession{Err: cause}, at(time.Minute)); err != nil {
		t.Fatalf("group session run survived records: %v", err)
	}

	// Errors further apart than fetchErrorQuiet are separate runs.
	f = newFetchFailures(time.Minute)
	for d := time.Duration(0); d <= 3*time.Minute; d += fetchErrorQuiet + time.Second {
		if err := f.failed("t", 0, cause, at(d)); err != nil {
			t.Fatalf("isolated errors failed the task at %v: %v", d, err)
		}
	}

	for _, tc := range []struct {
		err  error
		want fetchErrorKind
	}{
		{context.DeadlineExceeded, fetchIgnore},
		{&kgo.ErrDataLoss{}, fetchLog},
		{kerr.LeaderNotAvailable, fetchRetriable},
		{&kgo.ErrGroupSession{Err: errors.New("dial tcp: connection refused")}, fetchRetriable},
		// A broker that restarted has forgotten the group: the client rejoins by itself.
		{&kgo.ErrGroupSession{Err: kerr.UnknownMemberID}, fetchRetriable},
		{kerr.UnknownTopicID, fetchFatal},
		{kerr.TopicAuthorizationFailed, fetchFatal},
		{kerr.OffsetOutOfRange, fetchFatal},
		{kgo.ErrClientClosed, fetchFatal},
		{errors.New("unknown magic 7; message offset is 0 and length is 61, skipping and setting to next offset"), fetchFatal},
	} {
		if got := classifyFetchError(tc.err); got != tc.want {
			t.Errorf("classifyFetchError(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// bytesConverter passes bytes through as Connect bytes.
type bytesConverter struct{}

func (bytesConverter) FromConnect(_ context.Context, in []wire.TopicData) ([][]byte, error) {
	out := make([][]byte, len(in))
	for i, d := range in {
		out[i] = d.Value.Bytes
	}
	return out, nil
}

func (bytesConverter) ToConnect(_ context.Context, in []wire.TopicBytes) ([]wire.Data, error) {
	out := make([]wire.Data, len(in))
	for i, b := range in {
		out[i] = wire.Bytes(b.Bytes)
	}
	return out, nil
}

// recordingSink keeps the values it is given.
type recordingSink struct {
	mu     sync.Mutex
	values []string
}

func (s *recordingSink) Put(_ context.Context, recs []wire.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		s.values = append(s.values, string(r.Value.Bytes))
	}
	return nil
}

func (*recordingSink) Flush(context.Context, []wire.TopicPartitionOffset) error { return nil }

func (s *recordingSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.values)
}

// runningSink is a sink task started on topic t of c, and what it reported.
type runningSink struct {
	plugin *recordingSink
	done   chan error
	mu     sync.Mutex
	state  connect.State
	trace  string
}

func startSink(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *runningSink {
	t.Helper()
	return startSinkRetrying(t, c, 0, opts...)
}

func startSinkRetrying(t *testing.T, c *kfake.Cluster, retryFor time.Duration, opts ...kgo.Opt) *runningSink {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rs := &runningSink{plugin: &recordingSink{}, done: make(chan error, 1)}
	sink := NewSink(SinkConfig{
		ID: connect.TaskID{Connector: "c", Task: 0}, Plugin: rs.plugin,
		KeyConverter: bytesConverter{}, ValueConverter: bytesConverter{},
		ClientOpts: append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.MetadataMinAge(100 * time.Millisecond), kgo.FetchMaxWait(200 * time.Millisecond)}, opts...), GroupID: "connect-c", Topics: []string{"t"},
		FlushInterval: 200 * time.Millisecond, FetchRetryTimeout: retryFor,
		OnState: func(st connect.State, trace string) {
			rs.mu.Lock()
			rs.state, rs.trace = st, trace
			rs.mu.Unlock()
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	go func() { rs.done <- sink.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-rs.done
	})
	return rs
}

func produce(t *testing.T, c *kfake.Cluster, from, to int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := from; i < to; i++ {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFailed waits for the task to end and checks it reported FAILED with a trace containing want.
func (rs *runningSink) waitFailed(t *testing.T, timeout time.Duration, want string) {
	t.Helper()
	select {
	case err := <-rs.done:
		rs.done <- err // for the cleanup
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if err == nil || rs.state != connect.StateFailed || !strings.Contains(rs.trace, want) {
			t.Fatalf("task ended with %v, state %s, trace %q; want FAILED with %q", err, rs.state, rs.trace, want)
		}
		t.Logf("trace: %s", rs.trace)
	case <-time.After(timeout):
		rs.mu.Lock()
		defer rs.mu.Unlock()
		t.Fatalf("task still %s %v after the error, having put %d records; want it FAILED with %q", rs.state, timeout, rs.plugin.count(), want)
	}
}

func waitCount(t *testing.T, s *recordingSink, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for s.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("sink got %d of %d records", s.count(), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSinkFailsWhenItsTopicIsRecreatedUnderIt deletes the topic a sink consumes and creates it
// again (as a broker that lost its topic list does when a producer writes to it): the client does
// not follow the new topic ID and would consume nothing more, so the task must fail, not stay
// RUNNING.
func TestSinkFailsWhenItsTopicIsRecreatedUnderIt(t *testing.T) {
	t.Parallel() // each has its own broker; they wait on the client's retries
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rs := startSink(t, c)
	produce(t, c, 0, 10)
	waitCount(t, rs.plugin, 10)

	if err := c.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("t", 1, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, c, 10, 20)
	rs.waitFailed(t, 30*time.Second, "UNKNOWN_TOPIC_ID")
}

// TestSinkFailsOnANonRetriableFetchError answers the sink's fetch with an error that will not clear
// up: a batch with an unknown magic byte (what a consumer read from a broker that wrote a new log
// over an old one), or a non-retriable error code.
func TestSinkFailsOnANonRetriableFetchError(t *testing.T) {
	t.Parallel() // each has its own broker; they wait on the client's retries
	for name, tc := range map[string]struct {
		answer func(*kmsg.FetchResponseTopicPartition)
		want   string
	}{
		"corrupt batch": {func(p *kmsg.FetchResponseTopicPartition) {
			batch := make([]byte, 61)
			binary.BigEndian.PutUint64(batch, 10)                        // base offset
			binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-12)) // length
			batch[16] = 7                                                // magic
			p.HighWatermark, p.LastStableOffset, p.RecordBatches = 11, 11, batch
		}, "unknown magic 7"},
		"authorization": {func(p *kmsg.FetchResponseTopicPartition) {
			p.ErrorCode = kerr.TopicAuthorizationFailed.Code
		}, "TOPIC_AUTHORIZATION_FAILED"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			produce(t, c, 0, 10)
			// Without fetch sessions every fetch names t-0, so the control below sees the next one.
			rs := startSink(t, c, kgo.DisableFetchSessions())
			waitCount(t, rs.plugin, 10)

			// Answer the next fetch of t-0 (from offset 10) with the error.
			c.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
				req := kreq.(*kmsg.FetchRequest)
				resp := req.ResponseKind().(*kmsg.FetchResponse)
				for _, rt := range req.Topics {
					for _, rp := range rt.Partitions {
						if rp.FetchOffset < 10 {
							continue
						}
						st := kmsg.NewFetchResponseTopic()
						st.Topic, st.TopicID = rt.Topic, rt.TopicID
						sp := kmsg.NewFetchResponseTopicPartition()
						sp.Partition = rp.Partition
						tc.answer(&sp)
						st.Partitions = append(st.Partitions, sp)
						resp.Topics = append(resp.Topics, st)
					}
				}
				if len(resp.Topics) == 0 {
					return nil, nil, false
				}
				return resp, nil, true
			})
			rs.waitFailed(t, 30*time.Second, tc.want)
		})
	}
}

// TestSinkFailsWhenTheBrokerStaysUnreachable stops the broker under a sink: the errors are
// retriable, so the task keeps trying, but only for FetchRetryTimeout.
func TestSinkFailsWhenTheBrokerStaysUnreachable(t *testing.T) {
	t.Parallel() // each has its own broker; they wait on the client's retries
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	produce(t, c, 0, 10)
	rs := startSinkRetrying(t, c, 3*time.Second)
	waitCount(t, rs.plugin, 10)
	c.Close()
	rs.waitFailed(t, 60*time.Second, "failing for")
}

// TestSinkWaitsForATopicThatDoesNotExistYet starts a sink before its topic exists, with a retry
// bound shorter than the wait: a missing topic is not a failing fetch, as in Kafka Connect.
func TestSinkWaitsForATopicThatDoesNotExistYet(t *testing.T) {
	t.Parallel() // each has its own broker; they wait on the client's retries
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rs := startSinkRetrying(t, c, time.Second)
	time.Sleep(4 * time.Second)
	if err := c.CreateTopic("t", 1, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, c, 0, 10)
	waitCount(t, rs.plugin, 10)
	select {
	case err := <-rs.done:
		rs.done <- err
		t.Fatalf("task ended: %v", err)
	default:
	}
}

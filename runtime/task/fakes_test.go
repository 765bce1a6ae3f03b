package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// In-process fakes of the plugin side of both task loops, and a real kfake broker for the Kafka
// side. The plugin boundary itself (WebAssembly calls, the wire format) is tested through real
// modules in wasmhost and plugins/; here the loops' own logic is what is under test: which offsets
// are committed when, which errors are retried, skipped or fatal.

// newLoopCluster starts an in-process single broker (opts add topics, brokers...) and closes it
// when the test ends.
func newLoopCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(1)}, opts...)...)
	if err != nil {
		t.Fatalf("starting kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func loopClient(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// produceTo writes values to one partition of a topic, in order, as an upstream producer would.
func produceTo(t *testing.T, c *kfake.Cluster, topic string, partition int32, vals ...string) {
	t.Helper()
	cl := loopClient(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	for _, v := range vals {
		r := &kgo.Record{Topic: topic, Partition: partition, Key: []byte("k-" + v), Value: []byte(v),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("hv")}}}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatalf("producing %s to %s: %v", v, topic, err)
		}
	}
}

// readTopic reads the first n records of a topic back with a plain consumer.
func readTopic(t *testing.T, c *kfake.Cluster, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := loopClient(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records from %s", len(out), n, topic)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// topicValues reads every record of a topic up to its end offsets, as a string of values.
func topicValues(t *testing.T, c *kfake.Cluster, topic string) string {
	t.Helper()
	cl := loopClient(t, c)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ends.Each(func(o kadm.ListedOffset) { n += int(o.Offset) })
	var vals []string
	for _, r := range readTopic(t, c, topic, n) {
		vals = append(vals, string(r.Value))
	}
	slices.Sort(vals)
	return strings.Join(vals, ",")
}

// committed returns a consumer group's committed offsets, read from the broker as an operator
// would (kafka-consumer-groups --describe): topic -> partition -> next offset.
func committed(t *testing.T, c *kfake.Cluster, group string) map[string]map[int32]int64 {
	t.Helper()
	cl := loopClient(t, c)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.FetchOffsets(context.Background(), group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil // the group has not been formed yet
	}
	if err != nil {
		t.Fatalf("fetching offsets of %s: %v", group, err)
	}
	out := map[string]map[int32]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.At
	})
	return out
}

// eventually polls cond until it holds, failing the test with what() after timeout.
func eventually(t *testing.T, timeout time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, what())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pluginError is an error result of a plugin call (what wasmhost.GuestError is at run time): the
// plugin rejected its input, retriably or not.
type pluginError struct {
	msg   string
	retry bool
}

func (e pluginError) Error() string     { return e.msg }
func (e pluginError) IsRetriable() bool { return e.retry }

// states records the states a task reports.
type states struct {
	mu    sync.Mutex
	seen  []connect.State
	trace string
}

func (s *states) report(st connect.State, trace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, st)
	if st == connect.StateFailed {
		s.trace = trace
	}
}

func (s *states) last() connect.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		return ""
	}
	return s.seen[len(s.seen)-1]
}

func (s *states) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%v (trace %q)", s.seen, s.trace)
}

func (s *states) waitFor(t *testing.T, st connect.State) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool { return s.last() == st }, func() string { return "states " + s.String() + ", want " + string(st) })
}

// textConverter converts between Connect strings and bytes, as a string converter. It rejects the
// values in reject (a record-level data error), and fails its first failCalls calls with a
// retriable error (a schema registry that is not reachable yet, say).
type textConverter struct {
	reject    map[string]bool
	mu        sync.Mutex
	failCalls int // calls left to fail retriably; <0: fail forever
	calls     int
}

func (c *textConverter) call() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.failCalls != 0 {
		c.failCalls--
		return pluginError{msg: "registry unavailable", retry: true}
	}
	return nil
}

func (c *textConverter) callCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

func (c *textConverter) FromConnect(_ context.Context, in []wire.TopicData) ([][]byte, error) {
	if err := c.call(); err != nil {
		return nil, err
	}
	out := make([][]byte, len(in))
	for i, d := range in {
		if c.reject[string(d.Value.Bytes)] {
			return nil, pluginError{msg: fmt.Sprintf("cannot convert %q", d.Value.Bytes)}
		}
		out[i] = d.Value.Bytes
	}
	return out, nil
}

func (c *textConverter) ToConnect(_ context.Context, in []wire.TopicBytes) ([]wire.Data, error) {
	if err := c.call(); err != nil {
		return nil, err
	}
	out := make([]wire.Data, len(in))
	for i, b := range in {
		if c.reject[string(b.Bytes)] {
			return nil, pluginError{msg: fmt.Sprintf("cannot convert %q", b.Bytes)}
		}
		if b.Bytes != nil {
			out[i] = wire.String(string(b.Bytes))
		}
	}
	return out, nil
}

// valueTransform drops the records whose value is in drop and fails (a record-level failure, as a
// transform returning an error for one record) those in fail.
type valueTransform struct{ drop, fail map[string]bool }

func (f valueTransform) Transform(_ context.Context, rs []wire.Record) ([]wire.TransformedRecord, []wire.RecordFailure, error) {
	var out []wire.TransformedRecord
	var failed []wire.RecordFailure
	for i, r := range rs {
		switch v := string(r.Value.Bytes); {
		case f.fail[v]:
			failed = append(failed, wire.RecordFailure{Input: i, Class: dataExceptionClass, Message: "cannot transform " + v})
		case !f.drop[v]:
			out = append(out, wire.TransformedRecord{Input: i, Record: r})
		}
	}
	return out, failed, nil
}

func set(vals ...string) map[string]bool {
	m := map[string]bool{}
	for _, v := range vals {
		m[v] = true
	}
	return m
}

// sourceRec is a polled record of source partition file and position pos, with value v.
func sourceRec(topic, file string, pos int, v string) wire.Record {
	return wire.Record{Topic: topic, Partition: -1, Offset: -1, Timestamp: -1, Value: wire.String(v),
		SourcePartition: fmt.Appendf(nil, `{"file":%q}`, file), SourceOffset: fmt.Appendf(nil, `{"position":%d}`, pos)}
}

// fakeSource is the plugin side of a source task: each POLL returns the next scripted result, then
// nothing.
type fakeSource struct {
	mu        sync.Mutex
	script    []pollResult
	polls     int
	commits   int
	committed map[string][]byte // COMMIT's input, the last time
	onPoll    func(n int)       // called with the POLL's number (from 1) before it returns
}

type pollResult struct {
	recs []wire.Record
	err  error
}

func (s *fakeSource) Poll(context.Context) ([]wire.Record, error) {
	s.mu.Lock()
	s.polls++
	n := s.polls
	var r pollResult
	if len(s.script) > 0 {
		r, s.script = s.script[0], s.script[1:]
	}
	hook := s.onPoll
	s.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return r.recs, r.err
}

func (s *fakeSource) Commit(_ context.Context, committed map[string][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits++
	s.committed = committed
	return nil
}

func (s *fakeSource) counts() (polls, commits int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polls, s.commits
}

// memOffsets is the offset store of a source task: every write, in order. Its first fail writes
// fail, as writes to an offsets topic that is not available.
type memOffsets struct {
	mu     sync.Mutex
	fail   int
	writes []map[string]string
}

func (o *memOffsets) WriteOffsets(_ context.Context, _ string, offsets map[string][]byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail > 0 {
		o.fail--
		return errors.New("offsets topic not available")
	}
	w := map[string]string{}
	for k, v := range offsets {
		w[k] = string(v)
	}
	o.writes = append(o.writes, w)
	return nil
}

// latest merges every write: source partition -> the last offset written for it.
func (o *memOffsets) latest() map[string]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]string{}
	for _, w := range o.writes {
		for k, v := range w {
			out[k] = v
		}
	}
	return out
}

func (o *memOffsets) history() []map[string]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.writes)
}

func (o *memOffsets) of(file string) string {
	return o.latest()[fmt.Sprintf(`{"file":%q}`, file)]
}

// sinkCall is what one PUT carried: topic-partition@offset=value per record.
type sinkCall []string

// fakeSink is the plugin side of a sink task. put and flush, when set, decide each call's result.
type fakeSink struct {
	mu      sync.Mutex
	puts    []sinkCall // every PUT
	kept    []string   // the records of the PUTs that succeeded
	flushes [][]wire.TopicPartitionOffset
	put     func(n int, recs []wire.Record) error // n counts PUT calls from 1
	flush   func(offsets []wire.TopicPartitionOffset) error
}

func (s *fakeSink) Put(_ context.Context, recs []wire.Record) error {
	call := make(sinkCall, len(recs))
	for i, r := range recs {
		call[i] = fmt.Sprintf("%s-%d@%d=%s", r.Topic, r.Partition, r.Offset, r.Value.Bytes)
	}
	s.mu.Lock()
	s.puts = append(s.puts, call)
	n, hook := len(s.puts), s.put
	s.mu.Unlock()
	var err error
	if hook != nil {
		err = hook(n, recs)
	}
	if err == nil {
		s.mu.Lock()
		s.kept = append(s.kept, call...)
		s.mu.Unlock()
	}
	return err
}

func (s *fakeSink) Flush(_ context.Context, offsets []wire.TopicPartitionOffset) error {
	s.mu.Lock()
	s.flushes = append(s.flushes, slices.Clone(offsets))
	hook := s.flush
	s.mu.Unlock()
	if hook != nil {
		return hook(offsets)
	}
	return nil
}

// accepted lists the records of every PUT that succeeded, in order.
func (s *fakeSink) accepted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.kept)
}

func (s *fakeSink) calls() []sinkCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.puts)
}

func (s *fakeSink) flushCalls() [][]wire.TopicPartitionOffset {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.flushes)
}

// taskRun is a task loop on its own goroutine, as the worker runs one, and the states it reported.
type taskRun struct {
	kind   string // "source" or "sink", for messages
	states *states
	cancel context.CancelFunc
	done   chan error
}

// start runs run until the test ends, then stops it gracefully.
func (r *taskRun) start(t *testing.T, run func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
}

// stop stops the task gracefully (the worker cancels its context) and returns what Run returned.
func (r *taskRun) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	return r.wait(t)
}

// wait waits for Run to return, and keeps its result for later calls.
func (r *taskRun) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(15 * time.Second):
		t.Fatalf("%s task did not end; states %s", r.kind, r.states)
		return nil
	}
}

package store

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/broker"
)

// With exactly-once support the leader writes the config topic in transactions (Kafka's
// connect-cluster-<group.id>): a new leader's claim fences the old one, whose writes then fail
// rather than land after the new leader's, and read_committed readers never apply an aborted
// transaction's records.
func TestConfigLeaderWritesFenceTheDeposedLeader(t *testing.T) {
	e := newEnv(t)
	opts := e.options()
	opts.ReadCommitted = true
	spec := TopicSpec{Name: configsTopic, ReplicationFactor: -1, Property: "config.storage.topic"}
	old, next := NewConfigStore(opts, spec), NewConfigStore(opts, spec)
	for _, s := range []*ConfigStore{old, next} {
		must(t, s.Start(e.ctx))
		t.Cleanup(s.Close)
	}
	must(t, old.ClaimWrites(e.ctx, "connect-cluster-test"))
	must(t, old.PutConnectorConfig(e.ctx, "a", map[string]string{"connector.class": "X"}))
	must(t, next.ClaimWrites(e.ctx, "connect-cluster-test"))
	if err := old.PutConnectorConfig(e.ctx, "zombie", map[string]string{"connector.class": "X"}); err == nil {
		t.Fatal("the deposed leader wrote after the new leader claimed the config topic")
	}
	must(t, next.PutConnectorConfig(e.ctx, "b", map[string]string{"connector.class": "X"}))
	must(t, old.ReadToEnd(e.ctx))
	for name, s := range map[string]*ConfigStore{"old": old, "next": next} {
		got := s.Snapshot().Connectors
		if _, ok := got["zombie"]; ok || got["a"] == nil || got["b"] == nil {
			t.Errorf("%s store's connectors: %v; want a and b, not zombie", name, got)
		}
	}
	// A writer that has not claimed the topic (pause from any worker) still writes plainly.
	must(t, old.PutTargetState(e.ctx, "a", TargetPaused))
	// And a transactional write really is one: a read_uncommitted reader sees its control records.
	var control int
	cl := e.client(kgo.ConsumeTopics(configsTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepControlRecords())
	for _, r := range cl.PollFetches(e.ctx).Records() {
		if r.Attrs.IsControl() {
			control++
		}
	}
	if control < 2 {
		t.Errorf("%d transaction markers in the config topic, want at least 2", control)
	}
}

// TestReadToEndPastATransactionTheBrokerAbortedOnRestart: the embedded broker, started again after
// it stopped with a transaction open, aborts that transaction without writing an abort marker, so a
// read_committed consumer is never handed a record at or after the transaction's first offset
// although the last stable offset is past it. Reading such an offsets topic to the end (what a
// source task does before it starts) must still return.
func TestReadToEndPastATransactionTheBrokerAbortedOnRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	addr := b.Addr()
	p := leaveTransactionOpen(ctx, t, addr)
	b.Close() // before the producer, which cannot abort its transaction then
	p.Close()
	if b, err = broker.Start(broker.Config{Listen: addr, DataDir: dir}); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	wantCommittedPosition(ctx, t, addr)
}

// TestReadToEndPastATransactionAbortedByACrash is the broker's kill -9 that make chaos found: a
// copy of the data directory taken while a task's transaction is open is what a broker killed with
// SIGKILL leaves. The embedded broker restarted on it treats the transaction as aborted without
// writing an abort marker, so a read_committed reader is handed nothing past the aborted batches and
// must still know it reached the end.
func TestReadToEndPastATransactionAbortedByACrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := leaveTransactionOpen(ctx, t, b.Addr())
	defer p.Close()
	crashed := t.TempDir()
	must(t, os.CopyFS(crashed, os.DirFS(dir)))

	b2, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DataDir: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	wantCommittedPosition(ctx, t, b2.Addr())
}

// abortedSpec is the one-partition offsets topic of the aborted-transaction tests.
var abortedSpec = TopicSpec{Name: offsetsTopic, Partitions: 1, ReplicationFactor: -1}

// leaveTransactionOpen commits the offset {"position":1} of source partition {"f":1}, then writes
// {"position":2} in a task's transaction that it leaves open; the caller closes the producer.
func leaveTransactionOpen(ctx context.Context, t *testing.T, addr string) *kgo.Client {
	t.Helper()
	s := NewOffsetStore(Options{SeedBrokers: []string{addr}, ReadCommitted: true}, abortedSpec)
	must(t, s.Start(ctx))
	defer s.Close()
	must(t, s.Put(ctx, "src", []OffsetEntry{{Partition: json.RawMessage(`{"f":1}`), Offset: json.RawMessage(`{"position":1}`)}}))
	p, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("connect-cluster-src-0"))
	if err != nil {
		t.Fatal(err)
	}
	must(t, p.BeginTransaction())
	recs, err := s.Records("src", []OffsetEntry{{Partition: json.RawMessage(`{"f":1}`), Offset: json.RawMessage(`{"position":2}`)}})
	must(t, err)
	must(t, p.ProduceSync(ctx, recs...).FirstErr())
	return p
}

// wantCommittedPosition starts a read_committed offset store on the broker at addr and checks
// that it reads to the end within 10 s and holds the committed {"position":1}, not the aborted 2.
func wantCommittedPosition(ctx context.Context, t *testing.T, addr string) {
	t.Helper()
	s := NewOffsetStore(Options{SeedBrokers: []string{addr}, ReadCommitted: true}, abortedSpec)
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	must(t, s.Start(sctx))
	defer s.Close()
	if got, _ := s.Get("src", []byte(`{"f":1}`)); string(got) != `{"position":1}` {
		t.Fatalf("offset after the broker's restart = %s, want the committed {\"position\":1}", got)
	}
}

// The check for aborted batches without a marker (skipAborted) must reach a partition that stalls
// on them while records keep coming on another: kfake itself, restarted on what a kill -9 left
// (runtime/broker writes the markers, kfake alone does not), with partition 0 ending in such a
// transaction and a producer writing to partition 1 all along.
func TestReadToEndPastAbortedBatchesWhileAnotherPartitionMoves(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	spec := TopicSpec{Name: offsetsTopic, Partitions: 2, ReplicationFactor: -1}
	c := startKfake(t, dir)
	first := NewLog(LogConfig{Topic: spec, SeedBrokers: c.ListenAddrs(), ReadCommitted: true})
	must(t, first.Start(ctx))
	first.Close()
	p, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID("task-0"),
		kgo.DefaultProduceTopic(offsetsTopic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	must(t, err)
	defer p.Close()
	must(t, p.BeginTransaction())
	must(t, p.ProduceSync(ctx, &kgo.Record{Partition: 0, Key: []byte("k"), Value: []byte("aborted by the kill")}).FirstErr())
	crashed := t.TempDir()
	must(t, os.CopyFS(crashed, os.DirFS(dir)))

	addrs := startKfake(t, crashed).ListenAddrs()
	w, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(offsetsTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	must(t, err)
	defer w.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a record on partition 1 every 50 ms: more often than the probe's interval
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				w.ProduceSync(ctx, &kgo.Record{Partition: 1, Key: []byte("k"), Value: []byte("v")})
			}
		}
	}()
	l := NewLog(LogConfig{Topic: spec, SeedBrokers: addrs, ReadCommitted: true})
	must(t, l.Start(ctx))
	defer l.Close()
	for range 3 { // each ReadToEnd lists the ends anew, partition 1's a little further on
		must(t, l.ReadToEnd(ctx))
	}
}

// startKfake starts a one-broker kfake on dataDir, without what runtime/broker adds to it.
func startKfake(t *testing.T, dataDir string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dataDir), kfake.SyncWrites())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Options says how the stores reach Kafka. One Options value serves all
// three stores; each store derives its own client from it.
type Options struct {
	// SeedBrokers are the bootstrap brokers (bootstrap.servers).
	SeedBrokers []string

	// ClientIDPrefix is prepended to each store's client id, as Kafka
	// Connect does with the worker's group.id: "<prefix>-configs",
	// "<prefix>-offsets" and "<prefix>-statuses". Empty means "connect".
	ClientIDPrefix string

	// ClientOpts are extra kgo options applied to every client, for TLS,
	// SASL, dialers and the like. Options that change how the stores
	// produce or consume (acks, partitioner, consume topics) must not be
	// given: the stores rely on their own settings.
	ClientOpts []kgo.Opt

	// Logger receives store log lines. Nil discards them.
	Logger *slog.Logger

	// ReadCommitted reads the topics with isolation.level=read_committed, as Kafka Connect does
	// when exactly.once.source.support is preparing or enabled: records of transactions that were
	// aborted (a zombie task's, a deposed leader's) are never applied, and reading "to the end"
	// means to the last stable offset.
	ReadCommitted bool
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

func (o Options) logConfig(topic TopicSpec, suffix string, handle func(*kgo.Record)) LogConfig {
	prefix := o.ClientIDPrefix
	if prefix == "" {
		prefix = "connect"
	}
	return LogConfig{
		Topic:         topic,
		SeedBrokers:   o.SeedBrokers,
		ClientID:      prefix + "-" + suffix,
		ClientOpts:    o.ClientOpts,
		Logger:        o.logger(),
		Handler:       handle,
		ReadCommitted: o.ReadCommitted,
	}
}

// LogConfig configures a Log.
type LogConfig struct {
	// Topic is the compacted topic the log lives in. Start creates it if
	// it is missing and checks it if it exists.
	Topic TopicSpec

	// SeedBrokers, ClientID and ClientOpts build the log's client.
	SeedBrokers []string
	ClientID    string
	ClientOpts  []kgo.Opt

	// Logger receives log lines. Nil discards them.
	Logger *slog.Logger

	// Handler is called for every data record consumed, in offset order
	// within a partition, from one goroutine. A tombstone has a nil
	// Value. The handler must not block on the log (for example by
	// writing to it and waiting for the write to be read back): the log
	// cannot consume anything else until it returns.
	Handler func(*kgo.Record)

	// ReadCommitted consumes with isolation.level=read_committed (see Options.ReadCommitted).
	ReadCommitted bool
}

// Record is a key and value to write to a Log. A nil Value is a tombstone.
type Record struct {
	Key, Value []byte
}

// Log is a compacted topic mirrored into memory, like Kafka Connect's
// KafkaBasedLog: a consumer without a group reads every partition from the
// beginning, continuously, and hands each record to the handler, while
// writes go to the same topic.
//
// Consistency comes from two waits. ReadToEnd waits until everything the
// topic held when it was called has been handled. Write waits until its own
// records have been handled, so state derived from the log reflects the
// write when Write returns (read-your-writes).
type Log struct {
	cfg    LogConfig
	logger *slog.Logger
	cl     *kgo.Client
	adm    *kadm.Client

	cancel context.CancelFunc
	done   chan struct{}

	// maxRecord is the largest record the topic holds (see recordLimit), set by Start; the
	// producer's batches may be as large. limitSetting says where the figure comes from.
	maxRecord    atomic.Int32
	limitSetting string

	mu sync.Mutex
	// next is, per partition, the offset after the last record handled.
	next map[int32]int64
	// advanced is closed, and replaced, whenever next moves forward.
	advanced chan struct{}
	// stopped is set, with the reason, when the consume loop ended.
	stopped error

	// txnMu guards txn, the transactional producer of a worker that claimed the log's writes
	// (ClaimWrites); nil: WriteExclusive writes as Write does.
	txnMu sync.Mutex
	txn   *kgo.Client
}

// NewLog returns a log for cfg. It does no I/O until Start.
func NewLog(cfg LogConfig) *Log {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Log{
		cfg:          cfg,
		logger:       logger.With("topic", cfg.Topic.Name),
		next:         make(map[int32]int64),
		advanced:     make(chan struct{}),
		limitSetting: "the producer's default batch limit",
	}
	l.maxRecord.Store(defaultProducerBatchMaxBytes)
	return l
}

// defaultProducerBatchMaxBytes is kgo's default ProducerBatchMaxBytes, the batch limit until Start
// has read the topic's own; and the bounds kgo accepts for it.
const (
	defaultProducerBatchMaxBytes = 1000012
	minProducerBatchMaxBytes     = 512
	maxProducerBatchMaxBytes     = 1 << 30
)

// Topic returns the name of the log's topic.
func (l *Log) Topic() string { return l.cfg.Topic.Name }

// Start connects, ensures the topic exists with the right settings, starts
// consuming and reads to the end. When it returns without error the
// handler has seen everything the topic held at the time.
func (l *Log) Start(ctx context.Context) error {
	if l.cl != nil {
		return fmt.Errorf("log for topic %q: already started", l.Topic())
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(l.cfg.SeedBrokers...),
		kgo.ClientID(l.cfg.ClientID),
		// Producing: acks=all and idempotence are kgo's defaults;
		// the default sticky key partitioner hashes keys with murmur2
		// exactly like Java's default partitioner, so every record
		// for a key lands where a Java worker would put it.
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DefaultProduceTopic(l.Topic()),
		// Consuming: no group, every partition, from the start.
		kgo.ConsumeTopics(l.Topic()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// Control records (transaction markers written by a Java
		// leader with exactly-once support) occupy offsets too. We
		// need to see them to know our position passed the end
		// offset; the handler never sees them.
		kgo.KeepControlRecords(),
		// A record may be as large as the topic holds (kgo's own default is a little smaller
		// than Kafka's). kgo asks once per partition, on the first write, after Start has read
		// the limit.
		kgo.ProducerBatchMaxBytesFn(func(string) int32 { return l.maxRecord.Load() }),
	}
	if l.cfg.ReadCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(append(opts, l.cfg.ClientOpts...)...)
	if err != nil {
		return fmt.Errorf("creating client %q for topic %q: %w", l.cfg.ClientID, l.Topic(), err)
	}
	l.cl, l.adm = cl, kadm.NewClient(cl)
	if err := EnsureTopics(withWarnings(ctx, l.logger), l.adm, l.cfg.Topic); err != nil {
		cl.Close()
		return err
	}
	// The consumer may have looked the topic up before it existed.
	cl.ForceMetadataRefresh()
	l.readRecordLimit(ctx)

	pollCtx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go l.consume(pollCtx)
	if err := l.ReadToEnd(ctx); err != nil {
		l.Close()
		return fmt.Errorf("reading internal topic %q to the end: %w", l.Topic(), err)
	}
	return nil
}

// readRecordLimit learns the largest record the topic holds. A broker that does not say leaves
// Kafka's default, with a warning: writes are then checked against a figure that may be wrong, and
// the broker has the last word.
func (l *Log) readRecordLimit(ctx context.Context) {
	limit, setting, err := recordLimit(ctx, l.adm, l.Topic())
	if err != nil {
		l.logger.Warn("cannot read the internal topic's max.message.bytes; assuming Kafka's default", "bytes", limit, "err", err)
	}
	l.maxRecord.Store(int32(min(max(limit, minProducerBatchMaxBytes), maxProducerBatchMaxBytes)))
	l.limitSetting = setting
}

// checkSizes refuses recs if any of them is larger than the topic holds.
func (l *Log) checkSizes(recs []Record) error {
	limit := int(l.maxRecord.Load())
	for _, rec := range recs {
		if size := recordSize(rec); size > limit {
			return &RecordTooLargeError{Topic: l.Topic(), Key: rec.Key, Size: size, Limit: limit, Setting: l.limitSetting}
		}
	}
	return nil
}

// Close stops consuming and closes the client. Writes and waits in progress
// fail.
func (l *Log) Close() {
	l.ReleaseWrites()
	if l.cancel != nil {
		l.cancel()
		<-l.done
	}
	if l.cl != nil {
		l.cl.Close()
	}
}

// consume is the single goroutine that reads the topic and calls the
// handler.
func (l *Log) consume(ctx context.Context) {
	defer close(l.done)
	for {
		fs := l.cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			l.mu.Lock()
			l.stopped = errors.New("log closed")
			close(l.advanced)
			l.advanced = make(chan struct{})
			l.mu.Unlock()
			return
		}
		fs.EachError(func(topic string, p int32, err error) {
			l.logger.Warn("error consuming internal topic", "partition", p, "err", err)
		})
		var moved bool
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) == 0 {
				return
			}
			for _, r := range p.Records {
				if !r.Attrs.IsControl() && l.cfg.Handler != nil {
					l.cfg.Handler(r)
				}
			}
			last := p.Records[len(p.Records)-1]
			l.mu.Lock()
			l.next[p.Partition] = last.Offset + 1
			l.mu.Unlock()
			moved = true
		})
		if moved {
			l.mu.Lock()
			close(l.advanced)
			l.advanced = make(chan struct{})
			l.mu.Unlock()
		}
	}
}

// ReadToEnd waits until every record that was in the topic when it was
// called has been handled. It asks the brokers for the end offsets first,
// as Kafka Connect does, rather than trusting what the consumer has seen.
func (l *Log) ReadToEnd(ctx context.Context) error {
	if l.adm == nil {
		return fmt.Errorf("reading internal topic %q: the store is not started", l.Topic())
	}
	want, err := l.endOffsets(ctx)
	if err != nil {
		return err
	}
	return l.waitFor(ctx, want)
}

// endOffsets lists the topic's end offsets, retrying errors that go away
// on their own: right after a topic is created, brokers (and the client's
// metadata cache) may not know its partitions or leaders yet.
func (l *Log) endOffsets(ctx context.Context) (map[int32]int64, error) {
	backoff := 50 * time.Millisecond
	for {
		list := l.adm.ListEndOffsets
		if l.cfg.ReadCommitted {
			// The end a read_committed consumer reaches: the last stable offset. An open
			// transaction (a task's, until it commits or is fenced) holds it back.
			list = l.adm.ListCommittedOffsets
		}
		ends, err := list(ctx, l.Topic())
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			want := make(map[int32]int64)
			ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
			return want, nil
		}
		if !kerr.IsRetriable(err) && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return nil, fmt.Errorf("listing end offsets of internal topic %q: %w", l.Topic(), err)
		}
		l.logger.Debug("retrying end offsets", "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("listing end offsets of internal topic %q: %w (last error: %w)", l.Topic(), context.Cause(ctx), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// abortedProbeInterval is how often a read_committed ReadToEnd checks whether aborted batches
// without a marker hold back the partitions that did not move since the last check.
const abortedProbeInterval = 500 * time.Millisecond

// waitFor waits until, for every partition in want, the next offset to
// handle is at least the wanted one.
func (l *Log) waitFor(ctx context.Context, want map[int32]int64) error {
	// A read_committed reader that is handed nothing on a partition for a while may be stuck
	// behind aborted batches that no marker ends (see skipAborted). The ticker runs whatever the
	// other partitions do: records flowing on one partition must not put off the check of another.
	var probe <-chan time.Time
	if l.cfg.ReadCommitted {
		tick := time.NewTicker(abortedProbeInterval)
		defer tick.Stop()
		probe = tick.C
	}
	var lastProbe map[int32]int64 // the positions at the last tick
	for {
		l.mu.Lock()
		caughtUp := true
		for p, o := range want {
			if l.next[p] < o {
				caughtUp = false
				break
			}
		}
		stopped, advanced := l.stopped, l.advanced
		l.mu.Unlock()
		switch {
		case caughtUp:
			return nil
		case stopped != nil:
			return stopped
		}
		select {
		case <-advanced:
		case <-probe:
			var stalled map[int32]int64
			stalled, lastProbe = l.stalled(want, lastProbe)
			l.skipAborted(ctx, stalled)
		case <-ctx.Done():
			return fmt.Errorf("waiting to read internal topic %q up to %v: %w", l.Topic(), want, context.Cause(ctx))
		}
	}
}

// stalled returns the partitions of want that are short of it and have not moved since the
// positions last, and the positions now.
func (l *Log) stalled(want, last map[int32]int64) (stalled, now map[int32]int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	stalled, now = map[int32]int64{}, make(map[int32]int64, len(want))
	for p, o := range want {
		at := l.next[p]
		now[p] = at
		if prev, ok := last[p]; ok && prev == at && at < o {
			stalled[p] = o
		}
	}
	return stalled, now
}

// ClaimWrites makes WriteExclusive write in transactions with transactionalID, as Kafka Connect's
// leader writes the config topic with exactly-once support on: initializing the producer fences
// the previous holder of the id (a deposed leader), whose later writes then fail instead of
// landing after the new leader's.
func (l *Log) ClaimWrites(ctx context.Context, transactionalID string) error {
	opts := []kgo.Opt{
		kgo.SeedBrokers(l.cfg.SeedBrokers...),
		kgo.ClientID(l.cfg.ClientID + "-leader"),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DefaultProduceTopic(l.Topic()),
		kgo.ProducerBatchMaxBytesFn(func(string) int32 { return l.maxRecord.Load() }),
		kgo.TransactionalID(transactionalID),
	}
	cl, err := kgo.NewClient(append(opts, l.cfg.ClientOpts...)...)
	if err != nil {
		return fmt.Errorf("creating the transactional writer of internal topic %q: %w", l.Topic(), err)
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return fmt.Errorf("initializing transactional.id %s for internal topic %q: %w", transactionalID, l.Topic(), err)
	}
	l.txnMu.Lock()
	old := l.txn
	l.txn = cl
	l.txnMu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// ReleaseWrites drops the transactional writer (the worker is no longer the leader).
func (l *Log) ReleaseWrites() {
	l.txnMu.Lock()
	old := l.txn
	l.txn = nil
	l.txnMu.Unlock()
	if old != nil {
		old.Close()
	}
}

// WriteExclusive is Write for the writes only the leader makes: in one transaction when the log's
// writes were claimed (ClaimWrites), so that a deposed leader that was fenced cannot write.
func (l *Log) WriteExclusive(ctx context.Context, recs ...Record) error {
	want, err := l.sendExclusive(ctx, recs)
	if err != nil {
		return err
	}
	if want == nil {
		return l.Write(ctx, recs...) // not claimed
	}
	return l.waitFor(ctx, want)
}

// sendExclusive writes recs in one transaction of the claimed writer and returns, per partition,
// the offset after the last one; nil offsets when the writes are not claimed.
func (l *Log) sendExclusive(ctx context.Context, recs []Record) (map[int32]int64, error) {
	l.txnMu.Lock()
	defer l.txnMu.Unlock()
	if l.txn == nil || len(recs) == 0 {
		return nil, nil
	}
	if err := l.txn.BeginTransaction(); err != nil {
		return nil, fmt.Errorf("writing to internal topic %q: %w", l.Topic(), err)
	}
	want, err := l.sendWith(ctx, l.txn, recs)
	commit := kgo.TryCommit
	if err != nil {
		commit = kgo.TryAbort
	}
	if eerr := l.txn.EndTransaction(ctx, commit); eerr != nil && err == nil {
		err = fmt.Errorf("committing the write to internal topic %q: %w", l.Topic(), eerr)
	}
	if err != nil {
		return nil, err
	}
	if want == nil {
		want = map[int32]int64{}
	}
	return want, nil
}

// Send writes one record and returns once the brokers acknowledged it
// (acks=all). It does not wait for the record to be read back.
func (l *Log) Send(ctx context.Context, key, value []byte) error {
	_, err := l.send(ctx, []Record{{key, value}})
	return err
}

// Write writes recs in order, as one batch per partition where possible,
// waits for the brokers' acknowledgement, and then waits until the log has
// read every one of them back and handed it to the handler.
func (l *Log) Write(ctx context.Context, recs ...Record) error {
	want, err := l.send(ctx, recs)
	if err != nil {
		return err
	}
	return l.waitFor(ctx, want)
}

// send produces recs and returns, per partition, the offset after the last
// one written.
func (l *Log) send(ctx context.Context, recs []Record) (map[int32]int64, error) {
	return l.sendWith(ctx, l.cl, recs)
}

// sendWith is send with the producer cl (the log's own, or its transactional writer).
func (l *Log) sendWith(ctx context.Context, cl *kgo.Client, recs []Record) (map[int32]int64, error) {
	if cl == nil {
		return nil, fmt.Errorf("writing to internal topic %q: the store is not started", l.Topic())
	}
	if len(recs) == 0 {
		return nil, nil
	}
	if err := l.checkSizes(recs); err != nil {
		return nil, err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		want = make(map[int32]int64)
	)
	wg.Add(len(recs))
	for _, rec := range recs {
		cl.Produce(ctx, &kgo.Record{Key: rec.Key, Value: rec.Value}, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, kerr.MessageTooLarge):
				errs = append(errs, &RecordTooLargeError{Topic: l.Topic(), Key: r.Key, Size: recordSize(Record{r.Key, r.Value}),
					Limit: int(l.maxRecord.Load()), Setting: l.limitSetting, Err: err})
				return
			case err != nil:
				errs = append(errs, fmt.Errorf("writing key %s to internal topic %q: %w", shortKey(r.Key), l.Topic(), err))
				return
			}
			if r.Offset+1 > want[r.Partition] {
				want[r.Partition] = r.Offset + 1
			}
		})
	}
	// Records wait out the producer linger; flushing sends them now and,
	// as they are all buffered, together.
	if err := cl.Flush(ctx); err != nil {
		return nil, fmt.Errorf("writing to internal topic %q: %w", l.Topic(), err)
	}
	wg.Wait()
	return want, errors.Join(errs...)
}

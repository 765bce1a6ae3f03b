package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// SinkConfig is what a sink task needs to run.
type SinkConfig struct {
	ID             connect.TaskID
	Plugin         SinkPlugin
	KeyConverter   Converter
	ValueConverter Converter
	// ClientOpts connect to the cluster (seed brokers, client id, TLS...); the task adds the
	// consumer group settings and owns the client.
	ClientOpts     []kgo.Opt
	GroupID        string   // connect-<connector> unless overridden
	Topics         []string // topics
	TopicsRegex    string   // topics.regex (exactly one of Topics and TopicsRegex)
	FlushInterval  time.Duration
	MaxPollRecords int         // records per PUT; default 500 (Kafka's max.poll.records)
	Chain          Chain       // transforms, applied after the converters
	Errors         ErrorPolicy // errors.*
	Paused         bool
	OnState        StateFunc
	Metrics        *metrics.Task // nil: none
	Logger         *slog.Logger
	// ActiveTopics learns each topic the task consumes, when its first record is fetched
	// (topic.tracking.enable). Nil: topics are not tracked.
	ActiveTopics TopicRecorder
	// FetchRetryTimeout is how long a partition may keep failing with retriable fetch errors before
	// the task fails; zero means DefaultFetchRetryTimeout. Non-retriable errors fail it at once.
	FetchRetryTimeout time.Duration
}

// Sink runs one sink task.
type Sink struct {
	cfg SinkConfig
	ctl *control
	log *slog.Logger
	cl  *kgo.Client

	topics *topicSet // used by the loop goroutine only
	// puts runs PUT on its own goroutine, so that the loop polls and converts the next batch while
	// the plugin takes the current one (the converters are other plugin instances).
	puts *stage[delivery]

	mu      sync.Mutex // guards next: the loop and the group callbacks both use it
	next    map[string]map[int32]kgo.EpochOffset
	dirty   bool // records were put since the last flush
	flushFn func(context.Context) error
	// For the metrics, also under mu: records handed over since the last commit, the partitions
	// owned, and each one's lag (records behind its high watermark as of its last fetch).
	uncommitted int
	owned       int
	lag         map[string]map[int32]int64
}

// NewSink returns a sink task; Run starts it.
func NewSink(cfg SinkConfig) *Sink {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.OnState == nil {
		cfg.OnState = func(connect.State, string) {}
	}
	if cfg.MaxPollRecords <= 0 {
		cfg.MaxPollRecords = 500
	}
	cfg.Errors.metrics = cfg.Metrics
	return &Sink{
		cfg:    cfg,
		ctl:    newControl(cfg.Paused),
		log:    cfg.Logger.With("connector", cfg.ID.Connector, "task", cfg.ID.Task),
		next:   map[string]map[int32]kgo.EpochOffset{},
		lag:    map[string]map[int32]int64{},
		topics: newTopicSet(cfg.ActiveTopics),
	}
}

// SetPaused pauses or resumes the task.
func (s *Sink) SetPaused(p bool) { s.ctl.SetPaused(p) }

// Run consumes until ctx is cancelled (a graceful stop: the plugin is flushed and offsets
// committed, then the task leaves the group) or the task fails.
func (s *Sink) Run(ctx context.Context) error {
	// Defaults the client settings (consumer.*, consumer.override.*) may change, then those
	// settings, then what the task cannot work without.
	opts := []kgo.Opt{
		// A worker that dies must not hold its partitions for the client default of 45 s: use the
		// Connect group's own session timeout, so a restarted or surviving task takes over quickly.
		kgo.SessionTimeout(10 * time.Second),
		kgo.HeartbeatInterval(3 * time.Second),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), // Kafka Connect's auto.offset.reset=earliest
	}
	opts = append(opts, s.cfg.ClientOpts...)
	opts = append(opts,
		kgo.ConsumerGroup(s.cfg.GroupID),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(s.onAssigned),
		kgo.OnPartitionsRevoked(s.onRevoked),
		kgo.OnPartitionsLost(s.onLost),
	)
	if s.cfg.TopicsRegex != "" {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(s.cfg.TopicsRegex))
	} else {
		opts = append(opts, kgo.ConsumeTopics(s.cfg.Topics...))
	}
	// The put stage exists before the client, whose rebalance callbacks wait for it. A stop leaves
	// the batches not yet put to the partitions' next owner (their offsets are not committed); a
	// failure abandons them all, along with a PUT being retried.
	putCtx, abandon := context.WithCancel(ctx)
	defer abandon()
	s.puts = startStage(putCtx, s.handOver)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		s.puts.close()
		err = fmt.Errorf("task %s: creating consumer: %w", s.cfg.ID, err)
		s.cfg.OnState(connect.StateFailed, err.Error())
		return err
	}
	s.cl = cl
	err = s.run(ctx)
	if err != nil {
		abandon()
	}
	if perr := s.puts.close(); err == nil && ctx.Err() == nil {
		err = perr
	}
	if err == nil {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = s.flushAndCommit(stopCtx)
		cancel()
	}
	cl.Close() // leaves the group, so the remaining tasks take over the partitions at once
	if err != nil {
		reportFailed(ctx, s.log, s.cfg.OnState, err)
	}
	return err
}

func (s *Sink) run(ctx context.Context) error {
	report := stateReporter(s.cfg.OnState)
	failures := newFetchFailures(s.cfg.FetchRetryTimeout)
	lastFlush := time.Now()
	for {
		if !s.ctl.waitResumed(ctx, func() { report(connect.StatePaused) }) {
			return nil
		}
		report(connect.StateRunning)
		pollCtx, cancel := context.WithTimeout(ctx, min(s.cfg.FlushInterval, time.Second))
		fetches := s.cl.PollRecords(pollCtx, s.cfg.MaxPollRecords)
		cancel()
		if ctx.Err() != nil {
			s.cl.AllowRebalance()
			return nil
		}
		recs := fetches.Records()
		failures.progressed(recs)
		var fatal error
		fetches.EachError(func(topic string, p int32, err error) {
			if fatal != nil {
				return
			}
			switch classifyFetchError(err) {
			case fetchIgnore:
			case fetchLog:
				s.log.Warn("fetch error; the consumer recovered by itself", "topic", topic, "partition", p, "err", err)
			case fetchRetriable:
				s.log.Warn("fetch error; retrying", "topic", topic, "partition", p, "err", err)
				fatal = failures.failed(topic, p, err, time.Now())
			case fetchFatal:
				fatal = fatalFetchError(topic, p, err)
			}
		})
		if fatal != nil {
			s.cl.AllowRebalance()
			return fmt.Errorf("task %s failed in KAFKA_CONSUME: %w", s.cfg.ID, fatal)
		}
		if len(recs) > 0 {
			s.cfg.Metrics.SinkRecordsRead(len(recs))
			s.recordLag(fetches)
			d, err := s.prepare(ctx, recs)
			if err == nil {
				err = s.puts.send(ctx, d)
			}
			if err != nil {
				s.cl.AllowRebalance()
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		if err := s.puts.failed(); err != nil {
			s.cl.AllowRebalance()
			return err
		}
		// A task about to pause puts what it has, flushes and commits first (here, where no
		// rebalance callback runs beside it), as Kafka's paused sink task goes on committing: it
		// may stay paused for long.
		paused := s.ctl.isPaused()
		if paused {
			if err := s.puts.drain(ctx); err != nil {
				s.cl.AllowRebalance()
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		if time.Since(lastFlush) >= s.cfg.FlushInterval || paused {
			if err := s.flushAndCommit(ctx); err != nil {
				s.cl.AllowRebalance()
				return err
			}
			lastFlush = time.Now()
		}
		s.cl.AllowRebalance()
	}
}

// delivery is a fetched batch ready for PUT: converted and through the transform chain.
type delivery struct {
	recs   []*kgo.Record // as fetched
	out    []wire.Record // what goes to PUT
	index  []int         // the chain's input i came from recs[index[i]]
	origin []int         // out[i] came from the chain's input origin[i]
	failed []failure     // records that failed in the converters or the chain, by recs position
}

// prepare converts fetched records and runs the transform chain, ready for PUT (handOver).
func (s *Sink) prepare(ctx context.Context, recs []*kgo.Record) (delivery, error) {
	for _, r := range recs {
		if s.topics.first(r.Topic) {
			s.cfg.ActiveTopics.Record(r.Topic) // as Kafka's recordActiveTopic, when the record is consumed
		}
	}
	var failed []failure
	bad := make([]bool, len(recs))
	convert := func(stage string, c Converter, field func(*kgo.Record) []byte) ([]wire.Data, error) {
		in := make([]wire.TopicBytes, len(recs))
		for i, r := range recs {
			in[i] = wire.TopicBytes{Topic: r.Topic, Bytes: field(r)}
		}
		out, rejected, err := retryIsolated(ctx, s.cfg.Errors, in, func(b []wire.TopicBytes) ([]wire.Data, error) { return toConnect(ctx, c, b) })
		if err != nil {
			return nil, fmt.Errorf("task %s failed in %s for records %s..%s: %w", s.cfg.ID, stage, position(recs[0]), position(recs[len(recs)-1]), err)
		}
		for i, e := range rejected {
			if !bad[i] {
				bad[i] = true
				failed = append(failed, failure{index: i, stage: stage, class: dataExceptionClass, err: e})
			}
		}
		return out, nil
	}
	keys, err := convert("KEY_CONVERTER", s.cfg.KeyConverter, func(r *kgo.Record) []byte { return r.Key })
	if err != nil {
		return delivery{}, err
	}
	values, err := convert("VALUE_CONVERTER", s.cfg.ValueConverter, func(r *kgo.Record) []byte { return r.Value })
	if err != nil {
		return delivery{}, err
	}
	batch := make([]wire.Record, 0, len(recs))
	index := make([]int, 0, len(recs)) // batch position -> recs position
	for i, r := range recs {
		if bad[i] {
			continue
		}
		wr := wire.Record{
			Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(),
			Key: keys[i], Value: values[i],
		}
		for _, h := range r.Headers {
			wr.Headers = append(wr.Headers, wire.Header{Key: h.Key, Value: headerData(h.Value)})
		}
		batch = append(batch, wr)
		index = append(index, i)
	}
	out, origin, tfailed, err := s.cfg.Chain.Apply(ctx, batch)
	if err != nil {
		return delivery{}, fmt.Errorf("task %s failed in TRANSFORMATION: %w", s.cfg.ID, err)
	}
	for _, f := range tfailed {
		f.index = index[f.index]
		failed = append(failed, f)
	}
	return delivery{recs: recs, out: out, index: index, origin: origin, failed: failed}, nil
}

// handOver gives a prepared batch to the plugin in one PUT. Records that failed in a stage are
// handled by the error policy (skipped and sent to the dead letter queue, or failing the task);
// every fetched record counts as consumed, and becomes committable.
func (s *Sink) handOver(ctx context.Context, d delivery) error {
	recs, out, index, origin, failed := d.recs, d.out, d.index, d.origin, d.failed
	if len(out) > 0 {
		start := time.Now()
		rejected, err := s.put(ctx, out)
		if err != nil {
			return fmt.Errorf("task %s failed in TASK_PUT for records %s..%s: %w", s.cfg.ID, position(recs[0]), position(recs[len(recs)-1]), err)
		}
		for i, e := range rejected {
			failed = append(failed, failure{index: index[origin[i]], stage: "TASK_PUT", class: "org.apache.kafka.connect.errors.ConnectException", err: e})
		}
		s.cfg.Metrics.SinkPut(len(out)-len(rejected), time.Since(start))
	}
	if len(failed) > 0 {
		sort.Slice(failed, func(i, j int) bool { return failed[i].index < failed[j].index })
		err := s.cfg.Errors.reportFailures(ctx, s.log, s.cfg.ID.String(), failed,
			func(i int) string { return position(recs[i]) }, func(i int) *kgo.Record { return recs[i] })
		if err != nil {
			return err
		}
	}
	s.mu.Lock()
	for _, r := range recs {
		ps := s.next[r.Topic]
		if ps == nil {
			ps = map[int32]kgo.EpochOffset{}
			s.next[r.Topic] = ps
		}
		ps[r.Partition] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
	}
	s.dirty = true
	s.uncommitted += len(recs)
	s.mu.Unlock()
	return nil
}

// put hands records to the plugin. A retriable error retries the same batch with back-off, as Kafka
// Connect does for a RetriableException from put; when the plugin rejects the batch and
// errors.tolerance=all, the records are put one at a time to find the ones it rejects.
func (s *Sink) put(ctx context.Context, batch []wire.Record) (map[int]error, error) {
	var err error
	for backoff := 300 * time.Millisecond; ; backoff = min(backoff*2, 10*time.Second) {
		err = s.cfg.Plugin.Put(ctx, batch)
		if err == nil || !retriable(err) || ctx.Err() != nil {
			break
		}
		s.log.Info("PUT failed with a retriable error; retrying the same batch", "err", err, "backoff", backoff)
		s.cfg.Metrics.Error(metrics.OperationFailed)
		if !sleep(ctx, backoff) {
			return nil, ctx.Err()
		}
		s.cfg.Metrics.Error(metrics.Retried)
	}
	if err == nil || !s.cfg.Errors.TolerateAll || !recordLevel(err) {
		return nil, err
	}
	_, rejected, err := isolate(batch, func(b []wire.Record) ([]struct{}, error) {
		return make([]struct{}, len(b)), s.cfg.Plugin.Put(ctx, b)
	})
	return rejected, err
}

func position(r *kgo.Record) string {
	return fmt.Sprintf("%s-%d@%d", r.Topic, r.Partition, r.Offset)
}

// flushAndCommit asks the plugin to make everything it was given durable, then commits the
// consumer offsets: a record is never marked consumed before the plugin has it safe.
func (s *Sink) flushAndCommit(ctx context.Context) error {
	s.mu.Lock()
	if !s.dirty {
		s.mu.Unlock()
		s.cfg.Metrics.OffsetCommit(metrics.CommitSkipped, 0)
		return nil
	}
	start := time.Now()
	committing := s.uncommitted
	s.uncommitted = 0
	offsets := make(map[string]map[int32]kgo.EpochOffset, len(s.next))
	var tpo []wire.TopicPartitionOffset
	for t, ps := range s.next {
		offsets[t] = make(map[int32]kgo.EpochOffset, len(ps))
		for p, o := range ps {
			offsets[t][p] = o
			tpo = append(tpo, wire.TopicPartitionOffset{Topic: t, Partition: p, Offset: o.Offset})
		}
	}
	s.dirty = false
	s.mu.Unlock()
	sort.Slice(tpo, func(i, j int) bool {
		if tpo[i].Topic != tpo[j].Topic {
			return tpo[i].Topic < tpo[j].Topic
		}
		return tpo[i].Partition < tpo[j].Partition
	})
	if err := s.cfg.Plugin.Flush(ctx, tpo); err != nil {
		s.cfg.Metrics.OffsetCommit(metrics.CommitFailure, time.Since(start))
		return fmt.Errorf("task %s failed in FLUSH: %w", s.cfg.ID, err)
	}
	var commitErr error
	s.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && commitErr == nil {
					commitErr = fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, e)
				}
			}
		}
	})
	s.cfg.Metrics.OffsetCommit(commitResult(commitErr), time.Since(start))
	if commitErr != nil {
		// The plugin has the records; a failed commit only means they may be delivered again.
		s.log.Warn("committing consumer offsets failed; records since the last commit may be redelivered", "err", commitErr)
		s.mu.Lock()
		s.dirty = true
		s.uncommitted += committing
		s.mu.Unlock()
		return nil
	}
	s.cfg.Metrics.SinkCommitted(committing)
	return nil
}

// recordLag updates the lag of the partitions a poll returned records of: their high watermark
// less the offset after the last record fetched. A partition that has caught up reads 0.
func (s *Sink) recordLag(fetches kgo.Fetches) {
	if s.cfg.Metrics == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		ps := s.lag[p.Topic]
		if ps == nil {
			ps = map[int32]int64{}
			s.lag[p.Topic] = ps
		}
		ps[p.Partition] = max(p.HighWatermark-(p.Records[len(p.Records)-1].Offset+1), 0)
	})
	s.publishLag()
}

// publishLag sets the task's lag metric to the sum over its partitions. Callers hold mu.
func (s *Sink) publishLag() {
	total := int64(0)
	for _, ps := range s.lag {
		for _, l := range ps {
			total += l
		}
	}
	s.cfg.Metrics.SinkLag(total)
}

func (s *Sink) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ps := range assigned {
		s.owned += len(ps)
	}
	s.cfg.Metrics.SinkPartitions(s.owned)
}

func commitResult(err error) metrics.CommitResult {
	if err != nil {
		return metrics.CommitFailure
	}
	return metrics.CommitSuccess
}

func (s *Sink) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	// The records fetched before the rebalance are put first, as they were before the loop allowed
	// it, so that their offsets are committed while the task still owns the partitions.
	if err := s.puts.drain(ctx); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Error("put before partition revocation failed", "err", err)
	}
	if err := s.flushAndCommit(ctx); err != nil {
		s.log.Error("flush before partition revocation failed", "err", err)
	}
	s.forget(revoked)
}

func (s *Sink) onLost(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
	s.log.Warn("partitions lost; uncommitted records will be redelivered to their new owner", "partitions", lost)
	// Records of the lost partitions that are still being put must not make their offsets
	// committable again after they are forgotten.
	if err := s.puts.drain(ctx); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Error("put before forgetting lost partitions failed", "err", err)
	}
	s.forget(lost)
}

func (s *Sink) forget(parts map[string][]int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, ps := range parts {
		s.owned -= len(ps)
		for _, p := range ps {
			delete(s.next[t], p)
			delete(s.lag[t], p)
		}
		if len(s.next[t]) == 0 {
			delete(s.next, t)
		}
		if len(s.lag[t]) == 0 {
			delete(s.lag, t)
		}
	}
	s.cfg.Metrics.SinkPartitions(max(s.owned, 0))
	s.publishLag()
}

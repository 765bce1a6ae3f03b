package task

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// SourceConfig is what a source task needs to run.
type SourceConfig struct {
	ID             connect.TaskID
	Plugin         SourcePlugin
	KeyConverter   Converter
	ValueConverter Converter
	Chain          Chain       // transforms, applied before the converters
	Errors         ErrorPolicy // errors.* (a source has no dead letter queue, as in Kafka)
	// Producer writes the task's records. Build it with ProducerOpts so that a record's explicit
	// partition is honoured. The task flushes it but does not close it.
	Producer      *kgo.Client
	Offsets       OffsetWriter
	FlushInterval time.Duration // offset.flush.interval.ms
	FlushTimeout  time.Duration // offset.flush.timeout.ms
	Paused        bool
	OnState       StateFunc
	Metrics       *metrics.Task // nil: none
	Logger        *slog.Logger
	// ActiveTopics learns each topic the task writes to, once the first record written to it is
	// acknowledged (topic.tracking.enable). Nil: topics are not tracked.
	ActiveTopics TopicRecorder
}

// Source runs one source task.
type Source struct {
	cfg SourceConfig
	ctl *control
	log *slog.Logger

	acks       submitted
	topics     *topicSet  // used by the loop goroutine only
	produceMu  sync.Mutex // guards produceErr
	produceErr error
	// offsets that were committable but whose write failed; retried on the next flush.
	unflushed map[string][]byte
}

// NewSource returns a source task; Run starts it.
func NewSource(cfg SourceConfig) *Source {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.OnState == nil {
		cfg.OnState = func(connect.State, string) {}
	}
	return &Source{
		cfg:    cfg,
		ctl:    newControl(cfg.Paused),
		log:    cfg.Logger.With("connector", cfg.ID.Connector, "task", cfg.ID.Task),
		topics: newTopicSet(cfg.ActiveTopics),
	}
}

// SetPaused pauses or resumes the task.
func (s *Source) SetPaused(p bool) { s.ctl.SetPaused(p) }

// idle backoff bounds: a plugin with nothing to say is asked again soon, but not in a hot loop.
const (
	minIdle = 5 * time.Millisecond
	maxIdle = 200 * time.Millisecond
)

// Run moves data until ctx is cancelled (a graceful stop: outstanding records are flushed and
// their offsets committed) or the task fails (the error is returned and reported as FAILED).
func (s *Source) Run(ctx context.Context) error {
	err := s.run(ctx)
	stopCtx, cancel := context.WithTimeout(context.Background(), s.cfg.FlushTimeout)
	defer cancel()
	if ferr := s.cfg.Producer.Flush(stopCtx); ferr != nil && err == nil {
		err = fmt.Errorf("flushing records on stop: %w", ferr)
	}
	if cerr := s.commitOffsets(stopCtx); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		s.cfg.OnState(connect.StateFailed, err.Error())
	}
	return err
}

func (s *Source) run(ctx context.Context) error {
	report := stateReporter(s.cfg.OnState)
	lastFlush := time.Now()
	idle := time.Duration(0)
	paused := func() {
		report(connect.StatePaused)
		// A task may stay paused for long: write what it polled and commit the offsets now, as
		// Kafka's offset committer goes on committing a paused task's offsets, so that a worker that
		// dies meanwhile does not repeat those records.
		fctx, cancel := context.WithTimeout(ctx, s.cfg.FlushTimeout)
		defer cancel()
		if err := s.cfg.Producer.Flush(fctx); err != nil {
			s.log.Warn("flushing records on pause failed; their offsets are committed later", "err", err)
		}
		if err := s.commitOffsets(ctx); err != nil {
			s.log.Warn("offset commit on pause failed; will retry", "err", err)
		}
		lastFlush = time.Now()
	}
	for {
		if !s.ctl.waitResumed(ctx, paused) {
			return nil
		}
		report(connect.StateRunning)
		if err := s.failure(); err != nil {
			return err
		}
		if time.Since(lastFlush) >= s.cfg.FlushInterval {
			if err := s.commitOffsets(ctx); err != nil {
				s.log.Warn("offset commit failed; will retry", "err", err)
			}
			lastFlush = time.Now()
		}
		recs, err := s.cfg.Plugin.Poll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ge interface{ IsRetriable() bool }
			if errors.As(err, &ge) && ge.IsRetriable() {
				s.log.Info("poll failed with a retriable error; polling again", "err", err)
				if !sleep(ctx, maxIdle) {
					return nil
				}
				continue
			}
			return fmt.Errorf("task %s failed in TASK_POLL: %w", s.cfg.ID, err)
		}
		s.cfg.Metrics.SourceRecordsPolled(len(recs))
		if len(recs) == 0 {
			idle = min(max(idle*2, minIdle), maxIdle)
			if !sleep(ctx, min(idle, time.Until(lastFlush.Add(s.cfg.FlushInterval))+time.Millisecond)) {
				return nil
			}
			continue
		}
		idle = 0
		if err := s.send(ctx, recs); err != nil {
			return err
		}
	}
}

// send converts a polled batch and hands it to the producer. The batch's offsets become committable
// once every record of it (and of every batch before it) has been acknowledged.
//
// Records go through the transform chain, then the converters; a record that fails in either is
// handled by the error policy (skipped with errors.tolerance=all, else the task fails). Its source
// offset still counts: the offsets of a batch are those of every record polled.
func (s *Source) send(ctx context.Context, polled []wire.Record) error {
	recs, origin, failed, err := s.cfg.Chain.Apply(ctx, polled)
	if err != nil {
		return fmt.Errorf("task %s failed in TRANSFORMATION: %w", s.cfg.ID, err)
	}
	bad := make([]bool, len(recs))
	convert := func(stage string, c Converter, field func(*wire.Record) wire.Data) ([][]byte, error) {
		in := make([]wire.TopicData, len(recs))
		for i := range recs {
			in[i] = wire.TopicData{Topic: recs[i].Topic, Value: field(&recs[i])}
		}
		out, rejected, err := retryIsolated(ctx, s.cfg.Errors, in, func(b []wire.TopicData) ([][]byte, error) { return fromConnect(ctx, c, b) })
		if err != nil {
			return nil, fmt.Errorf("task %s failed in %s: %w", s.cfg.ID, stage, err)
		}
		for i, e := range rejected {
			if !bad[i] {
				bad[i] = true
				failed = append(failed, failure{index: origin[i], stage: stage, class: dataExceptionClass, err: e})
			}
		}
		return out, nil
	}
	keys, err := convert("KEY_CONVERTER", s.cfg.KeyConverter, func(r *wire.Record) wire.Data { return r.Key })
	if err != nil {
		return err
	}
	values, err := convert("VALUE_CONVERTER", s.cfg.ValueConverter, func(r *wire.Record) wire.Data { return r.Value })
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		// The first record that failed is the one a failing task names (as the sink loop does).
		sort.Slice(failed, func(i, j int) bool { return failed[i].index < failed[j].index })
		describe := func(i int) string {
			r := &polled[i]
			return fmt.Sprintf("for topic %s with source partition %s and offset %s", r.Topic, r.SourcePartition, r.SourceOffset)
		}
		if err := s.cfg.Errors.reportFailures(ctx, s.log, s.cfg.ID.String(), failed, describe, nil); err != nil {
			return err
		}
	}
	produced := 0
	for i := range recs {
		if !bad[i] {
			produced++
		}
	}
	b := s.acks.submit(polled, produced)
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			s.setFailure(fmt.Errorf("task %s failed in KAFKA_PRODUCE: %w", s.cfg.ID, err))
			return
		}
		s.cfg.Metrics.SourceRecordsWritten(1)
		b.ack()
	}
	for i := range recs {
		r := &recs[i]
		if bad[i] {
			continue
		}
		if r.Topic == "" {
			return fmt.Errorf("task %s failed in TASK_POLL: the plugin returned a record without a topic", s.cfg.ID)
		}
		kr := toKafkaRecord(r, keys[i], values[i])
		p := promise
		if s.topics.first(r.Topic) {
			// As Kafka's recordActiveTopic: a topic is active once a record was written to it. Only
			// the first record of a topic pays for this; a failed write fails the task anyway.
			p = func(kr *kgo.Record, err error) {
				promise(kr, err)
				if err == nil {
					s.cfg.ActiveTopics.Record(kr.Topic)
				}
			}
		}
		// The producer's context is not ctx: a stop must not drop records already polled; they are
		// flushed (bounded by offset.flush.timeout.ms) before the task ends.
		s.cfg.Producer.Produce(context.Background(), kr, p)
	}
	return nil
}

func (s *Source) setFailure(err error) {
	s.produceMu.Lock()
	defer s.produceMu.Unlock()
	if s.produceErr == nil {
		s.produceErr = err
	}
}

func (s *Source) failure() error {
	s.produceMu.Lock()
	defer s.produceMu.Unlock()
	return s.produceErr
}

// commitOffsets writes the offsets of every fully acknowledged batch, then tells the plugin.
func (s *Source) commitOffsets(ctx context.Context) error {
	offsets := s.acks.committable()
	if len(s.unflushed) > 0 {
		for k, v := range offsets {
			s.unflushed[k] = v
		}
		offsets, s.unflushed = s.unflushed, nil
	}
	if len(offsets) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, s.cfg.FlushTimeout)
	defer cancel()
	if err := s.cfg.Offsets.WriteOffsets(wctx, s.cfg.ID.Connector, offsets); err != nil {
		s.unflushed = offsets
		s.cfg.Metrics.OffsetCommit(metrics.CommitFailure)
		return fmt.Errorf("writing source offsets: %w", err)
	}
	s.cfg.Metrics.OffsetCommit(metrics.CommitSuccess)
	if err := s.cfg.Plugin.Commit(ctx); err != nil {
		s.log.Warn("plugin COMMIT failed", "err", err)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// submitted tracks polled batches in order until the producer has acknowledged them, as Kafka
// Connect's SubmittedRecords: offsets are committed only up to the first batch not fully acked, so a
// crash never skips a record that was not written.
type submitted struct {
	mu      sync.Mutex
	batches []*batch
}

type batch struct {
	remaining atomic.Int64
	// offsets: source partition JSON -> the offset of the batch's last record in that partition.
	offsets map[string][]byte
}

func (b *batch) ack() { b.remaining.Add(-1) }

// submit records a polled batch, of which produced records were handed to the producer (the
// others were dropped by a transform or skipped after an error); its offsets are those of every
// polled record.
func (s *submitted) submit(recs []wire.Record, produced int) *batch {
	b := &batch{}
	b.remaining.Store(int64(produced))
	for i := range recs {
		if len(recs[i].SourcePartition) == 0 || len(recs[i].SourceOffset) == 0 {
			continue
		}
		if b.offsets == nil {
			b.offsets = map[string][]byte{}
		}
		b.offsets[string(recs[i].SourcePartition)] = recs[i].SourceOffset
	}
	// A polled offset is a slice of the whole POLL result; kept as is, it would keep every record
	// of the batch reachable until the offsets are committed (offset.flush.interval.ms x rate).
	for k, v := range b.offsets {
		b.offsets[k] = bytes.Clone(v)
	}
	s.mu.Lock()
	s.batches = append(s.batches, b)
	s.mu.Unlock()
	return b
}

// committable removes the fully acknowledged batches at the head and merges their offsets.
func (s *submitted) committable() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string][]byte
	n := 0
	for _, b := range s.batches {
		if b.remaining.Load() > 0 {
			break
		}
		for k, v := range b.offsets {
			if out == nil {
				out = map[string][]byte{}
			}
			out[k] = v
		}
		n++
	}
	// Shift the pending batches down and clear the vacated tail, so that the committed batches are
	// not kept reachable by the backing array.
	rest := copy(s.batches, s.batches[n:])
	clear(s.batches[rest:])
	s.batches = s.batches[:rest]
	return out
}

package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
}

// Source runs one source task.
type Source struct {
	cfg SourceConfig
	ctl *control
	log *slog.Logger

	acks       submitted
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
		cfg: cfg,
		ctl: newControl(cfg.Paused),
		log: cfg.Logger.With("connector", cfg.ID.Connector, "task", cfg.ID.Task),
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
	for {
		if !s.ctl.waitResumed(ctx, func() { report(connect.StatePaused) }) {
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
			return fmt.Errorf("task %s failed in POLL: %w", s.cfg.ID, err)
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
func (s *Source) send(ctx context.Context, recs []wire.Record) error {
	keys, err := fromConnect(ctx, s.cfg.KeyConverter, recs, func(r *wire.Record) wire.Data { return r.Key })
	if err != nil {
		return fmt.Errorf("task %s failed in KEY_CONVERTER: %w", s.cfg.ID, err)
	}
	values, err := fromConnect(ctx, s.cfg.ValueConverter, recs, func(r *wire.Record) wire.Data { return r.Value })
	if err != nil {
		return fmt.Errorf("task %s failed in VALUE_CONVERTER: %w", s.cfg.ID, err)
	}
	b := s.acks.submit(recs)
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
		if r.Topic == "" {
			return fmt.Errorf("task %s failed in TASK_POLL: the plugin returned a record without a topic", s.cfg.ID)
		}
		kr := toKafkaRecord(r, keys[i], values[i])
		// The producer's context is not ctx: a stop must not drop records already polled; they are
		// flushed (bounded by offset.flush.timeout.ms) before the task ends.
		s.cfg.Producer.Produce(context.Background(), kr, promise)
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

func (s *submitted) submit(recs []wire.Record) *batch {
	b := &batch{}
	b.remaining.Store(int64(len(recs)))
	for i := range recs {
		if len(recs[i].SourcePartition) == 0 || len(recs[i].SourceOffset) == 0 {
			continue
		}
		if b.offsets == nil {
			b.offsets = map[string][]byte{}
		}
		b.offsets[string(recs[i].SourcePartition)] = recs[i].SourceOffset
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
	s.batches = append(s.batches[:0], s.batches[n:]...)
	return out
}

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
	Chain          Chain // transforms, applied before the converters
	// Converting, when not nil, runs Chain and then both converters in one plugin call per batch
	// (their objects share an instance); KeyConverter and ValueConverter are then not called.
	Converting ConvertingChain
	Errors     ErrorPolicy // errors.* (a source has no dead letter queue, as in Kafka)
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
	// Transactions makes the task exactly-once; Producer must then be transactional and Offsets
	// is not used. Nil: at least once, offsets flushed every FlushInterval.
	Transactions *Transactions
}

// Source runs one source task.
type Source struct {
	cfg SourceConfig
	ctl *control
	log *slog.Logger

	acks   submitted
	topics *topicSet // used by the produce stage only
	// The stages after POLL, each on its own goroutine, as each calls into other plugin instances
	// than the one before it or into the producer: the transform chain (nil without one), the
	// converters, and handing the records to the producer.
	transforms *stage[polledBatch]
	convert    *stage[transformed]
	produce    *stage[converted]
	polls      *pollBuffers            // the memory of the batches in the pipeline, reused
	sends      *sendBuffers            // the memory of the batches the producer holds, reused once acked
	convertIn  scratch[wire.TopicData] // the converters' input
	produceMu  sync.Mutex              // guards produceErr
	produceErr error
	// acked counts the records acknowledged since the last report to Metrics, which happens with
	// a batch's last acknowledgement or a failure: one update per batch rather than two atomic
	// adds per record on counters the other stages update too. Only the producer's promises use
	// it, and kgo calls them one at a time.
	acked int
	// offsets that were committable but whose write failed; retried on the next flush.
	unflushed map[string][]byte
	txn       *txn // nil: at least once
}

// NewSource returns a source task; Run starts it.
func NewSource(cfg SourceConfig) *Source {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.OnState == nil {
		cfg.OnState = func(connect.State, string) {}
	}
	cfg.Errors.metrics = cfg.Metrics
	s := &Source{
		cfg:    cfg,
		ctl:    newControl(cfg.Paused),
		log:    cfg.Logger.With("connector", cfg.ID.Connector, "task", cfg.ID.Task),
		topics: newTopicSet(cfg.ActiveTopics),
		polls:  newPollBuffers(),
		sends:  newSendBuffers(),
	}
	if cfg.Transactions != nil {
		s.txn = &txn{cfg: cfg.Transactions}
	}
	return s
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
//
// POLL, the transform chain, the converters and the producer's Produce calls run as a pipeline:
// while a batch is handed to the producer, the converters work on the next one, the chain on the
// one after and the plugin polls the next, so a task moves as fast as its slowest stage rather
// than the sum of them. Each stage takes batches in order and
// holds at most a couple, so the order per partition is kept and a slow stage (or a producer whose
// buffer is full) holds back the ones before it.
func (s *Source) Run(ctx context.Context) error {
	// The stages outlive a graceful stop, so that what was polled is still written; they get
	// offset.flush.timeout.ms for it. A failed task abandons them.
	stageCtx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	s.produce = startStage(stageCtx, s.produceConverted)
	s.convert = startStage(stageCtx, s.convertAndSend)
	switch {
	case s.cfg.Converting != nil:
		s.transforms = startStage(stageCtx, s.transformConvertAndSend)
	case len(s.cfg.Chain) > 0:
		s.transforms = startStage(stageCtx, s.transformAndSend)
	}
	err := s.run(ctx, stageCtx)
	if err != nil {
		abandon()
	}
	deadline := time.AfterFunc(s.cfg.FlushTimeout, abandon)
	if cerr := s.closeStages(); cerr != nil && err == nil {
		err = fmt.Errorf("writing the records polled before the stop: %w", cerr)
	}
	deadline.Stop()
	stopCtx, cancel := context.WithTimeout(context.Background(), s.cfg.FlushTimeout)
	defer cancel()
	if ferr := s.flushAndCommit(stopCtx, err != nil); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil {
		reportFailed(ctx, s.log, s.cfg.OnState, err)
	}
	return err
}

// flushAndCommit writes what was produced and commits its offsets on a stop: the last transaction
// with exactly-once support, else a flush and an offset commit. A task that failed aborts its
// transaction instead (its records must not become visible without their offsets).
func (s *Source) flushAndCommit(ctx context.Context, failed bool) error {
	if s.txn != nil {
		if failed {
			s.abortTransaction()
			return nil
		}
		return s.commitTransaction(ctx)
	}
	if err := s.cfg.Producer.Flush(ctx); err != nil {
		return fmt.Errorf("flushing records on stop: %w", err)
	}
	if err := s.commitOffsets(ctx); err != nil {
		return err
	}
	// A record the broker rejected during the flush: its offsets were not committed (the next
	// run writes it again), and the stop says why rather than ending as if all were written.
	return s.failure()
}

// closeStages waits until the stages have handled every batch sent to them and ends them.
func (s *Source) closeStages() error {
	var err error
	if s.transforms != nil {
		err = s.transforms.close()
	}
	if cerr := s.convert.close(); err == nil {
		err = cerr
	}
	if perr := s.produce.close(); err == nil {
		err = perr
	}
	if err == nil {
		err = s.failure()
	}
	return err
}

// drainStages waits until every batch polled so far has been handed to the producer.
func (s *Source) drainStages(ctx context.Context) error {
	if s.transforms != nil {
		if err := s.transforms.drain(ctx); err != nil {
			return err
		}
	}
	if err := s.convert.drain(ctx); err != nil {
		return err
	}
	return s.produce.drain(ctx)
}

// polledBatch is a batch as POLL returned it, with the buffer it lives in (nil: not reused).
type polledBatch struct {
	recs []wire.Record
	buf  *pollBuffer
}

// transformAndSend is the transform stage: the chain, then on to the converters. Without a chain
// the loop does this itself, saving a hand-over per batch.
func (s *Source) transformAndSend(ctx context.Context, polled polledBatch) error {
	t, err := s.transform(ctx, polled.recs, polled.buf)
	if err != nil {
		return err
	}
	t.buf = polled.buf
	return s.convert.send(ctx, t)
}

// transformConvertAndSend is the transform stage of a task whose chain converts its records too
// (SourceConfig.Converting): one plugin call does what the chain and the convert stage would, and
// the batch goes on to the producer. Its result lives in the send buffer, which the producer holds
// until every record of it is acknowledged.
func (s *Source) transformConvertAndSend(ctx context.Context, polled polledBatch) error {
	if err := s.failure(); err != nil {
		return err
	}
	var batch []byte
	if polled.buf != nil {
		batch = polled.buf.bytes // the POLL result the records were decoded from, unchanged since
	}
	mem := s.sends.get()
	var err error
	mem.converted, err = s.cfg.Converting.TransformConvertInto(ctx, polled.recs, batch, &mem.chain, mem.converted)
	if err != nil {
		return fmt.Errorf("task %s failed in TRANSFORMATION: %w", s.cfg.ID, s.cfg.Chain.callError(err))
	}
	var failed []failure
	for _, f := range mem.chain.Failed {
		switch f.Stage {
		case wire.StageKeyConverter, wire.StageValueConverter:
			stage := "VALUE_CONVERTER"
			if f.Stage == wire.StageKeyConverter {
				stage = "KEY_CONVERTER"
			}
			failed = append(failed, failure{index: f.Input, stage: stage, class: dataExceptionClass, err: s.cfg.Converting.ConverterError(f)})
		default:
			failed = append(failed, s.cfg.Chain.stepFailure(f))
		}
	}
	if err := s.reportFailed(ctx, polled.recs, failed); err != nil {
		return err
	}
	conv := mem.chain.Converted()
	mem.bad = reuse(&mem.bad, len(conv)) // the records that failed are not among them
	t := transformed{polled: polled.recs, origin: mem.chain.Inputs(), failed: failed, buf: polled.buf}
	return s.produce.send(ctx, converted{transformed: t, conv: conv, mem: mem, produced: len(conv)})
}

// run polls until ctx is done or the task fails, and sends each batch down the pipeline with
// stageCtx: a batch that was polled is not dropped by a stop.
func (s *Source) run(ctx, stageCtx context.Context) error {
	report := stateReporter(s.cfg.OnState)
	lastFlush := time.Now()
	idle := time.Duration(0)
	var failed error // a stage's error found while pausing
	paused := func() {
		report(connect.StatePaused)
		// A task may stay paused for long: write what it polled and commit the offsets now, as
		// Kafka's offset committer goes on committing a paused task's offsets, so that a worker that
		// dies meanwhile does not repeat those records.
		if err := s.drainStages(ctx); err != nil {
			if ctx.Err() == nil {
				failed = err
			}
			return
		}
		if s.txn != nil {
			if err := s.commitTransaction(ctx); err != nil && ctx.Err() == nil {
				failed = err
			}
			lastFlush = time.Now()
			return
		}
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
		onPause := paused
		if s.ctl.isPaused() {
			// Pause here rather than only in waitResumed, so that a batch that fails while the
			// stages drain fails the task now, not when it is resumed.
			if paused(); failed != nil {
				return failed
			}
			onPause = nil
		}
		if !s.ctl.waitResumed(ctx, onPause) || failed != nil {
			return failed
		}
		report(connect.StateRunning)
		if err := s.failure(); err != nil {
			return err
		}
		if s.txn != nil {
			// Offsets are committed with each transaction; an interval that ended while the
			// plugin had nothing new is committed here.
			if s.intervalDue() {
				if err := s.drainStages(ctx); err != nil {
					return err
				}
				if err := s.commitTransaction(ctx); err != nil {
					return err
				}
			}
		} else if time.Since(lastFlush) >= s.cfg.FlushInterval {
			if err := s.commitOffsets(ctx); err != nil {
				s.log.Warn("offset commit failed; will retry", "err", err)
			}
			lastFlush = time.Now()
		}
		polledAt := time.Now()
		recs, buf, err := s.polls.poll(ctx, s.cfg.Plugin)
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
		s.cfg.Metrics.SourcePolled(len(recs), time.Since(polledAt))
		if len(recs) == 0 {
			s.polls.release()
			s.sends.release()
			idle = min(max(idle*2, minIdle), maxIdle)
			if !sleep(ctx, min(idle, time.Until(lastFlush.Add(s.cfg.FlushInterval))+time.Millisecond)) {
				return nil
			}
			continue
		}
		idle = 0
		if s.transforms != nil {
			err = s.transforms.send(stageCtx, polledBatch{recs, buf})
		} else {
			err = s.transformAndSend(stageCtx, polledBatch{recs, buf})
		}
		if err != nil {
			return err
		}
	}
}

// transformed is a polled batch after the transform chain: what goes to the converters.
type transformed struct {
	polled []wire.Record // as polled: their source offsets are the batch's
	recs   []wire.Record // what came out of the chain
	origin []int         // recs[i] came from polled[origin[i]]; nil: from polled[i] (no chain)
	failed []failure     // records the chain failed, reported with the converters' failures
	buf    *pollBuffer   // what polled and recs live in, reused once the batch is converted (nil: not)
}

// originOf is the index of the polled record that t.recs[i] came from.
func (t *transformed) originOf(i int) int {
	if t.origin == nil {
		return i
	}
	return t.origin[i]
}

// converted is a batch after the converters: what goes to the producer.
type converted struct {
	transformed
	// conv are the records when the chain converted them (SourceConfig.Converting); recs is then
	// empty, and the keys and values of mem are not used.
	conv     []wire.ConvertedRecord
	mem      *sendBuffer // what the producer holds until every record is acknowledged
	produced int         // how many are produced
}

// transform runs a polled batch through the transform chain, whose results live in buf (nil: in
// new memory).
func (s *Source) transform(ctx context.Context, polled []wire.Record, buf *pollBuffer) (transformed, error) {
	if err := s.failure(); err != nil {
		return transformed{}, err
	}
	if len(s.cfg.Chain) == 0 {
		return transformed{polled: polled, recs: polled}, nil
	}
	var mem *chainMemory
	if buf != nil {
		mem = buf.chainMemory()
	}
	recs, origin, failed, err := s.cfg.Chain.apply(ctx, polled, mem)
	if err != nil {
		return transformed{}, fmt.Errorf("task %s failed in TRANSFORMATION: %w", s.cfg.ID, err)
	}
	return transformed{polled: polled, recs: recs, origin: origin, failed: failed}, nil
}

// convertAndSend is the convert stage: it converts a transformed batch and sends it on to the
// produce stage.
//
// A record that fails in the chain or a converter is handled by the error policy (skipped with
// errors.tolerance=all, else the task fails). Its source offset still counts: the offsets of a
// batch are those of every record polled.
func (s *Source) convertAndSend(ctx context.Context, t transformed) error {
	if err := s.failure(); err != nil {
		return err
	}
	polled, recs, failed := t.polled, t.recs, t.failed
	mem := s.sends.get()
	bad := reuse(&mem.bad, len(recs))
	convert := func(stage string, c Converter, field func(*wire.Record) wire.Data, out *[][]byte, buf *[]byte) ([][]byte, error) {
		if allNull(recs, field) {
			// A null without a schema is null bytes for every converter (see fromConnect): the
			// keys of a file source need no input built, nor any output.
			return nil, nil
		}
		kept, in := s.convertIn.get(len(recs))
		defer s.convertIn.put(kept) // cleared: the values alias the batch's buffer, which is reused
		for i := range recs {
			in[i] = wire.TopicData{Topic: recs[i].Topic, Value: field(&recs[i])}
		}
		res, rejected, err := retryIsolated(ctx, s.cfg.Errors, in, func(b []wire.TopicData) ([][]byte, error) {
			if len(b) == len(in) {
				return fromConnectInto(ctx, c, b, out, buf)
			}
			// One record at a time, to find the ones the converter rejects: each result must
			// stay, so none goes into the batch's memory.
			return fromConnect(ctx, c, b)
		})
		if err != nil {
			return nil, fmt.Errorf("task %s failed in %s: %w", s.cfg.ID, stage, err)
		}
		for i, e := range rejected {
			if !bad[i] {
				bad[i] = true
				failed = append(failed, failure{index: t.originOf(i), stage: stage, class: dataExceptionClass, err: e})
			}
		}
		return res, nil
	}
	var err error
	if mem.keys, err = convert("KEY_CONVERTER", s.cfg.KeyConverter, func(r *wire.Record) wire.Data { return r.Key }, &mem.keys, &mem.keyBytes); err != nil {
		return err
	}
	if mem.values, err = convert("VALUE_CONVERTER", s.cfg.ValueConverter, func(r *wire.Record) wire.Data { return r.Value }, &mem.values, &mem.valBytes); err != nil {
		return err
	}
	if err := s.reportFailed(ctx, polled, failed); err != nil {
		return err
	}
	produced := 0
	for i := range recs {
		if !bad[i] {
			produced++
		}
	}
	return s.produce.send(ctx, converted{transformed: t, mem: mem, produced: produced})
}

// reportFailed hands the records of a polled batch that failed in the chain or a converter to the
// error policy, which fails the task unless errors.tolerance=all.
func (s *Source) reportFailed(ctx context.Context, polled []wire.Record, failed []failure) error {
	if len(failed) == 0 {
		return nil
	}
	// The first record that failed is the one a failing task names (as the sink loop does).
	sort.Slice(failed, func(i, j int) bool { return failed[i].index < failed[j].index })
	describe := func(i int) string {
		r := &polled[i]
		return fmt.Sprintf("for topic %s with source partition %s and offset %s", r.Topic, r.SourcePartition, r.SourceOffset)
	}
	return s.cfg.Errors.reportFailures(ctx, s.log, s.cfg.ID.String(), failed, describe, nil)
}

// elem is bs[i], or nil when bs is nil (every element null).
func elem(bs [][]byte, i int) []byte {
	if bs == nil {
		return nil
	}
	return bs[i]
}

// allNull reports whether field is null for every record.
func allNull(recs []wire.Record, field func(*wire.Record) wire.Data) bool {
	for i := range recs {
		if field(&recs[i]).Tag != wire.TagNull {
			return false
		}
	}
	return true
}

// produceConverted is the produce stage: it hands a converted batch's records to the producer,
// in a transaction with exactly-once support. The batch's offsets become committable once every
// record of it (and of every batch before it) has been acknowledged.
func (s *Source) produceConverted(ctx context.Context, c converted) error {
	if err := s.failure(); err != nil {
		return err
	}
	var err error
	if s.txn != nil {
		err = s.produceInTransaction(ctx, func() error { return s.produceBatch(c) })
	} else {
		err = s.produceBatch(c)
	}
	if err == nil {
		// What the producer holds now is the converters' output and copies of the headers.
		s.polls.put(c.buf)
	}
	return err
}

// reuse returns (*buf)[:n] zeroed, growing *buf first when it is shorter.
func reuse[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	b := (*buf)[:n]
	clear(b)
	return b
}

// produceBatch hands a converted batch's records to the producer and tracks its offsets until
// every record is acknowledged.
func (s *Source) produceBatch(c converted) error {
	recs, mem, produced := c.recs, c.mem, c.produced
	b := s.acks.submit(c.polled, produced)
	s.cfg.Metrics.SourceSubmitted(produced)
	if produced == 0 {
		s.sends.put(mem)
		return nil
	}
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			s.reportAcked()
			s.cfg.Metrics.SourceAbandoned(1)
			s.setFailure(fmt.Errorf("task %s failed in KAFKA_PRODUCE: %w", s.cfg.ID, err))
			return
		}
		s.acked++
		if b.ack() {
			s.reportAcked()
			s.sends.put(mem) // kgo is done with every record of the batch
		}
	}
	// The batch's records in one array rather than one allocation each, reused once the
	// producer has acknowledged all of them, which happens for a batch about at once.
	if cap(mem.krs) < produced {
		mem.krs = make([]kgo.Record, produced)
	}
	krs := mem.krs[:produced] // not cleared: setKafkaRecord overwrites each record
	// A record without a timestamp gets the time it is handed to the producer, as Kafka's
	// producer does; taken once per batch rather than by kgo once per record.
	now := time.Now()
	for i, n := 0, 0; n < produced; i++ {
		// n < produced, not i < len(recs): once the last record is handed over, mem may be
		// reused at any moment, and nothing of it may be read.
		if mem.bad[i] {
			continue
		}
		var r wire.ConvertedRecord
		if c.conv != nil {
			r = c.conv[i]
		} else {
			pr := &recs[i]
			r = wire.ConvertedRecord{Topic: pr.Topic, Partition: pr.Partition, Timestamp: pr.Timestamp,
				Key: elem(mem.keys, i), Value: elem(mem.values, i), Headers: pr.Headers}
		}
		if r.Topic == "" {
			return fmt.Errorf("task %s failed in TASK_POLL: the plugin returned a record without a topic", s.cfg.ID)
		}
		kr := &krs[n]
		n++
		setKafkaRecord(kr, &r, now, c.buf != nil)
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

// reportAcked tells Metrics about the records acknowledged since it was last told. Called from the
// producer's promises only.
func (s *Source) reportAcked() {
	if s.acked > 0 {
		s.cfg.Metrics.SourceRecordsWritten(s.acked)
		s.acked = 0
	}
}

func (s *Source) setFailure(err error) {
	s.produceMu.Lock()
	defer s.produceMu.Unlock()
	if s.produceErr == nil {
		s.produceErr = err
	}
}

// failure returns why the task has failed after POLL: the producer's error or a stage's.
func (s *Source) failure() error {
	s.produceMu.Lock()
	err := s.produceErr
	s.produceMu.Unlock()
	if err == nil && s.transforms != nil {
		err = s.transforms.failed()
	}
	if err == nil {
		err = s.convert.failed()
	}
	if err == nil {
		err = s.produce.failed()
	}
	return err
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
	start := time.Now()
	if err := s.cfg.Offsets.WriteOffsets(wctx, s.cfg.ID.Connector, offsets); err != nil {
		s.unflushed = offsets
		s.cfg.Metrics.OffsetCommit(metrics.CommitFailure, time.Since(start))
		return fmt.Errorf("writing source offsets: %w", err)
	}
	s.cfg.Metrics.OffsetCommit(metrics.CommitSuccess, time.Since(start))
	if err := s.cfg.Plugin.Commit(ctx, offsets); err != nil {
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
//
// Acknowledged batches at the head are merged into ready as new batches come, so the tracker holds
// the batches in flight (bounded by the producer's buffer) plus one offset per source partition,
// not every batch since the last offset flush.
type submitted struct {
	mu      sync.Mutex
	batches []*batch
	ready   map[string][]byte // offsets of acknowledged batches not yet taken by committable
}

type batch struct {
	remaining atomic.Int64
	// offsets: source partition JSON -> the offset of the batch's last record in that partition.
	offsets map[string][]byte
}

// ack counts one record acknowledged and reports whether it was the batch's last.
func (b *batch) ack() bool { return b.remaining.Add(-1) == 0 }

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
	s.mergeAcked()
	s.batches = append(s.batches, b)
	s.mu.Unlock()
	return b
}

// committable removes the fully acknowledged batches at the head and returns their merged offsets.
func (s *submitted) committable() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mergeAcked()
	out := s.ready
	s.ready = nil
	return out
}

// mergeAcked moves the offsets of the fully acknowledged batches at the head into ready. Callers
// hold mu.
func (s *submitted) mergeAcked() {
	n := 0
	for _, b := range s.batches {
		if b.remaining.Load() > 0 {
			break
		}
		for k, v := range b.offsets {
			if s.ready == nil {
				s.ready = map[string][]byte{}
			}
			s.ready[k] = v
		}
		n++
	}
	if n == 0 {
		return
	}
	// Shift the pending batches down and clear the vacated tail, so that the merged batches are
	// not kept reachable by the backing array.
	rest := copy(s.batches, s.batches[n:])
	clear(s.batches[rest:])
	s.batches = s.batches[:rest]
}

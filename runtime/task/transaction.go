package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/metrics"
)

// Boundary is a connector's transaction.boundary: when an exactly-once source task commits.
type Boundary string

const (
	// BoundaryPoll commits every batch POLL returned (Kafka's default).
	BoundaryPoll Boundary = "poll"
	// BoundaryInterval commits once transaction.boundary.interval.ms has passed since the
	// transaction began.
	BoundaryInterval Boundary = "interval"
)

// Transactions makes a source task exactly-once (KIP-618): its records and the source offsets
// they reach are written in one Kafka transaction by the task's transactional producer, so a
// read_committed reader sees a record once its offset is stored, and never a record whose offset
// was lost. A task that dies mid-transaction leaves it open until the next producer with the
// same transactional.id (its successor, or the leader fencing zombies) aborts it; its successor
// then starts from the last committed offsets and writes the aborted records again.
type Transactions struct {
	Boundary Boundary
	Interval time.Duration // for BoundaryInterval
	// OffsetRecords returns the offsets-topic records that store a connector's offsets (source
	// partition JSON -> offset JSON); the task produces them inside its transaction.
	OffsetRecords func(ctx context.Context, connector string, offsets map[string][]byte) ([]*kgo.Record, error)
	// Committed, if set, is told the offsets a transaction stored once it committed: a connector
	// with an offsets topic of its own copies them to the worker's offsets topic, outside the
	// transaction, as Kafka Connect does.
	Committed func(ctx context.Context, connector string, offsets map[string][]byte)
}

// txn is a source task's transaction state. The produce stage begins transactions and commits
// them at poll boundaries; the task loop commits when it has drained the stages (pause, stop, an
// interval that ends while the plugin has nothing new). mu orders the two.
type txn struct {
	cfg   *Transactions
	mu    sync.Mutex
	open  bool
	began time.Time
}

// begin starts a transaction unless one is open. Callers hold mu.
func (t *txn) begin(cl *kgo.Client) error {
	if t.open {
		return nil
	}
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	t.open, t.began = true, time.Now()
	return nil
}

// due reports whether the open transaction has reached its boundary after a batch was produced.
func (t *txn) due() bool {
	return t.open && (t.cfg.Boundary != BoundaryInterval || time.Since(t.began) >= t.cfg.Interval)
}

// produceInTransaction begins a transaction if none is open, calls produce (which hands records
// to the producer) and commits if the boundary is reached. It runs on the produce stage.
func (s *Source) produceInTransaction(ctx context.Context, produce func() error) error {
	t := s.txn
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.begin(s.cfg.Producer); err != nil {
		return fmt.Errorf("task %s failed beginning a transaction: %w", s.cfg.ID, err)
	}
	if err := produce(); err != nil {
		return err
	}
	if !t.due() {
		return nil
	}
	return s.commitLocked(ctx)
}

// commitTransaction commits the open transaction, if any, with the offsets of what it holds.
// The caller has drained the stages, so nothing is being produced meanwhile.
func (s *Source) commitTransaction(ctx context.Context) error {
	s.txn.mu.Lock()
	defer s.txn.mu.Unlock()
	return s.commitLocked(ctx)
}

// intervalDue reports whether an interval transaction is open and past its boundary.
func (s *Source) intervalDue() bool {
	s.txn.mu.Lock()
	defer s.txn.mu.Unlock()
	return s.txn.due()
}

// commitLocked flushes the transaction's records, adds the records of their offsets, flushes
// those too (kgo's EndTransaction does not flush: a record still buffered would land in the next
// transaction), and commits. Any failure fails the task: what the transaction held is aborted by
// the broker or by the next producer with this transactional.id, and the offsets were not stored.
func (s *Source) commitLocked(ctx context.Context) error {
	t, cl := s.txn, s.cfg.Producer
	if !t.open {
		return nil
	}
	start := time.Now()
	fctx, cancel := context.WithTimeout(ctx, s.cfg.FlushTimeout)
	defer cancel()
	fail := func(err error) error {
		s.cfg.Metrics.OffsetCommit(metrics.CommitFailure, time.Since(start))
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", ErrCommitTimedOut, err)
		}
		return fmt.Errorf("task %s failed committing its transaction: %w", s.cfg.ID, err)
	}
	if err := cl.Flush(fctx); err != nil {
		return fail(err)
	}
	if err := s.failure(); err != nil {
		return err
	}
	offsets := s.acks.committable()
	if len(offsets) > 0 {
		recs, err := t.cfg.OffsetRecords(fctx, s.cfg.ID.Connector, offsets)
		if err != nil {
			return fail(err)
		}
		var mu sync.Mutex
		var errs []error
		for _, r := range recs {
			cl.Produce(fctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		if err := cl.Flush(fctx); err != nil {
			return fail(err)
		}
		if err := errors.Join(errs...); err != nil {
			return fail(fmt.Errorf("writing source offsets: %w", err))
		}
	}
	err := cl.EndTransaction(fctx, kgo.TryCommit)
	t.open = false
	if err != nil {
		return fail(err)
	}
	s.cfg.Metrics.OffsetCommit(metrics.CommitSuccess, time.Since(start))
	if t.cfg.Committed != nil && len(offsets) > 0 {
		t.cfg.Committed(fctx, s.cfg.ID.Connector, offsets)
	}
	if err := s.cfg.Plugin.Commit(ctx, offsets); err != nil {
		s.log.Warn("plugin COMMIT failed", "err", err)
	}
	return nil
}

// ErrCommitTimedOut is the failure of a transaction's commit that did not end within
// offset.flush.timeout.ms, for instance because its worker was paused (SIGSTOP) or starved meanwhile.
var ErrCommitTimedOut = errors.New("the commit of the transaction timed out")

// abortTransaction drops what a failed task's open transaction holds. Best effort: if the broker
// cannot be told, the transaction times out or the task's successor aborts it.
func (s *Source) abortTransaction() {
	s.txn.mu.Lock()
	defer s.txn.mu.Unlock()
	if !s.txn.open {
		return
	}
	s.txn.open = false
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.FlushTimeout)
	defer cancel()
	if err := s.cfg.Producer.AbortBufferedRecords(ctx); err != nil {
		s.log.Warn("dropping the records of the failed transaction", "err", err)
		return
	}
	if err := s.cfg.Producer.EndTransaction(ctx, kgo.TryAbort); err != nil {
		s.log.Warn("aborting the transaction of the failed task", "err", err)
	}
}

// TransactionLost reports whether err says that a source task's open transaction was ended under
// it, by the broker or by a newer producer with its transactional.id: a transaction coordinator
// that starts again (the embedded broker after SIGKILL) aborts what was open and answers the
// task's commit with INVALID_TXN_STATE; one that timed the transaction out, or the leader's and a
// successor's InitProducerID, bumped the producer's epoch (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH);
// KIP-890 coordinators may ask the producer to abort (TRANSACTION_ABORTABLE). Nothing of that
// transaction was committed, its source offsets included, so the task may start again from its
// committed offsets and write those records again without a reader seeing them twice.
//
// A commit that ran out of time (ErrCommitTimedOut) counts too: its outcome is not known, but the
// offsets were in the transaction, so the committed offsets say whether it went through, and the
// task's successor's InitProducerID aborts it if it did not.
func TransactionLost(err error) bool {
	if errors.Is(err, ErrCommitTimedOut) {
		return true
	}
	for _, e := range []*kerr.Error{kerr.InvalidTxnState, kerr.ProducerFenced, kerr.InvalidProducerEpoch,
		kerr.TransactionAbortable, kerr.InvalidProducerIDMapping} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

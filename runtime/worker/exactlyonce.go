package worker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/kafkaclient"
	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/runtime/task"
)

// ExactlyOnce reports whether this worker runs source tasks exactly-once
// (exactly.once.source.support=enabled).
func (w *Worker) ExactlyOnce() bool {
	return w.cfg != nil && w.cfg.ExactlyOnceSource == config.ExactlyOnceEnabled
}

// TransactionalID is the transactional.id of a source task's producer, as Kafka Connect's:
// <group.id>-<connector>-<task>. A task's successor (after a restart, a rebalance or on another
// worker) has the same id, so its producer fences the one before.
func TransactionalID(groupID string, id connect.TaskID) string {
	return fmt.Sprintf("%s-%s-%d", groupID, id.Connector, id.Task)
}

// transactionsOf returns how a source task of connCfg commits with exactly-once support, or an
// error naming the setting that cannot be honoured.
func (w *Worker) transactionsOf(connCfg map[string]string, offsets store.OffsetBackingStore) (*task.Transactions, error) {
	t := &task.Transactions{Boundary: task.BoundaryPoll, Interval: w.cfg.OffsetFlushInterval}
	switch b := strings.ToLower(strings.TrimSpace(connCfg["transaction.boundary"])); b {
	case "", "poll":
	case "interval":
		t.Boundary = task.BoundaryInterval
		if raw := strings.TrimSpace(connCfg["transaction.boundary.interval.ms"]); raw != "" {
			ms, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || ms < 0 {
				return nil, fmt.Errorf("transaction.boundary.interval.ms: %q is not a number of milliseconds >= 0", raw)
			}
			t.Interval = time.Duration(ms) * time.Millisecond
		}
	case "connector":
		return nil, fmt.Errorf("transaction.boundary=connector: %s", errNoConnectorBoundaries)
	default:
		return nil, fmt.Errorf("transaction.boundary: %q is not one of poll, interval, connector", b)
	}
	if err := transactionalOffsets(t, offsets); err != nil {
		return nil, err
	}
	return t, nil
}

// The messages of Kafka's DistributedHerder.validateSourceConnectorConfig. A WebAssembly plugin has
// no way to declare exactly-once support or its own transaction boundaries (the ABI has no such
// call), so it is treated as a Java connector that does not implement those methods.
const (
	errNoPreflight = "The connector does not implement the API required for preflight validation of exactly-once " +
		"source support. Please consult the documentation for the connector to determine whether it supports exactly-once " +
		"semantics, and then consider reconfiguring the connector to use the value \"requested\" for this property (which " +
		"will disable this preflight check and allow the connector to be created)."
	errNoConnectorBoundaries = "The connector does not support connector-defined transaction boundaries with the given " +
		"configuration. Please reconfigure it to use a different transaction boundary definition."
	errWorkerNotExactlyOnce = "This worker does not have exactly-once source support enabled."
)

// exactlyOnceRule is Kafka's validateSourceConnectorConfig for exactly-once support: with
// exactly.once.support=required the worker must have it enabled and the connector must say it can
// (a plugin cannot say so); transaction.boundary=connector needs a connector that defines its own
// boundaries (a plugin cannot).
func (w *Worker) exactlyOnceRule(v *validation, cfg map[string]string) {
	if strings.EqualFold(strings.TrimSpace(cfg["exactly.once.support"]), "required") {
		if w.ExactlyOnce() {
			v.addError("exactly.once.support", errNoPreflight)
		} else {
			v.addError("exactly.once.support", errWorkerNotExactlyOnce)
		}
	}
	if w.ExactlyOnce() && strings.EqualFold(strings.TrimSpace(cfg["transaction.boundary"]), "connector") {
		v.addError("transaction.boundary", errNoConnectorBoundaries)
	}
}

// fenceOnStart readies a source task's transactional producer before the task reads its offsets:
// InitProducerID with the task's transactional.id fences its previous incarnation (a zombie on a
// worker that lost it, or the process that was killed) and aborts what that one left open, so the
// offsets read next are the last committed ones and the zombie cannot commit afterwards.
func fenceOnStart(ctx context.Context, producer *kgo.Client, id connect.TaskID) error {
	if _, _, err := producer.ProducerID(ctx); err != nil {
		return fmt.Errorf("task %s: initializing its transactional producer (fencing the previous one): %w", id, err)
	}
	return nil
}

// FenceZombies fences the transactional producers of tasks 0..count-1 of a connector, as Kafka's
// Admin.fenceProducers does for the leader: InitProducerID with each task's transactional.id bumps
// its epoch, which aborts the transaction it left open and makes a producer still holding the old
// epoch (a zombie task on a worker that lost it) fail with PRODUCER_FENCED on its next write or
// commit. The connector's admin client settings (admin.override.*) apply.
func (w *Worker) FenceZombies(ctx context.Context, connector string, connCfg map[string]string, count int) error {
	settings, err := w.client(connect.TaskID{Connector: connector}, connCfg, kafkaclient.Admin)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(slices.Concat(w.opts, []kgo.Opt{kgo.ClientID("connector-adminclient-" + connector)}, settings.Opts)...)
	if err != nil {
		return fmt.Errorf("connector %s: creating the admin client that fences its tasks: %w", connector, err)
	}
	defer cl.Close()
	for i := range count {
		id := TransactionalID(w.cfg.GroupID, connect.TaskID{Connector: connector, Task: i})
		if err := fenceProducer(ctx, cl, id); err != nil {
			return fmt.Errorf("connector %s: fencing the producer of task %d (transactional.id %s): %w", connector, i, id, err)
		}
	}
	return nil
}

// fenceProducer bumps the epoch of a transactional id, retrying while the coordinator is busy
// aborting what the id left open (CONCURRENT_TRANSACTIONS) or moving.
func fenceProducer(ctx context.Context, cl *kgo.Client, transactionalID string) error {
	backoff := 50 * time.Millisecond
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &transactionalID
		req.TransactionTimeoutMillis = 60000
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil || !kerr.IsRetriable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

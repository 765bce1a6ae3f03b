package metrics

import (
	"strconv"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Names of the task series Kafka Connect has no counterpart for.
const (
	// NameSinkRecordsLag is a sink task's consumer lag: records behind the log end, summed over its
	// partitions (Kafka's sink-record-lag-max is declared but never recorded).
	NameSinkRecordsLag = "wasmconnect_sink_task_records_lag"
)

// Task holds one task's series: connector-task-metrics, source-task-metrics or sink-task-metrics,
// task-error-metrics and the plugin call series (plugin.go). Its methods are safe for concurrent
// use, cheap enough for the task loop (per record an atomic add; per batch a short lock), and
// no-ops on a nil *Task, so code can run without metrics.
type Task struct {
	id     connect.TaskID
	source bool
	sink   bool
	s      series
	state  atomic.Int32 // index into taskStates
	ratios *ratioTracker

	batchSize  windowed
	commitTime windowed // milliseconds
	commitOK   windowed // 1 for a success, 0 for a failure

	// source
	polled, written *vm.Counter
	sourceActive    level
	pollTime        windowed // milliseconds

	// sink
	read, sent             *vm.Counter
	sinkActive             level
	putTime                windowed // milliseconds
	commitDone, commitSkip *vm.Counter
	commitSeq              atomic.Int64
	partitions             atomic.Int64
	lag                    atomic.Int64

	// task-error-metrics
	recordFailures, recordErrors, recordsSkipped, retries, errorsLogged *vm.Counter
	dlqRequests, dlqFailures                                            *vm.Counter
	lastError                                                           atomic.Int64 // unix ms

	plugins pluginSeries
}

// taskStates are the states a task can report, in a fixed order (tasks have no STOPPED state: a
// stopped connector has no tasks).
var taskStates = []connect.State{
	connect.StateUnassigned, connect.StateRunning, connect.StatePaused,
	connect.StateFailed, connect.StateRestarting,
}

// Task returns the handle of a task running on this worker, creating its series: Kafka's
// connector-task-metrics and task-error-metrics, and source-task-metrics for a source task (typ
// "source") or sink-task-metrics for a sink (both for any other type). The status starts as
// unassigned. Asking again for a live task returns the same handle. Call Unregister when the task
// stops on this worker.
func (r *Registry) Task(id connect.TaskID, typ connect.ConnectorType) *Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.tasks[id]; t != nil {
		return t
	}
	t := &Task{id: id, source: typ != connect.TypeSink, sink: typ != connect.TypeSource, ratios: newRatioTracker(0)}
	t.s = series{r: r, labels: `connector="` + escapeLabel(id.Connector) + `",task="` + strconv.Itoa(id.Task) + `"`}
	t.plugins.init(&t.s)
	s := &t.s
	s.setStatus(r.kafka(groupTask, "status"), statusLabel(connect.StateUnassigned))
	s.gauge(r.kafka(groupTask, "running-ratio"), "", func() float64 { return t.ratios.ratio(stateIndex(connect.StateRunning)) })
	s.gauge(r.kafka(groupTask, "pause-ratio"), "", func() float64 { return t.ratios.ratio(stateIndex(connect.StatePaused)) })
	s.gauge(r.kafka(groupTask, "batch-size-avg"), "", t.batchSize.avg)
	s.gauge(r.kafka(groupTask, "batch-size-max"), "", t.batchSize.max)
	s.gauge(r.kafka(groupTask, "offset-commit-avg-time-ms"), "", t.commitTime.avg)
	s.gauge(r.kafka(groupTask, "offset-commit-max-time-ms"), "", t.commitTime.max)
	s.gauge(r.kafka(groupTask, "offset-commit-success-percentage"), "", t.commitOK.avg)
	s.gauge(r.kafka(groupTask, "offset-commit-failure-percentage"), "", func() float64 {
		n, sum, _ := t.commitOK.stats()
		if n == 0 {
			return 0
		}
		return 1 - sum/float64(n)
	})
	if t.source {
		t.polled = s.counter(r.kafka(groupSource, "source-record-poll-total"), "")
		s.rate(r.kafka(groupSource, "source-record-poll-rate"), t.polled)
		t.written = s.counter(r.kafka(groupSource, "source-record-write-total"), "")
		s.rate(r.kafka(groupSource, "source-record-write-rate"), t.written)
		s.gauge(r.kafka(groupSource, "source-record-active-count"), "", func() float64 { return float64(t.sourceActive.v.Load()) })
		s.gauge(r.kafka(groupSource, "source-record-active-count-avg"), "", t.sourceActive.w.avg)
		s.gauge(r.kafka(groupSource, "source-record-active-count-max"), "", t.sourceActive.w.max)
		s.gauge(r.kafka(groupSource, "poll-batch-avg-time-ms"), "", t.pollTime.avg)
		s.gauge(r.kafka(groupSource, "poll-batch-max-time-ms"), "", t.pollTime.max)
	}
	if t.sink {
		t.read = s.counter(r.kafka(groupSink, "sink-record-read-total"), "")
		s.rate(r.kafka(groupSink, "sink-record-read-rate"), t.read)
		t.sent = s.counter(r.kafka(groupSink, "sink-record-send-total"), "")
		s.rate(r.kafka(groupSink, "sink-record-send-rate"), t.sent)
		s.gauge(r.kafka(groupSink, "sink-record-active-count"), "", func() float64 { return float64(t.sinkActive.v.Load()) })
		s.gauge(r.kafka(groupSink, "sink-record-active-count-avg"), "", t.sinkActive.w.avg)
		s.gauge(r.kafka(groupSink, "sink-record-active-count-max"), "", t.sinkActive.w.max)
		s.gauge(r.kafka(groupSink, "put-batch-avg-time-ms"), "", t.putTime.avg)
		s.gauge(r.kafka(groupSink, "put-batch-max-time-ms"), "", t.putTime.max)
		t.commitDone = s.counter(r.kafka(groupSink, "offset-commit-completion-total"), "")
		s.rate(r.kafka(groupSink, "offset-commit-completion-rate"), t.commitDone)
		t.commitSkip = s.counter(r.kafka(groupSink, "offset-commit-skip-total"), "")
		s.rate(r.kafka(groupSink, "offset-commit-skip-rate"), t.commitSkip)
		s.gauge(r.kafka(groupSink, "offset-commit-seq-no"), "", func() float64 { return float64(t.commitSeq.Load()) })
		s.gauge(r.kafka(groupSink, "partition-count"), "", func() float64 { return float64(t.partitions.Load()) })
		s.gauge(NameSinkRecordsLag, "", func() float64 { return float64(t.lag.Load()) })
	}
	t.recordFailures = s.counter(r.kafka(groupErrors, "total-record-failures"), "")
	t.recordErrors = s.counter(r.kafka(groupErrors, "total-record-errors"), "")
	t.recordsSkipped = s.counter(r.kafka(groupErrors, "total-records-skipped"), "")
	t.retries = s.counter(r.kafka(groupErrors, "total-retries"), "")
	t.errorsLogged = s.counter(r.kafka(groupErrors, "total-errors-logged"), "")
	t.dlqRequests = s.counter(r.kafka(groupErrors, "deadletterqueue-produce-requests"), "")
	t.dlqFailures = s.counter(r.kafka(groupErrors, "deadletterqueue-produce-failures"), "")
	s.gauge(r.kafka(groupErrors, "last-error-timestamp"), "", func() float64 { return float64(t.lastError.Load()) })
	registerHandle(&t.s, &r.tasks, id, t, &r.nTasks)
	return t
}

func stateIndex(st connect.State) int32 {
	for i, s := range taskStates {
		if s == st {
			return int32(i)
		}
	}
	return -1
}

// ID returns the task's id.
func (t *Task) ID() connect.TaskID {
	if t == nil {
		return connect.TaskID{}
	}
	return t.id
}

// SetState sets the task's status series (kafka_connect_connector_task_metrics_status{status=
// "running"} is 1, and no other status series exists) and feeds the running and pause ratios. A
// state a task cannot have (STOPPED, or unknown) removes the status series.
func (t *Task) SetState(st connect.State) {
	if t == nil {
		return
	}
	i := stateIndex(st)
	t.state.Store(i)
	t.ratios.set(i)
	value := ""
	if i >= 0 {
		value = statusLabel(st)
	}
	t.s.setStatus(t.s.r.kafka(groupTask, "status"), value)
}

// SourcePolled counts a batch the guest's POLL returned (Kafka: source-record-poll-total, -rate,
// batch-size-avg/max, poll-batch-avg/max-time-ms).
func (t *Task) SourcePolled(n int, took time.Duration) {
	if t == nil || !t.source {
		return
	}
	t.pollTime.record(millis(took))
	if n == 0 {
		return
	}
	t.polled.Add(n)
	t.batchSize.record(float64(n))
}

// SourceSubmitted counts records handed to the producer, in flight until SourceRecordsWritten
// (Kafka: source-record-active-count).
func (t *Task) SourceSubmitted(n int) {
	if t == nil || !t.source {
		return
	}
	t.sourceActive.add(int64(n))
	t.sourceActive.sample()
}

// SourceRecordsWritten counts records acknowledged by Kafka (Kafka: source-record-write-total).
func (t *Task) SourceRecordsWritten(n int) {
	if t == nil || !t.source {
		return
	}
	t.written.Add(n)
	t.sourceActive.add(-int64(n))
}

// SourceAbandoned takes records that will never be acknowledged (a failed write) out of the
// in-flight count.
func (t *Task) SourceAbandoned(n int) {
	if t != nil && t.source {
		t.sourceActive.add(-int64(n))
	}
}

// SinkRecordsRead counts records consumed from Kafka (Kafka: sink-record-read-total, -rate,
// batch-size-avg/max); they are active until their offsets are committed.
func (t *Task) SinkRecordsRead(n int) {
	if t == nil || !t.sink || n == 0 {
		return
	}
	t.read.Add(n)
	t.batchSize.record(float64(n))
	t.sinkActive.add(int64(n))
	t.sinkActive.sample()
}

// SinkPut counts one PUT: the records passed to the guest after transforms (Kafka:
// sink-record-send-total) and how long it took (put-batch-avg/max-time-ms).
func (t *Task) SinkPut(n int, took time.Duration) {
	if t == nil || !t.sink {
		return
	}
	t.sent.Add(n)
	t.putTime.record(millis(took))
}

// SinkCommitted takes n records whose offsets were committed (or dropped with their partition) out
// of sink-record-active-count.
func (t *Task) SinkCommitted(n int) {
	if t != nil && t.sink && n != 0 {
		t.sinkActive.add(-int64(n))
	}
}

// SinkPartitions sets the number of partitions assigned to the task (Kafka: partition-count).
func (t *Task) SinkPartitions(n int) {
	if t != nil && t.sink {
		t.partitions.Store(int64(n))
	}
}

// SinkLag sets the task's consumer lag: records behind the log end over its partitions.
func (t *Task) SinkLag(n int64) {
	if t != nil && t.sink {
		t.lag.Store(max(n, 0))
	}
}

// OffsetCommit counts one offset commit attempt by result and how long it took (Kafka:
// offset-commit-avg/max-time-ms, -success/failure-percentage; for a sink task also
// offset-commit-completion-total, offset-commit-skip-total, offset-commit-seq-no). A skipped commit
// is not an attempt for the percentages.
func (t *Task) OffsetCommit(res CommitResult, took time.Duration) {
	if t == nil {
		return
	}
	switch res {
	case CommitSuccess:
		t.commitTime.record(millis(took))
		t.commitOK.record(1)
		if t.sink {
			t.commitDone.Inc()
			t.commitSeq.Add(1)
		}
	case CommitFailure:
		t.commitTime.record(millis(took))
		t.commitOK.record(0)
		if t.sink {
			t.commitSeq.Add(1)
		}
	case CommitSkipped:
		if t.sink {
			t.commitSkip.Inc()
		}
	}
}

// ErrorEvent is what happened to a record or an operation, for task-error-metrics.
type ErrorEvent int

const (
	// OperationFailed: one attempt of an operation failed (Kafka: total-record-failures).
	OperationFailed ErrorEvent = iota
	// Retried: a failed operation is tried again (total-retries).
	Retried
	// RecordFailed: a record failed for good, tolerated or not (total-record-errors,
	// last-error-timestamp).
	RecordFailed
	// RecordSkipped: a failed record was skipped under errors.tolerance=all (total-records-skipped).
	RecordSkipped
	// ErrorLogged: a failure was logged under errors.log.enable (total-errors-logged).
	ErrorLogged
	// DLQProduced: a record was written to the dead letter queue (deadletterqueue-produce-requests).
	DLQProduced
	// DLQFailed: writing a record to the dead letter queue failed (deadletterqueue-produce-requests
	// and -failures).
	DLQFailed
)

// Error counts one error-handling event.
func (t *Task) Error(ev ErrorEvent) {
	if t == nil {
		return
	}
	switch ev {
	case OperationFailed:
		t.recordFailures.Inc()
	case Retried:
		t.retries.Inc()
	case RecordFailed:
		t.recordErrors.Inc()
		t.lastError.Store(now().UnixMilli())
	case RecordSkipped:
		t.recordsSkipped.Inc()
	case ErrorLogged:
		t.errorsLogged.Inc()
	case DLQProduced:
		t.dlqRequests.Inc()
	case DLQFailed:
		t.dlqRequests.Inc()
		t.dlqFailures.Inc()
	}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Unregister drops all of the task's series and removes it from the task count. Calls on the
// handle afterwards are harmless and not exported. Unregister is idempotent.
func (t *Task) Unregister() {
	if t != nil {
		unregisterHandle(&t.s, &t.s.r.tasks, t.id, t, &t.s.r.nTasks)
	}
}

func (t *Task) close() { t.s.closeCounted(&t.s.r.nTasks) }

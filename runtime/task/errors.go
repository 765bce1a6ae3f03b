package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/metrics"
)

// ErrorPolicy is a connector's error handling (Kafka Connect's errors.* settings, KIP-298).
type ErrorPolicy struct {
	TolerateAll   bool          // errors.tolerance=all: skip failed records instead of failing the task
	RetryTimeout  time.Duration // errors.retry.timeout: how long to retry a retriable failure; <0 forever
	RetryDelayMax time.Duration // errors.retry.delay.max.ms
	Log           bool          // errors.log.enable
	LogMessages   bool          // errors.log.include.messages
	// DLQ receives the records a sink task could not process (errors.deadletterqueue.topic.name);
	// nil: none.
	DLQ *DeadLetterQueue

	metrics *metrics.Task // task-error-metrics; set by NewSource and NewSink
}

// ParseErrorPolicy reads the errors.* settings of a connector config, with Kafka's defaults.
func ParseErrorPolicy(cfg map[string]string) (ErrorPolicy, error) {
	p := ErrorPolicy{RetryDelayMax: time.Minute}
	switch t := strings.ToLower(strings.TrimSpace(cfg["errors.tolerance"])); t {
	case "", "none":
	case "all":
		p.TolerateAll = true
	default:
		return p, fmt.Errorf("Invalid value %s for configuration errors.tolerance: String must be one of: none, all", cfg["errors.tolerance"])
	}
	ms := func(key string, def time.Duration) (time.Duration, error) {
		v := strings.TrimSpace(cfg[key])
		if v == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < -1 {
			return 0, fmt.Errorf("Invalid value %s for configuration %s: must be a number of milliseconds (-1 for no limit)", v, key)
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	var err error
	if p.RetryTimeout, err = ms("errors.retry.timeout", 0); err != nil {
		return p, err
	}
	if p.RetryDelayMax, err = ms("errors.retry.delay.max.ms", time.Minute); err != nil {
		return p, err
	}
	p.Log = strings.EqualFold(strings.TrimSpace(cfg["errors.log.enable"]), "true")
	p.LogMessages = strings.EqualFold(strings.TrimSpace(cfg["errors.log.include.messages"]), "true")
	return p, nil
}

// retry runs op again while it fails with a retriable error, with exponential back-off from 300 ms
// up to RetryDelayMax, for at most RetryTimeout (Kafka's RetryWithToleranceOperator).
func (p ErrorPolicy) retry(ctx context.Context, op func() error) error {
	start := time.Now()
	delay := 300 * time.Millisecond
	for {
		err := op()
		if err == nil || !retriable(err) || p.RetryTimeout == 0 {
			return err
		}
		if p.RetryTimeout > 0 && time.Since(start)+delay > p.RetryTimeout {
			return err
		}
		p.metrics.Error(metrics.OperationFailed)
		if !sleep(ctx, delay) {
			return err
		}
		p.metrics.Error(metrics.Retried)
		delay = min(delay*2, max(p.RetryDelayMax, time.Millisecond))
	}
}

// retriable reports whether err is a plugin error marked retriable.
func retriable(err error) bool {
	var ge interface{ IsRetriable() bool }
	return errors.As(err, &ge) && ge.IsRetriable()
}

// recordLevel reports whether err is the plugin rejecting its input (an error result), as opposed
// to the plugin instance failing (a trap or timeout): only the former can be narrowed down to the
// records that caused it.
func recordLevel(err error) bool {
	var ge interface{ IsRetriable() bool }
	return errors.As(err, &ge)
}

// retryIsolated runs a batch operation under the error policy, as Kafka's
// RetryWithToleranceOperator runs a converter: a retriable failure is retried for
// errors.retry.timeout, and when that runs out every element of the batch has failed (to be
// skipped with errors.tolerance=all); a rejected batch is narrowed down to the elements it rejects.
func retryIsolated[T, R any](ctx context.Context, p ErrorPolicy, in []T, call func([]T) ([]R, error)) (out []R, failed map[int]error, err error) {
	err = p.retry(ctx, func() (err error) {
		out, failed, err = isolate(in, call)
		return err
	})
	if err != nil && retriable(err) {
		failed = make(map[int]error, len(in))
		for i := range in {
			failed[i] = err
		}
		return make([]R, len(in)), failed, nil
	}
	return out, failed, err
}

// dataExceptionClass is what Kafka names a converter's or connector's data error in the DLQ
// context headers.
const dataExceptionClass = "org.apache.kafka.connect.errors.DataException"

// isolate calls a batch operation and, if the plugin rejects the batch, calls it again one element
// at a time to find the elements it rejects. Without that, one bad record would fail the whole
// batch, and with errors.tolerance=all every good record of it would be lost too.
//
// A retriable rejection is returned as it is: it says "not now", not "not these records", so the
// caller retries the batch (retryIsolated).
func isolate[T, R any](in []T, call func([]T) ([]R, error)) (out []R, failed map[int]error, err error) {
	out, err = call(in)
	if err == nil || !recordLevel(err) || retriable(err) {
		return out, nil, err
	}
	if len(in) == 1 {
		return make([]R, 1), map[int]error{0: err}, nil
	}
	out = make([]R, len(in))
	failed = map[int]error{}
	for i := range in {
		r, err := call(in[i : i+1])
		switch {
		case err == nil:
			out[i] = r[0]
		case recordLevel(err):
			failed[i] = err
		default:
			return nil, nil, err
		}
	}
	return out, failed, nil
}

// reportFailures handles records that failed: logged when errors.log.enable is set, sent to the
// dead letter queue when there is one, and skipped when errors.tolerance=all; otherwise the first
// failure fails the task, with a trace naming the stage and the record.
func (p ErrorPolicy) reportFailures(ctx context.Context, log *slog.Logger, id string, fs []failure, describe func(int) string, original func(int) *kgo.Record) error {
	for _, f := range fs {
		where := describe(f.index)
		p.metrics.Error(metrics.OperationFailed)
		p.metrics.Error(metrics.RecordFailed)
		if p.Log {
			p.metrics.Error(metrics.ErrorLogged)
			attrs := []any{"stage", f.stage, "record", where, "err", f.err}
			if p.LogMessages && original != nil {
				if r := original(f.index); r != nil {
					attrs = append(attrs, "key", string(r.Key), "value", string(r.Value))
				}
			}
			log.Error("error handling a record", attrs...)
		}
		if !p.TolerateAll {
			return fmt.Errorf("task %s failed in stage %s for record %s: %w\n"+
				"(set errors.tolerance=all to skip records that fail, and errors.deadletterqueue.topic.name to keep them)", id, f.stage, where, f.err)
		}
		p.metrics.Error(metrics.RecordSkipped)
		if p.DLQ != nil && original != nil {
			if r := original(f.index); r != nil {
				if err := p.DLQ.Report(ctx, r, f.stage, f.class, f.err); err != nil {
					p.metrics.Error(metrics.DLQFailed)
					return fmt.Errorf("task %s: writing a failed record (%s) to the dead letter queue: %w", id, where, err)
				}
				p.metrics.Error(metrics.DLQProduced)
			}
		}
	}
	return nil
}

// DeadLetterQueue writes the records a sink task could not process to a topic, as Kafka Connect's
// DeadLetterQueueReporter: the original key, value and headers, plus __connect.errors.* headers
// describing the failure when context headers are enabled.
type DeadLetterQueue struct {
	Topic          string
	Producer       *kgo.Client
	ContextHeaders bool   // errors.deadletterqueue.context.headers.enable
	Connector      string // for the context headers
	Task           int
}

// Report writes one failed record and waits for the broker's acknowledgement, so a record is never
// both skipped and missing from the queue.
func (d *DeadLetterQueue) Report(ctx context.Context, orig *kgo.Record, stage, class string, cause error) error {
	r := &kgo.Record{Topic: d.Topic, Key: orig.Key, Value: orig.Value, Headers: append([]kgo.RecordHeader{}, orig.Headers...)}
	if d.ContextHeaders {
		if class == "" {
			class = dataExceptionClass
		}
		h := func(k, v string) {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: "__connect.errors." + k, Value: []byte(v)})
		}
		h("topic", orig.Topic)
		h("partition", strconv.Itoa(int(orig.Partition)))
		h("offset", strconv.FormatInt(orig.Offset, 10))
		h("connector.name", d.Connector)
		h("task.id", strconv.Itoa(d.Task))
		h("stage", stage)
		h("class.name", stageClass(stage))
		h("exception.class.name", class)
		h("exception.message", cause.Error())
		h("exception.stacktrace", fmt.Sprintf("%s: %v", class, cause))
	}
	return d.Producer.ProduceSync(ctx, r).FirstErr()
}

// stageClass names the Kafka Connect component of a stage, for __connect.errors.class.name.
func stageClass(stage string) string {
	switch stage {
	case "KEY_CONVERTER", "VALUE_CONVERTER":
		return "org.apache.kafka.connect.storage.Converter"
	case "TRANSFORMATION":
		return "org.apache.kafka.connect.transforms.Transformation"
	case "TASK_PUT":
		return "org.apache.kafka.connect.sink.SinkTask"
	}
	return ""
}

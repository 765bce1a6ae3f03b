package task

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultFetchRetryTimeout is how long a sink keeps polling through retriable fetch errors on a
// partition (a broker that is down, a group it cannot join) before the task fails.
const DefaultFetchRetryTimeout = 5 * time.Minute

// fetchErrorQuiet is how long a partition must go without a retriable error for the next one to
// start a new run: errors further apart than this are separate hiccups, not one outage.
const fetchErrorQuiet = 30 * time.Second

// fetchErrorKind is what a sink does with an error a poll returns.
type fetchErrorKind int

const (
	fetchIgnore    fetchErrorKind = iota // the poll's own deadline: nothing went wrong
	fetchLog                             // the client recovered by itself (data loss: it reset the offset)
	fetchRetriable                       // may clear up: retried for a bounded time
	fetchFatal                           // will not clear up: the task fails
)

// classifyFetchError sorts the errors kgo returns from a poll (see kgo.Fetches.Errors). Only
// errors that can clear up by themselves are retried: a sink that cannot make progress fails
// with a trace instead of staying RUNNING while it consumes nothing.
func classifyFetchError(err error) fetchErrorKind {
	var (
		ke   *kerr.Error
		loss *kgo.ErrDataLoss
		gs   *kgo.ErrGroupSession
		ne   net.Error
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fetchIgnore
	case errors.As(err, &loss):
		return fetchLog
	case errors.Is(err, kgo.ErrClientClosed):
		return fetchFatal
	case errors.Is(err, kerr.UnknownTopicID), errors.Is(err, kerr.InconsistentTopicID):
		// Retriable for Kafka, but kgo reports it only once the topic answers under another ID:
		// it was deleted and created again under the sink, and the client never follows it.
		return fetchFatal
	case errors.Is(err, kerr.CorruptMessage):
		return fetchFatal
	case errors.As(err, &gs), errors.As(err, &ne):
		// Before the error codes: a group session error wraps the coordinator's answer, which is
		// not retriable for a request (UNKNOWN_MEMBER_ID from a broker that restarted and forgot
		// the group) although the client recovers from it by joining again.
		return fetchRetriable
	case errors.As(err, &ke):
		if ke.Retriable {
			return fetchRetriable
		}
		return fetchFatal
	}
	// Untyped errors are batch parse failures (a corrupt or unsupported batch, such as an unknown
	// magic byte) and failed validations that kgo does not expect to clear up.
	return fetchFatal
}

// fetchFailures keeps, for each partition, the run of retriable fetch errors it is in, and
// decides when a run has gone on too long.
type fetchFailures struct {
	retryFor time.Duration
	runs     map[topicPartition]fetchRun
}

type topicPartition struct {
	topic     string
	partition int32
}

type fetchRun struct{ first, last time.Time }

func newFetchFailures(retryFor time.Duration) *fetchFailures {
	if retryFor <= 0 {
		retryFor = DefaultFetchRetryTimeout
	}
	return &fetchFailures{retryFor: retryFor, runs: map[topicPartition]fetchRun{}}
}

// failed records a retriable error on a partition at now, and returns an error if the partition
// has been failing for retryFor or longer.
func (f *fetchFailures) failed(topic string, partition int32, err error, now time.Time) error {
	tp := topicPartition{topic, partition}
	run, ok := f.runs[tp]
	if !ok || now.Sub(run.last) > fetchErrorQuiet {
		run.first = now
	}
	run.last = now
	f.runs[tp] = run
	if now.Sub(run.first) >= f.retryFor {
		return fmt.Errorf("%s: failing for %v: %w", describePartition(topic, partition), now.Sub(run.first).Round(time.Second), err)
	}
	return nil
}

// progressed ends the runs of the partitions records came from. Records from any partition also
// end a run of errors that belong to no partition (the group session, reported on topic "").
func (f *fetchFailures) progressed(recs []*kgo.Record) {
	if len(f.runs) == 0 || len(recs) == 0 {
		return
	}
	delete(f.runs, topicPartition{})
	for _, r := range recs {
		delete(f.runs, topicPartition{r.Topic, r.Partition})
	}
}

func describePartition(topic string, partition int32) string {
	if topic == "" {
		return "the consumer group"
	}
	return fmt.Sprintf("%s-%d", topic, partition)
}

// fatalFetchError explains a fetch error that fails the task.
func fatalFetchError(topic string, partition int32, err error) error {
	hint := ""
	switch {
	case errors.Is(err, kerr.UnknownTopicID), errors.Is(err, kerr.InconsistentTopicID):
		hint = " (the topic was deleted and created again while the task consumed it; restart the task to consume the new topic)"
	case errors.Is(err, kgo.ErrClientClosed):
		return err
	}
	return fmt.Errorf("%s: %w%s", describePartition(topic, partition), err, hint)
}

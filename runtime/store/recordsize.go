package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// A record that is larger than the topic's max.message.bytes is refused by the broker with
// MESSAGE_TOO_LARGE. The logs check every record against that limit before they send anything, so
// that a write of several records (a connector's config and target state, a set of task configs)
// is refused whole, with both sizes in the error, rather than failing halfway.

// DefaultMaxMessageBytes is Kafka's default max.message.bytes (message.max.bytes on the broker),
// used when the broker does not say.
const DefaultMaxMessageBytes = 1048588

// recordOverhead is what one record adds to its value and key in a batch of its own, as the broker
// measures it against max.message.bytes: the v2 record batch header (61 bytes) and the record's
// own fields at their widest (length, attributes, timestamp and offset deltas, key and value
// lengths, header count).
const recordOverhead = 61 + 5 + 1 + 10 + 5 + 5 + 5 + 1

// recordSize is the number of bytes rec takes, at most, in a batch of its own.
func recordSize(rec Record) int { return len(rec.Key) + len(rec.Value) + recordOverhead }

// RecordTooLargeError is a write refused because a record does not fit in the internal topic.
type RecordTooLargeError struct {
	Topic string
	Key   []byte
	Size  int // the record's size in bytes, as the broker measures it (at most)
	Limit int // the largest record the topic holds
	// Setting names where Limit comes from, e.g. "max.message.bytes of topic connect-configs".
	Setting string
	// Err is the broker's answer, when the broker refused the record rather than the log.
	Err error
}

func (e *RecordTooLargeError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("writing key %s to internal topic %q: the broker refused the record of %d bytes as too large (%s is %d bytes): %v",
			shortKey(e.Key), e.Topic, e.Size, e.Setting, e.Limit, e.Err)
	}
	return fmt.Sprintf("writing key %s to internal topic %q: the record would be %d bytes, more than the %d bytes the topic holds (%s)",
		shortKey(e.Key), e.Topic, e.Size, e.Limit, e.Setting)
}

func (e *RecordTooLargeError) Unwrap() error { return e.Err }

// shortKey quotes a record key for messages, cut to its first bytes: a key can be as long as a
// record.
func shortKey(key []byte) string {
	const show = 80
	if len(key) <= show {
		return strconv.Quote(string(key))
	}
	return strconv.Quote(string(key[:show])) + "... (" + strconv.Itoa(len(key)) + " bytes)"
}

// recordLimit returns the largest record the topic holds and where that figure comes from: the
// topic's max.message.bytes, else the broker's message.max.bytes, else Kafka's default.
func recordLimit(ctx context.Context, adm *kadm.Client, topic string) (limit int, setting string, err error) {
	var errs []error
	if rcs, err := adm.DescribeTopicConfigs(ctx, topic); err != nil {
		errs = append(errs, err)
	} else if n, ok, err := intConfig(rcs, "max.message.bytes"); ok {
		return n, "max.message.bytes of topic " + topic, nil
	} else if err != nil {
		errs = append(errs, err)
	}
	if rcs, err := adm.DescribeBrokerConfigs(ctx); err != nil {
		errs = append(errs, err)
	} else if n, ok, err := intConfig(rcs, "message.max.bytes"); ok {
		return n, "message.max.bytes of the broker", nil
	} else if err != nil {
		errs = append(errs, err)
	}
	return DefaultMaxMessageBytes, "Kafka's default max.message.bytes", errors.Join(errs...)
}

// intConfig finds a positive integer config in a DescribeConfigs answer.
func intConfig(rcs kadm.ResourceConfigs, key string) (int, bool, error) {
	for _, rc := range rcs {
		if rc.Err != nil {
			return 0, false, fmt.Errorf("describing %s: %w", rc.Name, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key != key || c.Value == nil {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(*c.Value))
			if err != nil || n <= 0 {
				return 0, false, fmt.Errorf("%s is %q, want a positive integer", key, *c.Value)
			}
			return n, true, nil
		}
	}
	return 0, false, nil
}

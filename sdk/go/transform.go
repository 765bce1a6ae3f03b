package sdk

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Record is a record as a Transformation or Predicate sees it: a source record on its way to Kafka
// or a sink record on its way to the sink task (sdk/ABI.md §5.2).
//
// Partition is -1 when a source record leaves the partition to the producer; Offset is the Kafka
// offset of a sink record and -1 for a source record; Timestamp is in ms since the epoch, -1 for
// none. Offset, SourcePartition and SourceOffset are read-only: the host keeps them from the input
// whatever a transformation does.
//
// The byte slices of a record passed to Apply or Test alias the SDK's input buffer and are valid
// only during the call. Treat them, and the Headers slice, as read-only: to change a value, a
// header list or a topic, assign a new one (the SDK tells the host that a record is unchanged when
// Apply returns it with the same topic, partition, timestamp, headers slice and key and value slices).
type Record = wire.Record

// Transformation is a single message transform, Kafka Connect's Transformation: it changes, keeps
// or drops one record at a time. The SDK batches: one TRANSFORM call applies it to a whole batch.
type Transformation interface {
	// Configure receives the transformation's settings (the transforms.<alias>. prefix removed,
	// defaults filled in and checked against the ConfigDefs).
	Configure(cfg Config) error
	// Apply transforms one record. It returns r (changed in place or not) or a new record to keep,
	// nil to drop the record, or an error to fail this record alone: the host's error handling
	// (errors.tolerance, the dead letter queue) decides what happens to it, and the rest of the batch
	// goes on. An error marked Retriable fails the whole call as retriable instead. A panic fails the
	// record like an error.
	Apply(r *Record) (*Record, error)
}

// Predicate decides whether a transformation applies to a record (Kafka Connect's Predicate).
type Predicate interface {
	Configure(cfg Config) error
	// Test reports whether r matches. An error fails this record alone, as in Transformation.Apply.
	Test(r *Record) (bool, error)
}

// RegisterTransformation registers a transformation; newT is called once per transformation the
// host opens (once per transforms.<alias> of a task). Register the $Key and $Value variants of a
// transformation as two plugins. Call it from an init function.
func RegisterTransformation(info Info, newT func() Transformation) {
	defaultDispatcher.register(&plugin{info: info, kind: wire.KindTransformation, newTransformation: newT})
}

// RegisterPredicate registers a predicate; newP is called once per predicate the host opens. Call
// it from an init function.
func RegisterPredicate(info Info, newP func() Predicate) {
	defaultDispatcher.register(&plugin{info: info, kind: wire.KindPredicate, newPredicate: newP})
}

// RecordError is an error with the Java exception class the host reports for the failed record
// (the dead letter queue's __connect.errors.exception.class.name header). An error returned by
// Apply or Test that is not a RecordError is reported as a DataException, as Kafka's own
// transformations throw.
type RecordError struct {
	Class string
	Err   error
}

func (e *RecordError) Error() string { return e.Err.Error() }
func (e *RecordError) Unwrap() error { return e.Err }

// DataError returns a DataException-class error with a formatted message.
func DataError(format string, args ...any) error {
	return &RecordError{Class: wire.DataException, Err: fmt.Errorf(format, args...)}
}

// failureOf returns the class and message the host gets for a record error.
func failureOf(err error) (class, msg string) {
	class = wire.DataException
	var re *RecordError
	if errors.As(err, &re) && re.Class != "" {
		class = re.Class
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		class = "org.apache.kafka.connect.errors.ConnectException"
	}
	msg = err.Error()
	if msg == "" {
		msg = errEmpty.Error()
	}
	return class, msg
}

type transformObject struct {
	p   *plugin
	t   Transformation
	rs  []wire.Record
	out []byte
}

type predicateObject struct {
	p        *plugin
	pred     Predicate
	rs       []wire.Record
	statuses []byte
	failures []wire.RecordFailure
	out      []byte
}

func (o *transformObject) plugin() *plugin { return o.p }
func (o *predicateObject) plugin() *plugin { return o.p }
func (o *transformObject) close() error    { return closeIfCloser(o.t) }
func (o *predicateObject) close() error    { return closeIfCloser(o.pred) }

func closeIfCloser(v any) error {
	if c, ok := v.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// decodeInto decodes a record batch into rs, reusing its storage. Byte fields alias b.
func decodeInto(rs []wire.Record, b []byte) ([]wire.Record, error) {
	d := wire.NewDecoder(b)
	n := int(d.U32("record batch count"))
	if d.Err() == nil && n > d.Remaining()/34 { // 34: the smallest record
		return rs[:0], fmt.Errorf("wire: record batch count %d is larger than the %d bytes left can hold", n, d.Remaining())
	}
	rs = resize(rs[:0], n)
	for i := range rs {
		d.Record(&rs[i])
	}
	if d.Err() == nil && d.Remaining() != 0 {
		return rs[:0], fmt.Errorf("wire: %d unexpected bytes after the record batch", d.Remaining())
	}
	return rs, d.Err()
}

// transform applies the transformation to a batch (sdk/ABI.md §5.6).
func (o *transformObject) transform(in []byte) ([]byte, error) {
	var err error
	if o.rs, err = decodeInto(o.rs, in); err != nil {
		return nil, err
	}
	defer clear(o.rs) // drop references to the input buffer
	out := wire.AppendU32(o.out[:0], 0)
	entries := 0
	for i := range o.rs {
		r := &o.rs[i]
		orig := *r
		res, err := o.apply(r)
		switch {
		case err != nil && IsRetriable(err):
			return nil, fmt.Errorf("record %d: %w", i, err)
		case err != nil:
			class, msg := failureOf(err)
			out = wire.AppendTransformFailed(out, i, class, msg)
		case res == nil:
			continue // dropped
		case res == r && sameRecord(&orig, r):
			out = wire.AppendTransformUnchanged(out, i)
		default:
			out = wire.AppendTransformRecord(out, i, res)
		}
		entries++
	}
	putU32(out, uint32(entries))
	o.out = out
	return out, nil
}

// apply calls Apply, turning a panic into an error for this record.
func (o *transformObject) apply(r *Record) (res *Record, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, newPanicError(o.p.info.Name, "TRANSFORM", v)
		}
	}()
	return o.t.Apply(r)
}

// test evaluates the predicate on a batch (sdk/ABI.md §5.7).
func (o *predicateObject) test(in []byte) ([]byte, error) {
	var err error
	if o.rs, err = decodeInto(o.rs, in); err != nil {
		return nil, err
	}
	defer clear(o.rs)
	o.statuses = resize(o.statuses[:0], len(o.rs))
	o.failures = o.failures[:0]
	for i := range o.rs {
		ok, err := o.testOne(&o.rs[i])
		switch {
		case err != nil && IsRetriable(err):
			return nil, fmt.Errorf("record %d: %w", i, err)
		case err != nil:
			class, msg := failureOf(err)
			o.statuses[i] = wire.TestFailed
			o.failures = append(o.failures, wire.RecordFailure{Input: i, Class: class, Message: msg})
		case ok:
			o.statuses[i] = wire.TestMatch
		default:
			o.statuses[i] = wire.TestNoMatch
		}
	}
	o.out = wire.AppendTestResult(o.out[:0], o.statuses, o.failures)
	return o.out, nil
}

func (o *predicateObject) testOne(r *Record) (ok bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			ok, err = false, newPanicError(o.p.info.Name, "TEST", v)
		}
	}()
	return o.pred.Test(r)
}

func putU32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// sameRecord reports whether b is a (shallow) copy of a: same topic, partition, timestamp, and the
// same key, value and headers slices.
func sameRecord(a, b *Record) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.Timestamp == b.Timestamp &&
		sameData(a.Key, b.Key) && sameData(a.Value, b.Value) && sameHeaders(a.Headers, b.Headers)
}

func sameData(a, b Data) bool {
	return a.Tag == b.Tag && identical(a.Bytes, b.Bytes) && identical(a.Schema, b.Schema)
}

func identical[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

func sameHeaders(a, b []Header) bool { return identical(a, b) }

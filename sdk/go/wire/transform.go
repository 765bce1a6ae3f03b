package wire

import (
	"fmt"
)

// Operations of transformations and predicates (sdk/ABI.md §4, §5.6, §5.7).
const (
	OpTransform Op = 11
	OpTest      Op = 12
)

// Kinds and roles of transformations and predicates (sdk/ABI.md §3, §4).
const (
	KindTransformation Kind = "transformation"
	KindPredicate      Kind = "predicate"

	RoleTransformation Role = "transformation"
	RolePredicate      Role = "predicate"
)

// TransformStatus is the status byte of one entry of a TRANSFORM result (sdk/ABI.md §5.6).
type TransformStatus uint8

const (
	// StatusRecord: a transformed record follows.
	StatusRecord TransformStatus = 0
	// StatusFailed: the transformation failed on this input record; an error class and message follow.
	StatusFailed TransformStatus = 1
	// StatusUnchanged: the input record passes through unchanged; nothing follows.
	StatusUnchanged TransformStatus = 2
	// StatusConverted (TRANSFORM_CONVERT only, §5.9): a record whose key and value the task's
	// converters have serialised follows.
	StatusConverted TransformStatus = 3
)

// DataException is the Java class Kafka's transformations throw for bad data; the default error class
// of a record failure.
const DataException = "org.apache.kafka.connect.errors.DataException"

// RecordFailure says that a transformation or predicate failed on one input record, without failing
// the rest of the batch. The host hands it to its error handling (errors.tolerance, the dead letter
// queue).
type RecordFailure struct {
	// Input is the index of the failed record in the input batch.
	Input int
	// Class names the error's kind, as a Java exception class name for Kafka's DLQ context header
	// __connect.errors.exception.class.name, e.g. org.apache.kafka.connect.errors.DataException. May be
	// empty.
	Class string
	// Message is the error message.
	Message string
}

func (f RecordFailure) Error() string {
	if f.Class == "" {
		return fmt.Sprintf("record %d: %s", f.Input, f.Message)
	}
	return fmt.Sprintf("record %d: %s: %s", f.Input, f.Class, f.Message)
}

// TransformedRecord is one output record of a TRANSFORM call.
type TransformedRecord struct {
	// Input is the index of the input record this record came from. Outputs are in input order; an
	// input without an output was dropped (filtered).
	Input int
	// Unchanged reports that the guest passed the input through as it was (StatusUnchanged); Record
	// is then the input record itself.
	Unchanged bool
	// Record is the transformed record. Its Offset, SourcePartition and SourceOffset are those of the
	// input record: a transformation cannot change where a record came from.
	Record Record
}

// AppendTransformRecord appends a StatusRecord entry. The record's Offset, SourcePartition and
// SourceOffset are not sent (the host takes them from the input): they are written as -1 and empty.
func AppendTransformRecord(dst []byte, input int, r *Record) []byte {
	dst = AppendU32(dst, uint32(input))
	dst = append(dst, byte(StatusRecord))
	dst = appendRecordFields(dst, r, -1)
	dst = AppendU32(dst, 0)  // source partition
	return AppendU32(dst, 0) // source offset
}

// AppendTransformUnchanged appends a StatusUnchanged entry.
func AppendTransformUnchanged(dst []byte, input int) []byte {
	dst = AppendU32(dst, uint32(input))
	return append(dst, byte(StatusUnchanged))
}

// AppendTransformFailed appends a StatusFailed entry.
func AppendTransformFailed(dst []byte, input int, class, message string) []byte {
	dst = AppendU32(dst, uint32(input))
	dst = append(dst, byte(StatusFailed))
	dst = AppendString(dst, class)
	return AppendString(dst, message)
}

// DecodeTransformResult decodes the result of TRANSFORM for the batch inputs (sdk/ABI.md §5.6). It
// checks that entries name existing inputs in non-decreasing order and that a failed or unchanged
// input has exactly one entry; it copies Offset, SourcePartition and SourceOffset from the inputs
// into the outputs. Byte fields alias b (or the inputs, for unchanged records).
func DecodeTransformResult(b []byte, inputs []Record) ([]TransformedRecord, []RecordFailure, error) {
	var failed []RecordFailure
	e := transformEntries{keepUnchanged: true}
	err := e.decode(b, inputs, "transform result", true, func(d *Decoder, _, in int) error {
		failed = append(failed, RecordFailure{Input: in, Class: d.String("error class"), Message: d.String("error message")})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return e.transformed(), failed, nil
}

// transformEntries are the output records of a TRANSFORM or TRANSFORM_CHAIN result as parallel
// slices, which a caller decoding batch after batch reuses: records are decoded in place, not
// built and copied (a Record is 224 bytes, most of them pointers the GC follows).
type transformEntries struct {
	recs      []Record
	inputs    []int  // recs[i] came from the input inputs[i]
	unchanged []bool // with keepUnchanged: whether recs[i] is its input passed through
	// keepUnchanged makes decode fill unchanged, which only TransformedRecord reports.
	keepUnchanged bool
	// converted makes decode take CONVERTED entries, and only those, into conv instead of recs
	// (TRANSFORM_CONVERT).
	converted bool
	conv      []ConvertedRecord
}

// transformed returns the entries as TransformedRecords (nil for a result without entries).
func (e *transformEntries) transformed() []TransformedRecord {
	if e.recs == nil {
		return nil
	}
	out := make([]TransformedRecord, len(e.recs))
	for i := range out {
		out[i] = TransformedRecord{Input: e.inputs[i], Unchanged: e.unchanged[i], Record: e.recs[i]}
	}
	return out
}

// decode decodes the entries of a TRANSFORM or TRANSFORM_CHAIN result (sdk/ABI.md §5.6, §5.8)
// into e's slices, reusing their backing arrays; the results differ only in what a failure carries
// and in whether a failed input may have other entries (failedAlone). It checks that entries name
// existing inputs in non-decreasing order and that an unchanged input (and, with failedAlone, a
// failed one) has exactly one entry; it copies Offset, SourcePartition and SourceOffset from the
// inputs into the outputs. failure decodes what follows a failed entry's status.
func (e *transformEntries) decode(b []byte, inputs []Record, what string, failedAlone bool, failure func(d *Decoder, entry, input int) error) error {
	d := NewDecoder(b)
	n := d.count(what, 5)
	e.inputs = resize(e.inputs, n)
	if e.converted {
		e.conv = resize(e.conv, n)
	} else {
		e.recs = resize(e.recs, n)
	}
	if e.keepUnchanged {
		e.unchanged = resize(e.unchanged, n)
	}
	alone := "unchanged"
	if failedAlone {
		alone = "failed or unchanged"
	}
	last, lastAlone, k := -1, false, 0
	// The names of the fields, for errors, made once rather than once per entry.
	inputWhat, statusWhat := what+" input", what+" status"
	for i := 0; i < n && d.Err() == nil; i++ {
		in, st, ok := d.entryHead()
		if !ok {
			in, st = int(d.U32(inputWhat)), TransformStatus(d.U8(statusWhat))
		}
		if d.Err() != nil {
			break
		}
		if in >= len(inputs) {
			return fmt.Errorf("wire: %s entry %d names input %d of a batch of %d", what, i, in, len(inputs))
		}
		if in < last {
			return fmt.Errorf("wire: %s entry %d names input %d after input %d: entries must follow the input order", what, i, in, last)
		}
		isAlone := st == StatusUnchanged || failedAlone && st == StatusFailed
		if in == last && (isAlone || lastAlone) {
			return fmt.Errorf("wire: %s entry %d: input %d has more than one entry and one of them is %s", what, i, in, alone)
		}
		last, lastAlone = in, isAlone
		if e.converted != (st == StatusConverted) && st != StatusFailed {
			return fmt.Errorf("wire: %s entry %d has status %d, which this result cannot have", what, i, st)
		}
		switch st {
		case StatusConverted:
			d.Converted(&e.conv[k])
		case StatusRecord:
			r := &e.recs[k]
			d.Record(r)
			src := &inputs[in]
			r.Offset, r.SourcePartition, r.SourceOffset = src.Offset, src.SourcePartition, src.SourceOffset
		case StatusUnchanged:
			e.recs[k] = inputs[in]
		case StatusFailed:
			if err := failure(d, i, in); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("wire: %s entry %d has unknown status %d", what, i, st)
		}
		e.inputs[k] = in
		if e.keepUnchanged {
			e.unchanged[k] = st == StatusUnchanged
		}
		k++
	}
	if err := d.finish(what); err != nil {
		return err
	}
	// The failed entries' slots stay unused; clear them, so that a reused array does not keep
	// the records of an earlier batch reachable.
	e.inputs = e.inputs[:k]
	if e.converted {
		clear(e.conv[k:])
		e.conv = e.conv[:k]
	} else {
		clear(e.recs[k:])
		e.recs = e.recs[:k]
	}
	if e.keepUnchanged {
		e.unchanged = e.unchanged[:k]
	}
	return nil
}

// resize returns s with length n, reusing its backing array when it is large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Test result bytes (sdk/ABI.md §5.7).
const (
	TestNoMatch byte = 0
	TestMatch   byte = 1
	TestFailed  byte = 2
)

// AppendTestResult appends the result of TEST: one status byte per input record (TestNoMatch,
// TestMatch or TestFailed), then the class and message of each failed record in order. failures
// must have one element per TestFailed byte, in order; their Input fields are not sent.
func AppendTestResult(dst []byte, statuses []byte, failures []RecordFailure) []byte {
	dst = AppendU32(dst, uint32(len(statuses)))
	dst = append(dst, statuses...)
	for _, f := range failures {
		dst = AppendString(dst, f.Class)
		dst = AppendString(dst, f.Message)
	}
	return dst
}

// DecodeTestResult decodes the result of TEST for a batch of n records: whether each matched, and
// the records the predicate failed on (they do not match).
func DecodeTestResult(b []byte, n int) ([]bool, []RecordFailure, error) {
	d := NewDecoder(b)
	count := int(d.U32("test result count"))
	if d.Err() == nil && count != n {
		return nil, nil, fmt.Errorf("wire: test result has %d entries for %d records", count, n)
	}
	st := d.take("test result", whole, n)
	if d.Err() != nil {
		return nil, nil, d.Err()
	}
	matches := make([]bool, n)
	var failed []RecordFailure
	for i, s := range st {
		switch s {
		case TestNoMatch:
		case TestMatch:
			matches[i] = true
		case TestFailed:
			failed = append(failed, RecordFailure{Input: i, Class: d.String("error class"), Message: d.String("error message")})
		default:
			return nil, nil, fmt.Errorf("wire: test result for record %d is %d, want 0, 1 or 2", i, s)
		}
	}
	if err := d.finish("test result"); err != nil {
		return nil, nil, err
	}
	return matches, failed, nil
}

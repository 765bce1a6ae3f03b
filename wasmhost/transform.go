package wasmhost

import (
	"context"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Transform applies a transformation to a batch of records (TRANSFORM, sdk/ABI.md §5.6). It returns
// the output records in input order, each naming the input it came from (an input with no output
// was dropped), and the records the transformation failed on, for the caller's error handling
// (errors.tolerance, the dead letter queue). Output records keep the Offset, SourcePartition and
// SourceOffset of their input. An error means the whole call failed: a *GuestError (retriable or
// not), a *TrapError, or a malformed result.
//
// The outputs are decoded from a private copy of the result; unchanged records are the input
// records themselves.
func (o *Object) Transform(ctx context.Context, records []wire.Record) ([]wire.TransformedRecord, []wire.RecordFailure, error) {
	if len(records) == 0 {
		return nil, nil, nil
	}
	out, err := o.do(ctx, wire.OpTransform, wire.KindTransformation, wire.RoleTransformation,
		func(b []byte) []byte { return wire.AppendRecords(b, records) })
	if err != nil {
		return nil, nil, err
	}
	recs, failed, err := wire.DecodeTransformResult(out, records)
	if err != nil {
		return nil, nil, malformed(o.in, o.plugin.Name, wire.OpTransform, err)
	}
	return recs, failed, nil
}

// Test evaluates a predicate on a batch of records (TEST, sdk/ABI.md §5.7): whether each record
// matches, and the records the predicate failed on (they do not match). An error means the whole
// call failed, as for Transform.
func (o *Object) Test(ctx context.Context, records []wire.Record) ([]bool, []wire.RecordFailure, error) {
	if len(records) == 0 {
		return nil, nil, nil
	}
	out, err := o.do(ctx, wire.OpTest, wire.KindPredicate, wire.RolePredicate,
		func(b []byte) []byte { return wire.AppendRecords(b, records) })
	if err != nil {
		return nil, nil, err
	}
	matches, failed, err := wire.DecodeTestResult(out, len(records))
	if err != nil {
		return nil, nil, malformed(o.in, o.plugin.Name, wire.OpTest, err)
	}
	return matches, failed, nil
}

package wire

import (
	"fmt"
	"slices"
)

// OpTransformChain runs a whole transform chain in one call (sdk/ABI.md §4, §5.8), for modules
// whose descriptor says "transform_chain": true.
const OpTransformChain Op = 13

// Chain stages: which part of a chain step a failure is about (sdk/ABI.md §5.8).
const (
	StageTransformation byte = 0
	StagePredicate      byte = 1
)

// ChainStep is one step of a TRANSFORM_CHAIN request: the handle of a transformation and of the
// predicate that selects its records (0: every record), and whether the predicate is negated.
type ChainStep struct {
	Transform int32
	Predicate int32
	Negate    bool
}

// ChainFailure is a record a chain failed on: the step, and whether its predicate or its
// transformation failed.
type ChainFailure struct {
	RecordFailure
	Step      int
	Predicate bool
}

// AppendChainRequest appends the input of TRANSFORM_CHAIN: the steps, then the record batch.
func AppendChainRequest(dst []byte, steps []ChainStep, records []Record) []byte {
	dst = AppendU32(dst, uint32(len(steps)))
	for _, s := range steps {
		dst = AppendU32(dst, uint32(s.Transform))
		dst = AppendU32(dst, uint32(s.Predicate))
		if s.Negate {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	}
	return AppendRecords(dst, records)
}

// DecodeChainResult decodes the result of TRANSFORM_CHAIN for the batch inputs of a chain of
// steps steps (sdk/ABI.md §5.8): as DecodeTransformResult, except that a failure names its step and
// stage, and that an input split into several records may have failures among its records.
func DecodeChainResult(b []byte, inputs []Record, steps int) ([]TransformedRecord, []ChainFailure, error) {
	d := NewDecoder(b)
	n := d.count("chain result", 5)
	var out []TransformedRecord
	var failed []ChainFailure
	if n > 0 {
		out = make([]TransformedRecord, 0, n)
	}
	last, lastUnchanged := -1, false
	for i := 0; i < n && d.Err() == nil; i++ {
		in := int(d.U32("chain result input"))
		st := TransformStatus(d.U8("chain result status"))
		if d.Err() != nil {
			break
		}
		if in >= len(inputs) {
			return nil, nil, fmt.Errorf("wire: chain result entry %d names input %d of a batch of %d", i, in, len(inputs))
		}
		if in < last {
			return nil, nil, fmt.Errorf("wire: chain result entry %d names input %d after input %d: entries must follow the input order", i, in, last)
		}
		if in == last && (st == StatusUnchanged || lastUnchanged) {
			return nil, nil, fmt.Errorf("wire: chain result entry %d: input %d has more than one entry and one of them is unchanged", i, in)
		}
		last, lastUnchanged = in, st == StatusUnchanged
		switch st {
		case StatusRecord:
			var r Record
			d.Record(&r)
			src := &inputs[in]
			r.Offset, r.SourcePartition, r.SourceOffset = src.Offset, src.SourcePartition, src.SourceOffset
			out = append(out, TransformedRecord{Input: in, Record: r})
		case StatusUnchanged:
			out = append(out, TransformedRecord{Input: in, Unchanged: true, Record: inputs[in]})
		case StatusFailed:
			step := int(d.U32("chain failure step"))
			stage := d.U8("chain failure stage")
			f := ChainFailure{Step: step, Predicate: stage == StagePredicate,
				RecordFailure: RecordFailure{Input: in, Class: d.String("error class"), Message: d.String("error message")}}
			if d.Err() == nil && (step >= steps || stage > StagePredicate) {
				return nil, nil, fmt.Errorf("wire: chain result entry %d names stage %d of step %d of a chain of %d", i, stage, step, steps)
			}
			failed = append(failed, f)
		default:
			return nil, nil, fmt.Errorf("wire: chain result entry %d has unknown status %d", i, st)
		}
	}
	if err := d.finish("chain result"); err != nil {
		return nil, nil, err
	}
	return slices.Clip(out), failed, nil
}

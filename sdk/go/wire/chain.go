package wire

import (
	"fmt"
)

// OpTransformChain runs a whole transform chain in one call (sdk/ABI.md §4, §5.8), for modules
// whose descriptor says "transform_chain": true.
const OpTransformChain Op = 13

// OpTransformConvert runs a source task's transform chain and then its key and value converters in
// one call (sdk/ABI.md §5.9), for modules whose descriptor says "transform_convert": true.
const OpTransformConvert Op = 14

// Chain stages: which part of a chain step a failure is about (sdk/ABI.md §5.8), or, in a
// TRANSFORM_CONVERT result, which converter failed (§5.9).
const (
	StageTransformation byte = 0
	StagePredicate      byte = 1
	StageKeyConverter   byte = 2
	StageValueConverter byte = 3
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
	Stage     byte // StageTransformation, StagePredicate, or a converter's (TRANSFORM_CONVERT)
}

// AppendChainRequest appends the input of TRANSFORM_CHAIN: the steps, then the record batch.
func AppendChainRequest(dst []byte, steps []ChainStep, records []Record) []byte {
	return AppendRecords(AppendChainSteps(dst, steps), records)
}

// AppendChainSteps appends the steps of a TRANSFORM_CHAIN input, which the record batch (§5.2)
// follows: a caller that has the batch encoded already (a POLL result) appends it as it is.
func AppendChainSteps(dst []byte, steps []ChainStep) []byte {
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
	return dst
}

// DecodeChainResult decodes the result of TRANSFORM_CHAIN for the batch inputs of a chain of
// steps steps (sdk/ABI.md §5.8): as DecodeTransformResult, except that a failure names its step and
// stage, and that an input split into several records may have failures among its records.
func DecodeChainResult(b []byte, inputs []Record, steps int) ([]TransformedRecord, []ChainFailure, error) {
	r := ChainResult{transformEntries: transformEntries{keepUnchanged: true}}
	if err := r.Decode(b, inputs, steps); err != nil {
		return nil, nil, err
	}
	return r.transformed(), r.Failed, nil
}

// AppendConvertSteps appends the input of TRANSFORM_CONVERT up to its record batch: the handles of
// the key and value converters, then the chain's steps as AppendChainSteps writes them.
func AppendConvertSteps(dst []byte, key, value int32, steps []ChainStep) []byte {
	dst = AppendU32(AppendU32(dst, uint32(key)), uint32(value))
	return AppendChainSteps(dst, steps)
}

// ChainResult is a decoded TRANSFORM_CHAIN result in slices that are reused from batch to batch:
// a caller that keeps one per batch in flight decodes without allocating once they have grown.
type ChainResult struct {
	transformEntries
	Failed []ChainFailure
}

// Records are the output records, in input order. Their byte fields alias the decoded buffer or
// the inputs.
func (r *ChainResult) Records() []Record { return r.recs }

// Inputs are, for each output record, the index of the input it came from.
func (r *ChainResult) Inputs() []int { return r.inputs }

// Decode decodes b, the result of TRANSFORM_CHAIN for the batch inputs of a chain of steps steps,
// into r, reusing r's slices, as DecodeChainResult does. On an error r holds nothing usable.
func (r *ChainResult) Decode(b []byte, inputs []Record, steps int) error {
	clear(r.Failed)
	r.Failed = r.Failed[:0]
	r.converted = false
	return r.decode(b, inputs, "chain result", false, r.failure(steps))
}

// ConvertedRecord is a record of a TRANSFORM_CONVERT result (sdk/ABI.md §5.9): what a producer
// sends, and nothing of the input it came from (ChainResult.Inputs says which that is). A source
// task decodes one per record it produces: filling a Record (224 bytes, with the input's offsets
// copied in) cost it more than the decoding itself. Key and Value are the serialised key and
// value, nil for a Kafka null; the byte fields alias the decoded buffer.
type ConvertedRecord struct {
	Topic      string
	Partition  int32 // -1: the producer's partitioner chooses
	Timestamp  int64 // -1: none
	Key, Value []byte
	Headers    []Header
}

// DecodeConverted decodes b, the result of TRANSFORM_CONVERT (sdk/ABI.md §5.9) for the batch
// inputs of a chain of steps steps, into r, reusing r's slices: the records that came out are
// Converted.
func (r *ChainResult) DecodeConverted(b []byte, inputs []Record, steps int) error {
	clear(r.Failed)
	r.Failed = r.Failed[:0]
	r.converted = true
	return r.decode(b, inputs, "transform and convert result", false, r.failure(steps))
}

// Converted are, after DecodeConverted, the records that came out, in input order (Records is
// then empty).
func (r *ChainResult) Converted() []ConvertedRecord { return r.conv }

// failure decodes a failed entry of a chain result: a step's predicate or transformation, or with
// a converting result a converter, which names the step after the last.
func (r *ChainResult) failure(steps int) func(d *Decoder, entry, in int) error {
	return func(d *Decoder, entry, in int) error {
		step := int(d.U32("chain failure step"))
		stage := d.U8("chain failure stage")
		f := ChainFailure{Step: step, Predicate: stage == StagePredicate, Stage: stage,
			RecordFailure: RecordFailure{Input: in, Class: d.String("error class"), Message: d.String("error message")}}
		ok := step < steps && stage <= StagePredicate
		if r.converted && (stage == StageKeyConverter || stage == StageValueConverter) {
			ok = step == steps
		}
		if d.Err() == nil && !ok {
			return fmt.Errorf("wire: chain result entry %d names stage %d of step %d of a chain of %d", entry, stage, step, steps)
		}
		r.Failed = append(r.Failed, f)
		return nil
	}
}

// Reset drops what r refers to (records, failures) but keeps its arrays, so that a result kept
// for reuse does not keep a batch's records reachable.
func (r *ChainResult) Reset() {
	clear(r.recs[:cap(r.recs)])
	clear(r.conv[:cap(r.conv)])
	clear(r.Failed)
	r.recs, r.conv, r.inputs, r.unchanged, r.Failed = r.recs[:0], r.conv[:0], r.inputs[:0], r.unchanged[:0], r.Failed[:0]
}

package task

import (
	"context"
	"fmt"
	"strings"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Transformation is a single message transform (SMT) plugin object.
type Transformation interface {
	Transform(ctx context.Context, records []wire.Record) ([]wire.TransformedRecord, []wire.RecordFailure, error)
}

// Predicate is a predicate plugin object.
type Predicate interface {
	Test(ctx context.Context, records []wire.Record) ([]bool, []wire.RecordFailure, error)
}

// Step is one element of a connector's transform chain (transforms=a,b): the transformation and,
// if transforms.<alias>.predicate is set, the predicate that selects the records it applies to.
type Step struct {
	Alias     string // the transform's alias, for errors
	Class     string // transforms.<alias>.type, for errors and the DLQ headers
	Transform Transformation
	Predicate Predicate // nil: every record
	Negate    bool      // transforms.<alias>.negate
	// Fused, on the first step only, runs the whole chain in one plugin call when all its plugins
	// live in one guest instance that can (wasmhost.Chain: TRANSFORM_CHAIN), so that a batch
	// crosses the boundary once instead of once per step. nil: one call per step.
	Fused FusedChain
}

// FusedChain runs a whole chain in one plugin call (wasmhost.Chain). It decodes the result into res
// from a copy in buf's backing array, both reused when large enough, and returns the buffer the
// records alias. batch, if not nil, is the record batch the records were decoded from as it is,
// which it sends instead of encoding them again. Its failures name the step.
type FusedChain interface {
	TransformInto(ctx context.Context, records []wire.Record, batch []byte, res *wire.ChainResult, buf []byte) ([]byte, error)
}

// ConvertingChain runs a source task's whole chain and then its key and value converters in one
// plugin call, when the converters are objects of the chain's instance (wasmhost.ConvertingChain:
// TRANSFORM_CONVERT): the records come back as the bytes the producer sends. It decodes into res
// with ChainResult.DecodeConverted, from a copy of the result in buf's backing array.
type ConvertingChain interface {
	TransformConvertInto(ctx context.Context, records []wire.Record, batch []byte, res *wire.ChainResult, buf []byte) ([]byte, error)
	// ConverterError is the error of a converter's failure in res.Failed, as the converter's own
	// FROM_CONNECT call would have returned it.
	ConverterError(f wire.ChainFailure) error
}

// chainMemory is what a fused chain's result for one batch lives in: the copy of the result and
// the records decoded from it. A source task keeps one per batch in flight (in its pollBuffer).
// batch, when not nil, is the encoding of the records the chain is applied to (the POLL result
// they were decoded from, unchanged since), which goes to the chain as it is.
type chainMemory struct {
	batch  []byte
	result []byte
	res    wire.ChainResult
}

// Chain is a connector's transform chain, applied in order.
type Chain []Step

// failure is one record that failed in a stage of a task loop.
type failure struct {
	index int    // into the batch the loop started from
	stage string // Kafka's stage name: TRANSFORMATION, KEY_CONVERTER, ...
	class string // the error's class, Java-style, for __connect.errors.exception.class.name
	err   error
}

// Apply runs the chain on a batch, one plugin call per step (two with a predicate). It returns the
// records that come out of it, the index of the input record each came from (so sink positions and
// source offsets stay right when records are dropped or split), and the records that failed.
func (c Chain) Apply(ctx context.Context, recs []wire.Record) (out []wire.Record, origin []int, failed []failure, err error) {
	return c.apply(ctx, recs, nil)
}

// apply is Apply with the results of a fused chain in mem (nil: new memory), which they alias
// until mem is used again.
func (c Chain) apply(ctx context.Context, recs []wire.Record, mem *chainMemory) (out []wire.Record, origin []int, failed []failure, err error) {
	if len(c) > 0 && c[0].Fused != nil {
		if mem == nil {
			mem = &chainMemory{}
		}
		return c.applyFused(ctx, recs, mem)
	}
	out = recs
	origin = make([]int, len(recs))
	for i := range origin {
		origin[i] = i
	}
	for _, st := range c {
		if len(out) == 0 {
			break
		}
		selected := make([]bool, len(out))
		for i := range selected {
			selected[i] = true
		}
		if st.Predicate != nil {
			matches, pfailed, err := st.Predicate.Test(ctx, out)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("predicate of transform %s: %w", st.Alias, err)
			}
			bad := map[int]bool{}
			for _, f := range pfailed {
				bad[f.Input] = true
				failed = append(failed, failure{index: origin[f.Input], stage: "TRANSFORMATION", class: f.Class,
					err: fmt.Errorf("predicate of transform %s: %s", st.Alias, f.Message)})
			}
			for i := range selected {
				selected[i] = !bad[i] && matches[i] != st.Negate
			}
			if len(bad) > 0 {
				out, origin, selected = dropIndexes(out, origin, selected, bad)
			}
		}
		var subset []wire.Record
		var subIndex []int
		for i, sel := range selected {
			if sel {
				subset = append(subset, out[i])
				subIndex = append(subIndex, i)
			}
		}
		if len(subset) == 0 {
			continue
		}
		results, tfailed, err := st.Transform.Transform(ctx, subset)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("transform %s (%s): %w", st.Alias, st.Class, err)
		}
		for _, f := range tfailed {
			failed = append(failed, failure{index: origin[subIndex[f.Input]], stage: "TRANSFORMATION", class: f.Class,
				err: fmt.Errorf("transform %s (%s): %s", st.Alias, st.Class, f.Message)})
		}
		// Merge: records the step did not select stay where they were; a selected record is
		// replaced by its outputs (none if dropped or failed).
		byInput := make(map[int][]wire.Record, len(results))
		for _, r := range results {
			byInput[r.Input] = append(byInput[r.Input], r.Record)
		}
		next := make([]wire.Record, 0, len(out))
		nextOrigin := make([]int, 0, len(out))
		sub := 0
		for i := range out {
			if !selected[i] {
				next = append(next, out[i])
				nextOrigin = append(nextOrigin, origin[i])
				continue
			}
			for _, r := range byInput[sub] {
				next = append(next, r)
				nextOrigin = append(nextOrigin, origin[i])
			}
			sub++
		}
		out, origin = next, nextOrigin
	}
	return out, origin, failed, nil
}

// applyFused is Apply in one call of the chain's Fused runner, with the same results and messages.
func (c Chain) applyFused(ctx context.Context, recs []wire.Record, mem *chainMemory) (out []wire.Record, origin []int, failed []failure, err error) {
	if len(recs) == 0 {
		return recs, []int{}, nil, nil
	}
	mem.result, err = c[0].Fused.TransformInto(ctx, recs, mem.batch, &mem.res, mem.result)
	if err != nil {
		return nil, nil, nil, c.callError(err)
	}
	for _, f := range mem.res.Failed {
		failed = append(failed, c.stepFailure(f))
	}
	return mem.res.Records(), mem.res.Inputs(), failed, nil
}

// callError is the error of a fused call of the whole chain.
func (c Chain) callError(err error) error {
	aliases := make([]string, len(c))
	for i, st := range c {
		aliases[i] = st.Alias
	}
	return fmt.Errorf("transform chain %s: %w", strings.Join(aliases, ","), err)
}

// stepFailure is a record a fused call failed in one of the chain's steps, with the message the
// step's own TRANSFORM or TEST call would have given.
func (c Chain) stepFailure(f wire.ChainFailure) failure {
	st := c[f.Step]
	e := fmt.Errorf("transform %s (%s): %s", st.Alias, st.Class, f.Message)
	if f.Predicate {
		e = fmt.Errorf("predicate of transform %s: %s", st.Alias, f.Message)
	}
	return failure{index: f.Input, stage: "TRANSFORMATION", class: f.Class, err: e}
}

func dropIndexes(recs []wire.Record, origin []int, selected []bool, drop map[int]bool) ([]wire.Record, []int, []bool) {
	var r []wire.Record
	var o []int
	var s []bool
	for i := range recs {
		if !drop[i] {
			r = append(r, recs[i])
			o = append(o, origin[i])
			s = append(s, selected[i])
		}
	}
	return r, o, s
}

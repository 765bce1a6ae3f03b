package wasmhost

import (
	"context"
	"fmt"
	"strings"

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

// ChainStep is one step of a Chain: a transformation and the predicate that selects the records it
// applies to (nil: every record).
type ChainStep struct {
	Transform *Object
	Predicate *Object
	Negate    bool
}

// Chain is a transform chain that runs in one guest call (TRANSFORM_CHAIN, sdk/ABI.md §4, §5.8):
// its transformations and predicates are objects of one instance of a module whose descriptor says
// "transform_chain". The records then cross the boundary once per batch, not once per step, and
// stay decoded in the guest between the steps.
type Chain struct {
	in    *instance
	name  string // for errors: the plugins, in order
	steps []ChainStep
	req   []wire.ChainStep
}

// NewChain returns the Chain of steps, or nil when they cannot run in one call: objects of
// different instances or of the wrong kinds, or a module without TRANSFORM_CHAIN.
func NewChain(steps []ChainStep) *Chain {
	if len(steps) == 0 || steps[0].Transform == nil {
		return nil
	}
	in := steps[0].Transform.in
	if !in.m.transformChain {
		return nil
	}
	c := &Chain{in: in, steps: steps}
	var names []string
	for _, s := range steps {
		if s.Transform == nil || s.Transform.in != in || s.Transform.role != wire.RoleTransformation {
			return nil
		}
		step := wire.ChainStep{Transform: s.Transform.handle, Negate: s.Negate}
		if s.Predicate != nil {
			if s.Predicate.in != in || s.Predicate.role != wire.RolePredicate {
				return nil
			}
			step.Predicate = s.Predicate.handle
		}
		c.req = append(c.req, step)
		names = append(names, s.Transform.plugin.Name)
	}
	c.name = strings.Join(names, "+")
	return c
}

// Transform applies the chain to a batch. It returns the output records in input order, each
// naming the input it came from, with the Offset, SourcePartition and SourceOffset of that input,
// and the records a step failed on, naming the step and whether its predicate or its
// transformation failed. An error means the whole call failed, as for Object.Transform.
func (c *Chain) Transform(ctx context.Context, records []wire.Record) ([]wire.TransformedRecord, []wire.ChainFailure, error) {
	if len(records) == 0 {
		return nil, nil, nil
	}
	out, err := c.call(ctx, func(b []byte) []byte { return wire.AppendChainRequest(b, c.req, records) }, nil)
	if err != nil {
		return nil, nil, err
	}
	recs, failed, err := wire.DecodeChainResult(out, records, len(c.steps))
	if err != nil {
		return nil, nil, malformed(c.in, c.name, wire.OpTransformChain, err)
	}
	return recs, failed, nil
}

// TransformInto is Transform decoding into res, whose slices are reused, from a copy of the result
// in buf's backing array when it is large enough: a task that keeps both per batch in flight runs
// the chain without allocating. It returns the buffer the records alias, to pass again once they
// are no longer used.
//
// batch, if not nil, is the record batch (sdk/ABI.md §5.2) that records were decoded from, as it
// is (a POLL result): the chain's input is then the steps and a copy of it, instead of the
// records encoded again.
func (c *Chain) TransformInto(ctx context.Context, records []wire.Record, batch []byte, res *wire.ChainResult, buf []byte) ([]byte, error) {
	res.Reset()
	if len(records) == 0 {
		return buf, nil
	}
	out, err := c.call(ctx, func(b []byte) []byte {
		if batch != nil {
			return append(wire.AppendChainSteps(b, c.req), batch...)
		}
		return wire.AppendChainRequest(b, c.req, records)
	}, buf)
	if err != nil {
		return buf, err
	}
	if out == nil {
		out = buf[:0]
	}
	if err := res.Decode(out, records, len(c.steps)); err != nil {
		res.Reset()
		return out, malformed(c.in, c.name, wire.OpTransformChain, err)
	}
	return out, nil
}

// call runs TRANSFORM_CHAIN on the input that encode appends and returns a copy of the result, in
// dst's backing array when it is large enough.
func (c *Chain) call(ctx context.Context, encode func([]byte) []byte, dst []byte) ([]byte, error) {
	return c.callOp(ctx, wire.OpTransformChain, c.name, nil, encode, dst)
}

// callOp runs op, naming the plugins name in errors, with the chain's objects and more open.
func (c *Chain) callOp(ctx context.Context, op wire.Op, name string, more []*Object, encode func([]byte) []byte, dst []byte) ([]byte, error) {
	c.in.mu.Lock()
	defer c.in.mu.Unlock()
	objs := more
	for _, s := range c.steps {
		objs = append(objs, s.Transform, s.Predicate)
	}
	for _, o := range objs {
		if o != nil && o.closed {
			return nil, fmt.Errorf("wasmhost: plugin %q %s on a closed object", o.plugin.Name, op)
		}
	}
	// One call runs every step; it is counted against the first transformation's observer, under
	// the op, so a chain's cost shows up once and is not split by guess.
	return c.in.callInto(ctx, name, c.steps[0].Transform.obs, op, 0, encode, dst)
}

// ConvertingChain is a Chain followed by a source task's key and value converters in the same guest
// call (TRANSFORM_CONVERT, sdk/ABI.md §5.9), when the converters are objects of the chain's
// instance: the records come back as the bytes the producer sends, instead of crossing the
// boundary as Connect data once more to be converted.
type ConvertingChain struct {
	*Chain
	key, value *Object
	name       string
}

// NewConvertingChain returns c followed by the converters key and value, or nil when they cannot
// run in one call: converters of another instance, or a module without TRANSFORM_CONVERT.
func NewConvertingChain(c *Chain, key, value *Object) *ConvertingChain {
	if c == nil || key == nil || value == nil || !c.in.m.transformConvert {
		return nil
	}
	for _, o := range []*Object{key, value} {
		if o.in != c.in || o.role != wire.RoleConverter {
			return nil
		}
	}
	return &ConvertingChain{Chain: c, key: key, value: value, name: c.name + "+" + key.plugin.Name + "+" + value.plugin.Name}
}

// TransformConvertInto is Chain.TransformInto with the records converted: res is decoded with
// DecodeConverted, so that its Keys and Values are the serialised keys and values of its Records.
// A record a converter failed on is among res.Failed with the converter's stage; ConverterError
// gives the error its FROM_CONNECT call would have returned.
func (c *ConvertingChain) TransformConvertInto(ctx context.Context, records []wire.Record, batch []byte, res *wire.ChainResult, buf []byte) ([]byte, error) {
	res.Reset()
	if len(records) == 0 {
		return buf, nil
	}
	out, err := c.callOp(ctx, wire.OpTransformConvert, c.name, []*Object{c.key, c.value}, func(b []byte) []byte {
		b = wire.AppendConvertSteps(b, c.key.handle, c.value.handle, c.req)
		if batch != nil {
			return append(b, batch...)
		}
		return wire.AppendRecords(b, records)
	}, buf)
	if err != nil {
		return buf, err
	}
	if out == nil {
		out = buf[:0]
	}
	if err := res.DecodeConverted(out, records, len(c.steps)); err != nil {
		res.Reset()
		return out, malformed(c.in, c.name, wire.OpTransformConvert, err)
	}
	return out, nil
}

// ConverterError is what the converter's own FROM_CONNECT call returns for the record of f, a
// failure of stage StageKeyConverter or StageValueConverter: the same error, whichever way the
// record was converted.
func (c *ConvertingChain) ConverterError(f wire.ChainFailure) error {
	o := c.value
	if f.Stage == wire.StageKeyConverter {
		o = c.key
	}
	return &GuestError{Plugin: o.plugin.Name, Module: c.in.m.base, Op: wire.OpFromConnect.String(), Message: f.Message}
}

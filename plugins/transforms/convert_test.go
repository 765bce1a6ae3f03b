package transforms_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// TRANSFORM_CONVERT (sdk/ABI.md §5.9) must give, record for record, what TRANSFORM_CHAIN followed
// by one FROM_CONNECT per record of each converter gives: the same bytes, the same records dropped,
// the same failures with the same messages and stages. Each case runs a chain over a batch that
// mixes strings, structs, schemaless maps, nulls and values the converters reject.
func TestTransformConvertIsChainThenConverters(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	s := h.NewSession(wasmhost.Env{Connector: "convert"})
	defer s.Close(ctx)
	intStruct := `{"type":"struct","fields":[{"field":"n","type":"int32","optional":false}],"optional":true}`
	batch := []wire.Record{
		sourceRec(wire.Null(), wire.String("a line")),
		sourceRec(wire.String("k1"), js(intStruct, `{"n":7}`)),
		sourceRec(wire.Null(), js(intStruct, `{ "n" : 8 }`)),   // spaced: the converter compacts it
		sourceRec(wire.Null(), js(intStruct, `{"n":"eight"}`)), // not an int32: the value converter fails
		sourceRec(wire.Null(), js("", `{"b":1,"a":[true,null]}`)),
		sourceRec(wire.Null(), wire.Null()),
		sourceRec(js(intStruct, `{"n":1.5}`), wire.String("bad key")), // the key converter fails
		sourceRec(wire.Null(), js(intStruct, `null`)),                 // a tombstone with a schema
		sourceRec(wire.Null(), wire.Bytes([]byte{0, 1, 2})),
	}
	batch[0].Headers = []wire.Header{{Key: "h", Value: wire.String("v")}}
	batch[8].Topic = "logs-raw"
	chains := map[string][]*wasmhost.Object{
		"RegexRouter": {openIn(t, h, s, "RegexRouter", wire.KindTransformation, map[string]string{"regex": "(.*)-raw", "replacement": "$1"})},
		"HoistField+InsertField+RegexRouter": {
			openIn(t, h, s, "HoistField$Value", wire.KindTransformation, map[string]string{"field": "line"}),
			openIn(t, h, s, "InsertField$Value", wire.KindTransformation, map[string]string{"static.field": "origin", "static.value": "bench"}),
			openIn(t, h, s, "RegexRouter", wire.KindTransformation, map[string]string{"regex": "(.*)", "replacement": "$1"}),
		},
		// Fails on what is not a struct or map, drops nothing.
		"ExtractField": {openIn(t, h, s, "ExtractField$Value", wire.KindTransformation, map[string]string{"field": "n"})},
		"Filter":       {openIn(t, h, s, "Filter", wire.KindTransformation, nil)},
	}
	converters := map[string][2]*wasmhost.Object{
		"json keys, schemaless json values": {
			openConverter(t, h, s, map[string]string{"converter.type": "key"}),
			openConverter(t, h, s, map[string]string{"converter.type": "value", "schemas.enable": "false"}),
		},
		"json keys and values": {
			openConverter(t, h, s, map[string]string{"converter.type": "key"}),
			openConverter(t, h, s, map[string]string{"converter.type": "value"}),
		},
	}
	for cname, chain := range chains {
		for vname, conv := range converters {
			t.Run(cname+"/"+vname, func(t *testing.T) {
				steps := make([]wasmhost.ChainStep, len(chain))
				for i, o := range chain {
					steps[i] = wasmhost.ChainStep{Transform: o}
				}
				fc := wasmhost.NewChain(steps)
				cc := wasmhost.NewConvertingChain(fc, conv[0], conv[1])
				if cc == nil {
					t.Fatal("the module does not run TRANSFORM_CONVERT")
				}
				want := chainThenConvert(t, fc, len(steps), conv[0], conv[1], batch)
				var res wire.ChainResult
				if _, err := cc.TransformConvertInto(ctx, batch, wire.AppendRecords(nil, batch), &res, nil); err != nil {
					t.Fatal(err)
				}
				var got, failures []string
				for i, r := range res.Converted() {
					got = append(got, convertedLine(res.Inputs()[i], r))
				}
				for _, f := range res.Failed {
					msg := f.Message
					if f.Stage == wire.StageKeyConverter || f.Stage == wire.StageValueConverter {
						msg = cc.ConverterError(f).Error()
					}
					failures = append(failures, fmt.Sprintf("%d failed in stage %d of step %d: %s", f.Input, f.Stage, f.Step, msg))
				}
				slices.Sort(failures)
				got = append(got, failures...)
				if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
					t.Errorf("TRANSFORM_CONVERT:\n%s\nTRANSFORM_CHAIN, then FROM_CONNECT:\n%s", g, w)
				}
			})
		}
	}
}

// chainThenConvert is what a source task makes of batch without TRANSFORM_CONVERT: the chain, then
// each record's key and value converted on their own, in the lines TestTransformConvertIsChainThenConverters compares.
func chainThenConvert(t *testing.T, fc *wasmhost.Chain, steps int, key, value *wasmhost.Object, batch []wire.Record) []string {
	ctx := context.Background()
	out, failed, err := fc.Transform(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	var lines, failures []string
	convert := func(c *wasmhost.Object, topic string, d wire.Data) ([]byte, error) {
		if d.Tag == wire.TagNull {
			return nil, nil
		}
		bs, err := c.FromConnect(ctx, []wire.TopicData{{Topic: topic, Value: d}})
		if err != nil {
			return nil, err
		}
		return bs[0], nil
	}
	for _, o := range out {
		k, err := convert(key, o.Record.Topic, o.Record.Key)
		stage := wire.StageKeyConverter
		var v []byte
		if err == nil {
			v, err = convert(value, o.Record.Topic, o.Record.Value)
			stage = wire.StageValueConverter
		}
		var ge *wasmhost.GuestError
		switch {
		case errors.As(err, &ge):
			failures = append(failures, fmt.Sprintf("%d failed in stage %d of step %d: %s", o.Input, stage, steps, err))
		case err != nil:
			t.Fatal(err)
		default:
			r := o.Record
			lines = append(lines, convertedLine(o.Input, wire.ConvertedRecord{Topic: r.Topic, Partition: r.Partition, Timestamp: r.Timestamp, Key: k, Value: v, Headers: r.Headers}))
		}
	}
	for _, f := range failed {
		failures = append(failures, fmt.Sprintf("%d failed in stage %d of step %d: %s", f.Input, f.Stage, f.Step, f.Message))
	}
	slices.Sort(failures)
	return append(lines, failures...)
}

// convertedLine renders a converted record for comparisons.
func convertedLine(input int, r wire.ConvertedRecord) string {
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, h.Key+"="+show(h.Value))
	}
	return fmt.Sprintf("%d -> %s/%d ts %d headers %v key %q value %q", input, r.Topic, r.Partition, r.Timestamp, hs, r.Key, r.Value)
}

// Command conformance is the Go SDK's conformance module: the five plugins that every SDK
// implements alike, specified in wasmhost/conformance/doc.go and tested there through the host.
package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
	"github.com/wasmconnect/wasmconnect/sdk/go/connect"
)

func init() {
	sdk.RegisterSource(sdk.Info{Name: "ConformanceSource", Class: "conformance.Source", Version: "1.0.0", Config: []sdk.ConfigDef{
		{Name: "topic", Required: true, Importance: sdk.High, Documentation: "The topic to write to"},
		{Name: "count", Type: sdk.TypeInt, Default: new("3"), Importance: sdk.Medium, Documentation: "How many records to produce"},
	}}, source{})
	sdk.RegisterSink(sdk.Info{Name: "ConformanceSink", Class: "conformance.Sink", Version: "1.0.0", Config: []sdk.ConfigDef{
		{Name: "fail.on", Default: new(""), Importance: sdk.Low, Documentation: "A value that fails PUT"},
	}}, sink{})
	sdk.RegisterConverter(sdk.Info{Name: "ConformanceConverter", Class: "conformance.Converter", Version: "1.0.0"},
		func() sdk.Converter { return &converter{} })
	sdk.RegisterTransformation(sdk.Info{Name: "ConformanceTransform", Class: "conformance.Transform", Version: "1.0.0", Config: []sdk.ConfigDef{
		{Name: "header", Default: new("seen"), Importance: sdk.Medium, Documentation: "The header to add"},
	}}, func() sdk.Transformation { return &transform{} })
	sdk.RegisterPredicate(sdk.Info{Name: "ConformancePredicate", Class: "conformance.Predicate", Version: "1.0.0", Config: []sdk.ConfigDef{
		{Name: "header", Required: true, Importance: sdk.High, Documentation: "The header whose presence matches"},
	}}, func() sdk.Predicate { return &predicate{} })
}

func main() {}

type source struct{}

func (source) Validate(cfg sdk.Config) map[string][]string {
	if n, _ := cfg.Int("count", 0); n < 0 {
		return map[string][]string{"count": {"count must not be negative"}}
	}
	return nil
}

func (source) TaskConfigs(cfg sdk.Config, maxTasks int) ([]sdk.Config, error) {
	out := make([]sdk.Config, maxTasks)
	for i := range out {
		out[i] = cfg.Clone()
		out[i]["task.index"] = strconv.Itoa(i)
	}
	return out, nil
}

func (source) NewTask() sdk.SourceTask { return &sourceTask{} }

var partition = map[string]any{"source": "conformance"}

type sourceTask struct {
	topic       string
	next, count int64
}

func (t *sourceTask) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.topic = cfg["topic"]
	t.count, _ = cfg.Int64("count", 3)
	off, ok, err := ctx.Offset(partition)
	if err != nil {
		return err
	}
	if ok {
		if n, ok := off["next"].(int64); ok {
			t.next = n
		}
	}
	return nil
}

var row = &connect.Schema{Type: connect.TypeStruct, Name: "conformance.Row", Fields: []connect.Field{{Name: "n", Schema: connect.Int64Schema}}}

func (t *sourceTask) Poll() ([]sdk.SourceRecord, error) {
	var out []sdk.SourceRecord
	for ; t.next < t.count; t.next++ {
		v := connect.NewStruct(row)
		v.PutAt(0, t.next)
		value, err := connect.Encode(row, v)
		if err != nil {
			return nil, err
		}
		out = append(out, sdk.SourceRecord{
			Topic: t.topic, Key: sdk.String(fmt.Sprintf("key-%d", t.next)), Value: value,
			Headers:         []sdk.Header{{Key: "i", Value: sdk.String(strconv.FormatInt(t.next, 10))}},
			Timestamp:       time.UnixMilli(1700000000000 + t.next),
			SourcePartition: partition, SourceOffset: map[string]any{"next": t.next + 1},
		})
	}
	return out, nil
}

func (t *sourceTask) Commit() error { return nil }
func (t *sourceTask) Stop() error   { return nil }

type sink struct{}

func (sink) Validate(sdk.Config) map[string][]string { return nil }
func (sink) TaskConfigs(cfg sdk.Config, maxTasks int) ([]sdk.Config, error) {
	return []sdk.Config{cfg}, nil
}
func (sink) NewTask() sdk.SinkTask { return &sinkTask{} }

type sinkTask struct {
	ctx    *sdk.TaskContext
	failOn string
	put    int
}

func (t *sinkTask) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.ctx, t.failOn = ctx, cfg["fail.on"]
	return nil
}

func (t *sinkTask) Put(records []sdk.SinkRecord) error {
	for _, r := range records {
		if t.failOn != "" && r.Value.Tag == sdk.TagString && string(r.Value.Bytes) == t.failOn {
			return fmt.Errorf("conformance: record at offset %d is %s", r.Offset, t.failOn)
		}
	}
	t.put += len(records)
	return nil
}

func (t *sinkTask) Flush(offsets []sdk.TopicPartitionOffset) error {
	t.ctx.Logf(sdk.LevelInfo, "flushed %d records, %d partitions", t.put, len(offsets))
	t.put = 0
	return nil
}

func (t *sinkTask) Stop() error { return nil }

type converter struct{}

func (c *converter) Configure(sdk.Config, bool) error { return nil }

func (c *converter) FromConnect(_ string, v sdk.Data) ([]byte, error) {
	switch v.Tag {
	case sdk.TagNull:
		return nil, nil
	case sdk.TagJSON:
		d, err := roundTrip(v)
		return d.Bytes, err
	}
	return v.Bytes, nil
}

func (c *converter) ToConnect(_ string, b []byte) (sdk.Data, error) {
	if b == nil {
		return sdk.Null(), nil
	}
	return sdk.String(string(b)), nil
}

// roundTrip reads JSON data into the Connect model and writes it back; other data stays as it is.
func roundTrip(d sdk.Data) (sdk.Data, error) {
	if d.Tag != sdk.TagJSON {
		return d, nil
	}
	s, v, err := connect.DecodeKeepNulls(d)
	if err != nil {
		return d, err
	}
	if s == nil && v == nil {
		return sdk.JSON(nil, []byte("null")), nil
	}
	return connect.Encode(s, v)
}

type transform struct{ header string }

func (t *transform) Configure(cfg sdk.Config) error {
	if t.header = cfg["header"]; t.header == "" {
		return &configdef.Error{Key: "header", Msg: "header must not be empty"}
	}
	return nil
}

func (t *transform) Apply(r *sdk.Record) (*sdk.Record, error) {
	if r.Value.Tag == sdk.TagNull {
		return r, nil
	}
	if r.Value.Tag == sdk.TagString {
		switch string(r.Value.Bytes) {
		case "drop":
			return nil, nil
		case "fail":
			return nil, sdk.DataError("conformance: fail requested")
		case "error":
			return nil, sdk.Retriable(errors.New("conformance: error requested"))
		case "trap":
			trap()
		}
	}
	out := *r
	var err error
	if out.Key, err = roundTrip(r.Key); err != nil {
		return nil, sdk.DataError("conformance: %v", err)
	}
	if out.Value, err = roundTrip(r.Value); err != nil {
		return nil, sdk.DataError("conformance: %v", err)
	}
	out.Headers = make([]sdk.Header, 0, len(r.Headers)+1)
	for _, h := range r.Headers {
		v, err := roundTrip(h.Value)
		if err != nil {
			return nil, sdk.DataError("conformance: %v", err)
		}
		out.Headers = append(out.Headers, sdk.Header{Key: h.Key, Value: v})
	}
	out.Headers = append(out.Headers, sdk.Header{Key: t.header, Value: sdk.String("c")})
	return &out, nil
}

// trap makes the module trap: the SDK recovers panics on the goroutine that runs wc_call, so the
// panic happens on another, where nothing recovers it and the Go runtime aborts the instance.
func trap() {
	done := make(chan struct{})
	go func() {
		var f func()
		f()
		close(done)
	}()
	<-done
}

type predicate struct{ header string }

func (p *predicate) Configure(cfg sdk.Config) error {
	p.header = cfg["header"]
	return nil
}

func (p *predicate) Test(r *sdk.Record) (bool, error) {
	if r.Value.Tag == sdk.TagString {
		switch string(r.Value.Bytes) {
		case "fail":
			return false, sdk.DataError("conformance: fail requested")
		case "trap":
			trap()
		}
	}
	for _, h := range r.Headers {
		if h.Key == p.header {
			return true, nil
		}
	}
	return false, nil
}

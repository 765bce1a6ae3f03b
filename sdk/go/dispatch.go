package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// dispatcher implements the ABI's operations (sdk/ABI.md §3, §4) on plain byte slices, independent of
// WebAssembly: the wasip1 exports and the native test helpers both call it.
type dispatcher struct {
	mu      sync.Mutex
	host    host
	plugins []*plugin
	byName  map[string]*plugin
	objects map[int32]object
	next    int32
	desc    []byte
}

var defaultDispatcher = newDispatcher(defaultHost)

func newDispatcher(h host) *dispatcher {
	return &dispatcher{host: h, byName: map[string]*plugin{}, objects: map[int32]object{}}
}

// register adds a plugin; a duplicate or nameless plugin is a programming error and panics (at init).
func (d *dispatcher) register(p *plugin) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.info.Name == "" {
		panic("sdk: plugin registered without a Name")
	}
	switch {
	case p.kind == wire.KindSource && p.source == nil,
		p.kind == wire.KindSink && p.sink == nil,
		p.kind == wire.KindConverter && p.newConverter == nil,
		p.kind == wire.KindTransformation && p.newTransformation == nil,
		p.kind == wire.KindPredicate && p.newPredicate == nil:
		panic(fmt.Sprintf("sdk: plugin %s registered with a nil implementation", p.info.Name))
	}
	for _, n := range append([]string{p.info.Name, p.class()}, p.info.Aliases...) {
		if q, dup := d.byName[n]; dup && q != p {
			panic(fmt.Sprintf("sdk: plugin name %q registered twice (%s and %s)", n, q.info.Name, p.info.Name))
		}
		d.byName[n] = p
	}
	d.plugins = append(d.plugins, p)
	d.desc = nil
}

func (d *dispatcher) lookup(name string) (*plugin, error) {
	if p, ok := d.byName[name]; ok {
		return p, nil
	}
	names := make([]string, len(d.plugins))
	for i, p := range d.plugins {
		names[i] = p.info.Name
	}
	return nil, fmt.Errorf("this module has no plugin %q (it has %v)", name, names)
}

// describe returns the descriptor JSON (sdk/ABI.md §3).
func (d *dispatcher) describe() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.desc == nil {
		desc := wire.Descriptor{ABI: wire.Version, Plugins: make([]wire.PluginDescriptor, len(d.plugins))}
		for i, p := range d.plugins {
			desc.Plugins[i] = p.descriptor()
		}
		b, err := json.Marshal(desc)
		if err != nil {
			panic("sdk: descriptor: " + err.Error()) // only plain strings: cannot happen
		}
		d.desc = b
	}
	return d.desc
}

// object is a plugin object behind a handle.
type object interface {
	plugin() *plugin
	close() error
}

type connectorObject struct {
	p   *plugin
	cfg Config
}

type sourceTaskObject struct {
	p    *plugin
	task SourceTask
	enc  sourceEncoder
	out  []byte
}

type sinkTaskObject struct {
	p    *plugin
	task SinkTask
}

type converterObject struct {
	p    *plugin
	conv Converter
	out  []byte
}

func (o *connectorObject) plugin() *plugin  { return o.p }
func (o *sourceTaskObject) plugin() *plugin { return o.p }
func (o *sinkTaskObject) plugin() *plugin   { return o.p }
func (o *converterObject) plugin() *plugin  { return o.p }

func (o *connectorObject) close() error  { return nil }
func (o *sourceTaskObject) close() error { return o.task.Stop() }
func (o *sinkTaskObject) close() error   { return o.task.Stop() }
func (o *converterObject) close() error {
	if c, ok := o.conv.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// handle runs one operation. The output is valid until the next call. A panic in plugin code becomes
// a *PanicError; Go runtime fatal errors (out of memory) are not panics and still abort the module.
func (d *dispatcher) handle(op wire.Op, h int32, in []byte) (out []byte, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	name := "sdk"
	if o, ok := d.objects[h]; ok {
		name = o.plugin().info.Name
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, newPanicError(name, op.String(), r)
		}
	}()
	switch op {
	case wire.OpOpen:
		if h != 0 {
			return nil, fmt.Errorf("OPEN takes handle 0, got %d", h)
		}
		return d.open(in, &name)
	case wire.OpValidate:
		if h != 0 {
			return nil, fmt.Errorf("VALIDATE takes handle 0, got %d", h)
		}
		return d.validate(in, &name)
	}
	o, ok := d.objects[h]
	if !ok {
		if op < wire.OpOpen || op > wire.OpTest {
			return nil, fmt.Errorf("unknown operation %d", int32(op))
		}
		return nil, fmt.Errorf("%s: no open object with handle %d", op, h)
	}
	switch op {
	case wire.OpClose:
		delete(d.objects, h)
		return nil, o.close()
	case wire.OpTaskConfigs:
		if c, ok := o.(*connectorObject); ok {
			return d.taskConfigs(c, in)
		}
	case wire.OpPoll:
		if t, ok := o.(*sourceTaskObject); ok {
			recs, err := t.task.Poll()
			if err != nil {
				return nil, err
			}
			t.out, err = t.enc.encode(t.out[:0], recs)
			return t.out, err
		}
	case wire.OpCommit:
		if t, ok := o.(*sourceTaskObject); ok {
			if oc, ok := t.task.(OffsetCommitter); ok {
				committed, err := decodeCommitted(in)
				if err != nil {
					return nil, err
				}
				return nil, oc.CommitOffsets(committed)
			}
			return nil, t.task.Commit()
		}
	case wire.OpPut:
		if t, ok := o.(*sinkTaskObject); ok {
			// The host owns and reuses the input buffer; copy it once so that a task may keep the
			// records' byte slices.
			recs, err := decodeSinkRecords(bytes.Clone(in))
			if err != nil {
				return nil, err
			}
			return nil, t.task.Put(recs)
		}
	case wire.OpFlush:
		if t, ok := o.(*sinkTaskObject); ok {
			var offs []TopicPartitionOffset
			if err := json.Unmarshal(in, &offs); err != nil {
				return nil, fmt.Errorf("FLUSH: bad input: %w", err)
			}
			return nil, t.task.Flush(offs)
		}
	case wire.OpFromConnect:
		if c, ok := o.(*converterObject); ok {
			return c.fromConnect(in)
		}
	case wire.OpToConnect:
		if c, ok := o.(*converterObject); ok {
			return c.toConnect(in)
		}
	case wire.OpTransform:
		if t, ok := o.(*transformObject); ok {
			return t.transform(in)
		}
	case wire.OpTest:
		if p, ok := o.(*predicateObject); ok {
			return p.test(in)
		}
	default:
		return nil, fmt.Errorf("unknown operation %d", int32(op))
	}
	return nil, fmt.Errorf("%s is not supported by a %s of %s", op, roleOf(o), name)
}

func roleOf(o object) string {
	switch o.(type) {
	case *connectorObject:
		return "connector"
	case *sourceTaskObject:
		return "source task"
	case *sinkTaskObject:
		return "sink task"
	case *converterObject:
		return "converter"
	case *transformObject:
		return "transformation"
	case *predicateObject:
		return "predicate"
	}
	return "object"
}

func (d *dispatcher) open(in []byte, name *string) ([]byte, error) {
	var req wire.OpenRequest
	if err := json.Unmarshal(in, &req); err != nil {
		return nil, fmt.Errorf("OPEN: bad request: %w", err)
	}
	p, err := d.lookup(req.Plugin)
	if err != nil {
		return nil, err
	}
	*name = p.info.Name
	var o object
	switch {
	case req.Role == wire.RoleConnector && (p.kind == wire.KindSource || p.kind == wire.KindSink):
		cfg, err := checkedConfig(p, req.Config)
		if err != nil {
			return nil, err
		}
		o = &connectorObject{p: p, cfg: cfg}
	case req.Role == wire.RoleTask && (p.kind == wire.KindSource || p.kind == wire.KindSink):
		// Task configs come from the connector's TaskConfigs and need not follow its ConfigDefs;
		// only defaults are filled in.
		cfg := withDefaults(p.info.Config, req.Config)
		ctx := &TaskContext{connector: req.Context.Connector, task: req.Context.Task, fsAllow: cleanDirs(req.Context.FSAllow), host: d.host}
		if p.kind == wire.KindSource {
			t := p.source.NewTask()
			if err := t.Start(ctx, cfg); err != nil {
				return nil, err
			}
			o = &sourceTaskObject{p: p, task: t}
		} else {
			t := p.sink.NewTask()
			if err := t.Start(ctx, cfg); err != nil {
				return nil, err
			}
			o = &sinkTaskObject{p: p, task: t}
		}
	case req.Role == wire.RoleConverter && p.kind == wire.KindConverter:
		cfg, err := checkedConfig(p, req.Config)
		if err != nil {
			return nil, err
		}
		c := p.newConverter()
		if err := c.Configure(cfg, cfg["converter.type"] == "key"); err != nil {
			return nil, err
		}
		o = &converterObject{p: p, conv: c}
	case req.Role == wire.RoleTransformation && p.kind == wire.KindTransformation:
		cfg, err := checkedConfig(p, req.Config)
		if err != nil {
			return nil, err
		}
		t := p.newTransformation()
		if err := t.Configure(cfg); err != nil {
			return nil, err
		}
		o = &transformObject{p: p, t: t}
	case req.Role == wire.RolePredicate && p.kind == wire.KindPredicate:
		cfg, err := checkedConfig(p, req.Config)
		if err != nil {
			return nil, err
		}
		pr := p.newPredicate()
		if err := pr.Configure(cfg); err != nil {
			return nil, err
		}
		o = &predicateObject{p: p, pred: pr}
	default:
		return nil, fmt.Errorf("%s is a %s plugin and cannot be opened as %q", p.info.Name, p.kind, req.Role)
	}
	h := d.newHandle()
	d.objects[h] = o
	return json.Marshal(wire.OpenResponse{Handle: h})
}

func (d *dispatcher) newHandle() int32 {
	for {
		d.next++
		if d.next <= 0 {
			d.next = 1
		}
		if _, used := d.objects[d.next]; !used {
			return d.next
		}
	}
}

// checkedConfig fills in defaults and checks required keys, types and validators.
func checkedConfig(p *plugin, raw map[string]string) (Config, error) {
	if errs := checkConfig(p.info.Config, raw); len(errs) > 0 {
		return nil, &configdef.Error{Msg: fmt.Sprintf("%s: invalid configuration: %s", p.info.Name, formatErrors(errs))}
	}
	return withDefaults(p.info.Config, raw), nil
}

func (d *dispatcher) validate(in []byte, name *string) ([]byte, error) {
	var req wire.ValidateRequest
	if err := json.Unmarshal(in, &req); err != nil {
		return nil, fmt.Errorf("VALIDATE: bad request: %w", err)
	}
	p, err := d.lookup(req.Plugin)
	if err != nil {
		return nil, err
	}
	*name = p.info.Name
	errs := mergeErrors(nil, checkConfig(p.info.Config, req.Config))
	// A transformation or predicate validates with a trial Configure, which would only repeat what
	// the checks above found.
	if len(errs) == 0 || (p.kind != wire.KindTransformation && p.kind != wire.KindPredicate) {
		errs = mergeErrors(errs, p.validate(withDefaults(p.info.Config, req.Config)))
	}
	return json.Marshal(wire.ValidateResponse{Errors: errs})
}

func (d *dispatcher) taskConfigs(c *connectorObject, in []byte) ([]byte, error) {
	var req wire.TaskConfigsRequest
	if err := json.Unmarshal(in, &req); err != nil {
		return nil, fmt.Errorf("TASK_CONFIGS: bad request: %w", err)
	}
	if req.MaxTasks < 1 {
		return nil, fmt.Errorf("TASK_CONFIGS: max_tasks must be at least 1, got %d", req.MaxTasks)
	}
	cfgs, err := c.p.taskConfigs(c.cfg.Clone(), req.MaxTasks)
	if err != nil {
		return nil, err
	}
	if len(cfgs) > req.MaxTasks {
		return nil, fmt.Errorf("%s generated %d task configs, more than tasks.max (%d)", c.p.info.Name, len(cfgs), req.MaxTasks)
	}
	out := make([]Config, len(cfgs))
	for i, cfg := range cfgs {
		if cfg == nil {
			cfg = Config{}
		}
		out[i] = cfg
	}
	return json.Marshal(out)
}

func (c *converterObject) fromConnect(in []byte) ([]byte, error) {
	ds, err := wire.DecodeDataBatch(in)
	if err != nil {
		return nil, err
	}
	out := wire.AppendU32(c.out[:0], uint32(len(ds)))
	for _, d := range ds {
		b, err := c.conv.FromConnect(d.Topic, d.Value)
		if err != nil {
			return nil, err
		}
		out = wire.AppendNullableBytes(out, b)
	}
	c.out = out
	return out, nil
}

func (c *converterObject) toConnect(in []byte) ([]byte, error) {
	bs, err := wire.DecodeTopicBytesBatch(in)
	if err != nil {
		return nil, err
	}
	out := wire.AppendU32(c.out[:0], uint32(len(bs)))
	for _, b := range bs {
		v, err := c.conv.ToConnect(b.Topic, b.Bytes)
		if err != nil {
			return nil, err
		}
		out = wire.AppendString(out, b.Topic)
		out = wire.AppendData(out, v)
	}
	c.out = out
	return out, nil
}

// errorFlags returns the result flags for err (sdk/ABI.md §2).
func errorFlags(err error) uint32 {
	f := uint32(wire.ResultError)
	if IsRetriable(err) {
		f |= wire.ResultRetriable
	}
	return f
}

var errEmpty = errors.New("plugin returned an error without a message")

// errorMessage returns the message for an error result, never empty.
func errorMessage(err error) []byte {
	msg := err.Error()
	if msg == "" {
		msg = errEmpty.Error()
	}
	if len(msg) > wire.MaxResultLen {
		msg = msg[:wire.MaxResultLen]
	}
	return []byte(msg)
}

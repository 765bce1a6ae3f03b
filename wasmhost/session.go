package wasmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
)

// OffsetReader answers a source task's offset_get: the stored offset (a JSON object) for a source
// partition (a JSON object), as last committed. The worker backs it with its offset store.
type OffsetReader interface {
	Offset(partition []byte) (offset []byte, ok bool)
}

// Env says on whose behalf a session runs; it tags the guest's log lines and stdio, fills the OPEN
// request's context, and answers offset_get.
type Env struct {
	Connector string
	Task      int
	Logger    *slog.Logger // nil: the host's logger
	Offsets   OffsetReader // nil: no stored offsets
	// NetAllow is the connector's own plugin.net.allow, which narrows Config.NetAllow (a
	// destination must be in both); nil: not narrowed.
	NetAllow *netgrant.Grant
	Net      NetMetrics // nil: not counted
	// Calls observes the guest calls of the session's plugin objects; nil: not observed.
	Calls CallMetrics
}

// CallMetrics gives the observer of each plugin object a session opens (runtime/metrics
// implements it per task). It is asked once per Open, so that a call pays no lookup.
type CallMetrics interface {
	Plugin(plugin, module string) PluginCalls
}

// PluginCalls is told, after every wc_call into a plugin object, what the call cost: how long it
// took, the fuel it burned (0 without fuel metering), the instance's linear memory after it, and
// whether it trapped or ran out of time. It is called with the instance locked: it must be quick.
type PluginCalls interface {
	Call(op wire.Op, took time.Duration, fuel, memoryBytes uint64, trapped bool)
}

// Session holds the instances of one connector or task: at most one per module, shared by every
// plugin of that module the session opens (a task's key and value converters, say), because an
// instance costs up to several MiB and milliseconds (Go guests). Objects of a session may be used
// from several goroutines; calls into one instance are serialised.
type Session struct {
	h   *Host
	env Env
	log *slog.Logger

	mu        sync.Mutex
	instances map[*module]*instance
	objects   []*Object
	closed    bool
}

// NewSession starts an empty session; instances are created by Open as needed.
func (h *Host) NewSession(env Env) *Session {
	log := env.Logger
	if log == nil {
		log = h.log
	}
	return &Session{
		h: h, env: env,
		log:       log.With("connector", env.Connector, "task", env.Task),
		instances: map[*module]*instance{},
	}
}

// Object is one plugin object inside a guest instance: a connector, a task, a converter, a
// transformation or a predicate, created by OPEN. Its methods are the ABI operations; each is valid for one kind and role only, and a call
// for another is refused without calling into the guest.
type Object struct {
	in     *instance
	obs    PluginCalls // nil: calls not observed
	plugin Plugin
	role   wire.Role
	handle int32
	closed bool // guarded by in.mu
}

// Plugin returns the plugin the object was opened from.
func (o *Object) Plugin() Plugin { return o.plugin }

// Role returns the role the object was opened in.
func (o *Object) Role() wire.Role { return o.role }

// Open creates an object of plugin p in role with its configuration (strings, as Kafka Connect
// passes them), instantiating p's module in this session on first use.
func (s *Session) Open(ctx context.Context, p Plugin, role wire.Role, cfg map[string]string) (*Object, error) {
	if err := checkRole(p, role); err != nil {
		return nil, err
	}
	m, err := s.h.moduleOf(p)
	if err != nil {
		return nil, err
	}
	in, err := s.instance(ctx, m)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	fsAllow := s.h.cfg.FSAllow
	if fsAllow == nil {
		fsAllow = []string{}
	}
	req := wire.OpenRequest{Plugin: p.Name, Role: role, Config: cfg,
		Context: wire.OpenContext{Connector: s.env.Connector, Task: s.env.Task, FSAllow: fsAllow}}
	var obs PluginCalls
	if s.env.Calls != nil {
		obs = s.env.Calls.Plugin(p.Name, m.base)
	}
	in.mu.Lock()
	out, err := in.call(ctx, p.Name, obs, wire.OpOpen, 0, appendJSON(req))
	in.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var resp struct {
		Handle *int32 `json:"handle"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.Handle == nil {
		return nil, malformed(in, p.Name, wire.OpOpen, fmt.Errorf(`want {"handle": N}, got %.200q`, out))
	}
	o := &Object{in: in, obs: obs, plugin: p, role: role, handle: *resp.Handle}
	s.mu.Lock()
	s.objects = append(s.objects, o)
	s.mu.Unlock()
	return o, nil
}

func (s *Session) instance(ctx context.Context, m *module) (*instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("wasmhost: session of connector %q task %d is closed", s.env.Connector, s.env.Task)
	}
	if in := s.instances[m]; in != nil {
		return in, nil
	}
	in, err := s.h.instantiate(ctx, m, s.log.With("module", m.base), s.env.Offsets)
	if err != nil {
		return nil, err
	}
	in.net = s.h.newNetState(s.env)
	s.instances[m] = in
	return in, nil
}

// Close closes the session's open objects (CLOSE, most recent first, so that a guest can still
// flush) and discards its instances. Errors from CLOSE are joined; the instances are discarded
// regardless.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	objects, instances := s.objects, s.instances
	s.objects, s.instances = nil, nil
	s.mu.Unlock()

	var errs []error
	for _, o := range slices.Backward(objects) {
		errs = append(errs, o.Close(ctx))
	}
	for _, in := range instances {
		in.close(ctx, nil)
	}
	return errors.Join(errs...)
}

func checkRole(p Plugin, role wire.Role) error {
	ok := false
	switch role {
	case wire.RoleConnector, wire.RoleTask:
		ok = p.Kind == wire.KindSource || p.Kind == wire.KindSink
	case wire.RoleConverter:
		ok = p.Kind == wire.KindConverter
	case wire.RoleTransformation:
		ok = p.Kind == wire.KindTransformation
	case wire.RolePredicate:
		ok = p.Kind == wire.KindPredicate
	}
	if !ok {
		return fmt.Errorf("wasmhost: plugin %q is a %s plugin and cannot be opened in role %q", p.Name, p.Kind, role)
	}
	return nil
}

// do runs op on o after checking that o's kind and role support it.
func (o *Object) do(ctx context.Context, op wire.Op, kind wire.Kind, role wire.Role, encode func([]byte) []byte) ([]byte, error) {
	return o.doInto(ctx, op, kind, role, encode, nil)
}

// doInto is do with the result copied into dst's backing array when it is large enough.
func (o *Object) doInto(ctx context.Context, op wire.Op, kind wire.Kind, role wire.Role, encode func([]byte) []byte, dst []byte) ([]byte, error) {
	if o.plugin.Kind != kind || o.role != role {
		return nil, fmt.Errorf("wasmhost: plugin %q (%s %s) does not support %s, which is for %s %ss",
			o.plugin.Name, o.plugin.Kind, o.role, op, kind, role)
	}
	o.in.mu.Lock()
	defer o.in.mu.Unlock()
	if o.closed {
		return nil, fmt.Errorf("wasmhost: plugin %q %s on a closed object", o.plugin.Name, op)
	}
	return o.in.callInto(ctx, o.plugin.Name, o.obs, op, o.handle, encode, dst)
}

// TaskConfigs splits a connector's configuration into at most max task configurations.
func (o *Object) TaskConfigs(ctx context.Context, max int) ([]map[string]string, error) {
	out, err := o.do(ctx, wire.OpTaskConfigs, o.plugin.Kind, wire.RoleConnector, appendJSON(wire.TaskConfigsRequest{MaxTasks: max}))
	if err != nil || len(out) == 0 {
		return nil, err
	}
	var cfgs []map[string]string
	if err := json.Unmarshal(out, &cfgs); err != nil {
		return nil, malformed(o.in, o.plugin.Name, wire.OpTaskConfigs, err)
	}
	if len(cfgs) > max {
		return nil, malformed(o.in, o.plugin.Name, wire.OpTaskConfigs, fmt.Errorf("%d task configs, more than the maximum of %d", len(cfgs), max))
	}
	return cfgs, nil
}

// Poll asks a source task for records. The records are decoded from a private copy of the result,
// so they stay valid after later calls; none means nothing is available now.
func (o *Object) Poll(ctx context.Context) ([]wire.Record, error) {
	rs, _, err := o.PollInto(ctx, nil, nil)
	return rs, err
}

// PollInto is Poll reusing the caller's buffers: the result is copied into buf's backing array and
// decoded into recs' when they are large enough, else into new ones. It returns the records and
// the buffer they alias (to pass again once the records are no longer used); with nothing
// available the records are empty and buf is returned as it was.
func (o *Object) PollInto(ctx context.Context, buf []byte, recs []wire.Record) ([]wire.Record, []byte, error) {
	out, err := o.doInto(ctx, wire.OpPoll, wire.KindSource, wire.RoleTask, nil, buf)
	if err != nil || len(out) == 0 {
		return nil, buf, err
	}
	rs, err := wire.DecodeRecordsInto(recs, out)
	if err != nil {
		return nil, out, malformed(o.in, o.plugin.Name, wire.OpPoll, err)
	}
	return rs, out, nil
}

// Commit tells a source task that offsets were stored; committed (partition JSON -> offset JSON)
// are the ones just stored, passed as COMMIT's input (sdk/ABI.md §4).
func (o *Object) Commit(ctx context.Context, committed map[string][]byte) error {
	var in func([]byte) []byte
	if len(committed) > 0 {
		in = func(b []byte) []byte { return wire.AppendCommitted(b, committed) }
	}
	_, err := o.do(ctx, wire.OpCommit, wire.KindSource, wire.RoleTask, in)
	return err
}

// Put hands a batch of records to a sink task.
func (o *Object) Put(ctx context.Context, records []wire.Record) error {
	_, err := o.do(ctx, wire.OpPut, wire.KindSink, wire.RoleTask, func(b []byte) []byte { return wire.AppendRecords(b, records) })
	return err
}

// Flush asks a sink task to make everything put so far durable; offsets are the next offsets to
// read per partition.
func (o *Object) Flush(ctx context.Context, offsets []wire.TopicPartitionOffset) error {
	if offsets == nil {
		offsets = []wire.TopicPartitionOffset{}
	}
	_, err := o.do(ctx, wire.OpFlush, wire.KindSink, wire.RoleTask, appendJSON(offsets))
	return err
}

// FromConnect serialises a batch of Connect values; the result has one element per input (nil for
// a null).
func (o *Object) FromConnect(ctx context.Context, values []wire.TopicData) ([][]byte, error) {
	bs, _, err := o.FromConnectInto(ctx, values, nil, nil)
	return bs, err
}

// FromConnectInto is FromConnect reusing the caller's memory: the result is copied into buf's
// backing array and decoded into out's when they are large enough, else into new ones. It returns
// the serialised values and the buffer they alias, to pass again once they are no longer used.
//
// A batch whose encoding is larger than maxConvertCall goes to the guest in several calls of at
// most that size (one value larger than it goes alone): a guest's linear memory holds a call's
// input and about as much output, and never shrinks, so one call per batch would leave every
// converter instance the size of the largest batch it was given (batch.size records) for its
// lifetime. The calls cost ~2 µs each, 64 KiB of values apart.
func (o *Object) FromConnectInto(ctx context.Context, values []wire.TopicData, buf []byte, out [][]byte) ([][]byte, []byte, error) {
	res, out := buf[:0], out[:0]
	for start := 0; ; {
		end := convertCallEnd(values, start)
		if start == 0 && end < len(values) {
			// Several calls: room for all their results at once, as one call would have taken,
			// rather than growing for each (a value's bytes come back about as large as they went).
			if size := encodedValues(values); cap(res) < size {
				res = make([]byte, 0, size+size/8)
			}
			if cap(out) < len(values) {
				out = make([][]byte, 0, len(values))
			}
		}
		dst := res[len(res):]
		r, err := o.doInto(ctx, wire.OpFromConnect, wire.KindConverter, wire.RoleConverter, func(b []byte) []byte { return wire.AppendDataBatch(b, values[start:end]) }, dst)
		if err != nil {
			return nil, buf, err
		}
		switch {
		case r == nil:
			// An empty result: nothing to keep.
		case cap(r) == cap(dst):
			res = res[:len(res)+len(r)] // copied after the calls before
		default:
			// It did not fit: the results so far stay where they are (what aliases them stays
			// valid) and the rest goes into a buffer with room for the whole batch next time.
			grown := make([]byte, 0, 2*(cap(res)+len(r)))
			res = append(grown, r...)
			r = res
		}
		bs, err := wire.DecodeBytesBatchInto(out[len(out):], r)
		if err == nil && len(bs) != end-start {
			err = fmt.Errorf("%d results for %d values", len(bs), end-start)
		}
		if err != nil {
			return nil, res, malformed(o.in, o.plugin.Name, wire.OpFromConnect, err)
		}
		out = append(out, bs...)
		if start = end; start >= len(values) {
			return out, res, nil
		}
	}
}

// maxConvertCall is the most bytes of encoded values one FROM_CONNECT call is given (see
// FromConnectInto).
const maxConvertCall = 64 << 10

// convertCallEnd is where the FROM_CONNECT call of values[start:] ends: as many values as fit in
// maxConvertCall encoded, at least one (none for an empty batch).
func convertCallEnd(values []wire.TopicData, start int) int {
	size, end := 4, start
	for end < len(values) {
		size += encodedValue(&values[end])
		if size > maxConvertCall && end > start {
			break
		}
		end++
	}
	return end
}

// encodedValue is about the size of v in a data batch (sdk/ABI.md §5.3).
func encodedValue(v *wire.TopicData) int {
	return 4 + len(v.Topic) + 9 + len(v.Value.Schema) + len(v.Value.Bytes)
}

// encodedValues is about the size of values as a data batch.
func encodedValues(values []wire.TopicData) int {
	size := 4
	for i := range values {
		size += encodedValue(&values[i])
	}
	return size
}

// ToConnect deserialises a batch of Kafka keys or values into Connect values, one per input.
func (o *Object) ToConnect(ctx context.Context, values []wire.TopicBytes) ([]wire.Data, error) {
	out, err := o.do(ctx, wire.OpToConnect, wire.KindConverter, wire.RoleConverter, func(b []byte) []byte { return wire.AppendTopicBytesBatch(b, values) })
	if err != nil {
		return nil, err
	}
	// Decode the data batch (sdk/ABI.md §5.3) straight into values: the topics echo the input and
	// are skipped without allocating a string per record.
	d := wire.NewDecoder(out)
	if n := d.U32("data batch count"); d.Err() == nil && int(n) != len(values) {
		return nil, malformed(o.in, o.plugin.Name, wire.OpToConnect, fmt.Errorf("%d results for %d values", n, len(values)))
	}
	data := make([]wire.Data, len(values))
	for i := range data {
		d.Bytes("topic")
		data[i] = d.Data("value")
	}
	if err := d.Err(); err != nil {
		return nil, malformed(o.in, o.plugin.Name, wire.OpToConnect, err)
	}
	if d.Remaining() != 0 {
		return nil, malformed(o.in, o.plugin.Name, wire.OpToConnect, fmt.Errorf("%d unexpected bytes after the data batch", d.Remaining()))
	}
	return data, nil
}

// Close releases the object in the guest (CLOSE). Closing an object whose instance has already
// failed does nothing and returns nil: there is nothing left to release, and the failure was
// reported by the call that caused it.
func (o *Object) Close(ctx context.Context) error {
	o.in.mu.Lock()
	defer o.in.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	if o.in.failed != nil {
		return nil
	}
	_, err := o.in.call(ctx, o.plugin.Name, o.obs, wire.OpClose, o.handle, nil)
	return err
}

// appendJSON returns an encoder for a JSON input. The values passed are plain structs, maps and
// slices of strings and numbers, which always marshal.
func appendJSON(v any) func([]byte) []byte {
	return func(dst []byte) []byte {
		b, _ := json.Marshal(v)
		return append(dst, b...)
	}
}

func malformed(in *instance, plugin string, op wire.Op, err error) error {
	return &GuestError{Plugin: plugin, Module: in.m.base, Op: op.String(), Message: "malformed result: " + err.Error()}
}

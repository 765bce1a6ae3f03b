package cluster

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// ProtocolType is the classic group protocol type that Kafka Connect workers join with.
const ProtocolType = "connect"

// Sub-protocol names, as offered in JoinGroup and chosen by the coordinator.
const (
	ProtocolDefault    = "default"    // eager rebalancing; metadata and assignment v0
	ProtocolCompatible = "compatible" // incremental cooperative rebalancing (KIP-415); v1
	ProtocolSessioned  = "sessioned"  // as compatible, plus request signing (KIP-507); v2
)

// Values of the worker setting connect.protocol.
const (
	ModeEager      = "eager"
	ModeCompatible = "compatible"
	ModeSessioned  = "sessioned" // the default, as in Kafka since 2.4
)

// Assignment error codes (the INT16 error field of an assignment).
const (
	CodeNone           int16 = 0 // NO_ERROR
	CodeConfigMismatch int16 = 1 // CONFIG_MISMATCH: the leader could not assign (Kafka's only error)
)

// connectorTask is the task number that stands for the Connector instance itself in a
// ConnectorAssignment.
const connectorTask = -1

// ExtensionMagic opens the wasmconnect extension that follows the standard fields of member
// metadata and assignments. The suffix is the extension's layout version.
const ExtensionMagic = "wasmconnect/1"

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("malformed Connect group protocol data")

// Protocols returns the sub-protocols that a worker with connect.protocol=mode offers, most
// preferred first; "" means ModeSessioned.
func Protocols(mode string) ([]string, error) {
	switch mode {
	case ModeEager:
		return []string{ProtocolDefault}, nil
	case ModeCompatible:
		return []string{ProtocolCompatible, ProtocolDefault}, nil
	case ModeSessioned, "":
		return []string{ProtocolSessioned, ProtocolCompatible, ProtocolDefault}, nil
	}
	return nil, fmt.Errorf("connect.protocol %q: must be %s, %s or %s", mode, ModeEager, ModeCompatible, ModeSessioned)
}

// ProtocolVersion returns the metadata and assignment version of a sub-protocol: 0 for
// "default", 1 for "compatible", 2 for "sessioned"; ok is false for other names.
func ProtocolVersion(protocol string) (version int16, ok bool) {
	switch protocol {
	case ProtocolDefault:
		return 0, true
	case ProtocolCompatible:
		return 1, true
	case ProtocolSessioned:
		return 2, true
	}
	return 0, false
}

// Allocation is a set of connectors and tasks: what a worker runs, or what an assignment adds
// or revokes. The codec and the assignor keep both slices sorted and free of duplicates.
type Allocation struct {
	Connectors []string
	Tasks      []connect.TaskID
}

// Empty reports whether a holds nothing.
func (a Allocation) Empty() bool { return len(a.Connectors) == 0 && len(a.Tasks) == 0 }

// String renders a for logs, e.g. "connectors [a b] tasks [a-0 b-1]".
func (a Allocation) String() string {
	ts := make([]string, len(a.Tasks))
	for i, t := range a.Tasks {
		ts[i] = t.String()
	}
	return fmt.Sprintf("connectors %v tasks %v", a.Connectors, ts)
}

// normalized returns a copy of a with both slices sorted and deduplicated.
func (a Allocation) normalized() Allocation {
	c := slices.Clone(a.Connectors)
	slices.Sort(c)
	t := slices.Clone(a.Tasks)
	slices.SortFunc(t, compareTasks)
	return Allocation{Connectors: slices.Compact(c), Tasks: slices.Compact(t)}
}

func compareTasks(a, b connect.TaskID) int {
	if c := strings.Compare(a.Connector, b.Connector); c != 0 {
		return c
	}
	return a.Task - b.Task
}

// MetadataExtension is the wasmconnect extension of member metadata. It lets a wasmconnect
// leader tell a worker precisely why it cannot join (see Settings), and lets GET /workers show
// each worker's version. Java workers neither send nor read it.
type MetadataExtension struct {
	// Version is the worker's wasmconnect version.
	Version string `json:"version"`
	// Settings holds the worker settings that must be equal on every worker of a cluster
	// (internal topic names, converters...; see config.SharedKeys).
	Settings map[string]string `json:"settings,omitempty"`
	// Leaving says the worker is stopping gracefully and has stopped its work: the leader gives it
	// nothing and hands what it held to the others at once, without the scheduled rebalance delay
	// that is meant for workers that may come back.
	Leaving bool `json:"leaving,omitempty"`
}

// MemberMetadata is the protocol metadata a worker sends in JoinGroup (Java's
// ExtendedWorkerState):
//
//	v0 "default":     INT16 version | STRING url | INT64 configOffset
//	v1 "compatible",
//	v2 "sessioned":   INT16 version | STRING url | INT64 configOffset | NULLABLE_BYTES allocation
//
// followed, when Ext is set, by the extension: STRING "wasmconnect/1" | NULLABLE_BYTES json.
//
// # Why Java workers accept the extension
//
// Java reads these bytes with Kafka's Schema.read (ConnectProtocol and
// IncrementalCooperativeConnectProtocol), which reads the declared fields in order and never
// checks that the buffer was consumed; trailing bytes are ignored. One case needs care: Java
// may read a v0 payload with its v1 schema (IncrementalCooperativeConnectProtocol reads v0
// metadata with the v1 decoder), which would take the extension's first bytes for the allocation. So in v0 the
// extension is preceded by a null allocation (INT32 -1): a v0 reader stops before it, a v1
// reader sees "no allocation" and stops after it. In v1/v2 the extension follows the
// allocation, the last field Java knows. A future Java version 3 that appends fields would
// read the extension as those fields; wasmconnect then has to stop sending it to such a group,
// which is why the magic carries a version.
type MemberMetadata struct {
	Version      int16
	URL          string // the worker's advertised REST URL
	ConfigOffset int64  // config topic position: last offset read + 1, -1 if none
	// Allocation is the worker's current assignment (v1 and later; nil when it has none). Only
	// its Assigned field (the full current assignment) means anything to the leader.
	Allocation *MemberAssignment
	Ext        *MetadataExtension // nil for Java workers
}

// MemberAssignment is what the leader sends each member in SyncGroup (Java's
// ExtendedAssignment):
//
//	ConnectorAssignment: STRING connector | ARRAY<INT32> tasks  (-1 = the Connector instance)
//	v0:    INT16 version | INT16 error | STRING leader | STRING leaderUrl | INT64 configOffset
//	       | ARRAY<ConnectorAssignment> assignment                         -- the full assignment
//	v1/v2: INT16 version | INT16 error | STRING leader | STRING leaderUrl | INT64 configOffset
//	       | NULLABLE ARRAY<ConnectorAssignment> assignment                -- newly assigned
//	       | NULLABLE ARRAY<ConnectorAssignment> revoked | INT32 delayMs
//
// When Message is set, the wasmconnect extension follows (STRING "wasmconnect/1" |
// NULLABLE_BYTES json); in v0 it is preceded by an empty revoked list and a zero delay, because
// Java reads every version of an assignment with its v1 schema (WorkerCoordinator uses
// IncrementalCooperativeConnectProtocol.deserializeAssignment) and would otherwise take the
// extension for the revoked list. See MemberMetadata for why Java ignores the rest.
type MemberAssignment struct {
	Version      int16
	Error        int16  // CodeNone or CodeConfigMismatch
	Leader       string // the leader's member id
	LeaderURL    string
	ConfigOffset int64
	Assigned     Allocation // v0: the full assignment; v1+: what is new in this round
	Revoked      Allocation // v1+: to stop now
	Delay        time.Duration
	// Message is the wasmconnect extension's human-readable reason for Error, e.g. which
	// settings differ from the group's. Empty when Error is CONFIG_MISMATCH in Kafka's sense.
	Message string
}

// assignmentExtension is the JSON of the assignment extension.
type assignmentExtension struct {
	Error string `json:"error,omitempty"`
}

// MarshalBinary encodes m in the layout of m.Version; versions above 2 use the v1 layout.
func (m MemberMetadata) MarshalBinary() ([]byte, error) {
	var w writer
	w.int16(m.Version)
	w.string(m.URL)
	w.int64(m.ConfigOffset)
	switch {
	case m.Version >= 1 && m.Allocation != nil:
		alloc, err := m.Allocation.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("allocation: %w", err)
		}
		w.bytes(alloc)
	case m.Version >= 1 || m.Ext != nil:
		w.int32(-1) // null allocation (in v0 only as padding for the extension, see above)
	}
	if m.Ext != nil {
		if err := w.extension(m.Ext); err != nil {
			return nil, err
		}
	}
	return w.result()
}

// UnmarshalBinary decodes member metadata of any version. Like Java, it reads every version
// with the v1 layout, tolerates missing trailing fields and ignores bytes it does not know,
// and treats versions above 2 as v1. A v0 payload never has an allocation.
func (m *MemberMetadata) UnmarshalBinary(b []byte) error {
	r := reader{b: b}
	*m = MemberMetadata{Version: r.int16()}
	if r.err == nil && m.Version < 0 {
		return fmt.Errorf("%w: member metadata version %d", ErrMalformed, m.Version)
	}
	m.URL = r.string()
	m.ConfigOffset = r.int64()
	if r.err != nil {
		return fmt.Errorf("member metadata: %w", r.err)
	}
	if r.empty() {
		return nil
	}
	alloc, null := r.nullableBytes()
	if r.err != nil {
		if m.Version == 0 {
			return nil // an unknown v0 tail: ignore it, as Java's v0 reader does
		}
		return fmt.Errorf("member metadata allocation: %w", r.err)
	}
	if !null && m.Version >= 1 {
		var a MemberAssignment
		if err := a.UnmarshalBinary(alloc); err != nil {
			return fmt.Errorf("member metadata allocation: %w", err)
		}
		m.Allocation = &a
	}
	if js, ok := r.extension(); ok {
		var ext MetadataExtension
		if json.Unmarshal(js, &ext) == nil {
			m.Ext = &ext
		}
	}
	return nil
}

// MarshalBinary encodes a in the layout of a.Version; versions above 2 use the v1 layout.
// Connector assignments are sorted by connector, each listing -1 (the connector) first and then
// its tasks in order, as Java's asMap does.
func (a MemberAssignment) MarshalBinary() ([]byte, error) {
	var w writer
	w.int16(a.Version)
	w.int16(a.Error)
	w.string(a.Leader)
	w.string(a.LeaderURL)
	w.int64(a.ConfigOffset)
	w.allocation(a.Assigned)
	if a.Version >= 1 {
		w.allocation(a.Revoked)
		w.int32(delayMillis(a.Delay))
	} else if a.Message != "" {
		w.int32(-1) // null revoked list: padding for Java's v1 reader, see MemberAssignment
		w.int32(0)  // delay
	}
	if a.Message != "" {
		if err := w.extension(assignmentExtension{Error: a.Message}); err != nil {
			return nil, err
		}
	}
	return w.result()
}

// UnmarshalBinary decodes an assignment of any version with the v1 layout, as Java does:
// missing trailing fields take their defaults (no assignment, no revocation, no delay), unknown
// trailing bytes are ignored, and versions above 2 are read as v1.
func (a *MemberAssignment) UnmarshalBinary(b []byte) error {
	r := reader{b: b}
	*a = MemberAssignment{Version: r.int16()}
	if r.err == nil && a.Version < 0 {
		return fmt.Errorf("%w: assignment version %d", ErrMalformed, a.Version)
	}
	a.Error = r.int16()
	a.Leader = r.string()
	a.LeaderURL = r.string()
	a.ConfigOffset = r.int64()
	if r.err != nil {
		return fmt.Errorf("assignment: %w", r.err)
	}
	if r.empty() {
		return nil
	}
	a.Assigned = r.allocation()
	if r.err == nil && !r.empty() {
		a.Revoked = r.allocation()
	}
	if r.err == nil && !r.empty() {
		d := r.int32()
		if d < 0 {
			d = 0
		}
		a.Delay = time.Duration(d) * time.Millisecond
	}
	if r.err != nil {
		return fmt.Errorf("assignment: %w", r.err)
	}
	if a.Version == 0 {
		a.Revoked, a.Delay = Allocation{}, 0 // read past (Java's v1 reader does), but v0 has neither
	}
	if js, ok := r.extension(); ok {
		var ext assignmentExtension
		if json.Unmarshal(js, &ext) == nil {
			a.Message = ext.Error
		}
	}
	return nil
}

func delayMillis(d time.Duration) int32 {
	ms := d.Milliseconds()
	switch {
	case ms < 0:
		return 0
	case ms > math.MaxInt32:
		return math.MaxInt32
	}
	return int32(ms)
}

// writer appends Kafka protocol primitives (big-endian).
type writer struct {
	b   []byte
	err error
}

func (w *writer) int16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) int64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }

func (w *writer) string(s string) {
	if len(s) > math.MaxInt16 {
		w.err = fmt.Errorf("string of %d bytes is longer than a Kafka STRING allows (%d)", len(s), math.MaxInt16)
		return
	}
	w.int16(int16(len(s)))
	w.b = append(w.b, s...)
}

func (w *writer) bytes(b []byte) {
	w.int32(int32(len(b)))
	w.b = append(w.b, b...)
}

// extension writes v as the JSON extension that follows the fields Java reads (reader.extension
// reads it back).
func (w *writer) extension(v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.string(ExtensionMagic)
	w.bytes(js)
	return nil
}

// allocation writes an ARRAY<ConnectorAssignment>.
func (w *writer) allocation(a Allocation) {
	a = a.normalized()
	type entry struct {
		name  string
		tasks []int32
	}
	var entries []entry
	index := map[string]int{}
	get := func(name string) *entry {
		i, ok := index[name]
		if !ok {
			i = len(entries)
			index[name] = i
			entries = append(entries, entry{name: name})
		}
		return &entries[i]
	}
	for _, c := range a.Connectors {
		e := get(c)
		e.tasks = append(e.tasks, connectorTask)
	}
	for _, t := range a.Tasks {
		e := get(t.Connector)
		e.tasks = append(e.tasks, int32(t.Task))
	}
	slices.SortStableFunc(entries, func(x, y entry) int { return strings.Compare(x.name, y.name) })
	w.int32(int32(len(entries)))
	for _, e := range entries {
		w.string(e.name)
		w.int32(int32(len(e.tasks)))
		for _, t := range e.tasks {
			w.int32(t)
		}
	}
}

func (w *writer) result() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// reader consumes Kafka protocol primitives; the first error sticks and later reads return
// zero values, so a decoder checks r.err once per group of fields.
type reader struct {
	b   []byte
	err error
}

func (r *reader) empty() bool { return r.err == nil && len(r.b) == 0 }

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%w: %s needs %d bytes, %d left", ErrMalformed, what, n, len(r.b))
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) int16() int16 {
	if b := r.take(2, "INT16"); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.take(4, "INT32"); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.take(8, "INT64"); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) string() string {
	n := r.int16()
	if r.err == nil && n < 0 {
		r.err = fmt.Errorf("%w: STRING with length %d", ErrMalformed, n)
	}
	return string(r.take(int(n), "STRING"))
}

// nullableBytes returns the bytes and whether they were null.
func (r *reader) nullableBytes() ([]byte, bool) {
	n := r.int32()
	if r.err != nil {
		return nil, false
	}
	if n == -1 {
		return nil, true
	}
	if n < 0 {
		r.err = fmt.Errorf("%w: NULLABLE_BYTES with length %d", ErrMalformed, n)
		return nil, false
	}
	return r.take(int(n), "NULLABLE_BYTES"), false
}

// arrayLen reads an array count; null (-1) is returned as 0. Each element takes at least
// minElem bytes, which bounds the count by what is left and keeps garbage from allocating.
func (r *reader) arrayLen(minElem int) int {
	n := r.int32()
	if r.err != nil || n == -1 {
		return 0
	}
	if n < 0 || int64(n)*int64(minElem) > int64(len(r.b)) {
		r.err = fmt.Errorf("%w: ARRAY with %d elements in %d bytes", ErrMalformed, n, len(r.b))
		return 0
	}
	return int(n)
}

// allocation reads a NULLABLE ARRAY<ConnectorAssignment>; a task number of -1 is the
// connector itself. The result is normalized.
func (r *reader) allocation() Allocation {
	var a Allocation
	n := r.arrayLen(2 + 4)
	for range n {
		name := r.string()
		tasks := r.arrayLen(4)
		for range tasks {
			t := r.int32()
			switch {
			case r.err != nil:
			case t == connectorTask:
				a.Connectors = append(a.Connectors, name)
			case t < 0:
				r.err = fmt.Errorf("%w: task number %d for connector %q", ErrMalformed, t, name)
			default:
				a.Tasks = append(a.Tasks, connect.TaskID{Connector: name, Task: int(t)})
			}
		}
		if r.err != nil {
			return Allocation{}
		}
	}
	return a.normalized()
}

// extension returns the JSON of a wasmconnect extension if the remaining bytes hold one.
// Anything else (another implementation's tail, a later extension version) is ignored.
func (r *reader) extension() ([]byte, bool) {
	if r.err != nil || len(r.b) < 2+len(ExtensionMagic) {
		return nil, false
	}
	ext := reader{b: r.b}
	if magic := ext.string(); ext.err != nil || magic != ExtensionMagic {
		return nil, false
	}
	js, null := ext.nullableBytes()
	if ext.err != nil || null {
		return nil, false
	}
	r.b = ext.b
	return bytes.Clone(js), true
}

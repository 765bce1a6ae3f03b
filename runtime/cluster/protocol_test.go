package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// The expected bytes below are written out from the schemas of Kafka's ConnectProtocol and
// IncrementalCooperativeConnectProtocol (KIP-415, KIP-507), field by
// field, without the package's writer.

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func task(c string, n int) connect.TaskID { return connect.TaskID{Connector: c, Task: n} }

var (
	urlW1 = []byte{0x00, 0x0e, 'h', 't', 't', 'p', ':', '/', '/', 'w', '1', ':', '8', '0', '8', '3'} // STRING "http://w1:8083"
	urlW2 = []byte{0x00, 0x0e, 'h', 't', 't', 'p', ':', '/', '/', 'w', '2', ':', '8', '0', '8', '3'} // STRING "http://w2:8083"
	ldr   = []byte{0x00, 0x03, 'l', 'd', 'r'}                                                        // STRING "ldr"
	off5  = []byte{0, 0, 0, 0, 0, 0, 0, 5}                                                           // INT64 5
	off42 = []byte{0, 0, 0, 0, 0, 0, 0, 42}                                                          // INT64 42
	offM1 = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}                                   // INT64 -1
	null  = []byte{0xff, 0xff, 0xff, 0xff}                                                           // null ARRAY / NULLABLE_BYTES
	zero4 = []byte{0, 0, 0, 0}
	magic = []byte{0x00, 0x0d, 'w', 'a', 's', 'm', 'c', 'o', 'n', 'n', 'e', 'c', 't', '/', '1'} // STRING "wasmconnect/1"
)

// connectors a (connector, tasks 0 and 1) and b (task 2 only), as Java's asMap orders them.
var allocAB = cat(
	[]byte{0, 0, 0, 2},                          // ARRAY of 2 ConnectorAssignment
	[]byte{0x00, 0x01, 'a'}, []byte{0, 0, 0, 3}, // "a", 3 tasks:
	[]byte{0xff, 0xff, 0xff, 0xff}, []byte{0, 0, 0, 0}, []byte{0, 0, 0, 1}, // -1, 0, 1
	[]byte{0x00, 0x01, 'b'}, []byte{0, 0, 0, 1}, []byte{0, 0, 0, 2}, // "b", 1 task: 2
)

var workAB = Allocation{Connectors: []string{"a"}, Tasks: []connect.TaskID{task("a", 0), task("a", 1), task("b", 2)}}

func lenBytes(b []byte) []byte { return binary.BigEndian.AppendUint32(nil, uint32(len(b))) }

func TestMemberAssignmentBytes(t *testing.T) {
	extJSON := []byte(`{"error":"value.converter differs"}`)
	tests := []struct {
		name string
		a    MemberAssignment
		want []byte
	}{{
		name: "v0 full assignment",
		a: MemberAssignment{Version: 0, Leader: "ldr", LeaderURL: "http://w1:8083", ConfigOffset: 42,
			Assigned: workAB},
		want: cat([]byte{0, 0}, []byte{0, 0}, ldr, urlW1, off42, allocAB),
	}, {
		name: "v1 incremental with revocation and delay",
		a: MemberAssignment{Version: 1, Leader: "ldr", LeaderURL: "http://w1:8083", ConfigOffset: 42,
			Assigned: workAB, Revoked: Allocation{Connectors: []string{"z"}}, Delay: 1500 * time.Millisecond},
		want: cat([]byte{0, 1}, []byte{0, 0}, ldr, urlW1, off42, allocAB,
			[]byte{0, 0, 0, 1, 0x00, 0x01, 'z', 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}, // revoked: "z" [-1]
			[]byte{0, 0, 0x05, 0xdc}), // delay 1500
	}, {
		name: "v2 empty, CONFIG_MISMATCH",
		a:    MemberAssignment{Version: 2, Error: CodeConfigMismatch, Leader: "ldr", LeaderURL: "http://w1:8083", ConfigOffset: -1},
		want: cat([]byte{0, 2}, []byte{0, 1}, ldr, urlW1, offM1, zero4, zero4, zero4),
	}, {
		name: "v2 with extension message",
		a: MemberAssignment{Version: 2, Error: CodeConfigMismatch, Leader: "ldr", LeaderURL: "http://w1:8083", ConfigOffset: 5,
			Message: "value.converter differs"},
		want: cat([]byte{0, 2}, []byte{0, 1}, ldr, urlW1, off5, zero4, zero4, zero4, magic, lenBytes(extJSON), extJSON),
	}, {
		name: "v0 with extension message: padded with null revoked and zero delay",
		a: MemberAssignment{Version: 0, Error: CodeConfigMismatch, Leader: "ldr", LeaderURL: "http://w1:8083", ConfigOffset: 5,
			Message: "value.converter differs"},
		want: cat([]byte{0, 0}, []byte{0, 1}, ldr, urlW1, off5, zero4, null, zero4, magic, lenBytes(extJSON), extJSON),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.a.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("encoded\n got % x\nwant % x", got, tt.want)
			}
			var back MemberAssignment
			if err := back.UnmarshalBinary(tt.want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tt.a) {
				t.Fatalf("decoded\n got %+v\nwant %+v", back, tt.a)
			}
		})
	}
}

func TestMemberMetadataBytes(t *testing.T) {
	alloc := &MemberAssignment{Version: 1, Leader: "ldr", LeaderURL: "http://w1:8083", ConfigOffset: 42, Assigned: workAB}
	allocBytes := cat([]byte{0, 1}, []byte{0, 0}, ldr, urlW1, off42, allocAB, zero4, zero4)
	ext := &MetadataExtension{Version: "0.1.0", Settings: map[string]string{"value.converter": "J", "config.storage.topic": "cfg"}}
	extJSON := []byte(`{"version":"0.1.0","settings":{"config.storage.topic":"cfg","value.converter":"J"}}`)
	tests := []struct {
		name string
		m    MemberMetadata
		want []byte
	}{{
		name: "v0 as Java sends it",
		m:    MemberMetadata{Version: 0, URL: "http://w2:8083", ConfigOffset: 5},
		want: cat([]byte{0, 0}, urlW2, off5),
	}, {
		name: "v1 without allocation",
		m:    MemberMetadata{Version: 1, URL: "http://w2:8083", ConfigOffset: -1},
		want: cat([]byte{0, 1}, urlW2, offM1, null),
	}, {
		name: "v1 with allocation",
		m:    MemberMetadata{Version: 1, URL: "http://w2:8083", ConfigOffset: 42, Allocation: alloc},
		want: cat([]byte{0, 1}, urlW2, off42, lenBytes(allocBytes), allocBytes),
	}, {
		name: "v2 with allocation and extension",
		m:    MemberMetadata{Version: 2, URL: "http://w2:8083", ConfigOffset: 42, Allocation: alloc, Ext: ext},
		want: cat([]byte{0, 2}, urlW2, off42, lenBytes(allocBytes), allocBytes, magic, lenBytes(extJSON), extJSON),
	}, {
		name: "v0 with extension: padded with a null allocation",
		m:    MemberMetadata{Version: 0, URL: "http://w2:8083", ConfigOffset: 5, Ext: ext},
		want: cat([]byte{0, 0}, urlW2, off5, null, magic, lenBytes(extJSON), extJSON),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("encoded\n got % x\nwant % x", got, tt.want)
			}
			var back MemberMetadata
			if err := back.UnmarshalBinary(tt.want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tt.m) {
				t.Fatalf("decoded\n got %+v\nwant %+v", back, tt.m)
			}
		})
	}
}

func TestDecodeTolerance(t *testing.T) {
	t.Run("assignment missing trailing fields", func(t *testing.T) {
		// v1 assignment cut after configOffset: assignment, revoked and delay take defaults.
		var a MemberAssignment
		if err := a.UnmarshalBinary(cat([]byte{0, 1}, []byte{0, 0}, ldr, urlW1, off42)); err != nil {
			t.Fatal(err)
		}
		want := MemberAssignment{Version: 1, Leader: "ldr", LeaderURL: "http://w1:8083", ConfigOffset: 42}
		if !reflect.DeepEqual(a, want) {
			t.Fatalf("got %+v", a)
		}
		// cut after the assignment array
		if err := a.UnmarshalBinary(cat([]byte{0, 1}, []byte{0, 0}, ldr, urlW1, off42, allocAB)); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Assigned, workAB) || !a.Revoked.Empty() || a.Delay != 0 {
			t.Fatalf("got %+v", a)
		}
	})
	t.Run("assignment version 3 parsed as v1, unknown tail ignored", func(t *testing.T) {
		var a MemberAssignment
		b := cat([]byte{0, 3}, []byte{0, 0}, ldr, urlW1, off42, allocAB, zero4, []byte{0, 0, 0, 7}, []byte("future fields"))
		if err := a.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if a.Version != 3 || !reflect.DeepEqual(a.Assigned, workAB) || a.Delay != 7*time.Millisecond || a.Message != "" {
			t.Fatalf("got %+v", a)
		}
	})
	t.Run("metadata version 3 parsed as v1", func(t *testing.T) {
		var m MemberMetadata
		if err := m.UnmarshalBinary(cat([]byte{0, 3}, urlW2, off5, null, []byte{1, 2, 3})); err != nil {
			t.Fatal(err)
		}
		if m.Version != 3 || m.URL != "http://w2:8083" || m.ConfigOffset != 5 || m.Allocation != nil || m.Ext != nil {
			t.Fatalf("got %+v", m)
		}
	})
	t.Run("v0 metadata tail never read as an allocation", func(t *testing.T) {
		var m MemberMetadata
		if err := m.UnmarshalBinary(cat([]byte{0, 0}, urlW2, off5, []byte{0, 0, 0, 2, 9, 9})); err != nil {
			t.Fatal(err)
		}
		if m.Allocation != nil || m.ConfigOffset != 5 {
			t.Fatalf("got %+v", m)
		}
	})
	t.Run("another extension is ignored", func(t *testing.T) {
		var m MemberMetadata
		other := []byte{0x00, 0x0d, 'w', 'a', 's', 'm', 'c', 'o', 'n', 'n', 'e', 'c', 't', '/', '9'}
		if err := m.UnmarshalBinary(cat([]byte{0, 2}, urlW2, off5, null, other, []byte{0, 0, 0, 2}, []byte("{}"))); err != nil {
			t.Fatal(err)
		}
		if m.Ext != nil {
			t.Fatalf("got %+v", m.Ext)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		for name, b := range map[string][]byte{
			"empty":              nil,
			"no url":             {0, 1},
			"short offset":       cat([]byte{0, 1}, urlW2, []byte{0, 0}),
			"negative string":    {0, 1, 0xff, 0xfe},
			"negative version":   cat([]byte{0xff, 0xff}, urlW2, off5),
			"allocation too big": cat([]byte{0, 1}, urlW2, off5, []byte{0, 0, 0, 50}, []byte{0, 1}),
			"bad allocation":     cat([]byte{0, 1}, urlW2, off5, []byte{0, 0, 0, 2}, []byte{0, 1}),
		} {
			var m MemberMetadata
			if err := m.UnmarshalBinary(b); !errors.Is(err, ErrMalformed) {
				t.Errorf("%s: err = %v, want ErrMalformed", name, err)
			}
		}
		for name, b := range map[string][]byte{
			"no leader":      {0, 1, 0, 0},
			"huge array":     cat([]byte{0, 1}, []byte{0, 0}, ldr, urlW1, off42, []byte{0x7f, 0xff, 0xff, 0xff}),
			"task below -1":  cat([]byte{0, 1}, []byte{0, 0}, ldr, urlW1, off42, []byte{0, 0, 0, 1, 0, 1, 'a', 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe}),
			"truncated task": cat([]byte{0, 1}, []byte{0, 0}, ldr, urlW1, off42, []byte{0, 0, 0, 1, 0, 1, 'a', 0, 0, 0, 2, 0, 0, 0, 0}),
		} {
			var a MemberAssignment
			if err := a.UnmarshalBinary(b); !errors.Is(err, ErrMalformed) {
				t.Errorf("%s: err = %v, want ErrMalformed", name, err)
			}
		}
	})
}

// javaReader reads like Kafka's Schema.read with tolerateMissingFieldsWithDefaults: fields in
// order, a missing trailing field with a default takes it, and trailing bytes are never looked
// at. It is written apart from the package's reader on purpose.
type javaReader struct {
	b   []byte
	bad bool
}

func (r *javaReader) has(n int) bool { return !r.bad && len(r.b) >= n }
func (r *javaReader) i16() int16 {
	if !r.has(2) {
		r.bad = true
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.b))
	r.b = r.b[2:]
	return v
}
func (r *javaReader) i32() int32 {
	if !r.has(4) {
		r.bad = true
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v
}
func (r *javaReader) i64() int64 {
	if !r.has(8) {
		r.bad = true
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}
func (r *javaReader) str() string {
	n := int(r.i16())
	if n < 0 || !r.has(n) {
		r.bad = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
func (r *javaReader) nbytes() []byte {
	n := int(r.i32())
	if n == -1 {
		return nil
	}
	if n < 0 || !r.has(n) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
func (r *javaReader) narray() map[string][]int32 {
	n := int(r.i32())
	if n == -1 || r.bad {
		return nil
	}
	out := map[string][]int32{}
	for range n {
		c := r.str()
		k := int(r.i32())
		if k < 0 || !r.has(4*k) {
			r.bad = true
			return nil
		}
		for range k {
			out[c] = append(out[c], r.i32())
		}
	}
	return out
}

// javaAssignmentV1 is IncrementalCooperativeConnectProtocol.deserializeAssignment, which Java
// applies to every assignment version.
func javaAssignmentV1(b []byte) (assigned, revoked map[string][]int32, delay int32, ok bool) {
	r := &javaReader{b: b}
	r.i16()           // version
	r.i16()           // error
	r.str()           // leader
	r.str()           // leaderUrl
	r.i64()           // configOffset
	if len(r.b) > 0 { // tolerateMissingFieldsWithDefaults
		assigned = r.narray()
	}
	if len(r.b) > 0 {
		revoked = r.narray()
	}
	if len(r.b) > 0 {
		delay = r.i32()
	}
	return assigned, revoked, delay, !r.bad
}

// javaMetadata is ConnectProtocol.deserializeMetadata (v0) or, for v1, the incremental one.
func javaMetadata(b []byte, v1 bool) (url string, offset int64, allocation []byte, ok bool) {
	r := &javaReader{b: b}
	r.i16()
	url = r.str()
	offset = r.i64()
	if v1 && len(r.b) > 0 {
		allocation = r.nbytes()
	}
	return url, offset, allocation, !r.bad
}

// TestJavaIgnoresExtension checks the claim in MemberMetadata's doc comment: Java's readers,
// including the v1 reader applied to v0 payloads, see the standard fields of extended payloads
// and nothing else.
func TestJavaIgnoresExtension(t *testing.T) {
	ext := &MetadataExtension{Version: "0.1.0", Settings: map[string]string{"value.converter": "x"}}
	alloc := &MemberAssignment{Version: 2, Leader: "ldr", ConfigOffset: 3, Assigned: workAB}
	for v := int16(0); v <= 2; v++ {
		m := MemberMetadata{Version: v, URL: "http://w2:8083", ConfigOffset: 9, Ext: ext}
		if v > 0 {
			m.Allocation = alloc
		}
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		for _, asV1 := range []bool{false, true} {
			url, off, al, ok := javaMetadata(b, asV1)
			if !ok || url != m.URL || off != 9 {
				t.Fatalf("v%d read as v1=%v: %q %d ok=%v", v, asV1, url, off, ok)
			}
			if asV1 && v == 0 && al != nil {
				t.Fatalf("v0 read as v1 found an allocation: % x", al)
			}
			if asV1 && v > 0 {
				as, _, _, ok := javaAssignmentV1(al)
				if !ok || len(as) != 2 {
					t.Fatalf("v%d allocation: %v ok=%v", v, as, ok)
				}
			}
		}
	}
	for v := int16(0); v <= 2; v++ {
		a := MemberAssignment{Version: v, Error: CodeConfigMismatch, Leader: "ldr", Assigned: workAB, Message: "settings differ"}
		b, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		as, rev, delay, ok := javaAssignmentV1(b)
		want := map[string][]int32{"a": {-1, 0, 1}, "b": {2}}
		if !ok || !reflect.DeepEqual(as, want) || len(rev) != 0 || delay != 0 {
			t.Fatalf("v%d: assigned %v revoked %v delay %d ok=%v", v, as, rev, delay, ok)
		}
	}
}

func TestProtocols(t *testing.T) {
	for mode, want := range map[string][]string{
		"eager":      {"default"},
		"compatible": {"compatible", "default"},
		"sessioned":  {"sessioned", "compatible", "default"},
		"":           {"sessioned", "compatible", "default"},
	} {
		got, err := Protocols(mode)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Protocols(%q) = %v, %v", mode, got, err)
		}
	}
	if _, err := Protocols("cooperative"); err == nil {
		t.Error("Protocols(cooperative) accepted")
	}
}

func FuzzMemberMetadata(f *testing.F) {
	f.Add(cat([]byte{0, 0}, urlW2, off5))
	f.Add(cat([]byte{0, 2}, urlW2, off42, lenBytes(allocAB), allocAB, magic, []byte{0, 0, 0, 2}, []byte("{}")))
	f.Add(cat([]byte{0, 0}, urlW2, off5, null, magic, []byte{0, 0, 0, 4}, []byte("null")))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m MemberMetadata
		if m.UnmarshalBinary(b) != nil {
			return
		}
		enc, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", m, err)
		}
		var again MemberMetadata
		if err := again.UnmarshalBinary(enc); err != nil {
			t.Fatalf("decoding re-encoded %+v: %v", m, err)
		}
		normExt(&m)
		normExt(&again)
		if !reflect.DeepEqual(m, again) {
			t.Fatalf("round trip\n got %+v\nwant %+v", again, m)
		}
	})
}

func normExt(m *MemberMetadata) {
	if m.Ext != nil && len(m.Ext.Settings) == 0 {
		m.Ext.Settings = nil
	}
}

func FuzzMemberAssignment(f *testing.F) {
	f.Add(cat([]byte{0, 1}, []byte{0, 0}, ldr, urlW1, off42, allocAB, zero4, []byte{0, 0, 0, 9}))
	f.Add(cat([]byte{0, 0}, []byte{0, 1}, ldr, urlW1, off5, zero4, null, zero4, magic, []byte{0, 0, 0, 2}, []byte("{}")))
	f.Fuzz(func(t *testing.T, b []byte) {
		var a MemberAssignment
		if a.UnmarshalBinary(b) != nil {
			return
		}
		enc, err := a.MarshalBinary()
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", a, err)
		}
		var again MemberAssignment
		if err := again.UnmarshalBinary(enc); err != nil {
			t.Fatalf("decoding re-encoded %+v: %v", a, err)
		}
		if !reflect.DeepEqual(a, again) {
			t.Fatalf("round trip\n got %+v\nwant %+v", again, a)
		}
	})
}

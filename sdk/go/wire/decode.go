package wire

import (
	"encoding/binary"
	"fmt"
)

// Decoder reads wire values from a buffer. The first error sticks: later reads return zero values and
// Err reports what went wrong first, so decoding code reads straight through without checking after
// every field.
//
// Byte slices returned by a Decoder alias the input buffer; copy them if the buffer is reused.
type Decoder struct {
	buf   []byte
	off   int
	err   error
	topic string // the last record topic: a batch mostly has one, decoded without allocating again
}

// NewDecoder returns a Decoder reading b.
func NewDecoder(b []byte) *Decoder { return &Decoder{buf: b} }

// Err returns the first decoding error, if any.
func (d *Decoder) Err() error { return d.err }

// Remaining returns the number of unread bytes.
func (d *Decoder) Remaining() int { return len(d.buf) - d.off }

// part names the piece of a field being read, so that error messages can say "record topic length"
// without building that string on every read (decoding is on the per-record hot path).
type part string

const (
	whole    part = ""
	length   part = " length"
	tagPart  part = " tag"
	countPrt part = " count"
)

func (d *Decoder) fail(what string, p part, need int) {
	if d.err == nil {
		d.err = fmt.Errorf("wire: truncated %s%s at byte %d: need %d bytes, have %d", what, p, d.off, need, len(d.buf)-d.off)
	}
}

func (d *Decoder) take(what string, p part, n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.buf)-d.off {
		d.fail(what, p, n)
		return nil
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

// U8 reads one byte.
func (d *Decoder) U8(what string) uint8 { return d.u8(what, whole) }

func (d *Decoder) u8(what string, p part) uint8 {
	b := d.take(what, p, 1)
	if b == nil {
		return 0
	}
	return b[0]
}

// U32 reads a little-endian uint32.
func (d *Decoder) U32(what string) uint32 { return d.u32(what, whole) }

func (d *Decoder) u32(what string, p part) uint32 {
	b := d.take(what, p, 4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// I64 reads a little-endian int64.
func (d *Decoder) I64(what string) int64 {
	b := d.take(what, whole, 8)
	if b == nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// Bytes reads a u32 length and that many bytes.
func (d *Decoder) Bytes(what string) []byte {
	n := d.u32(what, length)
	if n > uint32(len(d.buf)) { // larger than the whole buffer: surely truncated or garbage
		d.fail(what, whole, int(min(n, 1<<31-1)))
		return nil
	}
	return d.take(what, whole, int(n))
}

// String reads a u32 length and that many bytes as a string.
func (d *Decoder) String(what string) string { return string(d.Bytes(what)) }

// NullableBytes reads an i32 length (-1 = nil) and the bytes.
func (d *Decoder) NullableBytes(what string) []byte {
	n := int32(d.u32(what, length))
	if n == -1 {
		return nil
	}
	if n < 0 || int(n) > len(d.buf) {
		d.fail(what, whole, int(n))
		return nil
	}
	b := d.take(what, whole, int(n))
	if b == nil && d.err == nil {
		b = []byte{}
	}
	return b
}

// Data reads a Data value.
func (d *Decoder) Data(what string) Data {
	tag := Tag(d.u8(what, tagPart))
	switch tag {
	case TagNull:
		return Data{}
	case TagBytes, TagString:
		return Data{Tag: tag, Bytes: d.Bytes(what)}
	case TagJSON:
		schema := d.Bytes(what)
		return Data{Tag: tag, Schema: schema, Bytes: d.Bytes(what)}
	default:
		if d.err == nil {
			d.err = fmt.Errorf("wire: %s has unknown data tag %d at byte %d", what, tag, d.off-1)
		}
		return Data{}
	}
}

// count reads a batch count and checks it against the bytes left, so that a hostile count cannot make
// the decoder allocate gigabytes before it notices the input is short.
func (d *Decoder) count(what string, minElemSize int) int {
	n := d.u32(what, countPrt)
	if d.err == nil && uint64(n)*uint64(minElemSize) > uint64(d.Remaining()) {
		d.err = fmt.Errorf("wire: %s count %d is larger than the %d bytes left can hold", what, n, d.Remaining())
		return 0
	}
	return int(n)
}

// Record reads one record into r. Byte fields alias the input.
func (d *Decoder) Record(r *Record) {
	if d.err != nil || !d.recordFast(r) {
		d.recordSlow(r)
	}
}

// entryHead reads the input and status that start an entry of a transform result with one bounds
// check; false (and nothing read) if fewer than 5 bytes are left, for the checked reads to say so.
func (d *Decoder) entryHead() (int, TransformStatus, bool) {
	b := d.buf[d.off:]
	if d.err != nil || len(b) < 5 {
		return 0, 0, false
	}
	d.off += 5
	return int(binary.LittleEndian.Uint32(b)), TransformStatus(b[4]), true
}

// Converted reads what follows a CONVERTED entry of a TRANSFORM_CONVERT result (sdk/ABI.md §5.9)
// into c. Byte fields alias the input.
func (d *Decoder) Converted(c *ConvertedRecord) {
	if d.err != nil || !d.convertedFast(c) {
		d.convertedSlow(c)
	}
}

// convertedFast is Converted of a well-formed entry, with one bounds check per field; false (and
// nothing read) otherwise, for convertedSlow to say what is wrong.
func (d *Decoder) convertedFast(c *ConvertedRecord) bool {
	b := d.buf[d.off:]
	t, p, ok := lenBytes(b, 0)
	if !ok || len(b)-p < 12 {
		return false
	}
	topic := d.topic
	if string(t) != topic {
		topic = string(t)
		d.topic = topic
	}
	partition := int32(binary.LittleEndian.Uint32(b[p:]))
	ts := int64(binary.LittleEndian.Uint64(b[p+4:]))
	var key, value []byte
	if key, p, ok = nullableAt(b, p+12); !ok {
		return false
	}
	if value, p, ok = nullableAt(b, p); !ok {
		return false
	}
	var hs []Header
	if hs, p, ok = headersAt(b, p); !ok {
		return false
	}
	// Field by field: a composite literal of a struct with pointers is built aside and copied in
	// with the runtime's typed copy, which took most of the time here.
	c.Topic, c.Partition, c.Timestamp = topic, partition, ts
	c.Key, c.Value, c.Headers = key, value, hs
	d.off += p
	return true
}

// convertedSlow is Converted one field at a time, each checked and named in the error.
func (d *Decoder) convertedSlow(c *ConvertedRecord) {
	*c = ConvertedRecord{}
	if t := d.Bytes("record topic"); string(t) == d.topic {
		c.Topic = d.topic
	} else {
		c.Topic = string(t)
		d.topic = c.Topic
	}
	c.Partition = int32(d.U32("record partition"))
	c.Timestamp = d.I64("record timestamp")
	c.Key = d.NullableBytes("record key")
	c.Value = d.NullableBytes("record value")
	c.Headers = d.headers()
}

// headers decodes a record's headers; nil when it has none.
func (d *Decoder) headers() []Header {
	n := d.count("record headers", 5)
	if n == 0 {
		return nil
	}
	hs := make([]Header, n)
	for i := range hs {
		hs[i] = Header{Key: d.String("header key"), Value: d.Data("header value")}
	}
	return hs
}

// recordSlow is Record one field at a time, each checked and named in the error.
func (d *Decoder) recordSlow(r *Record) {
	if t := d.Bytes("record topic"); string(t) == d.topic {
		r.Topic = d.topic
	} else {
		r.Topic = string(t)
		d.topic = r.Topic
	}
	r.Partition = int32(d.U32("record partition"))
	r.Offset = d.I64("record offset")
	r.Timestamp = d.I64("record timestamp")
	r.Key = d.Data("record key")
	r.Value = d.Data("record value")
	r.Headers = d.headers()
	r.SourcePartition = d.Bytes("record source partition")
	r.SourceOffset = d.Bytes("record source offset")
}

// recordFast is Record for a well-formed record: each field is checked against the bytes left and
// decoded in place, without Record's error bookkeeping per field (decoding every polled and every
// transformed record, Record is the host's largest cost per record after the producer). On
// anything out of the ordinary it reports false, having consumed nothing, and Record decodes
// the record again, naming the field that is wrong.
func (d *Decoder) recordFast(r *Record) bool {
	b := d.buf[d.off:]
	t, p, ok := lenBytes(b, 0)
	if !ok || len(b)-p < 20 {
		return false
	}
	if string(t) == d.topic {
		r.Topic = d.topic
	} else {
		r.Topic = string(t)
		d.topic = r.Topic
	}
	r.Partition = int32(binary.LittleEndian.Uint32(b[p:]))
	r.Offset = int64(binary.LittleEndian.Uint64(b[p+4:]))
	r.Timestamp = int64(binary.LittleEndian.Uint64(b[p+12:]))
	p += 20
	if p, ok = dataAt(b, p, &r.Key); !ok {
		return false
	}
	if p, ok = dataAt(b, p, &r.Value); !ok {
		return false
	}
	if r.Headers, p, ok = headersAt(b, p); !ok {
		return false
	}
	if r.SourcePartition, p, ok = lenBytes(b, p); !ok {
		return false
	}
	if r.SourceOffset, p, ok = lenBytes(b, p); !ok {
		return false
	}
	d.off += p
	return true
}

// lenBytes reads a u32 length and that many bytes of b at p, and returns the offset after them;
// false if b is too short.
func lenBytes(b []byte, p int) ([]byte, int, bool) {
	if len(b)-p < 4 {
		return nil, p, false
	}
	n := uint64(binary.LittleEndian.Uint32(b[p:]))
	p += 4
	if n > uint64(len(b)-p) {
		return nil, p, false
	}
	e := p + int(n)
	return b[p:e:e], e, true
}

// nullableAt reads nullable bytes (an i32 length, -1 for nil, and the bytes) of b at p, and
// returns the offset after them; false if b is too short or the length negative.
func nullableAt(b []byte, p int) ([]byte, int, bool) {
	if len(b)-p < 4 {
		return nil, p, false
	}
	n := int32(binary.LittleEndian.Uint32(b[p:]))
	p += 4
	if n == -1 {
		return nil, p, true
	}
	if n < 0 || int(n) > len(b)-p {
		return nil, p, false
	}
	e := p + int(n)
	return b[p:e:e], e, true
}

// headersAt reads a record's headers (a u32 count, then each key and value) of b at p, nil when
// there are none, and returns the offset after them; false if b is too short.
func headersAt(b []byte, p int) ([]Header, int, bool) {
	if len(b)-p < 4 {
		return nil, p, false
	}
	n := int(binary.LittleEndian.Uint32(b[p:]))
	p += 4
	if n == 0 {
		return nil, p, true
	}
	if n > (len(b)-p)/5 {
		return nil, p, false
	}
	hs := make([]Header, n)
	for i := range hs {
		h := &hs[i]
		k, q, ok := lenBytes(b, p)
		if !ok {
			return nil, p, false
		}
		h.Key = string(k)
		if p, ok = dataAt(b, q, &h.Value); !ok {
			return nil, p, false
		}
	}
	return hs, p, true
}

// dataAt reads a Data value of b at p into dst, and returns the offset after it; false if b is
// too short or the tag unknown.
func dataAt(b []byte, p int, dst *Data) (int, bool) {
	if p >= len(b) {
		return p, false
	}
	tag := Tag(b[p])
	p++
	var ok bool
	switch tag {
	case TagNull:
		*dst = Data{}
		return p, true
	case TagBytes, TagString:
		var v []byte
		v, p, ok = lenBytes(b, p)
		*dst = Data{Tag: tag, Bytes: v}
	case TagJSON:
		var schema, v []byte
		if schema, p, ok = lenBytes(b, p); ok {
			v, p, ok = lenBytes(b, p)
		}
		*dst = Data{Tag: tag, Schema: schema, Bytes: v}
	}
	return p, ok
}

// minRecordSize is the smallest encoding of a record: empty topic, partition, offset, timestamp, two
// null data values, no headers, two empty byte strings.
const minRecordSize = 4 + 4 + 8 + 8 + 1 + 1 + 4 + 4 + 4

// DecodeRecords decodes a record batch. The records' byte fields alias b.
func DecodeRecords(b []byte) ([]Record, error) { return DecodeRecordsInto(nil, b) }

// DecodeRecordsInto decodes a record batch into dst's backing array when it is large enough (a
// caller that polls in a loop reuses one), else into a new one. The records' byte fields alias b.
func DecodeRecordsInto(dst []Record, b []byte) ([]Record, error) {
	d := NewDecoder(b)
	n := d.count("record batch", minRecordSize)
	rs := dst[:0]
	if cap(rs) < n {
		rs = make([]Record, n)
	}
	rs = rs[:n]
	for i := range rs {
		d.Record(&rs[i])
	}
	return rs, d.finish("record batch")
}

// DecodeDataBatch decodes a data batch. Byte fields alias b.
func DecodeDataBatch(b []byte) ([]TopicData, error) {
	d := NewDecoder(b)
	n := d.count("data batch", 5)
	ds := make([]TopicData, n)
	for i := range ds {
		ds[i] = TopicData{Topic: d.String("topic"), Value: d.Data("value")}
	}
	return ds, d.finish("data batch")
}

// DecodeBytesBatch decodes a bytes batch. Elements alias b; nulls are nil.
func DecodeBytesBatch(b []byte) ([][]byte, error) { return DecodeBytesBatchInto(nil, b) }

// DecodeBytesBatchInto decodes a bytes batch into dst's backing array when it is large enough, else
// into a new one. Elements alias b; nulls are nil.
func DecodeBytesBatchInto(dst [][]byte, b []byte) ([][]byte, error) {
	d := NewDecoder(b)
	n := d.count("bytes batch", 4)
	bs := resize(dst, n)
	for i := range bs {
		bs[i] = d.NullableBytes("bytes")
	}
	return bs, d.finish("bytes batch")
}

// DecodeTopicBytesBatch decodes a bytes batch with topics. Elements alias b; nulls are nil.
func DecodeTopicBytesBatch(b []byte) ([]TopicBytes, error) {
	d := NewDecoder(b)
	n := d.count("bytes batch", 8)
	bs := make([]TopicBytes, n)
	for i := range bs {
		bs[i] = TopicBytes{Topic: d.String("topic"), Bytes: d.NullableBytes("bytes")}
	}
	return bs, d.finish("bytes batch")
}

func (d *Decoder) finish(what string) error {
	if d.err == nil && d.Remaining() != 0 {
		d.err = fmt.Errorf("wire: %d unexpected bytes after the %s", d.Remaining(), what)
	}
	return d.err
}

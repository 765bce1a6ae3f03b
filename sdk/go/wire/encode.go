package wire

import (
	"encoding/binary"
	"math"
)

// The Append functions append the wire form of a value to dst and return the extended slice, in the
// style of strconv.Append*, so callers can reuse one buffer across batches.

// AppendU32 appends a little-endian uint32.
func AppendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }

// AppendI64 appends a little-endian int64.
func AppendI64(dst []byte, v int64) []byte { return binary.LittleEndian.AppendUint64(dst, uint64(v)) }

// AppendBytes appends a u32 length and the bytes.
func AppendBytes(dst, b []byte) []byte {
	dst = AppendU32(dst, uint32(len(b)))
	return append(dst, b...)
}

// AppendString appends a u32 length and the UTF-8 bytes of s.
func AppendString(dst []byte, s string) []byte {
	dst = AppendU32(dst, uint32(len(s)))
	return append(dst, s...)
}

// AppendNullableBytes appends an i32 length (-1 for nil) and the bytes.
func AppendNullableBytes(dst, b []byte) []byte {
	if b == nil {
		return AppendU32(dst, math.MaxUint32)
	}
	return AppendBytes(dst, b)
}

// AppendData appends a Data value.
func AppendData(dst []byte, d Data) []byte {
	dst = append(dst, byte(d.Tag))
	switch d.Tag {
	case TagBytes, TagString:
		dst = AppendBytes(dst, d.Bytes)
	case TagJSON:
		dst = AppendBytes(dst, d.Schema)
		dst = AppendBytes(dst, d.Bytes)
	}
	return dst
}

// AppendRecord appends one record.
func AppendRecord(dst []byte, r *Record) []byte {
	dst = appendRecordFields(dst, r, r.Offset)
	dst = AppendBytes(dst, r.SourcePartition)
	return AppendBytes(dst, r.SourceOffset)
}

// appendRecordFields appends a record's fields up to and including its headers, with offset as
// its offset.
func appendRecordFields(dst []byte, r *Record, offset int64) []byte {
	dst = AppendString(dst, r.Topic)
	dst = AppendU32(dst, uint32(r.Partition))
	dst = AppendI64(dst, offset)
	dst = AppendI64(dst, r.Timestamp)
	dst = AppendData(dst, r.Key)
	dst = AppendData(dst, r.Value)
	dst = AppendU32(dst, uint32(len(r.Headers)))
	for _, h := range r.Headers {
		dst = AppendString(dst, h.Key)
		dst = AppendData(dst, h.Value)
	}
	return dst
}

// AppendRecords appends a record batch.
func AppendRecords(dst []byte, rs []Record) []byte {
	dst = AppendU32(dst, uint32(len(rs)))
	for i := range rs {
		dst = AppendRecord(dst, &rs[i])
	}
	return dst
}

// AppendDataBatch appends a data batch.
func AppendDataBatch(dst []byte, ds []TopicData) []byte {
	dst = AppendU32(dst, uint32(len(ds)))
	for _, d := range ds {
		dst = AppendString(dst, d.Topic)
		dst = AppendData(dst, d.Value)
	}
	return dst
}

// AppendBytesBatch appends a bytes batch; nil elements are nulls.
func AppendBytesBatch(dst []byte, bs [][]byte) []byte {
	dst = AppendU32(dst, uint32(len(bs)))
	for _, b := range bs {
		dst = AppendNullableBytes(dst, b)
	}
	return dst
}

// AppendTopicBytesBatch appends a bytes batch with topics.
func AppendTopicBytesBatch(dst []byte, bs []TopicBytes) []byte {
	dst = AppendU32(dst, uint32(len(bs)))
	for _, b := range bs {
		dst = AppendString(dst, b.Topic)
		dst = AppendNullableBytes(dst, b.Bytes)
	}
	return dst
}

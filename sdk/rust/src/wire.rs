//! The binary layouts of sdk/ABI.md §5: data values, record batches, data and bytes batches,
//! transform and test results. Decoded values borrow from the input buffer, which the host owns and
//! reuses: they live only as long as the call.

use std::borrow::Cow;

/// A key, value or header value in Connect's data model (sdk/ABI.md §5.1).
#[derive(Clone, Debug, PartialEq)]
pub enum Data<'a> {
    /// An absent value: a Kafka null, a tombstone.
    Null,
    /// Raw bytes (schema: optional bytes).
    Bytes(Cow<'a, [u8]>),
    /// UTF-8 text (schema: string). The SDK does not check that it is valid UTF-8.
    String(Cow<'a, [u8]>),
    /// A Connect value as JSON, with its Connect schema as JsonConverter writes it (empty: none).
    Json { schema: Cow<'a, [u8]>, payload: Cow<'a, [u8]> },
}

impl<'a> Default for Data<'a> {
    fn default() -> Self {
        Data::Null
    }
}

impl<'a> Data<'a> {
    /// A text value borrowing `s`.
    pub fn str(s: &'a str) -> Data<'a> {
        Data::String(Cow::Borrowed(s.as_bytes()))
    }

    /// A text value borrowing the bytes `b` (UTF-8 by contract).
    pub fn text(b: &'a [u8]) -> Data<'a> {
        Data::String(Cow::Borrowed(b))
    }

    /// A raw bytes value borrowing `b`.
    pub fn bytes(b: &'a [u8]) -> Data<'a> {
        Data::Bytes(Cow::Borrowed(b))
    }

    /// A JSON value with an optional schema (empty: schemaless).
    pub fn json(schema: &'a [u8], payload: &'a [u8]) -> Data<'a> {
        Data::Json { schema: Cow::Borrowed(schema), payload: Cow::Borrowed(payload) }
    }

    /// Whether this is the null value.
    pub fn is_null(&self) -> bool {
        matches!(self, Data::Null)
    }

    /// A copy that owns its bytes, to keep after the call.
    pub fn into_owned(self) -> Data<'static> {
        match self {
            Data::Null => Data::Null,
            Data::Bytes(b) => Data::Bytes(Cow::Owned(b.into_owned())),
            Data::String(b) => Data::String(Cow::Owned(b.into_owned())),
            Data::Json { schema, payload } => Data::Json { schema: Cow::Owned(schema.into_owned()), payload: Cow::Owned(payload.into_owned()) },
        }
    }
}

/// Data tags (sdk/ABI.md §5.1).
pub const TAG_NULL: u8 = 0;
pub const TAG_BYTES: u8 = 1;
pub const TAG_STRING: u8 = 2;
pub const TAG_JSON: u8 = 3;

/// A record header.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Header<'a> {
    pub key: Cow<'a, str>,
    pub value: Data<'a>,
}

/// A record as it crosses the ABI (sdk/ABI.md §5.2): a sink record, or a record a transformation or
/// predicate sees.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Record<'a> {
    pub topic: Cow<'a, str>,
    /// -1: let the producer choose (source records).
    pub partition: i32,
    /// The Kafka offset of a sink record; -1 for a source record.
    pub offset: i64,
    /// Milliseconds since the epoch; -1: none.
    pub timestamp: i64,
    pub key: Data<'a>,
    pub value: Data<'a>,
    pub headers: Vec<Header<'a>>,
    /// Source records: the source partition and offset JSON (empty when absent).
    pub source_partition: &'a [u8],
    pub source_offset: &'a [u8],
}

// Encoding: functions that append to a Vec, in the style of the Go SDK's wire.Append*.

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends a u32 length and the bytes.
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u32(out, b.len() as u32);
    out.extend_from_slice(b);
}

/// Appends an i32 length (-1 for `None`) and the bytes.
pub fn put_nullable_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => put_u32(out, u32::MAX),
        Some(b) => put_bytes(out, b),
    }
}

/// Appends a data value.
pub fn put_data(out: &mut Vec<u8>, d: &Data) {
    match d {
        Data::Null => out.push(TAG_NULL),
        Data::Bytes(b) => {
            out.push(TAG_BYTES);
            put_bytes(out, b);
        }
        Data::String(b) => {
            out.push(TAG_STRING);
            put_bytes(out, b);
        }
        Data::Json { schema, payload } => {
            out.push(TAG_JSON);
            put_bytes(out, schema);
            put_bytes(out, payload);
        }
    }
}

/// Appends a record's fields up to and including its headers, with `offset` as its offset.
pub fn put_record_fields(out: &mut Vec<u8>, r: &Record, offset: i64) {
    put_bytes(out, r.topic.as_bytes());
    put_u32(out, r.partition as u32);
    put_i64(out, offset);
    put_i64(out, r.timestamp);
    put_data(out, &r.key);
    put_data(out, &r.value);
    put_headers(out, &r.headers);
}

pub fn put_headers(out: &mut Vec<u8>, hs: &[Header]) {
    put_u32(out, hs.len() as u32);
    for h in hs {
        put_bytes(out, h.key.as_bytes());
        put_data(out, &h.value);
    }
}

/// Appends a whole record.
pub fn put_record(out: &mut Vec<u8>, r: &Record) {
    put_record_fields(out, r, r.offset);
    put_bytes(out, r.source_partition);
    put_bytes(out, r.source_offset);
}

/// Appends a record batch.
pub fn put_records(out: &mut Vec<u8>, rs: &[Record]) {
    put_u32(out, rs.len() as u32);
    for r in rs {
        put_record(out, r);
    }
}

/// Overwrites the u32 at `at` (a count written before its elements were known).
pub fn patch_u32(out: &mut [u8], at: usize, v: u32) {
    out[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Reads wire values from a buffer. The first error sticks: later reads return zero values and
/// `err` reports what went wrong first, so decoding code reads straight through. Its messages are
/// those of the Go SDK's wire.Decoder.
pub struct Decoder<'a> {
    buf: &'a [u8],
    off: usize,
    err: Option<String>,
}

impl<'a> Decoder<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, off: 0, err: None }
    }

    /// The first error, if any.
    pub fn err(&self) -> Option<&str> {
        self.err.as_deref()
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.off
    }

    fn fail(&mut self, what: &str, part: &str, need: usize) {
        if self.err.is_none() {
            self.err = Some(format!("wire: truncated {}{} at byte {}: need {} bytes, have {}", what, part, self.off, need, self.remaining()));
        }
    }

    fn take(&mut self, what: &str, part: &str, n: usize) -> &'a [u8] {
        if self.err.is_some() {
            return &[];
        }
        if n > self.remaining() {
            self.fail(what, part, n);
            return &[];
        }
        let b = &self.buf[self.off..self.off + n];
        self.off += n;
        b
    }

    fn u32_part(&mut self, what: &str, part: &str) -> u32 {
        let b = self.take(what, part, 4);
        if b.len() < 4 {
            return 0;
        }
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    pub fn u8(&mut self, what: &str) -> u8 {
        self.take(what, "", 1).first().copied().unwrap_or(0)
    }

    pub fn u32(&mut self, what: &str) -> u32 {
        self.u32_part(what, "")
    }

    pub fn i64(&mut self, what: &str) -> i64 {
        let b = self.take(what, "", 8);
        if b.len() < 8 {
            return 0;
        }
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        i64::from_le_bytes(a)
    }

    /// A u32 length and that many bytes.
    pub fn bytes(&mut self, what: &str) -> &'a [u8] {
        let n = self.u32_part(what, " length") as usize;
        if n > self.buf.len() {
            self.fail(what, "", n.min(i32::MAX as usize));
            return &[];
        }
        self.take(what, "", n)
    }

    /// A u32 length and that many bytes of UTF-8 text. Invalid UTF-8 is an error.
    pub fn str(&mut self, what: &str) -> &'a str {
        let at = self.off;
        let b = self.bytes(what);
        match std::str::from_utf8(b) {
            Ok(s) => s,
            Err(_) => {
                if self.err.is_none() {
                    self.err = Some(format!("wire: {} at byte {} is not valid UTF-8", what, at));
                }
                ""
            }
        }
    }

    /// An i32 length (-1: `None`) and the bytes.
    pub fn nullable_bytes(&mut self, what: &str) -> Option<&'a [u8]> {
        let n = self.u32_part(what, " length") as i32;
        if n == -1 {
            return None;
        }
        if n < 0 || n as usize > self.buf.len() {
            self.fail(what, "", n.max(0) as usize);
            return None;
        }
        Some(self.take(what, "", n as usize))
    }

    /// A data value.
    pub fn data(&mut self, what: &str) -> Data<'a> {
        let tag = self.take(what, " tag", 1).first().copied().unwrap_or(TAG_NULL);
        match tag {
            TAG_NULL => Data::Null,
            TAG_BYTES => Data::Bytes(Cow::Borrowed(self.bytes(what))),
            TAG_STRING => Data::String(Cow::Borrowed(self.bytes(what))),
            TAG_JSON => {
                let schema = self.bytes(what);
                Data::Json { schema: Cow::Borrowed(schema), payload: Cow::Borrowed(self.bytes(what)) }
            }
            t => {
                if self.err.is_none() {
                    self.err = Some(format!("wire: {} has unknown data tag {} at byte {}", what, t, self.off - 1));
                }
                Data::Null
            }
        }
    }

    /// A batch count, checked against the bytes left, so that a hostile count cannot make the
    /// decoder allocate gigabytes before it notices the input is short.
    pub fn count(&mut self, what: &str, min_elem_size: usize) -> usize {
        let n = self.u32_part(what, " count") as usize;
        if self.err.is_none() && n.saturating_mul(min_elem_size) > self.remaining() {
            self.err = Some(format!("wire: {} count {} is larger than the {} bytes left can hold", what, n, self.remaining()));
            return 0;
        }
        n
    }

    /// One record; byte fields borrow the input.
    pub fn record(&mut self) -> Record<'a> {
        let topic = Cow::Borrowed(self.str("record topic"));
        let partition = self.u32("record partition") as i32;
        let offset = self.i64("record offset");
        let timestamp = self.i64("record timestamp");
        let key = self.data("record key");
        let value = self.data("record value");
        let n = self.count("record headers", 5);
        let mut headers = Vec::new();
        if n > 0 {
            headers.reserve(n);
            for _ in 0..n {
                let key = Cow::Borrowed(self.str("header key"));
                headers.push(Header { key, value: self.data("header value") });
            }
        }
        let source_partition = self.bytes("record source partition");
        let source_offset = self.bytes("record source offset");
        Record { topic, partition, offset, timestamp, key, value, headers, source_partition, source_offset }
    }

    /// The error, or one for unread bytes after a batch.
    pub fn finish(&mut self, what: &str) -> Result<(), String> {
        if self.err.is_none() && self.remaining() != 0 {
            self.err = Some(format!("wire: {} unexpected bytes after the {}", self.remaining(), what));
        }
        match self.err.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The smallest encoding of a record: empty topic, partition, offset, timestamp, two null values, no
/// headers, two empty byte strings.
pub const MIN_RECORD_SIZE: usize = 4 + 4 + 8 + 8 + 1 + 1 + 4 + 4 + 4;

/// Decodes a record batch; the records borrow `b`.
pub fn decode_records(b: &[u8]) -> Result<Vec<Record<'_>>, String> {
    decode_records_into(b, |_, r| r)
}

/// Decodes a record batch into what `f` makes of each record and its index, so that a caller
/// that wraps the records does not build a second vector. A well-formed batch is read by `Quick`;
/// one it cannot read is decoded again by the checked `Decoder`, for the error.
pub fn decode_records_into<'a, T>(b: &'a [u8], mut f: impl FnMut(usize, Record<'a>) -> T) -> Result<Vec<T>, String> {
    if let Some(rs) = Quick::records(b, &mut f) {
        return Ok(rs);
    }
    let mut d = Decoder::new(b);
    let n = d.count("record batch", MIN_RECORD_SIZE);
    let mut rs = Vec::with_capacity(n);
    for i in 0..n {
        rs.push(f(i, d.record()));
        if d.err().is_some() {
            break;
        }
    }
    d.finish("record batch")?;
    Ok(rs)
}

/// A record batch reader for well-formed input: each read is one bounds check and gives up with
/// `None` on anything short or invalid, without the `Decoder`'s error bookkeeping. Decoding is a
/// large part of a transform call's per-record cost in a guest, where every function entered and
/// every check costs its fuel too.
struct Quick<'a> {
    buf: &'a [u8],
    off: usize,
    /// The last record's topic: a batch's records mostly share it, and equal bytes need no
    /// second UTF-8 check.
    topic: &'a str,
}

impl<'a> Quick<'a> {
    fn records<T>(buf: &'a [u8], f: &mut impl FnMut(usize, Record<'a>) -> T) -> Option<Vec<T>> {
        let mut q = Quick { buf, off: 0, topic: "" };
        let n = q.u32()? as usize;
        if n.saturating_mul(MIN_RECORD_SIZE) > q.buf.len() - q.off {
            return None;
        }
        let mut rs = Vec::with_capacity(n);
        for i in 0..n {
            rs.push(f(i, q.record()?));
        }
        if q.off != q.buf.len() {
            return None;
        }
        Some(rs)
    }

    #[inline(always)]
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let b = self.buf.get(self.off..self.off.checked_add(n)?)?;
        self.off += n;
        Some(b)
    }

    /// The next N bytes as an array: one bounds check and one load.
    #[inline(always)]
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let a: [u8; N] = self.buf.get(self.off..)?.get(..N)?.try_into().ok()?;
        self.off += N;
        Some(a)
    }

    #[inline(always)]
    fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    #[inline(always)]
    fn i64(&mut self) -> Option<i64> {
        self.array().map(i64::from_le_bytes)
    }

    #[inline(always)]
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    #[inline(always)]
    fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }

    #[inline(always)]
    fn data(&mut self) -> Option<Data<'a>> {
        Some(match self.array::<1>()?[0] {
            TAG_NULL => Data::Null,
            TAG_BYTES => Data::Bytes(Cow::Borrowed(self.bytes()?)),
            TAG_STRING => Data::String(Cow::Borrowed(self.bytes()?)),
            TAG_JSON => {
                let schema = self.bytes()?;
                Data::Json { schema: Cow::Borrowed(schema), payload: Cow::Borrowed(self.bytes()?) }
            }
            _ => return None,
        })
    }

    // Inlined into the loop of `records`, so that the record is built where it goes rather than
    // returned and copied (twice: a guest pays a memory.copy call for each).
    #[inline(always)]
    fn record(&mut self) -> Option<Record<'a>> {
        let t = self.bytes()?;
        if !crate::words::same(t, self.topic.as_bytes()) {
            self.topic = std::str::from_utf8(t).ok()?;
        }
        let topic = Cow::Borrowed(self.topic);
        let partition = self.u32()? as i32;
        let offset = self.i64()?;
        let timestamp = self.i64()?;
        let key = self.data()?;
        let value = self.data()?;
        let n = self.u32()? as usize;
        let mut headers = Vec::new();
        if n > 0 {
            if n.saturating_mul(5) > self.buf.len() - self.off {
                return None;
            }
            headers.reserve(n);
            for _ in 0..n {
                let key = Cow::Borrowed(self.str()?);
                headers.push(Header { key, value: self.data()? });
            }
        }
        let source_partition = self.bytes()?;
        let source_offset = self.bytes()?;
        Some(Record { topic, partition, offset, timestamp, key, value, headers, source_partition, source_offset })
    }
}

/// Transform result statuses (sdk/ABI.md §5.6).
pub const STATUS_RECORD: u8 = 0;
pub const STATUS_FAILED: u8 = 1;
pub const STATUS_UNCHANGED: u8 = 2;
/// TRANSFORM_CONVERT (sdk/ABI.md §5.9): a record with its key and value converted to bytes.
pub const STATUS_CONVERTED: u8 = 3;

/// Test result statuses (sdk/ABI.md §5.7).
pub const TEST_NO_MATCH: u8 = 0;
pub const TEST_MATCH: u8 = 1;
pub const TEST_FAILED: u8 = 2;

/// The Java class of Kafka's data errors, the default class of a record failure.
pub const DATA_EXCEPTION: &str = "org.apache.kafka.connect.errors.DataException";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trip() {
        let r = Record {
            topic: "t".into(),
            partition: 3,
            offset: 42,
            timestamp: 1700000000000,
            key: Data::Null,
            value: Data::json(b"", b"{\"a\":1}"),
            headers: vec![Header { key: "h".into(), value: Data::bytes(b"\x00\x01") }],
            source_partition: b"{\"filename\":\"f\"}",
            source_offset: b"{\"position\":4}",
        };
        let mut out = Vec::new();
        put_records(&mut out, &[r.clone(), Record { topic: "u".into(), value: Data::str("x"), ..Default::default() }]);
        let rs = decode_records(&out).unwrap();
        assert_eq!(rs.len(), 2);
        assert_eq!(rs[0], r);
        assert_eq!(rs[1].value, Data::str("x"));
    }

    #[test]
    fn truncated_and_hostile() {
        let mut out = Vec::new();
        put_records(&mut out, &[Record { topic: "topic".into(), ..Default::default() }]);
        let e = decode_records(&out[..out.len() - 1]).unwrap_err();
        assert!(e.starts_with("wire: truncated record source offset"), "{}", e);
        let e = decode_records(&[0xff, 0xff, 0xff, 0x7f]).unwrap_err();
        assert_eq!(e, "wire: record batch count 2147483647 is larger than the 0 bytes left can hold");
        out.push(0);
        assert_eq!(decode_records(&out).unwrap_err(), "wire: 1 unexpected bytes after the record batch");
        // What Quick gives up on, the checked decoder reports.
        let mut bad = Vec::new();
        put_records(&mut bad, &[Record { topic: "t".into(), ..Default::default() }]);
        bad[8] = 0xff;
        assert_eq!(decode_records(&bad).unwrap_err(), "wire: record topic at byte 4 is not valid UTF-8");
        let mut bad = Vec::new();
        put_records(&mut bad, &[Record { value: Data::str("x"), ..Default::default() }]);
        bad[4 + 4 + 4 + 8 + 8 + 1] = 9;
        assert_eq!(decode_records(&bad).unwrap_err(), "wire: record value has unknown data tag 9 at byte 29");
    }
}

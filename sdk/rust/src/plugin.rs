//! What a plugin implements: the connector and task traits of sources and sinks, converters,
//! transformations and predicates, and the batch a source task polls into.

use crate::config::{Config, ConfigDef, Errors};
use crate::context::TaskContext;
use crate::error::Result;
use crate::json::Value;
use crate::chain::Batch;
use crate::keep::Keep;
use crate::wire::{self, Data, Header, Record};

/// Describes a plugin in the module's descriptor (sdk/ABI.md §3).
pub struct Info {
    /// The short name users may write (FileStreamSource); required.
    pub name: &'static str,
    /// The fully qualified class name; empty means `name`.
    pub class: &'static str,
    /// More accepted names.
    pub aliases: &'static [&'static str],
    /// The plugin's version; empty means "undefined", as Kafka reports an unknown version.
    pub version: &'static str,
    /// The plugin's settings.
    pub config: Vec<ConfigDef>,
}

/// The connector side of a source plugin: it validates a config and splits it into task configs.
/// The SDK has checked required keys, types and validators of the ConfigDefs and filled in
/// defaults before it calls either method.
pub trait SourceConnector {
    /// Plugin-specific checks: error messages per setting (empty when valid).
    fn validate(&self, _cfg: &Config) -> Errors {
        Errors::new()
    }
    /// At most `max_tasks` task configs.
    fn task_configs(&self, cfg: &Config, max_tasks: usize) -> Result<Vec<Config>>;
    /// A new, unstarted task.
    fn new_task(&self) -> Box<dyn SourceTask>;
}

/// Reads records from an external system.
pub trait SourceTask {
    /// Starts the task with its task config; read the stored position with `ctx.offset` here.
    fn start(&mut self, ctx: TaskContext, cfg: &Config) -> Result<()>;
    /// Adds the next records to `batch`. It must not block: add nothing when there is nothing new,
    /// and the host calls again later.
    fn poll(&mut self, batch: &mut SourceBatch) -> Result<()>;
    /// Called after the records polled so far have been written and their offsets stored.
    fn commit(&mut self) -> Result<()> {
        Ok(())
    }
    /// Releases the task's resources.
    fn stop(&mut self) -> Result<()> {
        Ok(())
    }
}

/// The connector side of a sink plugin.
pub trait SinkConnector {
    fn validate(&self, _cfg: &Config) -> Errors {
        Errors::new()
    }
    fn task_configs(&self, cfg: &Config, max_tasks: usize) -> Result<Vec<Config>>;
    fn new_task(&self) -> Box<dyn SinkTask>;
}

/// The next offset to read in a topic partition (FLUSH's input).
#[derive(Clone, Debug, PartialEq)]
pub struct TopicPartitionOffset {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// Writes records to an external system.
pub trait SinkTask {
    fn start(&mut self, ctx: TaskContext, cfg: &Config) -> Result<()>;
    /// Receives a batch. The records borrow the host's input buffer: copy what you keep.
    fn put(&mut self, records: &[Record<'_>]) -> Result<()>;
    /// Makes everything put so far durable; `offsets` are the next offsets to read per partition.
    fn flush(&mut self, offsets: &[TopicPartitionOffset]) -> Result<()>;
    fn stop(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Converts between Connect data and the bytes stored in Kafka. `None` bytes are a Kafka null.
pub trait Converter {
    /// Receives the converter's settings (prefix removed, defaults filled in, with converter.type)
    /// and whether it converts keys.
    fn configure(&mut self, cfg: &Config, is_key: bool) -> Result<()>;
    fn from_connect(&mut self, topic: &str, value: &Data<'_>) -> Result<Option<Vec<u8>>>;
    fn to_connect(&mut self, topic: &str, bytes: Option<&[u8]>) -> Result<Data<'static>>;

    /// `from_connect` writing the bytes straight to the end of the result batch `out`, which
    /// FROM_CONNECT calls: `Ok(false)` is a Kafka null (nothing written). Override it to convert
    /// without a `Vec` per record; the default calls `from_connect`.
    fn write_from_connect(&mut self, topic: &str, value: &Data<'_>, out: &mut Vec<u8>) -> Result<bool> {
        match self.from_connect(topic, value)? {
            None => Ok(false),
            Some(b) => {
                out.extend_from_slice(&b);
                Ok(true)
            }
        }
    }

    /// `write_from_connect` of a value that the step of a chain of this module that wrote it
    /// vouched for (`Keep::value_vouched`: compact JSON of its schema as the SDK writes it), which
    /// TRANSFORM_CONVERT calls: a converter may then skip checking the payload against its
    /// schema. `keep` is the chain call's: bytes the value borrows stay where they are for the
    /// call, so a converter may remember what it derived from them by address (`Keep::call`).
    /// The default checks the value all the same.
    fn write_vouched_from_connect(&mut self, topic: &str, value: &Data<'_>, _keep: &Keep, out: &mut Vec<u8>) -> Result<bool> {
        self.write_from_connect(topic, value, out)
    }

    /// `to_connect` writing the data value (sdk/ABI.md §5.1, as `wire::put_data`) straight to the
    /// end of the result batch `out`, which TO_CONNECT calls. Override it to convert without an
    /// owned `Data` per record; the default calls `to_connect`.
    fn write_to_connect(&mut self, topic: &str, bytes: Option<&[u8]>, out: &mut Vec<u8>) -> Result<()> {
        let v = self.to_connect(topic, bytes)?;
        wire::put_data(out, &v);
        Ok(())
    }
}

/// What a transformation does with one record.
pub enum Outcome<'a> {
    /// The record passes through as it was.
    Unchanged,
    /// The record is dropped (Kafka's transformation returning null).
    Drop,
    /// The transformed record. Its offset and source partition and offset are the host's: they are
    /// not sent.
    Record(Record<'a>),
}

impl<'a> Outcome<'a> {
    /// The outcome written over the record it is of, as `Transformation::apply_mut` has it.
    pub fn write_over(self, record: &mut Record<'a>) -> Applied {
        match self {
            Outcome::Unchanged => Applied::Unchanged,
            Outcome::Drop => Applied::Drop,
            Outcome::Record(r) => {
                *record = r;
                Applied::Changed
            }
        }
    }
}

/// A single message transform. An error fails this record alone (the connector's errors.tolerance
/// decides), reported with its class (`Error::with_class`, DataException by default); a retriable
/// error fails the whole batch, retriably.
pub trait Transformation {
    fn configure(&mut self, cfg: &Config) -> Result<()>;
    fn apply<'a>(&mut self, record: &Record<'a>) -> Result<Outcome<'a>>;

    /// `apply` on a record the caller owns, changed in place: what a chain (TRANSFORM_CHAIN) calls,
    /// so that a step can extend the buffers the step before it wrote instead of copying them (an
    /// InsertField after a HoistField appends to the payload the HoistField wrote). It must give
    /// what `apply` gives; the default is `apply`'s outcome written over `record`. After an error,
    /// `record` may be half changed: the caller drops it. Bytes the step gives every record alike
    /// (a schema) can go in `keep`, which lives as long as the record, instead of in a buffer of
    /// each record's own.
    fn apply_mut<'a>(&mut self, record: &mut Record<'a>, _keep: &'a Keep) -> Result<Applied> {
        let o = self.apply(record)?;
        Ok(o.write_over(record))
    }

    /// `apply_mut` on each record of a chain step's batch that the step applies to: what a chain
    /// calls, once per step. It must give what `apply_mut` gives record by record (the default
    /// does just that); a step overrides it to do once per batch what it would do per record.
    fn apply_batch<'a>(&mut self, batch: &mut Batch<'_, 'a>, keep: &'a Keep) -> Result<()> {
        for i in 0..batch.len() {
            if !batch.applies(i) {
                continue;
            }
            batch.apply_one(i, keep, |r| self.apply_mut(r, keep))?;
        }
        Ok(())
    }
}

/// What `Transformation::apply_mut` did with its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// The record is as it was.
    Unchanged,
    /// The record is dropped.
    Drop,
    /// The record was changed in place. Its offset and source partition and offset stay the
    /// host's, as for `Outcome::Record`.
    Changed,
}

/// Decides whether a transformation applies to a record. Errors as for `Transformation::apply`.
pub trait Predicate {
    fn configure(&mut self, cfg: &Config) -> Result<()>;
    fn test(&mut self, record: &Record<'_>) -> Result<bool>;
}

/// A record a source task adds to its batch. Fields borrow the task's buffers: the SDK encodes the
/// record at once.
#[derive(Clone, Default)]
pub struct SourceRecord<'a> {
    pub topic: &'a str,
    /// The Kafka partition; `None` lets the producer choose.
    pub partition: Option<i32>,
    pub key: Data<'a>,
    pub value: Data<'a>,
    pub headers: &'a [Header<'a>],
    /// Milliseconds since the epoch; `None`: none.
    pub timestamp: Option<i64>,
    /// Where the record came from, e.g. {"filename": "/data/a"} and {"position": 4711}. The host
    /// stores the offset once the record and everything polled before it are written. Both or
    /// neither: a partition without an offset is not sent. Encoding JSON costs, so set them on the
    /// last record of each source partition in a batch only (the one that matters).
    pub source_partition: Option<&'a Value>,
    pub source_offset: Option<&'a Value>,
}

/// The record batch of one POLL (sdk/ABI.md §5.2), encoded as records are added.
pub struct SourceBatch {
    out: Vec<u8>,
    count: u32,
    /// Where the last record's source partition and offset start in `out`.
    last_source: usize,
    /// The JSON of the last source partition: a task usually has one.
    last_partition: Option<(Value, String)>,
}

impl SourceBatch {
    pub(crate) fn new() -> SourceBatch {
        SourceBatch { out: Vec::new(), count: 0, last_source: 0, last_partition: None }
    }

    pub(crate) fn reset(&mut self) {
        self.out.clear();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        self.count = 0;
    }

    pub(crate) fn finish(&mut self) -> &[u8] {
        let n = self.count;
        wire::patch_u32(&mut self.out, 0, n);
        &self.out
    }

    /// How many records the batch holds.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Makes room for `bytes` more bytes of records, exactly. The batch's buffer is kept from one
    /// POLL to the next and a module's linear memory never shrinks, so a task that knows what its
    /// records take (`record_len`) reserves that, not the double that `Vec::reserve` may round
    /// it up to and the task would then hold for good.
    pub fn reserve(&mut self, bytes: usize) {
        self.out.reserve_exact(bytes);
    }

    /// How many more bytes of records the batch holds without growing.
    pub fn room(&self) -> usize {
        self.out.capacity() - self.out.len()
    }

    /// The bytes `push` encodes a record of `topic` in that has a null key, a string or bytes value
    /// of `value_len` bytes, no headers and no source partition or offset.
    pub fn record_len(topic: &str, value_len: usize) -> usize {
        // topic, partition, offset, timestamp, null key, value tag and length, header count, and
        // the empty source partition and offset
        4 + topic.len() + 4 + 8 + 8 + 1 + 1 + 4 + value_len + 4 + 4 + 4
    }

    /// Adds a record.
    pub fn push(&mut self, r: &SourceRecord) {
        let out = &mut self.out;
        wire::put_bytes(out, r.topic.as_bytes());
        wire::put_u32(out, r.partition.unwrap_or(-1) as u32);
        wire::put_i64(out, -1);
        wire::put_i64(out, r.timestamp.unwrap_or(-1));
        wire::put_data(out, &r.key);
        wire::put_data(out, &r.value);
        wire::put_headers(out, r.headers);
        self.last_source = self.out.len();
        self.put_source(r.source_partition, r.source_offset);
        self.count += 1;
    }

    /// Sets the source partition and offset of the last record added (a batch with none: nothing),
    /// replacing what it had. A task that adds its records before it knows which one is the last
    /// of its batch (a file source that reads until the batch is full or the file ends) gives
    /// that one its offset this way.
    pub fn set_last_source(&mut self, partition: &Value, offset: &Value) {
        if self.count == 0 {
            return;
        }
        self.out.truncate(self.last_source);
        self.put_source(Some(partition), Some(offset));
    }

    fn put_source(&mut self, partition: Option<&Value>, offset: Option<&Value>) {
        match (partition, offset) {
            (Some(p), Some(o)) => {
                let cached = matches!(&self.last_partition, Some((v, _)) if v == p);
                if !cached {
                    self.last_partition = Some((p.clone(), p.to_json()));
                }
                let pj = &self.last_partition.as_ref().map(|(_, j)| j.as_str()).unwrap_or("");
                wire::put_bytes(&mut self.out, pj.as_bytes());
                wire::put_bytes(&mut self.out, o.to_json().as_bytes());
            }
            _ => {
                wire::put_u32(&mut self.out, 0);
                wire::put_u32(&mut self.out, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    #[test]
    fn record_len_is_what_push_encodes() {
        let mut b = SourceBatch::new();
        b.reset();
        for line in ["", "one line", "a longer line of text"] {
            let before = b.out.len();
            b.push(&SourceRecord { topic: "lines", value: Data::str(line), timestamp: Some(7), ..Default::default() });
            assert_eq!(b.out.len() - before, SourceBatch::record_len("lines", line.len()), "{:?}", line);
        }
    }

    #[test]
    fn set_last_source_gives_the_last_record_its_offset() {
        let part = json::object([("filename", Value::from("f"))]);
        let mut b = SourceBatch::new();
        b.reset();
        b.set_last_source(&part, &json::object([("position", Value::Int(1))]));
        assert_eq!(wire::decode_records(b.finish()).unwrap().len(), 0);
        b.push(&SourceRecord { topic: "t", value: Data::str("a"), ..Default::default() });
        b.push(&SourceRecord { topic: "t", value: Data::str("b"), source_partition: Some(&part), source_offset: Some(&part), ..Default::default() });
        b.set_last_source(&part, &json::object([("position", Value::Int(4))]));
        let rs = wire::decode_records(b.finish()).unwrap();
        assert_eq!(rs.len(), 2);
        assert_eq!((rs[0].source_partition, rs[0].source_offset), (&b""[..], &b""[..]));
        assert_eq!(rs[1].value, Data::str("b"));
        assert_eq!((rs[1].source_partition, rs[1].source_offset), (&br#"{"filename":"f"}"#[..], &br#"{"position":4}"#[..]));
    }
}

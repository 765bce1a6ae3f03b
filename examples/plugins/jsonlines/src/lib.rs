//! JsonLinesSource (com.example.sources.JsonLinesSource): an example source connector on the
//! wasmconnect Rust SDK (sdk/rust). It reads a file of line-delimited JSON, one object per line,
//! into `topic`, and gives each value the Connect schema of `value.schema` (a schema as
//! JsonConverter writes it; empty: schemaless), so that a converter downstream sees structs, not
//! text. With `key.field`, a record's key is that field of its value.
//!
//! Each line is read with the schema as JsonConverter reads a payload: a line that does not fit
//! (a string where the schema says int64, a missing required field) fails the task with the file,
//! the line number and the cause, rather than sending a record no consumer could read. Empty lines
//! are skipped. Offsets are FileStreamSource's ({"filename": file} and {"position": byte after the
//! line}), so a restarted task resumes after the last line it sent.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::rc::Rc;

use wasmconnect::config::{get_int, Errors};
use wasmconnect::connect::{self, Schema, Type, Value};
use wasmconnect::json;
use wasmconnect::{
    Config, ConfigDef, ConfigType, Data, Error, Importance, Info, Module, Result, SourceBatch, SourceConnector, SourceRecord, SourceTask, TaskContext,
};

const FILE: &str = "file";
const TOPIC: &str = "topic";
const SCHEMA: &str = "value.schema";
const KEY_FIELD: &str = "key.field";
const BATCH_SIZE: &str = "batch.size";

fn register(m: &mut Module) {
    m.source(
        Info {
            name: "JsonLinesSource",
            class: "com.example.sources.JsonLinesSource",
            aliases: &[],
            version: "1.0.0",
            config: vec![
                ConfigDef::new(FILE).required().importance(Importance::High).doc("The file to read: one JSON object per line"),
                ConfigDef::new(TOPIC).required().importance(Importance::High).doc("The topic to write to"),
                ConfigDef::new(SCHEMA).default("").importance(Importance::High).doc("The Connect schema of each line, as JsonConverter writes schemas; empty: schemaless"),
                ConfigDef::new(KEY_FIELD).default("").importance(Importance::Medium).doc("The field of each value that becomes the record's key; empty: null keys"),
                ConfigDef::new(BATCH_SIZE).typ(ConfigType::Int).default("1000").importance(Importance::Low).doc("The most records one poll returns"),
            ],
        },
        JsonLines,
    );
}

wasmconnect::export_module!(register);

/// The settings both sides check: the schema parses, and key.field is one of its fields.
struct Settings {
    schema: Option<Rc<Schema>>,
    key_field: String,
}

fn settings(cfg: &Config) -> Result<Settings> {
    let raw = cfg.get(SCHEMA).map(|s| s.trim()).unwrap_or("");
    let schema = connect::parse_schema(raw.as_bytes()).map_err(|e| Error::invalid_config(SCHEMA, raw, &e))?;
    let key_field = cfg.get(KEY_FIELD).map(|s| s.trim().to_string()).unwrap_or_default();
    if let Some(s) = &schema {
        if s.typ != Type::Struct {
            return Err(Error::invalid_config(SCHEMA, raw, &format!("a line is a JSON object, so the schema must be a struct, not {}", s.typ.json_name())));
        }
        if !key_field.is_empty() && s.field(&key_field).is_none() {
            return Err(Error::invalid_config(KEY_FIELD, &key_field, "the value schema has no such field"));
        }
    }
    Ok(Settings { schema, key_field })
}

struct JsonLines;

impl SourceConnector for JsonLines {
    fn validate(&self, cfg: &Config) -> Errors {
        let mut errs = Errors::new();
        if let Err(e) = settings(cfg) {
            errs.insert(e.config_key().unwrap_or(SCHEMA).to_string(), vec![e.message().to_string()]);
        }
        errs
    }

    /// One task: only one reader of a file makes sense.
    fn task_configs(&self, cfg: &Config, _max_tasks: usize) -> Result<Vec<Config>> {
        Ok(vec![cfg.clone()])
    }

    fn new_task(&self) -> Box<dyn SourceTask> {
        Box::new(Task::default())
    }
}

#[derive(Default)]
struct Task {
    ctx: TaskContext,
    file_name: String,
    topic: String,
    schema: Option<Rc<Schema>>,
    key_field: String,
    batch_size: usize,
    partition: json::Value,
    file: Option<File>,
    /// The file position of buf[0]: the byte after the last line sent.
    pos: i64,
    /// Read but not yet sent: the start of the next line.
    buf: Vec<u8>,
    /// The lines before buf[0], for error messages: known when the task started at the beginning of
    /// the file.
    line: Option<u64>,
}

impl SourceTask for Task {
    fn start(&mut self, ctx: TaskContext, cfg: &Config) -> Result<()> {
        let s = settings(cfg)?;
        self.ctx = ctx;
        self.file_name = cfg.get(FILE).map(|s| s.trim().to_string()).unwrap_or_default();
        self.topic = cfg.get(TOPIC).cloned().unwrap_or_default();
        self.schema = s.schema;
        self.key_field = s.key_field;
        self.batch_size = get_int(cfg, BATCH_SIZE, 1000)?.max(1) as usize;
        self.partition = json::object([("filename", json::Value::from(self.file_name.as_str()))]);
        if let Some(off) = self.ctx.offset(&self.partition)? {
            self.pos = off.get("position").and_then(json::Value::as_i64).ok_or_else(|| Error::new("JsonLinesSource: the stored offset has no position"))?;
        }
        self.line = if self.pos == 0 { Some(0) } else { None };
        Ok(())
    }

    /// Adds up to batch.size records, or none when no whole line is new. It never blocks.
    fn poll(&mut self, batch: &mut SourceBatch) -> Result<()> {
        if self.file.is_none() {
            match self.ctx.open_file(&self.file_name, OpenOptions::new().read(true)) {
                Ok(mut f) => {
                    f.seek(SeekFrom::Start(self.pos as u64)).map_err(|e| Error::io(format!("seeking {} to {}", self.file_name, self.pos), &e))?;
                    self.file = Some(f);
                }
                Err(e) if e.is_not_found() => return Ok(()), // not there yet
                Err(e) => return Err(e),
            }
        }
        let mut chunk = [0u8; 64 << 10];
        while self.buf.len() < 64 << 20 {
            let n = self.file.as_mut().unwrap().read(&mut chunk).map_err(|e| Error::io(format!("reading {}", self.file_name), &e))?;
            if n == 0 {
                break;
            }
            self.buf.extend_from_slice(&chunk[..n]);
            if self.buf[self.buf.len() - n..].iter().filter(|&&c| c == b'\n').count() >= self.batch_size {
                break;
            }
        }
        let (mut start, mut sent) = (0, 0);
        let mut records = Vec::new();
        while sent < self.batch_size {
            let end = match self.buf[start..].iter().position(|&c| c == b'\n') {
                Some(i) => start + i,
                None => break, // a partial last line waits for its newline
            };
            let line = trim(&self.buf[start..end]);
            let at = self.pos + start as i64;
            if !line.is_empty() {
                match self.record(line) {
                    Ok(r) => records.push(r),
                    // The records before it go out first; the next poll fails on it.
                    Err(_) if !records.is_empty() => break,
                    Err(e) => {
                        let which = match self.line {
                            Some(n) => format!("line {} (byte {})", n + 1, at),
                            None => format!("the line at byte {}", at),
                        };
                        return Err(Error::new(format!("JsonLinesSource: {} {}: {}", self.file_name, which, e)));
                    }
                }
                sent += 1;
            }
            self.line = self.line.map(|n| n + 1);
            start = end + 1;
        }
        self.pos += start as i64;
        self.buf.drain(..start);
        let offset = json::object([("position", json::Value::Int(self.pos))]);
        let last = records.len().saturating_sub(1);
        for (i, (key, value)) in records.iter().enumerate() {
            let mut r = SourceRecord { topic: &self.topic, key: key.clone(), value: value.clone(), ..Default::default() };
            if i == last {
                r.source_partition = Some(&self.partition);
                r.source_offset = Some(&offset);
            }
            batch.push(&r);
        }
        Ok(())
    }

    fn stop(&mut self) -> Result<()> {
        self.file = None;
        Ok(())
    }
}

impl Task {
    /// The key and value of one line, read with the value schema.
    fn record(&self, line: &[u8]) -> std::result::Result<(Data<'static>, Data<'static>), String> {
        let schema_json = match &self.schema {
            Some(s) => s.json()?,
            None => Rc::from(&b""[..]),
        };
        let (schema, value) = connect::decode(&Data::json(&schema_json, line), false)?;
        if self.schema.is_none() && !matches!(value, Value::Map(_)) {
            return Err("a line must be a JSON object".to_string());
        }
        // A null or missing key field is a Kafka null key, not a null with a schema: a record
        // without a key is one that has none.
        let key = match (&self.key_field, &value, &schema) {
            (f, _, _) if f.is_empty() => Data::Null,
            (f, Value::Struct(st), Some(s)) => match st.get(f)? {
                Value::Null => Data::Null,
                v => connect::encode(Some(&s.field(f).unwrap().schema), v)?,
            },
            (f, Value::Map(m), None) => match m.get(f.as_str()) {
                Some(v) => connect::encode(None, v)?,
                None => Data::Null,
            },
            _ => Data::Null,
        };
        Ok((key, connect::encode(schema.as_ref(), &value)?))
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let b = b.strip_suffix(b"\r").unwrap_or(b);
    let start = b.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(b.len());
    &b[start..]
}

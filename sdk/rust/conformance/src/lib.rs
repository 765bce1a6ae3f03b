//! The Rust SDK's conformance module: the five plugins every SDK implements alike, specified in
//! wasmhost/conformance/doc.go and tested there through the host.
//!
//! The Rust SDK has no model of Connect schemas yet: JSON payloads go through its JSON model
//! (`wasmconnect::json::Value`), and schemas are kept as they came.

use std::borrow::Cow;

use wasmconnect::json::{self, Value};
use wasmconnect::*;

fn register(m: &mut Module) {
    m.source(
        Info {
            name: "ConformanceSource",
            class: "conformance.Source",
            aliases: &[],
            version: "1.0.0",
            config: vec![
                ConfigDef::new("topic").required().importance(Importance::High).doc("The topic to write to"),
                ConfigDef::new("count").typ(ConfigType::Int).default("3").importance(Importance::Medium).doc("How many records to produce"),
            ],
        },
        Source,
    );
    m.sink(
        Info {
            name: "ConformanceSink",
            class: "conformance.Sink",
            aliases: &[],
            version: "1.0.0",
            config: vec![ConfigDef::new("fail.on").default("").importance(Importance::Low).doc("A value that fails PUT")],
        },
        Sink,
    );
    m.converter(
        Info { name: "ConformanceConverter", class: "conformance.Converter", aliases: &[], version: "1.0.0", config: vec![] },
        || Box::new(Conv),
    );
    m.transformation(
        Info {
            name: "ConformanceTransform",
            class: "conformance.Transform",
            aliases: &[],
            version: "1.0.0",
            config: vec![ConfigDef::new("header").default("seen").importance(Importance::Medium).doc("The header to add")],
        },
        || Box::new(Transform { header: String::new() }),
    );
    m.predicate(
        Info {
            name: "ConformancePredicate",
            class: "conformance.Predicate",
            aliases: &[],
            version: "1.0.0",
            config: vec![ConfigDef::new("header").required().importance(Importance::High).doc("The header whose presence matches")],
        },
        || Box::new(Pred { header: String::new() }),
    );
}

wasmconnect::export_module!(register);

fn partition() -> Value {
    json::object([("source", Value::String("conformance".into()))])
}

struct Source;

impl SourceConnector for Source {
    fn validate(&self, cfg: &Config) -> Errors {
        let mut errs = Errors::new();
        if config::get_int(cfg, "count", 0).unwrap_or(0) < 0 {
            errs.insert("count".into(), vec!["count must not be negative".into()]);
        }
        errs
    }
    fn task_configs(&self, cfg: &Config, max_tasks: usize) -> Result<Vec<Config>> {
        Ok((0..max_tasks)
            .map(|i| {
                let mut c = cfg.clone();
                c.insert("task.index".into(), i.to_string());
                c
            })
            .collect())
    }
    fn new_task(&self) -> Box<dyn SourceTask> {
        Box::new(SourceT { topic: String::new(), next: 0, count: 0 })
    }
}

struct SourceT {
    topic: String,
    next: i64,
    count: i64,
}

impl SourceTask for SourceT {
    fn start(&mut self, ctx: TaskContext, cfg: &Config) -> Result<()> {
        self.topic = cfg.get("topic").cloned().unwrap_or_default();
        self.count = config::get_long(cfg, "count", 3)?;
        if let Some(off) = ctx.offset(&partition())? {
            self.next = off.get("next").and_then(|v| v.as_i64()).unwrap_or(0);
        }
        Ok(())
    }
    fn poll(&mut self, batch: &mut SourceBatch) -> Result<()> {
        let p = partition();
        let schema = br#"{"type":"struct","fields":[{"type":"int64","optional":false,"field":"n"}],"optional":false,"name":"conformance.Row"}"#;
        while self.next < self.count {
            let n = self.next;
            let key = format!("key-{}", n);
            let payload = format!("{{\"n\":{}}}", n);
            let i = n.to_string();
            let headers = [Header { key: Cow::Borrowed("i"), value: Data::str(&i) }];
            let off = json::object([("next", Value::Int(n + 1))]);
            batch.push(&SourceRecord {
                topic: &self.topic,
                partition: None,
                key: Data::str(&key),
                value: Data::json(schema, payload.as_bytes()),
                headers: &headers,
                timestamp: Some(1700000000000 + n),
                source_partition: Some(&p),
                source_offset: Some(&off),
            });
            self.next += 1;
        }
        Ok(())
    }
}

struct Sink;

impl SinkConnector for Sink {
    fn task_configs(&self, cfg: &Config, _max: usize) -> Result<Vec<Config>> {
        Ok(vec![cfg.clone()])
    }
    fn new_task(&self) -> Box<dyn SinkTask> {
        Box::new(SinkT { ctx: None, fail_on: String::new(), put: 0 })
    }
}

struct SinkT {
    ctx: Option<TaskContext>,
    fail_on: String,
    put: usize,
}

impl SinkTask for SinkT {
    fn start(&mut self, ctx: TaskContext, cfg: &Config) -> Result<()> {
        self.ctx = Some(ctx);
        self.fail_on = cfg.get("fail.on").cloned().unwrap_or_default();
        Ok(())
    }
    fn put(&mut self, records: &[Record<'_>]) -> Result<()> {
        for r in records {
            if let Data::String(s) = &r.value {
                if !self.fail_on.is_empty() && &s[..] == self.fail_on.as_bytes() {
                    return Err(Error::new(format!("conformance: record at offset {} is {}", r.offset, self.fail_on)));
                }
            }
        }
        self.put += records.len();
        Ok(())
    }
    fn flush(&mut self, offsets: &[TopicPartitionOffset]) -> Result<()> {
        if let Some(ctx) = &self.ctx {
            ctx.log(Level::Info, &format!("flushed {} records, {} partitions", self.put, offsets.len()));
        }
        self.put = 0;
        Ok(())
    }
}

/// round_trip reads a JSON payload into the SDK's JSON model and writes it back.
fn round_trip(d: &Data<'_>) -> Result<Data<'static>> {
    match d {
        Data::Json { schema, payload } => {
            let v = json::parse(payload).map_err(Error::new)?;
            Ok(Data::Json { schema: Cow::Owned(schema.to_vec()), payload: Cow::Owned(v.to_json().into_bytes()) })
        }
        other => Ok(other.clone().into_owned()),
    }
}

struct Conv;

impl Converter for Conv {
    fn configure(&mut self, _cfg: &Config, _is_key: bool) -> Result<()> {
        Ok(())
    }
    fn from_connect(&mut self, _topic: &str, value: &Data<'_>) -> Result<Option<Vec<u8>>> {
        Ok(match value {
            Data::Null => None,
            Data::Bytes(b) | Data::String(b) => Some(b.to_vec()),
            Data::Json { .. } => match round_trip(value)? {
                Data::Json { payload, .. } => Some(payload.into_owned()),
                _ => None,
            },
        })
    }
    fn to_connect(&mut self, _topic: &str, bytes: Option<&[u8]>) -> Result<Data<'static>> {
        Ok(match bytes {
            None => Data::Null,
            Some(b) => Data::String(Cow::Owned(b.to_vec())),
        })
    }
}

fn trap() -> ! {
    core::arch::wasm32::unreachable()
}

fn is_str(d: &Data<'_>, s: &str) -> bool {
    matches!(d, Data::String(b) if &b[..] == s.as_bytes())
}

struct Transform {
    header: String,
}

impl Transformation for Transform {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.header = cfg.get("header").cloned().unwrap_or_default();
        if self.header.is_empty() {
            return Err(Error::config("header", "header must not be empty"));
        }
        Ok(())
    }
    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        if r.value.is_null() {
            return Ok(Outcome::Unchanged);
        }
        if is_str(&r.value, "drop") {
            return Ok(Outcome::Drop);
        }
        if is_str(&r.value, "fail") {
            return Err(Error::new("conformance: fail requested"));
        }
        if is_str(&r.value, "error") {
            return Err(Error::new("conformance: error requested").retriable());
        }
        if is_str(&r.value, "trap") {
            trap();
        }
        let mut out = r.clone();
        out.key = round_trip(&r.key)?;
        out.value = round_trip(&r.value)?;
        for h in out.headers.iter_mut() {
            h.value = round_trip(&h.value)?;
        }
        out.headers.push(Header { key: Cow::Owned(self.header.clone()), value: Data::str("c") });
        Ok(Outcome::Record(out))
    }
}

struct Pred {
    header: String,
}

impl Predicate for Pred {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.header = cfg.get("header").cloned().unwrap_or_default();
        Ok(())
    }
    fn test(&mut self, r: &Record<'_>) -> Result<bool> {
        if is_str(&r.value, "fail") {
            return Err(Error::new("conformance: fail requested"));
        }
        if is_str(&r.value, "trap") {
            trap();
        }
        Ok(r.headers.iter().any(|h| h.key == self.header))
    }
}

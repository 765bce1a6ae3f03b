//! The ABI's operations (sdk/ABI.md §3, §4) on plain byte slices, independent of WebAssembly: the
//! exports of `abi` and the native tests both call it. Its error texts are the Go SDK's.

use crate::config::{self, go_quote, Config, Errors};
use crate::context::TaskContext;
use crate::error::{Error, Result};
use crate::json::{self, Value};
use crate::plugin::*;
use crate::wire::{self, Decoder, Record};
use std::collections::{BTreeMap, HashMap};

/// ABI operations.
pub const OP_OPEN: i32 = 1;
pub const OP_CLOSE: i32 = 2;
pub const OP_VALIDATE: i32 = 3;
pub const OP_TASK_CONFIGS: i32 = 4;
pub const OP_POLL: i32 = 5;
pub const OP_COMMIT: i32 = 6;
pub const OP_PUT: i32 = 7;
pub const OP_FLUSH: i32 = 8;
pub const OP_FROM_CONNECT: i32 = 9;
pub const OP_TO_CONNECT: i32 = 10;
pub const OP_TRANSFORM: i32 = 11;
pub const OP_TEST: i32 = 12;
pub const OP_TRANSFORM_CHAIN: i32 = 13;
pub const OP_TRANSFORM_CONVERT: i32 = 14;

fn op_name(op: i32) -> &'static str {
    match op {
        OP_OPEN => "OPEN",
        OP_CLOSE => "CLOSE",
        OP_VALIDATE => "VALIDATE",
        OP_TASK_CONFIGS => "TASK_CONFIGS",
        OP_POLL => "POLL",
        OP_COMMIT => "COMMIT",
        OP_PUT => "PUT",
        OP_FLUSH => "FLUSH",
        OP_FROM_CONNECT => "FROM_CONNECT",
        OP_TO_CONNECT => "TO_CONNECT",
        OP_TRANSFORM => "TRANSFORM",
        OP_TEST => "TEST",
        OP_TRANSFORM_CHAIN => "TRANSFORM_CHAIN",
        OP_TRANSFORM_CONVERT => "TRANSFORM_CONVERT",
        _ => "UNKNOWN",
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Source,
    Sink,
    Converter,
    Transformation,
    Predicate,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Source => "source",
            Kind::Sink => "sink",
            Kind::Converter => "converter",
            Kind::Transformation => "transformation",
            Kind::Predicate => "predicate",
        }
    }
}

enum Implementation {
    Source(Box<dyn SourceConnector>),
    Sink(Box<dyn SinkConnector>),
    Converter(fn() -> Box<dyn Converter>),
    Transformation(fn() -> Box<dyn Transformation>),
    Predicate(fn() -> Box<dyn Predicate>),
}

struct Plugin {
    info: Info,
    imp: Implementation,
}

impl Plugin {
    fn kind(&self) -> Kind {
        match self.imp {
            Implementation::Source(_) => Kind::Source,
            Implementation::Sink(_) => Kind::Sink,
            Implementation::Converter(_) => Kind::Converter,
            Implementation::Transformation(_) => Kind::Transformation,
            Implementation::Predicate(_) => Kind::Predicate,
        }
    }

    fn class(&self) -> &'static str {
        if self.info.class.is_empty() {
            self.info.name
        } else {
            self.info.class
        }
    }

    fn descriptor(&self) -> Value {
        let mut m = BTreeMap::new();
        m.insert("name".to_string(), Value::from(self.info.name));
        m.insert("class".to_string(), Value::from(self.class()));
        if !self.info.aliases.is_empty() {
            m.insert("aliases".to_string(), Value::Array(self.info.aliases.iter().map(|a| Value::from(*a)).collect()));
        }
        m.insert("kind".to_string(), Value::from(self.kind().name()));
        let version = if self.info.version.is_empty() { "undefined" } else { self.info.version };
        m.insert("version".to_string(), Value::from(version));
        m.insert("config".to_string(), Value::Array(self.info.config.iter().map(|d| d.key_info()).collect()));
        Value::Object(m)
    }

    /// Plugin-specific validation of a config with defaults filled in.
    fn validate(&self, cfg: &Config) -> Errors {
        let configure_errors = |r: Result<()>| match r {
            Ok(()) => Errors::new(),
            Err(e) => {
                let mut errs = Errors::new();
                errs.insert(e.config_key().unwrap_or("").to_string(), vec![e.message().to_string()]);
                errs
            }
        };
        match &self.imp {
            Implementation::Source(c) => c.validate(cfg),
            Implementation::Sink(c) => c.validate(cfg),
            Implementation::Transformation(new) => configure_errors(new().configure(cfg)),
            Implementation::Predicate(new) => configure_errors(new().configure(cfg)),
            Implementation::Converter(_) => Errors::new(),
        }
    }
}

/// The plugins of a module, which its register function adds (see `export_module!`).
#[derive(Default)]
pub struct Module {
    plugins: Vec<Plugin>,
}

impl Module {
    pub fn source(&mut self, info: Info, c: impl SourceConnector + 'static) {
        self.add(info, Implementation::Source(Box::new(c)))
    }

    pub fn sink(&mut self, info: Info, c: impl SinkConnector + 'static) {
        self.add(info, Implementation::Sink(Box::new(c)))
    }

    /// `new` is called once per converter the host opens.
    pub fn converter(&mut self, info: Info, new: fn() -> Box<dyn Converter>) {
        self.add(info, Implementation::Converter(new))
    }

    /// `new` is called once per transformation the host opens; register the $Key and $Value variants
    /// of a transformation as two plugins.
    pub fn transformation(&mut self, info: Info, new: fn() -> Box<dyn Transformation>) {
        self.add(info, Implementation::Transformation(new))
    }

    pub fn predicate(&mut self, info: Info, new: fn() -> Box<dyn Predicate>) {
        self.add(info, Implementation::Predicate(new))
    }

    fn add(&mut self, info: Info, imp: Implementation) {
        assert!(!info.name.is_empty(), "wasmconnect: plugin registered without a name");
        self.plugins.push(Plugin { info, imp });
    }
}

enum Object {
    Connector { p: usize, cfg: Config },
    Source { p: usize, task: Box<dyn SourceTask>, batch: SourceBatch },
    Sink { p: usize, task: Box<dyn SinkTask> },
    Converter { p: usize, conv: Box<dyn Converter> },
    Transformation { p: usize, t: Box<dyn Transformation> },
    Predicate { p: usize, pred: Box<dyn Predicate> },
}

impl Object {
    fn plugin(&self) -> usize {
        match self {
            Object::Connector { p, .. }
            | Object::Source { p, .. }
            | Object::Sink { p, .. }
            | Object::Converter { p, .. }
            | Object::Transformation { p, .. }
            | Object::Predicate { p, .. } => *p,
        }
    }

    fn role(&self) -> &'static str {
        match self {
            Object::Connector { .. } => "connector",
            Object::Source { .. } => "source task",
            Object::Sink { .. } => "sink task",
            Object::Converter { .. } => "converter",
            Object::Transformation { .. } => "transformation",
            Object::Predicate { .. } => "predicate",
        }
    }

    fn close(self) -> Result<()> {
        match self {
            Object::Source { mut task, .. } => task.stop(),
            Object::Sink { mut task, .. } => task.stop(),
            _ => Ok(()),
        }
    }
}

impl crate::chain::Objects for HashMap<i32, Object> {
    fn transformation(&mut self, h: i32) -> Option<&mut dyn Transformation> {
        match self.get_mut(&h) {
            Some(Object::Transformation { t, .. }) => Some(t.as_mut()),
            _ => None,
        }
    }
    fn predicate(&mut self, h: i32) -> Option<&mut dyn Predicate> {
        match self.get_mut(&h) {
            Some(Object::Predicate { pred, .. }) => Some(pred.as_mut()),
            _ => None,
        }
    }
}

/// Dispatches the ABI's operations to a module's plugins.
pub struct Dispatcher {
    plugins: Vec<Plugin>,
    by_name: HashMap<&'static str, usize>,
    objects: HashMap<i32, Object>,
    next: i32,
    /// The descriptor JSON, once asked for (`describe`).
    desc: Option<Vec<u8>>,
    out: Vec<u8>,
}

impl Dispatcher {
    /// A dispatcher for the plugins `register` adds. A name used twice is a programming error and
    /// panics.
    pub fn new(register: fn(&mut Module)) -> Dispatcher {
        let mut m = Module::default();
        register(&mut m);
        let mut by_name: HashMap<&'static str, usize> = HashMap::new();
        for (i, p) in m.plugins.iter().enumerate() {
            let mut names = vec![p.info.name, p.class()];
            names.extend_from_slice(p.info.aliases);
            for n in names {
                if let Some(&j) = by_name.get(n) {
                    assert!(j == i, "wasmconnect: plugin name {:?} registered twice ({} and {})", n, m.plugins[j].info.name, p.info.name);
                }
                by_name.insert(n, i);
            }
        }
        Dispatcher { plugins: m.plugins, by_name, objects: HashMap::new(), next: 0, desc: None, out: Vec::new() }
    }

    /// TRANSFORM_CONVERT (sdk/ABI.md §5.9): the two converters named first, then the chain. The
    /// converters are taken out of the object table for the call, so that the chain's steps and
    /// both converters can be used at once, and put back whatever happens.
    fn transform_convert(&mut self, input: &[u8]) -> Result<()> {
        let mut d = Decoder::new(input);
        let (kh, vh) = (d.u32("key converter") as i32, d.u32("value converter") as i32);
        if let Some(e) = d.err() {
            return Err(Error::new(format!("TRANSFORM_CONVERT: {}", e)));
        }
        if kh == vh {
            return Err(Error::new(format!("TRANSFORM_CONVERT: the key and value converters are one object (handle {})", kh)));
        }
        let mut take = |h: i32, what: &str| match self.objects.remove(&h) {
            Some(Object::Converter { p, conv }) => Ok((p, conv)),
            other => {
                if let Some(o) = other {
                    self.objects.insert(h, o);
                }
                Err(Error::new(format!("TRANSFORM_CONVERT: no open converter with handle {} for the {}", h, what)))
            }
        };
        let (kp, mut key) = take(kh, "keys")?;
        let (vp, mut value) = match take(vh, "values") {
            Ok(v) => v,
            Err(e) => {
                self.objects.insert(kh, Object::Converter { p: kp, conv: key });
                return Err(e);
            }
        };
        let conv = crate::chain::Converters { key: key.as_mut(), value: value.as_mut() };
        let res = crate::chain::transform_convert(&mut self.objects, conv, &input[8..], &mut self.out);
        self.objects.insert(kh, Object::Converter { p: kp, conv: key });
        self.objects.insert(vh, Object::Converter { p: vp, conv: value });
        res
    }

    /// The descriptor JSON (sdk/ABI.md §3), made on the first call: a host reads the descriptor of
    /// a built-in module from its custom section (§3.1) and never asks an instance for it, and
    /// the JSON of a large module's plugins (the transforms module has 36, with every config key's
    /// documentation) would grow each instance's memory by the pages it was built in.
    pub fn describe(&mut self) -> &[u8] {
        if self.desc.is_none() {
            let mut desc = BTreeMap::new();
            desc.insert("abi".to_string(), Value::Int(crate::abi::VERSION as i64));
            desc.insert("plugins".to_string(), Value::Array(self.plugins.iter().map(|p| p.descriptor()).collect()));
            if self.plugins.iter().any(|p| p.kind() == Kind::Transformation) {
                desc.insert("transform_chain".to_string(), Value::Bool(true)); // runs TRANSFORM_CHAIN (chain.rs)
                if self.plugins.iter().any(|p| p.kind() == Kind::Converter) {
                    desc.insert("transform_convert".to_string(), Value::Bool(true)); // and TRANSFORM_CONVERT
                }
            }
            self.desc = Some(Value::Object(desc).to_json().into_bytes());
        }
        self.desc.as_deref().expect("set above")
    }

    fn lookup(&self, name: &str) -> Result<usize> {
        match self.by_name.get(name) {
            Some(&i) => Ok(i),
            None => {
                let names: Vec<&str> = self.plugins.iter().map(|p| p.info.name).collect();
                Err(Error::new(format!("this module has no plugin {} (it has [{}])", go_quote(name), names.join(" "))))
            }
        }
    }

    /// Runs one operation. The result is valid until the next call.
    pub fn handle(&mut self, op: i32, h: i32, input: &[u8]) -> Result<&[u8]> {
        self.out.clear();
        match op {
            OP_OPEN | OP_VALIDATE => {
                if h != 0 {
                    return Err(Error::new(format!("{} takes handle 0, got {}", op_name(op), h)));
                }
                let out = if op == OP_OPEN { self.open(input)? } else { self.validate(input)? };
                self.out = out;
                return Ok(&self.out);
            }
            _ => {}
        }
        if op == OP_TRANSFORM_CHAIN {
            if h != 0 {
                return Err(Error::new(format!("TRANSFORM_CHAIN takes handle 0, got {}", h)));
            }
            crate::chain::transform_chain(&mut self.objects, input, &mut self.out)?;
            return Ok(&self.out);
        }
        if op == OP_TRANSFORM_CONVERT {
            if h != 0 {
                return Err(Error::new(format!("TRANSFORM_CONVERT takes handle 0, got {}", h)));
            }
            self.transform_convert(input)?;
            return Ok(&self.out);
        }
        if !self.objects.contains_key(&h) {
            if !(OP_OPEN..=OP_TEST).contains(&op) {
                return Err(Error::new(format!("unknown operation {}", op)));
            }
            return Err(Error::new(format!("{}: no open object with handle {}", op_name(op), h)));
        }
        if op == OP_CLOSE {
            let o = self.objects.remove(&h).unwrap();
            o.close()?;
            return Ok(&[]);
        }
        let o = self.objects.get_mut(&h).unwrap();
        let plugins = &self.plugins;
        let out = &mut self.out;
        match (op, o) {
            (OP_TASK_CONFIGS, Object::Connector { p, cfg }) => {
                *out = task_configs(&plugins[*p], cfg, input)?;
                Ok(out)
            }
            (OP_POLL, Object::Source { task, batch, .. }) => {
                batch.reset();
                task.poll(batch)?;
                Ok(batch.finish())
            }
            (OP_COMMIT, Object::Source { task, .. }) => {
                task.commit()?;
                Ok(&[])
            }
            (OP_PUT, Object::Sink { task, .. }) => {
                let recs = wire::decode_records(input)?;
                task.put(&recs)?;
                Ok(&[])
            }
            (OP_FLUSH, Object::Sink { task, .. }) => {
                let offs = parse_offsets(input).map_err(|e| Error::new(format!("FLUSH: bad input: {}", e)))?;
                task.flush(&offs)?;
                Ok(&[])
            }
            (OP_FROM_CONNECT, Object::Converter { conv, .. }) => {
                from_connect(conv.as_mut(), input, out)?;
                Ok(out)
            }
            (OP_TO_CONNECT, Object::Converter { conv, .. }) => {
                to_connect(conv.as_mut(), input, out)?;
                Ok(out)
            }
            (OP_TRANSFORM, Object::Transformation { t, .. }) => {
                transform(t.as_mut(), input, out)?;
                Ok(out)
            }
            (OP_TEST, Object::Predicate { pred, .. }) => {
                test(pred.as_mut(), input, out)?;
                Ok(out)
            }
            (op, o) if (OP_OPEN..=OP_TEST).contains(&op) => {
                Err(Error::new(format!("{} is not supported by a {} of {}", op_name(op), o.role(), plugins[o.plugin()].info.name)))
            }
            (op, _) => Err(Error::new(format!("unknown operation {}", op))),
        }
    }

    fn open(&mut self, input: &[u8]) -> Result<Vec<u8>> {
        let req = json::parse(input).map_err(|e| Error::new(format!("OPEN: bad request: {}", e)))?;
        let name = req.get("plugin").and_then(Value::as_str).unwrap_or("");
        let role = req.get("role").and_then(Value::as_str).unwrap_or("");
        let raw = string_map(req.get("config")).map_err(|e| Error::new(format!("OPEN: bad request: {}", e)))?;
        let i = self.lookup(name)?;
        let p = &self.plugins[i];
        let o = match (role, &p.imp) {
            ("connector", Implementation::Source(_) | Implementation::Sink(_)) => Object::Connector { p: i, cfg: checked_config(p, &raw)? },
            ("task", Implementation::Source(c)) => {
                let mut task = c.new_task();
                task.start(task_context(&req), &config::with_defaults(&p.info.config, &raw))?;
                Object::Source { p: i, task, batch: SourceBatch::new() }
            }
            ("task", Implementation::Sink(c)) => {
                let mut task = c.new_task();
                task.start(task_context(&req), &config::with_defaults(&p.info.config, &raw))?;
                Object::Sink { p: i, task }
            }
            ("converter", Implementation::Converter(new)) => {
                let cfg = checked_config(p, &raw)?;
                let mut conv = new();
                conv.configure(&cfg, cfg.get("converter.type").map(String::as_str) == Some("key"))?;
                Object::Converter { p: i, conv }
            }
            ("transformation", Implementation::Transformation(new)) => {
                let cfg = checked_config(p, &raw)?;
                let mut t = new();
                t.configure(&cfg)?;
                Object::Transformation { p: i, t }
            }
            ("predicate", Implementation::Predicate(new)) => {
                let cfg = checked_config(p, &raw)?;
                let mut pred = new();
                pred.configure(&cfg)?;
                Object::Predicate { p: i, pred }
            }
            _ => return Err(Error::new(format!("{} is a {} plugin and cannot be opened as {}", p.info.name, p.kind().name(), go_quote(role)))),
        };
        let h = self.new_handle();
        self.objects.insert(h, o);
        Ok(format!("{{\"handle\":{}}}", h).into_bytes())
    }

    fn new_handle(&mut self) -> i32 {
        loop {
            self.next = self.next.wrapping_add(1);
            if self.next <= 0 {
                self.next = 1;
            }
            if !self.objects.contains_key(&self.next) {
                return self.next;
            }
        }
    }

    fn validate(&mut self, input: &[u8]) -> Result<Vec<u8>> {
        let req = json::parse(input).map_err(|e| Error::new(format!("VALIDATE: bad request: {}", e)))?;
        let name = req.get("plugin").and_then(Value::as_str).unwrap_or("");
        let raw = string_map(req.get("config")).map_err(|e| Error::new(format!("VALIDATE: bad request: {}", e)))?;
        let p = &self.plugins[self.lookup(name)?];
        let mut errs = Errors::new();
        config::merge_errors(&mut errs, config::check_config(&p.info.config, &raw));
        // A transformation or predicate validates with a trial configure, which would only repeat
        // what the checks above found.
        if errs.is_empty() || !matches!(p.kind(), Kind::Transformation | Kind::Predicate) {
            config::merge_errors(&mut errs, p.validate(&config::with_defaults(&p.info.config, &raw)));
        }
        let errs = errs.into_iter().map(|(k, v)| (k, Value::Array(v.into_iter().map(Value::String).collect()))).collect();
        let mut resp = BTreeMap::new();
        resp.insert("errors".to_string(), Value::Object(errs));
        Ok(Value::Object(resp).to_json().into_bytes())
    }
}

/// A config with defaults filled in, after checking required keys, types and validators.
fn checked_config(p: &Plugin, raw: &Config) -> Result<Config> {
    let errs = config::check_config(&p.info.config, raw);
    if !errs.is_empty() {
        return Err(Error::new(format!("{}: invalid configuration: {}", p.info.name, config::format_errors(&errs))));
    }
    Ok(config::with_defaults(&p.info.config, raw))
}

fn task_context(req: &Value) -> TaskContext {
    let ctx = req.get("context");
    let connector = ctx.and_then(|c| c.get("connector")).and_then(Value::as_str).unwrap_or("");
    let task = ctx.and_then(|c| c.get("task")).and_then(Value::as_i64).unwrap_or(0);
    let allow: Vec<String> = match ctx.and_then(|c| c.get("fs_allow")) {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    TaskContext::new(connector, task, &allow)
}

/// A JSON object of strings (a config), or null as an empty one.
fn string_map(v: Option<&Value>) -> std::result::Result<Config, String> {
    match v {
        None | Some(Value::Null) => Ok(Config::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(format!("config value of {} is not a string", go_quote(k))),
            })
            .collect(),
        Some(_) => Err("config is not an object".to_string()),
    }
}

fn task_configs(p: &Plugin, cfg: &Config, input: &[u8]) -> Result<Vec<u8>> {
    let req = json::parse(input).map_err(|e| Error::new(format!("TASK_CONFIGS: bad request: {}", e)))?;
    let max = req.get("max_tasks").and_then(Value::as_i64).unwrap_or(0);
    if max < 1 {
        return Err(Error::new(format!("TASK_CONFIGS: max_tasks must be at least 1, got {}", max)));
    }
    let cfgs = match &p.imp {
        Implementation::Source(c) => c.task_configs(cfg, max as usize)?,
        Implementation::Sink(c) => c.task_configs(cfg, max as usize)?,
        _ => return Err(Error::new(format!("{} is a {}, not a connector", p.info.name, p.kind().name()))),
    };
    if cfgs.len() > max as usize {
        return Err(Error::new(format!("{} generated {} task configs, more than tasks.max ({})", p.info.name, cfgs.len(), max)));
    }
    let arr = cfgs.into_iter().map(|c| Value::Object(c.into_iter().map(|(k, v)| (k, Value::String(v))).collect())).collect();
    Ok(Value::Array(arr).to_json().into_bytes())
}

fn parse_offsets(input: &[u8]) -> std::result::Result<Vec<TopicPartitionOffset>, String> {
    match json::parse(input)? {
        Value::Null => Ok(Vec::new()),
        Value::Array(a) => Ok(a
            .iter()
            .map(|e| TopicPartitionOffset {
                topic: e.get("topic").and_then(Value::as_str).unwrap_or("").to_string(),
                partition: e.get("partition").and_then(Value::as_i64).unwrap_or(0) as i32,
                offset: e.get("offset").and_then(Value::as_i64).unwrap_or(0),
            })
            .collect()),
        _ => Err("not an array".to_string()),
    }
}

/// FROM_CONNECT: a data batch (§5.3) to a bytes batch (§5.4).
fn from_connect(conv: &mut dyn Converter, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    // The output buffer is kept for the next calls, and grown by doubling it would leave each
    // smaller block behind as a hole in the module's memory, which never shrinks: so it grows
    // once to about what a batch takes, which is the input's size for a text or JSON value
    // without a schema (the topic and tags it does not repeat make room for quotes).
    out.reserve_exact(input.len());
    let mut d = Decoder::new(input);
    let n = d.count("data batch", 5);
    wire::put_u32(out, n as u32);
    for _ in 0..n {
        let topic = d.str("topic");
        let v = d.data("value");
        if let Some(e) = d.err() {
            return Err(Error::new(e));
        }
        let at = out.len();
        wire::put_u32(out, 0);
        if conv.write_from_connect(topic, &v, out)? {
            let n = out.len() - at - 4;
            wire::patch_u32(out, at, n as u32);
        } else {
            out.truncate(at);
            wire::put_nullable_bytes(out, None);
        }
    }
    d.finish("data batch")?;
    Ok(())
}

/// TO_CONNECT: a bytes batch with topics (§5.5) to a data batch (§5.3).
fn to_connect(conv: &mut dyn Converter, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let mut d = Decoder::new(input);
    let n = d.count("bytes batch", 8);
    wire::put_u32(out, n as u32);
    for _ in 0..n {
        let topic = d.str("topic");
        let b = d.nullable_bytes("bytes");
        if let Some(e) = d.err() {
            return Err(Error::new(e));
        }
        wire::put_bytes(out, topic.as_bytes());
        conv.write_to_connect(topic, b, out)?;
    }
    d.finish("bytes batch")?;
    Ok(())
}

fn failure_class(e: &Error) -> &str {
    if e.class().is_empty() {
        wire::DATA_EXCEPTION
    } else {
        e.class()
    }
}

/// TRANSFORM: a record batch to a transform result (§5.6).
fn transform(t: &mut dyn Transformation, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let recs: Vec<Record> = wire::decode_records(input)?;
    wire::put_u32(out, 0);
    let mut entries = 0u32;
    for (i, r) in recs.iter().enumerate() {
        match t.apply(r) {
            Err(e) if e.is_retriable() => return Err(e.context(format!("record {}", i))),
            Err(e) => {
                wire::put_u32(out, i as u32);
                out.push(wire::STATUS_FAILED);
                wire::put_bytes(out, failure_class(&e).as_bytes());
                wire::put_bytes(out, e.message().as_bytes());
            }
            Ok(Outcome::Drop) => continue,
            Ok(Outcome::Unchanged) => {
                wire::put_u32(out, i as u32);
                out.push(wire::STATUS_UNCHANGED);
            }
            Ok(Outcome::Record(nr)) => {
                wire::put_u32(out, i as u32);
                out.push(wire::STATUS_RECORD);
                wire::put_record_fields(out, &nr, -1);
                wire::put_u32(out, 0);
                wire::put_u32(out, 0);
            }
        }
        entries += 1;
    }
    wire::patch_u32(out, 0, entries);
    Ok(())
}

/// TEST: a record batch to a test result (§5.7).
fn test(pred: &mut dyn Predicate, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let recs = wire::decode_records(input)?;
    wire::put_u32(out, recs.len() as u32);
    let mut failures = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        match pred.test(r) {
            Err(e) if e.is_retriable() => return Err(e.context(format!("record {}", i))),
            Err(e) => {
                out.push(wire::TEST_FAILED);
                failures.push(e);
            }
            Ok(true) => out.push(wire::TEST_MATCH),
            Ok(false) => out.push(wire::TEST_NO_MATCH),
        }
    }
    for e in failures {
        wire::put_bytes(out, failure_class(&e).as_bytes());
        wire::put_bytes(out, e.message().as_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigDef, ConfigType};
    use crate::wire::{decode_records, put_records, Data};
    use std::borrow::Cow;

    struct Counter;
    struct CounterTask {
        n: i64,
        partition: Value,
    }

    impl SourceConnector for Counter {
        fn task_configs(&self, cfg: &Config, max: usize) -> Result<Vec<Config>> {
            Ok(vec![cfg.clone(); max.min(2)])
        }
        fn new_task(&self) -> Box<dyn SourceTask> {
            Box::new(CounterTask { n: 0, partition: json::object([("counter", "c".into())]) })
        }
    }

    impl SourceTask for CounterTask {
        fn start(&mut self, ctx: TaskContext, _cfg: &Config) -> Result<()> {
            if let Some(off) = ctx.offset(&self.partition)? {
                self.n = off.get("n").and_then(Value::as_i64).unwrap_or(0);
            }
            Ok(())
        }
        fn poll(&mut self, batch: &mut SourceBatch) -> Result<()> {
            for _ in 0..2 {
                self.n += 1;
                let off = json::object([("n", Value::Int(self.n))]);
                let text = format!("count {}", self.n);
                batch.push(&SourceRecord {
                    topic: "counts",
                    value: Data::str(&text),
                    source_partition: Some(&self.partition),
                    source_offset: Some(&off),
                    ..Default::default()
                });
            }
            Ok(())
        }
    }

    struct Upper;

    impl Transformation for Upper {
        fn configure(&mut self, cfg: &Config) -> Result<()> {
            match cfg.get("mode").map(String::as_str) {
                Some("upper") => Ok(()),
                v => Err(Error::invalid_config("mode", v.unwrap_or(""), "String must be one of: upper")),
            }
        }
        fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
            match &r.value {
                Data::Null => Ok(Outcome::Drop),
                Data::String(s) if s.is_empty() => Ok(Outcome::Unchanged),
                Data::String(s) => Ok(Outcome::Record(Record { value: Data::String(Cow::Owned(s.to_ascii_uppercase())), ..r.clone() })),
                _ => Err(Error::new("not a string")),
            }
        }
    }

    fn register(m: &mut Module) {
        m.source(
            Info { name: "Counter", class: "com.example.Counter", aliases: &[], version: "", config: vec![ConfigDef::new("step").typ(ConfigType::Int).default("1")] },
            Counter,
        );
        m.transformation(
            Info { name: "Upper", class: "", aliases: &["UpperCase"], version: "2.0", config: vec![ConfigDef::new("mode").required()] },
            || Box::new(Upper),
        );
    }

    fn call(d: &mut Dispatcher, op: i32, h: i32, input: &[u8]) -> std::result::Result<Vec<u8>, String> {
        d.handle(op, h, input).map(|b| b.to_vec()).map_err(|e| e.message().to_string())
    }

    #[test]
    fn describe_open_poll_close() {
        let mut d = Dispatcher::new(register);
        // An instance the host only opens plugins in never builds the descriptor.
        assert!(call(&mut d, OP_OPEN, 0, br#"{"plugin":"Counter","role":"connector","config":{}}"#).is_ok() && d.desc.is_none());
        let mut d = Dispatcher::new(register);
        let desc = String::from_utf8(d.describe().to_vec()).unwrap();
        assert!(desc.starts_with(r#"{"abi":1,"plugins":[{"class":"com.example.Counter","config":[{"default_value":"1","#), "{}", desc);
        assert!(desc.contains(r#""aliases":["UpperCase"],"class":"Upper""#) && desc.contains(r#""version":"undefined""#), "{}", desc);

        let open = br#"{"plugin":"com.example.Counter","role":"connector","config":{"step":"x"},"context":{}}"#;
        assert_eq!(call(&mut d, OP_OPEN, 0, open), Err("Counter: invalid configuration: Invalid value x for configuration step: Not a number of type INT".into()));
        let h = call(&mut d, OP_OPEN, 0, br#"{"plugin":"Counter","role":"connector","config":{}}"#).unwrap();
        assert_eq!(h, br#"{"handle":1}"#);
        assert_eq!(call(&mut d, OP_TASK_CONFIGS, 1, br#"{"max_tasks":3}"#).unwrap(), br#"[{"step":"1"},{"step":"1"}]"#);
        assert_eq!(call(&mut d, OP_TASK_CONFIGS, 1, br#"{"max_tasks":0}"#), Err("TASK_CONFIGS: max_tasks must be at least 1, got 0".into()));
        assert_eq!(call(&mut d, OP_POLL, 1, b""), Err("POLL is not supported by a connector of Counter".into()));

        crate::host::set_offset(br#"{"counter":"c"}"#, br#"{"n":41}"#);
        call(&mut d, OP_OPEN, 0, br#"{"plugin":"Counter","role":"task","config":{},"context":{"connector":"c","task":0}}"#).unwrap();
        let out = call(&mut d, OP_POLL, 2, b"").unwrap();
        let recs = decode_records(&out).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!((recs[0].partition, recs[0].offset, recs[0].timestamp), (-1, -1, -1));
        assert_eq!(recs[1].value, Data::str("count 43"));
        assert_eq!((recs[1].source_partition, recs[1].source_offset), (&br#"{"counter":"c"}"#[..], &br#"{"n":43}"#[..]));
        call(&mut d, OP_COMMIT, 2, b"").unwrap();
        call(&mut d, OP_CLOSE, 2, b"").unwrap();
        assert_eq!(call(&mut d, OP_POLL, 2, b""), Err("POLL: no open object with handle 2".into()));
        assert_eq!(call(&mut d, 99, 1, b""), Err("unknown operation 99".into()));
        assert_eq!(call(&mut d, OP_OPEN, 3, b"{}"), Err("OPEN takes handle 0, got 3".into()));
        assert_eq!(
            call(&mut d, OP_OPEN, 0, br#"{"plugin":"Nope","role":"task"}"#),
            Err(r#"this module has no plugin "Nope" (it has [Counter Upper])"#.into())
        );
        assert_eq!(call(&mut d, OP_OPEN, 0, br#"{"plugin":"Upper","role":"task"}"#), Err(r#"Upper is a transformation plugin and cannot be opened as "task""#.into()));
    }

    #[test]
    fn validate_and_transform() {
        let mut d = Dispatcher::new(register);
        assert_eq!(
            call(&mut d, OP_VALIDATE, 0, br#"{"plugin":"Upper","config":{}}"#).unwrap(),
            br#"{"errors":{"mode":["Missing required configuration \"mode\" which has no default value."]}}"#
        );
        assert_eq!(
            call(&mut d, OP_VALIDATE, 0, br#"{"plugin":"Upper","config":{"mode":"lower"}}"#).unwrap(),
            br#"{"errors":{"mode":["Invalid value lower for configuration mode: String must be one of: upper"]}}"#
        );
        assert_eq!(call(&mut d, OP_VALIDATE, 0, br#"{"plugin":"Counter","config":{}}"#).unwrap(), br#"{"errors":{}}"#);
        let h = call(&mut d, OP_OPEN, 0, br#"{"plugin":"UpperCase","role":"transformation","config":{"mode":"upper"}}"#).unwrap();
        assert_eq!(h, br#"{"handle":1}"#);
        let mut batch = Vec::new();
        let rec = |v: Data<'static>| Record { topic: "t".into(), offset: 7, value: v, ..Default::default() };
        put_records(&mut batch, &[rec(Data::str("abc")), rec(Data::Null), rec(Data::str("")), rec(Data::bytes(b"x"))]);
        let out = call(&mut d, OP_TRANSFORM, 1, &batch).unwrap();
        let mut dec = Decoder::new(&out);
        assert_eq!(dec.u32("count"), 3);
        assert_eq!((dec.u32("input"), dec.u8("status")), (0, wire::STATUS_RECORD));
        let r = dec.record();
        assert_eq!((r.value, r.offset, r.source_offset), (Data::str("ABC"), -1, &b""[..]));
        assert_eq!((dec.u32("input"), dec.u8("status")), (2, wire::STATUS_UNCHANGED));
        assert_eq!((dec.u32("input"), dec.u8("status")), (3, wire::STATUS_FAILED));
        assert_eq!((dec.str("class"), dec.str("message")), (wire::DATA_EXCEPTION, "not a string"));
        assert_eq!(dec.finish("result"), Ok(()));
    }
}

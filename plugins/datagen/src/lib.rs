//! The datagen plugin module: a data generator source like Confluent's kafka-connect-datagen
//! (io.confluent.kafka.connect.datagen.DatagenConnector), for demos and benchmarks, on the
//! wasmconnect Rust SDK (sdk/rust).
//!
//! It writes the records of a quickstart (orders, users or pageviews: the field names and types of
//! kafka-connect-datagen's quickstart schemas) to `kafka.topic`, as Connect Struct values with their
//! schema, keyed by the quickstart's key field (or `schema.keyfield`). Each task waits a random
//! time of up to `max.interval` ms between records (0: as fast as the worker takes them) and stops
//! after `iterations` records (less than 1: never). With `random.seed` the data is deterministic:
//! record n of task t is a function of the seed, t and n alone, so two connectors with one seed write
//! the same records, and a restarted task goes on with the records it would have written.
//!
//! Source partitions and offsets are kafka-connect-datagen's: {"task.id": t} and
//! {"current.iteration", "random.seed", "task.generation"}, and so are the record headers
//! (task.generation, task.id, current.iteration). Unlike kafka-connect-datagen, a task that has
//! written its iterations goes idle instead of failing, and only the quickstarts are supported:
//! schema.string and schema.filename (arbitrary Avro schemas) are refused with a clear error.

mod quickstart;
mod rng;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use wasmconnect::config::{get_int, get_long, Errors};
use wasmconnect::json::{self, Value};
use wasmconnect::{Config, ConfigDef, ConfigType, Data, Error, Header, Importance, Info, Level, Module, Result, SourceBatch, SourceConnector, SourceRecord, SourceTask, TaskContext};

use quickstart::Quickstart;
use rng::Rng;

pub const VERSION: &str = "1.0.0";

const KAFKA_TOPIC: &str = "kafka.topic";
const MAX_INTERVAL: &str = "max.interval";
const ITERATIONS: &str = "iterations";
const SCHEMA_STRING: &str = "schema.string";
const SCHEMA_FILENAME: &str = "schema.filename";
const SCHEMA_KEYFIELD: &str = "schema.keyfield";
const QUICKSTART: &str = "quickstart";
const RANDOM_SEED: &str = "random.seed";

// Offset and header fields, as kafka-connect-datagen names them.
const TASK_ID: &str = "task.id";
const TASK_GENERATION: &str = "task.generation";
const CURRENT_ITERATION: &str = "current.iteration";

/// The most records one poll returns when they are due (max.interval 0: every poll).
const MAX_BATCH: usize = 1000;

/// A seed that every JSON reader keeps exactly (53 bits): it is stored in the source offset.
const SEED_MASK: u64 = (1 << 53) - 1;

fn register(m: &mut Module) {
    m.source(info(), Datagen);
}

wasmconnect::export_module!(register);

fn info() -> Info {
    Info {
        name: "DatagenConnector",
        class: "io.confluent.kafka.connect.datagen.DatagenConnector",
        aliases: &["Datagen"],
        version: VERSION,
        config: vec![
            ConfigDef::new(KAFKA_TOPIC).required().importance(Importance::High).doc("Topic to write to"),
            ConfigDef::new(MAX_INTERVAL).typ(ConfigType::Long).default("500").importance(Importance::High).doc("Max interval between messages (ms)"),
            ConfigDef::new(ITERATIONS)
                .typ(ConfigType::Int)
                .default("-1")
                .importance(Importance::High)
                .doc("Number of messages to send from each task, or less than 1 for unlimited"),
            ConfigDef::new(SCHEMA_STRING).default("").importance(Importance::High).doc("The literal JSON-encoded Avro schema to use (not supported: use quickstart)"),
            ConfigDef::new(SCHEMA_FILENAME).default("").importance(Importance::High).doc("Filename of schema to use (not supported: use quickstart)"),
            ConfigDef::new(SCHEMA_KEYFIELD).default("").importance(Importance::High).doc("Name of field to use as the message key"),
            ConfigDef::new(QUICKSTART).default("").importance(Importance::High).validator(valid_quickstart).doc("Name of quickstart to use: orders, users or pageviews"),
            ConfigDef::new(RANDOM_SEED).typ(ConfigType::Long).importance(Importance::Low).doc(
                "Numeric seed for generating random data. Two connectors started with the same seed will deterministically produce the same data. \
                 Each task will generate different data than the other tasks in the same connector.",
            ),
        ],
    }
}

fn valid_quickstart(v: &str) -> std::result::Result<(), String> {
    if v.trim().is_empty() || quickstart::find(v).is_some() {
        return Ok(());
    }
    Err(format!("not a quickstart of this plugin (it has {})", quickstart::names()))
}

/// A task's settings, checked.
struct Settings {
    topic: String,
    max_interval: u64,
    iterations: i64,
    quickstart: &'static Quickstart,
    key_field: &'static str,
    seed: Option<u64>,
}

impl Settings {
    /// Reads the settings of cfg (defaults filled in) or says, per setting, what is wrong.
    fn parse(cfg: &Config) -> std::result::Result<Settings, Errors> {
        let mut errs = Errors::new();
        let mut fail = |key: &str, msg: String| errs.entry(key.to_string()).or_default().push(msg);
        let get = |k: &str| cfg.get(k).map(|s| s.trim()).unwrap_or("");
        let topic = get(KAFKA_TOPIC).to_string();
        if topic.is_empty() {
            fail(KAFKA_TOPIC, "Invalid value  for configuration kafka.topic: String must be non-empty".into());
        }
        let sources: Vec<&str> = [SCHEMA_STRING, SCHEMA_FILENAME, QUICKSTART].into_iter().filter(|k| !get(k).is_empty()).collect();
        let mut quickstart = None;
        if sources.len() != 1 {
            let msg = format!("Must set exactly one of {}, {}, {}", SCHEMA_STRING, SCHEMA_FILENAME, QUICKSTART);
            let keys = if sources.is_empty() { vec![SCHEMA_STRING, SCHEMA_FILENAME, QUICKSTART] } else { sources };
            for k in keys {
                fail(k, msg.clone());
            }
        } else if sources[0] != QUICKSTART {
            fail(sources[0], format!("{} is not supported by this plugin, which generates the quickstarts only: set quickstart to one of {}", sources[0], quickstart::names()));
        } else {
            match quickstart::find(get(QUICKSTART)) {
                Some(q) => quickstart = Some(q),
                None => fail(QUICKSTART, format!("Invalid value {} for configuration quickstart: not a quickstart of this plugin (it has {})", get(QUICKSTART), quickstart::names())),
            }
        }
        let mut key_field = "";
        if let Some(q) = quickstart {
            key_field = q.key_field;
            let k = get(SCHEMA_KEYFIELD);
            if !k.is_empty() {
                match q.primitive_field(k) {
                    Some(f) => key_field = f.name,
                    None => fail(SCHEMA_KEYFIELD, format!("The schema does not contain the field provided in '{}' (a top-level field of {} that is not a struct)", SCHEMA_KEYFIELD, q.name)),
                }
            }
        }
        let max_interval = match get_long(cfg, MAX_INTERVAL, 500) {
            Ok(n) if n >= 0 => n as u64,
            Ok(n) => {
                fail(MAX_INTERVAL, format!("Invalid value {} for configuration {}: Value must be at least 0", n, MAX_INTERVAL));
                0
            }
            Err(e) => {
                fail(MAX_INTERVAL, e.message().to_string());
                0
            }
        };
        let iterations = match get_int(cfg, ITERATIONS, -1) {
            Ok(n) => n as i64,
            Err(e) => {
                fail(ITERATIONS, e.message().to_string());
                -1
            }
        };
        let seed = match cfg.get(RANDOM_SEED).map(|s| s.trim()).filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => match s.parse::<i64>() {
                Ok(n) => Some(n as u64),
                Err(_) => {
                    fail(RANDOM_SEED, format!("Invalid value {} for configuration {}: Not a number of type LONG", s, RANDOM_SEED));
                    None
                }
            },
        };
        match quickstart {
            Some(quickstart) if errs.is_empty() => Ok(Settings { topic, max_interval, iterations, quickstart, key_field, seed }),
            _ => Err(errs),
        }
    }
}

fn config_error(errs: &Errors) -> Error {
    Error::new(format!("DatagenConnector: invalid configuration: {}", wasmconnect::config::format_errors(errs)))
}

struct Datagen;

impl SourceConnector for Datagen {
    fn validate(&self, cfg: &Config) -> Errors {
        Settings::parse(cfg).err().unwrap_or_default()
    }

    /// tasks.max tasks, each told its task.id as kafka-connect-datagen does: each task writes its
    /// own records, `iterations` of them.
    fn task_configs(&self, cfg: &Config, max_tasks: usize) -> Result<Vec<Config>> {
        Settings::parse(cfg).map_err(|e| config_error(&e))?;
        Ok((0..max_tasks.max(1))
            .map(|i| {
                let mut c = cfg.clone();
                c.insert(TASK_ID.to_string(), i.to_string());
                c
            })
            .collect())
    }

    fn new_task(&self) -> Box<dyn SourceTask> {
        Box::new(DatagenTask::default())
    }
}

#[derive(Default)]
struct DatagenTask {
    ctx: TaskContext,
    s: Option<Settings>,
    task: i64,
    seed: u64,
    generation: i64,
    /// The iteration of the next record.
    count: i64,
    partition: Value,
    value_schema: String,
    key_schema: String,
    /// Draws the waits between records; the data has its own generators (Rng::for_record).
    waits: Option<Rng>,
    next_due: Option<Instant>,
    done_logged: bool,
    value: String,
}

/// The schema of the long headers.
const LONG_SCHEMA: &[u8] = br#"{"type":"int64","optional":false}"#;

impl SourceTask for DatagenTask {
    fn start(&mut self, ctx: TaskContext, cfg: &Config) -> Result<()> {
        let s = Settings::parse(cfg).map_err(|e| config_error(&e))?;
        self.task = match cfg.get(TASK_ID) {
            Some(v) => v.trim().parse().map_err(|_| Error::config(TASK_ID, format!("task.id {:?} is not a number", v)))?,
            None => ctx.task(),
        };
        self.seed = match s.seed {
            Some(seed) => seed,
            None => SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0) ^ (self.task as u64) << 40,
        } & SEED_MASK;
        self.partition = json::object([(TASK_ID, Value::Int(self.task))]);
        let stored = ctx.offset(&self.partition).map_err(|e| e.context("reading the stored offset"))?;
        if let Some(off) = stored {
            // The offset holds the next state, as kafka-connect-datagen stores it. A configured
            // seed wins over the stored one, so that the data stays the seed's.
            self.generation = off.get(TASK_GENERATION).and_then(Value::as_i64).unwrap_or(0);
            self.count = off.get(CURRENT_ITERATION).and_then(Value::as_i64).unwrap_or(0);
            if s.seed.is_none() {
                if let Some(seed) = off.get(RANDOM_SEED).and_then(Value::as_i64) {
                    self.seed = seed as u64 & SEED_MASK;
                }
            }
            ctx.log(Level::Info, &format!("resuming at iteration {} (generation {})", self.count, self.generation));
        }
        self.value_schema = s.quickstart.value_schema();
        let key = s.quickstart.primitive_field(s.key_field).expect("the key field is checked");
        self.key_schema = quickstart::primitive_schema(key.typ);
        self.waits = Some(Rng::new(self.seed ^ 0x5741_4954));
        self.ctx = ctx;
        self.s = Some(s);
        Ok(())
    }

    fn poll(&mut self, batch: &mut SourceBatch) -> Result<()> {
        let s = self.s.as_ref().expect("poll after start");
        let mut n = MAX_BATCH;
        if s.iterations > 0 {
            let left = (s.iterations - self.count).max(0) as usize;
            if left == 0 {
                if !self.done_logged {
                    self.done_logged = true;
                    self.ctx.log(Level::Info, &format!("generated the configured {} messages; the task writes no more", s.iterations));
                }
                return Ok(());
            }
            n = n.min(left);
        }
        if s.max_interval > 0 {
            n = n.min(records_due(self.waits.as_mut().expect("started"), &mut self.next_due, s.max_interval, n));
        }
        if n == 0 {
            return Ok(());
        }
        let offset_of = |count: i64, generation: i64, seed: u64| {
            json::object([
                (CURRENT_ITERATION, Value::Int(count)),
                (RANDOM_SEED, Value::Int(seed as i64)),
                (TASK_GENERATION, Value::Int(generation)),
            ])
        };
        let (generation, task) = (self.generation.to_string(), self.task.to_string());
        let mut iteration = String::new();
        batch.reserve(n * (self.value_schema.len() + 300));
        for i in 0..n {
            let count = self.count;
            self.value.clear();
            let mut rng = Rng::for_record(self.seed, self.task as u64, count as u64);
            let (ks, ke) = s.quickstart.write_value(&mut self.value, &mut rng, count, s.key_field);
            iteration.clear();
            iteration.push_str(&count.to_string());
            let headers = [
                Header { key: TASK_GENERATION.into(), value: Data::json(LONG_SCHEMA, generation.as_bytes()) },
                Header { key: TASK_ID.into(), value: Data::json(LONG_SCHEMA, task.as_bytes()) },
                Header { key: CURRENT_ITERATION.into(), value: Data::json(LONG_SCHEMA, iteration.as_bytes()) },
            ];
            self.count += 1;
            let offset;
            let mut r = SourceRecord {
                topic: &s.topic,
                key: Data::json(self.key_schema.as_bytes(), &self.value.as_bytes()[ks..ke]),
                value: Data::json(self.value_schema.as_bytes(), self.value.as_bytes()),
                headers: &headers,
                ..Default::default()
            };
            // The host stores the last offset of a batch only: the others are not sent.
            if i == n - 1 {
                offset = offset_of(self.count, self.generation + 1, self.seed);
                r.source_partition = Some(&self.partition);
                r.source_offset = Some(&offset);
            }
            batch.push(&r);
        }
        Ok(())
    }
}

/// How many records (at most `max`) are due now, each max.interval * random ms after the one
/// before, as kafka-connect-datagen sleeps before each record; poll does not block, so it returns
/// the records whose time has come. A task that was held up long (a paused task, a slow broker)
/// starts afresh rather than catching up in a burst.
fn records_due(waits: &mut Rng, next_due: &mut Option<Instant>, max_interval: u64, max: usize) -> usize {
    let now = Instant::now();
    let mut wait = || Duration::from_micros(waits.range(0, max_interval as i64 * 1000) as u64);
    let mut due = *next_due.get_or_insert_with(|| now + wait());
    if now.saturating_duration_since(due) > Duration::from_millis(max_interval.max(1000)) {
        due = now;
    }
    let mut n = 0;
    while n < max && due <= now {
        n += 1;
        due += wait();
    }
    *next_due = Some(due);
    n
}

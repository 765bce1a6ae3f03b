//! FileStreamSource: Kafka's FileStreamSourceTask.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::time::{SystemTime, UNIX_EPOCH};

use wasmconnect::config::{get_int, Errors};
use wasmconnect::json::{self, Value};
use wasmconnect::{Config, ConfigDef, ConfigType, Data, Error, Importance, Info, Level, Result, SourceBatch, SourceConnector, SourceRecord, SourceTask, TaskContext};

use crate::{one_task, FILE_CONFIG, VERSION};

const TOPIC_CONFIG: &str = "topic";
const BATCH_SIZE_CONFIG: &str = "batch.size";
const FILENAME_FIELD: &str = "filename";
const POSITION_FIELD: &str = "position";
const DEFAULT_BATCH_SIZE: i32 = 2000;

const NO_STDIN_ERROR: &str = "FileStreamSource requires \"file\": reading the standard input is not supported in the wasm sandbox";

pub fn info() -> Info {
    Info {
        name: "FileStreamSource",
        class: "org.apache.kafka.connect.file.FileStreamSourceConnector",
        aliases: &["FileStreamSourceConnector"],
        version: VERSION,
        config: vec![
            ConfigDef::new(FILE_CONFIG)
                .required()
                .importance(Importance::High)
                .doc("Source filename. Required: reading the standard input is not supported in the wasm sandbox."),
            ConfigDef::new(TOPIC_CONFIG).required().importance(Importance::High).doc("The topic to publish data to"),
            ConfigDef::new(BATCH_SIZE_CONFIG)
                .typ(ConfigType::Int)
                .default("2000")
                .importance(Importance::Low)
                .doc("The maximum number of records the source task can read from the file each time it is polled"),
        ],
    }
}

pub struct FileSource;

impl SourceConnector for FileSource {
    fn validate(&self, cfg: &Config) -> Errors {
        let mut errs = Errors::new();
        if let Some(v) = cfg.get(FILE_CONFIG) {
            if v.trim().is_empty() {
                errs.insert(FILE_CONFIG.into(), vec![NO_STDIN_ERROR.into()]);
            }
        }
        if let Some(v) = cfg.get(TOPIC_CONFIG) {
            if v.trim().is_empty() {
                errs.insert(TOPIC_CONFIG.into(), vec!["Invalid value  for configuration topic: String must be non-empty".into()]);
            } else if v.contains(',') {
                errs.insert(TOPIC_CONFIG.into(), vec!["'topic' in FileStreamSourceConnector configuration requires definition of a single topic".into()]);
            }
        }
        if let Ok(n) = get_int(cfg, BATCH_SIZE_CONFIG, DEFAULT_BATCH_SIZE) {
            if n < 1 {
                errs.insert(BATCH_SIZE_CONFIG.into(), vec![format!("Invalid value {} for configuration batch.size: Value must be at least 1", n)]);
            }
        }
        errs
    }

    fn task_configs(&self, cfg: &Config, _max_tasks: usize) -> Result<Vec<Config>> {
        one_task(cfg)
    }

    fn new_task(&self) -> Box<dyn SourceTask> {
        Box::new(FileSourceTask::default())
    }
}

/// How much of the file one read asks for.
const READ_CHUNK: usize = 64 << 10;

#[derive(Default)]
struct FileSourceTask {
    ctx: TaskContext,
    filename: String,
    topic: String,
    batch_size: usize,
    partition: Value,
    file: Option<File>,
    /// The file position of buf[start]: the position after the last line returned.
    pos: i64,
    /// Bytes read; buf[start..] is not yet returned (a partial line).
    buf: Vec<u8>,
    start: usize,
    /// The lines cut and not yet added to the batch, as ranges of buf.
    lines: Vec<(usize, usize)>,
    logged_missing: bool,
}

impl SourceTask for FileSourceTask {
    fn start(&mut self, ctx: TaskContext, cfg: &Config) -> Result<()> {
        self.ctx = ctx;
        self.filename = cfg.get(FILE_CONFIG).map(|s| s.trim().to_string()).unwrap_or_default();
        if self.filename.is_empty() {
            return Err(Error::new(NO_STDIN_ERROR));
        }
        self.topic = cfg.get(TOPIC_CONFIG).cloned().unwrap_or_default();
        if self.topic.trim().is_empty() {
            return Err(Error::new("FileStreamSource requires \"topic\""));
        }
        self.batch_size = get_int(cfg, BATCH_SIZE_CONFIG, DEFAULT_BATCH_SIZE)?.max(1) as usize;
        self.partition = json::object([(FILENAME_FIELD, Value::from(self.filename.as_str()))]);
        let stored = self.ctx.offset(&self.partition).map_err(|e| e.context(format!("reading the stored offset of {}", self.filename)))?;
        if let Some(off) = stored {
            self.pos = off.get(POSITION_FIELD).and_then(Value::as_i64).ok_or_else(|| Error::new("Offset position is the incorrect type"))?;
            self.ctx.log(Level::Debug, &format!("Found previous offset, trying to skip to file offset {}", self.pos));
        }
        match self.open() {
            Err(e) if !e.is_not_found() => Err(e),
            _ => Ok(()),
        }
    }

    /// Adds up to batch.size complete lines, or none when there is nothing new. It never blocks.
    fn poll(&mut self, batch: &mut SourceBatch) -> Result<()> {
        if self.file.is_none() {
            match self.open() {
                Ok(()) => {}
                Err(e) if e.is_not_found() => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        // The lines returned last time are no longer referenced: drop them now, so that buf holds
        // at most a read and a partial line.
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let ts = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
        let mut eof = false;
        let mut scanned = self.start;
        let mut n = 0;
        while n < self.batch_size {
            match cut_line(&self.buf, scanned) {
                Cut::Line { end, next } => {
                    self.lines.push((self.start, end));
                    self.pos += (next - self.start) as i64;
                    self.start = next;
                    scanned = next;
                    n += 1;
                }
                Cut::Partial { scanned: s } => {
                    if eof {
                        break;
                    }
                    scanned = s;
                    // The lines cut so far go into the batch before the next read, which can then
                    // drop them from buf.
                    self.add_lines(batch, ts);
                    eof = self.fill(&mut scanned)? == 0;
                }
            }
        }
        self.add_lines(batch, ts);
        // Only the last offset of a batch matters: the host stores it once everything before it is
        // written, so the others are not sent.
        if !batch.is_empty() {
            batch.set_last_source(&self.partition, &json::object([(POSITION_FIELD, Value::Int(self.pos))]));
        }
        Ok(())
    }

    fn stop(&mut self) -> Result<()> {
        self.file = None;
        Ok(())
    }
}

impl FileSourceTask {
    /// Opens the file and seeks to the stored position. A missing file is logged once.
    fn open(&mut self) -> Result<()> {
        let mut f = match self.ctx.open_file(&self.filename, OpenOptions::new().read(true)) {
            Ok(f) => f,
            Err(e) => {
                if e.is_not_found() && !self.logged_missing {
                    self.logged_missing = true;
                    self.ctx.log(Level::Warn, &format!("Couldn't find file {} for FileStreamSourceTask, waiting for it to be created", self.filename));
                }
                return Err(e);
            }
        };
        if self.pos > 0 {
            if let Ok(md) = f.metadata() {
                if (md.len() as i64) < self.pos {
                    self.ctx.log(
                        Level::Warn,
                        &format!("File {} is shorter ({} bytes) than the stored position {}; waiting for it to grow", self.filename, md.len(), self.pos),
                    );
                }
            }
            f.seek(SeekFrom::Start(self.pos as u64)).map_err(|e| Error::io(format!("seeking {} to {}", self.filename, self.pos), &e))?;
        }
        self.file = Some(f);
        self.logged_missing = false;
        self.ctx.log(Level::Debug, &format!("Opened {} for reading", self.filename));
        Ok(())
    }

    /// Adds the lines cut since the last call to the batch. The batch's buffer is kept for the
    /// next polls, and grown by steps it would leave each smaller block behind as a hole in the
    /// module's memory, which never shrinks (the allocator moves a block it grows): so when it
    /// lacks room, it grows once to what the whole batch will take, as far as the lines so far
    /// and what is left of the file tell.
    fn add_lines(&mut self, batch: &mut SourceBatch, ts: i64) {
        if self.lines.is_empty() {
            return;
        }
        let bytes: usize = self.lines.iter().map(|(s, e)| SourceBatch::record_len(&self.topic, e - s)).sum();
        if batch.room() < bytes {
            // The lines still to come: up to batch.size in all, and as many as the bytes of the
            // file after the last line cut hold at the mean length so far.
            let per_record = bytes / self.lines.len();
            let per_line = per_record - SourceBatch::record_len(&self.topic, 0) + 1;
            let left = self.file.as_ref().and_then(|f| f.metadata().ok()).map_or(0, |m| (m.len() as i64 - self.pos).max(0) as usize);
            let more = (self.batch_size - batch.len() - self.lines.len()).min(left / per_line + 1);
            // and the last record's source partition and offset, {"filename":...} {"position":...}
            batch.reserve(bytes + more * per_record + self.filename.len() + 64);
        }
        for &(s, e) in &self.lines {
            batch.push(&SourceRecord { topic: &self.topic, value: Data::text(&self.buf[s..e]), timestamp: Some(ts), ..Default::default() });
        }
        self.lines.clear();
    }

    /// Reads more of the file into buf and returns how many bytes it read (0 at the end of the
    /// file). The unreturned bytes move to the front first (the lines before them are in the
    /// batch); `scanned` moves with them.
    fn fill(&mut self, scanned: &mut usize) -> Result<usize> {
        debug_assert!(self.lines.is_empty());
        if self.start > 0 {
            self.buf.drain(..self.start);
            *scanned -= self.start;
            self.start = 0;
        }
        let len = self.buf.len();
        // Up to a chunk in all, so that the partial line before the read does not double buf;
        // a partial line longer than that grows it by a quarter chunk at least.
        self.buf.resize(READ_CHUNK.max(len + READ_CHUNK / 4), 0);
        let f = self.file.as_mut().expect("fill with an open file");
        let r = loop {
            match f.read(&mut self.buf[len..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r,
            }
        };
        let n = *r.as_ref().unwrap_or(&0);
        self.buf.truncate(len + n);
        r.map_err(|e| Error::io(format!("reading {}", self.filename), &e))
    }
}

enum Cut {
    /// A line ends at `end` (exclusive); the next one starts at `next`.
    Line { end: usize, next: usize },
    /// No whole line yet; `scanned` is where to look again once more is read.
    Partial { scanned: usize },
}

/// Splits the next line off buf like FileStreamSourceTask.extractLine: a line ends at \n,
/// \r or \r\n, and a \r at the end of what was read waits for the next byte. The bytes of the line
/// before `from` are known to hold no line end.
fn cut_line(buf: &[u8], from: usize) -> Cut {
    let i = find_line_end(buf, from);
    match buf.get(i) {
        Some(b'\n') => Cut::Line { end: i, next: i + 1 },
        Some(_) if i + 1 >= buf.len() => Cut::Partial { scanned: i },
        Some(_) => Cut::Line { end: i, next: if buf[i + 1] == b'\n' { i + 2 } else { i + 1 } },
        None => Cut::Partial { scanned: i },
    }
}

/// The index of the first \n or \r in buf at or after `from`, or buf.len(). It looks at 16 bytes
/// per step (a byte is zero in x ^ c exactly where x has c; the lowest flagged byte of the zero
/// test is exact), which in a guest is most of what reading a file costs.
fn find_line_end(buf: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let hits = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[i..i + 8]);
        let w = u64::from_le_bytes(w);
        zero(w ^ (ONES * b'\n' as u64)) | zero(w ^ (ONES * b'\r' as u64))
    };
    let mut i = from;
    // 16 bytes per iteration where it can, in one loop, as each iteration and each loop entered
    // also pays the fuel check; the word that hit is then found by the 8-byte step.
    loop {
        if i + 16 <= buf.len() && hits(i) | hits(i + 8) == 0 {
            i += 16;
        } else if i + 8 <= buf.len() {
            let h = hits(i);
            if h != 0 {
                return i + (h.trailing_zeros() / 8) as usize;
            }
            i += 8;
        } else {
            break;
        }
    }
    while i < buf.len() && buf[i] != b'\n' && buf[i] != b'\r' {
        i += 1;
    }
    i
}

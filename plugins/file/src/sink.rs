//! FileStreamSink: Kafka's FileStreamSinkTask. It writes whole lines only, so that a crash (kill -9,
//! a full disk) never leaves a line cut in two that redelivered records would be appended to.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};

use wasmconnect::config::Errors;
use wasmconnect::text::append_text;
use wasmconnect::{Config, ConfigDef, Error, Importance, Info, Level, Record, Result, SinkConnector, SinkTask, TaskContext, TopicPartitionOffset};

use crate::{one_task, FILE_CONFIG, VERSION};

const NO_STDOUT_ERROR: &str = "FileStreamSink requires \"file\": writing to the standard output is not supported in the wasm sandbox";

pub fn info() -> Info {
    Info {
        name: "FileStreamSink",
        class: "org.apache.kafka.connect.file.FileStreamSinkConnector",
        aliases: &["FileStreamSinkConnector"],
        version: VERSION,
        config: vec![ConfigDef::new(FILE_CONFIG)
            .required()
            .importance(Importance::High)
            .doc("Destination filename. Required: writing to the standard output is not supported in the wasm sandbox.")],
    }
}

pub struct FileSink;

impl SinkConnector for FileSink {
    fn validate(&self, cfg: &Config) -> Errors {
        let mut errs = Errors::new();
        if let Some(v) = cfg.get(FILE_CONFIG) {
            if v.trim().is_empty() {
                errs.insert(FILE_CONFIG.into(), vec![NO_STDOUT_ERROR.into()]);
            }
        }
        errs
    }

    fn task_configs(&self, cfg: &Config, _max_tasks: usize) -> Result<Vec<Config>> {
        one_task(cfg)
    }

    fn new_task(&self) -> Box<dyn SinkTask> {
        Box::new(FileSinkTask::default())
    }
}

/// Bounds the lines of one put kept before they are written out, and the chunks in which a partial
/// last line is looked for on start.
const SINK_BUFFER_SIZE: usize = 64 << 10;

#[derive(Default)]
struct FileSinkTask {
    filename: String,
    file: Option<File>,
    /// Bytes of whole lines in the file.
    size: u64,
    /// Whole lines of the current put, not written yet.
    pending: Vec<u8>,
}

impl SinkTask for FileSinkTask {
    fn start(&mut self, ctx: TaskContext, cfg: &Config) -> Result<()> {
        self.filename = cfg.get(FILE_CONFIG).map(|s| s.trim().to_string()).unwrap_or_default();
        if self.filename.is_empty() {
            return Err(Error::new(NO_STDOUT_ERROR));
        }
        let mut f = ctx
            .open_file(&self.filename, OpenOptions::new().create(true).append(true).read(true))
            .map_err(|e| e.context(format!("Couldn't find or create file '{}' for FileStreamSinkTask", self.filename)))?;
        let (size, dropped) = drop_partial_line(&mut f).map_err(|e| Error::io(format!("FileStreamSinkTask: removing the partial last line of {}", self.filename), &e))?;
        if dropped > 0 {
            ctx.log(
                Level::Warn,
                &format!(
                    "removed a partial last line of {} bytes from {}, left by a write that was cut short; the records it held are delivered again",
                    dropped, self.filename
                ),
            );
        }
        self.file = Some(f);
        self.size = size;
        Ok(())
    }

    /// Writes the text form of each value and a newline. As Kafka's FileStreamSinkTask, which prints
    /// each record, the lines are in the file when PUT returns, so a reader sees them at once rather
    /// than at the next offset commit; they are written with one write per put (and per 64 KiB) and
    /// synced at FLUSH.
    fn put(&mut self, records: &[Record<'_>]) -> Result<()> {
        for r in records {
            let n = self.pending.len();
            if let Err(e) = append_text(&mut self.pending, &r.value) {
                self.pending.truncate(n);
                return Err(e.context(format!("record {}-{}@{}", r.topic, r.partition, r.offset)));
            }
            self.pending.push(b'\n');
            if self.pending.len() >= SINK_BUFFER_SIZE {
                self.write()?;
            }
        }
        self.write()
    }

    /// Syncs the file, so that everything put so far is durable before its offsets are committed.
    fn flush(&mut self, _offsets: &[TopicPartitionOffset]) -> Result<()> {
        self.write()?;
        if let Some(f) = &self.file {
            f.sync_all().map_err(|e| Error::io(format!("syncing {}", self.filename), &e))?;
        }
        Ok(())
    }

    fn stop(&mut self) -> Result<()> {
        if self.file.is_none() {
            return Ok(());
        }
        let r = self.write();
        self.file = None;
        r
    }
}

impl FileSinkTask {
    /// Writes the pending lines. If the write fails part way, the file is truncated back to its last
    /// whole line.
    fn write(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let f = match &mut self.file {
            Some(f) => f,
            None => return Err(Error::new(format!("writing {}: file already closed", self.filename))),
        };
        let r = f.write_all(&self.pending);
        let n = self.pending.len() as u64;
        self.pending.clear();
        match r {
            Ok(()) => {
                self.size += n;
                Ok(())
            }
            Err(e) => {
                let _ = f.set_len(self.size);
                Err(Error::io(format!("writing {}", self.filename), &e))
            }
        }
    }
}

/// Truncates `f` after its last newline, removing what a write cut short by a crash left behind.
/// It returns the size of the file after that, and how many bytes it removed.
fn drop_partial_line(f: &mut File) -> std::io::Result<(u64, u64)> {
    let end = f.metadata()?.len();
    let mut buf = vec![0u8; SINK_BUFFER_SIZE];
    let mut keep = 0u64;
    let mut pos = end;
    while pos > 0 {
        let n = pos.min(buf.len() as u64);
        pos -= n;
        let chunk = &mut buf[..n as usize];
        f.seek(SeekFrom::Start(pos))?;
        f.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&c| c == b'\n') {
            keep = pos + i as u64 + 1;
            break;
        }
    }
    if keep == end {
        return Ok((end, 0));
    }
    f.set_len(keep)?;
    Ok((keep, end - keep))
}

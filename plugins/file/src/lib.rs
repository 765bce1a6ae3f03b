//! The file plugin module: Kafka's FileStream connectors on the wasmconnect Rust SDK (sdk/rust).
//!
//! - FileStreamSource (org.apache.kafka.connect.file.FileStreamSourceConnector) reads the lines of
//!   `file` into `topic`, `batch.size` lines per poll at most, as STRING values with null keys. Its
//!   source partition is {"filename": file} and its offset {"position": byte position after the
//!   line}, as in Kafka, so a restarted task resumes where the stored offset says. It waits for a
//!   file that does not exist yet and for the newline of a partial last line, and never blocks in
//!   POLL. Unlike Kafka, `file` is required: a sandboxed plugin has no standard input.
//! - FileStreamSink (org.apache.kafka.connect.file.FileStreamSinkConnector) appends the text form of
//!   each value plus a newline to `file`, writing each put at once, and syncs it on FLUSH.
//!
//! Both connectors run one task, as in Kafka. The file must lie in a directory granted by the worker
//! setting plugin.fs.allow.

mod sink;
mod source;

use wasmconnect::{Config, Module, Result};

pub const VERSION: &str = "1.0.0";
pub const FILE_CONFIG: &str = "file";

fn register(m: &mut Module) {
    m.source(source::info(), source::FileSource);
    m.sink(sink::info(), sink::FileSink);
}

wasmconnect::export_module!(register);

/// One task config whatever tasks.max is: only one reader of a file makes sense, and several
/// writers would interleave their lines.
fn one_task(cfg: &Config) -> Result<Vec<Config>> {
    Ok(vec![cfg.clone()])
}

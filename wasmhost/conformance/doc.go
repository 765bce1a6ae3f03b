// Package conformance holds the one suite of ABI cases (sdk/ABI.md) that every SDK's plugins
// must pass through the worker's plugin host: the descriptor, config validation, a batch round
// trip per plugin kind with every Connect type and logical type, tombstones and headers, error
// results and traps. It runs against the conformance module of each SDK (Go, Rust, C,
// AssemblyScript, Zig), which implement the same five plugins alike:
//
// conformance.Source (ConformanceSource, source, version 1.0.0). Settings: topic (STRING,
// required, HIGH), count (INT, default 3, MEDIUM). VALIDATE adds "count must not be negative"
// under count for a negative count. TASK_CONFIGS returns max_tasks configs, each the connector's
// with task.index set to 0, 1, .... A task reads the offset of the source partition
// {"source":"conformance"} when it opens ({"next":K}, else K = 0), and its first POLL returns the
// records K..count-1: topic from the config, partition -1, timestamp 1700000000000+i, key the
// STRING "key-i", value JSON with the schema struct conformance.Row {n: int64} and payload
// {"n":i}, one header i = STRING "i", and on at least the last record the source partition and
// the offset {"next":i+1}. Later POLLs return nothing.
//
// conformance.Sink (ConformanceSink, sink). Setting fail.on (STRING, default "", LOW). PUT fails
// the batch, not retriable, with "conformance: record at offset O is V" when a record's value is
// the STRING V = fail.on (non-empty); FLUSH logs "flushed N records, P partitions" at info, N
// the records put since the last FLUSH, P the partitions FLUSH was given.
//
// conformance.Converter (ConformanceConverter, converter). FROM_CONNECT: a STRING or BYTES value
// is its bytes, null is null, a JSON value is its payload read and written back through the
// SDK's data model. TO_CONNECT: bytes are a STRING, null is null.
//
// conformance.Transform (ConformanceTransform, transformation). Setting header (STRING, default
// "seen", MEDIUM); an empty header is refused under the key header with "header must not be
// empty" (VALIDATE and OPEN). Per record, by its value: null passes UNCHANGED; the STRING "drop"
// is dropped, "fail" fails the record (DataException, "conformance: fail requested"), "error"
// fails the batch as retriable ("conformance: error requested"), "trap" traps. Any other record
// has its JSON key, value and header values read and written back through the SDK's data model
// (other data is kept as it is) and gets the header <header> = STRING "c" appended.
//
// conformance.Predicate (ConformancePredicate, predicate). Setting header (STRING, required,
// HIGH). A record matches when it has a header of that name; the STRING value "fail" fails the
// record (DataException, "conformance: fail requested"), "trap" traps.
package conformance

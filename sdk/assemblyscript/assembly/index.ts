// The wasmconnect AssemblyScript SDK: write Kafka Connect source and sink connectors, converters,
// transformations and predicates in AssemblyScript. The SDK implements the plugin ABI
// (sdk/ABI.md); a plugin extends the classes below, registers them from its entry file, and
// re-exports the ABI functions of "./abi" (see README.md).
//
// Errors: AssemblyScript has no exceptions (a throw aborts, which traps and fails the task), so a
// method that fails calls fail(), failRetriable() or failConfig() and returns; a transformation or
// predicate fails one record with failRecord().
import { Data, TAG_NULL } from "./data";
import { Writer } from "./json";

export * from "./data";

// ---- logging, errors, offsets ------------------------------------------------------------------

@external("wasmconnect", "log")
declare function hostLog(level: i32, ptr: usize, len: i32): void;

@external("wasmconnect", "offset_get")
declare function hostOffsetGet(part: usize, partLen: i32, out: usize, cap: i32): i32;

export const TRACE = 0;
export const DEBUG = 1;
export const INFO = 2;
export const WARN = 3;
export const ERROR = 4;

/** log writes a line to the worker's log, tagged with the connector and task. */
export function log(level: i32, message: string): void {
  const b = String.UTF8.encode(message);
  hostLog(level, changetype<usize>(b), b.byteLength);
}

export class CallError {
  message: string = "";
  retriable: bool = false;
  key: string | null = null;
  failed: bool = false;
}

/** The current operation's error, set by fail and friends. */
export const callError = new CallError();

/** fail fails the current operation with a message (the host shows it in the task's status). */
export function fail(message: string): void {
  callError.failed = true;
  callError.message = message;
  callError.retriable = false;
  callError.key = null;
}

/** failRetriable fails the current operation; the host may repeat it later (errors.retry.timeout). */
export function failRetriable(message: string): void {
  fail(message);
  callError.retriable = true;
}

/** failConfig refuses a configuration because of one setting (VALIDATE reports it under key). */
export function failConfig(key: string, message: string): void {
  fail(message);
  callError.key = key;
}

export const DATA_EXCEPTION = "org.apache.kafka.connect.errors.DataException";

export class RecordFailure {
  failed: bool = false;
  className: string = DATA_EXCEPTION;
  message: string = "";
}

export const recordFailure = new RecordFailure();

/** failRecord fails the current record of a transformation or predicate alone (the connector's
 * errors.tolerance and dead letter queue decide its fate) and returns FAILED. */
export function failRecord(message: string, className: string = DATA_EXCEPTION): i32 {
  recordFailure.failed = true;
  recordFailure.className = className;
  recordFailure.message = message;
  return FAILED;
}

/** offset returns the stored source offset (JSON) for a source partition (JSON), or null. */
export function offset(partition: string): string | null {
  const p = String.UTF8.encode(partition);
  let cap = 256;
  let out = new Uint8Array(cap);
  let n = hostOffsetGet(changetype<usize>(p), p.byteLength, out.dataStart, cap);
  if (n < 0) return null;
  if (n > cap) {
    out = new Uint8Array(n);
    n = hostOffsetGet(changetype<usize>(p), p.byteLength, out.dataStart, n);
    if (n < 0 || n > out.length) return null;
  }
  return String.UTF8.decodeUnsafe(out.dataStart, <usize>n);
}

// ---- configuration -----------------------------------------------------------------------------

export const STRING_TYPE = "STRING";
export const INT = "INT";
export const SHORT = "SHORT";
export const LONG = "LONG";
export const DOUBLE = "DOUBLE";
export const BOOLEAN_TYPE = "BOOLEAN";
export const LIST = "LIST";
export const CLASS = "CLASS";
export const PASSWORD = "PASSWORD";

export const HIGH = "HIGH";
export const MEDIUM = "MEDIUM";
export const LOW = "LOW";

/** ConfigDef is a setting in the shape of Kafka's ConfigDef; defaultValue null means none. */
export class ConfigDef {
  type: string = STRING_TYPE;
  defaultValue: string | null = null;
  required: bool = false;
  importance: string = MEDIUM;
  doc: string = "";
  constructor(public name: string) {}
  typed(t: string): ConfigDef { this.type = t; return this; }
  withDefault(v: string): ConfigDef { this.defaultValue = v; return this; }
  isRequired(): ConfigDef { this.required = true; return this; }
  withImportance(i: string): ConfigDef { this.importance = i; return this; }
  documented(d: string): ConfigDef { this.doc = d; return this; }
}

/** Config is a plugin's settings, strings as Kafka Connect passes them, defaults filled in. */
export class Config {
  keys: string[] = [];
  values: string[] = [];
  has(key: string): bool { return this.keys.indexOf(key) >= 0; }
  get(key: string, fallback: string = ""): string {
    const i = this.keys.indexOf(key);
    return i < 0 ? fallback : this.values[i];
  }
  getInt(key: string, fallback: i64 = 0): i64 {
    const i = this.keys.indexOf(key);
    return i < 0 ? fallback : I64.parseInt(this.values[i].trim());
  }
  getBool(key: string, fallback: bool = false): bool {
    const i = this.keys.indexOf(key);
    return i < 0 ? fallback : this.values[i].trim().toLowerCase() == "true";
  }
  set(key: string, value: string): void {
    const i = this.keys.indexOf(key);
    if (i >= 0) this.values[i] = value;
    else { this.keys.push(key); this.values.push(value); }
  }
  clone(): Config {
    const c = new Config();
    c.keys = this.keys.slice(0);
    c.values = this.values.slice(0);
    return c;
  }
}

/** Errors collects VALIDATE's messages per setting. */
export class Errors {
  keys: string[] = [];
  messages: string[] = [];
  add(key: string, message: string): void { this.keys.push(key); this.messages.push(message); }
  get length(): i32 { return this.keys.length; }
}

// ---- records -----------------------------------------------------------------------------------

export class Header {
  constructor(public key: string, public value: Data) {}
}

/** Record is a record (sdk/ABI.md §5.2). partition -1 lets the producer choose; offset is the Kafka
 * offset of a sink record, -1 for a source record; timestamp ms since the epoch, -1 for none.
 * sourcePartition and sourceOffset are JSON objects (source records; empty otherwise). */
export class Record {
  topic: string = "";
  partition: i32 = -1;
  offset: i64 = -1;
  timestamp: i64 = -1;
  key: Data = Data.null();
  value: Data = Data.null();
  headers: Header[] = [];
  sourcePartition: string = "";
  sourceOffset: string = "";

  /** header returns the last header named key, or null. */
  header(key: string): Header | null {
    for (let i = this.headers.length - 1; i >= 0; i--) if (this.headers[i].key == key) return this.headers[i];
    return null;
  }
  addHeader(key: string, value: Data): void { this.headers.push(new Header(key, value)); }
}

export class TopicPartitionOffset {
  constructor(public topic: string, public partition: i32, public offset: i64) {}
}

// ---- plugins -----------------------------------------------------------------------------------

/** Info describes a plugin in the module's descriptor. */
export class Info {
  className: string = "";
  aliases: string[] = [];
  version: string = "undefined";
  config: ConfigDef[] = [];
  constructor(public name: string) {}
  withClass(c: string): Info { this.className = c; return this; }
  withVersion(v: string): Info { this.version = v; return this; }
  withAliases(a: string[]): Info { this.aliases = a; return this; }
  define(d: ConfigDef): Info { this.config.push(d); return this; }
}

export class TaskContext {
  constructor(public connector: string, public task: i32) {}
  log(level: i32, message: string): void { log(level, message); }
  offset(partition: string): string | null { return offset(partition); }
}

/** The connector side of a source: validate adds plugin-specific messages after the SDK's checks;
 * taskConfigs splits the config (default: one task with the connector's config). */
export abstract class SourceConnector {
  validate(cfg: Config, errs: Errors): void {}
  taskConfigs(cfg: Config, maxTasks: i32): Config[] { return [cfg]; }
  abstract newTask(): SourceTask;
}

export abstract class SourceTask {
  start(ctx: TaskContext, cfg: Config): void {}
  /** poll adds the next records to batch; add nothing when there is nothing new (never block). */
  abstract poll(batch: Record[]): void;
  commit(): void {}
  stop(): void {}
}

export abstract class SinkConnector {
  validate(cfg: Config, errs: Errors): void {}
  taskConfigs(cfg: Config, maxTasks: i32): Config[] { return [cfg]; }
  abstract newTask(): SinkTask;
}

export abstract class SinkTask {
  start(ctx: TaskContext, cfg: Config): void {}
  abstract put(records: Record[]): void;
  /** flush makes everything put so far durable; offsets are the next offsets to read. */
  flush(offsets: TopicPartitionOffset[]): void {}
  stop(): void {}
}

/** A converter; fromConnect returns null for a Kafka null, toConnect gets null for one. */
export abstract class Converter {
  configure(cfg: Config, isKey: bool): void {}
  abstract fromConnect(topic: string, value: Data): Uint8Array | null;
  abstract toConnect(topic: string, bytes: Uint8Array | null): Data;
}

// What a transformation's apply did with the record it was given.
export const FAILED = -1; // failRecord said why
export const UNCHANGED = 0; // the record passes as it came
export const CHANGED = 1; // the record was changed in place
export const DROP = 2; // filter it out
export const ERROR_BATCH = 3; // fail the whole batch (fail / failRetriable said why)

/** A single message transform. The record's offset and source partition and offset are the
 * host's: changing them does nothing. */
export abstract class Transformation {
  configure(cfg: Config): void {}
  abstract apply(record: Record): i32;
}

/** A predicate; test returns 1 (matches), 0 (does not), FAILED (failRecord) or ERROR_BATCH. */
export abstract class Predicate {
  configure(cfg: Config): void {}
  abstract test(record: Record): i32;
}

export const K_SOURCE = 0;
export const K_SINK = 1;
export const K_CONVERTER = 2;
export const K_TRANSFORMATION = 3;
export const K_PREDICATE = 4;

export class Plugin {
  source: SourceConnector | null = null;
  sink: SinkConnector | null = null;
  newConverter: (() => Converter) | null = null;
  newTransformation: (() => Transformation) | null = null;
  newPredicate: (() => Predicate) | null = null;
  constructor(public kind: i32, public info: Info) {}
}

export const plugins: Plugin[] = [];

export function registerSource(info: Info, c: SourceConnector): void {
  const p = new Plugin(K_SOURCE, info);
  p.source = c;
  plugins.push(p);
}

export function registerSink(info: Info, c: SinkConnector): void {
  const p = new Plugin(K_SINK, info);
  p.sink = c;
  plugins.push(p);
}

/** registerConverter registers a converter; make is called once per converter the host opens
 * (a top-level function or a function expression that captures nothing). */
export function registerConverter(info: Info, make: () => Converter): void {
  const p = new Plugin(K_CONVERTER, info);
  p.newConverter = make;
  plugins.push(p);
}

export function registerTransformation(info: Info, make: () => Transformation): void {
  const p = new Plugin(K_TRANSFORMATION, info);
  p.newTransformation = make;
  plugins.push(p);
}

export function registerPredicate(info: Info, make: () => Predicate): void {
  const p = new Plugin(K_PREDICATE, info);
  p.newPredicate = make;
  plugins.push(p);
}

export { Writer };
export const NULL_TAG = TAG_NULL;

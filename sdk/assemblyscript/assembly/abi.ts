// The ABI exports (sdk/ABI.md §1, §4). A plugin's entry file re-exports them:
//
//   export { wc_abi_version, wc_alloc, wc_free, wc_describe, wc_call } from "<sdk>/assembly/abi";
//
// and builds with --use abort=<this file>/wcAbort, so that the module imports nothing from "env".
import {
  Config, ConfigDef, Errors, Header, Plugin, Record, TaskContext, TopicPartitionOffset, callError, plugins, recordFailure,
  K_SOURCE, K_SINK, K_CONVERTER, K_TRANSFORMATION, K_PREDICATE, SourceTask, SinkTask, Converter, Transformation, Predicate,
  CHANGED, UNCHANGED, DROP, FAILED, DATA_EXCEPTION,
} from "./index";
import { Data, TAG_NULL, TAG_BYTES, TAG_STRING, TAG_JSON } from "./data";
import { JNode, J_ARRAY, J_FALSE, J_NUMBER, J_OBJECT, J_STRING, J_TRUE, parseJSON, jsonError, Writer, utf8, text } from "./json";

/** wcAbort replaces AssemblyScript's env.abort: an abort (a failed assertion, a throw) traps. */
export function wcAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  unreachable();
}

const RESULT_ERROR: u64 = 0x80000000;
const RESULT_RETRIABLE: u64 = 0x40000000;

const KINDS = ["source", "sink", "converter", "transformation", "predicate"];
const ROLES = ["connector", "task", "converter", "transformation", "predicate"];

/** The result of the last call; it stays valid until the next (sdk/ABI.md §2). */
const out = new Writer();
let errBytes = new Uint8Array(0);

function pack(ptr: usize, len: i32, flags: u64): u64 {
  return (<u64>ptr << 32) | (<u64>(<u32>len & 0x3fffffff)) | flags;
}

function result(): u64 { return out.len == 0 ? 0 : pack(out.buf.dataStart, out.len, 0); }

function errorResult(fallback: string): u64 {
  const msg = callError.failed ? callError.message : fallback;
  errBytes = utf8(msg);
  return pack(errBytes.dataStart, errBytes.length, RESULT_ERROR | (callError.failed && callError.retriable ? RESULT_RETRIABLE : 0));
}

function failWith(msg: string): u64 {
  callError.failed = true;
  callError.message = msg;
  callError.retriable = false;
  return errorResult(msg);
}

class Obj {
  task: SourceTask | null = null;
  sinkTask: SinkTask | null = null;
  converter: Converter | null = null;
  transformation: Transformation | null = null;
  predicate: Predicate | null = null;
  cfg: Config = new Config();
  constructor(public plugin: Plugin, public role: i32) {}
}

const objects: Array<Obj | null> = [];

export function wc_abi_version(): i32 { return 1; }

export function wc_alloc(size: i32): usize { return heap.alloc(size > 0 ? <usize>size : 1); }

export function wc_free(ptr: usize, size: i32): void { heap.free(ptr); }

export function wc_describe(): u64 {
  out.reset();
  out.ascii("{\"abi\":1,\"plugins\":[");
  for (let i = 0; i < plugins.length; i++) {
    const info = plugins[i].info;
    if (i > 0) out.u8(0x2c);
    out.ascii("{\"name\":"); out.jsonString(info.name);
    out.ascii(",\"class\":"); out.jsonString(info.className.length > 0 ? info.className : info.name);
    out.ascii(",\"aliases\":[");
    for (let a = 0; a < info.aliases.length; a++) { if (a > 0) out.u8(0x2c); out.jsonString(info.aliases[a]); }
    out.ascii("],\"kind\":"); out.jsonString(KINDS[plugins[i].kind]);
    out.ascii(",\"version\":"); out.jsonString(info.version);
    out.ascii(",\"config\":[");
    for (let c = 0; c < info.config.length; c++) {
      const d = info.config[c];
      if (c > 0) out.u8(0x2c);
      out.ascii("{\"name\":"); out.jsonString(d.name);
      out.ascii(",\"type\":"); out.jsonString(d.type);
      out.ascii(d.required ? ",\"required\":true" : ",\"required\":false");
      out.ascii(",\"default_value\":");
      const dv = d.defaultValue;
      if (dv != null) out.jsonString(dv); else out.ascii("null");
      out.ascii(",\"importance\":"); out.jsonString(d.importance);
      out.ascii(",\"documentation\":"); out.jsonString(d.doc);
      out.ascii(",\"group\":null,\"width\":\"NONE\",\"display_name\":"); out.jsonString(d.name);
      out.ascii(",\"dependents\":[],\"order\":-1}");
    }
    out.ascii("]}");
  }
  out.ascii("]}");
  return result();
}

function input(ptr: usize, len: i32): Uint8Array {
  const b = new Uint8Array(len > 0 ? len : 0);
  if (len > 0) memory.copy(b.dataStart, ptr, <usize>len);
  return b;
}

/** wc_call runs one operation, then collects the garbage it left (with the minimal runtime the
 * collector runs only here, so a batch is never interrupted by it). */
export function wc_call(handle: i32, op: i32, ptr: usize, len: i32): u64 {
  const r = call(handle, op, ptr, len);
  if (ASC_RUNTIME == 1) __collect(); // 1: the minimal runtime
  return r;
}

function call(handle: i32, op: i32, ptr: usize, len: i32): u64 {
  callError.failed = false;
  callError.key = null;
  const inp = input(ptr, len);
  if (op == 1) return open(inp);
  if (op == 3) return validate(inp);
  if (op < 1 || op > 12) return failWith("unknown operation " + op.toString());
  if (handle < 1 || handle > objects.length || objects[handle - 1] == null) return failWith("no open object with handle " + handle.toString());
  const o = objects[handle - 1]!;
  const k = o.plugin.kind;
  if (op == 2) { close(o); objects[handle - 1] = null; return 0; }
  if (op == 4 && o.role == 0) return taskConfigs(o, inp);
  if (op == 5 && o.task != null) return poll(o);
  if (op == 6 && o.task != null) { o.task!.commit(); return callError.failed ? errorResult("COMMIT failed") : 0; }
  if (op == 7 && o.sinkTask != null) return put(o, inp);
  if (op == 8 && o.sinkTask != null) return flush(o, inp);
  if (op == 9 && o.converter != null) return fromConnect(o, inp);
  if (op == 10 && o.converter != null) return toConnect(o, inp);
  if (op == 11 && o.transformation != null) return transform(o, inp);
  if (op == 12 && o.predicate != null) return test(o, inp);
  return failWith("operation " + op.toString() + " does not apply to a " + KINDS[k] + " " + ROLES[o.role]);
}

function findPlugin(name: string): Plugin | null {
  for (let i = 0; i < plugins.length; i++) if (plugins[i].info.name == name) return plugins[i];
  return null;
}

function configOf(req: JNode): Config {
  const c = new Config();
  const o = req.get("config");
  if (o == null || o.kind != J_OBJECT) return c;
  for (let i = 0; i < o.keys.length; i++) {
    const v = o.items[i];
    if (v.kind == J_STRING || v.kind == J_NUMBER) c.set(o.keys[i], v.text);
    else if (v.kind == J_TRUE || v.kind == J_FALSE) c.set(o.keys[i], v.kind == J_TRUE ? "true" : "false");
  }
  return c;
}

function secret(d: ConfigDef): bool { return d.type == "PASSWORD" || d.name.toLowerCase().indexOf("password") >= 0; }

function isInt(s: string, lo: i64, hi: i64): bool {
  if (s.length == 0 || s.length > 20) return false;
  let i = s.charCodeAt(0) == 45 || s.charCodeAt(0) == 43 ? 1 : 0;
  if (i == s.length) return false;
  let x: i64 = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
    x = x * 10 + <i64>(c - 48);
    if (x < 0) return false;
  }
  if (s.charCodeAt(0) == 45) x = -x;
  return x >= lo && x <= hi;
}

/** checkDefs fills in defaults and checks required settings and types with Kafka's texts. */
function checkDefs(p: Plugin, c: Config, errs: Errors): void {
  const defs = p.info.config;
  for (let i = 0; i < defs.length; i++) {
    const d = defs[i];
    if (!c.has(d.name)) {
      const dv = d.defaultValue;
      if (dv != null) c.set(d.name, dv);
      else if (d.required) errs.add(d.name, "Missing required configuration \"" + d.name + "\" which has no default value.");
      continue;
    }
    const raw = c.get(d.name);
    const v = raw.trim();
    const shown = secret(d) ? "[hidden]" : raw;
    const invalid = "Invalid value " + shown + " for configuration " + d.name + ": ";
    if (d.type == "BOOLEAN" && v.toLowerCase() != "true" && v.toLowerCase() != "false") errs.add(d.name, invalid + "Expected value to be either true or false");
    else if (d.type == "INT" && !isInt(v, -2147483648, 2147483647)) errs.add(d.name, invalid + "Not a number of type INT");
    else if (d.type == "SHORT" && !isInt(v, -32768, 32767)) errs.add(d.name, invalid + "Not a number of type SHORT");
    else if (d.type == "LONG" && !isInt(v, i64.MIN_VALUE, i64.MAX_VALUE)) errs.add(d.name, invalid + "Not a number of type LONG");
    else if (d.type == "DOUBLE" && (v.length == 0 || isNaN(F64.parseFloat(v)))) errs.add(d.name, invalid + "Not a number of type DOUBLE");
  }
}

/** configure makes and configures the object of a converter, transformation or predicate. */
function configure(o: Obj, isKey: bool): void {
  const p = o.plugin;
  if (p.kind == K_CONVERTER) { const c = p.newConverter!(); c.configure(o.cfg, isKey); o.converter = c; }
  else if (p.kind == K_TRANSFORMATION) { const t = p.newTransformation!(); t.configure(o.cfg); o.transformation = t; }
  else if (p.kind == K_PREDICATE) { const q = p.newPredicate!(); q.configure(o.cfg); o.predicate = q; }
}

function open(inp: Uint8Array): u64 {
  const req = parseJSON(inp, "the OPEN request");
  if (req == null) return failWith(jsonError);
  const name = req.get("plugin"), role = req.get("role");
  if (name == null || role == null) return failWith("OPEN: the request has no plugin or role");
  const p = findPlugin(name.text);
  if (p == null) return failWith("OPEN: this module has no plugin " + name.text);
  const r = ROLES.indexOf(role.text);
  const connector = p.kind == K_SOURCE || p.kind == K_SINK;
  if (r < 0 || (connector ? r > 1 : r != p.kind)) return failWith("OPEN: plugin " + p.info.name + " is a " + KINDS[p.kind] + " and cannot be opened as " + role.text);
  const o = new Obj(p, r);
  o.cfg = configOf(req);
  const errs = new Errors();
  checkDefs(p, o.cfg, errs);
  if (errs.length > 0) return failWith(errs.messages.join("; "));
  if (r == 1) {
    const ctx = req.get("context");
    let cn = "", task = 0;
    if (ctx != null) {
      const c = ctx.get("connector"), t = ctx.get("task");
      if (c != null) cn = c.text;
      if (t != null) task = I32.parseInt(t.text);
    }
    const tc = new TaskContext(cn, task);
    if (p.kind == K_SOURCE) { const t = p.source!.newTask(); t.start(tc, o.cfg); o.task = t; }
    else { const t = p.sink!.newTask(); t.start(tc, o.cfg); o.sinkTask = t; }
  } else if (r > 1) {
    configure(o, o.cfg.get("converter.type") == "key");
  }
  if (callError.failed) return errorResult("the plugin refused its configuration");
  let h = 0;
  for (let i = 0; i < objects.length; i++) if (objects[i] == null) { objects[i] = o; h = i + 1; break; }
  if (h == 0) { objects.push(o); h = objects.length; }
  out.reset();
  out.ascii("{\"handle\":" + h.toString() + "}");
  return result();
}

function close(o: Obj): void {
  if (o.task != null) o.task!.stop();
  if (o.sinkTask != null) o.sinkTask!.stop();
}

function validate(inp: Uint8Array): u64 {
  const req = parseJSON(inp, "the VALIDATE request");
  if (req == null) return failWith(jsonError);
  const name = req.get("plugin");
  const p = name != null ? findPlugin(name.text) : null;
  if (p == null) return failWith("VALIDATE: this module has no such plugin");
  const cfg = configOf(req);
  const errs = new Errors();
  checkDefs(p, cfg, errs);
  if (errs.length == 0) {
    if (p.kind == K_SOURCE) p.source!.validate(cfg, errs);
    else if (p.kind == K_SINK) p.sink!.validate(cfg, errs);
    else {
      const trial = new Obj(p, p.kind);
      trial.cfg = cfg;
      configure(trial, false);
      if (callError.failed) {
        const key = callError.key;
        errs.add(key != null ? key : "", callError.message);
        callError.failed = false;
      }
    }
  }
  out.reset();
  out.ascii("{\"errors\":{");
  const done: string[] = [];
  for (let i = 0; i < errs.keys.length; i++) {
    const k = errs.keys[i];
    if (done.indexOf(k) >= 0) continue;
    if (done.length > 0) out.u8(0x2c);
    done.push(k);
    out.jsonString(k);
    out.ascii(":[");
    let first = true;
    for (let j = i; j < errs.keys.length; j++) {
      if (errs.keys[j] != k) continue;
      if (!first) out.u8(0x2c);
      first = false;
      out.jsonString(errs.messages[j]);
    }
    out.u8(0x5d);
  }
  out.ascii("}}");
  return result();
}

function taskConfigs(o: Obj, inp: Uint8Array): u64 {
  const req = parseJSON(inp, "the TASK_CONFIGS request");
  if (req == null) return failWith(jsonError);
  const m = req.get("max_tasks");
  const max = m != null ? I32.parseInt(m.text) : 1;
  const cfgs = o.plugin.kind == K_SOURCE ? o.plugin.source!.taskConfigs(o.cfg, max) : o.plugin.sink!.taskConfigs(o.cfg, max);
  if (callError.failed) return errorResult("TASK_CONFIGS failed");
  out.reset();
  out.u8(0x5b);
  for (let i = 0; i < cfgs.length && i < max; i++) {
    if (i > 0) out.u8(0x2c);
    out.u8(0x7b);
    const c = cfgs[i];
    for (let j = 0; j < c.keys.length; j++) {
      if (j > 0) out.u8(0x2c);
      out.jsonString(c.keys[j]);
      out.u8(0x3a);
      out.jsonString(c.values[j]);
    }
    out.u8(0x7d);
  }
  out.u8(0x5d);
  return result();
}

// ---- record layouts (sdk/ABI.md §5) ------------------------------------------------------------

class Reader {
  pos: i32 = 0;
  bad: bool = false;
  constructor(public b: Uint8Array) {}
  need(n: i32): bool {
    if (this.bad || n < 0 || this.b.length - this.pos < n) { this.bad = true; return false; }
    return true;
  }
  u8(): u8 { if (!this.need(1)) return 0; return this.b[this.pos++]; }
  u32(): u32 {
    if (!this.need(4)) return 0;
    const v = load<u32>(this.b.dataStart + <usize>this.pos);
    this.pos += 4;
    return v;
  }
  u64(): u64 {
    if (!this.need(8)) return 0;
    const v = load<u64>(this.b.dataStart + <usize>this.pos);
    this.pos += 8;
    return v;
  }
  take(n: i32): Uint8Array {
    if (!this.need(n)) return new Uint8Array(0);
    const s = this.b.slice(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  bytes(): Uint8Array { return this.take(<i32>this.u32()); }
  str(): string {
    const n = <i32>this.u32();
    if (!this.need(n)) return "";
    const s = String.UTF8.decodeUnsafe(this.b.dataStart + <usize>this.pos, <usize>n);
    this.pos += n;
    return s;
  }
  data(): Data {
    const t = this.u8();
    if (t == TAG_NULL) return Data.null();
    if (t == TAG_BYTES || t == TAG_STRING) return new Data(t, this.bytes(), new Uint8Array(0));
    if (t == TAG_JSON) { const s = this.bytes(); return new Data(TAG_JSON, this.bytes(), s); }
    this.bad = true;
    return Data.null();
  }
  record(): Record {
    const r = new Record();
    r.topic = this.str();
    r.partition = <i32>this.u32();
    r.offset = <i64>this.u64();
    r.timestamp = <i64>this.u64();
    r.key = this.data();
    r.value = this.data();
    const nh = <i32>this.u32();
    if (nh < 0 || nh > (this.b.length - this.pos) / 5) { this.bad = true; return r; }
    for (let i = 0; i < nh && !this.bad; i++) {
      const k = this.str();
      r.headers.push(new Header(k, this.data()));
    }
    r.sourcePartition = this.str();
    r.sourceOffset = this.str();
    return r;
  }
  records(): Record[] | null {
    const n = <i32>this.u32();
    if (this.bad || n < 0 || n > (this.b.length - this.pos) / 30) return null;
    const rs: Record[] = [];
    for (let i = 0; i < n && !this.bad; i++) rs.push(this.record());
    if (this.bad || this.pos != this.b.length) return null;
    return rs;
  }
}

function writeData(w: Writer, d: Data): void {
  w.u8(d.tag);
  if (d.tag == TAG_BYTES || d.tag == TAG_STRING) w.bytes(d.bytes);
  else if (d.tag == TAG_JSON) { w.bytes(d.schema); w.bytes(d.bytes); }
}

function writeRecord(w: Writer, r: Record): void {
  w.str(r.topic);
  w.u32(<u32>r.partition);
  w.u64(<u64>r.offset);
  w.u64(<u64>r.timestamp);
  writeData(w, r.key);
  writeData(w, r.value);
  w.u32(<u32>r.headers.length);
  for (let i = 0; i < r.headers.length; i++) { w.str(r.headers[i].key); writeData(w, r.headers[i].value); }
  w.str(r.sourcePartition);
  w.str(r.sourceOffset);
}

function poll(o: Obj): u64 {
  const batch: Record[] = [];
  o.task!.poll(batch);
  if (callError.failed) return errorResult("POLL failed");
  if (batch.length == 0) return 0;
  out.reset();
  out.u32(<u32>batch.length);
  for (let i = 0; i < batch.length; i++) writeRecord(out, batch[i]);
  return result();
}

function put(o: Obj, inp: Uint8Array): u64 {
  const rs = new Reader(inp).records();
  if (rs == null) return failWith("malformed record batch");
  o.sinkTask!.put(rs);
  return callError.failed ? errorResult("PUT failed") : 0;
}

function flush(o: Obj, inp: Uint8Array): u64 {
  const offs: TopicPartitionOffset[] = [];
  if (inp.length > 0) {
    const req = parseJSON(inp, "the FLUSH request");
    if (req == null) return failWith(jsonError);
    for (let i = 0; i < req.items.length; i++) {
      const e = req.items[i];
      const t = e.get("topic"), p = e.get("partition"), f = e.get("offset");
      offs.push(new TopicPartitionOffset(t != null ? t.text : "", p != null ? I32.parseInt(p.text) : 0, f != null ? I64.parseInt(f.text) : 0));
    }
  }
  o.sinkTask!.flush(offs);
  return callError.failed ? errorResult("FLUSH failed") : 0;
}

function fromConnect(o: Obj, inp: Uint8Array): u64 {
  const r = new Reader(inp);
  const n = <i32>r.u32();
  out.reset();
  out.u32(<u32>n);
  for (let i = 0; i < n && !r.bad; i++) {
    const topic = r.str();
    const d = r.data();
    if (r.bad) break;
    const b = o.converter!.fromConnect(topic, d);
    if (callError.failed) return errorResult("FROM_CONNECT failed");
    if (b == null) out.u32(0xffffffff);
    else out.bytes(b);
  }
  if (r.bad || r.pos != inp.length) return failWith("malformed data batch");
  return result();
}

function toConnect(o: Obj, inp: Uint8Array): u64 {
  const r = new Reader(inp);
  const n = <i32>r.u32();
  const topics: string[] = [];
  const values: Data[] = [];
  for (let i = 0; i < n && !r.bad; i++) {
    const topic = r.str();
    const len = r.u32();
    const b: Uint8Array | null = len == 0xffffffff ? null : r.take(<i32>len);
    if (r.bad) break;
    const d = o.converter!.toConnect(topic, b);
    if (callError.failed) return errorResult("TO_CONNECT failed");
    topics.push(topic);
    values.push(d);
  }
  if (r.bad || r.pos != inp.length) return failWith("malformed bytes batch");
  out.reset();
  out.u32(<u32>n);
  for (let i = 0; i < n; i++) { out.str(topics[i]); writeData(out, values[i]); }
  return result();
}

function transform(o: Obj, inp: Uint8Array): u64 {
  const rs = new Reader(inp).records();
  if (rs == null) return failWith("malformed record batch");
  out.reset();
  out.u32(0);
  let entries: u32 = 0;
  for (let i = 0; i < rs.length; i++) {
    recordFailure.failed = false;
    const v = o.transformation!.apply(rs[i]);
    if (v == DROP) continue;
    out.u32(<u32>i);
    if (v == UNCHANGED) out.u8(2);
    else if (v == CHANGED) { out.u8(0); writeRecord(out, rs[i]); }
    else if (v == FAILED) {
      out.u8(1);
      out.str(recordFailure.failed ? recordFailure.className : DATA_EXCEPTION);
      out.str(recordFailure.failed ? recordFailure.message : "the transformation failed");
    } else return errorResult("TRANSFORM failed");
    entries++;
  }
  out.patchU32(0, entries);
  return result();
}

function test(o: Obj, inp: Uint8Array): u64 {
  const rs = new Reader(inp).records();
  if (rs == null) return failWith("malformed record batch");
  out.reset();
  out.u32(<u32>rs.length);
  const classes: string[] = [], messages: string[] = [];
  for (let i = 0; i < rs.length; i++) {
    recordFailure.failed = false;
    const m = o.predicate!.test(rs[i]);
    if (m == FAILED) {
      out.u8(2);
      classes.push(recordFailure.failed ? recordFailure.className : DATA_EXCEPTION);
      messages.push(recordFailure.failed ? recordFailure.message : "the predicate failed");
    } else if (m == 0 || m == 1) out.u8(<u8>m);
    else return errorResult("TEST failed");
  }
  for (let i = 0; i < classes.length; i++) { out.str(classes[i]); out.str(messages[i]); }
  return result();
}

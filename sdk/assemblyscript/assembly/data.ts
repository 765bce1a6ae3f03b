// Connect's data model: Data as it crosses the ABI (sdk/ABI.md §5.1), schemas, values and structs,
// with the JSON encoding JsonConverter uses.
import { JNode, J_ARRAY, J_FALSE, J_NULL, J_NUMBER, J_OBJECT, J_STRING, J_TRUE, parseJSON, jsonError, Writer, utf8 } from "./json";

export const TAG_NULL: u8 = 0;
export const TAG_BYTES: u8 = 1;
export const TAG_STRING: u8 = 2;
export const TAG_JSON: u8 = 3;

/** Data is a key, value or header value: null, raw bytes, a string, or JSON with an optional
 * schema (empty: schemaless), as JsonConverter writes them. */
export class Data {
  constructor(public tag: u8, public bytes: Uint8Array, public schema: Uint8Array) {}
  static null(): Data { return new Data(TAG_NULL, new Uint8Array(0), new Uint8Array(0)); }
  static string(s: string): Data { return new Data(TAG_STRING, utf8(s), new Uint8Array(0)); }
  static bytes(b: Uint8Array): Data { return new Data(TAG_BYTES, b, new Uint8Array(0)); }
  static json(schema: Uint8Array, payload: Uint8Array): Data { return new Data(TAG_JSON, payload, schema); }
  get isNull(): bool { return this.tag == TAG_NULL; }
  /** The text of a STRING value (or of any bytes, as UTF-8). */
  get text(): string { return String.UTF8.decodeUnsafe(this.bytes.dataStart, <usize>this.bytes.length); }
  isString(s: string): bool { return this.tag == TAG_STRING && this.text == s; }
}

// Schema types, as JsonConverter names them.
export const INT8 = "int8";
export const INT16 = "int16";
export const INT32 = "int32";
export const INT64 = "int64";
export const FLOAT32 = "float";
export const FLOAT64 = "double";
export const BOOLEAN = "boolean";
export const STRING = "string";
export const BYTES = "bytes";
export const ARRAY = "array";
export const MAP = "map";
export const STRUCT = "struct";

// Connect's logical types.
export const DECIMAL = "org.apache.kafka.connect.data.Decimal";
export const DATE = "org.apache.kafka.connect.data.Date";
export const TIME = "org.apache.kafka.connect.data.Time";
export const TIMESTAMP = "org.apache.kafka.connect.data.Timestamp";

export class Field {
  constructor(public name: string, public schema: Schema) {}
}

/** Schema is a Connect schema. version 0 means none. */
export class Schema {
  name: string | null = null;
  version: i32 = 0;
  doc: string | null = null;
  paramKeys: string[] = [];
  paramValues: string[] = [];
  fields: Field[] = [];
  items: Schema | null = null;
  keys: Schema | null = null;
  values: Schema | null = null;
  defaultValue: Value | null = null;
  constructor(public type: string, public optional: bool = false) {}

  static array(items: Schema, optional: bool = false): Schema { const s = new Schema(ARRAY, optional); s.items = items; return s; }
  static map(keys: Schema, values: Schema, optional: bool = false): Schema { const s = new Schema(MAP, optional); s.keys = keys; s.values = values; return s; }
  static decimal(scale: i32, optional: bool = false): Schema { const s = logical(BYTES, DECIMAL, optional); s.setParam("scale", scale.toString()); return s; }
  static date(optional: bool = false): Schema { return logical(INT32, DATE, optional); }
  static time(optional: bool = false): Schema { return logical(INT32, TIME, optional); }
  static timestamp(optional: bool = false): Schema { return logical(INT64, TIMESTAMP, optional); }

  field(name: string, schema: Schema): Schema { this.fields.push(new Field(name, schema)); return this; }
  fieldIndex(name: string): i32 {
    for (let i = 0; i < this.fields.length; i++) if (this.fields[i].name == name) return i;
    return -1;
  }
  param(key: string): string | null {
    for (let i = 0; i < this.paramKeys.length; i++) if (this.paramKeys[i] == key) return this.paramValues[i];
    return null;
  }
  setParam(key: string, value: string): void {
    for (let i = 0; i < this.paramKeys.length; i++) if (this.paramKeys[i] == key) { this.paramValues[i] = value; return; }
    this.paramKeys.push(key);
    this.paramValues.push(value);
  }
  is(logicalName: string): bool { const n = this.name; return n != null && n == logicalName; }

  /** The JSON it was read from or first written as: a schema is frozen once decoded or encoded
   * (decode shares it between records); change a copy (clone) instead. */
  json: Uint8Array | null = null;

  /** The schema as JsonConverter writes it. */
  toJSON(): Uint8Array {
    let j = this.json;
    if (j == null) {
      const w = new Writer();
      writeSchema(w, this, null);
      j = w.take();
      this.json = j;
    }
    return j;
  }

  /** A copy that may be changed: fields and parameters copied, nested schemas shared. */
  clone(): Schema {
    const c = new Schema(this.type, this.optional);
    c.name = this.name; c.version = this.version; c.doc = this.doc;
    c.paramKeys = this.paramKeys.slice(0); c.paramValues = this.paramValues.slice(0);
    c.fields = this.fields.slice(0);
    c.items = this.items; c.keys = this.keys; c.values = this.values; c.defaultValue = this.defaultValue;
    return c;
  }
}

function logical(type: string, name: string, optional: bool): Schema {
  const s = new Schema(type, optional);
  s.name = name;
  s.version = 1;
  return s;
}

export const V_NULL: u8 = 0;
export const V_BOOL: u8 = 1;
export const V_INT: u8 = 2;
export const V_FLOAT: u8 = 3;
export const V_STRING: u8 = 4;
export const V_BYTES: u8 = 5;
export const V_ARRAY: u8 = 6;
export const V_MAP: u8 = 7;
export const V_STRUCT: u8 = 8;

/** Value is a Connect value. Integers of every width (and Date, Time, Timestamp) are V_INT, float
 * and double V_FLOAT, a Decimal V_BYTES with its unscaled value (big-endian two's complement). A
 * map keeps its entries in `items` (keys) and `entries` (values); a struct its fields in `entries`,
 * in the order of its schema's. */
export class Value {
  b: bool = false;
  i: i64 = 0;
  f: f64 = 0;
  s: string = "";
  bytes: Uint8Array = new Uint8Array(0);
  items: Value[] = [];
  entries: Value[] = [];
  schema: Schema | null = null;
  constructor(public kind: u8) {}

  static null(): Value { return new Value(V_NULL); }
  static bool(b: bool): Value { const v = new Value(V_BOOL); v.b = b; return v; }
  static int(i: i64): Value { const v = new Value(V_INT); v.i = i; return v; }
  static float(f: f64): Value { const v = new Value(V_FLOAT); v.f = f; return v; }
  static string(s: string): Value { const v = new Value(V_STRING); v.s = s; return v; }
  static bytes(b: Uint8Array): Value { const v = new Value(V_BYTES); v.bytes = b; return v; }
  static array(items: Value[]): Value { const v = new Value(V_ARRAY); v.items = items; return v; }
  static map(): Value { return new Value(V_MAP); }
  /** A struct of schema s with every field null. */
  static struct(s: Schema): Value {
    const v = new Value(V_STRUCT);
    v.schema = s;
    for (let i = 0; i < s.fields.length; i++) v.entries.push(Value.null());
    return v;
  }
  /** A Decimal's value from its unscaled integer. */
  static decimal(unscaled: i64): Value {
    const be = new Uint8Array(8);
    for (let i = 0; i < 8; i++) be[i] = <u8>(unscaled >> (56 - 8 * i));
    let skip = 0;
    while (skip < 7 && ((be[skip] == 0 && (be[skip + 1] & 0x80) == 0) || (be[skip] == 0xff && (be[skip + 1] & 0x80) != 0))) skip++;
    return Value.bytes(be.slice(skip));
  }
  get isNull(): bool { return this.kind == V_NULL; }
  put(key: Value, value: Value): Value { this.items.push(key); this.entries.push(value); return this; }
  /** A struct field by name; null if there is no such field. */
  get(field: string): Value | null {
    const s = this.schema;
    if (s == null) return null;
    const i = s.fieldIndex(field);
    return i < 0 ? null : this.entries[i];
  }
  set(field: string, v: Value): bool {
    const s = this.schema;
    if (s == null) return false;
    const i = s.fieldIndex(field);
    if (i < 0) return false;
    this.entries[i] = v;
    return true;
  }
  /** A Decimal's unscaled value (it must fit in 64 bits). */
  get unscaled(): i64 {
    let x: i64 = this.bytes.length > 0 && (this.bytes[0] & 0x80) != 0 ? -1 : 0;
    for (let i = 0; i < this.bytes.length; i++) x = (x << 8) | <i64>this.bytes[i];
    return x;
  }
}

/** Decoded is what decode returns: a schema (null when schemaless) and a value, or an error. */
export class Decoded {
  constructor(public schema: Schema | null, public value: Value, public error: string | null) {}
}

/** decode turns data into Connect's model: a STRING is a string schema and value, BYTES an optional
 * bytes schema, null no schema and a null value, JSON its schema and payload. */
export function decode(d: Data): Decoded {
  if (d.tag == TAG_NULL) return new Decoded(null, Value.null(), null);
  if (d.tag == TAG_STRING) return new Decoded(new Schema(STRING), Value.string(d.text), null);
  if (d.tag == TAG_BYTES) return new Decoded(new Schema(BYTES, true), Value.bytes(d.bytes), null);
  let schema: Schema | null = null;
  if (d.schema.length > 0) {
    if (lastSchema != null && sameBytes(d.schema, lastSchemaBytes)) schema = lastSchema;
    else {
      const sj = parseJSON(d.schema, "the schema");
      if (sj == null) return new Decoded(null, Value.null(), jsonError);
      errorText = null;
      schema = schemaFromJSON(sj, 0);
      if (errorText != null) return new Decoded(null, Value.null(), errorText);
      schema!.json = d.schema;
      lastSchema = schema;
      lastSchemaBytes = d.schema;
    }
  }
  const pj = parseJSON(d.bytes, "the payload");
  if (pj == null) return new Decoded(schema, Value.null(), jsonError);
  errorText = null;
  const v = valueFromJSON(pj, schema);
  if (errorText != null) return new Decoded(schema, Value.null(), errorText);
  return new Decoded(schema, v, null);
}

/** encode writes a schema (null: schemaless) and value as JSON data; null when the value does not
 * fit the schema (encodeError says why). */
export function encode(schema: Schema | null, v: Value): Data | null {
  const w = new Writer();
  encodeError = null;
  if (!writeValue(w, schema, v, 0)) return null;
  const payload = w.take();
  return Data.json(schema != null ? schema.toJSON() : new Uint8Array(0), payload);
}

export let encodeError: string | null = null;

// The last schema decode parsed: the records of a batch mostly share one, so it is parsed once.
let lastSchema: Schema | null = null;
let lastSchemaBytes = new Uint8Array(0);

function sameBytes(a: Uint8Array, b: Uint8Array): bool {
  return a.length == b.length && memory.compare(a.dataStart, b.dataStart, <usize>a.length) == 0;
}
let errorText: string | null = null;

function bad(msg: string): Value {
  if (errorText == null) errorText = msg;
  return Value.null();
}

function schemaFromJSON(n: JNode, depth: i32): Schema | null {
  if (n.kind == J_NULL) return null;
  if (depth > 64 || n.kind != J_OBJECT) { bad("a schema must be a JSON object"); return null; }
  const t = n.get("type");
  if (t == null || t.kind != J_STRING) { bad("schema has no \"type\""); return null; }
  const opt = n.get("optional");
  const s = new Schema(t.text, opt != null && opt.kind == J_TRUE);
  let x = n.get("name");
  if (x != null && x.kind == J_STRING) s.name = x.text;
  x = n.get("version");
  if (x != null && x.kind == J_NUMBER) s.version = I32.parseInt(x.text);
  x = n.get("doc");
  if (x != null && x.kind == J_STRING) s.doc = x.text;
  x = n.get("parameters");
  if (x != null && x.kind == J_OBJECT) for (let i = 0; i < x.keys.length; i++) if (x.items[i].kind == J_STRING) s.setParam(x.keys[i], x.items[i].text);
  if (s.type == ARRAY) {
    const items = n.get("items");
    if (items == null || (s.items = schemaFromJSON(items, depth + 1)) == null) { bad("array schema has no items"); return null; }
  } else if (s.type == MAP) {
    const k = n.get("keys"), v = n.get("values");
    if (k == null || v == null) { bad("map schema has no keys or values"); return null; }
    s.keys = schemaFromJSON(k, depth + 1);
    s.values = schemaFromJSON(v, depth + 1);
    if (s.keys == null || s.values == null) { bad("map schema has no keys or values"); return null; }
  } else if (s.type == STRUCT) {
    x = n.get("fields");
    if (x != null && x.kind == J_ARRAY) {
      for (let i = 0; i < x.items.length; i++) {
        const fname = x.items[i].get("field");
        if (fname == null || fname.kind != J_STRING) { bad("struct field has no \"field\" name"); return null; }
        const fs = schemaFromJSON(x.items[i], depth + 1);
        if (fs == null) return null;
        s.fields.push(new Field(fname.text, fs));
      }
    }
  } else if (s.type != INT8 && s.type != INT16 && s.type != INT32 && s.type != INT64 && s.type != FLOAT32 && s.type != FLOAT64 &&
    s.type != BOOLEAN && s.type != STRING && s.type != BYTES) {
    bad("unknown schema type \"" + s.type + "\"");
    return null;
  }
  x = n.get("default");
  if (x != null && x.kind != J_NULL) s.defaultValue = valueFromJSON(x, s);
  return s;
}

function isInteger(text: string): bool {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c == 46 || c == 101 || c == 69) return false;
  }
  return true;
}

function valueFromJSON(n: JNode, s: Schema | null): Value {
  if (s == null) {
    if (n.kind == J_NULL) return Value.null();
    if (n.kind == J_TRUE || n.kind == J_FALSE) return Value.bool(n.kind == J_TRUE);
    if (n.kind == J_STRING) return Value.string(n.text);
    if (n.kind == J_NUMBER) return isInteger(n.text) ? Value.int(I64.parseInt(n.text)) : Value.float(F64.parseFloat(n.text));
    if (n.kind == J_ARRAY) {
      const a: Value[] = [];
      for (let i = 0; i < n.items.length; i++) a.push(valueFromJSON(n.items[i], null));
      return Value.array(a);
    }
    const m = Value.map();
    for (let i = 0; i < n.keys.length; i++) m.put(Value.string(n.keys[i]), valueFromJSON(n.items[i], null));
    return m;
  }
  if (n.kind == J_NULL) {
    const d = s.defaultValue;
    if (d != null) return d;
    if (!s.optional) return bad("null for a " + s.type + " schema that is not optional");
    return Value.null();
  }
  const t = s.type;
  if (t == INT8 || t == INT16 || t == INT32 || t == INT64) {
    if (n.kind != J_NUMBER || !isInteger(n.text)) return bad("a JSON " + n.kind.toString() + " does not match schema type " + t);
    return Value.int(I64.parseInt(n.text));
  }
  if (t == FLOAT32 || t == FLOAT64) {
    if (n.kind != J_NUMBER) return bad("JSON value does not match schema type " + t);
    return Value.float(F64.parseFloat(n.text));
  }
  if (t == BOOLEAN) {
    if (n.kind != J_TRUE && n.kind != J_FALSE) return bad("JSON value does not match schema type boolean");
    return Value.bool(n.kind == J_TRUE);
  }
  if (t == STRING) {
    if (n.kind != J_STRING) return bad("JSON value does not match schema type string");
    return Value.string(n.text);
  }
  if (t == BYTES) {
    if (n.kind == J_NUMBER && s.is(DECIMAL)) return decimalFromNumber(n.text, s);
    if (n.kind != J_STRING) return bad("JSON value does not match schema type bytes");
    const b = base64Decode(n.text);
    if (b == null) return bad("bytes are not base64");
    return Value.bytes(b);
  }
  if (t == ARRAY) {
    if (n.kind != J_ARRAY) return bad("JSON value does not match schema type array");
    const a: Value[] = [];
    for (let i = 0; i < n.items.length; i++) a.push(valueFromJSON(n.items[i], s.items));
    return Value.array(a);
  }
  if (t == MAP) {
    const m = Value.map();
    if (n.kind == J_OBJECT && s.keys!.type == STRING) {
      for (let i = 0; i < n.keys.length; i++) m.put(Value.string(n.keys[i]), valueFromJSON(n.items[i], s.values));
      return m;
    }
    if (n.kind != J_ARRAY) return bad("JSON value does not match schema type map");
    for (let i = 0; i < n.items.length; i++) {
      const e = n.items[i];
      if (e.kind != J_ARRAY || e.items.length != 2) return bad("a map entry must be [key, value]");
      m.put(valueFromJSON(e.items[0], s.keys), valueFromJSON(e.items[1], s.values));
    }
    return m;
  }
  // struct
  if (n.kind != J_OBJECT) return bad("JSON value does not match schema type struct");
  const v = Value.struct(s);
  for (let i = 0; i < s.fields.length; i++) {
    const f = n.get(s.fields[i].name);
    v.entries[i] = valueFromJSON(f != null ? f : new JNode(), s.fields[i].schema);
  }
  return v;
}

function decimalFromNumber(text: string, s: Schema): Value {
  const sp = s.param("scale");
  const scale = sp != null ? I32.parseInt(sp) : 0;
  let x: i64 = 0, frac = 0, dot = false;
  const neg = text.charCodeAt(0) == 45;
  for (let i = neg ? 1 : 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c == 46) { dot = true; continue; }
    if (c < 48 || c > 57) return bad("a Decimal number must be plain digits");
    if (dot) { if (frac == scale) continue; frac++; }
    x = x * 10 + <i64>(c - 48);
  }
  for (; frac < scale; frac++) x *= 10;
  return Value.decimal(neg ? -x : x);
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64Decode(s: string): Uint8Array | null {
  const out = new Writer();
  let acc: u32 = 0, bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c == 61) break;
    const at = c >= 65 && c <= 90 ? c - 65 : c >= 97 && c <= 122 ? c - 71 : c >= 48 && c <= 57 ? c + 4 : c == 43 ? 62 : c == 47 ? 63 : -1;
    if (at < 0) return null;
    acc = (acc << 6) | <u32>at;
    bits += 6;
    if (bits >= 8) { bits -= 8; out.u8(<u8>(acc >> bits)); }
  }
  return out.take();
}

function base64(w: Writer, b: Uint8Array): void {
  w.u8(0x22);
  let i = 0;
  for (; i + 2 < b.length; i += 3) {
    w.u8(<u8>B64.charCodeAt(b[i] >> 2)); w.u8(<u8>B64.charCodeAt(((b[i] & 3) << 4) | (b[i + 1] >> 4)));
    w.u8(<u8>B64.charCodeAt(((b[i + 1] & 15) << 2) | (b[i + 2] >> 6))); w.u8(<u8>B64.charCodeAt(b[i + 2] & 63));
  }
  if (b.length - i == 1) {
    w.u8(<u8>B64.charCodeAt(b[i] >> 2)); w.u8(<u8>B64.charCodeAt((b[i] & 3) << 4)); w.ascii("==");
  } else if (b.length - i == 2) {
    w.u8(<u8>B64.charCodeAt(b[i] >> 2)); w.u8(<u8>B64.charCodeAt(((b[i] & 3) << 4) | (b[i + 1] >> 4)));
    w.u8(<u8>B64.charCodeAt((b[i + 1] & 15) << 2)); w.u8(0x3d);
  }
  w.u8(0x22);
}

function writeSchema(w: Writer, s: Schema, field: string | null): void {
  w.ascii("{\"type\":");
  w.jsonString(s.type);
  if (s.type == ARRAY) { w.ascii(",\"items\":"); writeSchema(w, s.items!, null); }
  if (s.type == MAP) { w.ascii(",\"keys\":"); writeSchema(w, s.keys!, null); w.ascii(",\"values\":"); writeSchema(w, s.values!, null); }
  if (s.type == STRUCT) {
    w.ascii(",\"fields\":[");
    for (let i = 0; i < s.fields.length; i++) {
      if (i > 0) w.u8(0x2c);
      writeSchema(w, s.fields[i].schema, s.fields[i].name);
    }
    w.u8(0x5d);
  }
  w.ascii(s.optional ? ",\"optional\":true" : ",\"optional\":false");
  const name = s.name;
  if (name != null) { w.ascii(",\"name\":"); w.jsonString(name); }
  if (s.version != 0) { w.ascii(",\"version\":"); w.ascii(s.version.toString()); }
  const doc = s.doc;
  if (doc != null) { w.ascii(",\"doc\":"); w.jsonString(doc); }
  if (s.paramKeys.length > 0) {
    w.ascii(",\"parameters\":{");
    for (let i = 0; i < s.paramKeys.length; i++) {
      if (i > 0) w.u8(0x2c);
      w.jsonString(s.paramKeys[i]);
      w.u8(0x3a);
      w.jsonString(s.paramValues[i]);
    }
    w.u8(0x7d);
  }
  const d = s.defaultValue;
  if (d != null && !d.isNull) { w.ascii(",\"default\":"); writeValue(w, s, d, 0); }
  if (field != null) { w.ascii(",\"field\":"); w.jsonString(field); }
  w.u8(0x7d);
}

function writeFloat(w: Writer, f: f64): void {
  if (!isFinite(f)) { w.ascii("null"); return; }
  const t = f.toString();
  w.ascii(t);
  if (t.indexOf(".") < 0 && t.indexOf("e") < 0) w.ascii(".0");
}

function writeValue(w: Writer, s: Schema | null, v: Value, depth: i32): bool {
  if (depth > 64) { encodeError = "value nested too deeply"; return false; }
  if (v.kind == V_NULL) {
    if (s != null && !s.optional && s.defaultValue == null) { encodeError = "null for a " + s.type + " schema that is not optional"; return false; }
    w.ascii("null");
    return true;
  }
  if (v.kind == V_BOOL) w.ascii(v.b ? "true" : "false");
  else if (v.kind == V_INT) {
    if (s != null && (s.type == FLOAT32 || s.type == FLOAT64)) writeFloat(w, <f64>v.i);
    else w.ascii(v.i.toString());
  } else if (v.kind == V_FLOAT) writeFloat(w, s != null && s.type == FLOAT32 ? <f64><f32>v.f : v.f);
  else if (v.kind == V_STRING) w.jsonString(v.s);
  else if (v.kind == V_BYTES) base64(w, v.bytes);
  else if (v.kind == V_ARRAY) {
    w.u8(0x5b);
    for (let i = 0; i < v.items.length; i++) {
      if (i > 0) w.u8(0x2c);
      if (!writeValue(w, s != null ? s.items : null, v.items[i], depth + 1)) return false;
    }
    w.u8(0x5d);
  } else if (v.kind == V_MAP) {
    let object = s != null ? s.keys!.type == STRING : true;
    if (s == null) for (let i = 0; i < v.items.length; i++) if (v.items[i].kind != V_STRING) object = false;
    w.u8(object ? 0x7b : 0x5b);
    for (let i = 0; i < v.items.length; i++) {
      if (i > 0) w.u8(0x2c);
      if (object) { w.jsonString(v.items[i].s); w.u8(0x3a); }
      else { w.u8(0x5b); if (!writeValue(w, s != null ? s.keys : null, v.items[i], depth + 1)) return false; w.u8(0x2c); }
      if (!writeValue(w, s != null ? s.values : null, v.entries[i], depth + 1)) return false;
      if (!object) w.u8(0x5d);
    }
    w.u8(object ? 0x7d : 0x5d);
  } else if (v.kind == V_STRUCT) {
    const ss = v.schema!;
    w.u8(0x7b);
    for (let i = 0; i < ss.fields.length; i++) {
      if (i > 0) w.u8(0x2c);
      w.jsonString(ss.fields[i].name);
      w.u8(0x3a);
      if (!writeValue(w, ss.fields[i].schema, v.entries[i], depth + 1)) return false;
    }
    w.u8(0x7d);
  }
  return true;
}

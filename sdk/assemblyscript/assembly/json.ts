// A small JSON reader and writer over UTF-8 bytes, for the SDK's requests, configs and Connect's
// JSON data. Nothing here is needed to write a plugin.

export const J_NULL: u8 = 0;
export const J_TRUE: u8 = 1;
export const J_FALSE: u8 = 2;
export const J_NUMBER: u8 = 3;
export const J_STRING: u8 = 4;
export const J_ARRAY: u8 = 5;
export const J_OBJECT: u8 = 6;

/** A parsed JSON value. `text` is a string's value or a number's spelling. */
export class JNode {
  kind: u8 = J_NULL;
  text: string = "";
  keys: string[] = [];
  items: JNode[] = [];

  get(key: string): JNode | null {
    if (this.kind != J_OBJECT) return null;
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] == key) return this.items[i];
    return null;
  }
}

export class JParser {
  pos: i32 = 0;
  err: string | null = null;
  constructor(public b: Uint8Array) {}

  ws(): void {
    while (this.pos < this.b.length) {
      const c = this.b[this.pos];
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }

  fail(msg: string): JNode | null {
    if (this.err == null) this.err = msg + " at byte " + this.pos.toString();
    return null;
  }

  lit(w: string): bool {
    for (let i = 0; i < w.length; i++) {
      if (this.pos + i >= this.b.length || this.b[this.pos + i] != <u8>w.charCodeAt(i)) return false;
    }
    this.pos += w.length;
    return true;
  }

  str(): string | null {
    this.pos++;
    const start = this.pos;
    while (this.pos < this.b.length) { // most strings have no escapes: decode them in place
      const c = this.b[this.pos];
      if (c == 0x22) {
        this.pos++;
        return String.UTF8.decodeUnsafe(this.b.dataStart + <usize>start, <usize>(this.pos - 1 - start));
      }
      if (c == 0x5c) break;
      this.pos++;
    }
    this.pos = start;
    const out = new Writer();
    while (this.pos < this.b.length) {
      const c = this.b[this.pos++];
      if (c == 0x22) return out.text();
      if (c != 0x5c) { out.u8(c); continue; }
      if (this.pos >= this.b.length) break;
      const e = this.b[this.pos++];
      if (e == 0x6e) out.u8(0x0a);
      else if (e == 0x74) out.u8(0x09);
      else if (e == 0x72) out.u8(0x0d);
      else if (e == 0x62) out.u8(0x08);
      else if (e == 0x66) out.u8(0x0c);
      else if (e == 0x75) {
        let r = this.hex4();
        if (r < 0) { this.fail("bad \\u escape"); return null; }
        if (r >= 0xd800 && r < 0xdc00 && this.pos + 1 < this.b.length && this.b[this.pos] == 0x5c && this.b[this.pos + 1] == 0x75) {
          this.pos += 2;
          const lo = this.hex4();
          r = lo >= 0xdc00 && lo < 0xe000 ? 0x10000 + ((r - 0xd800) << 10) + (lo - 0xdc00) : 0xfffd;
        }
        out.rune(r);
      } else out.u8(e);
    }
    this.fail("unterminated string");
    return null;
  }

  hex4(): i32 {
    if (this.pos + 4 > this.b.length) return -1;
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = <i32>this.b[this.pos + i];
      v <<= 4;
      if (c >= 48 && c <= 57) v |= c - 48;
      else if (c >= 97 && c <= 102) v |= c - 87;
      else if (c >= 65 && c <= 70) v |= c - 55;
      else return -1;
    }
    this.pos += 4;
    return v;
  }

  value(depth: i32): JNode | null {
    if (depth > 64) return this.fail("nested too deeply");
    this.ws();
    if (this.pos >= this.b.length) return this.fail("unexpected end of JSON");
    const c = this.b[this.pos];
    const n = new JNode();
    if (c == 0x7b || c == 0x5b) {
      const object = c == 0x7b;
      n.kind = object ? J_OBJECT : J_ARRAY;
      this.pos++;
      this.ws();
      if (this.pos < this.b.length && this.b[this.pos] == (object ? 0x7d : 0x5d)) { this.pos++; return n; }
      while (true) {
        if (object) {
          this.ws();
          if (this.pos >= this.b.length || this.b[this.pos] != 0x22) return this.fail("expected a member name");
          const k = this.str();
          if (k == null) return null;
          n.keys.push(k);
          this.ws();
          if (this.pos >= this.b.length || this.b[this.pos] != 0x3a) return this.fail("expected ':'");
          this.pos++;
        }
        const kid = this.value(depth + 1);
        if (kid == null) return null;
        n.items.push(kid);
        this.ws();
        if (this.pos < this.b.length && this.b[this.pos] == 0x2c) { this.pos++; continue; }
        if (this.pos < this.b.length && this.b[this.pos] == (object ? 0x7d : 0x5d)) { this.pos++; return n; }
        return this.fail("expected ',' or a closing bracket");
      }
    }
    if (c == 0x22) {
      const s = this.str();
      if (s == null) return null;
      n.kind = J_STRING;
      n.text = s;
      return n;
    }
    if (this.lit("true")) { n.kind = J_TRUE; return n; }
    if (this.lit("false")) { n.kind = J_FALSE; return n; }
    if (this.lit("null")) { n.kind = J_NULL; return n; }
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = this.pos;
      while (this.pos < this.b.length) {
        const d = this.b[this.pos];
        if (!((d >= 0x30 && d <= 0x39) || d == 0x2e || d == 0x65 || d == 0x45 || d == 0x2b || d == 0x2d)) break;
        this.pos++;
      }
      n.kind = J_NUMBER;
      n.text = String.UTF8.decodeUnsafe(this.b.dataStart + <usize>start, <usize>(this.pos - start));
      return n;
    }
    return this.fail("unexpected character");
  }
}

/** parseJSON parses all of b; null with *errOut set when b is not one JSON value. */
export function parseJSON(b: Uint8Array, what: string): JNode | null {
  const p = new JParser(b);
  let n = p.value(0);
  if (n != null) {
    p.ws();
    if (p.pos != b.length) { n = null; p.fail("trailing data after the JSON value"); }
  }
  if (n == null) jsonError = "malformed JSON in " + what + ": " + (p.err != null ? p.err! : "");
  return n;
}

export let jsonError: string = "";

/** Writer is a growable byte buffer. */
export class Writer {
  buf: Uint8Array = new Uint8Array(256);
  len: i32 = 0;

  reset(): void { this.len = 0; }

  grow(n: i32): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const b = new Uint8Array(cap);
    memory.copy(b.dataStart, this.buf.dataStart, <usize>this.len);
    this.buf = b;
  }

  u8(v: u8): void {
    this.grow(1);
    this.buf[this.len++] = v;
  }

  u32(v: u32): void {
    this.grow(4);
    store<u32>(this.buf.dataStart + <usize>this.len, v);
    this.len += 4;
  }

  u64(v: u64): void {
    this.grow(8);
    store<u64>(this.buf.dataStart + <usize>this.len, v);
    this.len += 8;
  }

  patchU32(at: i32, v: u32): void { store<u32>(this.buf.dataStart + <usize>at, v); }

  raw(b: Uint8Array): void {
    this.grow(b.length);
    memory.copy(this.buf.dataStart + <usize>this.len, b.dataStart, <usize>b.length);
    this.len += b.length;
  }

  ascii(s: string): void {
    this.grow(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.len++] = <u8>s.charCodeAt(i);
  }

  utf8(s: string): void { this.raw(Uint8Array.wrap(String.UTF8.encode(s))); }

  bytes(b: Uint8Array): void {
    this.u32(<u32>b.length);
    this.raw(b);
  }

  str(s: string): void { this.bytes(Uint8Array.wrap(String.UTF8.encode(s))); }

  rune(r: i32): void {
    if (r < 0x80) this.u8(<u8>r);
    else if (r < 0x800) { this.u8(<u8>(0xc0 | (r >> 6))); this.u8(<u8>(0x80 | (r & 0x3f))); }
    else if (r < 0x10000) { this.u8(<u8>(0xe0 | (r >> 12))); this.u8(<u8>(0x80 | ((r >> 6) & 0x3f))); this.u8(<u8>(0x80 | (r & 0x3f))); }
    else { this.u8(<u8>(0xf0 | (r >> 18))); this.u8(<u8>(0x80 | ((r >> 12) & 0x3f))); this.u8(<u8>(0x80 | ((r >> 6) & 0x3f))); this.u8(<u8>(0x80 | (r & 0x3f))); }
  }

  /** jsonString writes s as a JSON string. */
  jsonString(s: string): void {
    const hex = "0123456789abcdef";
    this.u8(0x22);
    const b = Uint8Array.wrap(String.UTF8.encode(s));
    for (let i = 0; i < b.length; i++) {
      const c = b[i];
      if (c == 0x22) this.ascii("\\\"");
      else if (c == 0x5c) this.ascii("\\\\");
      else if (c == 0x0a) this.ascii("\\n");
      else if (c == 0x0d) this.ascii("\\r");
      else if (c == 0x09) this.ascii("\\t");
      else if (c < 0x20) { this.ascii("\\u00"); this.u8(<u8>hex.charCodeAt(c >> 4)); this.u8(<u8>hex.charCodeAt(c & 15)); }
      else this.u8(c);
    }
    this.u8(0x22);
  }

  text(): string { return String.UTF8.decodeUnsafe(this.buf.dataStart, <usize>this.len); }

  /** take returns a copy of what the writer holds. */
  take(): Uint8Array {
    const b = new Uint8Array(this.len);
    memory.copy(b.dataStart, this.buf.dataStart, <usize>this.len);
    return b;
  }
}

export function utf8(s: string): Uint8Array { return Uint8Array.wrap(String.UTF8.encode(s)); }
export function text(b: Uint8Array): string { return String.UTF8.decodeUnsafe(b.dataStart, <usize>b.length); }

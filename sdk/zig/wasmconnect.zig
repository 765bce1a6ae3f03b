//! The wasmconnect Zig SDK (Zig 0.11): write Kafka Connect source and sink connectors,
//! converters, transformations and predicates in Zig. It implements the plugin ABI (sdk/ABI.md):
//! the exports, the descriptor, object handles, config checks with Kafka's texts, the batch
//! layouts, errors, logging and stored offsets, and Connect's data model: schemas (`Schema`),
//! values as `std.json.Value` trees (a struct is an object in its schema's field order), logical
//! types and headers, with the JSON encoding JsonConverter uses.
//!
//! A plugin's root file declares its plugins, and the SDK's exports find them there:
//!
//!     const wc = @import("wasmconnect");
//!     pub const plugins = [_]wc.Plugin{ .{ .transformation = &upper } };
//!     comptime { _ = wc; }
//!
//! Memory: everything the SDK hands a callback, and everything allocated with `wc.tmp()`, lives
//! until the operation (one batch) returns; keep things longer with `wc.heap`. Errors: a callback
//! fails with `return wc.fail("...", .{})` (or `failRetriable`, `failConfig`); a transformation or
//! predicate fails one record with `return wc.failRecord(null, "...", .{})`.
const std = @import("std");
const builtin = @import("builtin");
const root = @import("root");

/// heap is the allocator for what lives longer than one operation. A plugin's unit tests
/// (`zig test`, built for the machine) get the page allocator.
pub const heap = if (builtin.target.isWasm()) std.heap.wasm_allocator else std.heap.page_allocator;
var arena_state = std.heap.ArenaAllocator.init(heap);

/// tmp is the per-operation allocator.
pub fn tmp() std.mem.Allocator {
    return arena_state.allocator();
}

// ---- host imports, logging, errors, offsets --------------------------------------------------

const host = if (builtin.target.isWasm()) struct {
    extern "wasmconnect" fn log(level: i32, ptr: [*]const u8, len: i32) void;
    extern "wasmconnect" fn offset_get(part: [*]const u8, part_len: i32, out: [*]u8, cap: i32) i32;
} else struct {
    // Built for the machine (a plugin's unit tests): there is no worker, so a log line goes to
    // stderr and no source offset is ever stored.
    fn log(level: i32, ptr: [*]const u8, len: i32) void {
        std.debug.print("wasmconnect log {d}: {s}\n", .{ level, ptr[0..@intCast(len)] });
    }
    fn offset_get(part: [*]const u8, part_len: i32, out: [*]u8, cap: i32) i32 {
        _ = part;
        _ = part_len;
        _ = out;
        _ = cap;
        return -1;
    }
};
const log = host.log;
const offset_get = host.offset_get;

pub const Level = enum(i32) { trace = 0, debug = 1, info = 2, warn = 3, err = 4 };

/// logf writes a line to the worker's log, tagged with the connector and task.
pub fn logf(level: Level, comptime fmt: []const u8, args: anytype) void {
    const s = std.fmt.allocPrint(tmp(), fmt, args) catch return;
    log(@intFromEnum(level), s.ptr, @intCast(s.len));
}

pub const Error = error{PluginFailed};

var err_msg: []const u8 = "";
var err_retriable = false;
var err_key: ?[]const u8 = null;
var err_set = false;

fn setError(retriable: bool, key: ?[]const u8, comptime fmt: []const u8, args: anytype) Error {
    recordError(retriable, key, fmt, args);
    return error.PluginFailed;
}

fn recordError(retriable: bool, key: ?[]const u8, comptime fmt: []const u8, args: anytype) void {
    err_msg = std.fmt.allocPrint(tmp(), fmt, args) catch "out of memory";
    err_retriable = retriable;
    err_key = key;
    err_set = true;
}

/// fail fails the current operation with a message (the host shows it in the task's status).
pub fn fail(comptime fmt: []const u8, args: anytype) Error {
    return setError(false, null, fmt, args);
}

/// failRetriable fails the current operation; the host may repeat it (errors.retry.timeout).
pub fn failRetriable(comptime fmt: []const u8, args: anytype) Error {
    return setError(true, null, fmt, args);
}

/// failConfig refuses a configuration because of one setting (VALIDATE reports it under key).
pub fn failConfig(key: []const u8, comptime fmt: []const u8, args: anytype) Error {
    return setError(false, key, fmt, args);
}

pub const data_exception = "org.apache.kafka.connect.errors.DataException";
var fail_class: []const u8 = data_exception;
var fail_message: []const u8 = "";

/// failRecord fails the current record of a transformation or predicate alone; `class` null is
/// DataException. Return what it returns.
pub fn failRecord(class: ?[]const u8, comptime fmt: []const u8, args: anytype) Verdict {
    fail_class = class orelse data_exception;
    fail_message = std.fmt.allocPrint(tmp(), fmt, args) catch "out of memory";
    return .failed;
}

/// offset returns the stored source offset (JSON) for a source partition (JSON), or null.
pub fn offset(partition: []const u8) ?[]const u8 {
    var small: [256]u8 = undefined;
    const n = offset_get(partition.ptr, @intCast(partition.len), &small, small.len);
    if (n < 0) return null;
    const len: usize = @intCast(n);
    if (len <= small.len) return tmp().dupe(u8, small[0..len]) catch null;
    const big = tmp().alloc(u8, len) catch return null;
    if (offset_get(partition.ptr, @intCast(partition.len), big.ptr, n) != n) return null;
    return big;
}

// ---- configuration ---------------------------------------------------------------------------

pub const ConfigType = enum { STRING, INT, SHORT, LONG, DOUBLE, BOOLEAN, LIST, CLASS, PASSWORD };
pub const Importance = enum { HIGH, MEDIUM, LOW };

/// ConfigDef is a setting in the shape of Kafka's ConfigDef.
pub const ConfigDef = struct {
    name: []const u8,
    type: ConfigType = .STRING,
    default: ?[]const u8 = null,
    required: bool = false,
    importance: Importance = .MEDIUM,
    doc: []const u8 = "",
};

/// Config is a plugin's settings, strings as Kafka Connect passes them, defaults filled in.
pub const Config = struct {
    map: std.StringArrayHashMap([]const u8),

    pub fn get(self: *const Config, key: []const u8) ?[]const u8 {
        return self.map.get(key);
    }
    pub fn getOr(self: *const Config, key: []const u8, fallback: []const u8) []const u8 {
        return self.map.get(key) orelse fallback;
    }
    pub fn int(self: *const Config, key: []const u8, fallback: i64) i64 {
        const v = self.map.get(key) orelse return fallback;
        return std.fmt.parseInt(i64, std.mem.trim(u8, v, " \t"), 10) catch fallback;
    }
    pub fn set(self: *Config, key: []const u8, value: []const u8) !void {
        try self.map.put(try heap.dupe(u8, key), try heap.dupe(u8, value));
    }
    /// clone copies the config into memory that lasts (free it with deinit).
    pub fn clone(self: *const Config) !Config {
        var c = Config{ .map = std.StringArrayHashMap([]const u8).init(heap) };
        var it = self.map.iterator();
        while (it.next()) |e| try c.set(e.key_ptr.*, e.value_ptr.*);
        return c;
    }
    pub fn deinit(self: *Config) void {
        var it = self.map.iterator();
        while (it.next()) |e| {
            heap.free(e.key_ptr.*);
            heap.free(e.value_ptr.*);
        }
        self.map.deinit();
    }
};

/// Errors collects VALIDATE's messages per setting.
pub const Errors = struct {
    keys: std.ArrayList([]const u8),
    messages: std.ArrayList([]const u8),
    pub fn add(self: *Errors, key: []const u8, comptime fmt: []const u8, args: anytype) void {
        const m = std.fmt.allocPrint(tmp(), fmt, args) catch return;
        self.keys.append(key) catch return;
        self.messages.append(m) catch return;
    }
};

// ---- data and records ------------------------------------------------------------------------

/// Data is a key, value or header value (sdk/ABI.md §5.1).
pub const Data = union(enum) {
    null,
    bytes: []const u8,
    string: []const u8,
    json: struct { schema: []const u8, payload: []const u8 },

    pub fn isString(self: Data, s: []const u8) bool {
        return switch (self) {
            .string => |v| std.mem.eql(u8, v, s),
            else => false,
        };
    }
};

pub const Header = struct { key: []const u8, value: Data };

/// Record is a record (sdk/ABI.md §5.2). partition -1 lets the producer choose; offset is the
/// Kafka offset of a sink record, -1 for a source record; timestamp ms since the epoch, -1 none.
pub const Record = struct {
    topic: []const u8 = "",
    partition: i32 = -1,
    offset: i64 = -1,
    timestamp: i64 = -1,
    key: Data = .null,
    value: Data = .null,
    headers: []Header = &[_]Header{},
    source_partition: []const u8 = "",
    source_offset: []const u8 = "",

    pub fn header(self: *const Record, key: []const u8) ?*const Header {
        var i = self.headers.len;
        while (i > 0) : (i -= 1) if (std.mem.eql(u8, self.headers[i - 1].key, key)) return &self.headers[i - 1];
        return null;
    }
    /// addHeader appends a header (the list moves to per-operation memory).
    pub fn addHeader(self: *Record, key: []const u8, value: Data) !void {
        const hs = try tmp().alloc(Header, self.headers.len + 1);
        @memcpy(hs[0..self.headers.len], self.headers);
        hs[self.headers.len] = .{ .key = key, .value = value };
        self.headers = hs;
    }
};

pub const TopicPartitionOffset = struct { topic: []const u8, partition: i32, offset: i64 };

// ---- Connect's data model --------------------------------------------------------------------

pub const decimal_name = "org.apache.kafka.connect.data.Decimal";
pub const date_name = "org.apache.kafka.connect.data.Date";
pub const time_name = "org.apache.kafka.connect.data.Time";
pub const timestamp_name = "org.apache.kafka.connect.data.Timestamp";

pub const Type = enum { int8, int16, int32, int64, float, double, boolean, string, bytes, array, map, @"struct" };

pub const Field = struct { name: []const u8, schema: *Schema };

/// Schema is a Connect schema, as JsonConverter writes it. version 0 means none.
pub const Schema = struct {
    type: Type,
    optional: bool = false,
    name: ?[]const u8 = null,
    version: i32 = 0,
    doc: ?[]const u8 = null,
    parameters: ?std.json.ObjectMap = null,
    fields: []Field = &[_]Field{},
    items: ?*Schema = null,
    keys: ?*Schema = null,
    values: ?*Schema = null,
    default: ?std.json.Value = null,

    pub fn field(self: *const Schema, name: []const u8) ?*Schema {
        for (self.fields) |f| if (std.mem.eql(u8, f.name, name)) return f.schema;
        return null;
    }
    pub fn is(self: *const Schema, logical: []const u8) bool {
        return if (self.name) |n| std.mem.eql(u8, n, logical) else false;
    }
    pub fn param(self: *const Schema, key: []const u8) ?[]const u8 {
        const p = self.parameters orelse return null;
        const v = p.get(key) orelse return null;
        return switch (v) {
            .string => |s| s,
            else => null,
        };
    }
};

/// Decoded is a key, value or header in Connect's model: its schema (null: schemaless) and value
/// (a struct is an object with the fields in schema order; bytes and Decimals are base64 strings).
pub const Decoded = struct { schema: ?*Schema, value: std.json.Value };

/// decode reads data into the model: a STRING is a string schema and value, BYTES an optional
/// bytes schema, null no schema and a null value, JSON its schema and payload.
pub fn decode(d: Data) !Decoded {
    const a = tmp();
    switch (d) {
        .null => return .{ .schema = null, .value = .null },
        .string => |s| {
            const sc = try a.create(Schema);
            sc.* = .{ .type = .string };
            return .{ .schema = sc, .value = .{ .string = s } };
        },
        .bytes => |b| {
            const sc = try a.create(Schema);
            sc.* = .{ .type = .bytes, .optional = true };
            const enc = try a.alloc(u8, std.base64.standard.Encoder.calcSize(b.len));
            return .{ .schema = sc, .value = .{ .string = std.base64.standard.Encoder.encode(enc, b) } };
        },
        .json => |j| {
            var schema: ?*Schema = null;
            if (j.schema.len > 0) {
                if (last_schema != null and std.mem.eql(u8, j.schema, last_schema_json)) {
                    schema = last_schema;
                } else {
                    const sv = std.json.parseFromSliceLeaky(std.json.Value, a, j.schema, .{}) catch return fail("malformed JSON in the schema", .{});
                    schema = try schemaFromJSON(sv, 0);
                    last_schema = schema;
                    last_schema_json = j.schema;
                }
            }
            const pv = std.json.parseFromSliceLeaky(std.json.Value, a, j.payload, .{}) catch return fail("malformed JSON in the payload", .{});
            return .{ .schema = schema, .value = try check(pv, schema) };
        },
    }
}

var last_schema: ?*Schema = null;
var last_schema_json: []const u8 = "";

/// encode writes a schema (null: schemaless) and value as JSON data.
pub fn encode(schema: ?*const Schema, v: std.json.Value) !Data {
    var payload = std.ArrayList(u8).init(tmp());
    try writeValue(payload.writer(), schema, v);
    var sj: []const u8 = "";
    if (schema) |s| {
        if (last_schema != null and s == last_schema.?) {
            sj = last_schema_json;
        } else {
            var b = std.ArrayList(u8).init(tmp());
            try writeSchema(b.writer(), s, null);
            sj = b.items;
        }
    }
    return .{ .json = .{ .schema = sj, .payload = payload.items } };
}

fn schemaFromJSON(v: std.json.Value, depth: u32) Error!?*Schema {
    if (v == .null) return null;
    if (depth > 64 or v != .object) return fail("a schema must be a JSON object", .{});
    const o = v.object;
    const t = o.get("type") orelse return fail("schema has no \"type\"", .{});
    if (t != .string) return fail("schema has no \"type\"", .{});
    const ty = std.meta.stringToEnum(Type, t.string) orelse return fail("unknown schema type \"{s}\"", .{t.string});
    const s = tmp().create(Schema) catch return fail("out of memory", .{});
    s.* = .{ .type = ty };
    if (o.get("optional")) |x| s.optional = x == .bool and x.bool;
    if (o.get("name")) |x| if (x == .string) {
        s.name = x.string;
    };
    if (o.get("version")) |x| if (x == .integer) {
        s.version = @intCast(x.integer);
    };
    if (o.get("doc")) |x| if (x == .string) {
        s.doc = x.string;
    };
    if (o.get("parameters")) |x| if (x == .object) {
        s.parameters = x.object;
    };
    switch (ty) {
        .array => s.items = (try schemaFromJSON(o.get("items") orelse .null, depth + 1)) orelse return fail("array schema has no items", .{}),
        .map => {
            s.keys = (try schemaFromJSON(o.get("keys") orelse .null, depth + 1)) orelse return fail("map schema has no keys", .{});
            s.values = (try schemaFromJSON(o.get("values") orelse .null, depth + 1)) orelse return fail("map schema has no values", .{});
        },
        .@"struct" => if (o.get("fields")) |fs| if (fs == .array) {
            const fields = tmp().alloc(Field, fs.array.items.len) catch return fail("out of memory", .{});
            for (fs.array.items, 0..) |f, i| {
                const name = if (f == .object) f.object.get("field") else null;
                if (name == null or name.? != .string) return fail("struct field #{d} has no \"field\" name", .{i});
                fields[i] = .{ .name = name.?.string, .schema = (try schemaFromJSON(f, depth + 1)).? };
            }
            s.fields = fields;
        },
        else => {},
    }
    if (o.get("default")) |x| if (x != .null) {
        s.default = x;
    };
    return s;
}

/// check verifies that v fits s and puts a struct's fields in the schema's order (absent ones
/// null, or their default).
fn check(v: std.json.Value, schema: ?*const Schema) Error!std.json.Value {
    const s = schema orelse return v;
    if (v == .null) {
        if (s.default) |d| return d;
        if (!s.optional) return fail("null for a {s} schema that is not optional", .{@tagName(s.type)});
        return v;
    }
    const ok = switch (s.type) {
        .int8, .int16, .int32, .int64 => v == .integer or v == .number_string,
        .float, .double => v == .float or v == .integer or v == .number_string,
        .boolean => v == .bool,
        .string => v == .string,
        .bytes => v == .string or (v == .float and s.is(decimal_name)) or (v == .integer and s.is(decimal_name)),
        .array => v == .array,
        .map => v == .object or v == .array,
        .@"struct" => v == .object,
    };
    if (!ok) return fail("JSON value does not match schema type {s}", .{@tagName(s.type)});
    switch (s.type) {
        .array => for (v.array.items) |*x| {
            x.* = try check(x.*, s.items);
        },
        .@"struct" => {
            var out = std.json.ObjectMap.init(tmp());
            for (s.fields) |f| {
                const x = v.object.get(f.name) orelse .null;
                out.put(f.name, try check(x, f.schema)) catch return fail("out of memory", .{});
            }
            return .{ .object = out };
        },
        else => {},
    }
    return v;
}

fn writeString(w: anytype, s: []const u8) !void {
    try std.json.encodeJsonString(s, .{}, w);
}

fn writeSchema(w: anytype, s: *const Schema, field_name: ?[]const u8) !void {
    try w.writeAll("{\"type\":");
    try writeString(w, @tagName(s.type));
    switch (s.type) {
        .array => {
            try w.writeAll(",\"items\":");
            try writeSchema(w, s.items.?, null);
        },
        .map => {
            try w.writeAll(",\"keys\":");
            try writeSchema(w, s.keys.?, null);
            try w.writeAll(",\"values\":");
            try writeSchema(w, s.values.?, null);
        },
        .@"struct" => {
            try w.writeAll(",\"fields\":[");
            for (s.fields, 0..) |f, i| {
                if (i > 0) try w.writeAll(",");
                try writeSchema(w, f.schema, f.name);
            }
            try w.writeAll("]");
        },
        else => {},
    }
    try w.writeAll(if (s.optional) ",\"optional\":true" else ",\"optional\":false");
    if (s.name) |n| {
        try w.writeAll(",\"name\":");
        try writeString(w, n);
    }
    if (s.version != 0) try w.print(",\"version\":{d}", .{s.version});
    if (s.doc) |d| {
        try w.writeAll(",\"doc\":");
        try writeString(w, d);
    }
    if (s.parameters) |p| {
        try w.writeAll(",\"parameters\":");
        try writeJSON(w, std.json.Value{ .object = p });
    }
    if (s.default) |d| {
        try w.writeAll(",\"default\":");
        try writeValue(w, s, d);
    }
    if (field_name) |f| {
        try w.writeAll(",\"field\":");
        try writeString(w, f);
    }
    try w.writeAll("}");
}

fn writeValue(w: anytype, s: ?*const Schema, v: std.json.Value) !void {
    if (s) |sc| if (sc.type == .float or sc.type == .double) switch (v) {
        .integer => |i| return w.print("{d}.0", .{i}),
        else => {},
    };
    try writeJSON(w, v);
}

/// writeJSON writes v as JSON, integers in full (std.json quotes those beyond 2^53).
fn writeJSON(w: anytype, v: std.json.Value) !void {
    switch (v) {
        .null => try w.writeAll("null"),
        .bool => |b| try w.writeAll(if (b) "true" else "false"),
        .integer => |i| try w.print("{d}", .{i}),
        .float => |f| if (std.math.isFinite(f)) try w.print("{e}", .{f}) else try w.writeAll("null"),
        .number_string => |n| try w.writeAll(n),
        .string => |x| try writeString(w, x),
        .array => |a| {
            try w.writeAll("[");
            for (a.items, 0..) |x, i| {
                if (i > 0) try w.writeAll(",");
                try writeJSON(w, x);
            }
            try w.writeAll("]");
        },
        .object => |o| {
            try w.writeAll("{");
            var it = o.iterator();
            var i: usize = 0;
            while (it.next()) |e| : (i += 1) {
                if (i > 0) try w.writeAll(",");
                try writeString(w, e.key_ptr.*);
                try w.writeAll(":");
                try writeJSON(w, e.value_ptr.*);
            }
            try w.writeAll("}");
        },
    }
}

/// decimalUnscaled reads a Decimal's value (base64 of the big-endian unscaled integer).
pub fn decimalUnscaled(v: std.json.Value) ?i64 {
    if (v != .string) return null;
    var buf: [16]u8 = undefined;
    const n = std.base64.standard.Decoder.calcSizeForSlice(v.string) catch return null;
    if (n == 0 or n > 8) return null;
    std.base64.standard.Decoder.decode(buf[0..n], v.string) catch return null;
    var x: i64 = if (buf[0] & 0x80 != 0) -1 else 0;
    for (buf[0..n]) |b| x = (x << 8) | b;
    return x;
}

// ---- plugins ---------------------------------------------------------------------------------

pub const Info = struct {
    name: []const u8,
    class: ?[]const u8 = null,
    aliases: []const []const u8 = &.{},
    version: []const u8 = "undefined",
    config: []const ConfigDef = &.{},
};

pub const TaskContext = struct { connector: []const u8, task: i64 };

/// Batch collects what a source task polls; add copies nothing, so keep the bytes alive until
/// poll returns (per-operation memory is).
pub const Batch = struct {
    records: std.ArrayList(Record),
    pub fn add(self: *Batch, r: Record) !void {
        try self.records.append(r);
    }
};

pub const Source = struct {
    info: Info,
    validate: ?*const fn (cfg: *const Config, errs: *Errors) void = null,
    task_configs: ?*const fn (cfg: *const Config, max_tasks: usize, out: *std.ArrayList(Config)) anyerror!void = null,
    start: *const fn (ctx: TaskContext, cfg: *const Config) anyerror!*anyopaque,
    poll: *const fn (task: *anyopaque, batch: *Batch) anyerror!void,
    commit: ?*const fn (task: *anyopaque) anyerror!void = null,
    stop: ?*const fn (task: *anyopaque) void = null,
};

pub const Sink = struct {
    info: Info,
    validate: ?*const fn (cfg: *const Config, errs: *Errors) void = null,
    task_configs: ?*const fn (cfg: *const Config, max_tasks: usize, out: *std.ArrayList(Config)) anyerror!void = null,
    start: *const fn (ctx: TaskContext, cfg: *const Config) anyerror!*anyopaque,
    put: *const fn (task: *anyopaque, records: []Record) anyerror!void,
    flush: ?*const fn (task: *anyopaque, offsets: []const TopicPartitionOffset) anyerror!void = null,
    stop: ?*const fn (task: *anyopaque) void = null,
};

/// A converter; from_connect returns null for a Kafka null, to_connect gets null for one.
pub const Converter = struct {
    info: Info,
    configure: ?*const fn (cfg: *const Config, is_key: bool) anyerror!*anyopaque = null,
    from_connect: *const fn (state: ?*anyopaque, topic: []const u8, v: Data) anyerror!?[]const u8,
    to_connect: *const fn (state: ?*anyopaque, topic: []const u8, b: ?[]const u8) anyerror!Data,
    close: ?*const fn (state: *anyopaque) void = null,
};

/// What a transformation's apply did with a record (changed: in place).
pub const Verdict = enum { unchanged, changed, drop, failed };

pub const Transformation = struct {
    info: Info,
    configure: ?*const fn (cfg: *const Config) anyerror!*anyopaque = null,
    apply: *const fn (state: ?*anyopaque, r: *Record) anyerror!Verdict,
    close: ?*const fn (state: *anyopaque) void = null,
};

pub const Match = enum { no, yes, failed };

pub const Predicate = struct {
    info: Info,
    configure: ?*const fn (cfg: *const Config) anyerror!*anyopaque = null,
    /// test returns .failed through failRecord.
    test_: *const fn (state: ?*anyopaque, r: *const Record) anyerror!Match,
    close: ?*const fn (state: *anyopaque) void = null,
};

pub const Plugin = union(enum) {
    source: *const Source,
    sink: *const Sink,
    converter: *const Converter,
    transformation: *const Transformation,
    predicate: *const Predicate,

    fn info(self: Plugin) Info {
        return switch (self) {
            inline else => |p| p.info,
        };
    }
};

/// failMatch is failRecord for a predicate's test.
pub fn failMatch(class: ?[]const u8, comptime fmt: []const u8, args: anytype) Match {
    _ = failRecord(class, fmt, args);
    return .failed;
}

// Under `zig test` the root is the test runner, whose tests call the plugin's functions directly.
const all: []const Plugin = if (@hasDecl(root, "plugins")) &root.plugins else &.{};

// ---- the ABI ---------------------------------------------------------------------------------

const Role = enum { connector, task, converter, transformation, predicate };

const Object = struct {
    plugin: Plugin,
    role: Role,
    state: ?*anyopaque = null,
    cfg: Config,
};

var objects: std.ArrayList(?Object) = std.ArrayList(?Object).init(heap);
var obuf = std.ArrayList(u8).init(heap);

fn pack(ptr: [*]const u8, len: usize, flags: u64) u64 {
    return (@as(u64, @intFromPtr(ptr)) << 32) | (@as(u64, @intCast(len)) & 0x3fffffff) | flags;
}

fn result() u64 {
    if (obuf.items.len == 0) return 0;
    return pack(obuf.items.ptr, obuf.items.len, 0);
}

fn errorResult() u64 {
    const msg = if (err_set) err_msg else "the operation failed";
    return pack(msg.ptr, msg.len, 0x80000000 | @as(u64, if (err_set and err_retriable) 0x40000000 else 0));
}

fn failed(comptime fmt: []const u8, args: anytype) u64 {
    recordError(false, null, fmt, args);
    return errorResult();
}

export fn wc_abi_version() i32 {
    return 1;
}

export fn wc_alloc(size: i32) ?[*]u8 {
    const n: usize = if (size > 0) @intCast(size) else 1;
    const b = heap.alloc(u8, n) catch return null;
    return b.ptr;
}

export fn wc_free(ptr: [*]u8, size: i32) void {
    const n: usize = if (size > 0) @intCast(size) else 1;
    heap.free(ptr[0..n]);
}

export fn wc_describe() u64 {
    _ = arena_state.reset(.retain_capacity);
    obuf.clearRetainingCapacity();
    describe(obuf.writer()) catch return failed("out of memory", .{});
    return result();
}

fn describe(w: anytype) !void {
    try w.writeAll("{\"abi\":1,\"plugins\":[");
    for (all, 0..) |p, i| {
        const in = p.info();
        if (i > 0) try w.writeAll(",");
        try w.writeAll("{\"name\":");
        try writeString(w, in.name);
        try w.writeAll(",\"class\":");
        try writeString(w, in.class orelse in.name);
        try w.writeAll(",\"aliases\":[");
        for (in.aliases, 0..) |a, j| {
            if (j > 0) try w.writeAll(",");
            try writeString(w, a);
        }
        try w.writeAll("],\"kind\":");
        try writeString(w, @tagName(p));
        try w.writeAll(",\"version\":");
        try writeString(w, in.version);
        try w.writeAll(",\"config\":[");
        for (in.config, 0..) |d, j| {
            if (j > 0) try w.writeAll(",");
            try w.writeAll("{\"name\":");
            try writeString(w, d.name);
            try w.print(",\"type\":\"{s}\",\"required\":{},\"default_value\":", .{ @tagName(d.type), d.required });
            if (d.default) |v| try writeString(w, v) else try w.writeAll("null");
            try w.print(",\"importance\":\"{s}\",\"documentation\":", .{@tagName(d.importance)});
            try writeString(w, d.doc);
            try w.writeAll(",\"group\":null,\"width\":\"NONE\",\"display_name\":");
            try writeString(w, d.name);
            try w.writeAll(",\"dependents\":[],\"order\":-1}");
        }
        try w.writeAll("]}");
    }
    try w.writeAll("]}");
}

export fn wc_call(handle: i32, op: i32, ptr: ?[*]const u8, len: i32) u64 {
    _ = arena_state.reset(.retain_capacity);
    err_set = false;
    err_key = null;
    last_schema = null;
    const in: []const u8 = if (ptr != null and len > 0) ptr.?[0..@intCast(len)] else "";
    return call(handle, op, in) catch |e| switch (e) {
        error.PluginFailed => errorResult(),
        else => failed("{s}", .{@errorName(e)}),
    };
}

fn findPlugin(name: []const u8) ?Plugin {
    for (all) |p| if (std.mem.eql(u8, p.info().name, name)) return p;
    return null;
}

fn configOf(req: std.json.Value) !Config {
    var c = Config{ .map = std.StringArrayHashMap([]const u8).init(heap) };
    const o = if (req == .object) req.object.get("config") else null;
    if (o) |cfg| if (cfg == .object) {
        var it = cfg.object.iterator();
        while (it.next()) |e| switch (e.value_ptr.*) {
            .string => |s| try c.set(e.key_ptr.*, s),
            .integer => |i| try c.set(e.key_ptr.*, try std.fmt.allocPrint(tmp(), "{d}", .{i})),
            .bool => |b| try c.set(e.key_ptr.*, if (b) "true" else "false"),
            else => {},
        };
    };
    return c;
}

fn secret(d: ConfigDef) bool {
    return d.type == .PASSWORD or std.ascii.indexOfIgnoreCase(d.name, "password") != null;
}

/// checkDefs fills in defaults and checks required settings and types with Kafka's texts.
fn checkDefs(p: Plugin, c: *Config, errs: *Errors) !void {
    for (p.info().config) |d| {
        const raw = c.get(d.name) orelse {
            if (d.default) |v| try c.set(d.name, v) else if (d.required) errs.add(d.name, "Missing required configuration \"{s}\" which has no default value.", .{d.name});
            continue;
        };
        const v = std.mem.trim(u8, raw, " \t");
        const shown = if (secret(d)) "[hidden]" else raw;
        switch (d.type) {
            .BOOLEAN => if (!std.ascii.eqlIgnoreCase(v, "true") and !std.ascii.eqlIgnoreCase(v, "false"))
                errs.add(d.name, "Invalid value {s} for configuration {s}: Expected value to be either true or false", .{ shown, d.name }),
            .INT => _ = std.fmt.parseInt(i32, v, 10) catch errs.add(d.name, "Invalid value {s} for configuration {s}: Not a number of type INT", .{ shown, d.name }),
            .SHORT => _ = std.fmt.parseInt(i16, v, 10) catch errs.add(d.name, "Invalid value {s} for configuration {s}: Not a number of type SHORT", .{ shown, d.name }),
            .LONG => _ = std.fmt.parseInt(i64, v, 10) catch errs.add(d.name, "Invalid value {s} for configuration {s}: Not a number of type LONG", .{ shown, d.name }),
            .DOUBLE => _ = std.fmt.parseFloat(f64, v) catch errs.add(d.name, "Invalid value {s} for configuration {s}: Not a number of type DOUBLE", .{ shown, d.name }),
            else => {},
        }
    }
}

fn newErrors() Errors {
    return .{ .keys = std.ArrayList([]const u8).init(tmp()), .messages = std.ArrayList([]const u8).init(tmp()) };
}

fn configure(o: *Object, is_key: bool) !void {
    switch (o.plugin) {
        .converter => |p| if (p.configure) |f| {
            o.state = try f(&o.cfg, is_key);
        },
        .transformation => |p| if (p.configure) |f| {
            o.state = try f(&o.cfg);
        },
        .predicate => |p| if (p.configure) |f| {
            o.state = try f(&o.cfg);
        },
        else => {},
    }
}

fn release(o: *Object) void {
    if (o.state) |st| switch (o.plugin) {
        .source => |p| if (o.role == .task) if (p.stop) |f| f(st),
        .sink => |p| if (o.role == .task) if (p.stop) |f| f(st),
        .converter => |p| if (p.close) |f| f(st),
        .transformation => |p| if (p.close) |f| f(st),
        .predicate => |p| if (p.close) |f| f(st),
    };
    o.cfg.deinit();
}

fn parse(in: []const u8, what: []const u8) !std.json.Value {
    return std.json.parseFromSliceLeaky(std.json.Value, tmp(), in, .{}) catch fail("malformed JSON in the {s} request", .{what});
}

fn str(v: ?std.json.Value) []const u8 {
    const x = v orelse return "";
    return if (x == .string) x.string else "";
}

fn call(handle: i32, op: i32, in: []const u8) !u64 {
    if (op == 1) return open(in);
    if (op == 3) return validate(in);
    if (op < 1 or op > 12) return failed("unknown operation {d}", .{op});
    if (handle < 1 or handle > objects.items.len or objects.items[@intCast(handle - 1)] == null)
        return failed("no open object with handle {d}", .{handle});
    const o = &objects.items[@intCast(handle - 1)].?;
    const kind = @tagName(o.plugin);
    switch (op) {
        2 => {
            release(o);
            objects.items[@intCast(handle - 1)] = null;
            return 0;
        },
        4 => if (o.role == .connector) return taskConfigs(o, in),
        5 => if (o.role == .task and o.plugin == .source) return poll(o),
        6 => if (o.role == .task and o.plugin == .source) {
            if (o.plugin.source.commit) |f| try f(o.state.?);
            return 0;
        },
        7 => if (o.role == .task and o.plugin == .sink) {
            var rd = Reader{ .b = in };
            const rs = try rd.records();
            try o.plugin.sink.put(o.state.?, rs);
            return 0;
        },
        8 => if (o.role == .task and o.plugin == .sink) return flush(o, in),
        9 => if (o.plugin == .converter) return fromConnect(o, in),
        10 => if (o.plugin == .converter) return toConnect(o, in),
        11 => if (o.plugin == .transformation) return transform(o, in),
        12 => if (o.plugin == .predicate) return testOp(o, in),
        else => {},
    }
    return failed("operation {d} does not apply to a {s} {s}", .{ op, kind, @tagName(o.role) });
}

fn open(in: []const u8) !u64 {
    const req = try parse(in, "OPEN");
    if (req != .object) return failed("OPEN: the request is not an object", .{});
    const p = findPlugin(str(req.object.get("plugin"))) orelse return failed("OPEN: this module has no plugin {s}", .{str(req.object.get("plugin"))});
    const role = std.meta.stringToEnum(Role, str(req.object.get("role"))) orelse return failed("OPEN: unknown role", .{});
    const fits = switch (p) {
        .source, .sink => role == .connector or role == .task,
        .converter => role == .converter,
        .transformation => role == .transformation,
        .predicate => role == .predicate,
    };
    if (!fits) return failed("OPEN: plugin {s} is a {s} and cannot be opened as {s}", .{ p.info().name, @tagName(p), @tagName(role) });
    var o = Object{ .plugin = p, .role = role, .cfg = try configOf(req) };
    errdefer o.cfg.deinit();
    var errs = newErrors();
    try checkDefs(p, &o.cfg, &errs);
    if (errs.messages.items.len > 0) return fail("{s}", .{try std.mem.join(tmp(), "; ", errs.messages.items)});
    switch (role) {
        .task => {
            const ctx = req.object.get("context");
            var tc = TaskContext{ .connector = "", .task = 0 };
            if (ctx) |c| if (c == .object) {
                tc.connector = str(c.object.get("connector"));
                if (c.object.get("task")) |t| if (t == .integer) {
                    tc.task = t.integer;
                };
            };
            o.state = switch (p) {
                .source => |s| try s.start(tc, &o.cfg),
                .sink => |s| try s.start(tc, &o.cfg),
                else => unreachable,
            };
        },
        .connector => {},
        else => try configure(&o, std.mem.eql(u8, o.cfg.getOr("converter.type", ""), "key")),
    }
    var h: usize = 0;
    for (objects.items, 0..) |x, i| if (x == null) {
        objects.items[i] = o;
        h = i + 1;
        break;
    };
    if (h == 0) {
        try objects.append(o);
        h = objects.items.len;
    }
    obuf.clearRetainingCapacity();
    try obuf.writer().print("{{\"handle\":{d}}}", .{h});
    return result();
}

fn validate(in: []const u8) !u64 {
    const req = try parse(in, "VALIDATE");
    if (req != .object) return failed("VALIDATE: the request is not an object", .{});
    const p = findPlugin(str(req.object.get("plugin"))) orelse return failed("VALIDATE: this module has no such plugin", .{});
    var cfg = try configOf(req);
    defer cfg.deinit();
    var errs = newErrors();
    try checkDefs(p, &cfg, &errs);
    if (errs.keys.items.len == 0) switch (p) {
        .source => |s| if (s.validate) |f| f(&cfg, &errs),
        .sink => |s| if (s.validate) |f| f(&cfg, &errs),
        else => {
            var trial = Object{ .plugin = p, .role = .converter, .cfg = cfg };
            configure(&trial, false) catch {
                try errs.keys.append(err_key orelse "");
                try errs.messages.append(err_msg);
                err_set = false;
            };
            if (trial.state) |st| switch (p) {
                .converter => |x| if (x.close) |f| f(st),
                .transformation => |x| if (x.close) |f| f(st),
                .predicate => |x| if (x.close) |f| f(st),
                else => {},
            };
        },
    };
    obuf.clearRetainingCapacity();
    const w = obuf.writer();
    try w.writeAll("{\"errors\":{");
    var first = true;
    for (errs.keys.items, 0..) |k, i| {
        var seen = false;
        for (errs.keys.items[0..i]) |prev| seen = seen or std.mem.eql(u8, prev, k);
        if (seen) continue;
        if (!first) try w.writeAll(",");
        first = false;
        try writeString(w, k);
        try w.writeAll(":[");
        var n: usize = 0;
        for (errs.keys.items[i..], errs.messages.items[i..]) |k2, m| {
            if (!std.mem.eql(u8, k2, k)) continue;
            if (n > 0) try w.writeAll(",");
            n += 1;
            try writeString(w, m);
        }
        try w.writeAll("]");
    }
    try w.writeAll("}}");
    return result();
}

fn taskConfigs(o: *Object, in: []const u8) !u64 {
    const req = try parse(in, "TASK_CONFIGS");
    var max: usize = 1;
    if (req == .object) if (req.object.get("max_tasks")) |m| if (m == .integer) {
        max = @intCast(m.integer);
    };
    var cfgs = std.ArrayList(Config).init(tmp());
    defer for (cfgs.items) |*c| c.deinit();
    const split = switch (o.plugin) {
        .source => |s| s.task_configs,
        .sink => |s| s.task_configs,
        else => null,
    };
    if (split) |f| try f(&o.cfg, max, &cfgs) else if (max > 0) try cfgs.append(try o.cfg.clone());
    obuf.clearRetainingCapacity();
    const w = obuf.writer();
    try w.writeAll("[");
    for (cfgs.items, 0..) |c, i| {
        if (i >= max) break;
        if (i > 0) try w.writeAll(",");
        try w.writeAll("{");
        var it = c.map.iterator();
        var j: usize = 0;
        while (it.next()) |e| : (j += 1) {
            if (j > 0) try w.writeAll(",");
            try writeString(w, e.key_ptr.*);
            try w.writeAll(":");
            try writeString(w, e.value_ptr.*);
        }
        try w.writeAll("}");
    }
    try w.writeAll("]");
    return result();
}

const Reader = struct {
    b: []const u8,
    pos: usize = 0,

    fn take(self: *Reader, n: usize) ![]const u8 {
        if (self.b.len - self.pos < n) return fail("malformed batch: truncated", .{});
        const s = self.b[self.pos .. self.pos + n];
        self.pos += n;
        return s;
    }
    fn int(self: *Reader, comptime T: type) !T {
        const s = try self.take(@sizeOf(T));
        return std.mem.readIntLittle(T, s[0..@sizeOf(T)]);
    }
    fn bytes(self: *Reader) ![]const u8 {
        return self.take(try self.int(u32));
    }
    fn data(self: *Reader) !Data {
        return switch ((try self.take(1))[0]) {
            0 => .null,
            1 => .{ .bytes = try self.bytes() },
            2 => .{ .string = try self.bytes() },
            3 => blk: {
                const s = try self.bytes();
                break :blk .{ .json = .{ .schema = s, .payload = try self.bytes() } };
            },
            else => fail("malformed batch: unknown data tag", .{}),
        };
    }
    fn record(self: *Reader) !Record {
        var r = Record{};
        r.topic = try self.bytes();
        r.partition = try self.int(i32);
        r.offset = try self.int(i64);
        r.timestamp = try self.int(i64);
        r.key = try self.data();
        r.value = try self.data();
        const nh = try self.int(u32);
        if (nh > (self.b.len - self.pos) / 5) return fail("malformed batch: bad header count", .{});
        const hs = try tmp().alloc(Header, nh);
        for (hs) |*h| h.* = .{ .key = try self.bytes(), .value = try self.data() };
        r.headers = hs;
        r.source_partition = try self.bytes();
        r.source_offset = try self.bytes();
        return r;
    }
    fn records(self: *Reader) ![]Record {
        const n = try self.int(u32);
        if (n > (self.b.len - self.pos) / 30) return fail("malformed record batch: bad count", .{});
        const rs = try tmp().alloc(Record, n);
        for (rs) |*r| r.* = try self.record();
        if (self.pos != self.b.len) return fail("malformed record batch: trailing bytes", .{});
        return rs;
    }
};

fn putInt(comptime T: type, v: T) !void {
    var b: [@sizeOf(T)]u8 = undefined;
    std.mem.writeIntLittle(T, &b, v);
    try obuf.appendSlice(&b);
}

fn putBytes(b: []const u8) !void {
    try putInt(u32, @as(u32, @intCast(b.len)));
    try obuf.appendSlice(b);
}

fn putData(d: Data) !void {
    switch (d) {
        .null => try obuf.append(0),
        .bytes => |b| {
            try obuf.append(1);
            try putBytes(b);
        },
        .string => |b| {
            try obuf.append(2);
            try putBytes(b);
        },
        .json => |j| {
            try obuf.append(3);
            try putBytes(j.schema);
            try putBytes(j.payload);
        },
    }
}

fn putRecord(r: Record) !void {
    try putBytes(r.topic);
    try putInt(i32, r.partition);
    try putInt(i64, r.offset);
    try putInt(i64, r.timestamp);
    try putData(r.key);
    try putData(r.value);
    try putInt(u32, @as(u32, @intCast(r.headers.len)));
    for (r.headers) |h| {
        try putBytes(h.key);
        try putData(h.value);
    }
    try putBytes(r.source_partition);
    try putBytes(r.source_offset);
}

fn poll(o: *Object) !u64 {
    var batch = Batch{ .records = std.ArrayList(Record).init(tmp()) };
    try o.plugin.source.poll(o.state.?, &batch);
    if (batch.records.items.len == 0) return 0;
    obuf.clearRetainingCapacity();
    try putInt(u32, @as(u32, @intCast(batch.records.items.len)));
    for (batch.records.items) |r| try putRecord(r);
    return result();
}

fn flush(o: *Object, in: []const u8) !u64 {
    var offs = std.ArrayList(TopicPartitionOffset).init(tmp());
    if (in.len > 0) {
        const req = try parse(in, "FLUSH");
        if (req == .array) for (req.array.items) |e| if (e == .object) {
            const p = e.object.get("partition") orelse .null;
            const f = e.object.get("offset") orelse .null;
            try offs.append(.{ .topic = str(e.object.get("topic")), .partition = if (p == .integer) @intCast(p.integer) else 0, .offset = if (f == .integer) f.integer else 0 });
        };
    }
    if (o.plugin.sink.flush) |f| try f(o.state.?, offs.items);
    return 0;
}

fn fromConnect(o: *Object, in: []const u8) !u64 {
    var rd = Reader{ .b = in };
    const n = try rd.int(u32);
    obuf.clearRetainingCapacity();
    try putInt(u32, n);
    var i: u32 = 0;
    while (i < n) : (i += 1) {
        const topic = try rd.bytes();
        const d = try rd.data();
        const b = try o.plugin.converter.from_connect(o.state, topic, d);
        if (b) |x| try putBytes(x) else try putInt(u32, 0xffffffff);
    }
    if (rd.pos != in.len) return failed("malformed data batch", .{});
    return result();
}

fn toConnect(o: *Object, in: []const u8) !u64 {
    var rd = Reader{ .b = in };
    const n = try rd.int(u32);
    const topics = try tmp().alloc([]const u8, n);
    const values = try tmp().alloc(Data, n);
    for (topics, values) |*t, *v| {
        t.* = try rd.bytes();
        const len = try rd.int(u32);
        const b: ?[]const u8 = if (len == 0xffffffff) null else try rd.take(len);
        v.* = try o.plugin.converter.to_connect(o.state, t.*, b);
    }
    if (rd.pos != in.len) return failed("malformed bytes batch", .{});
    obuf.clearRetainingCapacity();
    try putInt(u32, n);
    for (topics, values) |t, v| {
        try putBytes(t);
        try putData(v);
    }
    return result();
}

fn transform(o: *Object, in: []const u8) !u64 {
    var rd = Reader{ .b = in };
    const rs = try rd.records();
    obuf.clearRetainingCapacity();
    try putInt(u32, 0);
    var entries: u32 = 0;
    for (rs, 0..) |*r, i| {
        const v = try o.plugin.transformation.apply(o.state, r);
        if (v == .drop) continue;
        try putInt(u32, @as(u32, @intCast(i)));
        switch (v) {
            .unchanged => try obuf.append(2),
            .changed => {
                try obuf.append(0);
                try putRecord(r.*);
            },
            .failed => {
                try obuf.append(1);
                try putBytes(fail_class);
                try putBytes(fail_message);
            },
            .drop => unreachable,
        }
        entries += 1;
    }
    std.mem.writeIntLittle(u32, obuf.items[0..4], entries);
    return result();
}

fn testOp(o: *Object, in: []const u8) !u64 {
    var rd = Reader{ .b = in };
    const rs = try rd.records();
    obuf.clearRetainingCapacity();
    try putInt(u32, @as(u32, @intCast(rs.len)));
    var classes = std.ArrayList([]const u8).init(tmp());
    var messages = std.ArrayList([]const u8).init(tmp());
    for (rs) |*r| {
        const m = try o.plugin.predicate.test_(o.state, r);
        switch (m) {
            .no => try obuf.append(0),
            .yes => try obuf.append(1),
            .failed => {
                try obuf.append(2);
                try classes.append(fail_class);
                try messages.append(fail_message);
            },
        }
    }
    for (classes.items, messages.items) |c, m| {
        try putBytes(c);
        try putBytes(m);
    }
    return result();
}

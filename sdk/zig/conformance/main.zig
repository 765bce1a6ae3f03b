//! The Zig SDK's conformance module: the five plugins every SDK implements alike, specified in
//! wasmhost/conformance/doc.go and tested there through the host.
const std = @import("std");
const wc = @import("wasmconnect");

comptime {
    _ = wc;
}

pub const plugins = [_]wc.Plugin{
    .{ .source = &source },
    .{ .sink = &sink },
    .{ .converter = &converter },
    .{ .transformation = &transform },
    .{ .predicate = &predicate },
};

const partition = "{\"source\":\"conformance\"}";
const row = "{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":false,\"field\":\"n\"}],\"optional\":false,\"name\":\"conformance.Row\"}";

const source = wc.Source{
    .info = .{ .name = "ConformanceSource", .class = "conformance.Source", .version = "1.0.0", .config = &.{
        .{ .name = "topic", .required = true, .importance = .HIGH, .doc = "The topic to write to" },
        .{ .name = "count", .type = .INT, .default = "3", .importance = .MEDIUM, .doc = "How many records to produce" },
    } },
    .validate = sourceValidate,
    .task_configs = sourceTaskConfigs,
    .start = sourceStart,
    .poll = sourcePoll,
    .stop = sourceStop,
};

fn sourceValidate(cfg: *const wc.Config, errs: *wc.Errors) void {
    if (cfg.int("count", 0) < 0) errs.add("count", "count must not be negative", .{});
}

fn sourceTaskConfigs(cfg: *const wc.Config, max: usize, out: *std.ArrayList(wc.Config)) anyerror!void {
    var i: usize = 0;
    while (i < max) : (i += 1) {
        var c = try cfg.clone();
        try c.set("task.index", try std.fmt.allocPrint(wc.tmp(), "{d}", .{i}));
        try out.append(c);
    }
}

const SourceTask = struct { topic: []u8, next: i64, count: i64 };

fn sourceStart(ctx: wc.TaskContext, cfg: *const wc.Config) anyerror!*anyopaque {
    _ = ctx;
    const t = try wc.heap.create(SourceTask);
    t.* = .{ .topic = try wc.heap.dupe(u8, cfg.getOr("topic", "")), .next = 0, .count = cfg.int("count", 3) };
    if (wc.offset(partition)) |off| {
        if (std.mem.indexOf(u8, off, "\"next\":")) |at| {
            const rest = off[at + 7 ..];
            var end: usize = 0;
            while (end < rest.len and std.ascii.isDigit(rest[end])) end += 1;
            t.next = try std.fmt.parseInt(i64, rest[0..end], 10);
        }
    }
    return t;
}

fn sourcePoll(task: *anyopaque, batch: *wc.Batch) anyerror!void {
    const t: *SourceTask = @ptrCast(@alignCast(task));
    const a = wc.tmp();
    while (t.next < t.count) : (t.next += 1) {
        var r = wc.Record{
            .topic = t.topic,
            .timestamp = 1700000000000 + t.next,
            .key = .{ .string = try std.fmt.allocPrint(a, "key-{d}", .{t.next}) },
            .value = .{ .json = .{ .schema = row, .payload = try std.fmt.allocPrint(a, "{{\"n\":{d}}}", .{t.next}) } },
            .source_partition = partition,
            .source_offset = try std.fmt.allocPrint(a, "{{\"next\":{d}}}", .{t.next + 1}),
        };
        try r.addHeader("i", .{ .string = try std.fmt.allocPrint(a, "{d}", .{t.next}) });
        try batch.add(r);
    }
}

fn sourceStop(task: *anyopaque) void {
    const t: *SourceTask = @ptrCast(@alignCast(task));
    wc.heap.free(t.topic);
    wc.heap.destroy(t);
}

const SinkTask = struct { fail_on: []u8, put: usize };

const sink = wc.Sink{
    .info = .{ .name = "ConformanceSink", .class = "conformance.Sink", .version = "1.0.0", .config = &.{
        .{ .name = "fail.on", .default = "", .importance = .LOW, .doc = "A value that fails PUT" },
    } },
    .start = sinkStart,
    .put = sinkPut,
    .flush = sinkFlush,
};

fn sinkStart(ctx: wc.TaskContext, cfg: *const wc.Config) anyerror!*anyopaque {
    _ = ctx;
    const t = try wc.heap.create(SinkTask);
    t.* = .{ .fail_on = try wc.heap.dupe(u8, cfg.getOr("fail.on", "")), .put = 0 };
    return t;
}

fn sinkPut(task: *anyopaque, records: []wc.Record) anyerror!void {
    const t: *SinkTask = @ptrCast(@alignCast(task));
    for (records) |r| {
        if (t.fail_on.len > 0 and r.value.isString(t.fail_on))
            return wc.fail("conformance: record at offset {d} is {s}", .{ r.offset, t.fail_on });
    }
    t.put += records.len;
}

fn sinkFlush(task: *anyopaque, offsets: []const wc.TopicPartitionOffset) anyerror!void {
    const t: *SinkTask = @ptrCast(@alignCast(task));
    wc.logf(.info, "flushed {d} records, {d} partitions", .{ t.put, offsets.len });
    t.put = 0;
}

/// roundTrip reads JSON data into the data model and writes it back; other data stays.
fn roundTrip(d: wc.Data) !wc.Data {
    if (d != .json) return d;
    const x = try wc.decode(d);
    return wc.encode(x.schema, x.value);
}

const converter = wc.Converter{
    .info = .{ .name = "ConformanceConverter", .class = "conformance.Converter", .version = "1.0.0" },
    .from_connect = convFrom,
    .to_connect = convTo,
};

fn convFrom(state: ?*anyopaque, topic: []const u8, v: wc.Data) anyerror!?[]const u8 {
    _ = state;
    _ = topic;
    return switch (v) {
        .null => null,
        .bytes, .string => |b| b,
        .json => (try roundTrip(v)).json.payload,
    };
}

fn convTo(state: ?*anyopaque, topic: []const u8, b: ?[]const u8) anyerror!wc.Data {
    _ = state;
    _ = topic;
    return if (b) |x| .{ .string = x } else .null;
}

const transform = wc.Transformation{
    .info = .{ .name = "ConformanceTransform", .class = "conformance.Transform", .version = "1.0.0", .config = &.{
        .{ .name = "header", .default = "seen", .importance = .MEDIUM, .doc = "The header to add" },
    } },
    .configure = headerConfigure,
    .apply = transformApply,
    .close = headerClose,
};

const Header = struct { name: []u8 };

fn headerConfigure(cfg: *const wc.Config) anyerror!*anyopaque {
    const h = cfg.getOr("header", "");
    if (h.len == 0) return wc.failConfig("header", "header must not be empty", .{});
    const s = try wc.heap.create(Header);
    s.* = .{ .name = try wc.heap.dupe(u8, h) };
    return s;
}

fn headerClose(state: *anyopaque) void {
    const s: *Header = @ptrCast(@alignCast(state));
    wc.heap.free(s.name);
    wc.heap.destroy(s);
}

fn transformApply(state: ?*anyopaque, r: *wc.Record) anyerror!wc.Verdict {
    const s: *Header = @ptrCast(@alignCast(state.?));
    if (r.value == .null) return .unchanged;
    if (r.value.isString("drop")) return .drop;
    if (r.value.isString("fail")) return wc.failRecord(null, "conformance: fail requested", .{});
    if (r.value.isString("error")) return wc.failRetriable("conformance: error requested", .{});
    if (r.value.isString("trap")) @trap();
    r.key = try roundTrip(r.key);
    r.value = try roundTrip(r.value);
    for (r.headers) |*h| h.value = try roundTrip(h.value);
    try r.addHeader(s.name, .{ .string = "c" });
    return .changed;
}

const predicate = wc.Predicate{
    .info = .{ .name = "ConformancePredicate", .class = "conformance.Predicate", .version = "1.0.0", .config = &.{
        .{ .name = "header", .required = true, .importance = .HIGH, .doc = "The header whose presence matches" },
    } },
    .configure = predicateConfigure,
    .test_ = predicateTest,
    .close = headerClose,
};

fn predicateConfigure(cfg: *const wc.Config) anyerror!*anyopaque {
    const s = try wc.heap.create(Header);
    s.* = .{ .name = try wc.heap.dupe(u8, cfg.getOr("header", "")) };
    return s;
}

fn predicateTest(state: ?*anyopaque, r: *const wc.Record) anyerror!wc.Match {
    const s: *Header = @ptrCast(@alignCast(state.?));
    if (r.value.isString("fail")) return wc.failMatch(null, "conformance: fail requested", .{});
    if (r.value.isString("trap")) @trap();
    return if (r.header(s.name) != null) .yes else .no;
}

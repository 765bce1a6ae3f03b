//! FieldEquals (com.example.predicates.FieldEquals): an example predicate on the wasmconnect Zig
//! SDK (sdk/zig). It matches records whose value, a struct or a schemaless JSON object, has the
//! field `field` equal to `value`: a string field as text, a number, boolean or null by its JSON
//! text (value=42 matches 42 and 42.0 does not). Values that are not JSON, and objects without the
//! field, do not match; a value whose JSON is malformed fails that record alone.
//!
//! With Kafka's Filter transformation it drops what it matches:
//!
//!     transforms=drop
//!     transforms.drop.type=org.apache.kafka.connect.transforms.Filter
//!     transforms.drop.predicate=paris
//!     predicates=paris
//!     predicates.paris.type=com.example.predicates.FieldEquals
//!     predicates.paris.field=city
//!     predicates.paris.value=paris
const std = @import("std");
const wc = @import("wasmconnect");

comptime {
    _ = wc;
}

pub const plugins = [_]wc.Plugin{.{ .predicate = &field_equals }};

const field_equals = wc.Predicate{
    .info = .{ .name = "FieldEquals", .class = "com.example.predicates.FieldEquals", .version = "1.0.0", .config = &.{
        .{ .name = "field", .required = true, .importance = .HIGH, .doc = "The field of the record's value to compare" },
        .{ .name = "value", .required = true, .importance = .HIGH, .doc = "The text the field must equal" },
    } },
    .configure = configure,
    .test_ = matches,
    .close = close,
};

const State = struct { field: []u8, value: []u8 };

fn configure(cfg: *const wc.Config) anyerror!*anyopaque {
    const field = std.mem.trim(u8, cfg.getOr("field", ""), " ");
    if (field.len == 0) return wc.failConfig("field", "Invalid value for configuration field: names no field", .{});
    const s = try wc.heap.create(State);
    s.* = .{ .field = try wc.heap.dupe(u8, field), .value = try wc.heap.dupe(u8, cfg.getOr("value", "")) };
    return s;
}

fn close(state: *anyopaque) void {
    const s: *State = @ptrCast(@alignCast(state));
    wc.heap.free(s.field);
    wc.heap.free(s.value);
    wc.heap.destroy(s);
}

fn matches(state: ?*anyopaque, r: *const wc.Record) anyerror!wc.Match {
    const s: *State = @ptrCast(@alignCast(state.?));
    if (r.value != .json) return .no;
    const d = wc.decode(r.value) catch return wc.failMatch(null, "FieldEquals: the value is not valid JSON data", .{});
    const obj = switch (d.value) {
        .object => |o| o,
        else => return .no,
    };
    const v = obj.get(s.field) orelse return .no;
    return if (equals(v, s.value)) .yes else .no;
}

/// equals compares a JSON value with the configured text.
fn equals(v: std.json.Value, want: []const u8) bool {
    return switch (v) {
        .string => |x| std.mem.eql(u8, x, want),
        .number_string => |x| std.mem.eql(u8, x, want),
        .integer => |x| if (std.fmt.parseInt(i64, want, 10)) |w| w == x else |_| false,
        .float => |x| if (std.fmt.parseFloat(f64, want)) |w| w == x and std.mem.indexOfAny(u8, want, ".eE") != null else |_| false,
        .bool => |x| std.mem.eql(u8, want, if (x) "true" else "false"),
        .null => std.mem.eql(u8, want, "null"),
        else => false,
    };
}

test "equals compares by JSON text" {
    try std.testing.expect(equals(.{ .string = "paris" }, "paris"));
    try std.testing.expect(!equals(.{ .string = "Paris" }, "paris"));
    try std.testing.expect(equals(.{ .integer = 42 }, "42"));
    try std.testing.expect(!equals(.{ .integer = 42 }, "42.0"));
    try std.testing.expect(equals(.{ .float = 1.5 }, "1.5"));
    try std.testing.expect(equals(.{ .bool = true }, "true"));
    try std.testing.expect(equals(.null, "null"));
}

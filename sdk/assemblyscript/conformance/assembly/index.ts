// The AssemblyScript SDK's conformance module: the five plugins every SDK implements alike,
// specified in wasmhost/conformance/doc.go and tested there through the host.
import * as wc from "../../assembly/index";
import { Config, Data, Errors, Record, TaskContext, TopicPartitionOffset } from "../../assembly/index";

export { wc_abi_version, wc_alloc, wc_free, wc_describe, wc_call } from "../../assembly/abi";

const PARTITION = "{\"source\":\"conformance\"}";
const ROW = "{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":false,\"field\":\"n\"}],\"optional\":false,\"name\":\"conformance.Row\"}";

class Source extends wc.SourceConnector {
  validate(cfg: Config, errs: Errors): void {
    if (cfg.getInt("count") < 0) errs.add("count", "count must not be negative");
  }
  taskConfigs(cfg: Config, maxTasks: i32): Config[] {
    const out: Config[] = [];
    for (let i = 0; i < maxTasks; i++) {
      const c = cfg.clone();
      c.set("task.index", i.toString());
      out.push(c);
    }
    return out;
  }
  newTask(): wc.SourceTask { return new SourceTask(); }
}

class SourceTask extends wc.SourceTask {
  topic: string = "";
  next: i64 = 0;
  count: i64 = 0;
  start(ctx: TaskContext, cfg: Config): void {
    this.topic = cfg.get("topic");
    this.count = cfg.getInt("count", 3);
    const off = ctx.offset(PARTITION);
    if (off != null) {
      const at = off.indexOf("\"next\":");
      if (at >= 0) this.next = I64.parseInt(off.substring(at + 7));
    }
  }
  poll(batch: Record[]): void {
    for (; this.next < this.count; this.next++) {
      const r = new Record();
      r.topic = this.topic;
      r.timestamp = 1700000000000 + this.next;
      r.key = Data.string("key-" + this.next.toString());
      r.value = Data.json(utf8(ROW), utf8("{\"n\":" + this.next.toString() + "}"));
      r.addHeader("i", Data.string(this.next.toString()));
      r.sourcePartition = PARTITION;
      r.sourceOffset = "{\"next\":" + (this.next + 1).toString() + "}";
      batch.push(r);
    }
  }
}

function utf8(s: string): Uint8Array { return Uint8Array.wrap(String.UTF8.encode(s)); }

class Sink extends wc.SinkConnector {
  newTask(): wc.SinkTask { return new SinkTask(); }
}

class SinkTask extends wc.SinkTask {
  failOn: string = "";
  count: i32 = 0;
  start(ctx: TaskContext, cfg: Config): void { this.failOn = cfg.get("fail.on"); }
  put(records: Record[]): void {
    for (let i = 0; i < records.length; i++) {
      if (this.failOn.length > 0 && records[i].value.isString(this.failOn)) {
        wc.fail("conformance: record at offset " + records[i].offset.toString() + " is " + this.failOn);
        return;
      }
    }
    this.count += records.length;
  }
  flush(offsets: TopicPartitionOffset[]): void {
    wc.log(wc.INFO, "flushed " + this.count.toString() + " records, " + offsets.length.toString() + " partitions");
    this.count = 0;
  }
}

/** roundTrip reads JSON data into the data model and writes it back; other data stays. */
function roundTrip(d: Data): Data | null {
  if (d.tag != wc.TAG_JSON) return d;
  const x = wc.decode(d);
  if (x.error != null) return null;
  return wc.encode(x.schema, x.value);
}

class Conv extends wc.Converter {
  fromConnect(topic: string, value: Data): Uint8Array | null {
    if (value.isNull) return null;
    if (value.tag != wc.TAG_JSON) return value.bytes;
    const d = roundTrip(value);
    if (d == null) { wc.fail("conformance: bad data"); return null; }
    return d.bytes;
  }
  toConnect(topic: string, bytes: Uint8Array | null): Data {
    if (bytes == null) return Data.null();
    return new Data(wc.TAG_STRING, bytes, new Uint8Array(0));
  }
}

class Transform extends wc.Transformation {
  header: string = "";
  configure(cfg: Config): void {
    this.header = cfg.get("header");
    if (this.header.length == 0) wc.failConfig("header", "header must not be empty");
  }
  apply(r: Record): i32 {
    if (r.value.isNull) return wc.UNCHANGED;
    if (r.value.isString("drop")) return wc.DROP;
    if (r.value.isString("fail")) return wc.failRecord("conformance: fail requested");
    if (r.value.isString("error")) { wc.failRetriable("conformance: error requested"); return wc.ERROR_BATCH; }
    if (r.value.isString("trap")) unreachable();
    const k = roundTrip(r.key), v = roundTrip(r.value);
    if (k == null || v == null) return wc.failRecord("conformance: bad data");
    r.key = k;
    r.value = v;
    for (let i = 0; i < r.headers.length; i++) {
      const h = roundTrip(r.headers[i].value);
      if (h == null) return wc.failRecord("conformance: bad header");
      r.headers[i].value = h;
    }
    r.addHeader(this.header, Data.string("c"));
    return wc.CHANGED;
  }
}

class Pred extends wc.Predicate {
  header: string = "";
  configure(cfg: Config): void { this.header = cfg.get("header"); }
  test(r: Record): i32 {
    if (r.value.isString("fail")) return wc.failRecord("conformance: fail requested");
    if (r.value.isString("trap")) unreachable();
    return r.header(this.header) != null ? 1 : 0;
  }
}

wc.registerSource(new wc.Info("ConformanceSource").withClass("conformance.Source").withVersion("1.0.0")
  .define(new wc.ConfigDef("topic").isRequired().withImportance(wc.HIGH).documented("The topic to write to"))
  .define(new wc.ConfigDef("count").typed(wc.INT).withDefault("3").withImportance(wc.MEDIUM).documented("How many records to produce")),
  new Source());
wc.registerSink(new wc.Info("ConformanceSink").withClass("conformance.Sink").withVersion("1.0.0")
  .define(new wc.ConfigDef("fail.on").withDefault("").withImportance(wc.LOW).documented("A value that fails PUT")),
  new Sink());
wc.registerConverter(new wc.Info("ConformanceConverter").withClass("conformance.Converter").withVersion("1.0.0"),
  (): wc.Converter => new Conv());
wc.registerTransformation(new wc.Info("ConformanceTransform").withClass("conformance.Transform").withVersion("1.0.0")
  .define(new wc.ConfigDef("header").withDefault("seen").withImportance(wc.MEDIUM).documented("The header to add")),
  (): wc.Transformation => new Transform());
wc.registerPredicate(new wc.Info("ConformancePredicate").withClass("conformance.Predicate").withVersion("1.0.0")
  .define(new wc.ConfigDef("header").isRequired().withImportance(wc.HIGH).documented("The header whose presence matches")),
  (): wc.Predicate => new Pred());

// MaskField: a wasmconnect transformation written with the AssemblyScript SDK
// (sdk/assemblyscript), like Kafka's MaskField$Value for strings: it replaces the named string
// fields of a record's value (a struct with a schema, or a schemaless JSON object) with a fixed
// text, passes nulls through, and fails the record (not the batch) when the value is not JSON.
//
// Settings: fields (LIST, required), replacement (STRING, default "****").
//
// Build (in this directory, with the SDK's compiler: npm ci --prefix sdk/assemblyscript):
//   node ../../../sdk/assemblyscript/node_modules/assemblyscript/bin/asc.js assembly/index.ts \
//     -O3 --runtime minimal --noAssert --use abort=../../../sdk/assemblyscript/assembly/abi/wcAbort -o mask.wasm
import * as wc from "../../../../sdk/assemblyscript/assembly/index";
import { Config, Record, Value } from "../../../../sdk/assemblyscript/assembly/index";

export { wc_abi_version, wc_alloc, wc_free, wc_describe, wc_call } from "../../../../sdk/assemblyscript/assembly/abi";

class MaskField extends wc.Transformation {
  fields: string[] = [];
  replacement: string = "";

  configure(cfg: Config): void {
    const list = cfg.get("fields").split(",");
    for (let i = 0; i < list.length; i++) {
      const f = list[i].trim();
      if (f.length > 0) this.fields.push(f);
    }
    if (this.fields.length == 0) wc.failConfig("fields", "Invalid value " + cfg.get("fields") + " for configuration fields: names no field");
    this.replacement = cfg.get("replacement");
  }

  apply(r: Record): i32 {
    if (r.value.isNull) return wc.UNCHANGED;
    if (r.value.tag != wc.TAG_JSON) return wc.failRecord("MaskField: the value is not JSON data (use a JSON value converter)");
    const d = wc.decode(r.value);
    if (d.error != null) return wc.failRecord("MaskField: " + d.error!);
    const v = d.value;
    if (v.isNull) return wc.UNCHANGED;
    let changed = false;
    for (let i = 0; i < this.fields.length; i++) {
      if (v.kind == wc.V_STRUCT) {
        const f = v.get(this.fields[i]);
        if (f != null && f.kind == wc.V_STRING) { v.set(this.fields[i], Value.string(this.replacement)); changed = true; }
      } else if (v.kind == wc.V_MAP) {
        for (let e = 0; e < v.items.length; e++) {
          if (v.items[e].kind == wc.V_STRING && v.items[e].s == this.fields[i] && v.entries[e].kind == wc.V_STRING) {
            v.entries[e] = Value.string(this.replacement);
            changed = true;
          }
        }
      }
    }
    if (!changed) return wc.UNCHANGED;
    const out = wc.encode(d.schema, v);
    if (out == null) return wc.failRecord("MaskField: " + (wc.encodeError != null ? wc.encodeError! : "cannot encode"));
    r.value = out;
    return wc.CHANGED;
  }
}

wc.registerTransformation(
  new wc.Info("MaskField").withClass("com.example.transforms.MaskField").withVersion("1.0.0")
    .define(new wc.ConfigDef("fields").typed(wc.LIST).isRequired().withImportance(wc.HIGH).documented("The string fields to mask"))
    .define(new wc.ConfigDef("replacement").withDefault("****").withImportance(wc.LOW).documented("The text that replaces them")),
  (): wc.Transformation => new MaskField(),
);


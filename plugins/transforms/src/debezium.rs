//! Debezium's ExtractNewRecordState (io.debezium.transforms.ExtractNewRecordState): unwraps a
//! change event's envelope {before, after, source, op, ts_ms, transaction} to the row state, as
//! Debezium's documentation describes "event flattening":
//!
//! - an insert, update or snapshot read becomes its `after` struct;
//! - a delete (after null, before set) is dropped, passed on as a null value with the `after`
//!   schema, turned into a tombstone, or rewritten to its `before` struct with `__deleted` "true"
//!   (delete.tombstone.handling.mode, or the older delete.handling.mode with drop.tombstones);
//! - a tombstone (a null value) is dropped or kept;
//! - a truncate (before and after null) is dropped;
//! - add.fields and add.headers copy envelope fields (op, ts_ms, source.*, transaction.*) into the
//!   new value and into headers, named `__op`, `__source_ts_ms` (add.fields.prefix and
//!   add.headers.prefix, or `name:newName`);
//! - a record that is not an envelope (no value schema, or one whose name does not end in
//!   ".Envelope": heartbeats, schema changes) passes unchanged.
//!
//! Not supported: route.by.field and the drop.fields.* settings.

use crate::common::*;
use std::borrow::Cow;
use std::rc::Rc;
use wasmconnect::config::{ConfigDef, ConfigType, Importance};
use wasmconnect::connect::{self, Field, Schema, Struct, Type, Value};
use wasmconnect::{Config, Data, Error, Header, Outcome, Record, Result, Transformation};

const TOMBSTONE_MODES: [&str; 5] = ["drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"];
const DELETE_MODES: [&str; 3] = ["drop", "rewrite", "none"];
const DELETED_FIELD: &str = "__deleted";
const PURPOSE: &str = "source field insertion";

fn one_of(v: &str, modes: &[&str]) -> std::result::Result<(), String> {
    if modes.iter().any(|m| m.eq_ignore_ascii_case(v.trim())) {
        Ok(())
    } else {
        Err(format!("Value must be one of {}", modes.join(", ")))
    }
}

fn valid_tombstone_mode(v: &str) -> std::result::Result<(), String> {
    if v.is_empty() {
        return Ok(());
    }
    one_of(v, &TOMBSTONE_MODES)
}

fn valid_delete_mode(v: &str) -> std::result::Result<(), String> {
    one_of(v, &DELETE_MODES)
}

fn valid_field_list(v: &str) -> std::result::Result<(), String> {
    for f in wasmconnect::config::split_list(v) {
        FieldRef::parse("", &f)?;
    }
    Ok(())
}

pub fn extract_new_record_state_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("delete.tombstone.handling.mode").importance(Importance::Medium).validator(valid_tombstone_mode).doc(
            "How to handle delete records and tombstones: drop - remove the delete event and the tombstone; tombstone - for each delete event, leave only a null value (with the after schema) and drop the tombstone; rewrite - drop the tombstone and turn the delete into its before state with a `__deleted` field \"true\"; rewrite-with-tombstone - rewrite, and keep the tombstone; delete-to-tombstone - turn delete events into tombstones and drop the original tombstones. When set, drop.tombstones and delete.handling.mode are ignored.",
        ),
        ConfigDef::new("drop.tombstones").typ(ConfigType::Boolean).default("true").importance(Importance::Low).doc(
            "Debezium by default generates a tombstone record to enable Kafka compaction after a delete record was generated. This record is usually filtered out to avoid duplicates as a delete record is converted to a tombstone record, too. (Older setting: delete.tombstone.handling.mode replaces it.)",
        ),
        ConfigDef::new("delete.handling.mode").default("drop").importance(Importance::Medium).validator(valid_delete_mode).doc(
            "How to handle delete records: none - records are passed, drop - records are removed (the default), rewrite - __deleted field is added to records. (Older setting: delete.tombstone.handling.mode replaces it.)",
        ),
        ConfigDef::new("add.fields.prefix").default("__").importance(Importance::Low).doc("Adds this prefix to each field listed."),
        ConfigDef::new("add.fields").typ(ConfigType::List).default("").importance(Importance::Low).validator(valid_field_list).doc(
            "Adds each field listed, prefixed with __ (or __<struct>_ if the struct is specified). Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. Optionally one can also map new field name like version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP.",
        ),
        ConfigDef::new("add.headers.prefix").default("__").importance(Importance::Low).doc("Adds this prefix listed to each header."),
        ConfigDef::new("add.headers").typ(ConfigType::List).default("").importance(Importance::Low).validator(valid_field_list).doc(
            "Adds each field listed to the header, __ (or __<struct>_ if the struct is specified). Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms headers.",
        ),
        ConfigDef::new("replace.null.with.default").typ(ConfigType::Boolean).default("true").importance(Importance::Low).doc(
            "When this option is enabled, null field values are replaced by source-defined defaults when rewriting the record.",
        ),
    ]
}

/// What happens to a delete event.
#[derive(Clone, Copy, PartialEq, Debug)]
enum OnDelete {
    Drop,
    /// A null value with the `after` schema (Debezium's "tombstone" and "none").
    NullValue,
    /// A real tombstone: no value, no schema.
    Tombstone,
    /// The `before` state with `__deleted` "true".
    Rewrite,
}

/// An envelope field copied into the value or a header: `op`, `source.ts_ms`, `table:tbl`.
#[derive(Clone, Debug, PartialEq)]
struct FieldRef {
    /// The struct that holds the field ("source", "transaction"), None for op and ts_ms.
    parent: Option<String>,
    field: String,
    /// The name of the new field or header.
    name: String,
}

impl FieldRef {
    fn parse(prefix: &str, spec: &str) -> std::result::Result<FieldRef, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        if parts.len() > 2 {
            return Err(format!("Unexpected field name: {}", spec));
        }
        let path: Vec<&str> = parts[0].split('.').collect();
        let (parent, field) = match path.as_slice() {
            [f] => (default_parent(f), f.to_string()),
            [p, f, ..] => (Some(p.to_string()), f.to_string()),
            [] => unreachable!("split yields at least one part"),
        };
        let name = match (parts.get(1), &parent) {
            (Some(n), _) => format!("{}{}", prefix, n),
            (None, Some(p)) if path.len() > 1 => format!("{}{}_{}", prefix, p, field),
            (None, _) => format!("{}{}", prefix, field),
        };
        Ok(FieldRef { parent, field, name })
    }

    /// The struct of the envelope holding `parent`'s field, or the envelope; a field an earlier
    /// transformation put in the envelope itself is found there.
    fn schema(&self, envelope: &Schema) -> Option<Rc<Schema>> {
        let in_parent = match &self.parent {
            None => envelope.field(&self.field),
            Some(p) => envelope.field(p).and_then(|ps| ps.schema.field(&self.field)),
        };
        let f = in_parent.or_else(|| envelope.field(&self.field))?;
        // Debezium: SchemaUtil.copySchemaBasics(field schema).optional().
        let mut s = (*f.schema).clone();
        s.optional = true;
        s.default = None;
        Some(Rc::new(s))
    }

    fn value(&self, envelope: &Struct) -> Value {
        let parent = match &self.parent {
            None => Some(envelope),
            Some(p) => match envelope.get(p) {
                Ok(Value::Struct(s)) => Some(s),
                _ => None,
            },
        };
        match parent {
            None => Value::Null,
            Some(s) => s.get(&self.field).or_else(|_| envelope.get(&self.field)).cloned().unwrap_or(Value::Null),
        }
    }
}

/// Debezium's struct for an unqualified field name.
fn default_parent(field: &str) -> Option<String> {
    match field {
        "id" | "data_collection_order" | "total_order" => Some("transaction".to_string()),
        "op" | "ts_ms" | "ts_us" | "ts_ns" => None,
        "updateDescription" => Some("updateDescription".to_string()),
        _ => Some("source".to_string()),
    }
}

pub struct ExtractNewRecordState {
    nulls: NullPolicy,
    keep_tombstones: bool,
    on_delete: OnDelete,
    /// Adds `__deleted` "false" to inserts and updates too (the rewrite modes).
    rewrite: bool,
    fields: Vec<FieldRef>,
    headers: Vec<FieldRef>,
    /// Derived value schemas by (row schema, envelope schema, `__deleted` value), the last hit first.
    schemas: Vec<(Rc<Schema>, Rc<Schema>, Option<bool>, Rc<Schema>)>,
}

impl ExtractNewRecordState {
    pub fn new() -> ExtractNewRecordState {
        ExtractNewRecordState { nulls: NullPolicy::default(), keep_tombstones: false, on_delete: OnDelete::Drop, rewrite: false, fields: Vec::new(), headers: Vec::new(), schemas: Vec::new() }
    }

    /// The row struct `row` (the `after` or `before` state) with `__deleted` and add.fields.
    fn rewrite_row(&mut self, env_schema: &Rc<Schema>, env: &Struct, row_schema: &Rc<Schema>, row: Value, deleted: Option<bool>) -> Result<Data<'static>> {
        let deleted = if self.rewrite { deleted } else { None };
        if deleted.is_none() && self.fields.is_empty() {
            return connect::encode(Some(row_schema), &row).map_err(Error::new);
        }
        let row = match row {
            Value::Struct(s) => s,
            v => return Err(Error::new(format!("Only Struct objects supported for [{}], found: {}", PURPOSE, v.class_name()))),
        };
        let schema = self.derived_schema(env_schema, row_schema, deleted)?;
        let mut values = row.values;
        if let Some(d) = deleted {
            values.push(Value::String(d.to_string()));
        }
        for f in &self.fields {
            if f.schema(env_schema).is_some() {
                values.push(f.value(env));
            }
        }
        connect::encode(Some(&schema), &Value::Struct(Struct { schema: schema.clone(), values })).map_err(Error::new)
    }

    fn derived_schema(&mut self, env_schema: &Rc<Schema>, row_schema: &Rc<Schema>, deleted: Option<bool>) -> Result<Rc<Schema>> {
        let hit = self.schemas.iter().position(|(r, e, d, _)| Rc::ptr_eq(r, row_schema) && Rc::ptr_eq(e, env_schema) && *d == deleted);
        if let Some(i) = hit {
            self.schemas.swap(0, i);
            return Ok(self.schemas[0].3.clone());
        }
        if row_schema.typ != Type::Struct {
            return Err(not_struct_schema(row_schema, PURPOSE));
        }
        let mut s = row_schema.struct_basics();
        s.optional = row_schema.optional;
        s.fields = row_schema.fields.clone();
        let mut add = |name: &str, fs: Rc<Schema>| -> Result<()> {
            if s.field_index(name).is_some() {
                return Err(Error::new(format!("Cannot create field because of field name duplication {}", name)));
            }
            s.fields.push(Field { name: name.to_string(), schema: fs });
            Ok(())
        };
        if deleted.is_some() {
            add(DELETED_FIELD, connect::Schema::primitive(Type::String, true))?;
        }
        for f in &self.fields {
            if let Some(fs) = f.schema(env_schema) {
                add(&f.name, fs)?;
            }
        }
        let s = Rc::new(s);
        if self.schemas.len() >= 32 {
            self.schemas.truncate(16);
        }
        self.schemas.insert(0, (row_schema.clone(), env_schema.clone(), deleted, s.clone()));
        Ok(s)
    }
}

/// A header value as SimpleHeaderConverter writes it: text as text, other values as JSON.
fn header_data(s: &Rc<Schema>, v: &Value) -> Result<Data<'static>> {
    match v {
        Value::Null => Ok(Data::Null),
        Value::String(t) => Ok(Data::String(Cow::Owned(t.clone().into_bytes()))),
        v => connect::encode(Some(s), v).map_err(Error::new),
    }
}

fn is_envelope(s: &Option<Rc<Schema>>) -> bool {
    matches!(s, Some(s) if s.typ == Type::Struct && s.name.ends_with(".Envelope"))
}

impl Transformation for ExtractNewRecordState {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        let mode = get(cfg, "delete.tombstone.handling.mode").trim().to_ascii_lowercase();
        let (keep, on_delete) = match mode.as_str() {
            "" => {
                let keep = !wasmconnect::config::get_bool(cfg, "drop.tombstones", true)?;
                let del = cfg.get("delete.handling.mode").map(|m| m.trim().to_ascii_lowercase()).unwrap_or_else(|| "drop".to_string());
                match del.as_str() {
                    "drop" => (keep, OnDelete::Drop),
                    "none" => (keep, OnDelete::NullValue),
                    "rewrite" => (keep, OnDelete::Rewrite),
                    m => return Err(Error::new(format!("Invalid value {} for configuration delete.handling.mode: Value must be one of {}", m, DELETE_MODES.join(", ")))),
                }
            }
            "drop" => (false, OnDelete::Drop),
            "tombstone" => (false, OnDelete::NullValue),
            "rewrite" => (false, OnDelete::Rewrite),
            "rewrite-with-tombstone" => (true, OnDelete::Rewrite),
            "delete-to-tombstone" => (false, OnDelete::Tombstone),
            m => return Err(Error::new(format!("Invalid value {} for configuration delete.tombstone.handling.mode: Value must be one of {}", m, TOMBSTONE_MODES.join(", ")))),
        };
        self.keep_tombstones = keep;
        self.on_delete = on_delete;
        self.rewrite = on_delete == OnDelete::Rewrite;
        let refs = |key: &str, prefix_key: &str| -> Result<Vec<FieldRef>> {
            let prefix = cfg.get(prefix_key).map(String::as_str).unwrap_or("__");
            list(cfg, key).iter().map(|f| FieldRef::parse(prefix, f).map_err(|e| Error::new(format!("Invalid value {} for configuration {}: {}", f, key, e)))).collect()
        };
        self.fields = refs("add.fields", "add.fields.prefix")?;
        self.headers = refs("add.headers", "add.headers.prefix")?;
        self.schemas.clear();
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        if connect::is_null(&r.value) {
            if !self.keep_tombstones {
                return Ok(Outcome::Drop);
            }
            // Debezium marks a kept tombstone with the delete's op header.
            let mut out = r.clone();
            for h in self.headers.iter().filter(|h| h.field == "op") {
                out.headers.push(Header { key: Cow::Owned(h.name.clone()), value: Data::String(Cow::Borrowed(b"d")) });
            }
            return Ok(outcome(r, out));
        }
        let raw_schema = match &r.value {
            Data::Json { schema, .. } => schema,
            _ => return Ok(Outcome::Unchanged),
        };
        if !is_envelope(&connect::parse_schema(raw_schema).map_err(Error::new)?) {
            return Ok(Outcome::Unchanged);
        }
        let (s, v) = self.nulls.decode(&r.value)?;
        let (env_schema, env) = match (s, v) {
            (Some(s), Value::Struct(st)) => (s, st),
            (_, v) => return Err(Error::new(format!("Only Struct objects supported for [{}], found: {}", PURPOSE, v.class_name()))),
        };
        let mut out = r.clone();
        for h in &self.headers {
            if let Some(hs) = h.schema(&env_schema) {
                out.headers.push(Header { key: Cow::Owned(h.name.clone()), value: header_data(&hs, &h.value(&env))? });
            }
        }
        let state = |name: &str| -> Result<(Rc<Schema>, Value)> {
            let i = env_schema.field_index(name).ok_or_else(|| Error::new(format!("{} is not a valid field name", name)))?;
            Ok((env_schema.fields[i].schema.clone(), env.values[i].clone()))
        };
        let (after_schema, after) = state("after")?;
        out.value = if !after.is_null() {
            self.rewrite_row(&env_schema, &env, &after_schema, after, Some(false))?
        } else {
            let (before_schema, before) = state("before")?;
            if before.is_null() {
                return Ok(Outcome::Drop); // a truncate
            }
            match self.on_delete {
                OnDelete::Drop => return Ok(Outcome::Drop),
                OnDelete::NullValue => connect::encode(Some(&after_schema), &Value::Null).map_err(Error::new)?,
                OnDelete::Tombstone => Data::Null,
                OnDelete::Rewrite => self.rewrite_row(&env_schema, &env, &before_schema, before, Some(true))?,
            }
        };
        Ok(Outcome::Record(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}],"optional":true,"name":"db.public.customers.Value"}"#;
    const SOURCE: &str = r#"{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source"}"#;

    fn envelope_schema() -> String {
        format!(
            r#"{{"type":"struct","fields":[{{"field":"before",{r}}},{{"field":"after",{r}}},{{"field":"source",{s}}},{{"type":"string","optional":false,"field":"op"}},{{"type":"int64","optional":true,"field":"ts_ms"}}],"optional":false,"name":"db.public.customers.Envelope","version":1}}"#,
            r = &ROW[1..ROW.len() - 1],
            s = &SOURCE[1..SOURCE.len() - 1]
        )
    }

    fn event(before: &str, after: &str, op: &str) -> Record<'static> {
        let payload = format!(r#"{{"before":{},"after":{},"source":{{"version":"2.7","connector":"postgresql","ts_ms":1700000000000,"table":"customers","lsn":24023128}},"op":"{}","ts_ms":1700000000123}}"#, before, after, op);
        let value = Data::Json { schema: Cow::Owned(envelope_schema().into_bytes()), payload: Cow::Owned(payload.into_bytes()) };
        Record { topic: "db.public.customers".into(), partition: 0, offset: 7, timestamp: 1, key: Data::str("k"), value, ..Default::default() }
    }

    fn smt(pairs: &[(&str, &str)]) -> ExtractNewRecordState {
        let cfg: Config = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut t = ExtractNewRecordState::new();
        t.configure(&cfg).unwrap();
        t
    }

    /// The outcome as "dropped", "unchanged", "tombstone" or "schema | payload", with headers.
    fn show(r: &Record, o: Result<Outcome>) -> String {
        let out = match o {
            Err(e) => return format!("error: {}", e.message()),
            Ok(Outcome::Drop) => return "dropped".to_string(),
            Ok(Outcome::Unchanged) => return "unchanged".to_string(),
            Ok(Outcome::Record(n)) => n,
        };
        assert_eq!(out.key, r.key, "the key is kept");
        let mut s = match &out.value {
            Data::Null => "tombstone".to_string(),
            Data::Json { schema, payload } => format!("{} | {}", String::from_utf8_lossy(schema), String::from_utf8_lossy(payload)),
            d => format!("{:?}", d),
        };
        for h in &out.headers {
            let v = match &h.value {
                Data::String(b) => String::from_utf8_lossy(b).into_owned(),
                Data::Json { payload, .. } => String::from_utf8_lossy(payload).into_owned(),
                d => format!("{:?}", d),
            };
            s.push_str(&format!(" [{}={}]", h.key, v));
        }
        s
    }

    fn run(pairs: &[(&str, &str)], r: &Record) -> String {
        show(r, smt(pairs).apply(r))
    }

    const ALICE: &str = r#"{"id":1,"name":"alice"}"#;

    #[test]
    fn create_and_update_become_the_after_state() {
        for op in ["c", "u", "r"] {
            let r = event("null", ALICE, op);
            assert_eq!(run(&[], &r), format!("{} | {}", ROW, ALICE), "op {}", op);
        }
    }

    #[test]
    fn deletes_follow_the_delete_handling_mode() {
        let r = event(ALICE, "null", "d");
        assert_eq!(run(&[], &r), "dropped", "delete.handling.mode defaults to drop");
        assert_eq!(run(&[("delete.handling.mode", "drop")], &r), "dropped");
        assert_eq!(run(&[("delete.handling.mode", "none")], &r), format!("{} | null", ROW));
        let deleted = r#"{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"},{"type":"string","optional":true,"field":"__deleted"}],"optional":true,"name":"db.public.customers.Value"}"#;
        assert_eq!(run(&[("delete.handling.mode", "rewrite")], &r), format!(r#"{} | {{"id":1,"name":"alice","__deleted":"true"}}"#, deleted));
        // In the rewrite modes inserts and updates say they are not deleted.
        assert_eq!(run(&[("delete.handling.mode", "rewrite")], &event("null", ALICE, "c")), format!(r#"{} | {{"id":1,"name":"alice","__deleted":"false"}}"#, deleted));
        // The newer setting wins over the older ones.
        let newer = |m: &str| run(&[("delete.tombstone.handling.mode", m), ("delete.handling.mode", "none")], &r);
        assert_eq!(newer("drop"), "dropped");
        assert_eq!(newer("tombstone"), format!("{} | null", ROW));
        assert_eq!(newer("delete-to-tombstone"), "tombstone");
        assert_eq!(newer("rewrite"), format!(r#"{} | {{"id":1,"name":"alice","__deleted":"true"}}"#, deleted));
        assert_eq!(newer("REWRITE-with-tombstone"), format!(r#"{} | {{"id":1,"name":"alice","__deleted":"true"}}"#, deleted));
    }

    #[test]
    fn tombstones_are_dropped_unless_kept() {
        let t = Record { topic: "db.public.customers".into(), key: Data::str("k"), value: Data::Null, ..Default::default() };
        assert_eq!(run(&[], &t), "dropped", "drop.tombstones defaults to true");
        assert_eq!(run(&[("drop.tombstones", "false")], &t), "unchanged");
        assert_eq!(run(&[("drop.tombstones", "false"), ("add.headers", "op,table")], &t), "tombstone [__op=d]");
        for (m, want) in [("drop", "dropped"), ("tombstone", "dropped"), ("rewrite", "dropped"), ("delete-to-tombstone", "dropped"), ("rewrite-with-tombstone", "unchanged")] {
            assert_eq!(run(&[("delete.tombstone.handling.mode", m), ("drop.tombstones", "false")], &t), want, "{}", m);
        }
    }

    #[test]
    fn truncates_and_non_envelopes() {
        assert_eq!(run(&[("delete.handling.mode", "none")], &event("null", "null", "t")), "dropped");
        let heartbeat = Data::json(br#"{"type":"struct","fields":[{"type":"string","optional":false,"field":"serverName"}],"optional":false,"name":"io.debezium.connector.common.Heartbeat"}"#, br#"{"serverName":"db"}"#);
        let r = Record { value: heartbeat, ..Default::default() };
        assert_eq!(run(&[], &r), "unchanged");
        let schemaless = Record { value: Data::json(b"", br#"{"before":null,"after":{"id":1},"op":"c"}"#), ..Default::default() };
        assert_eq!(run(&[], &schemaless), "unchanged");
    }

    #[test]
    fn add_fields_and_headers() {
        let r = event("null", ALICE, "c");
        let got = run(&[("add.fields", "op,table,lsn,source.ts_ms,ts_ms:event_ts,missing"), ("add.headers", "op,source.ts_ms,lsn"), ("add.headers.prefix", "dbz.")], &r);
        let schema = r#"{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"},{"type":"string","optional":true,"field":"__op"},{"type":"string","optional":true,"field":"__table"},{"type":"int64","optional":true,"field":"__lsn"},{"type":"int64","optional":true,"field":"__source_ts_ms"},{"type":"int64","optional":true,"field":"__event_ts"}],"optional":true,"name":"db.public.customers.Value"}"#;
        let payload = r#"{"id":1,"name":"alice","__op":"c","__table":"customers","__lsn":24023128,"__source_ts_ms":1700000000000,"__event_ts":1700000000123}"#;
        assert_eq!(got, format!("{} | {} [dbz.op=c] [dbz.source_ts_ms=1700000000000] [dbz.lsn=24023128]", schema, payload));
        // A rewritten delete has __deleted before the added fields; the schema is derived once.
        let mut t = smt(&[("delete.handling.mode", "rewrite"), ("add.fields", "op"), ("add.fields.prefix", "_")]);
        for _ in 0..2 {
            let d = event(ALICE, "null", "d");
            let got = show(&d, t.apply(&d));
            assert!(got.ends_with(r#"{"type":"string","optional":true,"field":"__deleted"},{"type":"string","optional":true,"field":"_op"}],"optional":true,"name":"db.public.customers.Value"} | {"id":1,"name":"alice","__deleted":"true","_op":"d"}"#), "{}", got);
        }
        assert_eq!(t.schemas.len(), 1);
    }

    #[test]
    fn bad_settings_are_named() {
        let cfg: Config = [("delete.tombstone.handling.mode".to_string(), "keep".to_string())].into_iter().collect();
        let e = ExtractNewRecordState::new().configure(&cfg).err().unwrap();
        assert!(e.message().contains("delete.tombstone.handling.mode"), "{}", e.message());
        assert_eq!(valid_field_list("op,a:b:c"), Err("Unexpected field name: a:b:c".to_string()));
        assert!(valid_delete_mode("rewrite").is_ok() && valid_delete_mode("x").is_err());
        // op renamed onto a field the row has is refused, as Kafka's SchemaBuilder refuses it.
        let mut t = ExtractNewRecordState::new();
        let cfg: Config = [("add.fields".to_string(), "op:name".to_string()), ("add.fields.prefix".to_string(), "".to_string())].into_iter().collect();
        t.configure(&cfg).unwrap();
        let r = event("null", ALICE, "c");
        assert_eq!(show(&r, t.apply(&r)), "error: Cannot create field because of field name duplication name");
    }
}

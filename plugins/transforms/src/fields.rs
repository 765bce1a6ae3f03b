//! InsertField, ReplaceField, MaskField, ValueToKey, ExtractField and HoistField.

use crate::common::*;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use wasmconnect::config::{split_list, ConfigDef, ConfigType, Importance};
use wasmconnect::connect::{self, Decimal, Field, Schema, Struct, Type, Value};
use wasmconnect::{Applied, Batch, Config, Data, Error, Keep, Outcome, Record, Result, Transformation};

pub fn insert_field_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("topic.field").doc("Field name for Kafka topic. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
        ConfigDef::new("partition.field").doc("Field name for Kafka partition. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
        ConfigDef::new("offset.field").doc("Field name for Kafka offset - only applicable to sink connectors.<br/>Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
        ConfigDef::new("timestamp.field").doc("Field name for record timestamp. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
        ConfigDef::new("static.field").doc("Field name for static data field. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
        ConfigDef::new("static.value").doc("Static field value, if field name configured."),
        replace_null_def(),
    ]
}

pub fn replace_field_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("exclude").typ(ConfigType::List).default("").doc("Fields to exclude. This takes precedence over the fields to include."),
        ConfigDef::new("include").typ(ConfigType::List).default("").doc("Fields to include. If specified, only these fields will be used."),
        ConfigDef::new("renames").typ(ConfigType::List).default("").doc("Field rename mappings.").validator(valid_renames),
        replace_null_def(),
    ]
}

pub fn mask_field_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("fields").typ(ConfigType::List).required().importance(Importance::High).doc("Names of fields to mask.").validator(list_non_empty),
        ConfigDef::new("replacement")
            .importance(Importance::Low)
            .doc("Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only).")
            .validator(non_empty_string),
        replace_null_def(),
    ]
}

pub fn value_to_key_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("fields").typ(ConfigType::List).required().importance(Importance::High).doc("Field names on the record value to extract as the record key.").validator(list_non_empty),
        replace_null_def(),
    ]
}

fn one_of_v1_v2(v: &str) -> std::result::Result<(), String> {
    if v.eq_ignore_ascii_case("V1") || v.eq_ignore_ascii_case("V2") {
        Ok(())
    } else {
        Err("String must be one of (case insensitive): V1, V2".to_string())
    }
}

pub fn extract_field_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("field").required().doc("Field name to extract."),
        ConfigDef::new("field.syntax.version").default("V1").importance(Importance::High).validator(one_of_v1_v2).doc(
            "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access the elements at the root level of the struct or map. If set to `V2`, the syntax will support accessing nested elements. To access nested elements, dotted notation is used.",
        ),
        replace_null_def(),
    ]
}

pub fn hoist_field_defs() -> Vec<ConfigDef> {
    vec![ConfigDef::new("field").required().doc("Field name for the single field that will be created in the resulting Struct or Map.")]
}

// ---- InsertField ----------------------------------------------------------------------------

#[derive(Clone)]
struct InsertSpec {
    name: String,
    optional: bool,
    /// The name as the start of a JSON member, "name":, for the fast path.
    member: Vec<u8>,
}

impl InsertSpec {
    fn new(name: &str, optional: bool) -> InsertSpec {
        let mut member = Vec::with_capacity(name.len() + 3);
        connect::append_json_string(&mut member, name.as_bytes());
        member.push(b':');
        InsertSpec { name: name.to_string(), optional, member }
    }
}

fn parse_insert_spec(v: Option<&String>) -> Option<InsertSpec> {
    let v = v?;
    if v.is_empty() {
        return None;
    }
    Some(if let Some(n) = v.strip_suffix('?') {
        InsertSpec::new(n, true)
    } else if let Some(n) = v.strip_suffix('!') {
        InsertSpec::new(n, false)
    } else {
        InsertSpec::new(v, true)
    })
}

pub struct InsertField {
    op: Operand,
    nulls: NullPolicy,
    specs: InsertSpecs,
    /// static.value as the value inserted: null when unset.
    static_value: Value,
    /// A set static.value as JSON, which does not depend on the record.
    static_json: Option<Vec<u8>>,
    /// With a static field and value the only fields inserted: what the fast path puts in place
    /// of every payload's closing brace, `,"field":"value"}`, written once (without its comma
    /// into an empty object). One copy per record: a guest pays a call for each push.
    static_member: Option<Vec<u8>>,
    cache: SchemaCache,
    /// The fast path's plan of the last schema a chain call's records borrowed.
    memo: Option<PlanMemo>,
    /// Unit tests: never take the textual fast path.
    slow: bool,
}

/// What `InsertField::fast_plan` makes of a schema's JSON: the updated schema, its JSON and how
/// many fields the original has.
type Plan = (Rc<Schema>, Rc<[u8]>, usize);

/// A plan by the `Keep::call` and the address and length of the schema bytes it is of: in one
/// chain call the records mostly borrow one schema (the one a HoistField before kept, or the
/// input's), and the same bytes need neither parsing nor comparing again.
struct PlanMemo {
    key: (u64, usize, usize),
    plan: Plan,
}

/// The fields InsertField inserts.
#[derive(Default)]
struct InsertSpecs {
    topic: Option<InsertSpec>,
    partition: Option<InsertSpec>,
    offset: Option<InsertSpec>,
    ts: Option<InsertSpec>,
    static_f: Option<InsertSpec>,
}

const INSERT_PURPOSE: &str = "field insertion";

impl InsertSpecs {
    fn updated_schema(&self, s: &Schema) -> Result<Schema> {
        if s.typ != Type::Struct {
            return Err(not_struct_schema(s, INSERT_PURPOSE));
        }
        let mut u = s.struct_basics();
        u.fields = s.fields.clone();
        let mut add = |spec: &Option<InsertSpec>, schema: Rc<Schema>| {
            if let Some(spec) = spec {
                u.fields.push(Field { name: spec.name.clone(), schema });
            }
        };
        let opt = |spec: &Option<InsertSpec>| spec.as_ref().map_or(false, |s| s.optional);
        add(&self.topic, Schema::primitive(Type::String, opt(&self.topic)));
        add(&self.partition, Schema::primitive(Type::Int32, opt(&self.partition)));
        add(&self.offset, Schema::primitive(Type::Int64, opt(&self.offset)));
        add(&self.ts, Schema::timestamp(opt(&self.ts)));
        add(&self.static_f, Schema::primitive(Type::String, opt(&self.static_f)));
        Ok(u)
    }
}

impl InsertField {
    pub fn new(key: bool) -> InsertField {
        InsertField { op: Operand { key }, nulls: NullPolicy::default(), specs: InsertSpecs::default(), static_value: Value::Null, static_json: None, static_member: None, cache: SchemaCache::default(), memo: None, slow: false }
    }

    /// The values to insert, in the order of the updated schema's new fields, each with its spec
    /// and, when it does not depend on the record, its JSON.
    fn each_value(&self, r: &Record, partition: &Value, timestamp: &Value, as_time: bool, mut f: impl FnMut(&InsertSpec, &Value, Option<&[u8]>) -> Result<()>) -> Result<()> {
        if let Some(s) = &self.specs.topic {
            f(s, &Value::String(r.topic.to_string()), None)?;
        }
        if let Some(s) = &self.specs.partition {
            f(s, partition, None)?;
        }
        if let Some(s) = &self.specs.offset {
            f(s, &Value::Int64(r.offset), None)?;
        }
        if let Some(s) = &self.specs.ts {
            match timestamp {
                Value::Int64(ms) if as_time => f(s, &Value::Time(*ms), None)?,
                v => f(s, v, None)?,
            }
        }
        if let Some(s) = &self.specs.static_f {
            f(s, &self.static_value, self.static_json.as_deref())?;
        }
        Ok(())
    }

    /// `each_value` collected.
    fn values(&self, r: &Record, partition: &Value, timestamp: &Value, as_time: bool) -> Vec<(String, Value)> {
        let mut vals = Vec::with_capacity(5);
        let _ = self.each_value(r, partition, timestamp, as_time, |spec, v, _| {
            vals.push((spec.name.clone(), v.clone()));
            Ok(())
        });
        vals
    }

    /// The updated schema, its JSON and how many fields the original has, when the fields can be
    /// inserted into the payload as text: the value is a JSON object of a struct schema and nulls
    /// need no defaults. It saves decoding and encoding every field of every record, most of
    /// InsertField's cost; the result is what the struct path writes, up to the order and spacing
    /// of the original fields. `None`: take the struct path. `keep`: the call whose records
    /// borrow a `Cow::Borrowed` schema for the whole call, so that its plan can be remembered.
    fn fast_plan(&mut self, d: &Data, keep: Option<&Keep>) -> Result<Option<Plan>> {
        let (schema, payload) = match d {
            Data::Json { schema, payload } if !schema.is_empty() && !self.nulls.keep => (schema, payload),
            _ => return Ok(None),
        };
        let p = trim(payload);
        if p.len() < 2 || p[0] != b'{' || p[p.len() - 1] != b'}' {
            return Ok(None);
        }
        let key = match (schema, keep) {
            (Cow::Borrowed(b), Some(k)) => Some(k.place(b)),
            _ => None,
        };
        if let (Some(key), Some(m)) = (key, &self.memo) {
            if m.key == key {
                return Ok(Some(m.plan.clone()));
            }
        }
        let s = match connect::parse_schema(schema) {
            Ok(Some(s)) if s.typ == Type::Struct => s,
            _ => return Ok(None),
        };
        let us = self.cache.get(&s, |s| self.specs.updated_schema(s))?;
        let raw = us.json().map_err(Error::new)?;
        let plan = (us, raw, s.fields.len());
        if let Some(key) = key {
            self.memo = Some(PlanMemo { key, plan: plan.clone() });
        }
        Ok(Some(plan))
    }

    /// Appends the inserted fields to `out`, the text of a JSON object without its closing brace
    /// (`empty`: without members), and closes it.
    fn append_fields(&self, out: &mut Vec<u8>, empty: bool, us: &Schema, fields: usize, r: &Record, partition: &Value, timestamp: &Value) -> Result<()> {
        if let Some(m) = &self.static_member {
            out.extend_from_slice(if empty { &m[1..] } else { m });
            return Ok(());
        }
        let mut i = 0;
        self.each_value(r, partition, timestamp, true, |spec, v, json| {
            if !empty || i > 0 {
                out.push(b',');
            }
            let f = &us.fields[fields + i];
            i += 1;
            out.extend_from_slice(&spec.member);
            match json {
                Some(j) => {
                    out.extend_from_slice(j);
                    Ok(())
                }
                None => connect::append_field_json(out, &f.name, &f.schema, v).map_err(Error::new),
            }
        })?;
        out.push(b'}');
        Ok(())
    }

    /// The fast path of `apply` (see `fast_plan`): the record with the fields inserted as text.
    fn append_fast<'a>(&mut self, r: &Record<'a>, partition: &Value, timestamp: &Value) -> Result<Option<Record<'a>>> {
        let (us, raw, fields) = match self.fast_plan(self.op.get(r), None)? {
            Some(plan) => plan,
            None => return Ok(None),
        };
        let p = match self.op.get(r) {
            Data::Json { payload, .. } => trim(payload),
            _ => return Ok(None),
        };
        let mut out = Vec::with_capacity(p.len() + 16 * fields + 16);
        out.extend_from_slice(&p[..p.len() - 1]);
        let empty = trim(&p[1..p.len() - 1]).is_empty();
        self.append_fields(&mut out, empty, &us, fields, r, partition, timestamp)?;
        Ok(Some(self.op.with(r, Data::Json { schema: Cow::Owned(raw.to_vec()), payload: Cow::Owned(out) })))
    }

    /// The checks `apply` makes before it inserts anything; `Some`: its outcome without inserting.
    fn precheck<'a>(&self, r: &Record) -> Result<Option<Outcome<'a>>> {
        if self.op.is_null(r) {
            return Ok(Some(Outcome::Unchanged));
        }
        if self.specs.offset.is_some() && !is_sink(r) {
            return Err(Error::new(format!("Only SinkRecord supported for [{}], found: org.apache.kafka.connect.source.SourceRecord", INSERT_PURPOSE)));
        }
        Ok(None)
    }

    /// The most common case of a chain, without the general path's checks: a static field and
    /// value the only fields inserted, into an object payload the record owns (a HoistField
    /// before wrote it) whose schema is the one the memo of this call's plan is of. Then the
    /// payload only gets the precomputed member appended and the plan's schema; false: anything
    /// else, left to the general path.
    fn append_static_member<'a>(&self, r: &mut Record<'a>, keep: &'a Keep) -> bool {
        let target = match self.static_target(keep) {
            Some(t) => t,
            None => return false,
        };
        let member = self.static_member.as_deref().expect("static_target checked it");
        if !append_member(self.op.get_mut(r), member, target) {
            return false;
        }
        // A valid member of its field appended: the payload is as vouched for as it was.
        keep.vouch_value(keep.value_vouched());
        true
    }

    /// What append_static_member needs of this call's plan: the place of the schema it is of
    /// and the JSON of the schema the records get; None when the fast path does not apply.
    fn static_target<'a>(&self, keep: &'a Keep) -> Option<StaticTarget<'a>> {
        match (&self.static_member, &self.memo) {
            (Some(_), Some(memo)) if !self.slow && !self.nulls.keep => Some(StaticTarget { of: memo.key, schema: keep.bytes(&memo.plan.1), keep }),
            _ => None,
        }
    }

    fn is_empty(&self) -> bool {
        let s = &self.specs;
        s.topic.is_none() && s.partition.is_none() && s.offset.is_none() && s.ts.is_none() && s.static_f.is_none()
    }
}

/// The schema a payload must have for InsertField's static member to be appended to it (a place
/// of this call, Keep::place), and the one it then gets.
#[derive(Clone, Copy)]
struct StaticTarget<'a> {
    of: (u64, usize, usize),
    schema: &'a [u8],
    keep: &'a Keep,
}

/// Appends `member` to `d` in place of its closing brace if `d` is an object payload its record
/// owns, of the target's schema, and gives it the target's new schema; false: anything else.
#[inline(always)]
fn append_member<'a>(d: &mut Data<'a>, member: &[u8], t: StaticTarget<'a>) -> bool {
    let (schema, p) = match d {
        Data::Json { schema: Cow::Borrowed(s), payload: Cow::Owned(p) } if p.first() == Some(&b'{') && p.last() == Some(&b'}') => (s, p),
        _ => return false,
    };
    if t.of != t.keep.place(schema) {
        return false;
    }
    p.pop();
    let empty = p[1..].iter().all(|&c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
    p.extend_from_slice(if empty { &member[1..] } else { member });
    *schema = t.schema;
    true
}

/// The partition and timestamp of a record as InsertField inserts them.
fn partition_and_timestamp(r: &Record) -> (Value, Value) {
    let partition = if r.partition >= 0 { Value::Int32(r.partition) } else { Value::Null };
    let timestamp = if r.timestamp >= 0 { Value::Int64(r.timestamp) } else { Value::Null };
    (partition, timestamp)
}

pub fn trim(b: &[u8]) -> &[u8] {
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |i| i + 1);
    &b[start..end]
}

impl Transformation for InsertField {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        self.specs.topic = parse_insert_spec(cfg.get("topic.field"));
        self.specs.partition = parse_insert_spec(cfg.get("partition.field"));
        self.specs.offset = parse_insert_spec(cfg.get("offset.field"));
        self.specs.ts = parse_insert_spec(cfg.get("timestamp.field"));
        self.specs.static_f = parse_insert_spec(cfg.get("static.field"));
        self.static_value = cfg.get("static.value").cloned().map(Value::String).unwrap_or(Value::Null);
        // A string of a string field: what append_field_json writes for it, whatever the record.
        self.static_json = cfg.get("static.value").map(|v| {
            let mut j = Vec::with_capacity(v.len() + 2);
            connect::append_json_string(&mut j, v.as_bytes());
            j
        });
        let s = &self.specs;
        let only_static = s.topic.is_none() && s.partition.is_none() && s.offset.is_none() && s.ts.is_none();
        self.static_member = match (&s.static_f, &self.static_json) {
            (Some(spec), Some(json)) if only_static => Some([&b","[..], &spec.member[..], json, b"}"].concat()),
            _ => None,
        };
        Ok(()) // like Kafka's, an InsertField without fields inserts nothing
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        if let Some(o) = self.precheck(r)? {
            return Ok(o);
        }
        let (partition, timestamp) = partition_and_timestamp(r);
        if !self.slow {
            if let Some(out) = self.append_fast(r, &partition, &timestamp)? {
                return Ok(outcome(r, out));
            }
        }
        let (s, v) = self.nulls.decode(self.op.get(r))?;
        let s = match s {
            None => {
                let mut m = require_map(v, INSERT_PURPOSE)?;
                for (name, v) in self.values(r, &partition, &timestamp, false) {
                    m.insert(name, v);
                }
                return Ok(outcome(r, self.op.encode(r, None, &Value::Map(m))?));
            }
            Some(s) => s,
        };
        let st = require_struct(v, INSERT_PURPOSE)?;
        let us = self.cache.get(&s, |s| self.specs.updated_schema(s))?;
        let mut values = st.values;
        for (_, v) in self.values(r, &partition, &timestamp, true) {
            values.push(v);
        }
        let out = Struct { schema: us.clone(), values };
        Ok(outcome(r, self.op.encode(r, Some(&us), &Value::Struct(out))?))
    }

    /// In a chain, a payload the record owns (the one a HoistField before wrote, say) gets the
    /// fields appended where it is, and its schema is the updated schema in `keep`, shared by the
    /// records that have it; anything else goes through `apply`.
    fn apply_mut<'a>(&mut self, r: &mut Record<'a>, keep: &'a Keep) -> Result<Applied> {
        if self.append_static_member(r, keep) {
            return Ok(Applied::Changed);
        }
        let owned = matches!(self.op.get(r), Data::Json { payload: Cow::Owned(p), .. } if p.first() == Some(&b'{'));
        if self.slow || !owned || self.is_empty() {
            return apply_over(self, r);
        }
        if let Some(o) = self.precheck(r)? {
            return Ok(o.write_over(r));
        }
        let (us, raw, fields) = match self.fast_plan(self.op.get(r), Some(keep))? {
            Some(plan) => plan,
            None => return apply_over(self, r),
        };
        // Taken out while the fields are written, which read the rest of the record.
        let mut d = std::mem::take(self.op.get_mut(r));
        let res = match &mut d {
            Data::Json { schema, payload: Cow::Owned(p) } => {
                let end = p.iter().rposition(|&c| c == b'}').expect("checked by fast_plan");
                let empty = trim(&p[1..end]).is_empty();
                p.truncate(end);
                *schema = Cow::Borrowed(keep.bytes(&raw));
                if self.static_member.is_some() {
                    // Nothing of the record goes in: no partition or timestamp values to make.
                    self.append_fields(p, empty, &us, fields, r, &Value::Null, &Value::Null)
                } else {
                    let (partition, timestamp) = partition_and_timestamp(r);
                    self.append_fields(p, empty, &us, fields, r, &partition, &timestamp)
                }
            }
            _ => unreachable!("checked above"),
        };
        *self.op.get_mut(r) = d;
        // The members appended are valid JSON of their fields: the payload is as vouched for
        // as it was (and a key's change leaves the value as it was).
        keep.vouch_value(keep.value_vouched());
        res.map(|()| Applied::Changed)
    }

    /// apply_mut, with the lookups of the static member's fast path made once while the plan
    /// they are of stays (the first record of a call makes it, on the general path).
    fn apply_batch<'a>(&mut self, b: &mut Batch<'_, 'a>, keep: &'a Keep) -> Result<()> {
        let mut target = self.static_target(keep);
        for i in 0..b.len() {
            if !b.applies(i) {
                continue;
            }
            if let (Some(t), Some(member)) = (target, self.static_member.as_deref()) {
                if append_member(self.op.get_mut(b.record(i)), member, t) {
                    let vouched = b.vouched(i);
                    b.changed(i, vouched);
                    continue;
                }
            }
            b.apply_one(i, keep, |r| self.apply_mut(r, keep))?;
            target = self.static_target(keep);
        }
        Ok(())
    }
}

// ---- ReplaceField ---------------------------------------------------------------------------

fn valid_renames(v: &str) -> std::result::Result<(), String> {
    for m in split_list(v) {
        if m.split(':').count() != 2 {
            return Err(format!("Invalid rename mapping: {}", m));
        }
    }
    Ok(())
}

pub struct ReplaceField {
    op: Operand,
    nulls: NullPolicy,
    exclude: HashSet<String>,
    include: HashSet<String>,
    renames: BTreeMap<String, String>,
    cache: SchemaCache,
}

const REPLACE_PURPOSE: &str = "field replacement";

impl ReplaceField {
    pub fn new(key: bool) -> ReplaceField {
        ReplaceField { op: Operand { key }, nulls: NullPolicy::default(), exclude: HashSet::new(), include: HashSet::new(), renames: BTreeMap::new(), cache: SchemaCache::default() }
    }

    fn filter(&self, name: &str) -> bool {
        !self.exclude.contains(name) && (self.include.is_empty() || self.include.contains(name))
    }

    fn renamed(&self, name: &str) -> String {
        self.renames.get(name).cloned().unwrap_or_else(|| name.to_string())
    }
}

impl Transformation for ReplaceField {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        self.exclude = list(cfg, "exclude").into_iter().collect();
        self.include = list(cfg, "include").into_iter().collect();
        for m in list(cfg, "renames") {
            let (old, new) = m.split_once(':').unwrap_or((&m, ""));
            self.renames.insert(old.to_string(), new.to_string());
        }
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        if self.op.is_null(r) {
            return Ok(Outcome::Unchanged);
        }
        let (s, v) = self.nulls.decode(self.op.get(r))?;
        let s = match s {
            None => {
                let m = require_map(v, REPLACE_PURPOSE)?;
                let out: BTreeMap<String, Value> = m.into_iter().filter(|(k, _)| self.filter(k)).map(|(k, v)| (self.renamed(&k), v)).collect();
                return Ok(outcome(r, self.op.encode(r, None, &Value::Map(out))?));
            }
            Some(s) => s,
        };
        let st = require_struct(v, REPLACE_PURPOSE)?;
        let me = &*self;
        let mut fields = Vec::new();
        for f in &s.fields {
            if me.filter(&f.name) {
                fields.push(Field { name: me.renamed(&f.name), schema: f.schema.clone() });
            }
        }
        let keep: Vec<bool> = s.fields.iter().map(|f| me.filter(&f.name)).collect();
        let us = self.cache.get(&s, |s| {
            let mut u = s.struct_basics();
            u.fields = fields;
            Ok(u)
        })?;
        let values = st.values.into_iter().zip(keep).filter(|(_, k)| *k).map(|(v, _)| v).collect();
        Ok(outcome(r, self.op.encode(r, Some(&us), &Value::Struct(Struct { schema: us.clone(), values }))?))
    }
}

// ---- MaskField ------------------------------------------------------------------------------

pub struct MaskField {
    op: Operand,
    nulls: NullPolicy,
    fields: HashSet<String>,
    order: Vec<String>,
    replacement: Option<String>,
    /// Unit tests: never take the textual fast path.
    slow: bool,
}

const MASK_PURPOSE: &str = "mask fields";

impl MaskField {
    pub fn new(key: bool) -> MaskField {
        MaskField { op: Operand { key }, nulls: NullPolicy::default(), fields: HashSet::new(), order: Vec::new(), replacement: None, slow: false }
    }

    /// Masks the fields of a struct payload as text when it can: no replacement, a payload that
    /// has each field of its struct schema exactly once, and masked fields of types whose zero
    /// value is plain JSON. `None`: take the struct path, which reports errors as Kafka does.
    fn mask_fast<'a>(&self, r: &Record<'a>) -> Option<Outcome<'a>> {
        let (schema, payload) = match self.op.get(r) {
            Data::Json { schema, payload } if !schema.is_empty() && self.replacement.is_none() => (schema, payload),
            _ => return None,
        };
        let s = match connect::parse_schema(schema) {
            Ok(Some(s)) if s.typ == Type::Struct && s.fields.len() <= 64 => s,
            _ => return None,
        };
        let p: &[u8] = payload;
        let mut out: Vec<u8> = Vec::new();
        let (mut copied, mut seen, mut n) = (0usize, 0u64, 0usize);
        let res = connect::scan_object(p, |k, start, end| {
            let i = s.fields.iter().position(|f| f.name.as_bytes() == k).ok_or_else(String::new)?;
            if seen & (1 << i) != 0 {
                return Err(String::new());
            }
            seen |= 1 << i;
            n += 1;
            let f = &s.fields[i];
            let is_null = &p[start..end] == b"null";
            let masked = self.fields.contains(&f.name);
            if is_null && f.schema.default.is_some() && !masked {
                return Err(String::new()); // the struct path writes the default
            }
            if !masked || (is_null && f.schema.default.is_none()) {
                return Ok(());
            }
            let zero = zero_json(&f.schema).ok_or_else(String::new)?;
            if copied == 0 {
                out.reserve(p.len() + 8);
            }
            out.extend_from_slice(&p[copied..start]);
            out.extend_from_slice(zero.as_bytes());
            copied = end;
            Ok(())
        });
        if res.is_err() || n != s.fields.len() {
            return None;
        }
        if copied == 0 {
            return Some(Outcome::Unchanged);
        }
        out.extend_from_slice(&p[copied..]);
        Some(Outcome::Record(self.op.with(r, Data::Json { schema: schema.clone(), payload: Cow::Owned(out) })))
    }

    fn masked(&self, v: &Value) -> Result<Value> {
        if v.is_null() {
            return Ok(Value::Null);
        }
        let rep = match &self.replacement {
            None => {
                return Ok(match v {
                    Value::Bool(_) => Value::Bool(false),
                    Value::Int8(_) => Value::Int8(0),
                    Value::Int16(_) => Value::Int16(0),
                    Value::Int32(_) => Value::Int32(0),
                    Value::Int64(_) => Value::Int64(0),
                    Value::Float32(_) => Value::Float32(0.0),
                    Value::Float64(_) => Value::Float64(0.0),
                    Value::String(_) => Value::String(String::new()),
                    Value::Decimal(_) => Value::Decimal(Decimal { unscaled: 0, scale: 0 }),
                    Value::Time(_) => Value::Time(0),
                    Value::Array(_) => Value::Array(Vec::new()),
                    Value::Map(_) => Value::Map(BTreeMap::new()),
                    Value::Entries(_) => Value::Entries(Vec::new()),
                    _ => return Err(Error::new(format!("Cannot mask value of type: {}", v.java_class()))),
                })
            }
            Some(rep) => rep,
        };
        let num_err = || Error::new(format!("Unable to convert {} (class java.lang.String) to number", rep));
        let t = rep.trim();
        Ok(match v {
            Value::String(_) => Value::String(rep.clone()),
            Value::Int8(_) | Value::Int16(_) | Value::Int32(_) | Value::Int64(_) => {
                let n = match t.parse::<i64>() {
                    Ok(n) => n,
                    Err(_) => t.parse::<f64>().map_err(|_| num_err())? as i64,
                };
                match v {
                    Value::Int8(_) => Value::Int8(n as i8),
                    Value::Int16(_) => Value::Int16(n as i16),
                    Value::Int32(_) => Value::Int32(n as i32),
                    _ => Value::Int64(n),
                }
            }
            Value::Float32(_) => Value::Float32(t.parse::<f64>().map_err(|_| num_err())? as f32),
            Value::Float64(_) => Value::Float64(t.parse::<f64>().map_err(|_| num_err())?),
            Value::Decimal(_) => Value::Decimal(Decimal::parse(rep).ok_or_else(num_err)?),
            _ => return Err(Error::new(format!("Cannot mask value of type {} with custom replacement.", v.java_class()))),
        })
    }
}

/// The JSON of what MaskField puts in place of a value of schema s, or `None` when the struct path
/// must decide.
fn zero_json(s: &Schema) -> Option<&'static str> {
    Some(match s.typ {
        Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 => "0", // Date, Time and Timestamp: new Date(0)
        Type::Float32 | Type::Float64 => "0.0",
        Type::Boolean => "false",
        Type::String => "\"\"",
        Type::Array => "[]",
        Type::Map => {
            if s.keys.as_ref().map_or(false, |k| k.typ == Type::String) {
                "{}"
            } else {
                "[]"
            }
        }
        _ => return None,
    })
}

impl Transformation for MaskField {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        self.order = list(cfg, "fields");
        self.fields = self.order.iter().cloned().collect();
        self.replacement = cfg.get("replacement").cloned();
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        if self.op.is_null(r) {
            return Ok(Outcome::Unchanged);
        }
        if !self.nulls.keep && !self.slow {
            if let Some(o) = self.mask_fast(r) {
                return Ok(o);
            }
        }
        let (s, v) = self.nulls.decode(self.op.get(r))?;
        let s = match s {
            None => {
                let mut m = require_map(v, MASK_PURPOSE)?;
                for f in &self.order {
                    let mv = self.masked(m.get(f).unwrap_or(&Value::Null))?;
                    m.insert(f.clone(), mv);
                }
                return Ok(outcome(r, self.op.encode(r, None, &Value::Map(m))?));
            }
            Some(s) => s,
        };
        let mut st = require_struct(v, MASK_PURPOSE)?;
        for (i, f) in s.fields.iter().enumerate() {
            if self.fields.contains(&f.name) {
                st.values[i] = self.masked(&st.values[i])?;
            }
        }
        Ok(outcome(r, self.op.encode(r, Some(&s), &Value::Struct(st))?))
    }
}

// ---- ValueToKey -----------------------------------------------------------------------------

pub struct ValueToKey {
    nulls: NullPolicy,
    fields: Vec<String>,
    cache: SchemaCache,
}

const VALUE_TO_KEY_PURPOSE: &str = "copying fields from value to key";

impl ValueToKey {
    pub fn new() -> ValueToKey {
        ValueToKey { nulls: NullPolicy::default(), fields: Vec::new(), cache: SchemaCache::default() }
    }
}

impl Transformation for ValueToKey {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        self.fields = list(cfg, "fields");
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        let key = Operand { key: true };
        let (s, v) = self.nulls.decode(&r.value)?;
        let s = match s {
            None => {
                let m = require_map(v, VALUE_TO_KEY_PURPOSE)?;
                let k: BTreeMap<String, Value> = self.fields.iter().map(|f| (f.clone(), m.get(f).cloned().unwrap_or(Value::Null))).collect();
                return Ok(outcome(r, key.encode(r, None, &Value::Map(k))?));
            }
            Some(s) => s,
        };
        let st = require_struct(v, VALUE_TO_KEY_PURPOSE)?;
        let fields = &self.fields;
        let ks = self.cache.get(&s, |s| {
            let mut k = Schema::new(Type::Struct);
            for f in fields {
                let vf = s.field(f).ok_or_else(|| Error::new(format!("Field does not exist: {}", f)))?;
                k.fields.push(Field { name: f.clone(), schema: vf.schema.clone() });
            }
            Ok(k)
        })?;
        let values = self.fields.iter().map(|f| st.get(f).cloned().unwrap_or(Value::Null)).collect();
        Ok(outcome(r, key.encode(r, Some(&ks), &Value::Struct(Struct { schema: ks.clone(), values }))?))
    }
}

// ---- ExtractField ---------------------------------------------------------------------------

pub struct ExtractField {
    op: Operand,
    nulls: NullPolicy,
    path: Vec<String>,
}

const EXTRACT_PURPOSE: &str = "field extraction";

impl ExtractField {
    pub fn new(key: bool) -> ExtractField {
        ExtractField { op: Operand { key }, nulls: NullPolicy::default(), path: Vec::new() }
    }
}

impl Transformation for ExtractField {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.nulls = NullPolicy::configure(cfg)?;
        let f = get(cfg, "field");
        self.path = if cfg.get("field.syntax.version").map_or(false, |v| v.eq_ignore_ascii_case("V2")) { f.split('.').map(str::to_string).collect() } else { vec![f.to_string()] };
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        let (s, mut v) = self.nulls.decode(self.op.get(r))?;
        let mut s = match s {
            None => {
                for p in &self.path {
                    v = match v {
                        Value::Null => break,
                        Value::Map(mut m) => m.remove(p).unwrap_or(Value::Null),
                        v => return Err(Error::new(format!("Only Map objects supported in absence of schema for [{}], found: {}", EXTRACT_PURPOSE, v.class_name()))),
                    };
                }
                return Ok(outcome(r, self.op.encode(r, None, &v)?));
            }
            Some(s) => s,
        };
        for p in &self.path {
            let st = match v {
                Value::Null => None,
                Value::Struct(st) => Some(st),
                v => return Err(Error::new(format!("Only Struct objects supported for [{}], found: {}", EXTRACT_PURPOSE, v.class_name()))),
            };
            if s.typ != Type::Struct {
                return Err(not_struct_schema(&s, EXTRACT_PURPOSE));
            }
            let i = s.field_index(p).ok_or_else(|| Error::new(format!("Unknown field: {}", self.path.join("."))).with_class("java.lang.IllegalArgumentException"))?;
            let fs = s.fields[i].schema.clone();
            v = match st {
                None => Value::Null,
                Some(mut st) => std::mem::take(&mut st.values[i]),
            };
            s = fs;
        }
        Ok(outcome(r, self.op.encode(r, Some(&s), &v)?))
    }
}

// ---- HoistField -----------------------------------------------------------------------------

pub struct HoistField {
    op: Operand,
    field: String,
    /// {"<field>": , how a hoisted string's payload starts.
    prefix: Vec<u8>,
    cache: SchemaCache,
    /// The struct schema of a hoisted string and its JSON.
    of_string: Option<Rc<[u8]>>,
}

impl HoistField {
    pub fn new(key: bool) -> HoistField {
        HoistField { op: Operand { key }, field: String::new(), prefix: Vec::new(), cache: SchemaCache::default(), of_string: None }
    }

    fn schema_for(&mut self, s: &Rc<Schema>) -> Rc<Schema> {
        let field = self.field.clone();
        let r: Result<Rc<Schema>> = self.cache.get(s, |_| {
            let mut u = Schema::new(Type::Struct);
            u.fields.push(Field { name: field, schema: s.clone() });
            Ok(u)
        });
        r.unwrap_or_else(|_| s.clone())
    }
}

impl HoistField {
    /// The struct schema of a hoisted string, as JSON.
    fn string_schema(&mut self) -> Result<&Rc<[u8]>> {
        if self.of_string.is_none() {
            let raw = self.schema_for(&Schema::primitive(Type::String, false)).json().map_err(Error::new)?;
            self.of_string = Some(raw);
        }
        Ok(self.of_string.as_ref().expect("set above"))
    }

    /// The payload {"<field>":"<text>"} of a hoisted string. It has room for a field or two more,
    /// which an InsertField after it in a chain appends in place.
    fn hoist_payload(&self, text: &[u8]) -> Vec<u8> {
        let mut payload = wasmconnect::keep::buffer(self.prefix.len() + text.len() + 3 + HOIST_ROOM);
        payload.extend_from_slice(&self.prefix);
        connect::append_json_string(&mut payload, text);
        payload.push(b'}');
        payload
    }
}

/// What a hoisted string's payload has spare: enough for a short field or two that an InsertField
/// after a HoistField appends to it.
const HOIST_ROOM: usize = 64;

impl Transformation for HoistField {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.field = get(cfg, "field").to_string();
        self.prefix = vec![b'{'];
        connect::append_json_string(&mut self.prefix, self.field.as_bytes());
        self.prefix.push(b':');
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        // A string (FileStreamSource's lines) is hoisted as text: {"field":"<the line>"}.
        if let Data::String(text) = self.op.get(r) {
            let schema = self.string_schema()?.to_vec();
            let d = Data::Json { schema: Cow::Owned(schema), payload: Cow::Owned(self.hoist_payload(text)) };
            return Ok(Outcome::Record(self.op.with(r, d)));
        }
        let (s, v) = decode(self.op.get(r))?;
        let s = match s {
            None => {
                let mut m = BTreeMap::new();
                m.insert(self.field.clone(), v);
                return Ok(outcome(r, self.op.encode(r, None, &Value::Map(m))?));
            }
            Some(s) => s,
        };
        let us = self.schema_for(&s);
        Ok(outcome(r, self.op.encode(r, Some(&us), &Value::Struct(Struct { schema: us.clone(), values: vec![v] }))?))
    }

    /// A string is hoisted where it is, without a copy of the rest of the record; its schema is
    /// kept once for the batch, whose hoisted strings all borrow it. Anything else goes the way of
    /// `apply`.
    fn apply_batch<'a>(&mut self, b: &mut Batch<'_, 'a>, keep: &'a Keep) -> Result<()> {
        let mut schema: Option<&'a [u8]> = None;
        for i in 0..b.len() {
            if !b.applies(i) {
                continue;
            }
            let d = self.op.get_mut(b.record(i));
            let text = match d {
                Data::String(text) => text,
                _ => {
                    b.apply_one(i, keep, |r| apply_over(self, r))?;
                    continue;
                }
            };
            let s = match schema {
                Some(s) => s,
                None => match self.string_schema() {
                    Ok(raw) => *schema.insert(keep.bytes(raw)),
                    Err(e) => {
                        b.fail(i, e)?;
                        continue;
                    }
                },
            };
            let payload = self.hoist_payload(text);
            *d = Data::Json { schema: Cow::Borrowed(s), payload: Cow::Owned(payload) };
            let vouched = !self.op.key || b.vouched(i);
            b.changed(i, vouched);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmconnect::json;

    const TS: &str = r#""name":"org.apache.kafka.connect.data.Timestamp","version":1"#;

    fn cfg(pairs: &[(&str, &str)]) -> Config {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn sink(schema: &str, payload: &str, ts: i64) -> Record<'static> {
        let d = Data::Json { schema: Cow::Owned(schema.as_bytes().to_vec()), payload: Cow::Owned(payload.as_bytes().to_vec()) };
        Record { topic: "test".into(), partition: 0, offset: 42, timestamp: ts, value: d, ..Default::default() }
    }

    /// The outcome's value with numbers as floats, so that 1 and 1.0 compare equal, or the error.
    fn loose(r: &Record, o: Result<Outcome>) -> String {
        let v = match o {
            Err(e) => return format!("error: {}", e.message()),
            Ok(Outcome::Drop) => return "dropped".to_string(),
            Ok(Outcome::Unchanged) => r.value.clone(),
            Ok(Outcome::Record(n)) => n.value,
        };
        match v {
            Data::Json { schema, payload } => {
                fn floats(v: json::Value) -> json::Value {
                    match v {
                        json::Value::Int(n) => json::Value::Float(n as f64),
                        json::Value::Array(a) => json::Value::Array(a.into_iter().map(floats).collect()),
                        json::Value::Object(m) => json::Value::Object(m.into_iter().map(|(k, v)| (k, floats(v))).collect()),
                        v => v,
                    }
                }
                let p = json::parse(&payload).map(floats).map(|v| v.to_json()).unwrap_or_else(|e| format!("invalid JSON {}", e));
                format!("json schema={} payload={}", String::from_utf8_lossy(&schema), p)
            }
            d => format!("{:?}", d),
        }
    }

    /// Inserting fields into the payload text gives what decoding and encoding the struct gives.
    #[test]
    fn insert_field_fast_path() {
        let schema = r#"{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"s"}],"optional":true,"name":"x"}"#;
        let empty = r#"{"type":"struct","fields":[],"optional":false}"#;
        let recs = [
            sink(schema, r#"{"id":1,"s":"a\"b"}"#, 1483425001864),
            sink(schema, r#" { "id" : 2 , "s" : null } "#, -1),
            sink(empty, "{}", 5),
            sink(empty, "{ }", 5),
        ];
        let cfgs = [
            cfg(&[("topic.field", "t!"), ("partition.field", "p"), ("offset.field", "o?"), ("timestamp.field", "ts"), ("static.field", "st"), ("static.value", "v\u{e9}")]),
            cfg(&[("static.field", "st!")]),
            cfg(&[("timestamp.field", "ts!")]),
        ];
        for c in &cfgs {
            for r in &recs {
                let mut outs = Vec::new();
                for slow in [false, true] {
                    let mut t = InsertField::new(false);
                    t.configure(c).unwrap();
                    t.slow = slow;
                    outs.push(loose(r, t.apply(r)));
                }
                assert_eq!(outs[0], outs[1], "{:?} on {:?}", c, r.value);
            }
        }
    }

    /// In a chain, records that borrow different schemas in one call, and the same bytes in the
    /// next, each get the plan of their own schema (InsertField's memo is by call and address).
    #[test]
    fn insert_field_in_place_per_schema() {
        let a = br#"{"type":"struct","fields":[{"type":"string","optional":false,"field":"line"}],"optional":false}"#;
        let b = br#"{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false}"#;
        let mut t = InsertField::new(false);
        t.configure(&cfg(&[("static.field", "origin"), ("static.value", "bench")])).unwrap();
        let mut check = |schema: &[u8], payload: &str, keep: &Keep| {
            let mut r = Record { topic: "t".into(), partition: -1, offset: -1, timestamp: -1, ..Default::default() };
            r.value = Data::Json { schema: Cow::Borrowed(schema), payload: Cow::Owned(payload.as_bytes().to_vec()) };
            let want = loose(&r, t.apply(&r));
            let mut r2 = r.clone();
            assert!(matches!(t.apply_mut(&mut r2, keep), Ok(Applied::Changed)));
            assert_eq!(loose(&r2, Ok(Outcome::Unchanged)), want);
        };
        let keep = Keep::new();
        for (schema, payload) in [(&a[..], r#"{"line":"x"}"#), (&b[..], r#"{"id":1}"#), (&a[..], r#"{"line":"y"}"#)] {
            check(schema, payload, &keep);
        }
        check(&b[..], r#"{"id":2}"#, &Keep::new());
    }

    /// Masking fields in the payload text gives what decoding and encoding the struct gives.
    #[test]
    fn mask_field_fast_path() {
        let schema = format!(
            "{}{}{}",
            r#"{"type":"struct","fields":[{"type":"int32","optional":false,"field":"i"},{"type":"double","optional":true,"field":"d"},{"type":"string","optional":true,"default":"dflt","field":"s"},{"type":"boolean","optional":false,"field":"b"},{"type":"int64","optional":true,"#,
            TS,
            r#","field":"ts"},{"type":"array","items":{"type":"int32","optional":false},"optional":false,"field":"a"},{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"int32","optional":false},"optional":true,"field":"m"},{"type":"bytes","optional":true,"field":"by"},{"type":"struct","fields":[],"optional":true,"field":"st"}],"optional":false}"#
        );
        let payloads = [
            r#"{"i":1,"d":2.5,"s":"x","b":true,"ts":1483425001864,"a":[1,2],"m":[[1,2]],"by":"AQ==","st":{}}"#,
            r#" { "i" : 1 , "d" : null , "s" : null , "b" : false , "ts" : null , "a" : [ ] , "m" : null , "by" : null , "st" : null } "#,
            r#"{"i":1,"b":true,"a":[]}"#,
            r#"{"i":1,"b":true,"a":[],"extra":1}"#,
            r#"{"i":1,"i":2,"b":true,"a":[]}"#,
            r#"{"i":1,"d":1,"s":"x","b":true,"ts":1,"a":[],"m":[],"by":"","st":{}}"#,
        ];
        for fields in ["i,d,s,b,ts,a,m", "s", "i", "by", "st", "nope"] {
            for p in payloads {
                let r = sink(&schema, p, -1);
                let mut outs = Vec::new();
                for slow in [false, true] {
                    let mut t = MaskField::new(false);
                    t.configure(&cfg(&[("fields", fields)])).unwrap();
                    t.slow = slow;
                    outs.push(loose(&r, t.apply(&r)));
                }
                assert_eq!(outs[0], outs[1], "fields {} on {}", fields, p);
            }
        }
    }
}

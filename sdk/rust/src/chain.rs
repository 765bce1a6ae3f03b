//! TRANSFORM_CHAIN (sdk/ABI.md §4, §5.8): a connector's whole transform chain, each
//! transformation with the predicate that selects its records, applied to a batch in one call.
//! The records stay in the guest between the steps: the batch crosses the boundary once each way
//! instead of once per step, and a record no step changes is never encoded again. The semantics
//! are those of the host running the steps one TRANSFORM (and TEST) at a time: a step sees the
//! output of the one before, a record its predicate fails on is failed and leaves the chain, the
//! offset and source partition and offset of a record are its input's at every step.
//!
//! TRANSFORM_CONVERT (§5.9) is the same chain followed by the task's key and value converters,
//! objects of the same module: a source task's records then leave the guest as the bytes the
//! producer sends, and never cross the boundary as Connect data.

use crate::error::{Error, Result};
use crate::keep::{self, Keep};
use crate::plugin::{Applied, Converter, Predicate, Transformation};
use crate::wire::{self, Data, Decoder, Record};
use std::borrow::Cow;

/// Which part of a step a failure is about (sdk/ABI.md §5.8, §5.9).
pub const STAGE_TRANSFORMATION: u8 = 0;
pub const STAGE_PREDICATE: u8 = 1;
pub const STAGE_KEY_CONVERTER: u8 = 2;
pub const STAGE_VALUE_CONVERTER: u8 = 3;

/// The key and value converters of a TRANSFORM_CONVERT call.
pub(crate) struct Converters<'c> {
    pub key: &'c mut dyn Converter,
    pub value: &'c mut dyn Converter,
}

/// The plugin objects a chain names by handle.
pub(crate) trait Objects {
    fn transformation(&mut self, h: i32) -> Option<&mut dyn Transformation>;
    fn predicate(&mut self, h: i32) -> Option<&mut dyn Predicate>;
}

struct Step {
    transform: i32,
    predicate: i32,
    negate: bool,
}

/// A record on its way through the chain.
struct Item<'a> {
    input: usize,
    rec: Record<'a>,
    changed: bool,
    /// Whether the value is vouched for (Keep::value_vouched).
    vouched: bool,
    /// The input's offset and source partition and offset, which no step changes (§5.8): put
    /// back after each step that changed the record.
    offset: i64,
    source_partition: &'a [u8],
    source_offset: &'a [u8],
}

/// The records one step of a chain is applied to, as `Transformation::apply_batch` is given them:
/// a step handles the whole batch in one call, so that what it does alike for every record (look
/// up the schema it writes, compare the topic with the last one it routed) and the call itself
/// are paid once per batch, not once per record.
///
/// Records are named by index, from 0 to `len()`; a step applies to those `applies` says (the
/// others failed before or its predicate did not select them). It leaves each record it applies
/// to as it was, or changes it in place (`record`) and says so with `changed`, or drops it
/// (`dropped`) or fails it (`fail`). Its offset and source partition and offset stay the input's.
pub struct Batch<'b, 'a> {
    items: &'b mut [Item<'a>],
    /// Whether each record is out of the chain (failed or dropped at an earlier step or this one).
    gone: &'b mut [bool],
    /// Whether the step's predicate selected each record; None: it has none.
    selected: Option<&'b [bool]>,
    failures: &'b mut Vec<Failure>,
    step: usize,
}

impl<'b, 'a> Batch<'b, 'a> {
    /// How many records the batch has, including those the step does not apply to.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether the step applies to record `i`: neither gone nor left out by its predicate.
    #[inline]
    pub fn applies(&self, i: usize) -> bool {
        !self.gone[i] && self.selected.map_or(true, |s| s[i])
    }

    /// Record `i`, to read or to change in place.
    #[inline]
    pub fn record(&mut self, i: usize) -> &mut Record<'a> {
        &mut self.items[i].rec
    }

    /// Whether record `i`'s value is vouched for (see `Keep::value_vouched`).
    #[inline]
    pub fn vouched(&self, i: usize) -> bool {
        self.items[i].vouched
    }

    /// Says that the step changed record `i`, and whether the value it left is vouched for (see
    /// `Keep::vouch_value`; a step that does not touch the value passes `vouched(i)`).
    #[inline]
    pub fn changed(&mut self, i: usize, vouched: bool) {
        let it = &mut self.items[i];
        it.changed = true;
        it.vouched = vouched;
        it.rec.offset = it.offset;
        it.rec.source_partition = it.source_partition;
        it.rec.source_offset = it.source_offset;
    }

    /// Drops record `i` from the chain.
    #[inline]
    pub fn dropped(&mut self, i: usize) {
        self.gone[i] = true;
    }

    /// Applies `apply_mut` (or what does as it does) to record `i` and says what it did: a step's
    /// way to leave a record its `apply_batch` has no shortcut for to the record-by-record path.
    #[inline]
    pub fn apply_one(&mut self, i: usize, keep: &'a Keep, apply_mut: impl FnOnce(&mut Record<'a>) -> Result<Applied>) -> Result<()> {
        keep.begin_step(self.items[i].vouched);
        match apply_mut(&mut self.items[i].rec) {
            Ok(Applied::Unchanged) => {}
            Ok(Applied::Changed) => self.changed(i, keep.vouched_after_change()),
            Ok(Applied::Drop) => self.dropped(i),
            Err(e) => self.fail(i, e)?,
        }
        Ok(())
    }

    /// Fails record `i` with `err`, which leaves the chain; a retriable error fails the whole
    /// call instead, and comes back to be returned from `apply_batch`.
    #[cold]
    #[inline(never)]
    pub fn fail(&mut self, i: usize, err: Error) -> Result<()> {
        let input = self.items[i].input;
        if err.is_retriable() {
            return Err(err.context(format!("step {}, record {}", self.step, input)));
        }
        self.failures.push(Failure { input, step: self.step, stage: STAGE_TRANSFORMATION, err });
        self.gone[i] = true;
        Ok(())
    }
}

struct Failure {
    input: usize,
    step: usize,
    stage: u8,
    err: Error,
}

fn failure_class(e: &Error) -> &str {
    if e.class().is_empty() {
        wire::DATA_EXCEPTION
    } else {
        e.class()
    }
}

/// Runs TRANSFORM_CHAIN: the request's steps over its record batch, into a chain result.
pub(crate) fn transform_chain(objs: &mut dyn Objects, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    run(objs, input, out, None)
}

/// Runs TRANSFORM_CONVERT: the chain request that follows the converters' handles, each record
/// that comes out converted by `conv`, into a chain result of converted records.
pub(crate) fn transform_convert(objs: &mut dyn Objects, conv: Converters, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    run(objs, input, out, Some(conv))
}

fn run(objs: &mut dyn Objects, input: &[u8], out: &mut Vec<u8>, mut conv: Option<Converters>) -> Result<()> {
    let op = if conv.is_some() { "TRANSFORM_CONVERT" } else { "TRANSFORM_CHAIN" };
    let mut d = Decoder::new(input);
    let n = d.count("chain steps", 9);
    let mut steps = Vec::with_capacity(n);
    for _ in 0..n {
        let transform = d.u32("chain step transformation") as i32;
        let predicate = d.u32("chain step predicate") as i32;
        let negate = d.u8("chain step negate") != 0;
        steps.push(Step { transform, predicate, negate });
    }
    if let Some(e) = d.err() {
        return Err(Error::new(format!("{}: {}", op, e)));
    }
    for (i, s) in steps.iter().enumerate() {
        if objs.transformation(s.transform).is_none() {
            return Err(Error::new(format!("{}: step {}: no open transformation with handle {}", op, i, s.transform)));
        }
        if s.predicate != 0 && objs.predicate(s.predicate).is_none() {
            return Err(Error::new(format!("{}: step {}: no open predicate with handle {}", op, i, s.predicate)));
        }
    }
    let batch = &input[input.len() - d.remaining()..];
    // Declared before the records, which borrow what the steps keep in it.
    let keep = Keep::new();
    let mut cur: Vec<Item> = wire::decode_records_into(batch, |input, rec| Item {
        input,
        offset: rec.offset,
        source_partition: rec.source_partition,
        source_offset: rec.source_offset,
        rec,
        changed: false,
        vouched: false,
    })?;
    let mut failures: Vec<Failure> = Vec::new();
    // Each step changes the records where they are, the whole batch in one call
    // (Transformation::apply_batch), and marks the ones that leave the chain, which go at the end
    // of the step: no record is moved or copied between steps. The predicate runs over the step's
    // records before the transformation does, as with one TEST and one TRANSFORM call per step.
    let (mut selected, mut gone) = (Vec::new(), Vec::new());
    for (si, step) in steps.iter().enumerate() {
        if cur.is_empty() {
            break;
        }
        gone.clear();
        gone.resize(cur.len(), false);
        if step.predicate != 0 {
            selected.clear();
            selected.resize(cur.len(), true);
            let p = objs.predicate(step.predicate).expect("checked above");
            for (i, it) in cur.iter().enumerate() {
                match p.test(&it.rec) {
                    Err(e) if e.is_retriable() => return Err(e.context(format!("step {} predicate, record {}", si, it.input))),
                    Err(err) => {
                        failures.push(Failure { input: it.input, step: si, stage: STAGE_PREDICATE, err });
                        gone[i] = true;
                    }
                    Ok(m) => selected[i] = m != step.negate,
                }
            }
        }
        let t = objs.transformation(step.transform).expect("checked above");
        let mut b = Batch {
            items: &mut cur,
            gone: &mut gone,
            selected: if step.predicate != 0 { Some(&selected) } else { None },
            failures: &mut failures,
            step: si,
        };
        t.apply_batch(&mut b, &keep)?;
        if gone.contains(&true) {
            let mut i = 0;
            cur.retain(|_| {
                i += 1;
                !gone[i - 1]
            });
        }
    }
    // Entries in input order: the records that came out and the failures, merged by input.
    failures.sort_by_key(|f| f.input);
    wire::put_u32(out, (cur.len() + failures.len()) as u32);
    let (mut fi, mut ri) = (0, 0);
    while fi < failures.len() || ri < cur.len() {
        let take_failure = ri == cur.len() || (fi < failures.len() && failures[fi].input < cur[ri].input);
        if take_failure {
            let f = &failures[fi];
            fi += 1;
            wire::put_u32(out, f.input as u32);
            out.push(wire::STATUS_FAILED);
            wire::put_u32(out, f.step as u32);
            out.push(f.stage);
            wire::put_bytes(out, failure_class(&f.err).as_bytes());
            wire::put_bytes(out, f.err.message().as_bytes());
            continue;
        }
        let it = &cur[ri];
        ri += 1;
        if let Some(c) = conv.as_mut() {
            let at = out.len();
            wire::put_u32(out, it.input as u32);
            out.push(wire::STATUS_CONVERTED);
            if let Err((stage, err)) = put_converted(out, &it.rec, it.vouched, &keep, c) {
                if err.is_retriable() {
                    return Err(err.context(format!("record {}", it.input)));
                }
                out.truncate(at);
                wire::put_u32(out, it.input as u32);
                out.push(wire::STATUS_FAILED);
                wire::put_u32(out, steps.len() as u32);
                out.push(stage);
                wire::put_bytes(out, failure_class(&err).as_bytes());
                wire::put_bytes(out, err.message().as_bytes());
            }
            continue;
        }
        wire::put_u32(out, it.input as u32);
        if !it.changed {
            out.push(wire::STATUS_UNCHANGED);
            continue;
        }
        out.push(wire::STATUS_RECORD);
        wire::put_record_fields(out, &it.rec, -1);
        wire::put_u32(out, 0);
        wire::put_u32(out, 0);
    }
    // The steps' payloads, for the next call's steps to write into (keep::buffer).
    // Taken where they are: moving each record out of `cur` would copy all of it.
    let mut owns_more = false;
    for it in cur.iter_mut() {
        recycle_data(std::mem::replace(&mut it.rec.key, Data::Null));
        recycle_data(std::mem::replace(&mut it.rec.value, Data::Null));
        owns_more |= matches!(it.rec.topic, Cow::Owned(_)) || it.rec.headers.capacity() != 0;
    }
    if !owns_more {
        // SAFETY: what is left of each record owns nothing (its key and value were taken, its
        // topic is borrowed and its headers never allocated), so not dropping the records one by
        // one (a call per record and field, in a guest) leaks nothing.
        unsafe { cur.set_len(0) };
    }
    Ok(())
}

/// Appends what follows a CONVERTED status (sdk/ABI.md §5.9): the record's topic, partition and
/// timestamp, its key and value as the converters write them, and its headers. A converter's error
/// comes back with its stage; what was appended is then the caller's to drop.
fn put_converted(out: &mut Vec<u8>, r: &Record, vouched: bool, keep: &Keep, c: &mut Converters) -> std::result::Result<(), (u8, Error)> {
    wire::put_bytes(out, r.topic.as_bytes());
    wire::put_u32(out, r.partition as u32);
    wire::put_i64(out, r.timestamp);
    // Key first, as Kafka converts them: a record whose key fails is not given to the value's.
    put_converted_data(out, &r.topic, &r.key, false, keep, &mut *c.key).map_err(|e| (STAGE_KEY_CONVERTER, e))?;
    put_converted_data(out, &r.topic, &r.value, vouched, keep, &mut *c.value).map_err(|e| (STAGE_VALUE_CONVERTER, e))?;
    if r.headers.is_empty() {
        wire::put_u32(out, 0);
    } else {
        wire::put_headers(out, &r.headers);
    }
    Ok(())
}

/// Appends `d` converted, as nullable bytes: a null without a schema is null bytes for every
/// converter, so it is not given to one (as the host does not call FROM_CONNECT for nulls alone).
/// A value a step of this module vouched for (Keep::value_vouched) goes to the converter as such.
fn put_converted_data(out: &mut Vec<u8>, topic: &str, d: &Data, vouched: bool, keep: &Keep, conv: &mut dyn Converter) -> Result<()> {
    if let Data::Null = d {
        wire::put_nullable_bytes(out, None);
        return Ok(());
    }
    let at = out.len();
    wire::put_u32(out, 0);
    let written = if vouched { conv.write_vouched_from_connect(topic, d, keep, out)? } else { conv.write_from_connect(topic, d, out)? };
    if written {
        let n = out.len() - at - 4;
        wire::patch_u32(out, at, n as u32);
    } else {
        out.truncate(at);
        wire::put_nullable_bytes(out, None);
    }
    Ok(())
}

/// Gives the bytes a value owns to keep::recycle.
fn recycle_data(d: Data) {
    let owned = |c: Cow<[u8]>| {
        if let Cow::Owned(b) = c {
            keep::recycle(b);
        }
    };
    match d {
        Data::Null => {}
        Data::Bytes(b) | Data::String(b) => owned(b),
        Data::Json { schema, payload } => {
            owned(schema);
            owned(payload);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::plugin::Outcome;

    /// A step with a batch path of its own: it upper-cases each string value and tries to move the
    /// record's offset and source offset (which the chain must put back), drops "drop", fails "bad"
    /// and fails the whole call on "retry".
    struct Shout;

    impl Transformation for Shout {
        fn configure(&mut self, _: &Config) -> Result<()> {
            Ok(())
        }
        fn apply<'a>(&mut self, _: &Record<'a>) -> Result<Outcome<'a>> {
            unreachable!("a chain calls apply_batch")
        }
        fn apply_batch<'a>(&mut self, b: &mut Batch<'_, 'a>, _keep: &'a Keep) -> Result<()> {
            for i in 0..b.len() {
                if !b.applies(i) {
                    continue;
                }
                let v = match &b.record(i).value {
                    Data::String(s) => s.to_vec(),
                    _ => Vec::new(),
                };
                match &v[..] {
                    b"drop" => b.dropped(i),
                    b"bad" => b.fail(i, Error::new("bad value"))?,
                    b"retry" => b.fail(i, Error::new("later").retriable())?,
                    _ => {
                        let r = b.record(i);
                        r.value = Data::String(Cow::Owned(v.to_ascii_uppercase()));
                        r.offset = 99;
                        r.source_offset = b"{\"moved\":true}";
                        b.changed(i, false);
                    }
                }
            }
            Ok(())
        }
    }

    /// A step on the default batch path (one apply per record) that writes the offset and source
    /// offset it sees into the value.
    struct ShowOffsets;

    impl Transformation for ShowOffsets {
        fn configure(&mut self, _: &Config) -> Result<()> {
            Ok(())
        }
        fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
            let v = match &r.value {
                Data::String(s) => String::from_utf8_lossy(s).into_owned(),
                _ => String::new(),
            };
            let shown = format!("{} at {} {}", v, r.offset, String::from_utf8_lossy(r.source_offset));
            Ok(Outcome::Record(Record { value: Data::String(Cow::Owned(shown.into_bytes())), ..r.clone() }))
        }
    }

    struct Steps(Vec<Box<dyn Transformation>>);

    impl Objects for Steps {
        fn transformation(&mut self, h: i32) -> Option<&mut dyn Transformation> {
            match self.0.get_mut((h as usize).wrapping_sub(1)) {
                Some(t) => Some(t.as_mut()),
                None => None,
            }
        }
        fn predicate(&mut self, _: i32) -> Option<&mut dyn Predicate> {
            None
        }
    }

    /// TRANSFORM_CHAIN of handles 1.. over records with these values (offsets 10, 11, ...), as lines.
    fn chain(values: &[&str]) -> std::result::Result<Vec<String>, String> {
        let mut steps = Steps(vec![Box::new(Shout), Box::new(ShowOffsets)]);
        let mut input = Vec::new();
        wire::put_u32(&mut input, 2);
        for h in 1..=2u32 {
            wire::put_u32(&mut input, h);
            wire::put_u32(&mut input, 0);
            input.push(0);
        }
        let recs: Vec<Record> = values
            .iter()
            .enumerate()
            .map(|(i, v)| Record { topic: "t".into(), offset: 10 + i as i64, value: Data::str(v), source_offset: b"{\"pos\":1}", ..Default::default() })
            .collect();
        wire::put_records(&mut input, &recs);
        let mut out = Vec::new();
        transform_chain(&mut steps, &input, &mut out).map_err(|e| e.message().to_string())?;
        let mut d = Decoder::new(&out);
        let mut lines = Vec::new();
        for _ in 0..d.u32("entries") {
            let input = d.u32("input");
            match d.u8("status") {
                wire::STATUS_RECORD => match d.record().value {
                    Data::String(s) => lines.push(format!("{}: {}", input, String::from_utf8_lossy(&s))),
                    v => lines.push(format!("{}: {:?}", input, v)),
                },
                wire::STATUS_FAILED => {
                    let (step, stage) = (d.u32("step"), d.u8("stage"));
                    let (class, msg) = (d.str("class"), d.str("message"));
                    lines.push(format!("{}: failed at step {} stage {}: {} {}", input, step, stage, class, msg));
                }
                s => lines.push(format!("{}: status {}", input, s)),
            }
        }
        d.finish("chain result")?;
        Ok(lines)
    }

    #[test]
    fn batch_steps_keep_offsets_drop_and_fail() {
        assert_eq!(
            chain(&["a", "drop", "bad", "b"]).unwrap(),
            [
                "0: A at 10 {\"pos\":1}",
                &format!("2: failed at step 0 stage 0: {} bad value", wire::DATA_EXCEPTION),
                "3: B at 13 {\"pos\":1}",
            ]
        );
        assert_eq!(chain(&["a", "retry"]), Err("step 0, record 1: later".to_string()));
    }
}

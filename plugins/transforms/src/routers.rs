//! RegexRouter, TimestampRouter and Filter.

use crate::common::*;
use crate::datefmt::Layout;
use crate::regex::{self, Piece, Regex};
use std::borrow::Cow;
use std::collections::HashMap;
use wasmconnect::config::{ConfigDef, Importance};
use wasmconnect::{Batch, Config, Error, Keep, Outcome, Record, Result, Transformation};

pub fn regex_router_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("regex").required().importance(Importance::High).validator(valid_regex).doc("Regular expression to use for matching."),
        ConfigDef::new("replacement").required().importance(Importance::High).doc("Replacement string."),
    ]
}

pub fn timestamp_router_defs() -> Vec<ConfigDef> {
    vec![
        ConfigDef::new("topic.format")
            .default("${topic}-${timestamp}")
            .importance(Importance::High)
            .doc("Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."),
        ConfigDef::new("timestamp.format").default("yyyyMMdd").importance(Importance::High).doc("Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."),
    ]
}

pub fn valid_regex(v: &str) -> std::result::Result<(), String> {
    Regex::new(v).map(|_| ()).map_err(|e| format!("Invalid regex: {}", e))
}

/// A result per topic: a batch has few topics, and a regular expression costs far more than a
/// lookup. The last topic is checked first, without hashing.
#[derive(Default)]
pub struct TopicMemo<T> {
    last: Option<(String, T)>,
    /// Where `last`'s topic was in the chain call that asked last (`get_kept`): Keep::call, the
    /// address and the length of the bytes. A batch's records borrow one topic's bytes (the SDK
    /// decodes a run of equal topics to one string), so the next record's is found by address.
    at: (u64, usize, usize),
    m: HashMap<String, T>,
}

impl<T: Clone> TopicMemo<T> {
    /// `get` of a topic that a chain's record borrows, from its input or from `keep`: those bytes
    /// stay where they are and unchanged for the call (Keep::call), so the same address and
    /// length in the same call are the same topic, without comparing it.
    pub fn get_kept(&mut self, topic: &str, keep: &Keep, compute: impl FnOnce(&str) -> T) -> T {
        let at = keep.place(topic.as_bytes());
        if let Some((_, v)) = &self.last {
            if self.at == at {
                return v.clone();
            }
        }
        let v = self.get(topic, compute);
        self.at = at;
        v
    }

    pub fn get(&mut self, topic: &str, compute: impl FnOnce(&str) -> T) -> T {
        self.at = (0, 0, 0);
        if let Some((t, v)) = &self.last {
            if t == topic {
                return v.clone();
            }
        }
        let v = match self.m.get(topic) {
            Some(v) => v.clone(),
            None => {
                let v = compute(topic);
                if self.m.len() >= 1024 {
                    self.m.clear();
                }
                self.m.insert(topic.to_string(), v.clone());
                v
            }
        };
        self.last = Some((topic.to_string(), v.clone()));
        v
    }
}

// ---- RegexRouter ----------------------------------------------------------------------------

pub struct RegexRouter {
    re: Option<Regex>,
    replacement: Vec<Piece>,
    /// The new topic, None when it stays.
    routes: TopicMemo<Option<String>>,
}

impl RegexRouter {
    pub fn new() -> RegexRouter {
        RegexRouter { re: None, replacement: Vec::new(), routes: TopicMemo::default() }
    }
}

impl RegexRouter {
    /// The new topic of a record of `topic`, None when it stays; `keep` when a chain's record
    /// borrows `topic` (TopicMemo::get_kept).
    fn route(&mut self, topic: &str, keep: Option<&Keep>) -> Option<String> {
        let (re, rep) = (self.re.as_ref(), &self.replacement);
        let compute = |topic: &str| {
            let groups = re?.captures(topic)?;
            let t = regex::expand(rep, topic, &groups);
            if t == topic {
                None
            } else {
                Some(t)
            }
        };
        match keep {
            Some(keep) => self.routes.get_kept(topic, keep, compute),
            None => self.routes.get(topic, compute),
        }
    }
}

impl Transformation for RegexRouter {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        let re = Regex::new(get(cfg, "regex")).map_err(|e| Error::invalid_config("regex", get(cfg, "regex"), &format!("Invalid regex: {}", e)))?;
        self.replacement = regex::parse_replacement(get(cfg, "replacement"), &re).map_err(|e| Error::invalid_config("replacement", get(cfg, "replacement"), &e))?;
        self.re = Some(re);
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        Ok(match self.route(&r.topic, None) {
            None => Outcome::Unchanged,
            Some(t) => {
                let mut out = r.clone();
                out.topic = Cow::Owned(t);
                Outcome::Record(out)
            }
        })
    }

    /// Only the topic changes: the rest of the record is not copied. A batch's records mostly
    /// borrow one topic's bytes (the SDK decodes a run of equal topics to one string): a record
    /// whose topic is where the last one's was stays as that one did, without a lookup.
    fn apply_batch<'a>(&mut self, b: &mut Batch<'_, 'a>, keep: &'a Keep) -> Result<()> {
        // The address and length of the last topic bytes that route to themselves.
        let mut stays: Option<(*const u8, usize)> = None;
        for i in 0..b.len() {
            if !b.applies(i) {
                continue;
            }
            let r = b.record(i);
            let routed = match &r.topic {
                Cow::Borrowed(t) if stays == Some((t.as_ptr(), t.len())) => continue,
                Cow::Borrowed(t) => {
                    let routed = self.route(t, Some(keep));
                    if routed.is_none() {
                        stays = Some((t.as_ptr(), t.len()));
                    }
                    routed
                }
                Cow::Owned(t) => self.route(t, None),
            };
            if let Some(t) = routed {
                r.topic = Cow::Owned(t);
                let vouched = b.vouched(i);
                b.changed(i, vouched);
            }
        }
        Ok(())
    }
}

// ---- TimestampRouter ------------------------------------------------------------------------

pub struct TimestampRouter {
    format: String,
    layout: Option<Layout>,
}

impl TimestampRouter {
    pub fn new() -> TimestampRouter {
        TimestampRouter { format: String::new(), layout: None }
    }
}

impl Transformation for TimestampRouter {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.format = cfg.get("topic.format").cloned().unwrap_or_else(|| "${topic}-${timestamp}".to_string());
        let f = cfg.get("timestamp.format").map(String::as_str).unwrap_or("yyyyMMdd");
        self.layout = Some(Layout::parse(f).map_err(|e| Error::invalid_config("timestamp.format", f, &e))?);
        Ok(())
    }

    fn apply<'a>(&mut self, r: &Record<'a>) -> Result<Outcome<'a>> {
        if r.timestamp < 0 {
            return Err(Error::new(format!("Timestamp missing on record: topic={} partition={}", r.topic, r.partition)));
        }
        let ts = self.layout.as_ref().map(|l| l.format(r.timestamp)).unwrap_or_default();
        let topic = self.format.replace("${topic}", &r.topic).replace("${timestamp}", &ts);
        let mut out = r.clone();
        out.topic = Cow::Owned(topic);
        Ok(outcome(r, out))
    }
}

// ---- Filter ---------------------------------------------------------------------------------

/// Drops every record it is applied to; used with a predicate.
pub struct Filter;

impl Transformation for Filter {
    fn configure(&mut self, _cfg: &Config) -> Result<()> {
        Ok(())
    }

    fn apply<'a>(&mut self, _r: &Record<'a>) -> Result<Outcome<'a>> {
        Ok(Outcome::Drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_memo_finds_a_kept_topic_by_address_within_one_call() {
        let mut memo = TopicMemo::default();
        let mut computed = 0;
        let mut compute = |t: &str| {
            computed += 1;
            t.len()
        };
        let input = String::from("orders orders");
        let (a, b) = (&input[..6], &input[7..]);
        let keep = Keep::new();
        assert_eq!(memo.get_kept(a, &keep, &mut compute), 6);
        assert_eq!(memo.get_kept(a, &keep, &mut compute), 6);
        // Equal bytes elsewhere are found by comparing them; neither computes again.
        assert_eq!(memo.get_kept(b, &keep, &mut compute), 6);
        assert_eq!(computed, 1);
        // The next call's bytes at the same address may be another topic.
        let mut reused = String::from("orders");
        let mut memo = TopicMemo::default();
        assert_eq!(memo.get_kept(&reused, &keep, |_| 1), 1);
        let at = reused.as_ptr();
        reused.replace_range(.., "events");
        assert_eq!(reused.as_ptr(), at);
        assert_eq!(memo.get_kept(&reused, &Keep::new(), |_| 2), 2);
    }
}

//! The predicates TopicNameMatches, HasHeaderKey and RecordIsTombstone.

use crate::common::*;
use crate::regex::Regex;
use crate::routers::{valid_regex, TopicMemo};
use wasmconnect::config::ConfigDef;
use wasmconnect::connect;
use wasmconnect::{Config, Error, Predicate, Record, Result};

pub fn topic_name_matches_defs() -> Vec<ConfigDef> {
    vec![ConfigDef::new("pattern").required().validator(valid_regex).doc("A Java regular expression for matching against the name of a record's topic.")]
}

pub fn has_header_key_defs() -> Vec<ConfigDef> {
    vec![ConfigDef::new("name").required().validator(non_empty_string).doc("The header name.")]
}

pub struct TopicNameMatches {
    re: Option<Regex>,
    matches: TopicMemo<bool>,
}

impl TopicNameMatches {
    pub fn new() -> TopicNameMatches {
        TopicNameMatches { re: None, matches: TopicMemo::default() }
    }
}

impl Predicate for TopicNameMatches {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        let p = get(cfg, "pattern");
        self.re = Some(Regex::new(p).map_err(|e| Error::invalid_config("pattern", p, &format!("entry must be a Java-compatible regular expression: {}", e)))?);
        Ok(())
    }

    fn test(&mut self, r: &Record<'_>) -> Result<bool> {
        let re = self.re.as_ref();
        Ok(self.matches.get(&r.topic, |t| re.map_or(false, |re| re.is_match(t))))
    }
}

pub struct HasHeaderKey {
    name: String,
}

impl HasHeaderKey {
    pub fn new() -> HasHeaderKey {
        HasHeaderKey { name: String::new() }
    }
}

impl Predicate for HasHeaderKey {
    fn configure(&mut self, cfg: &Config) -> Result<()> {
        self.name = get(cfg, "name").to_string();
        Ok(())
    }

    fn test(&mut self, r: &Record<'_>) -> Result<bool> {
        Ok(r.headers.iter().any(|h| h.key == self.name))
    }
}

pub struct RecordIsTombstone;

impl Predicate for RecordIsTombstone {
    fn configure(&mut self, _cfg: &Config) -> Result<()> {
        Ok(())
    }

    fn test(&mut self, r: &Record<'_>) -> Result<bool> {
        Ok(connect::is_null(&r.value))
    }
}

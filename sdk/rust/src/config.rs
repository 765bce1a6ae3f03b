//! Config definitions in the shape of Kafka's ConfigDef: types, defaults, checks with Kafka's error
//! texts, and the ConfigKeyInfo JSON of the descriptor (sdk/ABI.md §3). The texts are those of the
//! Go SDK's configdef package, so that the host and every SDK word an error identically.

use crate::error::Error;
use crate::json::{self, Value};
use std::collections::BTreeMap;

/// A plugin's configuration: values are strings, as in Kafka Connect.
pub type Config = BTreeMap<String, String>;

/// The type of a setting, as ConfigDef.Type names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigType {
    String,
    Int,
    Short,
    Long,
    Double,
    Boolean,
    List,
    Class,
    Password,
}

impl ConfigType {
    pub fn name(self) -> &'static str {
        match self {
            ConfigType::String => "STRING",
            ConfigType::Int => "INT",
            ConfigType::Short => "SHORT",
            ConfigType::Long => "LONG",
            ConfigType::Double => "DOUBLE",
            ConfigType::Boolean => "BOOLEAN",
            ConfigType::List => "LIST",
            ConfigType::Class => "CLASS",
            ConfigType::Password => "PASSWORD",
        }
    }
}

/// How much a setting matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Importance {
    High,
    Medium,
    Low,
}

impl Importance {
    pub fn name(self) -> &'static str {
        match self {
            Importance::High => "HIGH",
            Importance::Medium => "MEDIUM",
            Importance::Low => "LOW",
        }
    }
}

/// The text that stands for a secret value, as Kafka's Password.toString.
pub const HIDDEN: &str = "[hidden]";

/// Whether the value of setting `name` of type `t` is never shown: a PASSWORD, or any setting whose
/// name says it holds a password.
pub fn secret(name: &str, t: ConfigType) -> bool {
    t == ConfigType::Password || name.to_lowercase().contains("password")
}

/// One setting of a plugin. Build it with `ConfigDef::new` and the setters.
#[derive(Clone)]
pub struct ConfigDef {
    pub name: &'static str,
    pub typ: ConfigType,
    /// The key must be set; it has no default (Kafka's NO_DEFAULT_VALUE).
    pub required: bool,
    /// The default value; `None` is Kafka's null default.
    pub default: Option<&'static str>,
    pub importance: Importance,
    pub documentation: &'static str,
    pub group: Option<&'static str>,
    pub order: i32,
    pub width: &'static str,
    pub display_name: Option<&'static str>,
    pub dependents: Vec<&'static str>,
    /// Checks a value that is set and of the right type; its message is shown as
    /// "Invalid value <v> for configuration <name>: <message>".
    pub validator: Option<fn(&str) -> std::result::Result<(), String>>,
}

impl ConfigDef {
    /// A STRING setting of MEDIUM importance with a null default.
    pub fn new(name: &'static str) -> ConfigDef {
        ConfigDef {
            name,
            typ: ConfigType::String,
            required: false,
            default: None,
            importance: Importance::Medium,
            documentation: "",
            group: None,
            order: -1,
            width: "NONE",
            display_name: None,
            dependents: Vec::new(),
            validator: None,
        }
    }

    pub fn typ(mut self, t: ConfigType) -> Self {
        self.typ = t;
        self
    }

    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    pub fn default(mut self, v: &'static str) -> Self {
        self.default = Some(v);
        self
    }

    pub fn importance(mut self, i: Importance) -> Self {
        self.importance = i;
        self
    }

    pub fn doc(mut self, d: &'static str) -> Self {
        self.documentation = d;
        self
    }

    pub fn group(mut self, g: &'static str, order: i32) -> Self {
        self.group = Some(g);
        self.order = order;
        self
    }

    pub fn validator(mut self, v: fn(&str) -> std::result::Result<(), String>) -> Self {
        self.validator = Some(v);
        self
    }

    /// The ConfigKeyInfo JSON of the descriptor.
    pub fn key_info(&self) -> Value {
        let default = match (self.required, self.default) {
            (false, Some(d)) => Value::from(d),
            _ => Value::Null,
        };
        json::object([
            ("name", self.name.into()),
            ("type", self.typ.name().into()),
            ("required", self.required.into()),
            ("default_value", default),
            ("importance", self.importance.name().into()),
            ("documentation", self.documentation.into()),
            ("group", self.group.map(Value::from).unwrap_or(Value::Null)),
            ("order", Value::Int(if self.group.is_some() { self.order as i64 } else { -1 })),
            ("width", self.width.into()),
            ("display_name", self.display_name.unwrap_or(self.name).into()),
            ("dependents", Value::Array(self.dependents.iter().map(|d| Value::from(*d)).collect())),
        ])
    }

    /// The error message for the value `v`, or `None`: the type's, then the validator's.
    pub fn check(&self, v: &str) -> Option<String> {
        if let Err(e) = parse(self.name, self.typ, v) {
            return Some(e.message().to_string());
        }
        if let Some(valid) = self.validator {
            if let Err(msg) = valid(v) {
                let shown = if secret(self.name, self.typ) { HIDDEN } else { v };
                return Some(format!("Invalid value {} for configuration {}: {}", shown, self.name, msg));
            }
        }
        None
    }
}

/// Checks `raw` as a value of type `t` for setting `name`, with Kafka's texts ("Invalid value x for
/// configuration n: Not a number of type INT"). It returns the value trimmed.
pub fn parse<'a>(name: &str, t: ConfigType, raw: &'a str) -> Result<&'a str, Error> {
    let s = raw.trim();
    let fail = |msg: &str| Err(Error::invalid_config(name, if secret(name, t) { HIDDEN } else { raw }, msg));
    let ok = match t {
        ConfigType::Boolean => s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false"),
        ConfigType::Int => s.parse::<i32>().is_ok(),
        ConfigType::Short => s.parse::<i16>().is_ok(),
        ConfigType::Long => s.parse::<i64>().is_ok(),
        ConfigType::Double => s.parse::<f64>().is_ok(),
        _ => true,
    };
    if ok {
        return Ok(s);
    }
    match t {
        ConfigType::Boolean => fail("Expected value to be either true or false"),
        _ => fail(&format!("Not a number of type {}", t.name())),
    }
}

/// ConfigDef's error for a setting that has no value and no default.
pub fn missing(name: &str) -> Error {
    Error::config(name, format!("Missing required configuration {} which has no default value.", go_quote(name)))
}

/// Reads setting `key` of `cfg` as an INT, or `def` if it is not set.
pub fn get_int(cfg: &Config, key: &str, def: i32) -> Result<i32, Error> {
    match cfg.get(key) {
        None => Ok(def),
        Some(v) => Ok(parse(key, ConfigType::Int, v)?.parse().unwrap_or(def)),
    }
}

/// Reads setting `key` of `cfg` as a LONG, or `def` if it is not set.
pub fn get_long(cfg: &Config, key: &str, def: i64) -> Result<i64, Error> {
    match cfg.get(key) {
        None => Ok(def),
        Some(v) => Ok(parse(key, ConfigType::Long, v)?.parse().unwrap_or(def)),
    }
}

/// Reads setting `key` of `cfg` as a BOOLEAN, or `def` if it is not set.
pub fn get_bool(cfg: &Config, key: &str, def: bool) -> Result<bool, Error> {
    match cfg.get(key) {
        None => Ok(def),
        Some(v) => Ok(parse(key, ConfigType::Boolean, v)?.eq_ignore_ascii_case("true")),
    }
}

/// Splits a LIST value at commas with blanks trimmed, as Kafka does: an empty value is an empty
/// list, and trailing empty elements are dropped.
pub fn split_list(s: &str) -> Vec<String> {
    let s = s.trim();
    if s.is_empty() {
        return Vec::new();
    }
    let mut list: Vec<String> = s.split(',').map(|e| e.trim().to_string()).collect();
    while list.last().map_or(false, |e| e.is_empty()) {
        list.pop();
    }
    list
}

/// Error messages per setting, as VALIDATE returns them.
pub type Errors = BTreeMap<String, Vec<String>>;

/// Checks `cfg` against `defs`: required keys, types and validators.
pub fn check_config(defs: &[ConfigDef], cfg: &Config) -> Errors {
    let mut errs = Errors::new();
    for d in defs {
        match cfg.get(d.name) {
            None if d.required => errs.entry(d.name.to_string()).or_default().push(missing(d.name).message().to_string()),
            None => {}
            Some(v) => {
                if let Some(msg) = d.check(v) {
                    errs.entry(d.name.to_string()).or_default().push(msg);
                }
            }
        }
    }
    errs
}

/// A copy of `cfg` with the defaults of `defs` filled in for unset keys.
pub fn with_defaults(defs: &[ConfigDef], cfg: &Config) -> Config {
    let mut out = cfg.clone();
    for d in defs {
        if let (false, Some(def)) = (d.required, d.default) {
            out.entry(d.name.to_string()).or_insert_with(|| def.to_string());
        }
    }
    out
}

/// Adds the messages of `more` to `errs`, skipping duplicates, and drops empty entries.
pub fn merge_errors(errs: &mut Errors, more: Errors) {
    for (k, msgs) in more {
        let e = errs.entry(k).or_default();
        for m in msgs {
            if !e.contains(&m) {
                e.push(m);
            }
        }
    }
    errs.retain(|_, v| !v.is_empty());
}

/// Renders per-key errors as one line, keys sorted, as the Go SDK does.
pub fn format_errors(errs: &Errors) -> String {
    errs.values().map(|msgs| msgs.join(" ")).collect::<Vec<_>>().join("; ")
}

/// Quotes `s` as Go's %q does for the texts Kafka and the Go SDK print: double quotes, with
/// backslash escapes for quotes, backslashes and control characters.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_texts() {
        let defs = [
            ConfigDef::new("file").required(),
            ConfigDef::new("batch.size").typ(ConfigType::Int).default("2000"),
            ConfigDef::new("db.password").typ(ConfigType::Int),
        ];
        let mut cfg = Config::new();
        cfg.insert("batch.size".into(), "many".into());
        cfg.insert("db.password".into(), "s3cret".into());
        let errs = check_config(&defs, &cfg);
        assert_eq!(errs["file"], vec![r#"Missing required configuration "file" which has no default value."#]);
        assert_eq!(errs["batch.size"], vec!["Invalid value many for configuration batch.size: Not a number of type INT"]);
        assert_eq!(errs["db.password"], vec!["Invalid value [hidden] for configuration db.password: Not a number of type INT"]);
        assert_eq!(with_defaults(&defs, &Config::new())["batch.size"], "2000");
        assert_eq!(get_int(&cfg, "nope", 7), Ok(7));
        assert_eq!(split_list(" a, b ,,"), vec!["a", "b"]);
    }
}

//! StringConverter: Kafka's org.apache.kafka.connect.storage.StringConverter, for UTF-8.

use std::borrow::Cow;

use wasmconnect::config::go_quote;
use wasmconnect::text::append_text;
use wasmconnect::wire::{self, Data, TAG_NULL, TAG_STRING};
use wasmconnect::{Config, ConfigDef, Converter, Error, Importance, Info, Result};

use super::{converter_type_def, scan, with_look, VERSION};

pub fn info() -> Info {
    Info {
        name: "StringConverter",
        class: "org.apache.kafka.connect.storage.StringConverter",
        aliases: &[],
        version: VERSION,
        config: vec![
            with_look(
                ConfigDef::new("converter.encoding")
                    .default("UTF8")
                    .importance(Importance::High)
                    .group("Converter", 0)
                    .doc("The name of the Java character set to use for encoding strings as byte arrays."),
                "Encoding",
            ),
            converter_type_def(),
        ],
    }
}

pub struct StringConverter;

impl Converter for StringConverter {
    fn configure(&mut self, cfg: &Config, _is_key: bool) -> Result<()> {
        let raw = cfg.get("converter.encoding").map(String::as_str).unwrap_or("UTF8");
        if raw.replace('-', "").eq_ignore_ascii_case("UTF8") {
            return Ok(());
        }
        Err(Error::new(format!("StringConverter: converter.encoding {} is not supported: only UTF-8 is", go_quote(raw))))
    }

    fn from_connect(&mut self, topic: &str, value: &Data<'_>) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        Ok(if self.write_from_connect(topic, value, &mut out)? { Some(out) } else { None })
    }

    fn to_connect(&mut self, _topic: &str, bytes: Option<&[u8]>) -> Result<Data<'static>> {
        Ok(match bytes {
            None => Data::Null,
            Some(b) => Data::String(Cow::Owned(valid_utf8(b).into_owned())),
        })
    }

    fn write_from_connect(&mut self, _topic: &str, value: &Data<'_>, out: &mut Vec<u8>) -> Result<bool> {
        if value.is_null() {
            return Ok(false);
        }
        append_text(out, value)?;
        Ok(true)
    }

    fn write_to_connect(&mut self, _topic: &str, bytes: Option<&[u8]>, out: &mut Vec<u8>) -> Result<()> {
        match bytes {
            None => out.push(TAG_NULL),
            Some(b) => {
                out.push(TAG_STRING);
                wire::put_bytes(out, &valid_utf8(b));
            }
        }
        Ok(())
    }
}

/// `b`, or a copy with each run of invalid UTF-8 replaced by U+FFFD, as Java decodes it.
fn valid_utf8(b: &[u8]) -> Cow<'_, [u8]> {
    if std::str::from_utf8(b).is_ok() {
        return Cow::Borrowed(b);
    }
    let mut out = Vec::with_capacity(b.len() + 2);
    scan::append_valid_utf8(&mut out, b);
    Cow::Owned(out)
}

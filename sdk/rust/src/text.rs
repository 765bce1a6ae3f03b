//! The text form of a value, as Kafka's toString() renders it for FileStreamSink and
//! StringConverter.

use crate::error::Error;
use crate::json;
use crate::wire::Data;

/// Appends the text form of `v` to `out`: a string's text, raw bytes as they are, a JSON string
/// payload unquoted, any other JSON payload as JSON text, and null as "null".
pub fn append_text(out: &mut Vec<u8>, v: &Data) -> Result<(), Error> {
    match v {
        Data::Null => out.extend_from_slice(b"null"),
        Data::String(b) | Data::Bytes(b) => out.extend_from_slice(b),
        Data::Json { payload, .. } => {
            let p = trim(payload);
            if p.is_empty() {
                out.extend_from_slice(b"null");
            } else if p[0] != b'"' {
                out.extend_from_slice(p);
            } else if p.len() >= 2 && p[p.len() - 1] == b'"' && !p.contains(&b'\\') {
                out.extend_from_slice(&p[1..p.len() - 1]);
            } else {
                let s = json::parse_string(p).map_err(|e| Error::new(format!("invalid JSON string payload: {}", e)))?;
                out.extend_from_slice(s.as_bytes());
            }
        }
    }
    Ok(())
}

fn trim(b: &[u8]) -> &[u8] {
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c');
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |i| i + 1);
    &b[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts() {
        let mut out = Vec::new();
        for v in [Data::str("line"), Data::bytes(b"raw"), Data::json(b"{}", b" \"plain\" "), Data::json(b"", b"{\"a\":1}"), Data::Null, Data::json(b"", br#""a\"b""#)] {
            append_text(&mut out, &v).unwrap();
            out.push(b'\n');
        }
        assert_eq!(String::from_utf8(out).unwrap(), "line\nraw\nplain\n{\"a\":1}\nnull\na\"b\n");
    }
}

//! java.text.SimpleDateFormat patterns, formatted and parsed in UTC as Kafka's TimestampConverter
//! and TimestampRouter use them: the letters y M d H h k K m s S E u a z Z X and quoted text.

use wasmconnect::connect::{civil, days_from_civil, DAY_MS};

const MONTHS: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

#[derive(Clone, Debug)]
enum Token {
    Text(String),
    Field(u8, usize),
}

/// A parsed SimpleDateFormat pattern.
#[derive(Clone, Debug)]
pub struct Layout {
    pub java: String,
    tokens: Vec<Token>,
}

impl Layout {
    pub fn parse(p: &str) -> Result<Layout, String> {
        let mut tokens: Vec<Token> = Vec::new();
        let lit = |tokens: &mut Vec<Token>, s: &str| {
            if let Some(Token::Text(t)) = tokens.last_mut() {
                t.push_str(s);
            } else {
                tokens.push(Token::Text(s.to_string()));
            }
        };
        let b = p.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c == b'\'' {
                if b.get(i + 1) == Some(&b'\'') {
                    lit(&mut tokens, "'");
                    i += 2;
                    continue;
                }
                let j = p[i + 1..].find('\'').ok_or("Unterminated quote")?;
                lit(&mut tokens, &p[i + 1..i + 1 + j]);
                i += j + 2;
            } else if c.is_ascii_alphabetic() {
                if !b"yMdHhkKmsSEazZXu".contains(&c) {
                    return Err(format!("Illegal pattern character '{}'", c as char));
                }
                let mut n = 1;
                while b.get(i + n) == Some(&c) {
                    n += 1;
                }
                tokens.push(Token::Field(c, n));
                i += n;
            } else {
                let ch = p[i..].chars().next().unwrap();
                lit(&mut tokens, &p[i..i + ch.len_utf8()]);
                i += ch.len_utf8();
            }
        }
        Ok(Layout { java: p.to_string(), tokens })
    }

    /// Formats a time in ms since the epoch, UTC.
    pub fn format(&self, ms: i64) -> String {
        let t = civil(ms);
        let mut b = String::new();
        let pad = |b: &mut String, v: i64, n: usize| {
            let s = v.to_string();
            for _ in s.len()..n {
                b.push('0');
            }
            b.push_str(&s);
        };
        for tk in &self.tokens {
            match *tk {
                Token::Text(ref s) => b.push_str(s),
                Token::Field(c, n) => match c {
                    b'y' => {
                        if n == 2 {
                            pad(&mut b, t.year.rem_euclid(100), 2)
                        } else {
                            pad(&mut b, t.year, n)
                        }
                    }
                    b'M' => {
                        let name = MONTHS[t.month as usize - 1];
                        match n {
                            n if n >= 4 => b.push_str(name),
                            3 => b.push_str(&name[..3]),
                            _ => pad(&mut b, t.month as i64, n),
                        }
                    }
                    b'd' => pad(&mut b, t.day as i64, n),
                    b'H' => pad(&mut b, t.hour as i64, n),
                    b'k' => pad(&mut b, if t.hour == 0 { 24 } else { t.hour as i64 }, n),
                    b'K' => pad(&mut b, (t.hour % 12) as i64, n),
                    b'h' => pad(&mut b, if t.hour % 12 == 0 { 12 } else { (t.hour % 12) as i64 }, n),
                    b'm' => pad(&mut b, t.minute as i64, n),
                    b's' => pad(&mut b, t.second as i64, n),
                    b'S' => pad(&mut b, t.milli as i64, n),
                    b'E' => {
                        let name = DAYS[t.weekday as usize];
                        b.push_str(if n >= 4 { name } else { &name[..3] })
                    }
                    b'u' => pad(&mut b, if t.weekday == 0 { 7 } else { t.weekday as i64 }, n),
                    b'a' => b.push_str(if t.hour < 12 { "AM" } else { "PM" }),
                    b'z' => b.push_str(if n >= 4 { "Coordinated Universal Time" } else { "UTC" }),
                    b'Z' => b.push_str("+0000"),
                    b'X' => b.push('Z'),
                    _ => {}
                },
            }
        }
        b
    }

    /// Parses `s` as SimpleDateFormat does, strictly: numbers take all their digits unless the next
    /// token is a number too (then exactly n digits). Text after the pattern is ignored.
    pub fn parse_time(&self, s: &str) -> Result<i64, String> {
        let (mut year, mut month, mut day, mut hour, mut min, mut sec, mut ms) = (1970i64, 1i64, 1i64, 0i64, 0i64, 0i64, 0i64);
        let (mut pm, mut has12) = (false, false);
        let mut off = 0i64;
        let mut i = 0;
        let b = s.as_bytes();
        let bad = || format!("Unparseable date: {}", wasmconnect::config::go_quote(s));
        for (k, tk) in self.tokens.iter().enumerate() {
            let (c, n) = match *tk {
                Token::Text(ref t) => {
                    if !s[i..].starts_with(t.as_str()) {
                        return Err(bad());
                    }
                    i += t.len();
                    continue;
                }
                Token::Field(c, n) => (c, n),
            };
            let numeric = b"yMdHhkKmsSu".contains(&c) && !(c == b'M' && n >= 3);
            if numeric {
                let mut j = i;
                if j < b.len() && (b[j] == b'-' || b[j] == b'+') && c == b'y' {
                    j += 1;
                }
                let limit = if matches!(self.tokens.get(k + 1), Some(Token::Field(..))) { b.len().min(i + n) } else { b.len() };
                while j < limit && b[j].is_ascii_digit() {
                    j += 1;
                }
                let v: i64 = s[i..j].parse().map_err(|_| bad())?;
                let width = j - i;
                i = j;
                match c {
                    b'y' => year = if n <= 2 && width <= 2 { 2000 + v } else { v },
                    b'M' => month = v,
                    b'd' => day = v,
                    b'H' | b'k' => hour = v % 24,
                    b'h' | b'K' => {
                        hour = v % 12;
                        has12 = true
                    }
                    b'm' => min = v,
                    b's' => sec = v,
                    b'S' => ms = v,
                    _ => {}
                }
                continue;
            }
            let rest = &s[i..];
            let starts = |name: &str| rest.len() >= name.len() && rest.is_char_boundary(name.len()) && rest[..name.len()].eq_ignore_ascii_case(name);
            match c {
                b'M' => {
                    let found = MONTHS.iter().enumerate().find_map(|(m, name)| [*name, &name[..3]].iter().find(|n| starts(n)).map(|n| (m, n.len())));
                    let (m, len) = found.ok_or_else(bad)?;
                    month = m as i64 + 1;
                    i += len;
                }
                b'E' => {
                    let found = DAYS.iter().find_map(|name| [*name, &name[..3]].iter().find(|n| starts(n)).map(|n| n.len()));
                    i += found.ok_or_else(bad)?;
                }
                b'a' => {
                    if starts("PM") {
                        pm = true;
                    } else if !starts("AM") {
                        return Err(bad());
                    }
                    i += 2;
                }
                _ => {
                    let (len, o) = parse_zone(rest).ok_or_else(bad)?;
                    i += len;
                    off = o;
                }
            }
        }
        if has12 && pm {
            hour += 12;
        }
        // Lenient as SimpleDateFormat: months and days out of range roll over.
        let (y, m) = (year + (month - 1).div_euclid(12), (month - 1).rem_euclid(12) + 1);
        let days = days_from_civil(y, m as u32, 1) + day - 1;
        Ok(days * DAY_MS + hour * 3_600_000 + min * 60_000 + sec * 1000 + ms - off * 1000)
    }
}

/// Reads Z, UTC, GMT, GMT+hh:mm, +hhmm, +hh:mm or +hh: the length read and the offset in seconds.
fn parse_zone(s: &str) -> Option<(usize, i64)> {
    if s.starts_with("Coordinated Universal Time") {
        return Some((26, 0));
    }
    if s.starts_with('Z') {
        return Some((1, 0));
    }
    if s.starts_with("UTC") || s.starts_with("GMT") {
        if let Some((n, off)) = parse_zone(&s[3..]) {
            if n > 0 && !matches!(s.as_bytes()[3], b'Z' | b'U' | b'G') {
                return Some((3 + n, off));
            }
        }
        return Some((3, 0));
    }
    let b = s.as_bytes();
    if b.len() < 3 || (b[0] != b'+' && b[0] != b'-') {
        return None;
    }
    let digits = |p: &[u8]| -> Option<i64> {
        if p.len() < 2 || !p[0].is_ascii_digit() || !p[1].is_ascii_digit() {
            return None;
        }
        Some(((p[0] - b'0') * 10 + (p[1] - b'0')) as i64)
    };
    let h = digits(&b[1..])?;
    let (mut n, mut m) = (3, 0);
    if b.len() >= 6 && b[3] == b':' {
        if let Some(mm) = digits(&b[4..]) {
            n = 6;
            m = mm;
        }
    } else if let Some(mm) = digits(&b[3..]) {
        n = 5;
        m = mm;
    }
    let off = h * 3600 + m * 60;
    Some((n, if b[0] == b'-' { -off } else { off }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_and_parse() {
        let l = Layout::parse("yyyy MM dd HH mm ss SSS z").unwrap();
        assert_eq!(l.format(86401000), "1970 01 02 00 00 01 000 UTC");
        assert_eq!(l.parse_time("1970 01 02 00 00 01 000 UTC").unwrap(), 86401000);
        assert_eq!(Layout::parse("yyyyMMdd").unwrap().format(1483425001864), "20170103");
        assert_eq!(Layout::parse("yyyy-MM-dd'T'HH:mm:ss.SSSX").unwrap().format(1483425001864), "2017-01-03T06:30:01.864Z");
        assert_eq!(Layout::parse("EEE, d MMM yyyy hh:mm a").unwrap().format(1483425001864), "Tue, 3 Jan 2017 06:30 AM");
        assert_eq!(Layout::parse("yyyyMMddHHmm").unwrap().parse_time("201701030630").unwrap(), 1483425000000);
        assert_eq!(Layout::parse("yyyy-MM-dd HH:mmZ").unwrap().parse_time("2017-01-03 07:30+0100").unwrap(), 1483425000000);
        assert!(Layout::parse("yyyy-MM-dd").unwrap().parse_time("yesterday").is_err());
        assert!(Layout::parse("yyyy-MM-dd q").is_err());
        assert!(Layout::parse("'open").is_err());
    }
}

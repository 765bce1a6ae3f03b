//! Java regular expressions (java.util.regex) for RegexRouter and TopicNameMatches, which match a
//! whole topic name (Matcher.matches). A small backtracking engine, as Java's is: literals, `.`,
//! classes (`[a-z]`, `[^...]`, `\d \w \s` and their negations), anchors (`^ $ \A \z \Z \b \B`),
//! groups (capturing, `(?:...)`, named `(?<name>...)`), alternation, greedy, lazy and possessive
//! (run as greedy) quantifiers, backreferences, `\Q...\E` and the `(?i)` flag (ASCII). Without
//! backreferences it remembers the (instruction, position) pairs it has tried, so a match takes
//! time linear in the program times the topic, whatever the pattern.

use std::collections::HashMap;

#[derive(Clone, Debug)]
enum ClassItem {
    Range(char, char),
    /// \d, \w, \s; true: negated (\D, \W, \S).
    Short(u8, bool),
}

#[derive(Clone, Debug)]
struct Class {
    items: Vec<ClassItem>,
    negated: bool,
    ci: bool,
}

impl Class {
    fn matches(&self, c: char) -> bool {
        let hit = |c: char| {
            self.items.iter().any(|it| match *it {
                ClassItem::Range(a, b) => a <= c && c <= b,
                ClassItem::Short(k, neg) => short_matches(k, c) != neg,
            })
        };
        let mut m = hit(c);
        if !m && self.ci && c.is_ascii_alphabetic() {
            m = hit(if c.is_ascii_lowercase() { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() });
        }
        m != self.negated
    }
}

fn short_matches(k: u8, c: char) -> bool {
    match k {
        b'd' => c.is_ascii_digit(),
        b'w' => c.is_ascii_alphanumeric() || c == '_',
        b's' => matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r'),
        _ => false,
    }
}

fn is_word(c: Option<&char>) -> bool {
    c.map_or(false, |&c| c.is_ascii_alphanumeric() || c == '_')
}

#[derive(Clone, Debug)]
enum Node {
    Empty,
    Char(char, bool),
    Any,
    Class(Class),
    /// ^ \A, $ \z \Z, \b, \B
    Assert(Assertion),
    Group(Box<Node>, Option<usize>),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat { node: Box<Node>, min: u32, max: Option<u32>, greedy: bool },
    Backref(usize, bool),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Assertion {
    Start,
    End,
    WordBoundary,
    NotWordBoundary,
}

#[derive(Clone, Debug)]
enum Inst {
    Char(char, bool),
    Any,
    Class(usize),
    Assert(Assertion),
    Split(usize, usize),
    Jmp(usize),
    Save(usize),
    Backref(usize, bool),
    Match,
}

/// A compiled Java regular expression.
#[derive(Debug)]
pub struct Regex {
    prog: Vec<Inst>,
    classes: Vec<Class>,
    groups: usize,
    names: HashMap<String, usize>,
    backrefs: bool,
}

/// A pattern syntax error, worded as Java's PatternSyntaxException.getDescription plus "near index".
fn syntax(desc: &str, at: usize) -> String {
    format!("{} near index {}", desc, at)
}

struct Parser<'a> {
    p: &'a [char],
    i: usize,
    ci: bool,
    groups: usize,
    names: HashMap<String, usize>,
    backrefs: bool,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<char> {
        self.p.get(self.i).copied()
    }

    fn alt(&mut self) -> Result<Node, String> {
        let mut alts = vec![self.concat()?];
        while self.peek() == Some('|') {
            self.i += 1;
            alts.push(self.concat()?);
        }
        Ok(if alts.len() == 1 { alts.pop().unwrap() } else { Node::Alt(alts) })
    }

    fn concat(&mut self) -> Result<Node, String> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = match self.atom()? {
                Some(a) => a,
                None => continue,
            };
            items.push(self.quantified(atom)?);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap(),
            _ => Node::Concat(items),
        })
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, String> {
        let mut node = atom;
        loop {
            let start = self.i;
            let (min, max) = match self.peek() {
                Some('*') => (0, None),
                Some('+') => (1, None),
                Some('?') => (0, Some(1)),
                Some('{') => match self.counted()? {
                    Some(mm) => mm,
                    None => return Ok(node),
                },
                _ => return Ok(node),
            };
            self.i += 1;
            if matches!(node, Node::Repeat { .. }) && !matches!(self.p[start], '?' | '+') {
                return Err(syntax(&format!("Dangling meta character '{}'", self.p[start]), start));
            }
            let mut greedy = true;
            match self.peek() {
                Some('?') => {
                    greedy = false;
                    self.i += 1;
                }
                Some('+') => self.i += 1, // possessive: run as greedy
                _ => {}
            }
            node = Node::Repeat { node: Box::new(node), min, max, greedy };
        }
    }

    /// {n}, {n,}, {n,m} at the '{'; leaves the position at the closing '}'.
    fn counted(&mut self) -> Result<Option<(u32, Option<u32>)>, String> {
        let start = self.i;
        let mut j = self.i + 1;
        let num = |j: &mut usize, p: &[char]| -> Option<u32> {
            let s = *j;
            while *j < p.len() && p[*j].is_ascii_digit() {
                *j += 1;
            }
            if *j == s {
                None
            } else {
                p[s..*j].iter().collect::<String>().parse().ok()
            }
        };
        let min = num(&mut j, self.p).ok_or_else(|| syntax("Illegal repetition", start))?;
        let max = if self.p.get(j) == Some(&',') {
            j += 1;
            num(&mut j, self.p)
        } else {
            Some(min)
        };
        if self.p.get(j) != Some(&'}') {
            return Err(syntax("Unclosed counted closure", j));
        }
        if let Some(m) = max {
            if m < min {
                return Err(syntax("Illegal repetition range", start));
            }
        }
        if min > 1000 || max.map_or(false, |m| m > 1000) {
            return Err(syntax("Repetition count too large for this runtime (at most 1000)", start));
        }
        self.i = j;
        Ok(Some((min, max)))
    }

    fn atom(&mut self) -> Result<Option<Node>, String> {
        let at = self.i;
        let c = self.p[self.i];
        self.i += 1;
        Ok(Some(match c {
            '.' => Node::Any,
            '^' => Node::Assert(Assertion::Start),
            '$' => Node::Assert(Assertion::End),
            '(' => return self.group(at).map(Some),
            '[' => Node::Class(self.class(at)?),
            '\\' => return self.escape(at),
            '*' | '+' | '?' => return Err(syntax(&format!("Dangling meta character '{}'", c), at)),
            '{' => return Err(syntax("Illegal repetition", at)),
            c => Node::Char(c, self.ci),
        }))
    }

    fn group(&mut self, at: usize) -> Result<Node, String> {
        let mut capture = None;
        if self.peek() == Some('?') {
            self.i += 1;
            match self.peek() {
                Some(':') => self.i += 1,
                Some('<') if !matches!(self.p.get(self.i + 1), Some('=') | Some('!')) => {
                    self.i += 1;
                    let s = self.i;
                    while self.peek().map_or(false, |c| c.is_ascii_alphanumeric()) {
                        self.i += 1;
                    }
                    let name: String = self.p[s..self.i].iter().collect();
                    if self.peek() != Some('>') || name.is_empty() || !name.chars().next().unwrap().is_ascii_alphabetic() {
                        return Err(syntax("named capturing group is missing trailing '>'", self.i));
                    }
                    self.i += 1;
                    if self.names.contains_key(&name) {
                        return Err(syntax(&format!("Named capturing group <{}> is already defined", name), self.i - 1));
                    }
                    self.groups += 1;
                    self.names.insert(name, self.groups);
                    capture = Some(self.groups);
                }
                Some('=') | Some('!') | Some('<') | Some('>') => return Err(syntax("Lookaround groups are not supported by this runtime", at)),
                _ => {
                    // Inline flags: (?i) (?-i) (?i:...)
                    let mut on = true;
                    let mut ci = self.ci;
                    loop {
                        match self.peek() {
                            Some('-') => on = false,
                            Some('i') => ci = on,
                            Some('u') | Some('U') | Some('s') | Some('m') | Some('x') | Some('d') => {}
                            Some(')') => {
                                self.i += 1;
                                self.ci = ci;
                                return Ok(Node::Empty);
                            }
                            Some(':') => {
                                self.i += 1;
                                let saved = self.ci;
                                self.ci = ci;
                                let inner = self.alt()?;
                                self.ci = saved;
                                if self.peek() != Some(')') {
                                    return Err(syntax("Unclosed group", self.p.len()));
                                }
                                self.i += 1;
                                return Ok(Node::Group(Box::new(inner), None));
                            }
                            _ => return Err(syntax("Unknown inline modifier", self.i)),
                        }
                        self.i += 1;
                    }
                }
            }
        } else {
            self.groups += 1;
            capture = Some(self.groups);
        }
        let saved = self.ci;
        let inner = self.alt()?;
        self.ci = saved;
        if self.peek() != Some(')') {
            return Err(syntax("Unclosed group", self.p.len()));
        }
        self.i += 1;
        Ok(Node::Group(Box::new(inner), capture))
    }

    fn escape(&mut self, at: usize) -> Result<Option<Node>, String> {
        let c = self.peek().ok_or_else(|| syntax("Unexpected internal error", at + 1))?;
        self.i += 1;
        let ci = self.ci;
        Ok(Some(match c {
            'd' | 'w' | 's' => Node::Class(Class { items: vec![ClassItem::Short(c as u8, false)], negated: false, ci }),
            'D' | 'W' | 'S' => Node::Class(Class { items: vec![ClassItem::Short(c.to_ascii_lowercase() as u8, true)], negated: false, ci }),
            'b' => Node::Assert(Assertion::WordBoundary),
            'B' => Node::Assert(Assertion::NotWordBoundary),
            'A' => Node::Assert(Assertion::Start),
            'z' | 'Z' => Node::Assert(Assertion::End),
            'Q' => {
                let mut lits = Vec::new();
                while self.i < self.p.len() {
                    if self.p[self.i] == '\\' && self.p.get(self.i + 1) == Some(&'E') {
                        self.i += 2;
                        break;
                    }
                    lits.push(Node::Char(self.p[self.i], ci));
                    self.i += 1;
                }
                Node::Group(Box::new(Node::Concat(lits)), None)
            }
            'E' => return Ok(None),
            '1'..='9' => {
                let mut n = c as usize - '0' as usize;
                while let Some(d) = self.peek().filter(|d| d.is_ascii_digit()) {
                    let m = n * 10 + (d as usize - '0' as usize);
                    if m > self.groups {
                        break;
                    }
                    n = m;
                    self.i += 1;
                }
                self.backrefs = true;
                Node::Backref(n, ci)
            }
            'k' => {
                if self.peek() != Some('<') {
                    return Err(syntax("\\k is not followed by '<' for named capturing group", self.i));
                }
                let s = self.i + 1;
                let e = self.p[s..].iter().position(|&c| c == '>').map(|p| s + p).ok_or_else(|| syntax("named capturing group is missing trailing '>'", self.p.len()))?;
                let name: String = self.p[s..e].iter().collect();
                self.i = e + 1;
                let n = *self.names.get(&name).ok_or_else(|| syntax(&format!("named capturing group <{}> does not exist", name), e))?;
                self.backrefs = true;
                Node::Backref(n, ci)
            }
            _ => Node::Char(self.escaped_char(c, at)?, ci),
        }))
    }

    /// The character of an escape that stands for one (\t, \x41, \., ...).
    fn escaped_char(&mut self, c: char, at: usize) -> Result<char, String> {
        Ok(match c {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\x0c',
            'a' => '\x07',
            'e' => '\x1b',
            '0' => {
                let s = self.i;
                while self.i < self.p.len() && self.i - s < 3 && ('0'..='7').contains(&self.p[self.i]) {
                    self.i += 1;
                }
                let t: String = self.p[s..self.i].iter().collect();
                char::from_u32(u32::from_str_radix(&t, 8).map_err(|_| syntax("Illegal octal escape sequence", at))?).unwrap_or('\0')
            }
            'x' | 'u' => {
                let n = if c == 'x' { 2 } else { 4 };
                let t: String = self.p.get(self.i..self.i + n).map(|s| s.iter().collect()).unwrap_or_default();
                let v = u32::from_str_radix(&t, 16).map_err(|_| syntax(if c == 'x' { "Illegal hexadecimal escape sequence" } else { "Illegal Unicode escape sequence" }, self.i))?;
                self.i += n;
                char::from_u32(v).ok_or_else(|| syntax("Illegal Unicode escape sequence", at))?
            }
            c if c.is_ascii_alphabetic() => return Err(syntax("Illegal/unsupported escape sequence", at + 1)),
            c => c,
        })
    }

    fn class(&mut self, at: usize) -> Result<Class, String> {
        let mut cls = Class { items: Vec::new(), negated: false, ci: self.ci };
        if self.peek() == Some('^') {
            cls.negated = true;
            self.i += 1;
        }
        let mut first = true;
        loop {
            let c = self.peek().ok_or_else(|| syntax("Unclosed character class", self.p.len() - 1))?;
            if c == ']' && !first {
                self.i += 1;
                return Ok(cls);
            }
            first = false;
            self.i += 1;
            let lo = match c {
                '\\' => {
                    let e = self.peek().ok_or_else(|| syntax("Unclosed character class", self.p.len() - 1))?;
                    self.i += 1;
                    match e {
                        'd' | 'w' | 's' => {
                            cls.items.push(ClassItem::Short(e as u8, false));
                            continue;
                        }
                        'D' | 'W' | 'S' => {
                            cls.items.push(ClassItem::Short(e.to_ascii_lowercase() as u8, true));
                            continue;
                        }
                        _ => self.escaped_char(e, self.i - 2)?,
                    }
                }
                '[' => return Err(syntax("Nested character classes are not supported by this runtime", self.i - 1)),
                c => c,
            };
            if self.peek() == Some('-') && self.p.get(self.i + 1).map_or(false, |&n| n != ']') {
                self.i += 1;
                let mut hi = self.p[self.i];
                self.i += 1;
                if hi == '\\' {
                    let e = self.peek().ok_or_else(|| syntax("Unclosed character class", self.p.len() - 1))?;
                    self.i += 1;
                    hi = self.escaped_char(e, self.i - 2)?;
                }
                if hi < lo {
                    return Err(syntax("Illegal character range", self.i - 1));
                }
                cls.items.push(ClassItem::Range(lo, hi));
            } else {
                cls.items.push(ClassItem::Range(lo, lo));
            }
            let _ = at;
        }
    }
}

struct Compiler {
    prog: Vec<Inst>,
    classes: Vec<Class>,
}

const MAX_PROGRAM: usize = 20_000;

impl Compiler {
    fn emit(&mut self, i: Inst) -> Result<usize, String> {
        if self.prog.len() >= MAX_PROGRAM {
            return Err("Pattern too large for this runtime".to_string());
        }
        self.prog.push(i);
        Ok(self.prog.len() - 1)
    }

    fn node(&mut self, n: &Node) -> Result<(), String> {
        match n {
            Node::Empty => {}
            Node::Char(c, ci) => {
                self.emit(Inst::Char(*c, *ci))?;
            }
            Node::Any => {
                self.emit(Inst::Any)?;
            }
            Node::Class(c) => {
                self.classes.push(c.clone());
                self.emit(Inst::Class(self.classes.len() - 1))?;
            }
            Node::Assert(a) => {
                self.emit(Inst::Assert(*a))?;
            }
            Node::Backref(n, ci) => {
                self.emit(Inst::Backref(*n, *ci))?;
            }
            Node::Group(inner, cap) => {
                if let Some(k) = cap {
                    self.emit(Inst::Save(2 * k))?;
                }
                self.node(inner)?;
                if let Some(k) = cap {
                    self.emit(Inst::Save(2 * k + 1))?;
                }
            }
            Node::Concat(items) => {
                for it in items {
                    self.node(it)?;
                }
            }
            Node::Alt(alts) => {
                let mut jumps = Vec::new();
                for (i, a) in alts.iter().enumerate() {
                    if i + 1 < alts.len() {
                        let split = self.emit(Inst::Split(0, 0))?;
                        self.node(a)?;
                        jumps.push(self.emit(Inst::Jmp(0))?);
                        let next = self.prog.len();
                        self.prog[split] = Inst::Split(split + 1, next);
                    } else {
                        self.node(a)?;
                    }
                }
                let end = self.prog.len();
                for j in jumps {
                    self.prog[j] = Inst::Jmp(end);
                }
            }
            Node::Repeat { node, min, max, greedy } => {
                for _ in 0..*min {
                    self.node(node)?;
                }
                match max {
                    None => {
                        let split = self.emit(Inst::Split(0, 0))?;
                        self.node(node)?;
                        self.emit(Inst::Jmp(split))?;
                        let end = self.prog.len();
                        self.prog[split] = if *greedy { Inst::Split(split + 1, end) } else { Inst::Split(end, split + 1) };
                    }
                    Some(max) => {
                        let mut splits = Vec::new();
                        for _ in *min..*max {
                            splits.push(self.emit(Inst::Split(0, 0))?);
                            self.node(node)?;
                        }
                        let end = self.prog.len();
                        for s in splits {
                            self.prog[s] = if *greedy { Inst::Split(s + 1, end) } else { Inst::Split(end, s + 1) };
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

enum Job {
    Run(usize, usize),
    Restore(usize, Option<usize>),
}

impl Regex {
    /// Compiles a Java regular expression.
    pub fn new(pattern: &str) -> Result<Regex, String> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut p = Parser { p: &chars, i: 0, ci: false, groups: 0, names: HashMap::new(), backrefs: false };
        let ast = p.alt()?;
        if p.i < chars.len() {
            return Err(syntax("Unmatched closing ')'", p.i.saturating_sub(1)));
        }
        let mut c = Compiler { prog: Vec::new(), classes: Vec::new() };
        c.emit(Inst::Save(0))?;
        c.node(&Node::Group(Box::new(ast), None))?;
        c.emit(Inst::Save(1))?;
        c.emit(Inst::Match)?;
        Ok(Regex { prog: c.prog, classes: c.classes, groups: p.groups, names: p.names, backrefs: p.backrefs })
    }

    /// The number of capturing groups.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// The number of the named group.
    pub fn group_index(&self, name: &str) -> Option<usize> {
        self.names.get(name).copied()
    }

    /// Whether the whole of `text` matches.
    pub fn is_match(&self, text: &str) -> bool {
        self.captures(text).is_some()
    }

    /// Matches the whole of `text` (Matcher.matches) and returns the byte ranges of group 0 and of
    /// each group (None: did not take part).
    pub fn captures(&self, text: &str) -> Option<Vec<Option<(usize, usize)>>> {
        let chars: Vec<char> = text.chars().collect();
        let mut offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        offsets.push(text.len());
        let nslots = 2 * (self.groups + 1);
        let mut slots: Vec<Option<usize>> = vec![None; nslots];
        let width = chars.len() + 1;
        let mut visited = if self.backrefs { Vec::new() } else { vec![0u64; (self.prog.len() * width + 63) / 64] };
        let mut stack = vec![Job::Run(0, 0)];
        let mut budget: u64 = 5_000_000;
        while let Some(job) = stack.pop() {
            let (mut pc, mut pos) = match job {
                Job::Restore(slot, v) => {
                    slots[slot] = v;
                    continue;
                }
                Job::Run(pc, pos) => (pc, pos),
            };
            loop {
                if self.backrefs {
                    budget = budget.checked_sub(1)?;
                } else {
                    let k = pc * width + pos;
                    if visited[k / 64] & (1 << (k % 64)) != 0 {
                        break;
                    }
                    visited[k / 64] |= 1 << (k % 64);
                }
                match &self.prog[pc] {
                    Inst::Char(c, ci) => match chars.get(pos) {
                        Some(x) if x == c || (*ci && x.eq_ignore_ascii_case(c)) => {
                            pc += 1;
                            pos += 1;
                        }
                        _ => break,
                    },
                    Inst::Any => match chars.get(pos) {
                        Some('\n') | Some('\r') | Some('\u{85}') | Some('\u{2028}') | Some('\u{2029}') | None => break,
                        _ => {
                            pc += 1;
                            pos += 1;
                        }
                    },
                    Inst::Class(k) => match chars.get(pos) {
                        Some(&x) if self.classes[*k].matches(x) => {
                            pc += 1;
                            pos += 1;
                        }
                        _ => break,
                    },
                    Inst::Assert(a) => {
                        let ok = match a {
                            Assertion::Start => pos == 0,
                            Assertion::End => pos == chars.len(),
                            Assertion::WordBoundary | Assertion::NotWordBoundary => {
                                let b = is_word(pos.checked_sub(1).and_then(|p| chars.get(p))) != is_word(chars.get(pos));
                                b == (*a == Assertion::WordBoundary)
                            }
                        };
                        if !ok {
                            break;
                        }
                        pc += 1;
                    }
                    Inst::Split(x, y) => {
                        stack.push(Job::Run(*y, pos));
                        pc = *x;
                    }
                    Inst::Jmp(x) => pc = *x,
                    Inst::Save(s) => {
                        stack.push(Job::Restore(*s, slots[*s]));
                        slots[*s] = Some(pos);
                        pc += 1;
                    }
                    Inst::Backref(n, ci) => {
                        let (s, e) = match (slots.get(2 * n).copied().flatten(), slots.get(2 * n + 1).copied().flatten()) {
                            (Some(s), Some(e)) => (s, e),
                            _ => break,
                        };
                        let len = e - s;
                        if pos + len > chars.len() {
                            break;
                        }
                        let same = (0..len).all(|i| {
                            let (a, b) = (chars[s + i], chars[pos + i]);
                            a == b || (*ci && a.eq_ignore_ascii_case(&b))
                        });
                        if !same {
                            break;
                        }
                        pos += len;
                        pc += 1;
                    }
                    Inst::Match => {
                        if pos != chars.len() {
                            break;
                        }
                        let mut out = Vec::with_capacity(self.groups + 1);
                        for g in 0..=self.groups {
                            out.push(match (slots[2 * g], slots[2 * g + 1]) {
                                (Some(s), Some(e)) => Some((offsets[s], offsets[e])),
                                _ => None,
                            });
                        }
                        return Some(out);
                    }
                }
            }
        }
        None
    }
}

/// A piece of a replacement (Matcher.appendReplacement's syntax: $1, ${name}, \$).
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    Text(String),
    Group(usize),
}

/// Parses a java.util.regex replacement for `re`, with Java's error texts.
pub fn parse_replacement(rep: &str, re: &Regex) -> Result<Vec<Piece>, String> {
    let b: Vec<char> = rep.chars().collect();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            '\\' => {
                i += 1;
                if i == b.len() {
                    return Err("character to be escaped is missing".to_string());
                }
                text.push(b[i]);
            }
            '$' => {
                i += 1;
                if i == b.len() {
                    return Err("Illegal group reference: group index is missing".to_string());
                }
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                if b[i] == '{' {
                    let end = b[i..].iter().position(|&c| c == '}').ok_or("named capturing group is missing trailing '}'")?;
                    let name: String = b[i + 1..i + end].iter().collect();
                    let g = re.group_index(&name).ok_or_else(|| format!("No group with name {{{}}}", name))?;
                    out.push(Piece::Group(g));
                    i += end + 1;
                    continue;
                }
                if !b[i].is_ascii_digit() {
                    return Err("Illegal group reference".to_string());
                }
                // Java reads digits while the number is still a group.
                let mut n = b[i] as usize - '0' as usize;
                while i + 1 < b.len() && b[i + 1].is_ascii_digit() {
                    let m = n * 10 + (b[i + 1] as usize - '0' as usize);
                    if m > re.groups() {
                        break;
                    }
                    n = m;
                    i += 1;
                }
                if n > re.groups() {
                    return Err(format!("No group {}", n));
                }
                out.push(Piece::Group(n));
            }
            c => text.push(c),
        }
        i += 1;
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

/// Expands a replacement with the groups of a match of `text`.
pub fn expand(pieces: &[Piece], text: &str, groups: &[Option<(usize, usize)>]) -> String {
    let mut out = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Group(g) => {
                if let Some(Some((s, e))) = groups.get(*g) {
                    out.push_str(&text[*s..*e]);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(re: &str, rep: &str, topic: &str) -> Option<String> {
        let r = Regex::new(re).unwrap();
        let p = parse_replacement(rep, &r).unwrap();
        r.captures(topic).map(|g| expand(&p, topic, &g))
    }

    #[test]
    fn kafka_regex_router_cases() {
        assert_eq!(route("foo", "bar", "foo").as_deref(), Some("bar"));
        assert_eq!(route("(.*)", "prefix-$1", "orig").as_deref(), Some("prefix-orig"));
        assert_eq!(route(r"(.*)-(\d\d\d\d\d\d\d\d)", "$1", "index-20160117").as_deref(), Some("index"));
        assert_eq!(route("foo", "bar", "f"), None);
        assert_eq!(route("(?<name>a+)b", "${name}-$0", "aab").as_deref(), Some("aa-aab"));
        assert_eq!(route("(a|ab)(c|bcd)(d*)", "$1/$2/$3", "abcd").as_deref(), Some("a/bcd/"));
        assert_eq!(route("(a+?)(a*)", "$1,$2", "aaa").as_deref(), Some("a,aa"));
        assert_eq!(route(r"(\w+)-\1", "$1", "ab-ab").as_deref(), Some("ab"));
        assert_eq!(route(r"(?i)TOPIC[-_]x{2,3}", "ok", "topic_xxx").as_deref(), Some("ok"));
        assert_eq!(route(r"[^a-c]+\.\Q.*\E", "ok", "xyz..*").as_deref(), Some("ok"));
        assert!(Regex::new("(a*)*b").unwrap().captures(&"a".repeat(40)).is_none());
    }

    #[test]
    fn errors() {
        for bad in ["(a", "a)", "*a", "[a", "a{2,1}", r"\y", "(?<1a>x)"] {
            assert!(Regex::new(bad).is_err(), "{} compiled", bad);
        }
        let r = Regex::new("(a)").unwrap();
        assert_eq!(parse_replacement("$2", &r).unwrap_err(), "No group 2");
        assert_eq!(parse_replacement("$", &r).unwrap_err(), "Illegal group reference: group index is missing");
        assert_eq!(parse_replacement("${x}", &r).unwrap_err(), "No group with name {x}");
    }
}

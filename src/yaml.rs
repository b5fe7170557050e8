//! The only module that touches the YAML parser.
//!
//! Reads YAML the way Ansible does (PyYAML's YAML 1.1 resolver, `!unsafe` and
//! `!vault` tags, anchors, aliases and `<<` merge keys, duplicate keys with the
//! last one winning) into our own tree of [`Node`]s, each keeping its [`Span`].
//! It enforces the resource bounds (nesting depth, alias expansion) so that no
//! input can make it recurse or allocate without limit. It knows nothing of
//! Ansible's meaning: that is `ansible::*`.

use crate::diagnostic::{Diagnostic, code};
use crate::source::{FileId, Span};
use crate::{HashMap, HashSet};
use saphyr_parser::{Event, Parser, ScalarStyle, ScanError};
use std::fmt;

/// Deepest nesting of sequences and mappings accepted in one document.
pub const MAX_DEPTH: usize = 512;
/// Most nodes that alias expansion may copy in one file (billion-laughs guard).
pub const MAX_ALIAS_NODES: usize = 200_000;
/// Deepest nesting of flow collections (`[`, `{`): the parser's own limit
/// (it counts flow levels in a `u8`); deeper input is `yaml-limit-exceeded`.
pub const MAX_FLOW_DEPTH: usize = 255;

/// Help for parser states that well-formed event streams never reach.
const PARSER_BUG_HELP: &str = "this is a bug in preflint's YAML reading; report it with the file";

/// A tag that changes how Ansible treats a value.
///
/// One byte: every node carries one, and a tree holds hundreds of thousands
/// of nodes (with the text of other tags kept, a node took 80 bytes, not 56).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    None,
    /// `!unsafe`: never templated by Ansible.
    Unsafe,
    /// `!vault`: encrypted; its value is unknown without the password.
    Vault,
    /// Any other local tag: the value stays a string, as Ansible keeps it.
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub span: Span,
    pub tag: Tag,
    /// The scalar was quoted or a block scalar (so `yes` stays a string).
    pub quoted: bool,
}

impl Node {
    #[must_use]
    pub fn null(span: Span) -> Self {
        Node {
            value: Value::Null,
            span,
            tag: Tag::None,
            quoted: false,
        }
    }

    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// The value of a string key in a mapping.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.get_entry(key).map(|(_, v)| v)
    }

    /// Key and value nodes of a string key in a mapping.
    #[must_use]
    pub fn get_entry(&self, key: &str) -> Option<(&Node, &Node)> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, v)| (k, v))
    }

    /// A scalar as the text Ansible would see after templating to a string
    /// (`True`/`False` for booleans, as Python prints them). Containers give `None`.
    #[must_use]
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Null => Some(String::new()),
            Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(format_float(*f)),
            Value::Str(s) => Some(s.clone()),
            Value::Seq(_) | Value::Map(_) => None,
        }
    }

    /// Number of nodes in this subtree (used for the alias-expansion budget).
    #[must_use]
    pub fn count(&self) -> usize {
        match &self.value {
            Value::Seq(items) => 1 + items.iter().map(Node::count).sum::<usize>(),
            Value::Map(pairs) => {
                1 + pairs
                    .iter()
                    .map(|(k, v)| k.count() + v.count())
                    .sum::<usize>()
            }
            _ => 1,
        }
    }

    /// Converts to JSON (keys as strings), for output and differential tests.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map_or_else(|| J::String(format_float(*f)), J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(pairs) => J::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (json_key(k), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// A mapping key as Python's `json.dumps` writes a dict key.
fn json_key(k: &Node) -> String {
    match &k.value {
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Float(f) if f.is_nan() => "NaN".into(),
        Value::Float(f) if f.is_infinite() => {
            if *f > 0.0 { "Infinity" } else { "-Infinity" }.into()
        }
        _ => k.scalar_text().unwrap_or_else(|| k.to_json().to_string()),
    }
}

fn format_float(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        let s = f.to_string();
        if s.contains('.') || s.contains('e') {
            s
        } else {
            format!("{s}.0")
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.scalar_text() {
            Some(s) => f.write_str(&s),
            None => write!(f, "{}", self.to_json()),
        }
    }
}

/// A parsed file: its documents and the problems found while reading it.
#[derive(Debug, Default)]
pub struct YamlFile {
    pub docs: Vec<Node>,
    pub diagnostics: Vec<Diagnostic>,
    /// The file could not be read completely (syntax error or a bound hit).
    pub failed: bool,
}

/// Maps the parser's character indices to byte offsets.
struct Offsets<'a> {
    text: &'a str,
    ascii: bool,
    table: Option<Vec<u32>>,
}

impl<'a> Offsets<'a> {
    fn new(text: &'a str) -> Self {
        Offsets {
            text,
            ascii: text.is_ascii(),
            table: None,
        }
    }

    fn byte(&mut self, char_index: usize) -> u32 {
        if self.ascii {
            return u32::try_from(char_index.min(self.text.len())).unwrap_or(u32::MAX);
        }
        let text = self.text;
        let table = self.table.get_or_insert_with(|| {
            let mut t: Vec<u32> = text
                .char_indices()
                .map(|(b, _)| u32::try_from(b).unwrap_or(u32::MAX))
                .collect();
            t.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
            t
        });
        table
            .get(char_index)
            .copied()
            .unwrap_or_else(|| *table.last().unwrap_or(&0))
    }
}

enum Frame {
    Seq {
        span: Span,
        anchor: usize,
        tag: Tag,
        items: Vec<Node>,
    },
    Map {
        span: Span,
        anchor: usize,
        tag: Tag,
        keys: Vec<Node>,
        values: Vec<Node>,
        pending: Option<Node>,
    },
}

struct Builder<'a> {
    file: FileId,
    offsets: Offsets<'a>,
    stack: Vec<Frame>,
    /// Anchored nodes with their node count and nesting depth.
    anchors: HashMap<usize, (Node, usize, usize)>,
    alias_budget: usize,
    docs: Vec<Node>,
    diagnostics: Vec<Diagnostic>,
}

/// Parses `text` (the content of `file`) into documents.
#[must_use]
pub fn parse(file: FileId, text: &str) -> YamlFile {
    let mut b = Builder {
        file,
        offsets: Offsets::new(text),
        stack: Vec::new(),
        anchors: HashMap::default(),
        alias_budget: MAX_ALIAS_NODES,
        docs: Vec::new(),
        diagnostics: Vec::new(),
    };
    let mut failed = false;
    for item in Parser::new_from_str(text) {
        match item {
            Ok((event, span)) => {
                let sp = b.span(
                    span.start.index(),
                    span.end.index(),
                    span.start.line(),
                    span.start.col(),
                );
                if let Err(d) = b.event(event, sp) {
                    b.diagnostics.push(*d);
                    failed = true;
                    break;
                }
            }
            Err(e) => {
                let d = b.scan_error(&e);
                b.diagnostics.push(d);
                failed = true;
                break;
            }
        }
    }
    YamlFile {
        docs: b.docs,
        diagnostics: b.diagnostics,
        failed,
    }
}

impl Builder<'_> {
    fn span(&mut self, start: usize, end: usize, line: usize, col: usize) -> Span {
        Span {
            file: self.file,
            start: self.offsets.byte(start),
            end: self.offsets.byte(end.max(start)),
            line: u32::try_from(line.max(1)).unwrap_or(u32::MAX),
            col: u32::try_from(col + 1).unwrap_or(u32::MAX),
        }
    }

    fn scan_error(&mut self, e: &ScanError) -> Diagnostic {
        let m = e.marker();
        let sp = self.span(m.index(), m.index(), m.line(), m.col());
        if e.info().contains("recursion limit") {
            return Diagnostic::error(
                code::YAML_LIMIT,
                sp,
                format!("flow collections nested deeper than {MAX_FLOW_DEPTH} levels"),
            )
            .with_help("flatten this structure; the rest of the file is not analysed");
        }
        if e.info().contains("tab") {
            // The parser points at the start of the scalar it was reading;
            // the offending tab may be lines below: point at it, as PyYAML does.
            let sp = self.indenting_tab(sp.start as usize).unwrap_or(sp);
            return Diagnostic::error(
                code::YAML_SYNTAX,
                sp,
                format!("YAML syntax error: {}", e.info()),
            )
            .with_help("indent with spaces: YAML does not allow tabs in indentation; the rest of the file is not analysed");
        }
        Diagnostic::error(
            code::YAML_SYNTAX,
            sp,
            format!("YAML syntax error: {}", e.info()),
        )
        .with_help("fix the YAML at this position; the rest of the file is not analysed")
    }

    /// The first tab at or after byte `from` that sits in a line's leading
    /// whitespace.
    fn indenting_tab(&self, from: usize) -> Option<Span> {
        let text = self.offsets.text;
        let bytes = text.as_bytes();
        let mut i = from.min(bytes.len());
        while i < bytes.len() {
            if bytes[i] == b'\t' {
                let line_start = bytes[..i]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                if bytes[line_start..i]
                    .iter()
                    .all(|&b| b == b' ' || b == b'\t')
                {
                    let (line, col) = crate::source::line_col(text, i);
                    return Some(Span {
                        file: self.file,
                        start: u32::try_from(i).unwrap_or(u32::MAX),
                        end: u32::try_from(i + 1).unwrap_or(u32::MAX),
                        line,
                        col,
                    });
                }
            }
            i += 1;
        }
        None
    }

    fn event(&mut self, event: Event<'_>, sp: Span) -> Result<(), Box<Diagnostic>> {
        match event {
            Event::Nothing
            | Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(_)
            | Event::DocumentEnd => Ok(()),
            Event::Scalar(value, style, anchor, tag) => {
                let node = scalar(&value, style, tag.as_deref(), sp);
                if anchor != 0 {
                    self.anchors.insert(anchor, (node.clone(), 1, 0));
                }
                self.push(node);
                Ok(())
            }
            Event::Alias(id) => {
                let Some((node, count, depth)) = self.anchors.get(&id) else {
                    return Err(Box::new(
                        Diagnostic::error(
                            code::YAML_SYNTAX,
                            sp,
                            "alias refers to an anchor that is not defined before it",
                        )
                        .with_help(
                            "define the anchor (`&name`) before the alias (`*name`) that uses it",
                        ),
                    ));
                };
                if *count > self.alias_budget {
                    return Err(Box::new(
                        Diagnostic::error(
                            code::YAML_LIMIT,
                            sp,
                            format!("alias expansion exceeds {MAX_ALIAS_NODES} nodes in this file (an alias bomb?)"),
                        )
                        .with_help("reduce the nesting of aliases; the rest of the file is not analysed"),
                    ));
                }
                // An alias copies its anchor's nesting where it stands: a
                // chain of aliases could otherwise nest without bound.
                if self.stack.len() + *depth > MAX_DEPTH {
                    return Err(Box::new(
                        Diagnostic::error(
                            code::YAML_LIMIT,
                            sp,
                            format!("this alias nests its anchor deeper than {MAX_DEPTH} levels"),
                        )
                        .with_help(
                            "flatten the aliased structure; the rest of the file is not analysed",
                        ),
                    ));
                }
                self.alias_budget -= *count;
                let mut node = node.clone();
                node.span = sp;
                self.push(node);
                Ok(())
            }
            Event::SequenceStart(anchor, tag) => {
                self.check_depth(sp)?;
                self.stack.push(Frame::Seq {
                    span: sp,
                    anchor,
                    tag: local_tag(tag.as_deref()),
                    items: Vec::new(),
                });
                Ok(())
            }
            Event::MappingStart(anchor, tag) => {
                self.check_depth(sp)?;
                self.stack.push(Frame::Map {
                    span: sp,
                    anchor,
                    tag: local_tag(tag.as_deref()),
                    keys: Vec::new(),
                    values: Vec::new(),
                    pending: None,
                });
                Ok(())
            }
            Event::SequenceEnd => match self.stack.pop() {
                Some(Frame::Seq {
                    span,
                    anchor,
                    tag,
                    items,
                }) => {
                    let node = Node {
                        value: Value::Seq(items),
                        span: close(span, sp),
                        tag,
                        quoted: false,
                    };
                    self.finish(node, anchor);
                    Ok(())
                }
                _ => Err(Box::new(
                    Diagnostic::error(code::YAML_SYNTAX, sp, "unbalanced sequence end")
                        .with_help(PARSER_BUG_HELP),
                )),
            },
            Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Map {
                    span,
                    anchor,
                    tag,
                    keys,
                    values,
                    ..
                }) => {
                    let pairs = self.merge(keys, values);
                    let node = Node {
                        value: Value::Map(pairs),
                        span: close(span, sp),
                        tag,
                        quoted: false,
                    };
                    self.finish(node, anchor);
                    Ok(())
                }
                _ => Err(Box::new(
                    Diagnostic::error(code::YAML_SYNTAX, sp, "unbalanced mapping end")
                        .with_help(PARSER_BUG_HELP),
                )),
            },
        }
    }

    fn check_depth(&self, sp: Span) -> Result<(), Box<Diagnostic>> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Box::new(
                Diagnostic::error(
                    code::YAML_LIMIT,
                    sp,
                    format!("nesting deeper than {MAX_DEPTH} levels"),
                )
                .with_help("flatten this structure; the rest of the file is not analysed"),
            ));
        }
        Ok(())
    }

    fn finish(&mut self, node: Node, anchor: usize) {
        if anchor != 0 {
            let count = node.count();
            self.anchors
                .insert(anchor, (node.clone(), count, nesting(&node)));
        }
        self.push(node);
    }

    fn push(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => self.docs.push(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                keys,
                values,
                pending,
                ..
            }) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => {
                    keys.push(key);
                    values.push(node);
                }
            },
        }
    }

    /// Applies `<<` merge keys and duplicate-key semantics (last one wins, as
    /// PyYAML builds a dict); merged keys come first, explicit keys override.
    fn merge(&mut self, keys: Vec<Node>, values: Vec<Node>) -> Vec<(Node, Node)> {
        let mut explicit: Vec<(Node, Node)> = Vec::with_capacity(keys.len());
        let mut index: HashMap<KeyRepr, usize> = HashMap::default();
        let mut merged_sources: Vec<Node> = Vec::new();
        for (k, v) in keys.into_iter().zip(values) {
            if !k.quoted && k.as_str() == Some("<<") {
                match v.value {
                    Value::Map(_) => merged_sources.push(v),
                    Value::Seq(items) => {
                        for item in items {
                            if matches!(item.value, Value::Map(_)) {
                                merged_sources.push(item);
                            } else {
                                self.diagnostics.push(Diagnostic::warning(
                                    code::YAML_BAD_MERGE,
                                    item.span,
                                    "a merge key (<<) list may hold only mappings; this item is ignored",
                                )
                                .with_help("merge only mappings: write `<<: [*a, *b]` with anchors of mappings"));
                            }
                        }
                    }
                    _ => self.diagnostics.push(
                        Diagnostic::warning(
                            code::YAML_BAD_MERGE,
                            v.span,
                            "a merge key (<<) needs a mapping or a list of mappings; ignored",
                        )
                        .with_help("merge a mapping (`<<: *defaults`) or a list of them"),
                    ),
                }
                continue;
            }
            let repr = KeyRepr::of(&k);
            if let Some(&i) = index.get(&repr) {
                self.diagnostics.push(
                    Diagnostic::warning(
                        code::YAML_DUPLICATE_KEY,
                        k.span,
                        format!(
                            "duplicate key `{}` (first at line {}); the last one wins, as in Ansible",
                            k, explicit[i].0.span.line
                        ),
                    )
                    .with_help("remove one of the two keys"),
                );
                explicit[i].1 = v;
            } else {
                index.insert(repr, explicit.len());
                explicit.push((k, v));
            }
        }
        if merged_sources.is_empty() {
            return explicit;
        }
        let mut out: Vec<(Node, Node)> = Vec::new();
        let mut seen: HashSet<KeyRepr> = index.keys().cloned().collect();
        for src in merged_sources {
            if let Value::Map(pairs) = src.value {
                for (k, v) in pairs {
                    let repr = KeyRepr::of(&k);
                    if seen.insert(repr) {
                        out.push((k, v));
                    }
                }
            }
        }
        out.extend(explicit);
        out
    }
}

/// Levels of sequences and mappings in a node (0 for a scalar), without
/// recursion.
fn nesting(node: &Node) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(node, 0usize)];
    while let Some((n, d)) = todo.pop() {
        match &n.value {
            Value::Seq(items) => {
                deepest = deepest.max(d + 1);
                todo.extend(items.iter().map(|i| (i, d + 1)));
            }
            Value::Map(pairs) => {
                deepest = deepest.max(d + 1);
                todo.extend(pairs.iter().flat_map(|(k, v)| [(k, d + 1), (v, d + 1)]));
            }
            _ => {}
        }
    }
    deepest
}

fn close(start: Span, end: Span) -> Span {
    Span {
        end: end.end.max(start.start),
        ..start
    }
}

/// Identity of a mapping key for duplicate detection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyRepr {
    Scalar(u8, String),
    Complex(String),
}

impl KeyRepr {
    fn of(node: &Node) -> Self {
        match &node.value {
            Value::Null => KeyRepr::Scalar(0, String::new()),
            Value::Bool(b) => KeyRepr::Scalar(1, b.to_string()),
            Value::Int(i) => KeyRepr::Scalar(2, i.to_string()),
            Value::Float(f) => KeyRepr::Scalar(3, f.to_string()),
            Value::Str(s) => KeyRepr::Scalar(4, s.clone()),
            Value::Seq(_) | Value::Map(_) => KeyRepr::Complex(node.to_json().to_string()),
        }
    }
}

fn local_tag(tag: Option<&saphyr_parser::Tag>) -> Tag {
    match tag {
        None => Tag::None,
        Some(t) if t.handle == "!" && t.suffix == "unsafe" => Tag::Unsafe,
        Some(t) if t.handle == "!" && t.suffix == "vault" => Tag::Vault,
        Some(_) => Tag::Other,
    }
}

fn scalar(text: &str, style: ScalarStyle, tag: Option<&saphyr_parser::Tag>, span: Span) -> Node {
    let quoted = !matches!(style, ScalarStyle::Plain);
    let tag_kind = local_tag(tag);
    let core = tag.and_then(|t| {
        if t.handle == "tag:yaml.org,2002:" || t.handle == "!!" {
            Some(t.suffix.as_str())
        } else {
            None
        }
    });
    let value = match (&tag_kind, core) {
        (Tag::Unsafe | Tag::Vault, _) | (_, Some("str" | "binary")) => Value::Str(text.to_string()),
        (_, Some(core)) => resolve_core(core, text),
        (Tag::Other, None) => Value::Str(text.to_string()),
        (Tag::None, None) if quoted => Value::Str(text.to_string()),
        (Tag::None, None) => resolve_plain(text),
    };
    let tag = if core.is_some() { Tag::None } else { tag_kind };
    Node {
        value,
        span,
        tag,
        quoted,
    }
}

fn resolve_core(core: &str, text: &str) -> Value {
    match core {
        "null" => Value::Null,
        "bool" => resolve_bool(text).map_or_else(|| Value::Str(text.to_string()), Value::Bool),
        "int" => resolve_int(text).map_or_else(|| Value::Str(text.to_string()), Value::Int),
        "float" => resolve_float(text)
            .or_else(|| resolve_int(text).map(|i| i as f64))
            .map_or_else(|| Value::Str(text.to_string()), Value::Float),
        _ => resolve_plain(text),
    }
}

/// PyYAML's YAML 1.1 implicit resolver for plain scalars.
#[must_use]
pub fn resolve_plain(text: &str) -> Value {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Value::Null;
    }
    if let Some(b) = resolve_bool(text) {
        return Value::Bool(b);
    }
    // Every int and float form starts with a digit or `.` after its sign:
    // most scalars (names, paths, templates) are strings at the first byte.
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Value::Str(text.to_string());
    }
    if let Some(i) = resolve_int(text) {
        return Value::Int(i);
    }
    if let Some(f) = resolve_float(text) {
        return Value::Float(f);
    }
    Value::Str(text.to_string())
}

fn resolve_bool(text: &str) -> Option<bool> {
    match text {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn split_sign(text: &str) -> (i64, &str) {
    if let Some(r) = text.strip_prefix('-') {
        (-1, r)
    } else if let Some(r) = text.strip_prefix('+') {
        (1, r)
    } else {
        (1, text)
    }
}

/// YAML 1.1 ints: binary, octal (`0644`), decimal, hex, sexagesimal; `_` allowed.
fn resolve_int(text: &str) -> Option<i64> {
    let (sign, body) = split_sign(text);
    if body.is_empty() {
        return None;
    }
    let digits = |s: &str, radix: u32| -> Option<i64> {
        let cleaned: String = s.chars().filter(|&c| c != '_').collect();
        if cleaned.is_empty() {
            return None;
        }
        i64::from_str_radix(&cleaned, radix).ok()
    };
    let v = if let Some(b) = body.strip_prefix("0b") {
        if !b.chars().all(|c| matches!(c, '0' | '1' | '_')) {
            return None;
        }
        digits(b, 2)?
    } else if let Some(h) = body.strip_prefix("0x") {
        if !h.chars().all(|c| c.is_ascii_hexdigit() || c == '_') {
            return None;
        }
        digits(h, 16)?
    } else if body == "0" {
        0
    } else if body.starts_with('0') {
        if !body.chars().all(|c| matches!(c, '0'..='7' | '_')) {
            return None;
        }
        digits(body, 8)?
    } else if body.contains(':') {
        let mut parts = body.split(':');
        let first = parts.next()?;
        if first.is_empty()
            || !first.starts_with(|c: char| matches!(c, '1'..='9'))
            || !first.chars().all(|c| c.is_ascii_digit() || c == '_')
        {
            return None;
        }
        let mut acc = digits(first, 10)?;
        for p in parts {
            if p.is_empty() || p.len() > 2 || !p.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let n: i64 = p.parse().ok()?;
            if n > 59 || (p.len() == 2 && p.as_bytes()[0] > b'5') {
                return None;
            }
            acc = acc.checked_mul(60)?.checked_add(n)?;
        }
        acc
    } else {
        if !body.starts_with(|c: char| matches!(c, '1'..='9'))
            || !body.chars().all(|c| c.is_ascii_digit() || c == '_')
        {
            return None;
        }
        digits(body, 10)?
    };
    v.checked_mul(sign)
}

/// YAML 1.1 floats as PyYAML resolves them (a `.` is required unless inf/nan).
fn resolve_float(text: &str) -> Option<f64> {
    match text {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    let (sign, body) = split_sign(text);
    let sign = sign as f64;
    if body.contains(':') {
        // sexagesimal float: [0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
        let (int_part, frac) = body.split_once('.')?;
        if !frac.chars().all(|c| c.is_ascii_digit() || c == '_') {
            return None;
        }
        let mut parts = int_part.split(':');
        let first = parts.next()?;
        if first.is_empty() || !first.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let mut acc: f64 = first.replace('_', "").parse().ok()?;
        for p in parts {
            if p.is_empty() || p.len() > 2 || !p.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let n: f64 = p.parse().ok()?;
            if n > 59.0 {
                return None;
            }
            acc = acc * 60.0 + n;
        }
        let f: f64 = format!("0.{}", frac.replace('_', ""))
            .parse()
            .unwrap_or(0.0);
        return Some(sign * (acc + f));
    }
    // [0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?  |  \.[0-9_]+([eE][-+][0-9]+)?
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (ip, fp) = mantissa.split_once('.')?;
    if ip.is_empty() {
        if fp.is_empty() || !fp.starts_with(|c: char| c.is_ascii_digit() || c == '_') {
            return None;
        }
    } else if !ip.starts_with(|c: char| c.is_ascii_digit())
        || !ip.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    if !fp.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    if let Some(e) = exp {
        let digits = e.strip_prefix(['-', '+'])?;
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
    }
    let cleaned: String = format!("{ip}.{fp}").replace('_', "");
    let cleaned = if cleaned.ends_with('.') {
        format!("{cleaned}0")
    } else {
        cleaned
    };
    let cleaned = if cleaned.starts_with('.') {
        format!("0{cleaned}")
    } else {
        cleaned
    };
    let full = match exp {
        Some(e) => format!("{cleaned}e{e}"),
        None => cleaned,
    };
    full.parse::<f64>().ok().map(|f| sign * f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Node {
        let f = parse(FileId(0), text);
        assert!(!f.failed, "{:?}", f.diagnostics);
        f.docs.into_iter().next().expect("a document")
    }

    #[test]
    fn yaml11_scalars() {
        let n = one(
            "a: yes\nb: Off\nc: 0644\nd: 0x1F\ne: 1_000\nf: 1.5\ng: '1'\nh: ~\ni: 1:30\nj: yEs\nk: 1e3\nl: .5\n",
        );
        let get = |k: &str| n.get(k).unwrap().value.clone();
        assert_eq!(get("a"), Value::Bool(true));
        assert_eq!(get("b"), Value::Bool(false));
        assert_eq!(get("c"), Value::Int(420));
        assert_eq!(get("d"), Value::Int(31));
        assert_eq!(get("e"), Value::Int(1000));
        assert_eq!(get("f"), Value::Float(1.5));
        assert_eq!(get("g"), Value::Str("1".into()));
        assert_eq!(get("h"), Value::Null);
        assert_eq!(get("i"), Value::Int(90));
        assert_eq!(get("j"), Value::Str("yEs".into()));
        assert_eq!(get("k"), Value::Str("1e3".into()));
        assert_eq!(get("l"), Value::Float(0.5));
    }

    #[test]
    fn a_scalar_not_starting_with_a_digit_or_dot_is_no_number() {
        let texts = [
            "_1", "+_1", "-_1", "e5", "+", "-", "inf", "NaN", "x1", ":30", "_1:30", "_.5", "+x",
            "-.inf", "+.inf", ".nan", ".Inf", "._1", "0x1F", "-0b11", "1:30", "1_000", "1.",
            "+1.5", "-0o7", "0644",
        ];
        for t in texts {
            let body = t.strip_prefix(['-', '+']).unwrap_or(t);
            let number = resolve_int(t).is_some() || resolve_float(t).is_some();
            if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
                assert!(!number, "{t} resolves as a number");
                assert_eq!(resolve_plain(t), Value::Str(t.into()));
            }
        }
        assert_eq!(resolve_plain("-.inf"), Value::Float(f64::NEG_INFINITY));
        assert_eq!(resolve_plain("+1.5"), Value::Float(1.5));
        assert_eq!(resolve_plain("-0b11"), Value::Int(-3));
    }

    #[test]
    fn tags_unsafe_and_vault() {
        let n = one(
            "a: !unsafe '{{ x }}'\nb: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\nc: !!str 12\n",
        );
        assert_eq!(n.get("a").unwrap().tag, Tag::Unsafe);
        assert_eq!(n.get("b").unwrap().tag, Tag::Vault);
        assert_eq!(n.get("c").unwrap().value, Value::Str("12".into()));
    }

    #[test]
    fn merge_keys_and_duplicates() {
        let f = parse(
            FileId(0),
            "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n  z: 1\n  z: 2\n",
        );
        let n = &f.docs[0];
        let m = n.get("m").unwrap();
        assert_eq!(m.get("x").unwrap().value, Value::Int(1));
        assert_eq!(m.get("y").unwrap().value, Value::Int(3));
        assert_eq!(m.get("z").unwrap().value, Value::Int(2));
        assert_eq!(f.diagnostics.len(), 1);
        assert_eq!(f.diagnostics[0].code, code::YAML_DUPLICATE_KEY);
        assert_eq!(f.diagnostics[0].span.line, 6);
    }

    #[test]
    fn spans_point_at_lines() {
        let n = one("---\n- name: a\n  command: x\n- name: b\n");
        let items = n.as_seq().unwrap();
        assert_eq!(items[1].get("name").unwrap().span.line, 4);
        assert_eq!(items[0].get("command").unwrap().span.col, 12);
    }

    #[test]
    fn syntax_error_is_a_diagnostic() {
        let f = parse(FileId(0), "a: [1, 2\nb: c\n");
        assert!(f.failed);
        assert_eq!(f.diagnostics[0].code, code::YAML_SYNTAX);
    }

    #[test]
    fn alias_bomb_is_bounded() {
        let mut s = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = (b'a' + i - 1) as char;
            let cur = (b'a' + i) as char;
            s.push_str(&format!("{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        let f = parse(FileId(0), &s);
        assert!(f.failed);
        assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let s = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let f = parse(FileId(0), &s);
        assert!(f.failed);
        assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
    }

    #[test]
    fn tab_error_points_at_the_tab() {
        let f = parse(
            FileId(0),
            "---\n- name: Turn swap off\n\tcommand: swapoff -a\n",
        );
        assert!(f.failed);
        let d = &f.diagnostics[0];
        assert_eq!(d.code, code::YAML_SYNTAX);
        assert_eq!((d.span.line, d.span.col), (3, 1));
        assert!(d.help.as_deref().is_some_and(|h| h.contains("spaces")));
    }

    #[test]
    fn deep_block_nesting_is_bounded() {
        // 10,000 levels of block sequences on one line, and of block
        // mappings (one more space per level): caught at MAX_DEPTH, with no
        // recursion in the parser or the builder.
        let seq = format!("{}x\n", "- ".repeat(10_000));
        let f = parse(FileId(0), &seq);
        assert!(f.failed);
        assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
        let mut map = String::new();
        for i in 0..10_000 {
            map.push_str(&" ".repeat(i));
            map.push_str("k:\n");
        }
        let f = parse(FileId(0), &map);
        assert!(f.failed);
        assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
        assert_eq!(
            f.diagnostics[0].span.line,
            u32::try_from(MAX_DEPTH).unwrap() + 1
        );
    }

    #[test]
    fn aliases_cannot_nest_deeper_than_the_bound() {
        // Each anchor wraps the previous alias in 250 more levels: 35 of
        // them stay within the alias budget but would nest 9,000 deep.
        let mut s = format!("a0: &a0 {}x{}\n", "[".repeat(250), "]".repeat(250));
        for i in 1..36 {
            s.push_str(&format!(
                "a{i}: &a{i} {}*a{}{}\n",
                "[".repeat(250),
                i - 1,
                "]".repeat(250)
            ));
        }
        let f = parse(FileId(0), &s);
        assert!(f.failed);
        assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
        // a1 nests 1 + 250 + 250 levels; a2 would nest 751.
        assert_eq!(f.diagnostics[0].span.line, 3);
        assert!(f.diagnostics[0].message.contains("alias"));
        // Within the bound, an alias is expanded.
        let ok = parse(FileId(0), "a: &a [[1]]\nb: [[*a]]\n");
        assert!(!ok.failed);
        assert_eq!(nesting(&ok.docs[0]), 5);
    }

    #[test]
    fn flow_nesting_stops_at_the_parser_limit() {
        // saphyr-parser counts flow levels in a u8.
        let ok = format!(
            "{}{}",
            "[".repeat(MAX_FLOW_DEPTH),
            "]".repeat(MAX_FLOW_DEPTH)
        );
        assert!(!parse(FileId(0), &ok).failed);
        let deep = format!(
            "{}{}",
            "[".repeat(MAX_FLOW_DEPTH + 1),
            "]".repeat(MAX_FLOW_DEPTH + 1)
        );
        let f = parse(FileId(0), &deep);
        assert!(f.failed);
        assert_eq!(f.diagnostics[0].code, code::YAML_LIMIT);
    }

    #[test]
    fn multi_document() {
        let f = parse(FileId(0), "---\na: 1\n---\nb: 2\n");
        assert_eq!(f.docs.len(), 2);
    }

    #[test]
    fn non_ascii_offsets() {
        let f = parse(FileId(0), "é: ü\nb: c\n");
        let b = f.docs[0].get_entry("b").unwrap().0;
        assert_eq!(b.span.start as usize, "é: ü\n".len());
        assert_eq!(b.span.line, 2);
    }
}

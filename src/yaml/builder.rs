//! The parser's events turned into [`Node`]s: spans from the parser's
//! character indices, anchors and aliases (within the alias budget), `<<`
//! merge keys and duplicate keys (the last one wins), and the nesting
//! bounds, so that no input recurses or allocates without limit.

use super::scalar::{local_tag, scalar};
use super::{MAX_ALIAS_NODES, MAX_DEPTH, MAX_FLOW_DEPTH, Node, PARSER_BUG_HELP, Tag, Value};
use crate::diagnostic::{Diagnostic, code};
use crate::source::{FileId, Span};
use crate::{HashMap, HashSet};
use saphyr_parser::{Event, ScanError};

/// Maps the parser's character indices to byte offsets.
pub(super) struct Offsets<'a> {
    pub(super) text: &'a str,
    pub(super) ascii: bool,
    pub(super) table: Option<Vec<u32>>,
}

impl<'a> Offsets<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Offsets {
            text,
            ascii: text.is_ascii(),
            table: None,
        }
    }

    pub(super) fn byte(&mut self, char_index: usize) -> u32 {
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

pub(super) enum Frame {
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

pub(super) struct Builder<'a> {
    pub(super) file: FileId,
    /// The file's text, which spans point into.
    pub(super) source: &'a str,
    /// The text the parser reads: `source`, or its relaxed copy.
    pub(super) offsets: Offsets<'a>,
    pub(super) relaxed: Option<&'a super::relax::Relaxed>,
    pub(super) stack: Vec<Frame>,
    /// Anchored nodes with their node count and nesting depth.
    pub(super) anchors: HashMap<usize, (Node, usize, usize)>,
    pub(super) alias_budget: usize,
    pub(super) docs: Vec<Node>,
    pub(super) diagnostics: Vec<Diagnostic>,
}

impl Builder<'_> {
    pub(super) fn span(&mut self, start: usize, end: usize, line: usize, col: usize) -> Span {
        let mut span = Span {
            file: self.file,
            start: self.offsets.byte(start),
            end: self.offsets.byte(end.max(start)),
            line: u32::try_from(line.max(1)).unwrap_or(u32::MAX),
            col: u32::try_from(col + 1).unwrap_or(u32::MAX),
        };
        if let Some(r) = self.relaxed {
            span.start = r.origin(span.start);
            span.end = r.origin(span.end);
            span.col = r.column(span.line, span.col);
        }
        span
    }

    pub(super) fn scan_error(&mut self, e: &ScanError) -> Diagnostic {
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
        let text = self.source;
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

    pub(super) fn event(&mut self, event: Event<'_>, sp: Span) -> Result<(), Box<Diagnostic>> {
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

    pub(super) fn push(&mut self, node: Node) {
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
    pub(super) fn merge(&mut self, keys: Vec<Node>, values: Vec<Node>) -> Vec<(Node, Node)> {
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
pub(super) fn nesting(node: &Node) -> usize {
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
    pub(super) fn of(node: &Node) -> Self {
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

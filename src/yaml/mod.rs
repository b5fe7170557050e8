//! The only module that touches the YAML parser.
//!
//! Reads YAML the way Ansible does (PyYAML's YAML 1.1 resolver, `!unsafe` and
//! `!vault` tags, anchors, aliases and `<<` merge keys, duplicate keys with the
//! last one winning) into our own tree of [`Node`]s, each keeping its [`Span`](crate::source::Span).
//! It enforces the resource bounds (nesting depth, alias expansion) so that no
//! input can make it recurse or allocate without limit. It knows nothing of
//! Ansible's meaning: that is `ansible::*`.
//!
//! This file holds [`parse`] and its bounds; `node` is the tree it builds,
//! `builder` turns the parser's events into it (anchors, aliases, merge
//! keys, the bounds), `scalar` resolves plain scalars as PyYAML does, and
//! `relax` reads the multi-line quoted scalars libyaml accepts and the
//! parser does not.

mod builder;
mod node;
mod relax;
mod scalar;
#[cfg(test)]
mod tests;

pub use node::{Node, Tag, Value};
pub use scalar::resolve_plain;

use crate::HashMap;
use crate::diagnostic::Diagnostic;
use crate::source::FileId;
use builder::{Builder, Offsets};
use saphyr_parser::Parser;

/// Deepest nesting of sequences and mappings accepted in one document.
pub const MAX_DEPTH: usize = 512;
/// Most nodes that alias expansion may copy in one file (billion-laughs guard).
pub const MAX_ALIAS_NODES: usize = 200_000;
/// Deepest nesting of flow collections (`[`, `{`): the parser's own limit
/// (it counts flow levels in a `u8`); deeper input is `yaml-limit-exceeded`.
pub const MAX_FLOW_DEPTH: usize = 255;

/// Help for parser states that well-formed event streams never reach.
const PARSER_BUG_HELP: &str = "this is a bug in preflint's YAML reading; report it with the file";

/// A parsed file: its documents and the problems found while reading it.
#[derive(Debug, Default)]
pub struct YamlFile {
    pub docs: Vec<Node>,
    pub diagnostics: Vec<Diagnostic>,
    /// The file could not be read completely (syntax error or a bound hit).
    pub failed: bool,
}

/// Parses `text` (the content of `file`) into documents.
#[must_use]
pub fn parse(file: FileId, text: &str) -> YamlFile {
    let mut relaxed: Option<relax::Relaxed> = None;
    let mut attempts = 0;
    loop {
        let (result, ask) = read(file, text, relaxed.as_ref());
        let Some(ask) = ask.filter(|_| attempts < relax::MAX_RELAXED_SCALARS) else {
            return result;
        };
        attempts += 1;
        if !relaxed
            .get_or_insert_with(|| relax::Relaxed::new(text))
            .apply(ask)
        {
            return result;
        }
    }
}

/// One reading of `text`, or of its relaxed copy; with what to relax when
/// the parser stopped on an error libyaml does not raise.
fn read(
    file: FileId,
    text: &str,
    relaxed: Option<&relax::Relaxed>,
) -> (YamlFile, Option<relax::Ask>) {
    let parsed = relaxed.map_or(text, |r| r.text.as_str());
    let mut b = Builder {
        file,
        source: text,
        offsets: Offsets::new(parsed),
        relaxed,
        stack: Vec::new(),
        anchors: HashMap::default(),
        alias_budget: MAX_ALIAS_NODES,
        docs: Vec::new(),
        diagnostics: Vec::new(),
    };
    let mut failed = false;
    let mut ask = None;
    for item in Parser::new_from_str(parsed) {
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
                let at = b.offsets.byte(e.marker().index());
                ask = relax::Ask::of(e.info(), usize::try_from(at).unwrap_or(usize::MAX));
                let d = b.scan_error(&e);
                b.diagnostics.push(d);
                failed = true;
                break;
            }
        }
    }
    (
        YamlFile {
            docs: b.docs,
            diagnostics: b.diagnostics,
            failed,
        },
        ask,
    )
}

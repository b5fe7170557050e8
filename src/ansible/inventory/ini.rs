//! INI inventories: `[group]`, `[group:vars]` and `[group:children]`
//! sections, host lines split as `shlex.split` does, and values read as
//! Python literals.

use super::py_literal::py_literal;
use super::{Inventory, node};
use crate::diagnostic::{Diagnostic, code};
use crate::source::{FileId, Span};
use crate::yaml::{Node, Value};

/// An INI value as Ansible reads it: `ast.literal_eval`, else the text itself.
pub(super) fn ini_value(text: &str, span: Span) -> Node {
    match py_literal(text) {
        Some(v) => node(v.into_value(span), span),
        None => {
            let mut n = node(Value::Str(text.to_string()), span);
            n.quoted = true;
            n
        }
    }
}

/// `shlex.split(line, comments=True)` (POSIX mode), as Ansible splits a host
/// line; `None` for an unclosed quote or a trailing escape.
pub(super) fn shlex_split(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                cur.push(chars.next()?);
                in_word = true;
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => cur.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            e @ ('"' | '\\') => cur.push(e),
                            e => {
                                cur.push('\\');
                                cur.push(e);
                            }
                        },
                        c => cur.push(c),
                    }
                }
            }
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

impl Inventory {
    pub(super) fn ini(&mut self, text: &str, file: FileId) {
        let mut group = "ungrouped".to_string();
        let mut state = "hosts";
        let mut offset = 0usize;
        for (i, raw_line) in text.split('\n').enumerate() {
            let span = Span {
                file,
                start: u32::try_from(offset).unwrap_or(u32::MAX),
                end: u32::try_from(offset + raw_line.len()).unwrap_or(u32::MAX),
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
                col: 1,
            };
            offset += raw_line.len() + 1;
            let line = raw_line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some((name, kind)) = section_header(line) {
                let kind = kind.unwrap_or("hosts");
                if !matches!(kind, "hosts" | "children" | "vars") {
                    self.diagnostics.push(
                        Diagnostic::error(
                            code::SHAPE,
                            span,
                            format!("section [{name}:{kind}] has unknown type `{kind}`"),
                        )
                        .with_help("use [group], [group:children] or [group:vars]"),
                    );
                }
                self.group(name);
                group = name.to_string();
                state = match kind {
                    "children" => "children",
                    "vars" => "vars",
                    _ => "hosts",
                };
                continue;
            }
            if line.starts_with('[') && line.ends_with(']') {
                self.diagnostics.push(
                    Diagnostic::error(code::SHAPE, span, format!("invalid section entry `{line}`"))
                        .with_help(
                            "write [group], [group:children] or [group:vars], without spaces",
                        ),
                );
                continue;
            }
            match state {
                "hosts" => self.ini_host(line, &group, span),
                "children" => {
                    let child = line
                        .split(|c: char| c.is_whitespace() || c == '#')
                        .next()
                        .unwrap_or_default();
                    if child.is_empty() || child.contains([':', ']']) {
                        self.diagnostics.push(
                            Diagnostic::error(
                                code::SHAPE,
                                span,
                                format!("expected a group name, got `{line}`"),
                            )
                            .with_help("a [group:children] section lists one group name per line"),
                        );
                        continue;
                    }
                    self.group(child);
                    self.group(&group).children.insert(child.to_string());
                }
                _ => match line.split_once('=') {
                    Some((k, v)) => {
                        let value = ini_value(v.trim(), span);
                        self.set_group_var(&group.clone(), k.trim().to_string(), value);
                    }
                    None => self.diagnostics.push(
                        Diagnostic::error(
                            code::SHAPE,
                            span,
                            format!("expected key=value, got `{line}`"),
                        )
                        .with_help("a [group:vars] section holds one `name=value` per line"),
                    ),
                },
            }
        }
    }

    fn ini_host(&mut self, line: &str, group: &str, span: Span) {
        let Some(words) = shlex_split(line).filter(|w| !w.is_empty()) else {
            self.diagnostics.push(
                Diagnostic::error(
                    code::SHAPE,
                    span,
                    format!("cannot split host line `{line}` (unclosed quote?)"),
                )
                .with_help("close the quote; Ansible splits host lines like a shell"),
            );
            return;
        };
        let mut vars = Vec::new();
        for w in &words[1..] {
            match w.split_once('=') {
                Some((k, v)) => vars.push((k.to_string(), ini_value(v, span))),
                None => {
                    self.diagnostics.push(
                        Diagnostic::error(
                            code::SHAPE,
                            span,
                            format!("expected key=value host variable, got `{w}`"),
                        )
                        .with_help("write host variables as name=value after the host name"),
                    );
                    return;
                }
            }
        }
        let (hosts, port) = self.hosts_of(&words[0], span);
        for h in hosts {
            self.add_host(group, &h, port, span);
            self.host_vars
                .entry(h)
                .or_default()
                .extend(vars.iter().cloned());
        }
    }
}

/// `[name]` or `[name:kind]`, optionally followed by a comment.
fn section_header(line: &str) -> Option<(&str, Option<&str>)> {
    let rest = line.strip_prefix('[')?;
    let close = rest.find(']')?;
    let after = rest[close + 1..].trim_start();
    if !(after.is_empty() || after.starts_with('#')) {
        return None;
    }
    let inner = &rest[..close];
    let (name, kind) = match inner.split_once(':') {
        Some((n, k)) => (n, Some(k)),
        None => (inner, None),
    };
    let name_ok = !name.is_empty() && !name.chars().any(|c| c.is_whitespace() || c == ':');
    let kind_ok =
        kind.is_none_or(|k| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_'));
    (name_ok && kind_ok).then_some((name, kind))
}

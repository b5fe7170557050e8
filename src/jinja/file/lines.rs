//! Cuts a template's fragments into lines. A line being written when a
//! branch starts may end in several ways: each way is one alternative of
//! the line, under the conditions that lead to it; at the next newline
//! each alternative becomes a line of its own.

use super::interp::Frag;
use super::{Condition, FileText, Line, MAX_LINE_ALTERNATIVES, UNKNOWN_MARK};
use crate::jinja::{Unknown, UnknownWhy};
use std::collections::BTreeSet;

#[derive(Clone)]
struct Alt {
    text: String,
    unknown: BTreeSet<Unknown>,
    when: Vec<Condition>,
}

impl Alt {
    fn empty(when: &[Condition]) -> Alt {
        Alt {
            text: String::new(),
            unknown: BTreeSet::new(),
            when: when.to_vec(),
        }
    }

    fn is_empty(&self) -> bool {
        self.text.is_empty() && self.unknown.is_empty()
    }

    fn into_line(self, newline: bool) -> Line {
        Line {
            text: self.text,
            unknown: self.unknown.into_iter().collect(),
            when: self.when,
            newline,
        }
    }
}

struct State {
    lines: Vec<Line>,
    alts: Vec<Alt>,
}

pub(super) fn cut(frags: &[Frag], newline: &'static str) -> FileText {
    let mut st = State {
        lines: Vec::new(),
        alts: vec![Alt::empty(&[])],
    };
    walk(frags, &[], &mut st);
    for alt in st.alts {
        if !alt.is_empty() {
            st.lines.push(alt.into_line(false));
        }
    }
    FileText {
        lines: st.lines,
        newline,
    }
}

fn walk(frags: &[Frag], base: &[Condition], st: &mut State) {
    for f in frags {
        match f {
            Frag::Text(t) => {
                let mut parts = t.split('\n');
                let first = parts.next().unwrap_or_default();
                for alt in &mut st.alts {
                    alt.text.push_str(first);
                }
                for part in parts {
                    for alt in st.alts.drain(..) {
                        st.lines.push(alt.into_line(true));
                    }
                    let mut next = Alt::empty(base);
                    next.text.push_str(part);
                    st.alts.push(next);
                }
            }
            Frag::Unknown(why) => {
                for alt in &mut st.alts {
                    if !alt.text.ends_with(UNKNOWN_MARK) {
                        alt.text.push_str(UNKNOWN_MARK);
                    }
                    alt.unknown.extend(why.iter().cloned());
                }
            }
            Frag::Branch { cond, then, els } => {
                let before = std::mem::take(&mut st.alts);
                let mut after = Vec::new();
                for (body, holds) in [(then, true), (els, false)] {
                    let c = Condition {
                        holds,
                        ..cond.clone()
                    };
                    let mut inner = base.to_vec();
                    add(&mut inner, &c);
                    // Alternatives that already took the other way of the
                    // same test cannot take this one.
                    st.alts = before
                        .iter()
                        .filter(|a| !contradicts(&a.when, &c))
                        .cloned()
                        .map(|mut a| {
                            add(&mut a.when, &c);
                            a
                        })
                        .collect();
                    if st.alts.is_empty() {
                        continue;
                    }
                    walk(body, &inner, st);
                    after.append(&mut st.alts);
                }
                st.alts = if after.iter().all(Alt::is_empty) {
                    vec![Alt::empty(base)]
                } else if after.len() > MAX_LINE_ALTERNATIVES {
                    let mut a = Alt::empty(base);
                    a.text.push_str(UNKNOWN_MARK);
                    a.unknown.insert(Unknown::new(
                        "a line with more alternatives than the bound",
                        UnknownWhy::TooComplex,
                    ));
                    vec![a]
                } else {
                    after
                };
            }
        }
    }
}

fn add(when: &mut Vec<Condition>, c: &Condition) {
    if !when.contains(c) {
        when.push(c.clone());
    }
}

fn contradicts(when: &[Condition], c: &Condition) -> bool {
    when.iter()
        .any(|w| w.expr == c.expr && w.why == c.why && w.holds != c.holds)
}

/// Ansible appends the newlines Jinja took from the end of the source,
/// up to `wanted` trailing newlines.
pub(super) fn restore_trailing_newlines(file: &mut FileText, wanted: usize) {
    let mut have = 0;
    for l in file.lines.iter().rev() {
        if !l.newline {
            break;
        }
        have += 1;
        if !(l.text.is_empty() && l.is_certain()) {
            break;
        }
    }
    let mut missing = wanted.saturating_sub(have);
    if missing == 0 {
        return;
    }
    if let Some(last) = file.lines.last_mut()
        && !last.newline
    {
        last.newline = true;
        missing -= 1;
    }
    for _ in 0..missing {
        file.lines.push(Line {
            text: String::new(),
            unknown: Vec::new(),
            when: Vec::new(),
            newline: true,
        });
    }
}

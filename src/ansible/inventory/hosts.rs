//! Host patterns and ranges, as Ansible's `parse_address` and
//! `expand_hostname_range` read them: `host:port`, `[v6]:port`,
//! `node[01:10]`, `db-[a:f]`, steps and nested ranges, bounded in hosts and
//! bytes.

use super::{Inventory, node};
use crate::diagnostic::{Diagnostic, code};
use crate::source::Span;
use crate::yaml::Value;

/// Most hosts one host pattern may expand to (`node[0:99999999]`); the rest
/// are dropped with a diagnostic.
pub const MAX_RANGE_HOSTS: usize = 100_000;

/// Most bytes of host names one pattern may expand to (a long name times
/// many hosts).
pub const MAX_RANGE_BYTES: usize = 16 * 1024 * 1024;

/// Most `[...]` ranges in one host name (each one is a level of recursion).
const MAX_RANGES: usize = 16;

/// Splits `host:port` (`[host]:port` too) as `parse_address` does; the port
/// is kept only when what remains looks like a host name or address.
pub(super) fn split_port(pattern: &str) -> (String, Option<i64>) {
    let mut address = pattern.to_string();
    let mut port = None;
    if let Some(inner) = address.strip_prefix('[')
        && let Some((host, p)) = inner.rsplit_once("]:")
        && !host.is_empty()
        && !p.is_empty()
        && p.bytes().all(|b| b.is_ascii_digit())
    {
        port = p.parse().ok();
        address = host.to_string();
    }
    if let Some((host, p)) = address.rsplit_once(':')
        && !p.is_empty()
        && p.bytes().all(|b| b.is_ascii_digit())
        && colon_free_outside_brackets(host)
    {
        port = p.parse().ok();
        address = host.to_string();
    }
    if port.is_some() && !looks_like_host(&address) {
        return (pattern.to_string(), None);
    }
    (address, port)
}

/// `(?:[^:\[\]]|\[[^\]]*\])*`: no `:` except inside complete `[...]`.
fn colon_free_outside_brackets(s: &str) -> bool {
    let mut in_bracket = false;
    for c in s.chars() {
        match (c, in_bracket) {
            ('[', false) => in_bracket = true,
            (']', true) => in_bracket = false,
            (':' | ']', false) => return false,
            _ => {}
        }
    }
    !in_bracket
}

/// A host name (labels of word characters and `-`, with ranges), an IPv4 or
/// an IPv6 address: loosely what `parse_address` accepts.
fn looks_like_host(s: &str) -> bool {
    if s.is_empty() {
        return false;
    }
    if !colon_free_outside_brackets(s) {
        return s
            .chars()
            .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.' | '[' | ']'));
    }
    let mut in_bracket = false;
    let mut prev = '.';
    for c in s.chars() {
        match c {
            '[' if !in_bracket => in_bracket = true,
            ']' if in_bracket => in_bracket = false,
            _ if in_bracket => {
                if !(c.is_ascii_alphanumeric() || c == ':') {
                    return false;
                }
            }
            '.' if matches!(prev, '.' | '-' | '_') => return false,
            '.' => {}
            '-' if prev == '.' => return false,
            c if c.is_alphanumeric() || c == '_' || c == '-' => {}
            _ => return false,
        }
        prev = c;
    }
    !in_bracket && !matches!(prev, '.' | '-' | '_')
}

/// `detect_range`: a `[`, then a `:`, then a `]`.
fn has_range(s: &str) -> bool {
    match (s.find('['), s.find(':'), s.find(']')) {
        (Some(a), Some(b), Some(c)) => a < b && b < c,
        _ => false,
    }
}

const TOO_MANY: &str = "host range expands to more than";

const ASCII_LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Python's `int()` on a range bound (`' 7'`, `'+3'`, `'1_000'`).
fn py_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let v: i64 = digits.replace('_', "").parse().ok()?;
    if neg { v.checked_neg() } else { Some(v) }
}

/// Expands host ranges as `expand_hostname_range` does: the first `[...]`
/// first, then the rest of each name; `Err` with Ansible's complaint.
pub(super) fn expand_range(
    host: &str,
    out: &mut Vec<String>,
    budget: &mut (usize, usize),
) -> Result<(), String> {
    if !has_range(host) {
        if budget.0 == 0 || budget.1 < host.len() {
            return Err(format!(
                "{TOO_MANY} {MAX_RANGE_HOSTS} hosts or {MAX_RANGE_BYTES} bytes; the rest are dropped"
            ));
        }
        budget.0 -= 1;
        budget.1 -= host.len();
        out.push(host.to_string());
        return Ok(());
    }
    if host.matches('[').count() > MAX_RANGES {
        return Err(format!("more than {MAX_RANGES} ranges in one host name"));
    }
    let open = host.find('[').unwrap_or(0);
    let close = host[open..].find(']').map_or(host.len(), |c| open + c);
    let (head, inner, tail) = (&host[..open], &host[open + 1..close], &host[close + 1..]);
    if tail.contains('|') || inner.contains('|') || head.contains('|') {
        return Err("a host name may not contain `|` with a range".into());
    }
    let bounds: Vec<&str> = inner.split(':').collect();
    if bounds.len() != 2 && bounds.len() != 3 {
        return Err("host range must be begin:end or begin:end:step".into());
    }
    let beg = if bounds[0].is_empty() { "0" } else { bounds[0] };
    let end = bounds[1];
    if end.is_empty() {
        return Err("host range must specify end value".into());
    }
    let width = if beg.starts_with('0') && beg.len() > 1 {
        if beg.len() != end.len() {
            return Err("host range must specify equal-length begin and end formats".into());
        }
        beg.chars().count()
    } else {
        0
    };
    let step = match bounds.get(2) {
        Some(s) => py_int(s).ok_or_else(|| format!("invalid range step `{s}`"))?,
        None => 1,
    };
    let letters = match (ASCII_LETTERS.find(beg), ASCII_LETTERS.find(end)) {
        (Some(b), Some(e)) if step != 0 => {
            if b > e {
                return Err("host range must have begin <= end".into());
            }
            let chars: Vec<char> = ASCII_LETTERS[b..=e].chars().collect();
            Some(if step > 0 {
                chars
                    .into_iter()
                    .step_by(usize::try_from(step).unwrap_or(usize::MAX))
                    .map(String::from)
                    .collect::<Vec<_>>()
            } else {
                Vec::new()
            })
        }
        _ => None,
    };
    let fill = |s: String| format!("{s:0>width$}");
    match letters {
        Some(seq) => {
            for l in seq {
                expand_range(&format!("{head}{}{tail}", fill(l)), out, budget)?;
            }
        }
        None => {
            let (Some(b), Some(e)) = (py_int(beg), py_int(end)) else {
                return Err(format!("invalid host range `[{inner}]`"));
            };
            if step == 0 {
                return Err("host range step must not be zero".into());
            }
            // Python's range(b, e + 1, step), without overflow at the edges.
            let (stop, step) = (i128::from(e) + 1, i128::from(step));
            let mut i = i128::from(b);
            while (step > 0 && i < stop) || (step < 0 && i > stop) {
                expand_range(&format!("{head}{}{tail}", fill(i.to_string())), out, budget)?;
                i += step;
            }
        }
    }
    Ok(())
}

impl Inventory {
    /// Hosts of a pattern (ranges expanded) and its port, with a diagnostic
    /// for a bad or oversized range.
    pub(super) fn hosts_of(&mut self, pattern: &str, span: Span) -> (Vec<String>, Option<i64>) {
        let (pattern, port) = split_port(pattern);
        let mut out = Vec::new();
        let mut budget = (MAX_RANGE_HOSTS, MAX_RANGE_BYTES);
        if let Err(e) = expand_range(&pattern, &mut out, &mut budget) {
            let help = if e.starts_with(TOO_MANY) {
                "split the range into smaller ones; only the first hosts are analysed"
            } else {
                "write the range as [begin:end] or [begin:end:step], e.g. node[01:10]"
            };
            self.diagnostics.push(
                Diagnostic::warning(code::SHAPE, span, format!("host `{pattern}`: {e}"))
                    .with_help(help),
            );
        }
        (out, port)
    }

    pub(super) fn add_host(&mut self, group: &str, host: &str, port: Option<i64>, span: Span) {
        self.group(group).hosts.insert(host.to_string());
        let vars = self.host_vars.entry(host.to_string()).or_default();
        if let Some(p) = port {
            vars.push(("ansible_port".into(), node(Value::Int(p), span)));
        }
    }
}

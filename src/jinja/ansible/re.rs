//! Python's `re` for the regex filters and tests (`regex_search`,
//! `regex_findall`, `regex_replace`, `regex_escape`, `match`, `search`,
//! `regex`): patterns and replacement templates translated to the `regex`
//! crate's dialect, and what it cannot express reported as unsupported,
//! never answered differently.

use super::super::Fail;
use super::super::py::{self};
use super::regex_cache;
use super::{Args, expect_str, guard_len};
use ::regex::Regex;
use minijinja::value::Value;
use std::borrow::Cow;
use std::fmt::Write as _;

/// Python's `$` (without `re.M`) also matches just before a final newline;
/// the `regex` crate's does not. Returns the pattern with each bare `$`
/// (outside classes, unescaped) widened to `\n?\z`, or `None` when there
/// is none. The widened form consumes that newline, so it is only used
/// where just the yes/no answer matters.
fn python_dollar(pattern: &str) -> Option<String> {
    let (mut out, mut found, mut in_class, mut escaped) = (String::new(), false, false, false);
    for c in pattern.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if in_class {
            in_class = c != ']';
        } else if c == '[' {
            in_class = true;
        } else if c == '$' {
            found = true;
            out.push_str("(?:\\n?\\z)");
            continue;
        }
        out.push(c);
    }
    found.then_some(out)
}

/// The text a regex filter works on; unsupported when Python's `$` would
/// match before a trailing newline (see [`python_dollar`]).
fn regex_subject(v: &Value, pattern: &str, multiline: bool) -> Result<String, Fail> {
    let text = py::py_str(v);
    if !multiline && text.ends_with('\n') && python_dollar(pattern).is_some() {
        return Err(Fail::TooComplex("`$` before a trailing newline".into()));
    }
    Ok(text)
}

/// Translates a Python regular expression to the `regex` crate's dialect.
/// Constructs the crate cannot express (look-around, back-references)
/// fail to compile and are reported as unsupported.
fn compile_regex(pattern: &str, ignorecase: bool, multiline: bool) -> Result<Regex, Fail> {
    let translated = pattern.replace("\\Z", "\\z");
    let mut flags = String::new();
    if ignorecase {
        flags.push('i');
    }
    if multiline {
        flags.push('m');
    }
    let full = if flags.is_empty() {
        translated
    } else {
        format!("(?{flags}){translated}")
    };
    regex_cache::compiled(full, |full| {
        ::regex::RegexBuilder::new(full)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| Fail::TooComplex(format!("regular expression not supported: {e}")))
    })
}

/// Python `re.sub` replacement template to the `regex` crate's syntax.
pub(super) fn translate_replacement(rep: &str) -> Result<String, Fail> {
    let mut out = String::new();
    let mut chars = rep.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => out.push_str("$$"),
            '\\' => match chars.next() {
                Some(d) if d.is_ascii_digit() => {
                    let mut num = d.to_string();
                    if let Some(e) = chars.next_if(char::is_ascii_digit) {
                        num.push(e);
                    }
                    let _ = write!(out, "${{{num}}}");
                }
                Some('g') => {
                    if chars.next() != Some('<') {
                        return Err(Fail::Invalid("bad group reference in replacement".into()));
                    }
                    let name: String = chars.by_ref().take_while(|c| *c != '>').collect();
                    let _ = write!(out, "${{{name}}}");
                }
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('\\') => out.push('\\'),
                Some(other) if other.is_ascii_alphabetic() => {
                    return Err(Fail::Invalid(format!(
                        "bad escape \\{other} in replacement"
                    )));
                }
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => return Err(Fail::Invalid("bad escape (end of pattern)".into())),
            },
            c => out.push(c),
        }
    }
    Ok(out)
}

pub(super) fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\u{b}\u{c}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub(super) fn regex_search(v: &Value, args: &Args) -> Result<Value, Fail> {
    let pattern = expect_str(
        args.pos
            .first()
            .ok_or_else(|| Fail::Invalid("regex_search requires a pattern".into()))?,
        "regex_search",
    )?;
    let ignorecase = args
        .kw
        .iter()
        .any(|(k, v)| k == "ignorecase" && v.is_true());
    let multiline = args.kw.iter().any(|(k, v)| k == "multiline" && v.is_true());
    let text = regex_subject(v, pattern, multiline)?;
    let re = compile_regex(pattern, ignorecase, multiline)?;
    let Some(caps) = re.captures(&text) else {
        return Ok(Value::from(()));
    };
    let groups = &args.pos[1..];
    if groups.is_empty() {
        return Ok(Value::from(caps.get(0).map_or("", |m| m.as_str())));
    }
    let mut out = Vec::new();
    for g in groups {
        let g = expect_str(g, "regex_search group")?;
        let m = if let Some(name) = g.strip_prefix("\\g<").and_then(|r| r.strip_suffix('>')) {
            match name.parse::<usize>() {
                Ok(i) => caps.get(i),
                Err(_) => caps.name(name),
            }
        } else if let Some(num) = g.strip_prefix('\\') {
            caps.get(
                num.parse::<usize>()
                    .map_err(|_| Fail::Invalid("Unknown argument".into()))?,
            )
        } else {
            return Err(Fail::Invalid("Unknown argument".into()));
        };
        out.push(m.map_or(Value::from(()), |m| Value::from(m.as_str())));
    }
    Ok(Value::from(out))
}

pub(super) fn regex_findall(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&["regex", "multiline", "ignorecase"])?;
    let pattern = py::py_str(
        args.get(0, "regex")
            .ok_or_else(|| Fail::Invalid("regex_findall requires a pattern".into()))?,
    );
    let multiline = args.truthy(1, "multiline")?;
    let text = regex_subject(v, &pattern, multiline)?;
    let re = compile_regex(&pattern, args.truthy(2, "ignorecase")?, multiline)?;
    let groups = re.captures_len() - 1;
    let mut out = Vec::new();
    for caps in re.captures_iter(&text) {
        guard_len(out.len())?;
        let group = |i: usize| Value::from(caps.get(i).map_or("", |m| m.as_str()));
        out.push(match groups {
            0 => group(0),
            1 => group(1),
            n => py::make_seq((1..=n).map(group).collect(), true),
        });
    }
    Ok(Value::from(out))
}

pub(super) fn regex_replace(v: &Value, args: &Args) -> Result<Value, Fail> {
    args.expect(&[
        "pattern",
        "replacement",
        "ignorecase",
        "multiline",
        "count",
        "mandatory_count",
    ])?;
    let pattern = args.str_or(0, "pattern", "")?;
    let replacement = translate_replacement(&args.str_or(1, "replacement", "")?)?;
    let multiline = args.truthy(3, "multiline")?;
    let text = regex_subject(v, &pattern, multiline)?;
    let re = compile_regex(&pattern, args.truthy(2, "ignorecase")?, multiline)?;
    let count = args
        .get(4, "count")
        .and_then(|c| i64::try_from(c.clone()).ok())
        .unwrap_or(0);
    let mandatory = args
        .get(5, "mandatory_count")
        .and_then(|c| i64::try_from(c.clone()).ok())
        .unwrap_or(0);
    let matches = re.find_iter(&text).count();
    let limit = usize::try_from(count).unwrap_or(0);
    let subs = if limit == 0 {
        matches
    } else {
        matches.min(limit)
    };
    if mandatory != 0 && usize::try_from(mandatory).ok() != Some(subs) {
        return Err(Fail::Invalid(format!(
            "'{pattern}' should match {mandatory} times, but matches {subs} times"
        )));
    }
    // Bound the output before building it: each substitution adds the
    // replacement plus, per group reference, at most the whole input.
    let refs = replacement.matches("${").count();
    let per = replacement
        .len()
        .saturating_add(refs.saturating_mul(text.len()));
    guard_len(text.len().saturating_add(subs.saturating_mul(per)))?;
    let out = re.replacen(&text, limit, replacement.as_str());
    guard_len(out.len())?;
    Ok(Value::from(out.into_owned()))
}

pub(super) fn regex_test(v: &Value, args: &Args, anchored: Option<bool>) -> Result<bool, Fail> {
    let names: &[&str] = if anchored.is_some() {
        &["pattern", "ignorecase", "multiline"]
    } else {
        &["pattern", "ignorecase", "multiline", "match_type"]
    };
    args.expect(names)?;
    let text = py::py_str(v);
    let pattern = args.str_or(0, "pattern", "")?;
    let multiline = args.truthy(2, "multiline")?;
    let pattern = if multiline {
        None
    } else {
        python_dollar(&pattern)
    }
    .unwrap_or(pattern);
    let re = compile_regex(&pattern, args.truthy(1, "ignorecase")?, multiline)?;
    let match_type: Cow<'_, str> = match anchored {
        Some(true) => "match".into(),
        Some(false) => "search".into(),
        None => args.str_or(3, "match_type", "search")?.into(),
    };
    match match_type.as_ref() {
        "match" => Ok(re.find(&text).is_some_and(|m| m.start() == 0)),
        "search" => Ok(re.is_match(&text)),
        "fullmatch" => Ok(compile_regex(
            &format!("\\A(?:{pattern})\\z"),
            args.truthy(1, "ignorecase")?,
            args.truthy(2, "multiline")?,
        )?
        .is_match(&text)),
        other => Err(Fail::TooComplex(format!("regex match_type {other}"))),
    }
}

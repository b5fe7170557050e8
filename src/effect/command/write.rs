//! Text a command writes: `echo`, `printf` and `cat` as the source of a
//! redirection or a pipe, `tee`, and the redirection targets: a file
//! written or appended to, a live sysctl under `/proc/sys`, a probe of
//! `/dev/tcp`.

use super::{Call, Cx, Step, Stream, Word};
use crate::effect::{Content, Edit, EffectKind, Known, Timing};
use std::borrow::Cow;
use std::sync::Arc;

/// `echo [-neE] WORDS`: the words joined by spaces and a newline.
/// `sh` is `dash` on Debian, whose `echo` reads backslash escapes without
/// `-e` and prints `-e` itself: text with a backslash and no flag is only
/// partly known.
pub(super) fn echo<'a>(call: &Call<'_, 'a>) -> Step<'a> {
    let mut newline = true;
    let mut escapes = None;
    let mut i = 0;
    while let Some(a) = call.args.get(i).map(Word::as_str) {
        let Some(flags) = a.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.bytes().all(|c| matches!(c, b'n' | b'e' | b'E')) {
            break;
        }
        for c in flags.bytes() {
            match c {
                b'n' => newline = false,
                b'e' => escapes = Some(true),
                _ => escapes = Some(false),
            }
        }
        i += 1;
    }
    let words = &call.args[i..];
    let mut text = String::new();
    for (k, w) in words.iter().enumerate() {
        if k > 0 {
            text.push(' ');
        }
        text.push_str(w.as_str());
    }
    let mut known = if words.iter().any(|w| w.expands) {
        Known::Partly
    } else {
        Known::Known
    };
    match escapes {
        Some(true) => text = unescape(&text).0,
        None if text.contains('\\') => known = Known::Partly,
        _ => {}
    }
    if newline {
        text.push('\n');
    }
    Step {
        recognised: call.consumed,
        stdout: Stream::Text(Cow::Owned(text), known),
        consumes: 0,
    }
}

/// `printf FORMAT [ARGS]`: `%s`, `%b`, `%d`, `%i`, `%u` and `%%` are
/// applied (the format repeats while arguments remain); any other
/// conversion leaves the text unknown.
pub(super) fn printf<'a>(call: &Call<'_, 'a>) -> Step<'a> {
    let mut args = call.args;
    if args.first().is_some_and(|w| w.as_str() == "--") {
        args = &args[1..];
    }
    let stdout = match args.split_first() {
        Some((fmt, rest)) if !fmt.as_str().starts_with("-v") => {
            let known = if args.iter().any(|w| w.expands) {
                Known::Partly
            } else {
                Known::Known
            };
            format(fmt.as_str(), rest)
                .map_or(Stream::Unknown, |t| Stream::Text(Cow::Owned(t), known))
        }
        _ => Stream::Unknown,
    };
    Step {
        recognised: call.consumed,
        stdout,
        consumes: 0,
    }
}

fn format(fmt: &str, args: &[Word<'_>]) -> Option<String> {
    let mut out = String::new();
    let mut next = 0;
    loop {
        let mut used = false;
        let mut chars = fmt.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(e) => push_escape(&mut out, e),
                    None => out.push('\\'),
                },
                '%' => {
                    let conv = chars.next();
                    if conv == Some('%') {
                        out.push('%');
                        continue;
                    }
                    let arg = args.get(next).map_or("", Word::as_str);
                    next += 1;
                    used = true;
                    match conv {
                        Some('s') => out.push_str(arg),
                        Some('b') => {
                            let (t, stop) = unescape(arg);
                            out.push_str(&t);
                            if stop {
                                return Some(out);
                            }
                        }
                        Some('d' | 'i' | 'u') => {
                            out.push_str(if arg.is_empty() { "0" } else { arg });
                        }
                        _ => return None,
                    }
                }
                c => out.push(c),
            }
        }
        if !used || next >= args.len() {
            return Some(out);
        }
    }
}

/// `echo -e` and `%b` escapes; `true` when `\c` stops the output.
fn unescape(s: &str) -> (String, bool) {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('c') => return (out, true),
            Some(e) => push_escape(&mut out, e),
            None => out.push('\\'),
        }
    }
    (out, false)
}

fn push_escape(out: &mut String, e: char) {
    match e {
        'n' => out.push('\n'),
        't' => out.push('\t'),
        'r' => out.push('\r'),
        '\\' => out.push('\\'),
        '"' => out.push('"'),
        '\'' => out.push('\''),
        'a' => out.push('\u{7}'),
        other => {
            out.push('\\');
            out.push(other);
        }
    }
}

/// `cat` with no file: its standard input (a here-document, a pipe);
/// `cat FILE` gives text not known here.
pub(super) fn cat<'a>(call: &Call<'_, 'a>) -> Step<'a> {
    // `-` is standard input.
    let files = call.args.iter().any(|w| !w.as_str().starts_with('-'));
    let stdout = if files {
        Stream::Unknown
    } else {
        match &call.stdin {
            Stream::Nothing => Stream::Unknown,
            s => s.clone(),
        }
    };
    Step {
        recognised: call.consumed,
        stdout,
        consumes: 0,
    }
}

/// `tee [-a] FILE...`: its standard input written to each file, and
/// passed on.
pub(super) fn tee<'a>(call: &Call<'_, 'a>, cx: &mut Cx) -> Step<'a> {
    let mut append = false;
    let mut recognised = true;
    let mut options = true;
    for w in call.args {
        let a = w.as_str();
        if options && a == "--" {
            options = false;
        } else if options && a.starts_with("--") {
            append |= a == "--append";
        } else if options && a.len() > 1 && a.starts_with('-') {
            append |= a.contains('a');
        } else {
            recognised &= to_path(a, &call.stdin, append, call.text, cx);
        }
    }
    Step {
        recognised,
        stdout: call.stdin.clone(),
        consumes: 0,
    }
}

/// `content` written (or appended) to the file `path`; `false` when the
/// write is not understood (a live sysctl set to unknown text).
pub(super) fn to_path(
    path: &str,
    content: &Stream<'_>,
    append: bool,
    what: &str,
    cx: &mut Cx,
) -> bool {
    if connects(path, what, cx) || path.starts_with("/dev/") {
        return true;
    }
    if let Some(key) = path.strip_prefix("/proc/sys/") {
        let Stream::Text(text, _) = content else {
            return false;
        };
        cx.push(
            EffectKind::SysctlSet {
                key: crate::sysctl::normalize_key(key),
                value: text.trim().to_string(),
                file: None,
            },
            Timing::NOW,
        );
        return true;
    }
    // Kernel interfaces hold until the next boot only.
    let timing = if path.starts_with("/proc/") || path.starts_with("/sys/") {
        Timing::NOW
    } else {
        Timing::BOTH
    };
    let kind = if append {
        let text = match content {
            Stream::Text(t, _) => t.strip_suffix('\n').unwrap_or(t).to_string(),
            _ => String::new(),
        };
        EffectKind::FileEdited {
            path: path.to_string(),
            edit: Edit {
                text,
                regexp: None,
                remove: false,
            },
        }
    } else {
        EffectKind::FileWritten {
            path: path.to_string(),
            mode: None,
            content: match content {
                Stream::Text(t, known) => Content::new(Arc::from(t.as_ref()), *known, false),
                _ => unknown_content(),
            },
            // The shell and `tee` open the path, following a link there.
            replaces_link: false,
        }
    };
    cx.push(kind, timing);
    true
}

/// A redirection from or to `/dev/tcp/HOST/PORT`, which bash opens as a
/// connection: a probe of the port. `false` for any other path.
pub(super) fn connects(path: &str, what: &str, cx: &mut Cx) -> bool {
    let Some(rest) = path
        .strip_prefix("/dev/tcp/")
        .or_else(|| path.strip_prefix("/dev/udp/"))
    else {
        return false;
    };
    cx.push(
        EffectKind::Check {
            msg: None,
            what: what.to_string(),
            port: rest.rsplit_once('/').map(|(_, p)| p.to_string()),
        },
        Timing::NOW,
    );
    true
}

pub(super) fn unknown_content() -> Content {
    Content::new(Arc::from(""), Known::Unknown, false)
}

//! Commands that look at the node without changing it: what listens on a
//! port (`ss`, `netstat`, `lsof` and the filters after them, `fuser`),
//! whether a port answers (`nc -z`, `curl`, `wget --spider`). Each is a
//! [`EffectKind::Check`] per port it names (one without a port when it
//! names none).
//!
//! `fuser -k PORT/tcp` kills what holds the port: it frees the port, which
//! no effect says, so it is not recognised (an opaque command, which the
//! catalog's patterns on the line still see). `curl`/`wget` writing a
//! file are file writes; piping them is the consumer's business.

use super::{Call, Cx, Step, Stream, Word, basename, operands, program_index, write};
use crate::effect::{EffectKind, Timing};

fn check(cx: &mut Cx, what: &str, ports: &[String]) {
    if ports.is_empty() {
        cx.push(
            EffectKind::Check {
                msg: None,
                what: what.to_string(),
                port: None,
            },
            Timing::NOW,
        );
    }
    for p in ports {
        cx.push(
            EffectKind::Check {
                msg: None,
                what: what.to_string(),
                port: Some(p.clone()),
            },
            Timing::NOW,
        );
    }
}

/// The programs that filter a listing piped into them.
fn is_filter(name: &str) -> bool {
    matches!(
        name,
        "grep"
            | "egrep"
            | "fgrep"
            | "rg"
            | "awk"
            | "gawk"
            | "mawk"
            | "wc"
            | "head"
            | "tail"
            | "cut"
            | "sort"
            | "uniq"
            | "tr"
            | "column"
    )
}

/// `ss`/`netstat`/`lsof` and the filters piped after them: the ports named
/// in the listing's arguments and in the filters' (`ss -ltn | grep
/// :6443`). The check's text is the whole pipeline from the listing on.
pub(super) fn listening<'a>(call: &Call<'_, 'a>, cx: &mut Cx) -> Step<'a> {
    let cmds = call.cmds;
    let mut ports = Vec::new();
    for w in call.args {
        ports_in(w.as_str(), &mut ports);
    }
    let mut last = call.index;
    while cmds[last].pipe && last + 1 < cmds.len() {
        let next = &cmds[last + 1];
        let Some(p) = program_index(&next.words) else {
            break;
        };
        if !is_filter(basename(next.words[p].as_str())) {
            break;
        }
        for w in &next.words[p + 1..] {
            ports_in(w.as_str(), &mut ports);
        }
        last += 1;
    }
    let what = call
        .line
        .get(cmds[call.index].start..cmds[last].end)
        .unwrap_or(call.text);
    check(cx, what, &ports);
    Step {
        recognised: true,
        stdout: Stream::Unknown,
        consumes: last - call.index,
    }
}

/// Port numbers written in `text`: a run of 2 to 5 digits (up to 65535)
/// that is not part of a word, an address or an option (`:6443`,
/// `'6443|2379'`, `6443/tcp`; not `10.0.0.1`, `-4`, `$2`).
fn ports_in(text: &str, out: &mut Vec<String>) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let before = start.checked_sub(1).map(|k| b[k]);
        let after = b.get(i).copied();
        let joined = |c: Option<u8>| {
            c.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'-'))
        };
        if joined(before) || joined(after) || !(2..=5).contains(&(i - start)) {
            continue;
        }
        let digits = &text[start..i];
        if digits
            .parse::<u32>()
            .is_ok_and(|n| (1..=65535).contains(&n))
            && !out.iter().any(|p| p == digits)
        {
            out.push(digits.to_string());
        }
    }
}

/// `fuser [-n tcp] PORT[/tcp]...`: who holds the port. With `-k` it kills
/// the holder instead: not a check.
pub(super) fn fuser(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    for w in call.args {
        let a = w.as_str();
        if a == "--kill" || (a.starts_with('-') && !a.starts_with("--") && a.contains('k')) {
            return false;
        }
    }
    let ports: Vec<String> = operands(call.args, &["-n", "--namespace"])
        .iter()
        .filter_map(|w| {
            let port = w.as_str().split('/').next().unwrap_or_default();
            is_number(port).then(|| port.to_string())
        })
        .collect();
    if ports.is_empty() {
        return false;
    }
    check(cx, call.text, &ports);
    true
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

/// `nc -z HOST PORT...`: whether the ports answer. Without `-z`, `nc`
/// connects or listens: not a check.
pub(super) fn nc(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    const WITH_ARG: [&str; 14] = [
        "-w", "-i", "-s", "-p", "-x", "-X", "-q", "-W", "-T", "-I", "-O", "-M", "-m", "-P",
    ];
    let zero_io = call.args.iter().map(Word::as_str).any(|a| {
        a.starts_with('-') && !a.starts_with("--") && !WITH_ARG.contains(&a) && a.contains('z')
    });
    if !zero_io {
        return false;
    }
    let ops = operands(call.args, &WITH_ARG);
    let ports: Vec<String> = ops
        .iter()
        .skip(1)
        .map(|w| w.as_str())
        .filter(|p| p.split('-').all(is_number))
        .map(str::to_string)
        .collect();
    if ports.is_empty() {
        return false;
    }
    check(cx, call.text, &ports);
    true
}

/// The port written in a URL (`https://10.0.0.1:6443/healthz`).
fn url_port(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let port = match host_port.rsplit_once(']') {
        Some((_, p)) => p.strip_prefix(':')?,
        None => host_port.rsplit_once(':')?.1,
    };
    is_number(port).then(|| port.to_string())
}

/// `curl URL`: a check of the URL's port; `curl -o FILE URL` writes the
/// file; its output piped or redirected is the consumer's. Sending data
/// or another method than GET is not a check.
pub(super) fn curl<'a>(call: &Call<'_, 'a>, cx: &mut Cx) -> Step<'a> {
    const WITH_ARG: &[u8] = b"oHdXuAeTFmwxKbcrECyYzUQ";
    const LONG_WITH_ARG: [&str; 34] = [
        "--output",
        "--header",
        "--data",
        "--request",
        "--user",
        "--user-agent",
        "--referer",
        "--upload-file",
        "--form",
        "--max-time",
        "--write-out",
        "--proxy",
        "--config",
        "--cookie",
        "--cookie-jar",
        "--range",
        "--cert",
        "--cacert",
        "--capath",
        "--key",
        "--connect-timeout",
        "--retry",
        "--retry-delay",
        "--retry-max-time",
        "--resolve",
        "--interface",
        "--limit-rate",
        "--data-binary",
        "--data-raw",
        "--data-urlencode",
        "--unix-socket",
        "--netrc-file",
        "--output-dir",
        "--url",
    ];
    let mut output = None;
    let mut url = None;
    let mut sends = false;
    let mut remote_name = false;
    let args = call.args;
    let mut i = 0;
    while let Some(a) = args.get(i).map(Word::as_str) {
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            let name = &a[..2 + name.len()];
            let value = if value.is_none() && LONG_WITH_ARG.contains(&name) {
                i += 1;
                args.get(i - 1).map(Word::as_str)
            } else {
                value
            };
            match name {
                "--output" => output = value,
                "--url" => url = value,
                "--remote-name" | "--remote-name-all" => remote_name = true,
                "--request" => sends |= !matches!(value, Some("GET" | "HEAD")),
                "--data" | "--data-binary" | "--data-raw" | "--data-urlencode" | "--form"
                | "--upload-file" | "--json" => sends = true,
                _ => {}
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            for (k, c) in a.char_indices().skip(1) {
                if c == 'O' {
                    remote_name = true;
                }
                let Ok(byte) = u8::try_from(c) else { break };
                if WITH_ARG.contains(&byte) {
                    let rest = &a[k + 1..];
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).map(Word::as_str)
                    } else {
                        Some(rest)
                    };
                    match c {
                        'o' => output = value,
                        'X' => sends |= !matches!(value, Some("GET" | "HEAD")),
                        'd' | 'F' | 'T' => sends = true,
                        _ => {}
                    }
                    break;
                }
            }
            continue;
        }
        url.get_or_insert(a);
    }
    if sends || remote_name {
        return Step::done(false);
    }
    if let Some(path) = output {
        let ok = write::to_path(path, &Stream::Unknown, false, call.text, cx);
        return Step {
            recognised: ok,
            stdout: Stream::Nothing,
            consumes: 0,
        };
    }
    if call.consumed {
        return Step {
            recognised: true,
            stdout: Stream::Unknown,
            consumes: 0,
        };
    }
    let ports: Vec<String> = url.and_then(url_port).into_iter().collect();
    check(cx, call.text, &ports);
    Step::done(true)
}

/// `wget --spider URL`: a check; `wget -O FILE URL` writes the file
/// (`-O -`: standard output). Without `-O` it writes a file named after
/// the URL in the working directory: not recognised.
pub(super) fn wget<'a>(call: &Call<'_, 'a>, cx: &mut Cx) -> Step<'a> {
    const WITH_ARG: &[u8] = b"OoaPtTweUiQlAR";
    let mut output = None;
    let mut url = None;
    let mut spider = false;
    let args = call.args;
    let mut i = 0;
    while let Some(a) = args.get(i).map(Word::as_str) {
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "spider" => spider = true,
                "output-document" => {
                    output = value.or_else(|| {
                        i += 1;
                        args.get(i - 1).map(Word::as_str)
                    });
                }
                "post-data" | "post-file" | "method" | "body-data" | "body-file" => {
                    return Step::done(false);
                }
                _ => {}
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            for (k, c) in a.char_indices().skip(1) {
                let Ok(byte) = u8::try_from(c) else { break };
                if WITH_ARG.contains(&byte) {
                    let rest = &a[k + 1..];
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).map(Word::as_str)
                    } else {
                        Some(rest)
                    };
                    if c == 'O' {
                        output = value;
                    }
                    break;
                }
            }
            continue;
        }
        url.get_or_insert(a);
    }
    let ports = || url.and_then(url_port).into_iter().collect::<Vec<_>>();
    match output {
        _ if spider => {
            check(cx, call.text, &ports());
            Step::done(true)
        }
        Some("-") if call.consumed => Step {
            recognised: true,
            stdout: Stream::Unknown,
            consumes: 0,
        },
        Some("-") => {
            check(cx, call.text, &ports());
            Step::done(true)
        }
        Some(path) => {
            let ok = write::to_path(path, &Stream::Unknown, false, call.text, cx);
            Step {
                recognised: ok,
                stdout: Stream::Nothing,
                consumes: 0,
            }
        }
        None => Step::done(false),
    }
}

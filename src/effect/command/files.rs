//! Files removed, linked, copied and moved by commands: `rm`, `ln -s`,
//! `cp`, `mv`, `install`. Their content is not known here. A glob, a
//! target directory (`-t`, a trailing `/`, more than one source) or a hard
//! link is not recognised.

use super::{Call, Cx, Word, operands, write};
use crate::effect::{EffectKind, Timing};

fn plain(w: &Word<'_>) -> bool {
    !w.glob && !w.as_str().is_empty() && !w.as_str().ends_with('/')
}

fn short_flag(args: &[Word<'_>], flag: char, long: &str) -> bool {
    args.iter().map(Word::as_str).any(|a| {
        a == long || (a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a.contains(flag))
    })
}

fn has_target_dir(args: &[Word<'_>]) -> bool {
    args.iter().map(Word::as_str).any(|a| {
        a == "-t"
            || a.starts_with("--target-directory")
            || (a.starts_with("-t") && !a.starts_with("--"))
    })
}

/// `rm [-rf] PATH...`.
pub(super) fn rm(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    let ops = operands(call.args, &[]);
    if ops.is_empty() || !ops.iter().all(|w| plain(w)) {
        return false;
    }
    for w in ops {
        cx.push(
            EffectKind::FileRemoved {
                path: w.as_str().to_string(),
            },
            Timing::BOTH,
        );
    }
    true
}

/// `ln -s[f] TARGET LINK`.
pub(super) fn ln(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    if !short_flag(call.args, 's', "--symbolic") || has_target_dir(call.args) {
        return false;
    }
    let ops = operands(call.args, &["-S", "--suffix"]);
    let [target, link] = ops.as_slice() else {
        return false;
    };
    if !plain(link) {
        return false;
    }
    cx.push(
        EffectKind::Linked {
            path: link.as_str().to_string(),
            target: target.as_str().to_string(),
        },
        Timing::BOTH,
    );
    true
}

/// `cp SRC DEST`: `DEST` written, through a link there.
pub(super) fn cp(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    if has_target_dir(call.args) {
        return false;
    }
    let ops = operands(call.args, &["-S", "--suffix"]);
    let [_, dest] = ops.as_slice() else {
        return false;
    };
    plain(dest) && write::to_path(dest.as_str(), &super::Stream::Unknown, false, call.text, cx)
}

/// `mv SRC DEST`: `SRC` removed, `DEST` written in place of a link there.
pub(super) fn mv(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    if has_target_dir(call.args) {
        return false;
    }
    let ops = operands(call.args, &["-S", "--suffix"]);
    let [src, dest] = ops.as_slice() else {
        return false;
    };
    if !plain(src) || !plain(dest) {
        return false;
    }
    cx.push(
        EffectKind::FileRemoved {
            path: src.as_str().to_string(),
        },
        Timing::BOTH,
    );
    cx.push(
        EffectKind::FileWritten {
            path: dest.as_str().to_string(),
            mode: None,
            content: write::unknown_content(),
            replaces_link: true,
        },
        Timing::BOTH,
    );
    true
}

/// `install [-m MODE] SRC DEST`; `install -d` makes directories.
pub(super) fn install(call: &Call<'_, '_>, cx: &mut Cx) -> bool {
    if has_target_dir(call.args) || short_flag(call.args, 'd', "--directory") {
        return false;
    }
    let with_arg = [
        "-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix",
    ];
    let mut mode = None;
    let mut it = call.args.iter().map(Word::as_str);
    while let Some(a) = it.next() {
        if a == "-m" || a == "--mode" {
            mode = it.next();
        } else if let Some(m) = a.strip_prefix("--mode=") {
            mode = Some(m);
        }
    }
    let ops = operands(call.args, &with_arg);
    let [_, dest] = ops.as_slice() else {
        return false;
    };
    if !plain(dest) {
        return false;
    }
    cx.push(
        EffectKind::FileWritten {
            path: dest.as_str().to_string(),
            mode: mode.map(str::to_string),
            content: write::unknown_content(),
            // `install` removes the destination before writing it.
            replaces_link: true,
        },
        Timing::BOTH,
    );
    true
}

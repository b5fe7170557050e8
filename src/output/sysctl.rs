//! `preflint sysctl`: every key the tree writes, now and after reboot.

use crate::sysctl::{Baseline, KeyResult};
use std::fmt::Write;

#[must_use]
pub fn table(
    results: &[KeyResult],
    baseline: &Baseline,
    unknown: &[crate::check::sysctl::UnknownLines],
) -> String {
    let mut out = String::new();
    for note in baseline.notes() {
        let _ = writeln!(out, "note: {note}");
    }
    for r in results {
        let now = r.now.as_deref().unwrap_or("-");
        let by = r
            .now_by
            .as_ref()
            .map_or_else(String::new, |e| format!(" (set by {}:{})", e.file, e.line));
        let _ = writeln!(out, "{}\n  now: {now}{by}", r.key);
        for b in &r.boot {
            let link = match b.with_link {
                Some(true) => " [with 99-sysctl.conf -> ../sysctl.conf]",
                Some(false) => " [without the 99-sysctl.conf link]",
                None => "",
            };
            let _ = writeln!(
                out,
                "  after reboot, {}{link}: {} from {}",
                b.engine.label(),
                b.value.as_deref().unwrap_or("unset"),
                b.winner_file().unwrap_or("no file")
            );
            for o in &b.overridden {
                let at = o.evidence.as_ref().map_or_else(
                    || o.source.clone().unwrap_or_default(),
                    |e| format!("{}:{}", e.file, e.line),
                );
                let _ = writeln!(
                    out,
                    "      overrides {} = {} in {} ({at})",
                    o.key,
                    o.value.as_deref().unwrap_or("-"),
                    o.file
                );
            }
        }
    }
    if results.is_empty() && unknown.is_empty() {
        out.push_str("no sysctl writes found\n");
    }
    // Files that may set keys nobody can name before the run.
    for u in unknown {
        let _ = writeln!(
            out,
            "{}: {} line{} not known statically, may set any key ({}; written by {}:{}{})",
            u.path,
            u.lines,
            if u.lines == 1 { "" } else { "s" },
            u.why,
            u.evidence.file,
            u.evidence.line,
            if u.conditional {
                ", under run-time conditions"
            } else {
                ""
            }
        );
    }
    out
}

//! `--format codeclimate`: a GitLab code quality report, which is a JSON
//! array of Code Climate issues.
//!
//! GitLab reads `description`, `check_name`, `fingerprint`, `severity` and
//! `location.path` / `location.lines.begin`; `type`, `categories` and
//! `content` complete the Code Climate spec for other readers. GitLab keys
//! issues by fingerprint, so repeated fingerprints get an occurrence suffix.
//! Paths are joined with the root so they are relative to the checkout.

use super::{Report, at_least_one, to_json};
use crate::HashMap;
use crate::diagnostic::Severity;
use serde::Serialize;

#[derive(Serialize)]
struct Issue {
    #[serde(rename = "type")]
    kind: &'static str,
    check_name: String,
    description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<Content>,
    categories: [&'static str; 1],
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Serialize)]
struct Content {
    body: String,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: u32,
}

/// Code Climate's scale is info, minor, major, critical, blocker; `blocker`
/// is left for problems preflint cannot know (it never ran the node).
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warning => "major",
        Severity::Error => "critical",
    }
}

pub(super) fn render(report: &Report<'_>) -> String {
    let mut seen: HashMap<&str, usize> = HashMap::default();
    let issues: Vec<Issue> = report
        .findings
        .iter()
        .map(|f| {
            let n = seen.entry(f.fingerprint.as_str()).or_insert(0);
            *n += 1;
            let fingerprint = if *n == 1 {
                f.fingerprint.clone()
            } else {
                format!("{}-{n}", f.fingerprint)
            };
            let mut body = Vec::new();
            if let Some(h) = &f.help {
                body.push(h.clone());
            }
            for r in &f.related {
                body.push(format!(
                    "See `{}:{}`: {}",
                    report.ci_path(&r.file),
                    at_least_one(r.line),
                    r.message
                ));
            }
            if let Some(p) = &f.preflight {
                body.push(format!("kubeadm preflight check: `{p}`"));
            }
            Issue {
                kind: "issue",
                check_name: f.rule.clone(),
                description: f.message.clone(),
                content: (!body.is_empty()).then(|| Content {
                    body: body.join("\n\n"),
                }),
                categories: ["Bug Risk"],
                fingerprint,
                severity: severity(f.severity),
                location: Location {
                    path: report.ci_path(&f.file),
                    lines: Lines {
                        begin: at_least_one(f.line),
                    },
                },
            }
        })
        .collect();
    to_json(&issues)
}

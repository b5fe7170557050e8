//! `--format sarif`: SARIF 2.1.0, one run, as small serde structs.
//!
//! `tool.driver.rules` describes every rule (so viewers can show rules that
//! found nothing), followed by a minimal descriptor for each reserved load
//! code that occurs (`yaml-syntax-error`, ...), so every result has a
//! `ruleIndex`. Artifact URIs are relative to `%SRCROOT%`: the root joined
//! with the finding's path when the root is relative (the checkout is the
//! base), or the finding's path with `%SRCROOT%` defined as the root in
//! `originalUriBaseIds` when the root is absolute. Columns count Unicode
//! code points, as preflint's do, which `columnKind` says.

use super::{Report, at_least_one, to_json};
use crate::diagnostic::Severity;
use crate::rule::{Finding, Related};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const SRCROOT: &str = "%SRCROOT%";
/// Description and help of the reserved load codes (not lint rules).
const LOAD_PROBLEM: &str = "preflint could not read or model part of the tree (unreadable \
     file, invalid YAML, unresolved include, ...), so checks that need it did not run there. \
     Fix the file or the reference named in the message.";
/// `[package] repository` (or `homepage`) in Cargo.toml, when set.
const INFORMATION_URI: &str = first_set(env!("CARGO_PKG_REPOSITORY"), env!("CARGO_PKG_HOMEPAGE"));

const fn first_set(a: &'static str, b: &'static str) -> &'static str {
    if a.is_empty() { b } else { a }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    original_uri_base_ids: Option<BTreeMap<&'static str, ArtifactLocation>>,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'static str,
    version: &'a str,
    semantic_version: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    information_uri: &'static str,
    rules: Vec<Descriptor<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor<'a> {
    id: &'a str,
    name: String,
    short_description: Text,
    /// GitHub code scanning requires `fullDescription` and `help` on every rule.
    full_description: Text,
    help: Markdown,
    default_configuration: Configuration,
    properties: RuleProperties<'a>,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Markdown {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties<'a> {
    category: &'a str,
    tags: [&'a str; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    preflight: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: [ResultLocation; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<ResultLocation>,
    partial_fingerprints: BTreeMap<&'static str, &'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<ResultProperties<'a>>,
}

#[derive(Serialize)]
struct ResultProperties<'a> {
    preflight: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultLocation {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    start_column: u32,
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// `sysctl-overridden-at-boot` -> `SysctlOverriddenAtBoot`: SARIF wants a
/// rule `name` that reads as an identifier.
fn pascal_case(id: &str) -> String {
    id.split(|c: char| !c.is_alphanumeric())
        .flat_map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|c| c.to_uppercase().chain(cs))
                .into_iter()
                .flatten()
        })
        .collect()
}

/// The text under the doc's `What it does` heading, else its first paragraph.
fn what_it_does(doc: &str) -> Option<String> {
    let paragraphs: Vec<&str> = doc
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let after_heading = paragraphs
        .iter()
        .position(|p| {
            p.trim_start_matches('#')
                .trim()
                .eq_ignore_ascii_case("what it does")
        })
        .and_then(|i| paragraphs.get(i + 1));
    after_heading
        .or_else(|| paragraphs.iter().find(|p| !p.starts_with('#')))
        .map(|p| (*p).to_string())
}

/// A URI reference for a `/`-separated path: every byte outside RFC 3986's
/// unreserved set and `/` is percent-encoded (spaces, `%`, `:`, non-ASCII).
fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Absolute roots become `file://` URIs for `originalUriBaseIds`.
fn absolute_root_uri(root: &str) -> Option<String> {
    let root = root.replace('\\', "/");
    let (prefix, path) = if root.starts_with('/') {
        ("file://", root.as_str())
    } else if root.as_bytes().get(1) == Some(&b':') && root.as_bytes().get(2) == Some(&b'/') {
        ("file:///", root.as_str())
    } else {
        return None;
    };
    let mut uri = format!("{prefix}{}", uri_path(path).replacen("%3A", ":", 1));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    Some(uri)
}

/// Where artifact URIs start: the checkout (relative root, joined in) or
/// the root itself (absolute root, defined in `originalUriBaseIds`).
#[derive(Clone, Copy)]
enum Base {
    Checkout,
    Root,
}

impl Base {
    fn location(self, report: &Report<'_>, file: &str, line: u32, column: u32) -> PhysicalLocation {
        let path = match self {
            Base::Checkout => report.ci_path(file),
            Base::Root => file.strip_prefix("./").unwrap_or(file).to_string(),
        };
        PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: uri_path(&path),
                uri_base_id: Some(SRCROOT),
            },
            region: Region {
                start_line: at_least_one(line),
                start_column: at_least_one(column),
            },
        }
    }
}

fn descriptors<'a>(report: &Report<'a>) -> Vec<Descriptor<'a>> {
    let mut out: Vec<Descriptor<'a>> = report
        .rules
        .iter()
        .map(|r| Descriptor {
            id: r.id,
            name: pascal_case(r.id),
            short_description: Text {
                text: r.summary.to_string(),
            },
            full_description: Text {
                text: what_it_does(r.doc).unwrap_or_else(|| r.summary.to_string()),
            },
            help: if r.doc.trim().is_empty() {
                Markdown {
                    text: r.summary.to_string(),
                    markdown: r.summary.to_string(),
                }
            } else {
                Markdown {
                    text: r.doc.to_string(),
                    markdown: r.doc.to_string(),
                }
            },
            default_configuration: Configuration {
                level: level(r.severity),
            },
            properties: RuleProperties {
                category: r.category,
                tags: [r.category],
                preflight: r.preflight,
            },
        })
        .collect();
    // Reserved load codes are not rules; describe the ones that occur.
    let mut extra: BTreeMap<&'a str, Severity> = BTreeMap::new();
    for f in report.findings {
        if report.rule(&f.rule).is_none() {
            let s = extra.entry(f.rule.as_str()).or_insert(f.severity);
            *s = (*s).max(f.severity);
        }
    }
    out.extend(extra.into_iter().map(|(id, severity)| Descriptor {
        id,
        name: pascal_case(id),
        short_description: Text {
            text: format!("preflint could not fully analyse the tree: {id}"),
        },
        full_description: Text {
            text: LOAD_PROBLEM.to_string(),
        },
        help: Markdown {
            text: LOAD_PROBLEM.to_string(),
            markdown: LOAD_PROBLEM.to_string(),
        },
        default_configuration: Configuration {
            level: level(severity),
        },
        properties: RuleProperties {
            category: "load",
            tags: ["load"],
            preflight: None,
        },
    }));
    out
}

fn result<'a>(
    report: &Report<'a>,
    base: Base,
    rules: &[Descriptor<'a>],
    f: &'a Finding,
) -> SarifResult<'a> {
    let mut text = f.message.clone();
    if let Some(help) = &f.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    let related = |(i, r): (usize, &Related)| ResultLocation {
        id: Some(i),
        physical_location: base.location(report, &r.file, r.line, r.column),
        message: Some(Text {
            text: r.message.clone(),
        }),
    };
    SarifResult {
        rule_id: &f.rule,
        rule_index: rules.iter().position(|d| d.id == f.rule).unwrap_or(0),
        level: level(f.severity),
        message: Text { text },
        locations: [ResultLocation {
            id: None,
            physical_location: base.location(report, &f.file, f.line, f.column),
            message: None,
        }],
        related_locations: f.related.iter().enumerate().map(related).collect(),
        partial_fingerprints: BTreeMap::from([("preflint/v1", f.fingerprint.as_str())]),
        properties: f
            .preflight
            .as_deref()
            .map(|preflight| ResultProperties { preflight }),
    }
}

pub(super) fn render(report: &Report<'_>) -> String {
    let absolute_root = absolute_root_uri(report.root);
    let base = if absolute_root.is_some() {
        Base::Root
    } else {
        Base::Checkout
    };
    let rules = descriptors(report);
    let results = report
        .findings
        .iter()
        .map(|f| result(report, base, &rules, f))
        .collect();
    to_json(&Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "preflint",
                    version: report.tool_version,
                    semantic_version: report.tool_version,
                    information_uri: INFORMATION_URI,
                    rules,
                },
            },
            original_uri_base_ids: absolute_root.map(|uri| {
                BTreeMap::from([(
                    SRCROOT,
                    ArtifactLocation {
                        uri,
                        uri_base_id: None,
                    },
                )])
            }),
            column_kind: "unicodeCodePoints",
            results,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_are_pascal_case() {
        assert_eq!(
            pascal_case("sysctl-overridden-at-boot"),
            "SysctlOverriddenAtBoot"
        );
        assert_eq!(pascal_case("swap"), "Swap");
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(
            uri_path("roles/a b/ü:x%.yml"),
            "roles/a%20b/%C3%BC%3Ax%25.yml"
        );
        assert_eq!(
            absolute_root_uri("/srv/my repo").as_deref(),
            Some("file:///srv/my%20repo/")
        );
        assert_eq!(
            absolute_root_uri("C:\\work\\").as_deref(),
            Some("file:///C:/work/")
        );
        assert_eq!(absolute_root_uri("roles"), None);
    }

    #[test]
    fn full_description_is_what_it_does() {
        let doc = "## What it does\n\nFinds X.\n\n## Why it matters\n\nBecause.";
        assert_eq!(what_it_does(doc).as_deref(), Some("Finds X."));
        assert_eq!(what_it_does("Plain text.").as_deref(), Some("Plain text."));
        assert_eq!(what_it_does(""), None);
    }
}

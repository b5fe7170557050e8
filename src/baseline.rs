//! Baselines: the fingerprints of known findings, so a team can adopt
//! preflint on an old tree and fail only on new findings.

use crate::rule::Finding;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Serialize, Deserialize)]
struct BaselineFile {
    version: u32,
    /// One entry per known finding (rule, file and message kept for people).
    findings: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    fingerprint: String,
    rule: String,
    file: String,
    message: String,
}

/// Writes the findings' fingerprints to `path`.
///
/// # Errors
/// When the file cannot be written.
pub fn write(path: &Path, findings: &[Finding]) -> Result<(), String> {
    let mut entries: Vec<Entry> = findings
        .iter()
        .map(|f| Entry {
            fingerprint: f.fingerprint.clone(),
            rule: f.rule.clone(),
            file: f.file.clone(),
            message: f.message.clone(),
        })
        .collect();
    entries.sort_by(|a, b| {
        (&a.file, &a.rule, &a.fingerprint).cmp(&(&b.file, &b.rule, &b.fingerprint))
    });
    entries.dedup_by(|a, b| a.fingerprint == b.fingerprint);
    let text = serde_json::to_string_pretty(&BaselineFile {
        version: 1,
        findings: entries,
    })
    .map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n")
        .map_err(|e| format!("--write-baseline {}: {e}", path.display()))
}

/// Reads the fingerprints of a baseline file.
///
/// # Errors
/// When the file cannot be read or is not a preflint baseline.
pub fn read(path: &Path) -> Result<BTreeSet<String>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("--baseline {}: {e}", path.display()))?;
    let b: BaselineFile = serde_json::from_str(&text).map_err(|e| {
        format!(
            "--baseline {}:{}:{}: not a preflint baseline ({e}); create one with --write-baseline",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    Ok(b.findings.into_iter().map(|e| e.fingerprint).collect())
}

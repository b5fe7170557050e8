//! A lint finding: what every rule produces and every output format reads.

use crate::diagnostic::Severity;
use serde::Serialize;

/// Another place that explains a finding (the file that wins, the other write).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Related {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Rule id (kebab-case), or a reserved load-problem code such as `yaml-syntax-error`.
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    /// What to do, imperative.
    pub help: Option<String>,
    /// Path relative to the analysed root, `/`-separated.
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The kubeadm preflight check that would catch it live, if any.
    pub preflight: Option<String>,
    pub related: Vec<Related>,
    /// Stable across runs and unrelated edits: rule, file and the finding's
    /// identity (not its line number).
    pub fingerprint: String,
}

impl Finding {
    /// Sort key: path, line, column, rule, message.
    #[must_use]
    pub fn sort_key(&self) -> (&str, u32, u32, &str, &str) {
        (
            &self.file,
            self.line,
            self.column,
            &self.rule,
            &self.message,
        )
    }
}

/// A stable fingerprint from the rule, the file and an identity string.
#[must_use]
pub fn fingerprint(rule: &str, file: &str, identity: &str) -> String {
    // FNV-1a, 64 bits: stable across Rust versions (unlike DefaultHasher).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in rule
        .bytes()
        .chain([0])
        .chain(file.bytes())
        .chain([0])
        .chain(identity.bytes())
    {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

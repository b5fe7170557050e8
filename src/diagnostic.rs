//! preflint's own diagnostic type: soft errors and findings.
//!
//! Every problem found while reading or analysing a tree becomes a
//! [`Diagnostic`] with a stable kebab-case code and a span; the run goes on.
//! Rendering lives in `output`, not here.

use crate::source::{SourceMap, Span};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Codes reserved for problems in reading the tree (not lint findings).
pub mod code {
    pub const IO: &str = "load-io-error";
    pub const NOT_UTF8: &str = "load-not-utf8";
    pub const BINARY: &str = "load-binary-file";
    pub const TOO_LARGE: &str = "load-file-too-large";
    pub const YAML_SYNTAX: &str = "yaml-syntax-error";
    pub const YAML_LIMIT: &str = "yaml-limit-exceeded";
    pub const YAML_DUPLICATE_KEY: &str = "yaml-duplicate-key";
    pub const YAML_BAD_MERGE: &str = "yaml-bad-merge";
    pub const SHAPE: &str = "ansible-bad-shape";
    pub const ROLE_NOT_FOUND: &str = "role-not-found";
    pub const ROLE_EXTERNAL: &str = "role-from-collection";
    pub const INCLUDE_NOT_FOUND: &str = "include-not-found";
    pub const INCLUDE_UNRESOLVED: &str = "include-unresolved";
    pub const INCLUDE_CYCLE: &str = "include-cycle";
    pub const MODULE_AMBIGUOUS: &str = "task-module-ambiguous";
    pub const ACTION_REMOVED: &str = "task-action-removed";
    pub const ARG_ALIAS_CONFLICT: &str = "task-arg-alias-conflict";
    pub const CONFIG: &str = "config-error";
    pub const INTERNAL: &str = "internal-error";
}

#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub help: Option<String>,
    pub span: Span,
}

impl Diagnostic {
    #[must_use]
    pub fn new(
        code: &'static str,
        severity: Severity,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            severity,
            message: message.into(),
            help: None,
            span,
        }
    }

    #[must_use]
    pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, span, message)
    }

    #[must_use]
    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Warning, span, message)
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The location as plain data, for output.
    #[must_use]
    pub fn located(&self, sources: &SourceMap) -> LocatedDiagnostic {
        LocatedDiagnostic {
            code: self.code,
            severity: self.severity,
            file: sources.display(self.span.file),
            line: self.span.line,
            column: self.span.col,
            message: self.message.clone(),
            help: self.help.clone(),
        }
    }
}

/// A diagnostic with its location spelled out: what output formats serialize.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct LocatedDiagnostic {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub help: Option<String>,
}

/// Sorts diagnostics by file, line, column, code and removes exact duplicates.
#[must_use]
pub fn sorted(sources: &SourceMap, diags: &[Diagnostic]) -> Vec<LocatedDiagnostic> {
    let mut out: Vec<LocatedDiagnostic> = diags.iter().map(|d| d.located(sources)).collect();
    out.sort();
    out.dedup();
    out
}

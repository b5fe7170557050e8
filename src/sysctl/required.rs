//! The sysctl values Kubernetes needs (`rules/sysctl-required.yml`).

use serde::Deserialize;

/// A sysctl value Kubernetes needs (from `rules/sysctl-required.yml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Required {
    pub key: String,
    pub value: String,
    pub group: String,
    pub why: String,
    #[serde(default)]
    pub preflight: Option<String>,
}

/// The embedded list of required sysctl values.
///
/// # Errors
/// When the embedded file does not parse (a build defect, caught by tests).
pub fn required() -> Result<Vec<Required>, String> {
    serde_yaml::from_str(include_str!("../../rules/sysctl-required.yml"))
        .map_err(|e| format!("rules/sysctl-required.yml: {e}"))
}

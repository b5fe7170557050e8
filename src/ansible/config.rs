//! `ansible.cfg`: the settings that change how content is found (`roles_path`).
//!
//! Only the file at the analysed root is read, as Ansible reads `./ansible.cfg`
//! when run from there; environment overrides are ignored so output does not
//! depend on the shell.

use crate::text_regex::TextRegex;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Clone)]
pub struct AnsibleCfg {
    /// `roles_path` entries, resolved against the config file's directory.
    pub roles_path: Vec<PathBuf>,
}

impl AnsibleCfg {
    /// Reads `dir/ansible.cfg` when present.
    #[must_use]
    pub fn load(dir: &Path) -> Self {
        let path = dir.join("ansible.cfg");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return AnsibleCfg::default();
        };
        Self::parse(&text, dir)
    }

    #[must_use]
    pub fn parse(text: &str, dir: &Path) -> Self {
        let mut section = String::new();
        let mut cfg = AnsibleCfg::default();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
                continue;
            }
            if line.starts_with('[') && line.ends_with(']') {
                section = line[1..line.len() - 1].trim().to_string();
                continue;
            }
            let Some((k, v)) = line.split_once('=').or_else(|| line.split_once(':')) else {
                continue;
            };
            if section == "defaults" && k.trim() == "roles_path" {
                cfg.roles_path = v
                    .split([':', ','])
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| resolve(&expand_vars(s), dir))
                    .collect();
            }
        }
        cfg
    }
}

fn resolve(p: &str, dir: &Path) -> PathBuf {
    let path = if let Some(rest) = p.strip_prefix("~/") {
        std::env::var_os("HOME").map_or_else(|| PathBuf::from(p), |h| PathBuf::from(h).join(rest))
    } else {
        PathBuf::from(p)
    };
    if path.is_absolute() {
        path
    } else {
        dir.join(path)
    }
}

/// `$VAR` and `${VAR}` as `os.path.expandvars` does: unknown names stay as
/// written; names are ASCII words, as in posixpath's `re.ASCII` pattern.
fn expand_vars(s: &str) -> String {
    static VAR: TextRegex = TextRegex::new(r"\$([0-9A-Za-z_]+|\{[^}]*\})");
    let mut out = String::with_capacity(s.len());
    let mut done = 0;
    for c in VAR.captures_all(s) {
        let Some(whole) = c.range(0) else { continue };
        out.push_str(&s[done..whole.start]);
        let name = c[1].trim_start_matches('{').trim_end_matches('}');
        match std::env::var(name) {
            Ok(v) => out.push_str(&v),
            Err(_) => out.push_str(&c[0]),
        }
        done = whole.end;
    }
    out.push_str(&s[done..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_roles_path() {
        let cfg = AnsibleCfg::parse(
            "[defaults]\nroles_path = roles:/abs/r:$PREFLINT_NOPE/x\n",
            Path::new("/t"),
        );
        assert_eq!(
            cfg.roles_path,
            vec![
                PathBuf::from("/t/roles"),
                PathBuf::from("/abs/r"),
                PathBuf::from("/t/$PREFLINT_NOPE/x")
            ]
        );
    }

    #[test]
    fn expands_known_variables_in_both_spellings_and_keeps_the_rest() {
        let Ok(path) = std::env::var("PATH") else {
            return;
        };
        assert_eq!(
            expand_vars("a${PATH}b$PATH/$PREFLINT_NOPE ${PREFLINT_NOPE}é$"),
            format!("a{path}b{path}/$PREFLINT_NOPE ${{PREFLINT_NOPE}}é$")
        );
    }
}

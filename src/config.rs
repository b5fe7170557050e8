//! `.preflint.yml`: project settings, read raw and validated with every
//! problem pointing at its line.
//!
//! ```yaml
//! playbooks: [cluster.yml]          # entry playbooks
//! inventory: inventory/sample       # -i
//! extra_vars: {kube_proxy_mode: ipvs}
//! exclude_paths: [contrib/, tests/]
//! fail_level: warning               # info | warning | error
//! distro: [debian]                  # sysctl baseline profiles
//! rules:
//!   sysctl-engines-disagree: off    # off | info | warning | error
//! ```

use crate::diagnostic::Severity;
use crate::source::FileId;
use crate::yaml::{self, Node, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A rule's configured state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleLevel {
    Off,
    Level(Severity),
}

#[derive(Debug, Default, Clone)]
pub struct Config {
    pub playbooks: Vec<PathBuf>,
    pub inventory: Option<PathBuf>,
    pub extra_vars: Vec<(String, Node)>,
    pub exclude_paths: Vec<String>,
    pub fail_level: Option<Severity>,
    pub distro: Vec<String>,
    pub rules: BTreeMap<String, RuleLevel>,
    /// The file it came from, for messages.
    pub path: Option<PathBuf>,
}

/// Names of the config files looked for at the root, in order.
pub const FILE_NAMES: &[&str] = &[".preflint.yml", ".preflint.yaml"];

fn severity(s: &str) -> Option<Severity> {
    match s {
        "info" => Some(Severity::Info),
        "warning" => Some(Severity::Warning),
        "error" => Some(Severity::Error),
        _ => None,
    }
}

fn strings(node: &Node, what: &str, errors: &mut Vec<String>, file: &str) -> Vec<String> {
    match &node.value {
        Value::Seq(items) => items
            .iter()
            .filter_map(|i| {
                let s = i.as_str().map(str::to_string);
                if s.is_none() {
                    errors.push(format!(
                        "{file}:{}:{}: {what} items must be strings",
                        i.span.line, i.span.col
                    ));
                }
                s
            })
            .collect(),
        Value::Str(s) => vec![s.clone()],
        _ => {
            errors.push(format!(
                "{file}:{}:{}: {what} must be a list of strings",
                node.span.line, node.span.col
            ));
            Vec::new()
        }
    }
}

impl Config {
    /// Finds and reads the config file at `root`, or `explicit` when given.
    ///
    /// # Errors
    /// Every problem found, each as `file:line:column: message`.
    pub fn load(
        root: &Path,
        explicit: Option<&Path>,
        known_rules: &[&str],
    ) -> Result<Config, Vec<String>> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => FILE_NAMES
                .iter()
                .map(|n| root.join(n))
                .find(|p| p.is_file()),
        };
        let Some(path) = path else {
            return Ok(Config::default());
        };
        let text =
            std::fs::read_to_string(&path).map_err(|e| vec![format!("{}: {e}", path.display())])?;
        let mut cfg = Self::parse(&text, &path.display().to_string(), known_rules)?;
        let base = path.parent().unwrap_or(Path::new("."));
        cfg.playbooks = cfg
            .playbooks
            .iter()
            .map(|p| {
                if p.is_absolute() {
                    p.clone()
                } else {
                    base.join(p)
                }
            })
            .collect();
        cfg.inventory = cfg
            .inventory
            .map(|p| if p.is_absolute() { p } else { base.join(p) });
        cfg.path = Some(path);
        Ok(cfg)
    }

    /// Validates a config text.
    ///
    /// # Errors
    /// Every problem found, each as `file:line:column: message`.
    pub fn parse(text: &str, file: &str, known_rules: &[&str]) -> Result<Config, Vec<String>> {
        let parsed = yaml::parse(FileId(0), text);
        let mut errors: Vec<String> = parsed
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| format!("{file}:{}:{}: {}", d.span.line, d.span.col, d.message))
            .collect();
        let mut cfg = Config::default();
        let Some(doc) = parsed.docs.first() else {
            return if errors.is_empty() {
                Ok(cfg)
            } else {
                Err(errors)
            };
        };
        let Some(pairs) = doc.as_map() else {
            if !doc.is_null() {
                errors.push(format!(
                    "{file}:{}:{}: the config must be a mapping",
                    doc.span.line, doc.span.col
                ));
            }
            return if errors.is_empty() {
                Ok(cfg)
            } else {
                Err(errors)
            };
        };
        for (k, v) in pairs {
            let key = k.to_string();
            let at = |n: &Node| format!("{file}:{}:{}", n.span.line, n.span.col);
            match key.as_str() {
                "playbooks" => cfg.playbooks = strings(v, "playbooks", &mut errors, file).into_iter().map(PathBuf::from).collect(),
                "inventory" => match v.as_str() {
                    Some(s) => cfg.inventory = Some(PathBuf::from(s)),
                    None => errors.push(format!("{}: inventory must be a path", at(v))),
                },
                "exclude_paths" => cfg.exclude_paths = strings(v, "exclude_paths", &mut errors, file),
                "distro" => cfg.distro = strings(v, "distro", &mut errors, file),
                "fail_level" => match v.as_str().and_then(severity) {
                    Some(s) => cfg.fail_level = Some(s),
                    None => errors.push(format!("{}: fail_level must be info, warning or error", at(v))),
                },
                "extra_vars" => match v.as_map() {
                    Some(vars) => {
                        for (vk, vv) in vars {
                            cfg.extra_vars.push((vk.to_string(), vv.clone()));
                        }
                    }
                    None => errors.push(format!("{}: extra_vars must be a mapping", at(v))),
                },
                "rules" => match v.as_map() {
                    Some(rules) => {
                        for (rk, rv) in rules {
                            let id = rk.to_string();
                            if !known_rules.contains(&id.as_str()) {
                                errors.push(format!(
                                    "{}: unknown rule `{id}` (run `preflint rules` for the list)",
                                    at(rk)
                                ));
                                continue;
                            }
                            // YAML 1.1 reads `off` as false.
                            let level = match (&rv.value, rv.as_str()) {
                                (Value::Bool(false), _) | (_, Some("off")) => Some(RuleLevel::Off),
                                (_, Some(s)) => severity(s).map(RuleLevel::Level),
                                _ => None,
                            };
                            match level {
                                Some(l) => {
                                    cfg.rules.insert(id, l);
                                }
                                None => errors.push(format!("{}: a rule is off, info, warning or error", at(rv))),
                            }
                        }
                    }
                    None => errors.push(format!("{}: rules must be a mapping of rule id to level", at(v))),
                },
                other => errors.push(format!(
                    "{}: unknown setting `{other}` (expected playbooks, inventory, extra_vars, exclude_paths, fail_level, distro, rules)",
                    at(k)
                )),
            }
        }
        if errors.is_empty() {
            Ok(cfg)
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_config() {
        let c = Config::parse(
            "playbooks: [cluster.yml]\nfail_level: error\nrules:\n  a-rule: off\n  b-rule: info\n",
            "f",
            &["a-rule", "b-rule"],
        )
        .expect("valid");
        assert_eq!(c.fail_level, Some(Severity::Error));
        assert_eq!(c.rules["a-rule"], RuleLevel::Off);
        assert_eq!(c.rules["b-rule"], RuleLevel::Level(Severity::Info));
    }

    #[test]
    fn errors_point_at_lines() {
        let e = Config::parse(
            "playbooks: [a.yml]\nfail_leval: error\nrules:\n  nope: off\n",
            "f",
            &["a-rule"],
        )
        .expect_err("invalid");
        assert_eq!(e.len(), 2);
        assert!(
            e[0].starts_with("f:2:1: unknown setting `fail_leval`"),
            "{}",
            e[0]
        );
        assert!(e[1].starts_with("f:4:3: unknown rule `nope`"), "{}", e[1]);
    }
}

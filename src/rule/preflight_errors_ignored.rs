//! `preflight-errors-ignored`: kubeadm is told to ignore preflight errors that
//! stand for node-preparation problems.

use super::Context;
use super::{Finding, Rule, RuleMeta, finding};
use crate::diagnostic::Severity;
use crate::effect::{EffectKind, Kind};
use crate::jinja::{self, Rendered};
use crate::text_regex::TextRegex;
use crate::vars::TaskVars;

pub static META: RuleMeta = RuleMeta {
    id: "preflight-errors-ignored",
    category: "preflight",
    severity: Severity::Warning,
    summary: "kubeadm --ignore-preflight-errors (or ignorePreflightErrors) masks a preparation problem",
    doc: r#"## What it does
Reads kubeadm command lines (`--ignore-preflight-errors=...`) and kubeadm
config templates (`ignorePreflightErrors:`), evaluates the list with the
task's variables, and flags entries that hide node-preparation problems:
`all`, `Port-*`, `Swap`, `FileContent--proc-sys-net-ipv4-ip_forward`. A list
built at run time (e.g. from a first attempt's errors) is flagged too.

## Why it matters
The preflight check is the last guard before the install: a busy port 10250
or swap left on is then found only when kubelet fails, and the cause stays in
the first attempt's log.

## Example
```yaml
- ansible.builtin.command: kubeadm init --ignore-preflight-errors=Port-10250,Swap
```

## How to fix
Fix the node (free the port, turn swap off) and drop the entry; never retry
with the first attempt's errors added to the ignore list.
"#,
    preflight: None,
};

const DANGEROUS: &[&str] = &["swap", "filecontent--proc-sys-net-ipv4-ip_forward", "all"];

fn dangerous(item: &str) -> bool {
    let i = item.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
    i.starts_with("port-") || DANGEROUS.contains(&i.as_str())
}

static FLAG: TextRegex = TextRegex::new(r"--ignore-preflight-errors[= ](\{\{.*?\}\}|[^\s]+)");

static VAR_REF: TextRegex = TextRegex::new(r"^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$");

/// A command as written, with a whole-string `{{ var }}` replaced by the
/// variable's own (unrendered) text, so the flag is visible.
fn expand(raw: &str, tv: &TaskVars<'_>) -> String {
    let mut s = raw.to_string();
    for _ in 0..4 {
        let Some(c) = VAR_REF.captures(&s) else {
            break;
        };
        let Some(def) = tv.winner(&c[1]) else { break };
        let Some(t) = def.value.scalar_text() else {
            break;
        };
        s = t;
    }
    s
}

/// Items of an ignore list: `Some(items)` when known, `None` when built at run time.
fn items(value: &str, tv: &TaskVars<'_>) -> Option<Vec<String>> {
    let v = value.trim();
    if let Some(expr) = v.strip_prefix("{{").and_then(|x| x.strip_suffix("}}")) {
        return match jinja::eval_expression(expr, tv) {
            Rendered::Value(serde_json::Value::Array(a)) => Some(flatten(&a)),
            Rendered::Value(serde_json::Value::String(s)) => {
                Some(s.split(',').map(str::to_string).collect())
            }
            Rendered::Value(_) => Some(Vec::new()),
            Rendered::Unknown(_) => None,
        };
    }
    match jinja::render(v, tv) {
        Rendered::Value(serde_json::Value::String(s)) => {
            Some(s.split(',').map(str::to_string).collect())
        }
        _ => None,
    }
}

fn flatten(a: &[serde_json::Value]) -> Vec<String> {
    let mut out = Vec::new();
    for v in a {
        match v {
            serde_json::Value::Array(inner) => out.extend(flatten(inner)),
            serde_json::Value::String(s) => out.extend(s.split(',').map(str::to_string)),
            serde_json::Value::Null => {}
            other => out.push(other.to_string()),
        }
    }
    out.retain(|s| !s.trim().is_empty());
    out
}

pub struct PreflightErrorsIgnored;
pub static RULE: PreflightErrorsIgnored = PreflightErrorsIgnored;

impl Rule for PreflightErrorsIgnored {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        // Tasks are read in parallel, each with its twins once (a twin
        // would be reported at the place of the first one); in the order
        // of the tasks, the first finding at a place is kept.
        let found =
            crate::reach::per_task(cx.reached, |facts| task_findings(cx, facts), |_, _| None);
        let mut seen = std::collections::BTreeSet::new();
        for f in found.into_iter().flatten() {
            if seen.insert((f.file.clone(), f.line)) {
                out.push(f);
            }
        }
    }
}

/// The findings of one reachable task (first loop iteration): the kubeadm
/// command lines it runs and the kubeadm configurations it writes, as its
/// effects say.
fn task_findings<'s>(
    cx: &Context<'_, 's>,
    facts: &crate::reach::Facts<'s>,
) -> Vec<Option<Finding>> {
    let mut out = Vec::new();
    let r = &facts.reach;
    let t = &r.inst.task;
    let read = [Kind::FileWritten, Kind::Command, Kind::Kubeadm];
    if !crate::effect::may_have(&t.module, !t.notify.is_empty(), &read) {
        return out;
    }
    let iters = facts.iterations(cx.scope);
    let Some(it) = iters.first() else {
        return out;
    };
    let tv = &it.tv;
    let mut values: Vec<String> = Vec::new();
    for e in it.effects(r.inst) {
        match &e.kind {
            EffectKind::Kubeadm { args } => {
                let text = expand(args, tv);
                values.extend(FLAG.captures_all(&text).iter().map(|c| c[1].to_string()));
            }
            // A command line nothing recognised may still run kubeadm
            // through a variable (`{{ kubeadm_cmd }}`).
            EffectKind::Command { line } => {
                let text = expand(line, tv);
                values.extend(FLAG.captures_all(&text).iter().map(|c| c[1].to_string()));
            }
            EffectKind::FileWritten { content, .. }
                if content.raw.contains("ignorePreflightErrors") =>
            {
                values.extend(template_values(&content.raw));
            }
            _ => {}
        }
    }
    for value in values {
        let (msg, identity) = match items(&value, tv) {
            Some(list) => {
                let bad: Vec<String> = list
                    .iter()
                    .filter(|i| dangerous(i))
                    .map(|i| i.trim().to_string())
                    .collect();
                if bad.is_empty() {
                    continue;
                }
                (
                    format!(
                        "kubeadm is told to ignore the preflight errors {}",
                        bad.join(", ")
                    ),
                    bad.join(","),
                )
            }
            None => (
                format!(
                    "kubeadm's ignored preflight errors `{value}` are only known at run time; they may hide a busy port or swap"
                ),
                value.clone(),
            ),
        };
        let file = cx.sources.display(t.span.file);
        let mut f = finding(&META, &file, t.span.line, t.span.col, msg, &identity);
        f.help = Some(
            "fix the node instead (free the port, turn swap off) and remove these entries".into(),
        );
        out.push(Some(f));
    }
    out
}

/// The list expressions of `ignorePreflightErrors:` in a kubeadm config
/// template: a `{% for x in EXPR %}` loop, or literal `- item` lines.
fn template_values(raw: &str) -> Vec<String> {
    // The loop variable is a Jinja name (ASCII, as Jinja's classic lexer):
    // an ASCII class compiles much faster than a Unicode `\w`.
    static FOR: TextRegex =
        TextRegex::new(r"\{%-?\s*for\s+[A-Za-z_][0-9A-Za-z_]*\s+in\s+(.+?)\s*-?%\}");
    let mut out = Vec::new();
    let mut lines = raw.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.contains("ignorePreflightErrors") {
            continue;
        }
        let mut literal = Vec::new();
        while let Some(next) = lines.peek() {
            if let Some(c) = FOR.captures(next) {
                out.push(format!("{{{{ {} }}}}", &c[1]));
                break;
            }
            let t = next.trim();
            if let Some(item) = t.strip_prefix("- ") {
                literal.push(item.trim().to_string());
                lines.next();
            } else {
                break;
            }
        }
        if !literal.is_empty() {
            out.push(literal.join(","));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangerous_entries() {
        assert!(dangerous("Port-10250"));
        assert!(dangerous("all"));
        assert!(dangerous("Swap"));
        assert!(!dangerous("DirAvailable--etc-kubernetes-manifests"));
    }

    #[test]
    fn template_lists() {
        let t = "nodeRegistration:\n  ignorePreflightErrors:\n{% for e in kubeadm_ignore %}\n  - {{ e }}\n{% endfor %}\n";
        assert_eq!(template_values(t), vec!["{{ kubeadm_ignore }}".to_string()]);
        let t = "  ignorePreflightErrors:\n  - Swap\n  - NumCPU\n";
        assert_eq!(template_values(t), vec!["Swap,NumCPU".to_string()]);
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    const FAILS: &str = r#"- ansible.builtin.command: kubeadm init --ignore-preflight-errors=Swap,NumCPU
"#;
    const PASSES: &str = r#"- ansible.builtin.command: kubeadm init --ignore-preflight-errors=NumCPU
"#;

    #[test]
    fn fires_on_the_hazard() {
        let f = run_role(FAILS, "preflight-errors-ignored");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].file, "roles/r/tasks/main.yml");
    }

    #[test]
    fn quiet_on_the_fix() {
        assert!(run_role(PASSES, "preflight-errors-ignored").is_empty());
    }
}

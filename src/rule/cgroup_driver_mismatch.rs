//! `cgroup-driver-mismatch`: kubelet's cgroup driver and the container
//! runtime's resolve to different values.

use super::Context;
use super::{Finding, Related, Rule, RuleMeta, finding};
use crate::diagnostic::Severity;
use crate::effect::{EffectKind, Kind};
use crate::jinja::{self, Rendered};
use crate::reach::Facts;
use crate::text_regex::TextRegex;
use crate::vars::TaskVars;

pub static META: RuleMeta = RuleMeta {
    id: "cgroup-driver-mismatch",
    category: "runtime",
    severity: Severity::Error,
    summary: "kubelet and the container runtime use different cgroup drivers",
    doc: r#"## What it does
Reads the kubelet configuration (`cgroupDriver:` or `--cgroup-driver=`) and
the runtime's (containerd `SystemdCgroup = true|false`, CRI-O
`cgroup_manager = "..."`) from the files the tree writes, evaluating
templated values with the task's variables, and flags different drivers.

## Why it matters
With different drivers kubelet and the runtime manage cgroups twice; pods fail
to start or the node becomes unstable under load. On cgroup v2 both must be
systemd.

## Example
```yaml
# kubelet-config.yaml.j2: cgroupDriver: cgroupfs
# config.toml.j2:         SystemdCgroup = true
```

## How to fix
Use `systemd` for both: `cgroupDriver: systemd` and `SystemdCgroup = true`.
"#,
    preflight: None,
};

#[derive(Clone)]
struct Side {
    driver: String,
    file: String,
    line: u32,
    column: u32,
}

/// Driver names are ASCII words, so the classes are ASCII: a Unicode `\w`
/// makes each regex much dearer to compile, on the rules' path.
static REGEXES: [(TextRegex, bool); 4] = [
    (
        TextRegex::new(r#"(?m)^\s*cgroupDriver:\s*["']?(\{\{.*?\}\}|[0-9A-Za-z_-]+)"#),
        true,
    ),
    (
        TextRegex::new(r"--cgroup-driver[= ](\{\{.*?\}\}|[0-9A-Za-z_-]+)"),
        true,
    ),
    (
        TextRegex::new(r"(?m)^\s*SystemdCgroup\s*=\s*(\{\{.*?\}\}|[0-9A-Za-z_]+)"),
        false,
    ),
    (
        TextRegex::new(r#"(?m)^\s*cgroup_manager\s*=\s*["']?(\{\{.*?\}\}|[0-9A-Za-z_-]+)"#),
        false,
    ),
];

fn value(raw: &str, tv: &TaskVars<'_>) -> Option<String> {
    let raw = raw.trim();
    if let Some(expr) = raw.strip_prefix("{{").and_then(|x| x.strip_suffix("}}")) {
        return match jinja::eval_expression(expr, tv) {
            Rendered::Value(v) => Some(crate::reach::json_text(&v)),
            Rendered::Unknown(_) => None,
        };
    }
    Some(raw.to_string())
}

fn driver(is_kubelet: bool, idx: usize, v: &str) -> String {
    if is_kubelet || idx == 3 {
        v.to_ascii_lowercase()
    } else if v.eq_ignore_ascii_case("true") {
        "systemd".into()
    } else {
        "cgroupfs".into()
    }
}

/// The cgroup drivers one reachable task configures (first loop iteration),
/// `true` for the kubelet's side: in the files it writes or edits, and on
/// the command lines it runs, as its effects say.
fn task_sides<'s>(cx: &Context<'_, 's>, facts: &Facts<'s>) -> Vec<(bool, Side)> {
    let mut out = Vec::new();
    let r = &facts.reach;
    let t = &r.inst.task;
    let read = [
        Kind::FileWritten,
        Kind::FileEdited,
        Kind::Command,
        Kind::Kubeadm,
    ];
    if !crate::effect::may_have(&t.module, !t.notify.is_empty(), &read) {
        return out;
    }
    let iters = facts.iterations(cx.scope);
    let Some(it) = iters.first() else {
        return out;
    };
    let tv = &it.tv;
    let view = crate::reach::IterView::new(r.inst, it);
    for e in it.effects(r.inst) {
        // A template's rendering (its known lines) when it renders; else
        // the text as written, its `{{ }}` values evaluated one by one.
        let content: &str = match &e.kind {
            // A template may compute the word from its variables.
            EffectKind::FileWritten { content, .. }
                if !(content.raw.contains("group")
                    || content.template && crate::ansible::project::is_templated(&content.raw)) =>
            {
                continue;
            }
            EffectKind::FileWritten { content, .. } => match content.rendering(&view) {
                Some(r) if r.known() != crate::effect::Known::Unknown => &r.text,
                _ => &content.raw,
            },
            EffectKind::FileEdited { edit, .. } if !edit.remove => &edit.text,
            EffectKind::Command { line } => line,
            EffectKind::Kubeadm { args } => args,
            _ => continue,
        };
        // Every pattern names a cgroup: a text without the word is not
        // searched four times.
        if !content.contains("group") {
            continue;
        }
        for (idx, (re, is_kubelet)) in REGEXES.iter().enumerate() {
            for c in re.captures_all(content) {
                let Some(v) = value(&c[1], tv) else { continue };
                out.push((
                    *is_kubelet,
                    Side {
                        driver: driver(*is_kubelet, idx, &v),
                        file: cx.sources.display(t.span.file),
                        line: t.span.line,
                        column: t.span.col,
                    },
                ));
            }
        }
    }
    out
}

pub struct CgroupDriverMismatch;
pub static RULE: CgroupDriverMismatch = CgroupDriverMismatch;

impl Rule for CgroupDriverMismatch {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        // Tasks are read in parallel (template files are scanned whole),
        // each with its twins once; the sides keep the order of the tasks.
        // From the last task: `preflight_errors_ignored` may run beside
        // this rule, taking them from the first (see `per_task_from_end`).
        let sides: Vec<(bool, Side)> = crate::reach::per_task_from_end(
            cx.reached,
            |facts| task_sides(cx, facts),
            |_, side| side.clone(),
        );
        let (kubelet, runtime): (Vec<_>, Vec<_>) = sides.into_iter().partition(|(k, _)| *k);
        let kubelet: Vec<Side> = kubelet.into_iter().map(|(_, s)| s).collect();
        let runtime: Vec<Side> = runtime.into_iter().map(|(_, s)| s).collect();
        for k in &kubelet {
            let Some(rt) = runtime.iter().find(|r| r.driver != k.driver) else {
                continue;
            };
            if runtime.iter().any(|r| r.driver == k.driver) {
                continue;
            }
            let mut f = finding(
                &META,
                &k.file,
                k.line,
                k.column,
                format!(
                    "kubelet uses the {} cgroup driver, the container runtime {}",
                    k.driver, rt.driver
                ),
                &format!("{}|{}", k.driver, rt.driver),
            );
            f.help =
                Some("use systemd for both: cgroupDriver: systemd and SystemdCgroup = true".into());
            f.related.push(Related {
                file: rt.file.clone(),
                line: rt.line,
                column: rt.column,
                message: format!("the runtime is configured with {} here", rt.driver),
            });
            out.push(f);
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    const FAILS: &str = r#"- ansible.builtin.copy: {dest: /var/lib/kubelet/config.yaml, content: "cgroupDriver: cgroupfs\n"}
- ansible.builtin.copy: {dest: /etc/containerd/config.toml, content: "  SystemdCgroup = true\n"}
"#;
    const PASSES: &str = r#"- ansible.builtin.copy: {dest: /var/lib/kubelet/config.yaml, content: "cgroupDriver: systemd\n"}
- ansible.builtin.copy: {dest: /etc/containerd/config.toml, content: "  SystemdCgroup = true\n"}
"#;

    #[test]
    fn fires_on_the_hazard() {
        let f = run_role(FAILS, "cgroup-driver-mismatch");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].file, "roles/r/tasks/main.yml");
    }

    #[test]
    fn quiet_on_the_fix() {
        assert!(run_role(PASSES, "cgroup-driver-mismatch").is_empty());
    }

    /// The runtime's driver set in a loop over runtime definitions whose
    /// options are templates themselves: read from the rendered template.
    #[test]
    fn reads_the_driver_a_template_loop_renders() {
        let files = |kubelet: &'static str| {
            crate::check::testing::findings(
                &[
                    ("site.yml", "- hosts: all\n  roles: [r]\n"),
                    (
                        "roles/r/defaults/main.yml",
                        "use_systemd: false\nrt: {name: runc, options: {SystemdCgroup: \"{{ use_systemd | ternary('true', 'false') }}\"}}\n",
                    ),
                    (
                        "roles/r/templates/config.toml.j2",
                        "{% for r in [rt] %}\n[{{ r.name }}]\n{% for k, v in r.options.items() %}\n  {{ k }} = {{ v }}\n{% endfor %}\n{% endfor %}\n",
                    ),
                    (
                        "roles/r/tasks/main.yml",
                        "- ansible.builtin.template: {src: config.toml.j2, dest: /etc/containerd/config.toml}\n- ansible.builtin.copy: {dest: /var/lib/kubelet/config.yaml, content: \"cgroupDriver: KUBELET\\n\"}\n"
                            .replace("KUBELET", kubelet)
                            .leak(),
                    ),
                ],
                "cgroup-driver-mismatch",
            )
        };
        assert_eq!(files("systemd").len(), 1);
        assert!(files("cgroupfs").is_empty());
    }
}

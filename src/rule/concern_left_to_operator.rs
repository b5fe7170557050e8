//! `concern-left-to-operator`: a node-preparation concern nothing in the
//! tree addresses (from who-fixes), shown once.

use super::Context;
use super::{Finding, Rule, RuleMeta, finding};
use crate::concern::analyze::Overall;
use crate::diagnostic::Severity;

pub static META: RuleMeta = RuleMeta {
    id: "concern-left-to-operator",
    category: "coverage",
    severity: Severity::Info,
    summary: "A node-preparation concern is left to the operator",
    doc: r#"## What it does
Lists each concern of the catalog that no reachable task fixes or checks
(`preflint who-fixes` says `operator`), once, at the first play.

## Why it matters
These are the steps an operator must do by hand before the install, e.g.
freeing port 10250 from a monitoring agent; kubeadm only finds them when it
fails.

## Example
A tree with no task that frees or checks TCP 10250.

## How to fix
Do the step by hand before the install, or add a task that does it. Run
`preflint who-fixes` for the full report.
"#,
    preflight: None,
};

pub struct ConcernLeftToOperator;
pub static RULE: ConcernLeftToOperator = ConcernLeftToOperator;

impl Rule for ConcernLeftToOperator {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
        let (file, line, col) = cx.anchor();
        for v in cx
            .verdicts
            .iter()
            .filter(|v| v.overall == Overall::Operator)
        {
            let mut f = finding(
                &META,
                &file,
                line,
                col,
                format!(
                    "{}: {} — nothing in the tree addresses it; the operator must",
                    v.id, v.title
                ),
                &v.id,
            );
            f.preflight.clone_from(&v.preflight);
            f.help = Some(format!(
                "prepare `{}` by hand before the install, or add a task for it",
                v.id
            ));
            out.push(f);
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use crate::check::testing::run_role;

    #[test]
    fn one_finding_per_operator_concern_at_the_play() {
        let f = run_role(
            "- ansible.builtin.command: swapoff -a\n",
            "concern-left-to-operator",
        );
        assert!(f.iter().all(|x| x.file == "site.yml" && x.line == 1));
        assert!(f.iter().any(|x| x.message.starts_with("port_10250:")));
        assert!(
            !f.iter().any(|x| x.message.starts_with("swap:")),
            "swap is addressed"
        );
    }
}

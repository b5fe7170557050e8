//! Differential oracle for template files: preflint's
//! [`preflint::jinja::render_file`] against ansible-core's `template` action.
//!
//! Reads `tests/oracle/templates/cases.yml`, renders every case with
//! preflint, asks `tests/oracle/templates/render.py` (run with the Python
//! named by `PREFLINT_PYTHON`, or `/opt/preflint-venv/bin/python`, else
//! `python3`) what ansible-core writes, and checks:
//!
//! * a case with known variables only renders fully known, to exactly
//!   ansible's text;
//! * a case with names preflint cannot know (`facts`) never contradicts
//!   ansible: for every sample, every line preflint knows unconditionally
//!   is a line of ansible's output, in order, and ansible's output has no
//!   line preflint neither knows nor marks as conditional or unknown.
//!
//! Without a Python that has ansible-core the test fails, unless
//! `PREFLINT_SKIP_ORACLE=1`.

use preflint::jinja::{self, FileOptions, Lookup, TemplateLoader, UnknownWhy, VarSource};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/templates")
}

fn python() -> String {
    std::env::var("PREFLINT_PYTHON").unwrap_or_else(|_| {
        if Path::new("/opt/preflint-venv/bin/python").exists() {
            "/opt/preflint-venv/bin/python".into()
        } else {
            "python3".into()
        }
    })
}

struct Vars {
    known: serde_json::Map<String, Value>,
    facts: Vec<String>,
}

impl VarSource for Vars {
    fn lookup(&self, name: &str) -> Lookup {
        if self.facts.iter().any(|f| f == name) {
            return Lookup::Unknown(UnknownWhy::Fact);
        }
        self.known
            .get(name)
            .map_or(Lookup::Missing, |v| Lookup::Value(v.clone()))
    }
}

struct Files(serde_json::Map<String, Value>);

impl TemplateLoader for Files {
    fn load(&self, name: &str) -> Option<Arc<str>> {
        self.0.get(name).and_then(Value::as_str).map(Arc::from)
    }
}

#[test]
fn template_files_render_as_ansible_renders_them() {
    if std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1") {
        return;
    }
    let text = std::fs::read_to_string(dir().join("cases.yml")).expect("cases.yml");
    let doc: Value = serde_yaml::from_str(&text).expect("cases.yml is YAML");
    let cases = doc["cases"].as_array().expect("cases").clone();
    let mut child = Command::new(python())
        .arg(dir().join("render.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run render.py (set PREFLINT_PYTHON, or PREFLINT_SKIP_ORACLE=1)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(serde_json::to_string(&cases).expect("json").as_bytes())
        .expect("write cases");
    let out = child.wait_with_output().expect("render.py runs");
    assert!(out.status.success(), "render.py failed");
    let ansible: Value = serde_json::from_slice(&out.stdout).expect("render.py output");
    let mut problems = Vec::new();
    for c in &cases {
        let id = c["id"].as_str().expect("id");
        let facts: Vec<String> = c["facts"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|f| f.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let vars = Vars {
            known: c["vars"].as_object().cloned().unwrap_or_default(),
            facts: facts.clone(),
        };
        let files = Files(c["files"].as_object().cloned().unwrap_or_default());
        let template = c["template"].as_str().expect("template");
        let ours = jinja::render_file(template, &vars, &files, &FileOptions::default());
        let theirs = ansible[id].as_array().expect("outputs");
        if facts.is_empty() {
            let want = theirs[0].as_str().unwrap_or_default();
            match ours.full_text() {
                Some(got) if got == want => {}
                got => problems.push(format!("{id}: preflint {got:?}, ansible {:?}", theirs[0])),
            }
            continue;
        }
        for (sample, t) in c["samples"].as_array().expect("samples").iter().zip(theirs) {
            let Some(t) = t.as_str() else {
                problems.push(format!("{id} {sample}: ansible fails: {t}"));
                continue;
            };
            let lines: Vec<&str> = t.lines().collect();
            // Certain lines in order, each found after the previous one.
            let mut at = 0;
            for l in ours.lines.iter().filter(|l| l.is_certain()) {
                match lines[at..].iter().position(|x| *x == l.text) {
                    Some(p) => at += p + 1,
                    None => problems.push(format!(
                        "{id} {sample}: certain line {:?} not in ansible's {t:?}",
                        l.text
                    )),
                }
            }
            // Every line ansible writes is one preflint knows (certain or
            // conditional) or covers with an unknown line.
            let unknown = ours.lines.iter().any(|l| !l.is_known());
            for x in &lines {
                if !unknown && !ours.lines.iter().any(|l| l.text == *x) {
                    problems.push(format!("{id} {sample}: ansible's line {x:?} not foreseen"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

//! Template files rendered as Ansible's `template` action renders them.
//! The expected texts of fully known templates were taken from
//! ansible-core 2.19 (`Templar.copy_with_new_env(searchpath=...).template(
//! data, escape_backslashes=False, overrides=...)`, as the action calls it).

use super::*;
use crate::HashMap;
use crate::jinja::{Lookup, UnknownWhy, VarSource};
use serde_json::json;

struct Vars {
    known: HashMap<String, serde_json::Value>,
    unknown: HashMap<String, UnknownWhy>,
}

impl Vars {
    fn new(v: &serde_json::Value) -> Self {
        Vars {
            known: v
                .as_object()
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
            unknown: HashMap::default(),
        }
    }

    fn with(mut self, name: &str, why: UnknownWhy) -> Self {
        self.unknown.insert(name.into(), why);
        self
    }
}

impl VarSource for Vars {
    fn lookup(&self, name: &str) -> Lookup {
        if let Some(w) = self.unknown.get(name) {
            return Lookup::Unknown(w.clone());
        }
        self.known
            .get(name)
            .map_or(Lookup::Missing, |v| Lookup::Value(v.clone()))
    }
}

struct Files(Vec<(&'static str, &'static str)>);

impl TemplateLoader for Files {
    fn load(&self, name: &str) -> Option<Arc<str>> {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| Arc::from(*t))
    }
}

fn render(text: &str, vars: &Vars) -> FileText {
    render_file(text, vars, &NoTemplates, &FileOptions::default())
}

fn full(text: &str, vars: &serde_json::Value) -> String {
    let f = render(text, &Vars::new(vars));
    f.full_text()
        .unwrap_or_else(|| panic!("{text:?} not fully known: {f:#?}"))
}

#[test]
fn known_templates_render_as_ansible_does() {
    let vars = json!({"n": null, "u": false, "d": {"b": 1, "a": true}, "l": [1, 2, 3]});
    // Each expected text is ansible-core 2.19's output for the same template.
    let cases = [
        (
            "a={{ n }}|\n{% if u %}x{% endif %}\n{% for k, v in d.items() %}\n{{ loop.index }} {{ k }} = {{ v }}\n{% endfor %}\n\n",
            "a=|\n1 b = 1\n2 a = True\n\n",
        ),
        (
            "{% for i in l if i > 1 %}{{ i }}{{ ',' if not loop.last }}{% endfor %}\n",
            "2,3\n",
        ),
        ("{% for i in [] %}x{% else %}empty{% endfor %}\n", "empty\n"),
        // `set` in a loop does not leak out.
        (
            "{% set x = 1 %}{% for i in l %}{% set x = i %}{% endfor %}{{ x }}\n",
            "1\n",
        ),
        (
            "{% set b %}in {{ l | length }}{% endset %}[{{ b }}]\n",
            "[in 3]\n",
        ),
        (
            "{% macro kv(k, v='d') %}{{ k }}={{ v }}{% endmacro %}{{ kv('a') }} {{ kv('b', 2) }}\n",
            "a=d b=2\n",
        ),
        (
            "{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}in{% endcall %}\n",
            "<in>\n",
        ),
        ("line\n\n\n", "line\n\n\n"),
        ("no newline", "no newline"),
        (
            "{% if u %}\nyes\n{% else %}\nno\n{% endif %}\nend\n",
            "no\nend\n",
        ),
        (
            "#jinja2: trim_blocks: False\n{% if true %}\nx\n{% endif %}\n",
            "\nx\n",
        ),
        (
            "#jinja2:variable_start_string:'[%', variable_end_string:'%]'\n[% l[0] %] {{ x }}\n",
            "1 {{ x }}\n",
        ),
        (
            "#jinja2: lstrip_blocks: True\n  {% if true %}\nx\n  {% endif %}\n",
            "x\n",
        ),
        // A bare tuple as the iterable.
        (
            "{% for s in \"kube\", \"system\" -%}\n{{ s }},{% endfor %}\n",
            "kube,system,\n",
        ),
    ];
    for (t, want) in cases {
        assert_eq!(full(t, &vars), want, "{t:?}");
    }
}

#[test]
fn settings_from_a_dict_become_lines() {
    let f = full(
        "{% for key, value in settings.items() %}{{ key }} = {{ value }}\n{% endfor %}",
        &json!({"settings": {"net.ipv4.ip_forward": 0, "vm.swappiness": 10}}),
    );
    assert_eq!(f, "net.ipv4.ip_forward = 0\nvm.swappiness = 10\n");
}

#[test]
fn unknown_conditions_give_conditional_lines() {
    let vars = Vars::new(&json!({"k": "a"})).with("fact", UnknownWhy::Fact);
    let f = render(
        "first\n{% if fact == 'x' %}\n{{ k }} = 1\n{% else %}\n{{ k }} = 2\n{% endif %}\nlast = {{ 'y' if fact else 'n' }}\n",
        &vars,
    );
    let lines: Vec<(String, String, bool)> = f
        .lines
        .iter()
        .map(|l| (l.text.clone(), l.when_text(), l.is_known()))
        .collect();
    assert_eq!(
        lines,
        vec![
            ("first".into(), String::new(), true),
            (
                "a = 1".into(),
                "`fact == 'x'` is true (`fact` is a host fact)".into(),
                true
            ),
            (
                "a = 2".into(),
                "`fact == 'x'` is false (`fact` is a host fact)".into(),
                true
            ),
            (format!("last = {UNKNOWN_MARK}"), String::new(), false),
        ]
    );
    assert_eq!(f.coverage(), Coverage::Partly);
    assert_eq!(f.full_text(), None);
    assert!(f.lines.iter().all(|l| !l.text.contains("{{")));
}

#[test]
fn an_inline_branch_splits_the_line() {
    let vars = Vars::new(&json!({})).with("r", UnknownWhy::Registered);
    let f = render("v = {% if r %}1{% else %}0{% endif %} end\n", &vars);
    let texts: Vec<&str> = f.lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(texts, vec!["v = 1 end", "v = 0 end"]);
    assert!(f.lines.iter().all(|l| l.when.len() == 1));
}

#[test]
fn a_loop_over_something_unknown_gives_unknown_lines_not_an_unknown_file() {
    let vars = Vars::new(&json!({})).with("items", UnknownWhy::Registered);
    let f = render(
        "a = 1\n{% for i in items %}\n{{ i }} = 1\n{% endfor %}\nb = 2\n",
        &vars,
    );
    let known: Vec<&str> = f
        .lines
        .iter()
        .filter(|l| l.is_certain())
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(known, vec!["a = 1", "b = 2"]);
    let unknown: Vec<&Line> = f.unknown_lines().collect();
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0].unknown_text(), "`items` is a registered result");
}

#[test]
fn a_set_in_an_unknown_branch_makes_the_variable_unknown() {
    let vars = Vars::new(&json!({})).with("f", UnknownWhy::Fact);
    let f = render(
        "{% set x = 1 %}{% if f %}{% set x = 2 %}{% endif %}x = {{ x }}\n",
        &vars,
    );
    assert_eq!(f.unknown_lines().count(), 1, "{f:#?}");
}

#[test]
fn includes_imports_and_extends_come_from_the_loader() {
    let files = Files(vec![
        ("part.j2", "part {{ v }}\n"),
        (
            "macros.j2",
            "{% macro line(k, v) %}{{ k }} = {{ v }}{% endmacro %}",
        ),
        (
            "base.j2",
            "head\n{% block body %}default\n{% endblock %}tail\n",
        ),
        ("self.j2", "{% include 'self.j2' %}"),
    ]);
    let vars = Vars::new(&json!({"v": 1}));
    let r = |t: &str| render_file(t, &vars, &files, &FileOptions::default());
    assert_eq!(
        r("a\n{% include 'part.j2' %}b\n").full_text().as_deref(),
        // An included template's trailing newline is not kept.
        Some("a\npart 1b\n")
    );
    assert_eq!(
        r("{% import 'macros.j2' as m %}{{ m.line('x', v) }}\n")
            .full_text()
            .as_deref(),
        Some("x = 1\n")
    );
    assert_eq!(
        r("{% from 'macros.j2' import line as l %}{{ l('y', 2) }}\n")
            .full_text()
            .as_deref(),
        Some("y = 2\n")
    );
    assert_eq!(
        r("{% extends 'base.j2' %}{% block body %}mine {{ v }}\n{% endblock %}")
            .full_text()
            .as_deref(),
        // The child's trailing newlines count, not the parent's.
        Some("head\nmine 1\ntail")
    );
    // A template that includes itself: bounded, unknown, no panic.
    let f = r("{% include 'self.j2' %}");
    assert_eq!(f.coverage(), Coverage::None, "{f:#?}");
    let missing = r("{% include 'nope.j2' %}\nx\n");
    assert_eq!(missing.unknown_lines().count(), 1);
}

#[test]
fn bounds_hold() {
    let vars = Vars::new(&json!({}));
    // A macro that calls itself.
    let f = render(
        "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}\n",
        &vars,
    );
    assert!(f.full_text().is_none());
    // A loop over a million items.
    let f = render(
        "{% for i in range(1000000) %}{{ i }}\n{% endfor %}x\n",
        &vars,
    );
    assert_eq!(f.unknown_lines().count(), 1);
    assert!(f.lines.iter().any(|l| l.text == "x"));
    // A huge output.
    let f = render(
        "{% for i in range(9000) %}{% for j in range(9000) %}xxxxxxxxxx{% endfor %}{% endfor %}",
        &vars,
    );
    assert_eq!(f.coverage(), Coverage::None);
    // Loop controls are not Ansible's Jinja.
    let f = render("{% for i in [1] %}{% break %}{% endfor %}", &vars);
    assert_eq!(f.coverage(), Coverage::None);
}

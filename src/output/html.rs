//! `preflint who-fixes --format html`: one self-contained page (inline CSS and
//! script, no network, no external fonts) with a table of concerns by host
//! group, each cell coloured by its verdict, and the evidence (tasks, their
//! condition chains, where each variable got its value) revealed on click.
//!
//! Renders verdicts only; computes nothing. Every text from the tree is
//! escaped, and the output is the same bytes for the same verdicts.

use crate::concern::analyze::{
    CondEvidence, FactVerdict, Overall, PartVerdict, Status, TaskEvidence, VarEvidence, Verdict,
};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The host group of verdicts no play's hosts pattern names.
const ALL: &str = "all";

/// Escapes text for HTML element content and quoted attribute values.
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The CSS class suffix of a verdict (the JSON spelling of `overall`).
#[must_use]
pub fn verdict_class(o: Overall) -> &'static str {
    match o {
        Overall::Fixed => "fixed",
        Overall::FixedWhenRuntime => "fixed_when_runtime",
        Overall::Conditional => "conditional",
        Overall::Partial => "partial",
        Overall::CheckedOnly => "checked_only",
        Overall::Operator => "operator",
        Overall::Fact => "fact",
    }
}

/// What each verdict means, for the legend.
fn verdict_help(o: Overall) -> &'static str {
    match o {
        Overall::Fixed => "a reachable task fixes it with the default variables",
        Overall::FixedWhenRuntime => {
            "fixed, if facts or results known only at run time allow the task"
        }
        Overall::Conditional => "a task exists but is off unless the operator sets a variable",
        Overall::Partial => "some parts are fixed, others are left to the operator",
        Overall::CheckedOnly => "the automation only checks it; the operator fixes it",
        Overall::Operator => "nothing in the automation addresses it",
        Overall::Fact => "a value the automation uses, with where it comes from",
    }
}

const VERDICTS: [Overall; 7] = [
    Overall::Fixed,
    Overall::FixedWhenRuntime,
    Overall::Conditional,
    Overall::Partial,
    Overall::CheckedOnly,
    Overall::Operator,
    Overall::Fact,
];

fn status_class(s: Status) -> &'static str {
    match s {
        Status::Fixed => "fixed",
        Status::FixedWhenRuntime => "fixed_when_runtime",
        Status::Conditional => "conditional",
        Status::CheckedOnly => "checked_only",
        Status::Operator => "operator",
    }
}

fn status_label(s: Status) -> &'static str {
    match s {
        Status::Fixed => "fixed",
        Status::FixedWhenRuntime => "fixed when run-time conditions allow",
        Status::Conditional => "off unless turned on",
        Status::CheckedOnly => "checked only",
        Status::Operator => "not addressed",
    }
}

/// The short text of a cell.
fn cell_label(v: &Verdict) -> String {
    match v.overall {
        Overall::Fact => v.who.clone(),
        Overall::Fixed => format!("fixed by {}", v.who),
        Overall::FixedWhenRuntime => format!("fixed by {} (run-time)", v.who),
        o => o.label().to_string(),
    }
}

/// The host groups of a verdict: its plays' hosts patterns, or `all`.
fn groups_of(v: &Verdict) -> Vec<&str> {
    if v.hosts.is_empty() {
        vec![ALL]
    } else {
        v.hosts.iter().map(String::as_str).collect()
    }
}

/// The table's columns: `all` first (when used), then the patterns sorted.
fn columns(verdicts: &[Verdict]) -> Vec<&str> {
    let set: BTreeSet<&str> = verdicts.iter().flat_map(groups_of).collect();
    let mut cols: Vec<&str> = set.iter().copied().filter(|g| *g != ALL).collect();
    if set.contains(ALL) {
        cols.insert(0, ALL);
    }
    cols
}

/// The whole page.
#[must_use]
pub fn render(automation: &str, verdicts: &[Verdict]) -> String {
    let cols = columns(verdicts);
    let mut out = String::new();
    let title = format!("Who prepares the nodes: {automation}");
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"preflint who-fixes\">\n\
         <title>{}</title>\n<style>\n{CSS}",
        escape(&title)
    );
    // One colour per verdict, from the same list as the classes and legend.
    for o in VERDICTS {
        let _ = writeln!(
            out,
            ".v-{k} .swatch {{ background: var(--{k}); }}\n\
             td.v-{k} {{ background: var(--{k}-bg); box-shadow: inset 4px 0 0 var(--{k}); }}\n\
             .st-{k} {{ color: var(--{k}); border-color: var(--{k}); }}",
            k = verdict_class(o)
        );
    }
    out.push_str("</style>\n</head>\n<body>\n");
    let _ = write!(
        out,
        "<header>\n<h1>Who prepares the nodes <span class=\"automation\">{}</span></h1>\n\
         <p class=\"intro\">For every Kubernetes node-preparation concern and every host group \
         (the hosts patterns of the plays whose tasks fix it), who takes care of it: the \
         automation, only under a condition, only a check, or the operator. Click a cell for the \
         tasks, their <code>when</code> chains and where each variable got its value.</p>\n",
        escape(automation)
    );
    legend(&mut out, verdicts);
    out.push_str(
        "<div class=\"tools\" id=\"tools\" hidden>\
         <input type=\"search\" id=\"filter\" placeholder=\"Filter concerns\" aria-label=\"Filter concerns\">\
         <button type=\"button\" id=\"expand\">Expand all</button>\
         <button type=\"button\" id=\"collapse\">Collapse all</button></div>\n</header>\n<main>\n",
    );
    out.push_str("<div class=\"scroll\">\n<table id=\"verdicts\">\n<thead>\n<tr><th scope=\"col\" class=\"concern\">concern</th><th scope=\"col\" class=\"applies\">applies to</th>");
    for g in &cols {
        let _ = write!(
            out,
            "<th scope=\"col\" class=\"group\" data-group=\"{0}\">{0}</th>",
            escape(g)
        );
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    for v in verdicts {
        row(&mut out, v, &cols);
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
    if verdicts.is_empty() {
        out.push_str("<p class=\"empty\">No concerns in the catalog.</p>\n");
    }
    let _ = write!(
        out,
        "</main>\n<footer>Generated by preflint {} from the tree as written; nothing was run.</footer>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        escape(env!("CARGO_PKG_VERSION"))
    );
    out
}

fn legend(out: &mut String, verdicts: &[Verdict]) {
    out.push_str("<ul class=\"legend\">");
    for o in VERDICTS {
        let n = verdicts.iter().filter(|v| v.overall == o).count();
        let _ = write!(
            out,
            "<li class=\"v-{}\" title=\"{}\"><span class=\"swatch\"></span>{} <b>{n}</b></li>",
            verdict_class(o),
            escape(verdict_help(o)),
            escape(o.label())
        );
    }
    out.push_str("</ul>\n");
}

fn row(out: &mut String, v: &Verdict, cols: &[&str]) {
    let class = verdict_class(v.overall);
    let _ = write!(
        out,
        "<tr id=\"concern-{id}\" data-concern=\"{id}\" data-verdict=\"{class}\">\
         <th scope=\"row\" class=\"concern\"><code class=\"id\">{id}</code>\
         <span class=\"title\">{title}</span>",
        id = escape(&v.id),
        title = escape(&v.title)
    );
    if let Some(p) = &v.preflight {
        let _ = write!(
            out,
            "<span class=\"preflight\">kubeadm preflight: <code>{}</code></span>",
            escape(p)
        );
    }
    out.push_str("</th><td class=\"applies\">");
    if v.applies_to.is_empty() {
        out.push_str("<span class=\"muted\">—</span>");
    }
    for a in &v.applies_to {
        let _ = write!(out, "<span class=\"role\">{}</span>", escape(a));
    }
    out.push_str("</td>");
    let mine = groups_of(v);
    for g in cols {
        if !mine.contains(g) {
            let _ = write!(
                out,
                "<td class=\"cell none\" data-group=\"{}\"><span class=\"muted\">·</span></td>",
                escape(g)
            );
            continue;
        }
        let _ = write!(
            out,
            "<td class=\"cell v-{class}\" data-group=\"{}\" data-verdict=\"{class}\">\
             <details><summary>{}</summary><div class=\"panel\">",
            escape(g),
            escape(&cell_label(v))
        );
        panel(out, v, g);
        out.push_str("</div></details></td>");
    }
    out.push_str("</tr>\n");
}

/// The evidence of one cell: the tasks of the plays on `group`, plus those of
/// plays whose pattern is not one of the verdict's groups (checks elsewhere).
fn panel(out: &mut String, v: &Verdict, group: &str) {
    let _ = write!(
        out,
        "<p class=\"verdict\"><b>{}</b> — {}</p>",
        escape(v.overall.label()),
        escape(verdict_help(v.overall))
    );
    if let Some(f) = &v.fact {
        fact(out, f);
        return;
    }
    if !v.missing_parts.is_empty() {
        out.push_str("<p class=\"hint\">Nothing fixes: ");
        code_list(out, &v.missing_parts);
        out.push_str("</p>");
    }
    let filter =
        |e: &&TaskEvidence| v.hosts.is_empty() || e.hosts == group || !v.hosts.contains(&e.hosts);
    for p in &v.parts {
        part(
            out,
            p,
            &p.evidence.iter().filter(filter).collect::<Vec<_>>(),
        );
    }
}

fn part(out: &mut String, p: &PartVerdict, evidence: &[&TaskEvidence]) {
    let _ = write!(
        out,
        "<section class=\"part\"><h4>{} <span class=\"st st-{}\">{}</span></h4>",
        escape(&p.name),
        status_class(p.status),
        status_label(p.status)
    );
    if !p.turn_on.is_empty() {
        out.push_str("<p class=\"hint\">Off unless the operator sets ");
        code_list(out, &p.turn_on);
        out.push_str("</p>");
    }
    if !p.runtime.is_empty() {
        out.push_str("<p class=\"hint\">Depends at run time on ");
        code_list(out, &p.runtime);
        out.push_str("</p>");
    }
    if evidence.is_empty() {
        out.push_str("<p class=\"muted\">No task addresses this part on these hosts.</p>");
    } else {
        out.push_str("<ol class=\"evidence\">");
        for e in evidence {
            task(out, e);
        }
        out.push_str("</ol>");
    }
    out.push_str("</section>");
}

fn task(out: &mut String, e: &TaskEvidence) {
    let _ = write!(
        out,
        "<li class=\"ev ev-{role}\"><div class=\"ev-head\"><span class=\"badge r-{role}\">{role}</span>\
         <span class=\"st st-{}\">{}</span> <code class=\"loc\">{}:{}</code> \
         <span class=\"task\">{}</span></div><dl class=\"meta\">",
        status_class(e.status),
        status_label(e.status),
        escape(&e.file),
        e.line,
        escape(&e.task),
        role = escape(e.role),
    );
    let mut meta = |k: &str, v: String| {
        let _ = write!(out, "<dt>{k}</dt><dd>{v}</dd>");
    };
    meta("module", format!("<code>{}</code>", escape(&e.module)));
    meta(
        "play",
        format!(
            "<code>{}</code>, hosts <code>{}</code>",
            escape(&e.entry),
            escape(&e.hosts)
        ),
    );
    if !e.roles.is_empty() {
        let chain: Vec<String> = e.roles.iter().map(|r| escape(r)).collect();
        meta("roles", chain.join(" › "));
    }
    if let Some(i) = &e.item {
        meta("item", format!("<code>{}</code>", escape(i)));
    }
    if !e.writes.is_empty() {
        let w: Vec<String> = e
            .writes
            .iter()
            .map(|w| format!("<code>{}</code>", escape(w)))
            .collect();
        meta("writes", w.join(", "));
    }
    out.push_str("</dl>");
    if e.conditions.is_empty() {
        out.push_str("<p class=\"uncond\">unconditional</p>");
    } else {
        out.push_str("<ol class=\"conds\">");
        for c in &e.conditions {
            condition(out, c);
        }
        out.push_str("</ol>");
    }
    out.push_str("</li>");
}

fn origin_label(c: &CondEvidence) -> &'static str {
    use crate::ansible::task::Origin;
    match c.origin {
        Origin::Playbook => "play",
        Origin::Role => "role entry",
        Origin::Import => "import",
        Origin::Include => "include",
        Origin::Block => "block",
        Origin::Task => "task",
    }
}

fn condition(out: &mut String, c: &CondEvidence) {
    let _ = write!(
        out,
        "<li class=\"cond res-{r}\"><code class=\"expr\">{}</code> → <b class=\"res\">{r}</b> \
         <span class=\"where\">{} <code>when</code> at <code>{}:{}</code></span>",
        escape(&c.expr),
        origin_label(c),
        escape(&c.file),
        c.line,
        r = escape(c.result),
    );
    if !c.depends_on.is_empty() {
        out.push_str("<span class=\"where\"> · depends on ");
        code_list(out, &c.depends_on);
        out.push_str("</span>");
    }
    if !c.vars.is_empty() {
        out.push_str("<ul class=\"vars\">");
        for v in &c.vars {
            var(out, v);
        }
        out.push_str("</ul>");
    }
    out.push_str("</li>");
}

fn var(out: &mut String, v: &VarEvidence) {
    let _ = write!(
        out,
        "<li class=\"var{}\"><code>{}</code> = <code class=\"value\">{}</code>",
        if v.known { "" } else { " unknown" },
        escape(&v.name),
        escape(&v.value)
    );
    if let Some(s) = &v.source {
        let _ = write!(out, " <span class=\"src\">{}</span>", escape(s));
    }
    if let (Some(f), Some(l)) = (&v.file, v.line) {
        let _ = write!(out, " at <code class=\"loc\">{}:{l}</code>", escape(f));
    }
    if !v.overrides.is_empty() {
        out.push_str(" <span class=\"muted\">overrides ");
        code_list(out, &v.overrides);
        out.push_str("</span>");
    }
    out.push_str("</li>");
}

fn fact(out: &mut String, f: &FactVerdict) {
    let _ = write!(
        out,
        "<dl class=\"meta\"><dt>value</dt><dd><code>{}</code></dd>",
        escape(&f.value)
    );
    if let Some(var) = &f.variable {
        let _ = write!(out, "<dt>from</dt><dd><code>{}</code></dd>", escape(var));
    }
    if let Some(w) = &f.winner_reason {
        let _ = write!(out, "<dt>why</dt><dd>{}</dd>", escape(w));
    }
    if !f.runtime_changes.is_empty() {
        out.push_str("<dt>set_fact</dt><dd>");
        code_list(out, &f.runtime_changes);
        out.push_str("</dd>");
    }
    if !f.used_at.is_empty() {
        out.push_str("<dt>used at</dt><dd>");
        code_list(out, &f.used_at);
        out.push_str("</dd>");
    }
    out.push_str("</dl>");
    if !f.definitions.is_empty() {
        out.push_str("<h4>definitions</h4><ul class=\"vars\">");
        for d in &f.definitions {
            var(out, d);
        }
        out.push_str("</ul>");
    }
}

fn code_list(out: &mut String, items: &[String]) {
    let list: Vec<String> = items
        .iter()
        .map(|i| format!("<code>{}</code>", escape(i)))
        .collect();
    out.push_str(&list.join(", "));
}

const CSS: &str = r#":root {
  --fg: #1f2328; --muted: #656d76; --line: #d0d7de; --bg: #ffffff; --panel: #f6f8fa;
  --fixed: #2da44e; --fixed-bg: #dafbe1;
  --fixed_when_runtime: #1b7c83; --fixed_when_runtime-bg: #d8f3f1;
  --conditional: #bf8700; --conditional-bg: #fff8c5;
  --partial: #e16f24; --partial-bg: #ffe7d1;
  --checked_only: #8250df; --checked_only-bg: #f1e8ff;
  --operator: #cf222e; --operator-bg: #ffebe9;
  --fact: #57606a; --fact-bg: #eaeef2;
}
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px; color: var(--fg); background: var(--bg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
h1 { font-size: 22px; margin: 0 0 6px; }
h1 .automation { color: var(--muted); font-weight: 600; }
.intro { margin: 0 0 12px; color: var(--muted); max-width: 70em; }
.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 8px; margin: 0 0 12px; padding: 0; }
.legend li { display: flex; align-items: center; gap: 6px; padding: 3px 10px; border-radius: 999px;
  border: 1px solid var(--line); background: var(--panel); cursor: help; }
.legend .swatch { width: 12px; height: 12px; border-radius: 3px; }
.tools { display: flex; gap: 8px; margin: 0 0 12px; }
.tools input { padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; min-width: 16em; }
.tools button { padding: 4px 12px; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); cursor: pointer; }
.scroll { overflow-x: auto; }
table { border-collapse: separate; border-spacing: 0; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: 6px 8px; vertical-align: top; text-align: left; }
thead th { position: sticky; top: 0; background: var(--bg); border-bottom: 2px solid var(--line); font-weight: 600; white-space: nowrap; }
thead th.group { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
th.concern { width: 19em; font-weight: normal; }
th.concern .id { display: block; font-weight: 700; font-size: 13.5px; }
th.concern .title { display: block; color: var(--muted); }
th.concern .preflight { display: block; color: var(--muted); font-size: 12px; }
td.applies { width: 10em; }
.role { display: inline-block; margin: 0 4px 4px 0; padding: 0 6px; border-radius: 4px; background: var(--panel);
  border: 1px solid var(--line); font-size: 12px; }
.muted { color: var(--muted); }
td.cell { min-width: 14em; border-left: 1px solid var(--line); }
td.cell.none { text-align: center; color: var(--line); }
td.cell > details > summary { cursor: pointer; font-weight: 600; padding: 2px 0; list-style-position: inside; }
.panel { margin-top: 6px; padding: 8px 10px; max-width: 34em; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; font-size: 13px; overflow-wrap: break-word; }
td.cell:has(details[open]) { min-width: 26em; }
.panel .verdict { margin: 0 0 6px; }
.panel h4 { margin: 8px 0 4px; font-size: 13px; }
.part + .part { border-top: 1px dashed var(--line); margin-top: 6px; }
.hint { margin: 2px 0; }
ol.evidence { margin: 4px 0; padding-left: 18px; }
.ev { margin: 4px 0 8px; }
.ev-head { display: flex; flex-wrap: wrap; gap: 6px; align-items: baseline; }
.ev-head .task { font-style: italic; }
.badge { padding: 0 6px; border-radius: 4px; font-size: 11px; text-transform: uppercase; color: #fff; }
.r-fix { background: var(--fixed); }
.r-check { background: var(--checked_only); }
.st { padding: 0 6px; border-radius: 4px; font-size: 11.5px; border: 1px solid; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0 10px; margin: 4px 0; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; }
.uncond { margin: 2px 0; color: var(--muted); }
ol.conds { margin: 2px 0; padding-left: 18px; }
.cond .where { color: var(--muted); font-size: 12px; }
.res-true .res { color: var(--fixed); }
.res-false .res { color: var(--operator); }
.res-unknown .res { color: var(--conditional); }
ul.vars { margin: 2px 0; padding-left: 18px; }
.var.unknown .value { color: var(--conditional); }
.src { color: var(--muted); }
footer { margin-top: 18px; color: var(--muted); font-size: 12px; }
.empty { color: var(--muted); }
tr.hidden { display: none; }
"#;

/// Expand/collapse all and the filter; the page works without it.
const SCRIPT: &str = r##"(function () {
  "use strict";
  var cells = document.querySelectorAll("#verdicts details");
  function all(open) { for (var i = 0; i < cells.length; i++) { cells[i].open = open; } }
  document.getElementById("expand").addEventListener("click", function () { all(true); });
  document.getElementById("collapse").addEventListener("click", function () { all(false); });
  var rows = document.querySelectorAll("#verdicts tbody tr");
  document.getElementById("filter").addEventListener("input", function (e) {
    var q = e.target.value.toLowerCase();
    for (var i = 0; i < rows.length; i++) {
      var text = rows[i].querySelector("th").textContent.toLowerCase();
      rows[i].classList.toggle("hidden", q !== "" && text.indexOf(q) < 0);
    }
  });
  document.getElementById("tools").hidden = false;
})();
"##;

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(id: &str, overall: Overall, hosts: &[&str]) -> Verdict {
        Verdict {
            id: id.into(),
            title: format!("<b>{id}</b> & \"co\""),
            overall,
            who: "tool".into(),
            preflight: None,
            applies_to: vec!["worker".into()],
            missing_parts: Vec::new(),
            hosts: hosts.iter().map(|h| (*h).to_string()).collect(),
            parts: Vec::new(),
            fact: None,
        }
    }

    #[test]
    fn escapes_every_text() {
        assert_eq!(
            escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let page = render("<script>", &[verdict("x<y", Overall::Fixed, &["k8s&co"])]);
        assert!(!page.contains("<script>alert") && !page.contains("x<y"));
        assert!(page.contains("x&lt;y") && page.contains("k8s&amp;co"));
        assert!(page.contains("&lt;b&gt;x&lt;y&lt;/b&gt; &amp; &quot;co&quot;"));
        assert_eq!(
            page.matches("<script>").count(),
            1,
            "only the page's own script"
        );
    }

    #[test]
    fn verdicts_without_hosts_go_under_all_first() {
        let vs = [
            verdict("a", Overall::Operator, &[]),
            verdict("b", Overall::Fixed, &["k8s_cluster", "etcd"]),
        ];
        assert_eq!(columns(&vs), ["all", "etcd", "k8s_cluster"]);
        let page = render("t", &vs);
        assert!(page.contains("<td class=\"cell v-operator\" data-group=\"all\""));
        assert!(page.contains("<td class=\"cell v-fixed\" data-group=\"etcd\""));
        assert!(page.contains("<td class=\"cell none\" data-group=\"all\""));
    }

    #[test]
    fn same_verdicts_same_page_and_self_contained() {
        let vs = [verdict("a", Overall::Partial, &["all"])];
        let page = render("t", &vs);
        assert_eq!(page, render("t", &vs));
        for external in ["http://", "https://", "src=", "href=", "@import", "url("] {
            assert!(!page.contains(external), "{external}");
        }
    }
}

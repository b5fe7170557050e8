//! Every `preflint` command in docs/ci.md runs as written and does what the
//! page says.
//!
//! The page's fenced code blocks are parsed (the YAML ones as YAML: GitHub's
//! `run:` and GitLab's `script:` lines; shell blocks line by line; Makefile
//! recipe lines), each `preflint ...` command is cut out of its shell line
//! (with its `>`/`>>` redirection) and run with the binary under test, in a
//! temporary directory holding a copy of a test tree at the PATH the recipe
//! names, so the report files land there. One directory per code block, so a
//! block's commands see each other's files (the baseline written, then read).
//!
//! The exit code each command must give follows the page's exit-code table:
//! 1 when a finding at or above the fail level remains after the baseline,
//! else 0; 0 for `--write-baseline` and `who-fixes`. Each command runs on a
//! tree with an error finding, one with a warning and one with only info
//! findings. Outputs must parse: SARIF, JSON and code quality as JSON, JUnit
//! as XML (Python's XML parser, through tests/sarif/validate.py), GitHub
//! format as workflow commands. The recipe YAML itself is not executed, but
//! its wiring is checked: the uploaded and reported files are the ones the
//! commands write.
//!
//! JUnit parsing needs a Python (`PREFLINT_PYTHON`, else `python3`); the test
//! fails without one unless `PREFLINT_SKIP_ORACLE=1`.

use clap::Parser;
use preflint::diagnostic::Severity;
use preflint::settings::{CheckFormat, CheckSettings, Command as Sub, WhoFixesFormat};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The trees every command runs on, with their worst finding.
const TREES: [(&str, &str); 3] = [
    ("test-repos/hazards/cgroup-mismatch", "error"),
    ("test-repos/hazards/live-only", "warning"),
    ("test-repos/who-fixes/handmade", "info"),
];

/// The binary's command line, to read each recipe as `preflint` does: its
/// clap types and their conversion into the library's settings.
#[path = "../src/cli.rs"]
#[allow(dead_code)]
mod cli;

/// Values for the environment variables the recipes use.
const VARS: [(&str, &str); 1] = [("GITHUB_STEP_SUMMARY", "step-summary.md")];

// ---- markdown ---------------------------------------------------------------

/// A fenced code block: its info string, text and first line (1-based).
struct Block {
    lang: String,
    text: String,
    line: usize,
}

fn fenced_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(char, usize, Block)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        let fence = |c: char| trimmed.chars().take_while(|&x| x == c).count();
        match &mut open {
            None => {
                for c in ['`', '~'] {
                    let n = fence(c);
                    if n >= 3 {
                        let lang = trimmed[n..].trim().to_string();
                        open = Some((
                            c,
                            n,
                            Block {
                                lang,
                                text: String::new(),
                                line: i + 2,
                            },
                        ));
                        break;
                    }
                }
            }
            Some((c, n, block)) => {
                let m = fence(*c);
                if m >= *n && trimmed[m..].trim().is_empty() {
                    blocks.push(open.take().expect("open block").2);
                } else {
                    block.text.push_str(line);
                    block.text.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "docs/ci.md: a code block is never closed");
    blocks
}

// ---- shell lines ------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A word; `$NAME` references are kept as `\0NAME\0` until expanded.
    Word(String),
    Op(String),
}

/// Splits a shell line into words and operators (quotes, `$VAR`, comments).
fn tokenize(line: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let var = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut String| {
        let braced = chars.peek() == Some(&'{');
        if braced {
            chars.next();
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                chars.next();
            } else {
                break;
            }
        }
        if braced {
            assert_eq!(chars.next(), Some('}'), "unsupported ${{...}} in `{line}`");
        }
        out.push('\0');
        out.push_str(&name);
        out.push('\0');
    };
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    toks.push(Tok::Word(std::mem::take(&mut cur)));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        '$' => var(&mut chars, &mut cur),
                        _ => cur.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.extend(chars.next());
            }
            '$' => {
                in_word = true;
                var(&mut chars, &mut cur);
            }
            '|' | '&' | ';' | '>' | '<' => {
                // `2>` and `1>` redirect a file descriptor.
                let mut op = String::new();
                if c == '>' && in_word && (cur == "1" || cur == "2") {
                    op = std::mem::take(&mut cur);
                    in_word = false;
                }
                if in_word {
                    toks.push(Tok::Word(std::mem::take(&mut cur)));
                    in_word = false;
                }
                op.push(c);
                if let Some(&n) = chars.peek()
                    && ((n == c && c != ';' && c != '<') || (c == '&' && n == '>'))
                {
                    op.push(n);
                    chars.next();
                }
                toks.push(Tok::Op(op));
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        toks.push(Tok::Word(cur));
    }
    toks
}

/// One `preflint` command of the page.
#[derive(Debug, Clone)]
struct Invocation {
    /// Arguments after `preflint`, variables expanded.
    args: Vec<String>,
    /// Where stdout goes: (file, append).
    stdout: Option<(String, bool)>,
    /// The shell line and where it is.
    line: String,
    place: String,
}

fn expand(word: &str, line: &str) -> String {
    let mut out = String::new();
    for (i, part) in word.split('\0').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        } else {
            let value = VARS
                .iter()
                .find(|(k, _)| *k == part)
                .unwrap_or_else(|| panic!("`{line}`: no test value for ${part} (add it to VARS)"));
            out.push_str(value.1);
        }
    }
    out
}

/// The `preflint` commands of one shell line.
fn invocations(line: &str, place: &str) -> Vec<Invocation> {
    let toks = tokenize(line);
    let mut found = Vec::new();
    for cmd in
        toks.split(|t| matches!(t, Tok::Op(o) if ["|", "||", "&&", ";", "&"].contains(&o.as_str())))
    {
        let mut words = Vec::new();
        let mut stdout = None;
        let mut it = cmd.iter();
        while let Some(t) = it.next() {
            match t {
                Tok::Word(w) => words.push(w.clone()),
                Tok::Op(op) => {
                    let Some(Tok::Word(target)) = it.next() else {
                        panic!("`{line}`: `{op}` without a file");
                    };
                    match op.as_str() {
                        ">" | "1>" => stdout = Some((target.clone(), false)),
                        ">>" => stdout = Some((target.clone(), true)),
                        "2>" | "<" => {}
                        _ => panic!("`{line}`: unsupported redirection `{op}`"),
                    }
                }
            }
        }
        let program = words.iter().position(|w| {
            let assignment = w.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            !assignment
        });
        let Some(p) = program else { continue };
        if words[p] != "preflint" {
            continue;
        }
        found.push(Invocation {
            args: words[p + 1..].iter().map(|w| expand(w, line)).collect(),
            stdout: stdout.map(|(f, a)| (expand(&f, line), a)),
            line: line.to_string(),
            place: place.to_string(),
        });
    }
    found
}

/// The shell lines of a block, by its language.
fn shell_lines(block: &Block) -> Vec<(String, String)> {
    let place = |n: usize| format!("docs/ci.md:{n}");
    let lang = block.lang.split_whitespace().next().unwrap_or("");
    match lang {
        "yaml" | "yml" => {
            let doc: serde_yaml::Value = serde_yaml::from_str(&block.text).unwrap_or_else(|e| {
                panic!("{}: the YAML block does not parse: {e}", place(block.line))
            });
            let mut lines = Vec::new();
            yaml_commands(&doc, &mut lines);
            lines.into_iter().map(|l| (l, place(block.line))).collect()
        }
        "sh" | "bash" | "shell" | "console" => {
            let mut out = Vec::new();
            let mut pending = String::new();
            for (i, raw) in block.text.lines().enumerate() {
                let l = raw.trim();
                let l = l.strip_prefix("$ ").unwrap_or(l);
                if let Some(head) = l.strip_suffix('\\') {
                    pending.push_str(head);
                    continue;
                }
                pending.push_str(l);
                out.push((std::mem::take(&mut pending), place(block.line + i)));
            }
            out
        }
        "make" | "makefile" | "Makefile" => block
            .text
            .lines()
            .enumerate()
            .filter_map(|(i, l)| {
                l.strip_prefix('\t').map(|cmd| {
                    (
                        cmd.trim_start_matches(['@', '-']).to_string(),
                        place(block.line + i),
                    )
                })
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// GitHub's `run:` and GitLab's `script:` (and before/after) lines.
fn yaml_commands(v: &serde_yaml::Value, out: &mut Vec<String>) {
    match v {
        serde_yaml::Value::Mapping(m) => {
            for (k, val) in m {
                match (k.as_str(), val) {
                    (Some("run"), serde_yaml::Value::String(s)) => {
                        out.extend(s.lines().map(str::to_string));
                    }
                    (Some("script" | "before_script" | "after_script"), v) => match v {
                        serde_yaml::Value::String(s) => out.extend(s.lines().map(str::to_string)),
                        serde_yaml::Value::Sequence(items) => out.extend(
                            items
                                .iter()
                                .filter_map(serde_yaml::Value::as_str)
                                .flat_map(str::lines)
                                .map(str::to_string),
                        ),
                        _ => {}
                    },
                    _ => yaml_commands(val, out),
                }
            }
        }
        serde_yaml::Value::Sequence(items) => {
            for i in items {
                yaml_commands(i, out);
            }
        }
        _ => {}
    }
}

fn page() -> String {
    std::fs::read_to_string(repo().join("docs/ci.md")).expect("read docs/ci.md")
}

/// Every block of the page with its `preflint` commands (blocks without any left out).
fn recipes() -> Vec<(Block, Vec<Invocation>)> {
    fenced_blocks(&page())
        .into_iter()
        .filter_map(|b| {
            let inv: Vec<Invocation> = shell_lines(&b)
                .iter()
                .flat_map(|(l, place)| invocations(l, place))
                .collect();
            (!inv.is_empty()).then_some((b, inv))
        })
        .collect()
}

// ---- what a command must do -------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Output {
    Human,
    Json,
    Sarif,
    Github,
    CodeClimate,
    Junit,
    Markdown,
    Html,
    Other,
}

/// A command as the CLI reads it.
struct Meaning {
    path: PathBuf,
    output: Output,
    /// For `check`: the fail level, the baseline read and the one written.
    check: Option<(Severity, Option<PathBuf>, Option<PathBuf>)>,
}

fn meaning(inv: &Invocation) -> Meaning {
    let argv = std::iter::once("preflint".to_string()).chain(inv.args.iter().cloned());
    let cli = cli::Cli::try_parse_from(argv)
        .unwrap_or_else(|e| panic!("{}: `{}` does not parse:\n{e}", inv.place, inv.line));
    let cli::Invocation::Run(settings) = cli::Invocation::from(cli) else {
        panic!("{}: `{}`: not a run", inv.place, inv.line)
    };
    let check = |a: CheckSettings| {
        let output = match a.format {
            CheckFormat::Human => Output::Human,
            CheckFormat::Json => Output::Json,
            CheckFormat::Sarif => Output::Sarif,
            CheckFormat::Github => Output::Github,
            CheckFormat::Codeclimate => Output::CodeClimate,
            CheckFormat::Junit => Output::Junit,
        };
        Meaning {
            path: a.common.path,
            output,
            check: Some((
                a.fail_level.unwrap_or(Severity::Warning),
                a.baseline,
                a.write_baseline,
            )),
        }
    };
    match settings.command {
        Sub::Check(a) => check(a),
        Sub::WhoFixes(a) => Meaning {
            path: a.common.path,
            output: match a.format {
                WhoFixesFormat::Json | WhoFixesFormat::Compact => Output::Json,
                WhoFixesFormat::Markdown => Output::Markdown,
                WhoFixesFormat::Html => Output::Html,
                _ => Output::Other,
            },
            check: None,
        },
        _ => panic!(
            "{}: `{}`: only check and who-fixes recipes are covered",
            inv.place, inv.line
        ),
    }
}

fn rank(severity: &str) -> u8 {
    match severity {
        "info" => 0,
        "warning" => 1,
        "error" => 2,
        other => panic!("unknown severity {other}"),
    }
}

fn level_rank(l: Severity) -> u8 {
    match l {
        Severity::Info => 0,
        Severity::Warning => 1,
        Severity::Error => 2,
    }
}

/// The tree's findings as (severity rank, fingerprint).
fn findings_of(tree: &str) -> Vec<(u8, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_preflint"))
        .args(["check", "--format", "json"])
        .arg(repo().join(tree))
        .output()
        .expect("run preflint");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON findings");
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                rank(f["severity"].as_str().expect("severity")),
                f["fingerprint"].as_str().expect("fingerprint").to_string(),
            )
        })
        .collect()
}

fn baseline_fingerprints(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("baseline {}: {e}", path.display()));
    let doc: serde_json::Value = serde_json::from_str(&text).expect("baseline JSON");
    doc["findings"]
        .as_array()
        .expect("baseline findings")
        .iter()
        .filter_map(|f| f["fingerprint"].as_str().map(str::to_string))
        .collect()
}

fn copy_tree(src: &Path, dst: &Path) {
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let e = entry.expect("walk");
        let to = dst.join(e.path().strip_prefix(src).expect("under src"));
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).expect("mkdir");
        } else if e.file_type().is_symlink() {
            let link = std::fs::read_link(e.path()).expect("readlink");
            std::os::unix::fs::symlink(link, &to).expect("symlink");
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

/// A Python for the XML check, or `None` when skipped.
fn python() -> Option<PathBuf> {
    let found = std::env::var_os("PREFLINT_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            repo().join("target/oracle-venv/bin/python"),
            PathBuf::from("python3"),
        ])
        .find(|p| {
            Command::new(p)
                .args(["-c", "import xml.etree.ElementTree"])
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() {
        assert!(
            std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1"),
            "no Python to parse the JUnit recipes' XML: run scripts/test.sh, set PREFLINT_PYTHON, \
             or set PREFLINT_SKIP_ORACLE=1 to skip"
        );
        eprintln!("JUnit XML parsing skipped (PREFLINT_SKIP_ORACLE=1)");
    }
    found
}

/// Checks that `text` is what `output` promises; `what` names it in messages.
fn assert_parses(output: Output, text: &str, file: &Path, what: &str, findings: usize) {
    let json = || -> serde_json::Value {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON: {e}\n{text}"))
    };
    match output {
        Output::Sarif => {
            let doc = json();
            assert_eq!(doc["version"], "2.1.0", "{what}");
            let results = doc["runs"][0]["results"].as_array().expect("results");
            assert_eq!(results.len(), findings, "{what}: SARIF results");
        }
        Output::CodeClimate => {
            let issues = json();
            let issues = issues
                .as_array()
                .expect("a code quality report is an array");
            assert_eq!(issues.len(), findings, "{what}: code quality issues");
            for i in issues {
                assert!(i["location"]["path"].is_string(), "{what}: {i}");
            }
        }
        Output::Json => {
            json();
        }
        Output::Github => {
            let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
            assert_eq!(lines.len(), findings, "{what}: one annotation per finding");
            for l in lines {
                assert!(l.starts_with("::"), "{what}: not a workflow command: {l}");
            }
        }
        Output::Junit => {
            if let Some(py) = python() {
                let out = Command::new(py)
                    .arg(repo().join("tests/sarif/validate.py"))
                    .arg("junit")
                    .arg(file)
                    .output()
                    .expect("run validate.py");
                assert!(
                    out.status.success(),
                    "{what}: not valid JUnit XML: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        Output::Markdown => assert!(text.starts_with("| concern |"), "{what}: {text}"),
        Output::Html => assert!(
            text.starts_with("<!DOCTYPE html>")
                && text.trim_end().ends_with("</html>")
                && text.contains("<table id=\"verdicts\">"),
            "{what}: not the HTML report"
        ),
        Output::Human | Output::Other => {}
    }
}

/// Runs one block's commands on `tree` in a fresh directory.
fn run_block(block: &Block, invs: &[Invocation], tree: &str, findings: &[(u8, String)]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut placed = BTreeSet::new();
    for inv in invs {
        let m = meaning(inv);
        let what = format!("{} `{}` on {tree}", inv.place, inv.line);
        assert!(m.path.is_relative(), "{what}: PATH must be relative");
        if placed.insert(m.path.clone()) {
            copy_tree(&repo().join(tree), &dir.path().join(&m.path));
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_preflint"));
        cmd.args(&inv.args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .stderr(Stdio::piped());
        let out_file = inv.stdout.as_ref().map(|(f, _)| dir.path().join(f));
        if let Some((f, append)) = &inv.stdout {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(*append)
                .write(true)
                .truncate(!*append)
                .open(dir.path().join(f))
                .expect("open the redirection target");
            cmd.stdout(file);
        } else {
            cmd.stdout(Stdio::piped());
        }
        let out = cmd.output().expect("run preflint");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let text = match &out_file {
            Some(f) => std::fs::read_to_string(f).expect("read the redirection target"),
            None => String::from_utf8_lossy(&out.stdout).into_owned(),
        };
        let (expected, reported) = match &m.check {
            None => (0, findings.len()),
            Some((_, _, Some(_))) => (0, findings.len()),
            Some((level, baseline, None)) => {
                let known = baseline
                    .as_ref()
                    .map(|b| baseline_fingerprints(&dir.path().join(b)))
                    .unwrap_or_default();
                let left: Vec<u8> = findings
                    .iter()
                    .filter(|(_, fp)| !known.contains(fp))
                    .map(|(r, _)| *r)
                    .collect();
                (
                    i32::from(left.iter().any(|r| *r >= level_rank(*level))),
                    left.len(),
                )
            }
        };
        assert_eq!(
            out.status.code(),
            Some(expected),
            "{what} (block at docs/ci.md:{}): exit code\n{stderr}",
            block.line
        );
        if m.check.as_ref().is_some_and(|c| c.2.is_some()) {
            continue;
        }
        let file = out_file.unwrap_or_else(|| {
            let f = dir.path().join("stdout.txt");
            std::fs::write(&f, &text).expect("write");
            f
        });
        assert_parses(m.output, &text, &file, &what, reported);
    }
}

#[test]
fn every_ci_recipe_runs_and_gives_the_documented_exit_code() {
    let recipes = recipes();
    let trees: Vec<(&str, Vec<(u8, String)>)> =
        TREES.iter().map(|(t, _)| (*t, findings_of(t))).collect();
    for ((tree, worst), (_, f)) in TREES.iter().zip(&trees) {
        assert_eq!(
            f.iter().map(|(r, _)| *r).max(),
            Some(rank(worst)),
            "{tree}: its worst finding changed; pick another test tree"
        );
    }
    let mut ran = 0;
    for (block, invs) in &recipes {
        for (tree, findings) in &trees {
            run_block(block, invs, tree, findings);
        }
        ran += invs.len();
    }
    eprintln!(
        "ran {ran} commands from {} code blocks of docs/ci.md on {} trees",
        recipes.len(),
        trees.len()
    );
}

/// The page covers what it promises, so extraction never silently finds nothing.
#[test]
fn ci_recipes_cover_every_ci_format_and_the_baseline() {
    let all: Vec<Invocation> = recipes().into_iter().flat_map(|(_, i)| i).collect();
    let args: BTreeSet<String> = all.iter().flat_map(|i| i.args.iter().cloned()).collect();
    for needed in [
        "sarif",
        "github",
        "codeclimate",
        "junit",
        "json",
        "--fail-level",
        "--baseline",
        "--write-baseline",
        "who-fixes",
        "html",
    ] {
        assert!(
            args.contains(needed),
            "docs/ci.md runs no command with `{needed}`"
        );
    }
    let targets: BTreeSet<&str> = all
        .iter()
        .filter_map(|i| i.stdout.as_ref().map(|(f, _)| f.as_str()))
        .collect();
    for f in [
        "preflint.sarif",
        "gl-code-quality-report.json",
        "preflint-junit.xml",
        "who-fixes.html",
    ] {
        assert!(targets.contains(f), "docs/ci.md writes no {f}");
    }
}

/// The YAML wiring: GitHub uploads the SARIF file its preflint step writes,
/// even when that step fails; GitLab's reports are the files its script writes.
#[test]
fn ci_recipe_yaml_uploads_the_files_preflint_writes() {
    let mut github = 0;
    let mut gitlab = 0;
    for block in fenced_blocks(&page()) {
        if !block.lang.starts_with("yaml") {
            continue;
        }
        let doc: serde_yaml::Value = serde_yaml::from_str(&block.text).expect("YAML");
        let Some(jobs) = doc.as_mapping() else {
            continue;
        };
        // GitHub Actions: jobs.<id>.steps
        if let Some(jobs) = doc.get("jobs").and_then(serde_yaml::Value::as_mapping) {
            for job in jobs.values() {
                let steps = job["steps"].as_sequence().expect("steps");
                let mut written: BTreeMap<String, Output> = BTreeMap::new();
                for step in steps {
                    if let Some(run) = step["run"].as_str() {
                        for inv in run.lines().flat_map(|l| invocations(l, "github")) {
                            if let Some((f, _)) = &inv.stdout {
                                written.insert(f.clone(), meaning(&inv).output);
                            }
                        }
                    }
                    let uses = step["uses"].as_str().unwrap_or_default();
                    if uses.starts_with("actions/upload-artifact@") {
                        let file = step["with"]["path"].as_str().expect("path");
                        assert!(
                            written.contains_key(file),
                            "docs/ci.md:{}: upload-artifact uploads {file}, which no earlier \
                             preflint step writes",
                            block.line
                        );
                    }
                    if uses.starts_with("github/codeql-action/upload-sarif@") {
                        let file = step["with"]["sarif_file"].as_str().expect("sarif_file");
                        assert_eq!(
                            written.get(file),
                            Some(&Output::Sarif),
                            "docs/ci.md:{}: upload-sarif uploads {file}, which no earlier \
                             `preflint check --format sarif` writes",
                            block.line
                        );
                        assert_eq!(
                            step["if"].as_str(),
                            Some("always()"),
                            "docs/ci.md:{}: the upload must run when preflint fails the job",
                            block.line
                        );
                        github += 1;
                    }
                }
            }
            continue;
        }
        // GitLab CI: <job>.script and <job>.artifacts.reports
        for job in jobs.values() {
            let Some(reports) = job
                .get("artifacts")
                .and_then(|a| a.get("reports"))
                .and_then(serde_yaml::Value::as_mapping)
            else {
                continue;
            };
            assert_eq!(
                job["artifacts"]["when"].as_str(),
                Some("always"),
                "docs/ci.md:{}: reports of a failing job must be kept",
                block.line
            );
            let written: BTreeMap<String, Output> = job["script"]
                .as_sequence()
                .expect("script")
                .iter()
                .filter_map(serde_yaml::Value::as_str)
                .flat_map(|l| invocations(l, "gitlab"))
                .filter_map(|inv| {
                    let m = meaning(&inv).output;
                    inv.stdout.map(|(f, _)| (f, m))
                })
                .collect();
            for file in job["artifacts"]["paths"]
                .as_sequence()
                .into_iter()
                .flatten()
            {
                let file = file.as_str().expect("artifact path");
                assert!(
                    written.contains_key(file),
                    "docs/ci.md:{}: the artifact {file} is not written by the script",
                    block.line
                );
            }
            for (kind, file) in reports {
                let (kind, file) = (
                    kind.as_str().expect("report kind"),
                    file.as_str().expect("report file"),
                );
                let want = match kind {
                    "codequality" => Output::CodeClimate,
                    "junit" => Output::Junit,
                    other => panic!("docs/ci.md:{}: unexpected report {other}", block.line),
                };
                assert_eq!(
                    written.get(file),
                    Some(&want),
                    "docs/ci.md:{}: the {kind} report {file} is not what the script writes",
                    block.line
                );
                gitlab += 1;
            }
        }
    }
    assert!(
        github >= 1 && gitlab >= 2,
        "docs/ci.md: expected a SARIF upload and GitLab code quality and JUnit reports \
         (found {github} uploads, {gitlab} reports)"
    );
}

#[test]
fn shell_lines_are_split_like_a_shell() {
    let inv = invocations(
        "preflint check --format codeclimate . > gl-code-quality-report.json || true",
        "t",
    );
    assert_eq!(inv.len(), 1);
    assert_eq!(inv[0].args, ["check", "--format", "codeclimate", "."]);
    assert_eq!(
        inv[0].stdout,
        Some(("gl-code-quality-report.json".into(), false))
    );
    let inv = invocations(
        r#"preflint who-fixes --format markdown . >> "$GITHUB_STEP_SUMMARY"  # summary"#,
        "t",
    );
    assert_eq!(inv[0].stdout, Some(("step-summary.md".into(), true)));
    assert!(invocations("cargo install --locked --git \"$URL\" preflint", "t").is_empty());
    let inv = invocations(
        "cd ansible && NO_COLOR=1 preflint check 'a b' 2>/dev/null",
        "t",
    );
    assert_eq!(inv[0].args, ["check", "a b"]);
    assert_eq!(inv[0].stdout, None);
}

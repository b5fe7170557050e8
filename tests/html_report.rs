//! The HTML who-fixes report, opened in a real browser: the who-fixes
//! scenario `test-repos/who-fixes/handmade` rendered by
//! `preflint::output::html::render`, loaded in headless Chromium from a
//! `file://` URL (no network), its DOM dumped after the page's script ran.
//!
//! Checks that every concern of the scenario's `expected-verdicts.txt` has a
//! row and a cell coloured with its verdict, and that clicking a cell (a real
//! `click()` on its summary, then the page's "Expand all" button) makes the
//! evidence visible: the task, its condition and where the variable was
//! defined. Takes a screenshot to `target/html-report.png` (and one with cells
//! open, `target/html-report-open.png`) for people to look at.
//!
//! Needs Chromium (`/usr/bin/chromium`, or `PREFLINT_CHROMIUM`; scripts/test.sh
//! installs Debian's package); fails without it unless `PREFLINT_SKIP_ORACLE=1`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TREE: &str = "test-repos/who-fixes/handmade";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The verdicts `preflint who-fixes` computes for `tree` (as src/run.rs does).
fn verdicts(tree: &Path) -> (String, Vec<preflint::concern::analyze::Verdict>) {
    let settings = preflint::settings::LoadSettings::new(tree);
    let catalog = preflint::concern::catalog::load(None).expect("built-in catalog");
    let loaded =
        preflint::run::load(&settings, &preflint::config::Config::default()).expect("load");
    let scope =
        preflint::reach::Scope::new(&loaded.project, &loaded.extra, loaded.inventory.as_ref());
    let reached = scope.reached();
    let verdicts = preflint::concern::analyze::analyze(
        &loaded.project,
        &loaded.sources,
        &catalog,
        &scope,
        &reached,
        preflint::concern::analyze::IterationsAfter::Dropped,
    );
    (loaded.project.name.clone(), verdicts)
}

/// concern id -> verdict class, from the scenario's expected-verdicts.txt.
fn expected() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(repo().join(TREE).join("expected-verdicts.txt"))
        .expect("expected-verdicts.txt");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, v) = l.split_once(' ').expect("`id verdict`");
            let class = v.split(':').next().unwrap_or(v);
            (id.to_string(), class.to_string())
        })
        .collect()
}

fn chromium() -> Option<PathBuf> {
    std::env::var_os("PREFLINT_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from))
        .find(|p| p.is_file())
}

/// Runs headless Chromium with `args` on `page`; returns stdout.
fn browse(chromium: &Path, page: &Path, args: &[String]) -> String {
    let profile = tempfile::tempdir().expect("profile dir");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("chromium output");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Clicks like a person would and records what became visible, in `#probe`.
const PROBE: &str = r##"<script>
(function () {
  // Closed <details> content keeps its boxes (content-visibility), so ask
  // the browser whether a person could see it.
  function shown(el) { return el.checkVisibility(); }
  function count(list) { return Array.prototype.filter.call(list, shown).length; }
  var all = document.querySelectorAll(".ev");
  var r = { total: all.length, before: count(all) };
  var fw = document.querySelectorAll("#concern-firewall .ev");
  r.firewall_before = count(fw);
  document.querySelector("#concern-firewall td.cell summary").click();
  r.firewall_after = count(fw);
  r.firewall_text = document.querySelector("#concern-firewall td.cell .panel").innerText;
  r.tools_shown = !document.getElementById("tools").hidden;
  document.getElementById("expand").click();
  r.after_expand = count(all);
  r.open = document.querySelectorAll("details[open]").length;
  r.details = document.querySelectorAll("details").length;
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
})();
</script>
</body>"##;

/// Opens a few cells, for the second screenshot.
const OPEN_SOME: &str = r##"<script>
["firewall", "ipv6_forwarding", "swap"].forEach(function (id) {
  document.querySelector("#concern-" + id + " td.cell summary").click();
});
</script>
</body>"##;

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

#[test]
fn html_report_shows_every_verdict_and_reveals_evidence_on_click() {
    let (name, verdicts) = verdicts(&repo().join(TREE));
    let page = preflint::output::html::render(&name, &verdicts);
    assert_eq!(
        page,
        preflint::output::html::render(&name, &self::verdicts(&repo().join(TREE)).1),
        "the page must be the same for the same tree"
    );
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var("PREFLINT_SKIP_ORACLE").is_ok_and(|v| v == "1"),
            "no Chromium for the HTML report test: run scripts/test.sh (it installs Debian's \
             chromium), `apt-get install chromium`, set PREFLINT_CHROMIUM, or set \
             PREFLINT_SKIP_ORACLE=1 to skip"
        );
        eprintln!("HTML report browser test skipped (PREFLINT_SKIP_ORACLE=1)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("who-fixes.html");
    std::fs::write(&report, &page).expect("write");
    assert_eq!(page.matches("</body>").count(), 1);
    let probed = dir.path().join("probed.html");
    std::fs::write(&probed, page.replace("</body>", PROBE)).expect("write");

    let dom = browse(&chromium, &probed, &["--dump-dom".to_string()]);
    let rows = regex::Regex::new(
        r#"(?s)<tr id="concern-([^"]+)" data-concern="[^"]+" data-verdict="([^"]+)">(.*?)</tr>"#,
    )
    .expect("regex");
    let found: BTreeMap<String, (String, String)> = rows
        .captures_iter(&dom)
        .map(|c| (c[1].to_string(), (c[2].to_string(), c[3].to_string())))
        .collect();
    let want = expected();
    assert_eq!(
        found.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "one row per concern"
    );
    for (id, class) in &want {
        let (verdict, row) = &found[id];
        assert_eq!(verdict, class, "{id}: row verdict");
        assert!(
            row.contains(&format!("<td class=\"cell v-{class}\"")),
            "{id}: no cell coloured as {class}:\n{row}"
        );
        assert!(
            row.contains(&format!("<code class=\"id\">{id}</code>")),
            "{id}: id not shown"
        );
    }
    // The colour is real CSS, not only a class name.
    assert!(dom.contains("td.v-conditional { background: var(--conditional-bg)"));

    let probe = regex::Regex::new(r#"(?s)<pre id="probe">(.*?)</pre>"#)
        .expect("regex")
        .captures(&dom)
        .map(|c| unescape(&c[1]))
        .expect("the probe script ran");
    let r: serde_json::Value = serde_json::from_str(&probe).expect("probe JSON");
    let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("probe {k}: {r}"));
    assert!(n("total") > 10, "evidence items: {r}");
    assert_eq!(n("before"), 0, "evidence is hidden until clicked: {r}");
    assert_eq!(n("firewall_before"), 0, "{r}");
    assert!(
        n("firewall_after") >= 1,
        "clicking the cell shows its tasks: {r}"
    );
    let text = r["firewall_text"].as_str().expect("firewall text");
    for needle in [
        "roles/fw/tasks/main.yml:2",
        "Open the API server port",
        "ansible.posix.firewalld",
        "open_k8s_ports | bool",
        "open_k8s_ports = false",
        "roles/fw/defaults/main.yml:3",
    ] {
        assert!(
            text.contains(needle),
            "the opened firewall cell lacks `{needle}`:\n{text}"
        );
    }
    assert_eq!(r["tools_shown"], true, "the page's script ran: {r}");
    assert_eq!(
        n("after_expand"),
        n("total"),
        "Expand all shows everything: {r}"
    );
    assert_eq!(n("open"), n("details"), "{r}");

    // Screenshots for people: the page as it opens, and with three cells open.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .to_path_buf();
    let shot = |page: &Path, png: &Path| {
        let _ = std::fs::remove_file(png);
        browse(
            &chromium,
            page,
            &[
                format!("--screenshot={}", png.display()),
                "--window-size=1400,1000".to_string(),
            ],
        );
        let bytes = std::fs::read(png).expect("screenshot written");
        assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
        assert!(bytes.len() > 20_000, "the screenshot looks empty");
        eprintln!("screenshot: {}", png.display());
    };
    shot(&report, &target.join("html-report.png"));
    let opened = dir.path().join("opened.html");
    std::fs::write(&opened, page.replace("</body>", OPEN_SOME)).expect("write");
    shot(&opened, &target.join("html-report-open.png"));
}

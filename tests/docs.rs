//! Generated documentation must match the code: docs/rules.md from the rules'
//! text. Regenerate with `PREFLINT_UPDATE_DOCS=1 cargo test --test docs`.

use std::path::PathBuf;

#[test]
fn rules_reference_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let want = preflint::rule::reference_markdown();
    if std::env::var("PREFLINT_UPDATE_DOCS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &want).expect("write docs/rules.md");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/rules.md is stale: run `PREFLINT_UPDATE_DOCS=1 cargo test --test docs` and commit it"
    );
}

#[test]
fn every_catalog_file_is_loaded_and_ids_are_unique() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("rules/concerns");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("rules/concerns")
        .filter_map(Result::ok)
        .map(|e| format!("rules/concerns/{}", e.file_name().to_string_lossy()))
        .collect();
    files.sort();
    let mut embedded: Vec<String> = preflint::concern::catalog::BUILTIN
        .iter()
        .map(|b| b.path.to_string())
        .collect();
    embedded.sort();
    assert_eq!(
        files, embedded,
        "every file in rules/concerns is embedded, and nothing else"
    );
    let catalog = preflint::concern::catalog::load(None).expect("valid catalog");
    let mut ids: Vec<&str> = catalog.iter().map(|c| c.id.as_str()).collect();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "concern ids are unique");
    for b in preflint::concern::catalog::BUILTIN {
        let file = b.path;
        let c = preflint::concern::catalog::parse_concern(file, b.yaml).expect("valid");
        // The copy every run reads is the same catalog.
        assert!(b.json.is_some(), "{file} converts to JSON at build time");
        let from_json = preflint::concern::catalog::parse_builtin(b).expect("valid");
        assert_eq!(
            format!("{c:?}"),
            format!("{from_json:?}"),
            "{file}: its JSON copy reads as the same concern"
        );
        assert!(
            file.ends_with(&format!("/{}.yml", c.id)),
            "{file} holds concern {}",
            c.id
        );
    }
}

#[test]
fn catalog_errors_point_at_the_line() {
    let text = "id: demo\ntitle: t\nwhy: w\nreference: r\nparts:\n  - name: p\n    fix:\n      - effect: command\n        line: {regex: '(unclosed'}\n";
    let errs = preflint::concern::catalog::parse_concern("demo.yml", text).expect_err("bad regex");
    assert_eq!(errs[0].line, 9, "{errs:?}");
    assert!(errs[0].message.contains("regular expression"), "{errs:?}");
    let text = "id: demo\ntitle: t\nwhy: w\nreference: r\nparts:\n  - name: p\n    fix:\n      - effect: command\n        module: command\n";
    let errs =
        preflint::concern::catalog::parse_concern("demo.yml", text).expect_err("short module");
    assert_eq!(errs[0].line, 9, "{errs:?}");
    let text = "id: demo\ntitle: t\nwhy: w\nreference: r\nparts:\n  - name: p\n    fix:\n      - effect: swap_of\n";
    let errs =
        preflint::concern::catalog::parse_concern("demo.yml", text).expect_err("unknown effect");
    assert_eq!(errs[0].line, 8, "{errs:?}");
    assert!(
        errs[0].message.contains("unknown effect `swap_of`"),
        "{errs:?}"
    );
    let text = "id: demo\ntitle: t\nwhy: w\nreference: r\nparts:\n  - name: p\n    fix:\n      - effect: swap_off\n        key: x\n";
    let errs =
        preflint::concern::catalog::parse_concern("demo.yml", text).expect_err("unknown field");
    assert_eq!(errs[0].line, 9, "{errs:?}");
    assert!(errs[0].message.contains("has no field `key`"), "{errs:?}");
    let text = "id: demo\ntitle: t\nwhy: w\nreference: r\nparts:\n  - name: p\n    fixes: []\n";
    let errs =
        preflint::concern::catalog::parse_concern("demo.yml", text).expect_err("unknown field");
    assert_eq!(errs[0].line, 7, "{errs:?}");
}

#[test]
fn sysctl_catalogs_are_valid() {
    preflint::sysctl::required().expect("rules/sysctl-required.yml");
    preflint::sysctl::catalog_profiles().expect("rules/sysctl-distro.yml");
}

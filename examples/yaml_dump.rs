//! Dumps how preflint reads YAML files, one JSON line per file:
//! `{"file": ..., "ok": bool, "docs": [...], "error": "..."}`.
//! Used by the PyYAML differential test and for counting on real trees.
//!
//! Usage: cargo run --example yaml_dump -- FILE...

use preflint::source::FileId;

fn main() {
    for path in std::env::args().skip(1) {
        let line = match std::fs::read(&path) {
            Err(e) => serde_json::json!({"file": path, "ok": false, "error": e.to_string()}),
            Ok(bytes) => match String::from_utf8(bytes) {
                Err(_) => serde_json::json!({"file": path, "ok": false, "error": "invalid UTF-8"}),
                Ok(text) => {
                    let parsed = preflint::yaml::parse(FileId(0), &text);
                    let error = parsed
                        .diagnostics
                        .iter()
                        .find(|d| d.severity == preflint::diagnostic::Severity::Error);
                    serde_json::json!({
                        "file": path,
                        "ok": !parsed.failed,
                        "docs": parsed.docs.iter().map(preflint::yaml::Node::to_json).collect::<Vec<_>>(),
                        "error": error.map(|d| format!("{}:{}: {}", d.span.line, d.span.col, d.message)),
                    })
                }
            },
        };
        println!("{line}");
    }
}

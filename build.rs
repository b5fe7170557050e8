//! Turns `rules/modules.yml` (generated from ansible-core by
//! `scripts/gen-modules.py`) into sorted static tables, so that resolving a
//! module name costs a binary search and no YAML parse at run time (parsing
//! the 220 KB file took ~12 ms of every run).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Deserialize)]
struct RawModules {
    builtin: Vec<String>,
    routing: BTreeMap<String, String>,
}

fn main() {
    let src = "rules/modules.yml";
    println!("cargo::rerun-if-changed={src}");
    let text = std::fs::read_to_string(src).expect("read rules/modules.yml");
    let raw: RawModules = serde_yaml::from_str(&text).expect("rules/modules.yml: bad shape");
    let mut builtin = raw.builtin;
    builtin.sort();
    builtin.dedup();
    let mut out = String::new();
    out.push_str(
        "/// Modules shipped in `ansible.builtin`, sorted.\npub static BUILTIN: &[&str] = &[\n",
    );
    for b in &builtin {
        let _ = writeln!(out, "    {b:?},");
    }
    out.push_str("];\n/// Short names ansible-core routes elsewhere, sorted by name.\npub static ROUTING: &[(&str, &str)] = &[\n");
    for (k, v) in &raw.routing {
        let _ = writeln!(out, "    ({k:?}, {v:?}),");
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("modules.rs");
    std::fs::write(dest, out).expect("write modules.rs");
}

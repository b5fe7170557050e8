//! Helpers shared by the integration tests that drive external tools.

use std::path::PathBuf;
use std::process::Command;

/// The repository root.
#[must_use]
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A Python that can `import` the given modules: `PREFLINT_PYTHON`, else the
/// venv scripts/test.sh makes.
#[must_use]
pub fn python_with(imports: &str) -> Option<PathBuf> {
    std::env::var_os("PREFLINT_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([repo().join("target/oracle-venv/bin/python")])
        .find(|p| {
            Command::new(p)
                .args(["-c", &format!("import {imports}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

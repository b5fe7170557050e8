//! What the pipeline's stages hand each other and the outputs: the model of
//! a tree with its diagnostics, and everything `check` computes. Types
//! only; `run` builds them.

use crate::ansible::project::Project;
use crate::diagnostic::{LocatedDiagnostic, Severity};
use crate::load::Loader;
use crate::source::SourceMap;
use std::sync::Arc;

/// A model of the tree plus every diagnostic found while reading it.
pub struct Loaded {
    pub project: Project,
    pub inventory: Option<crate::ansible::inventory::Inventory>,
    pub extra: crate::vars::ExtraVars,
    pub sources: Arc<SourceMap>,
    pub diagnostics: Vec<LocatedDiagnostic>,
    /// What built the model (every parsed file, the include resolver's
    /// indexes): garbage once it is built, freed by [`Loaded::take_build`]'s
    /// caller (dropped with the rest otherwise).
    pub(crate) build: Option<Build>,
}

/// What built a model: garbage once it is built.
pub struct Build {
    pub(crate) loader: Loader,
    pub(crate) resolver: crate::vars::VarsResolver,
}

impl Build {
    /// Frees it on the worker threads, a share each, so what runs next
    /// reuses the memory instead of fresh pages, off the critical path.
    pub fn free(self) {
        rayon::join(
            || self.loader.free_in_parallel(),
            || self.resolver.free_in_parallel(),
        );
    }
}

impl Loaded {
    /// What built the model, to be freed (once).
    pub fn take_build(&mut self) -> Option<Build> {
        self.build.take()
    }
}

/// Everything `check` computes, for the command and for tests.
pub struct CheckRun {
    pub loaded: Loaded,
    pub findings: Vec<crate::rule::Finding>,
    pub fail_level: Severity,
}

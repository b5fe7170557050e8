//! What every rule may read: the model, the reached tasks with their
//! effects, the who-fixes verdicts and the sysctl simulation, all computed
//! once before the rules run.

use crate::ansible::project::Project;
use crate::check::sysctl::Found;
use crate::concern::analyze::Verdict;
use crate::reach::{Facts, Scope};
use crate::source::SourceMap;
use crate::sysctl::{KeyResult, Required};

/// What every rule may read.
pub struct Context<'a, 's> {
    pub project: &'a Project,
    pub sources: &'a SourceMap,
    pub scope: &'s Scope<'s>,
    /// Every reachable task with its cached effects.
    pub reached: &'a [Facts<'s>],
    pub verdicts: &'a [Verdict],
    pub writes: &'a [Found],
    pub sysctl: &'a [KeyResult],
    pub required: &'a [Required],
}

impl Context<'_, '_> {
    #[must_use]
    pub fn verdict(&self, id: &str) -> Option<&Verdict> {
        self.verdicts.iter().find(|v| v.id == id)
    }

    /// The simulation's result for a normalised key (the results are sorted
    /// by key, one per key).
    #[must_use]
    pub fn sysctl_result(&self, key: &str) -> Option<&KeyResult> {
        self.sysctl
            .binary_search_by(|r| r.key.as_str().cmp(key))
            .ok()
            .map(|i| &self.sysctl[i])
    }

    /// The first entry playbook's first play, where project-wide findings point.
    #[must_use]
    pub fn anchor(&self) -> (String, u32, u32) {
        self.project
            .entries
            .iter()
            .find_map(|e| e.span)
            .or_else(|| {
                self.project
                    .entries
                    .iter()
                    .flat_map(|e| &e.plays)
                    .next()
                    .map(|p| p.span)
            })
            .map_or_else(
                || (".".to_string(), 1, 1),
                |s| (self.sources.display(s.file), s.line, s.col),
            )
    }
}

//! The [`TemplateResolver`] the model's build asks for templated include
//! targets and role names, over the variables known where the include is.

use super::{ExtraVars, PlayVars, TaskVars};
use crate::HashMap;
use crate::ansible::project::{PlayContext, TemplateResolver, VarLayer};
use crate::jinja::{self, Rendered};
use rayon::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};

/// Resolves templated include targets and role names with the variables
/// known when the include is reached.
pub struct VarsResolver {
    pub(super) extra: ExtraVars,
    /// The index of each list of play layers met (a play's layers so far):
    /// plays that start alike, and the includes of one play between two
    /// roles, resolve over the same list. Keyed by the layers' addresses,
    /// which the index holds alive.
    pub(super) plays: Mutex<HashMap<Vec<usize>, Arc<PlayVars>>>,
}

impl VarsResolver {
    /// Frees the indexes on the worker threads, a share each.
    pub fn free_in_parallel(self) {
        let plays = self
            .plays
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let all: Vec<Arc<PlayVars>> = plays.into_values().collect();
        all.into_par_iter().for_each(drop);
    }

    #[must_use]
    pub fn new(extra: ExtraVars) -> Self {
        VarsResolver {
            extra,
            plays: Mutex::default(),
        }
    }

    fn play_vars(&self, layers: &[Arc<VarLayer>]) -> Arc<PlayVars> {
        let key: Vec<usize> = layers.iter().map(|l| Arc::as_ptr(l) as usize).collect();
        let lock = || self.plays.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pv) = lock().get(&key) {
            return Arc::clone(pv);
        }
        let pv = Arc::new(PlayVars::from_parts(
            layers,
            std::iter::empty(),
            &self.extra,
        ));
        Arc::clone(lock().entry(key).or_insert(pv))
    }
}

impl TemplateResolver for VarsResolver {
    fn resolve(
        &self,
        template: &str,
        play: &PlayContext<'_>,
        scopes: &[Arc<VarLayer>],
    ) -> Option<String> {
        let pv = self.play_vars(play.layers);
        let tv = TaskVars::in_scopes(&pv, scopes);
        match jinja::render(template, &tv) {
            Rendered::Value(serde_json::Value::String(s)) => Some(s),
            Rendered::Value(v) if !v.is_null() && !v.is_array() && !v.is_object() => {
                Some(v.to_string())
            }
            _ => None,
        }
    }
}

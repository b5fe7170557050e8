//! Play-level resolutions and renders shared between the plays of a run.
//!
//! Speed machinery only: a play takes a result another play computed only
//! where every name it rests on stands on the same definition ([`Ident`]),
//! so that the value is the one it would compute itself.

use super::{LookupOwned, Memo, PlayVars, set_fact_literal};
use crate::HashMap;
use crate::source::Span;
use std::sync::{Arc, Mutex, PoisonError};

/// Play-level resolutions shared by all the plays of a run. A play takes
/// one when every name it rests on has the same winning definition there
/// (the same entry of the same shared layer, e.g. a role's defaults) and is
/// registered or not alike: its value is then the same.
///
/// Task arguments rendered outside any variable's resolution are shared
/// the same way, by their template text: a whole tree reaches each task
/// from many plays, most of them rendering the same arguments over the
/// same definitions in play after play.
#[derive(Default)]
pub struct RunShared(
    pub(super) Mutex<HashMap<String, Vec<Variant>>>,
    pub(super) Mutex<HashMap<String, Vec<RenderVariant>>>,
);

/// A result and what each name it rests on stood on where it was computed.
type Variant = (Arc<Memo>, Vec<Ident>);

/// A rendered template, the names it rests on, and what each stood on.
type RenderVariant = (LookupOwned, Arc<[String]>, Vec<Ident>);

/// Most variants of one name kept in [`RunShared`].
const MAX_RUN_VARIANTS: usize = 8;

/// What a name stands on in one play: its winning static definition (layer
/// address and entry; `usize::MAX` for extra vars), whether it is
/// registered, and, without either, what `set_fact` makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ident {
    pub(super) def: Option<(usize, usize)>,
    pub(super) registered: bool,
    pub(super) set_fact: SetFact,
}

/// What the play's `set_fact` tasks give a name that has no static
/// definition and is not registered (see `TaskVars::set_fact_value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SetFact {
    /// Not set by `set_fact`, or its value does not come from there.
    NotUsed,
    /// Known only at run time.
    RunTime,
    /// The one literal every site sets: the value at this span.
    Literal(Span),
}

impl PlayVars {
    /// Shares play-level results with the other plays holding `run`.
    #[must_use]
    pub fn with_run(mut self, run: Arc<RunShared>) -> Self {
        self.run = Some(run);
        self
    }

    /// What `name` stands on in this play: two plays where a name stands
    /// on the same give it the same value.
    fn ident(&self, name: &str) -> Ident {
        let def = self.refs(name).last().map(|d| match d.layer() {
            Some(l) => (Arc::as_ptr(&self.index.layers[l]) as usize, d.pair()),
            None => (usize::MAX, d.pair()),
        });
        let registered = self.registered.contains_key(name);
        let set_fact = match self.set_facts.get(name) {
            Some(sites) if def.is_none() && !registered => {
                set_fact_literal(sites).map_or(SetFact::RunTime, |n| SetFact::Literal(n.span))
            }
            _ => SetFact::NotUsed,
        };
        Ident {
            def,
            registered,
            set_fact,
        }
    }

    /// What each of `deps` stands on here.
    fn idents(&self, deps: &[String]) -> Vec<Ident> {
        deps.iter().map(|d| self.ident(d)).collect()
    }

    /// Whether each of `deps` stands here on what `idents` says.
    fn stands_as(&self, deps: &[String], idents: &[Ident]) -> bool {
        deps.iter().zip(idents).all(|(d, id)| self.ident(d) == *id)
    }

    /// A result another play computed that holds here, if any.
    pub(super) fn taken_from_run(
        &self,
        name: &str,
        fits: impl Fn(&Memo) -> bool,
    ) -> Option<Arc<Memo>> {
        let run = self.run.as_ref()?;
        let variants = run
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)?
            .clone();
        variants.into_iter().find_map(|(entry, idents)| {
            (self.stands_as(&entry.deps, &idents) && fits(&entry)).then_some(entry)
        })
    }

    /// Offers a play-level result to the other plays of the run.
    pub(super) fn offer_to_run(&self, name: &str, entry: &Arc<Memo>) {
        let Some(run) = &self.run else { return };
        let idents = self.idents(&entry.deps);
        let mut map = run.0.lock().unwrap_or_else(PoisonError::into_inner);
        let variants = map.entry(name.to_string()).or_default();
        if variants.len() < MAX_RUN_VARIANTS && !variants.iter().any(|(_, i)| *i == idents) {
            variants.push((Arc::clone(entry), idents));
        }
    }

    /// A render of `template` another task (of this play or another)
    /// computed that holds here: `fits` says the task's own scopes define
    /// none of the names it rested on, and each of them stands on the same
    /// definition here.
    pub(super) fn render_from_run(
        &self,
        template: &str,
        fits: impl Fn(&[String]) -> bool,
    ) -> Option<LookupOwned> {
        let run = self.run.as_ref()?;
        // Only the variant that holds is copied (a render of a template
        // file is its whole rendered text).
        let map = run.1.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(template)?.iter().find_map(|(v, deps, idents)| {
            (self.stands_as(deps, idents) && fits(deps)).then(|| v.clone())
        })
    }

    /// Offers a render that rested on play-level names only to the run.
    pub(super) fn offer_render(&self, template: &str, v: &LookupOwned, deps: Vec<String>) {
        let Some(run) = &self.run else { return };
        let idents = self.idents(&deps);
        let mut map = run.1.lock().unwrap_or_else(PoisonError::into_inner);
        let variants = map.entry(template.to_string()).or_default();
        if variants.len() < MAX_RUN_VARIANTS && !variants.iter().any(|(_, _, i)| *i == idents) {
            variants.push((v.clone(), deps.into(), idents));
        }
    }
}

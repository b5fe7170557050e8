//! The units the reached tasks start and enable, decided one unit at a time
//! and only for the units an effect asks about: what a unit file does
//! (`ExecStartPre=modprobe x`) happens now when a task starts its unit and
//! at boot when one enables it, tasks whose conditions are known false
//! aside. Few units have such files; evaluating the conditions of every
//! task that starts any unit would be most of the work for none of them.

use crate::effect::Effect;
use crate::effect::units::Units;
use crate::reach::{Facts, Rebind, Scope, conditions_hold, per_task};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// One iteration of a reached task that starts or enables a unit.
struct Candidate {
    /// Its index in the reached tasks (the first of its twins, whose
    /// conditions are theirs).
    task: usize,
    bound: Rebind,
    /// Its effects that start or enable a unit.
    effects: Vec<Effect>,
}

/// The tasks that start or enable each unit, and the units decided so far.
pub(super) struct UnitsOnDemand<'r, 's, 'p> {
    scope: &'s Scope<'p>,
    reached: &'r [Facts<'s>],
    by_unit: BTreeMap<String, Vec<Candidate>>,
    decided: Mutex<BTreeMap<String, Units>>,
}

impl<'r, 's, 'p> UnitsOnDemand<'r, 's, 'p> {
    /// Takes note of every reached task iteration that starts or enables
    /// a unit, without evaluating its conditions yet.
    pub(super) fn new(scope: &'s Scope<'p>, reached: &'r [Facts<'s>]) -> Self {
        let found = per_task(
            reached,
            |facts| {
                let r = &facts.reach;
                if !crate::effect::may_change_units(&r.inst.task.module) {
                    return Vec::new();
                }
                let mut out: Vec<Option<(String, Candidate)>> = Vec::new();
                for it in facts.iterations(scope).iter() {
                    let effects: Vec<&Effect> = it
                        .effects(r.inst)
                        .iter()
                        .filter(|e| Units::changes_unit(e).is_some())
                        .collect();
                    let mut units: Vec<&str> = effects
                        .iter()
                        .filter_map(|e| Units::changes_unit(e))
                        .collect();
                    units.sort_unstable();
                    units.dedup();
                    for unit in units {
                        out.push(Some((
                            unit.to_string(),
                            Candidate {
                                task: facts.index,
                                bound: it.rebind(),
                                effects: effects.iter().map(|e| (*e).clone()).collect(),
                            },
                        )));
                    }
                }
                out
            },
            // A twin's conditions are its first twin's: noted once.
            |_, _| None,
        );
        let mut by_unit: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
        for (unit, c) in found.into_iter().flatten() {
            by_unit.entry(unit).or_default().push(c);
        }
        UnitsOnDemand {
            scope,
            reached,
            by_unit,
            decided: Mutex::new(BTreeMap::new()),
        }
    }

    /// `e` with its timing decided by what the tasks do to its unit, when
    /// it is something a unit file does (see [`Units::resolve`]).
    pub(super) fn resolve<'e>(&self, e: &'e Effect) -> Cow<'e, Effect> {
        let Some(unit) = Units::unit_of(e) else {
            return Cow::Borrowed(e);
        };
        let known = self
            .decided
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(unit)
            .map(|u| u.resolve(e));
        if let Some(resolved) = known {
            return resolved;
        }
        // Decided without the lock: another thread deciding the same unit
        // meanwhile comes to the same answer.
        let units = self.decide(unit);
        let resolved = units.resolve(e);
        self.decided
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(unit.to_string())
            .or_insert(units);
        resolved
    }

    /// What the tasks whose conditions may hold do to `unit`. Each task's
    /// variables are built afresh: another thread may hold its iterations.
    fn decide(&self, unit: &str) -> Units {
        let mut units = Units::default();
        for c in self.by_unit.get(unit).into_iter().flatten() {
            let r = &self.reached[c.task].reach;
            let tv = self.scope.iteration_vars(r, &c.bound);
            if conditions_hold(r, &tv) != Some(false) {
                for e in &c.effects {
                    units.note(e);
                }
            }
        }
        units
    }
}

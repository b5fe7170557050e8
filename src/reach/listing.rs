//! The effects of every reached task, per loop iteration, with the status
//! of the iteration's conditions: what `preflint tasks --effects` lists.
//!
//! It only gathers what the iterations already derive (see
//! [`super::Iteration::effects`]); how they are shown is the output's.

use super::{Facts, Scope, WhenStatus};
use crate::effect::Effect;
use crate::effect::units::Units;
use crate::source::SourceMap;
use serde::Serialize;
use std::borrow::Cow;

/// The effects of one loop iteration of a task (or of the task without a
/// loop).
#[derive(Debug, Clone, Serialize)]
pub struct IterationEffects {
    /// The loop item; `null` when the task does not loop (or its items are
    /// not known statically).
    pub item: Option<serde_json::Value>,
    /// Why the loop's items are not known (then `item` is `null`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_unknown: Option<super::LoopUnknown>,
    /// Whether the iteration's conditions hold.
    pub when: WhenStatus,
    pub effects: Vec<Effect>,
}

/// The effects of each task of `reached`, by its index there: its
/// iterations that have effects, in loop order (none for a task that has
/// no effect, or a duplicate role run, which Ansible skips). A kernel
/// module a unit file loads is timed by what the tasks do to its unit.
#[must_use]
pub fn effects_by_task<'s>(
    scope: &'s Scope<'_>,
    reached: &[Facts<'s>],
    sources: &SourceMap,
) -> Vec<Vec<IterationEffects>> {
    let found = super::per_task(
        reached,
        |facts| {
            let r = &facts.reach;
            let t = &r.inst.task;
            if r.inst.duplicate || !crate::effect::may_have_effects(&t.module, !t.notify.is_empty())
            {
                return Vec::new();
            }
            let iterations = facts.iterations(scope);
            let listed: Vec<IterationEffects> = iterations
                .iter()
                .filter_map(|it| {
                    let effects = it.effects(r.inst);
                    // A listing shows how much of each written template is
                    // known, which only its rendering says.
                    let view = super::view::IterView::new(r.inst, it);
                    for e in effects {
                        if let crate::effect::EffectKind::FileWritten { content, .. } = &e.kind {
                            let _ = content.rendering(&view);
                        }
                    }
                    // Conditions cost a render: evaluated only where there is
                    // something to show.
                    (!effects.is_empty()).then(|| IterationEffects {
                        item: it.item.clone(),
                        item_unknown: it.loop_unknown.as_deref().cloned(),
                        when: it.conditions(sources, r.inst).status(),
                        effects: effects.to_vec(),
                    })
                })
                .collect();
            // Nothing else reads them in this run.
            iterations.drop_all();
            listed.into_iter().map(|l| (facts.index, l)).collect()
        },
        |facts, (_, l)| (facts.index, l.clone()),
    );
    // What a unit file does when its unit runs is known once every task is:
    // now when one starts the unit, at boot when one enables it (tasks whose
    // conditions are false aside), as the concern analysis reads it.
    let mut units = Units::default();
    for (_, listed) in &found {
        if listed.when.holds != Some(false) {
            for e in &listed.effects {
                units.note(e);
            }
        }
    }
    let mut out: Vec<Vec<IterationEffects>> = reached.iter().map(|_| Vec::new()).collect();
    for (index, mut listed) in found {
        for e in &mut listed.effects {
            if let Cow::Owned(resolved) = units.resolve(e) {
                *e = resolved;
            }
        }
        if let Some(slot) = out.get_mut(index) {
            slot.push(listed);
        }
    }
    out
}

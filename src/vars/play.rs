//! A play's variables: its index of static definitions, and the names its
//! tasks set at run time (`register`, `set_fact`).

use super::{DefIndex, DefRef, Definition, ExtraVars, Memo, RunShared, label};
use crate::HashMap;
use crate::ansible::project::{TaskInstance, VarLayer};
use crate::source::Span;
use crate::yaml::{Node, Value};
use std::sync::{Arc, Mutex};

/// Play-wide index: every static definition by name, lowest precedence first.
///
/// Holds the play's layers (shared) and, per name, where its definitions are:
/// values are cloned only when a caller asks for a [`Definition`].
pub struct PlayVars {
    pub(super) index: Arc<DefIndex>,
    /// Names set by `register:` in the play, with the first place.
    pub registered: HashMap<String, Span>,
    /// Names set by `set_fact` in the play, with every place and value.
    pub set_facts: HashMap<String, Vec<(Span, Node)>>,
    /// Names resolved for tasks that see only play-level variables (no task,
    /// block, include or role-parameter scope, no loop item): the same for
    /// every such task of the play, so rendered once.
    pub(super) memo: Mutex<HashMap<String, Arc<Memo>>>,
    /// Results shared with the other plays of the run.
    pub(super) run: Option<Arc<RunShared>>,
}

impl PlayVars {
    /// From play layers and the tasks whose `register`/`set_fact` count.
    pub fn from_parts<'t>(
        layers: &[Arc<VarLayer>],
        tasks: impl Iterator<Item = &'t TaskInstance>,
        extra: &ExtraVars,
    ) -> Self {
        Self::from_index(Arc::new(DefIndex::new(layers, extra)), tasks)
    }

    /// Over an index of the play's layers and the tasks whose
    /// `register`/`set_fact` count.
    pub fn from_index<'t>(
        index: Arc<DefIndex>,
        tasks: impl Iterator<Item = &'t TaskInstance>,
    ) -> Self {
        let mut registered = HashMap::default();
        let mut set_facts: HashMap<String, Vec<(Span, Node)>> = HashMap::default();
        for t in tasks {
            if let Some(r) = &t.task.register {
                registered.entry(r.clone()).or_insert(t.task.span);
            }
            if t.task.module == "ansible.builtin.set_fact" {
                for a in &t.task.args {
                    if a.key != "cacheable" && a.key != "_raw_params" {
                        set_facts
                            .entry(a.key.clone())
                            .or_default()
                            .push((t.task.span, a.value.clone()));
                    }
                }
            }
        }
        PlayVars {
            index,
            registered,
            set_facts,
            memo: Mutex::new(HashMap::default()),
            run: None,
        }
    }

    /// One definition with its value cloned.
    pub(super) fn definition(&self, d: DefRef) -> Definition {
        match d.layer() {
            Some(l) => {
                let layer = &self.index.layers[l];
                let (k, v) = &layer.node.as_map().unwrap_or(&[])[d.pair()];
                Definition {
                    source: label(&layer.kind),
                    rank: d.rank,
                    span: k.span,
                    value: v.clone(),
                }
            }
            None => {
                let (_, v) = &self.index.extra[d.pair()];
                Definition {
                    source: "extra vars (-e)".into(),
                    rank: d.rank,
                    span: v.span,
                    value: v.clone(),
                }
            }
        }
    }

    pub(super) fn refs(&self, name: &str) -> &[DefRef] {
        self.index.refs(name)
    }

    /// Static definitions of `name`, lowest precedence first.
    #[must_use]
    pub fn definitions(&self, name: &str) -> Vec<Definition> {
        self.refs(name)
            .iter()
            .map(|d| self.definition(*d))
            .collect()
    }
}

/// The literal every `set_fact` site sets, when they all set the same one.
pub(super) fn set_fact_literal(sites: &[(Span, Node)]) -> Option<&Node> {
    let literal = |n: &Node| match &n.value {
        Value::Str(s) => !crate::ansible::project::is_templated(s),
        Value::Seq(_) | Value::Map(_) => false,
        _ => true,
    };
    let (_, first) = sites.first()?;
    sites
        .iter()
        .all(|(_, n)| literal(n) && n.value == first.value)
        .then_some(first)
}

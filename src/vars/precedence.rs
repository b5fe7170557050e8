//! Ansible's variable precedence: the rank of each kind of layer, and which
//! definition of a name wins for a task (extra vars over everything, then
//! the highest rank, the later layer on a tie). Renders nothing.

use super::TaskVars;
use crate::ansible::project::{LayerKind, VarLayer};
use crate::source::Span;
use crate::yaml::Node;
use std::sync::Arc;

/// Precedence rank of a layer (higher wins), after Ansible's documented order.
#[must_use]
pub fn rank(kind: &LayerKind) -> u8 {
    match kind {
        LayerKind::RoleDefaults { .. } => 1,
        LayerKind::Inventory { .. } => 4,
        LayerKind::PlaybookImportVars | LayerKind::PlayVars => 12,
        LayerKind::PlayVarsFile => 14,
        LayerKind::RoleVars { .. } => 15,
        LayerKind::BlockVars => 16,
        LayerKind::TaskVars => 17,
        LayerKind::RoleParams { .. } => 20,
        LayerKind::IncludeVars => 21,
        // `VariableManager.get_vars` combines the magic variables last.
        LayerKind::Magic => 40,
    }
}

/// Human label of a layer kind for evidence.
#[must_use]
pub fn label(kind: &LayerKind) -> String {
    match kind {
        LayerKind::RoleDefaults { role } => format!("role defaults of {role}"),
        LayerKind::Inventory { group } => format!("inventory vars of group {group}"),
        LayerKind::RoleVars { role } => format!("role vars of {role}"),
        LayerKind::RoleParams { role } => format!("role parameters of {role}"),
        LayerKind::PlaybookImportVars => "import_playbook vars".into(),
        LayerKind::PlayVars => "play vars".into(),
        LayerKind::PlayVarsFile => "play vars_files".into(),
        LayerKind::BlockVars => "block vars".into(),
        LayerKind::TaskVars => "task vars".into(),
        LayerKind::IncludeVars => "include parameters".into(),
        LayerKind::Magic => "magic variable".into(),
    }
}

/// One definition of a variable.
#[derive(Debug, Clone)]
pub struct Definition {
    pub source: String,
    pub rank: u8,
    pub span: Span,
    pub value: Node,
}

impl TaskVars<'_> {
    /// The winning static definition of `name` for this task, if any.
    #[must_use]
    pub fn winner(&self, name: &str) -> Option<Definition> {
        self.winner_from(name).0
    }

    /// The winner, and whether it comes from the task's own scopes.
    pub(super) fn winner_from(&self, name: &str) -> (Option<Definition>, bool) {
        let defs = self.play.refs(name);
        // Magic variables, then extra vars, beat everything, scopes included.
        if let Some(e) = defs.last().filter(|d| d.rank >= 30) {
            return (Some(self.play.definition(*e)), false);
        }
        let mut best_rank = defs.last().map(|d| d.rank);
        let mut best_scope: Option<(&Arc<VarLayer>, &Node, &Node, u8)> = None;
        for layer in self.scopes {
            let r = rank(&layer.kind);
            if let Some((k, v)) = layer.node.get_entry(name)
                && best_rank.is_none_or(|b| b <= r)
            {
                best_rank = Some(r);
                best_scope = Some((layer, k, v, r));
            }
        }
        // Clone only the winner (values can be large mappings).
        match best_scope {
            Some((layer, k, v, r)) => (
                Some(Definition {
                    source: label(&layer.kind),
                    rank: r,
                    span: k.span,
                    value: v.clone(),
                }),
                true,
            ),
            None => (defs.last().map(|d| self.play.definition(*d)), false),
        }
    }

    /// Every definition of `name` visible to this task, lowest precedence first.
    #[must_use]
    pub fn all_definitions(&self, name: &str) -> Vec<Definition> {
        let mut v: Vec<Definition> = self.play.definitions(name);
        for layer in self.scopes {
            if let Some((k, val)) = layer.node.get_entry(name) {
                v.push(Definition {
                    source: label(&layer.kind),
                    rank: rank(&layer.kind),
                    span: k.span,
                    value: val.clone(),
                });
            }
        }
        v.sort_by_key(|d| d.rank);
        v
    }
}

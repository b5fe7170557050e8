//! A play's static definitions indexed by name: where every definition of
//! each name is in the play's layers (and the extra vars), lowest
//! precedence first, without copying a value or a name. Built once per
//! list of layers; answers lookups only.

use super::{ExtraVars, rank};
use crate::HashMap;
use crate::ansible::inventory::Inventory;
use crate::ansible::project::{LayerKind, Play, VarLayer};
use crate::yaml::{Node, Tag, Value};
use std::hash::BuildHasher;
use std::sync::Arc;

/// Where every static definition of a list of play layers (and the extra
/// vars) is, by name. It depends on the layers alone, so plays with the
/// same layers (the plays of one playbook often have them) share one.
pub struct DefIndex {
    pub(super) layers: Vec<Arc<VarLayer>>,
    pub(super) extra: Vec<(String, Node)>,
    /// Per name's hash, its group: its run of `refs`, (start, length), and
    /// the next group whose name has the same hash ([`NO_GROUP`]: none).
    /// A group's name is the key of its first definition: the thousands of
    /// names of each play are not copied.
    pub(super) defs: HashMap<u64, u32>,
    pub(super) groups: Vec<(u32, u32, u32)>,
    pub(super) hasher: foldhash::fast::RandomState,
    pub(super) refs: Vec<DefRef>,
}

/// Appends the extra vars' definitions (rank 30).
fn push_extra<'a>(all: &mut Vec<(&'a str, DefRef)>, extra: &'a ExtraVars) {
    for (i, (k, _)) in extra.vars.iter().enumerate() {
        all.push((k.as_str(), DefRef::new(None, i, 30)));
    }
}

/// No next group in [`DefIndex`]'s chains.
const NO_GROUP: u32 = u32::MAX;

/// What decides a play's [`DefIndex`]: the addresses of its layers and the
/// inventory groups its `hosts` pattern names.
pub type IndexKey = (Vec<usize>, Vec<String>);

/// Where one definition is: entry `pair` of layer `layer`, or extra var `pair`.
/// Twelve bytes: a play's index holds one per definition (thousands).
#[derive(Debug, Clone, Copy)]
pub(super) struct DefRef {
    /// The layer's position, or [`DefRef::EXTRA`].
    pub(super) layer: u32,
    pub(super) pair: u32,
    pub(super) rank: u8,
}

impl DefRef {
    const EXTRA: u32 = u32::MAX;

    pub(super) fn new(layer: Option<usize>, pair: usize, rank: u8) -> Self {
        // Positions are bounded by the files' sizes (see `load`), far
        // below 2^32.
        let narrow = |x: usize| u32::try_from(x).unwrap_or(u32::MAX - 1);
        DefRef {
            layer: layer.map_or(Self::EXTRA, narrow),
            pair: narrow(pair),
            rank,
        }
    }

    pub(super) fn layer(self) -> Option<usize> {
        (self.layer != Self::EXTRA).then_some(self.layer as usize)
    }

    pub(super) fn pair(self) -> usize {
        self.pair as usize
    }
}

impl DefIndex {
    /// The index of `play`'s layers, with the inventory's group variables
    /// for the groups its `hosts` pattern names.
    #[must_use]
    pub fn of_play(play: &Play, extra: &ExtraVars, inventory: Option<&Inventory>) -> Self {
        let mut layers = play.layers.clone();
        if let Some(inv) = inventory {
            for group in pattern_groups(&play.hosts) {
                let pairs: Vec<(Node, Node)> = inv
                    .group_variables(&group)
                    .into_iter()
                    .map(|(k, v)| {
                        let key = Node {
                            value: Value::Str(k),
                            span: v.span,
                            tag: Tag::None,
                            quoted: false,
                        };
                        (key, v)
                    })
                    .collect();
                if let Some(first) = pairs.first() {
                    let span = first.0.span;
                    layers.push(Arc::new(VarLayer {
                        kind: LayerKind::Inventory { group },
                        node: Node {
                            value: Value::Map(pairs),
                            span,
                            tag: Tag::None,
                            quoted: false,
                        },
                    }));
                }
            }
        }
        if let Some(inv) = inventory {
            layers.push(Arc::new(super::magic::inventory_layer(
                inv,
                &play.hosts,
                play.span,
            )));
        }
        Self::new(&layers, extra)
    }

    /// Plays with the same key have the same index ([`DefIndex::of_play`]).
    #[must_use]
    pub fn key(play: &Play, inventory: Option<&Inventory>) -> IndexKey {
        let layers = play
            .layers
            .iter()
            .map(|l| Arc::as_ptr(l) as usize)
            .collect();
        let groups = match inventory {
            // The pattern itself decides the play's hosts (its magic
            // variables), not only the groups it names.
            Some(_) => {
                let mut g = pattern_groups(&play.hosts);
                g.push(format!("\0{}", play.hosts));
                g
            }
            None => Vec::new(),
        };
        (layers, groups)
    }

    /// The index of `layers` and `extra`.
    #[must_use]
    pub fn new(layers: &[Arc<VarLayer>], extra: &ExtraVars) -> Self {
        // Definitions lowest precedence first: layers by (rank, load order),
        // each layer's entries in their order, extra vars (rank 30) among
        // them by rank. The layers are sorted, not their thousands
        // of entries.
        let mut order: Vec<_> = layers
            .iter()
            .enumerate()
            .filter_map(|(seq, l)| Some((rank(&l.kind), seq, l.node.as_map()?)))
            .collect();
        order.sort_unstable_by_key(|&(r, seq, _)| (r, seq));
        let mut all: Vec<(&str, DefRef)> = Vec::with_capacity(
            order.iter().map(|(.., e)| e.len()).sum::<usize>() + extra.vars.len(),
        );
        // Extra vars (rank 30) go above every layer but the magic
        // variables' (see `rank`).
        let above_extra = order.partition_point(|&(r, ..)| r <= 30);
        let all_layers = order.len();
        for (at, (rank, seq, entries)) in order.into_iter().enumerate() {
            if at == above_extra {
                push_extra(&mut all, extra);
            }
            for (i, (k, _)) in entries.iter().enumerate() {
                if let Some(name) = k.as_str() {
                    all.push((name, DefRef::new(Some(seq), i, rank)));
                }
            }
        }
        if above_extra == all_layers {
            push_extra(&mut all, extra);
        }
        // One flat list, grouped by name (each group in precedence order):
        // no list of its own per name.
        let hasher = foldhash::fast::RandomState::default();
        let mut defs: HashMap<u64, u32> =
            HashMap::with_capacity_and_hasher(all.len(), foldhash::fast::RandomState::default());
        // At most one group per definition: sized once, not grown by
        // copies into fresh memory.
        let mut groups: Vec<(u32, u32, u32)> = Vec::with_capacity(all.len());
        let mut names: Vec<&str> = Vec::with_capacity(all.len());
        let group_of: Vec<u32> = all
            .iter()
            .map(|(name, _)| {
                let h = hasher.hash_one(*name);
                let mut at = defs.get(&h).copied();
                let mut last = None;
                while let Some(g) = at {
                    if names[g as usize] == *name {
                        break;
                    }
                    last = Some(g);
                    at = Some(groups[g as usize].2).filter(|&n| n != NO_GROUP);
                }
                let g = at.unwrap_or_else(|| {
                    let g = u32::try_from(groups.len()).unwrap_or(u32::MAX);
                    match last {
                        Some(l) => groups[l as usize].2 = g,
                        None => {
                            defs.insert(h, g);
                        }
                    }
                    groups.push((0, 0, NO_GROUP));
                    names.push(name);
                    g
                });
                groups[g as usize].1 += 1;
                g
            })
            .collect();
        let mut next = 0u32;
        for (start, len, _) in &mut groups {
            *start = next;
            next += *len;
            *len = 0;
        }
        let mut refs = vec![DefRef::new(None, 0, 0); all.len()];
        for ((_, d), g) in all.iter().zip(group_of) {
            let (start, len, _) = &mut groups[g as usize];
            refs[(*start + *len) as usize] = *d;
            *len += 1;
        }
        DefIndex {
            layers: layers.to_vec(),
            extra: extra.vars.clone(),
            defs,
            groups,
            hasher,
            refs,
        }
    }

    /// The name a definition defines.
    pub(super) fn name_of(&self, d: DefRef) -> Option<&str> {
        match d.layer() {
            Some(l) => self.layers[l].node.as_map()?.get(d.pair())?.0.as_str(),
            None => self.extra.get(d.pair()).map(|(k, _)| k.as_str()),
        }
    }

    /// The definitions of `name`, lowest precedence first.
    pub(super) fn refs(&self, name: &str) -> &[DefRef] {
        let mut at = self.defs.get(&self.hasher.hash_one(name)).copied();
        while let Some(g) = at {
            let (start, len, next) = self.groups[g as usize];
            let run = &self.refs[start as usize..(start + len) as usize];
            if run.first().and_then(|d| self.name_of(*d)) == Some(name) {
                return run;
            }
            at = (next != NO_GROUP).then_some(next);
        }
        &[]
    }
}

/// The groups a hosts pattern selects positively (`a:b:&c:!d` gives a, b, c;
/// `g[0]` gives g). Without an inventory match, `all`.
#[must_use]
pub fn pattern_groups(pattern: &str) -> Vec<String> {
    let mut out: Vec<String> = pattern
        .split([':', ','])
        .map(str::trim)
        .filter(|p| !p.is_empty() && !p.starts_with('!'))
        .map(|p| p.trim_start_matches('&'))
        .map(|p| p.split('[').next().unwrap_or(p).to_string())
        .filter(|p| !p.contains("{{"))
        .collect();
    out.dedup();
    if out.is_empty() {
        out.push("all".into());
    }
    out
}

//! Variables: which definition of a name wins for a task, by Ansible's
//! precedence, and its value rendered through `jinja`.
//!
//! Knows the precedence ladder (DOMAIN.md section 5) and the names that are
//! only known at run time (facts, registered results, `set_fact`). Never
//! evaluates conditions itself: it is the [`VarSource`] that `jinja` asks.

use crate::ansible::inventory::Inventory;
use crate::ansible::project::{
    LayerKind, Play, PlayContext, TaskInstance, TemplateResolver, VarLayer,
};
use crate::jinja::{self, Lookup, Rendered, UnknownWhy, VarSource};
use crate::source::Span;
use crate::yaml::{Node, Tag, Value};
use crate::{HashMap, HashSet};
use rayon::prelude::*;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// Deepest chain of variables whose values refer to other variables.
pub const MAX_RENDER_DEPTH: usize = 32;

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

/// Extra vars (`-e`), the highest precedence.
#[derive(Debug, Default, Clone)]
pub struct ExtraVars {
    pub vars: Vec<(String, Node)>,
}

/// Play-wide index: every static definition by name, lowest precedence first.
///
/// Holds the play's layers (shared) and, per name, where its definitions are:
/// values are cloned only when a caller asks for a [`Definition`].
pub struct PlayVars {
    index: Arc<DefIndex>,
    /// Names set by `register:` in the play, with the first place.
    pub registered: HashMap<String, Span>,
    /// Names set by `set_fact` in the play, with every place and value.
    pub set_facts: HashMap<String, Vec<(Span, Node)>>,
    /// Names resolved for tasks that see only play-level variables (no task,
    /// block, include or role-parameter scope, no loop item): the same for
    /// every such task of the play, so rendered once.
    shared: Mutex<HashMap<String, Arc<Shared>>>,
    /// Results shared with the other plays of the run.
    run: Option<Arc<RunShared>>,
}

/// Where every static definition of a list of play layers (and the extra
/// vars) is, by name. It depends on the layers alone, so plays with the
/// same layers share one (on kubespray's whole tree, 45 distinct plays
/// have 31 distinct lists).
pub struct DefIndex {
    layers: Vec<Arc<VarLayer>>,
    extra: Vec<(String, Node)>,
    /// Per name's hash, its group: its run of `refs`, (start, length), and
    /// the next group whose name has the same hash ([`NO_GROUP`]: none).
    /// A group's name is the key of its first definition: the thousands of
    /// names of each play (kubespray's whole tree: 32,000 in 31 indexes)
    /// are not copied.
    defs: HashMap<u64, u32>,
    groups: Vec<(u32, u32, u32)>,
    hasher: foldhash::fast::RandomState,
    refs: Vec<DefRef>,
}

/// No next group in [`DefIndex`]'s chains.
const NO_GROUP: u32 = u32::MAX;

/// What decides a play's [`DefIndex`]: the addresses of its layers and the
/// inventory groups its `hosts` pattern names.
pub type IndexKey = (Vec<usize>, Vec<String>);

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
            Some(_) => pattern_groups(&play.hosts),
            None => Vec::new(),
        };
        (layers, groups)
    }

    /// The index of `layers` and `extra`.
    #[must_use]
    pub fn new(layers: &[Arc<VarLayer>], extra: &ExtraVars) -> Self {
        // Definitions lowest precedence first: layers by (rank, load order),
        // each layer's entries in their order, then extra vars (rank 30,
        // above every layer). The layers are sorted, not their thousands
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
        for (rank, seq, entries) in order {
            for (i, (k, _)) in entries.iter().enumerate() {
                if let Some(name) = k.as_str() {
                    all.push((name, DefRef::new(Some(seq), i, rank)));
                }
            }
        }
        for (i, (k, _)) in extra.vars.iter().enumerate() {
            all.push((k.as_str(), DefRef::new(None, i, 30)));
        }
        // One flat list, grouped by name (each group in precedence order):
        // no list of its own per name.
        let hasher = foldhash::fast::RandomState::default();
        let mut defs: HashMap<u64, u32> =
            HashMap::with_capacity_and_hasher(all.len(), Default::default());
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
    fn name_of(&self, d: DefRef) -> Option<&str> {
        match d.layer() {
            Some(l) => self.layers[l].node.as_map()?.get(d.pair())?.0.as_str(),
            None => self.extra.get(d.pair()).map(|(k, _)| k.as_str()),
        }
    }

    /// The definitions of `name`, lowest precedence first.
    fn refs(&self, name: &str) -> &[DefRef] {
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

/// Play-level resolutions shared by all the plays of a run. A play takes
/// one when every name it rests on has the same winning definition there
/// (the same entry of the same shared layer, e.g. a role's defaults) and is
/// registered or not alike: its value is then the same.
///
/// Task arguments rendered outside any variable's resolution are shared
/// the same way, by their template text: kubespray's whole tree reaches
/// 9,407 task instances of 1,192 tasks, most of them rendering the same
/// arguments over the same definitions in play after play.
#[derive(Default)]
pub struct RunShared(
    Mutex<HashMap<String, Vec<Variant>>>,
    Mutex<HashMap<String, Vec<RenderVariant>>>,
);

/// A result and what each name it rests on stood on where it was computed.
type Variant = (Arc<Shared>, Vec<Ident>);

/// A rendered template, the names it rests on, and what each stood on.
type RenderVariant = (LookupOwned, Arc<[String]>, Vec<Ident>);

/// Most variants of one name kept in [`RunShared`].
const MAX_RUN_VARIANTS: usize = 8;

/// What a name stands on in one play: its winning static definition (layer
/// address and entry; `usize::MAX` for extra vars), whether it is
/// registered, and, without either, what `set_fact` makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ident {
    def: Option<(usize, usize)>,
    registered: bool,
    set_fact: SetFact,
}

/// What the play's `set_fact` tasks give a name that has no static
/// definition and is not registered (see `TaskVars::set_fact_value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetFact {
    /// Not set by `set_fact`, or its value does not come from there.
    NotUsed,
    /// Known only at run time.
    RunTime,
    /// The one literal every site sets: the value at this span.
    Literal(Span),
}

/// Where one definition is: entry `pair` of layer `layer`, or extra var `pair`.
/// Twelve bytes: a play's index holds one per definition (thousands).
#[derive(Debug, Clone, Copy)]
struct DefRef {
    /// The layer's position, or [`DefRef::EXTRA`].
    layer: u32,
    pair: u32,
    rank: u8,
}

impl DefRef {
    const EXTRA: u32 = u32::MAX;

    fn new(layer: Option<usize>, pair: usize, rank: u8) -> Self {
        // Positions are bounded by the files' sizes (see `load`), far
        // below 2^32.
        let narrow = |x: usize| u32::try_from(x).unwrap_or(u32::MAX - 1);
        DefRef {
            layer: layer.map_or(Self::EXTRA, narrow),
            pair: narrow(pair),
            rank,
        }
    }

    fn layer(self) -> Option<usize> {
        (self.layer != Self::EXTRA).then_some(self.layer as usize)
    }

    fn pair(self) -> usize {
        self.pair as usize
    }
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
            shared: Mutex::new(HashMap::default()),
            run: None,
        }
    }

    /// One definition with its value cloned.
    fn definition(&self, d: DefRef) -> Definition {
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
    fn taken_from_run(&self, name: &str, fits: impl Fn(&Shared) -> bool) -> Option<Arc<Shared>> {
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
    fn offer_to_run(&self, name: &str, entry: &Arc<Shared>) {
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
    fn render_from_run(
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
    fn offer_render(&self, template: &str, v: &LookupOwned, deps: Vec<String>) {
        let Some(run) = &self.run else { return };
        let idents = self.idents(&deps);
        let mut map = run.1.lock().unwrap_or_else(PoisonError::into_inner);
        let variants = map.entry(template.to_string()).or_default();
        if variants.len() < MAX_RUN_VARIANTS && !variants.iter().any(|(_, _, i)| *i == idents) {
            variants.push((v.clone(), deps.into(), idents));
        }
    }

    fn refs(&self, name: &str) -> &[DefRef] {
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
fn set_fact_literal(sites: &[(Span, Node)]) -> Option<&Node> {
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

/// Names Ansible provides at run time (facts and magic variables).
fn is_runtime_name(name: &str) -> bool {
    name.starts_with("ansible_")
        || matches!(
            name,
            "inventory_hostname"
                | "inventory_hostname_short"
                | "groups"
                | "group_names"
                | "hostvars"
                | "play_hosts"
                | "playbook_dir"
                | "role_path"
                | "role_name"
                | "omit"
                | "item"
                | "environment"
                | "inventory_dir"
                | "inventory_file"
                | "vars"
        )
}

/// Interior state of one task's resolution. A mutex rather than a `RefCell`
/// so that tasks can be analysed on worker threads; one task is resolved by
/// one thread at a time (its cycle guard assumes so), so it never waits.
#[derive(Debug, Default)]
struct Slot<T>(Mutex<T>);

impl<T> Slot<T> {
    fn new(v: T) -> Self {
        Slot(Mutex::new(v))
    }

    fn borrow(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn borrow_mut(&self) -> MutexGuard<'_, T> {
        self.borrow()
    }
}

/// A counter in a task's resolution state.
#[derive(Debug, Default)]
struct Count(AtomicUsize);

impl Count {
    fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self, v: usize) {
        self.0.store(v, Ordering::Relaxed);
    }
}

/// The variables one task sees.
pub struct TaskVars<'a> {
    play: &'a PlayVars,
    /// Loop variable bound for one iteration (`item`), when known.
    item: Option<serde_json::Value>,
    scopes: &'a [Arc<VarLayer>],
    cache: Slot<HashMap<String, Arc<Shared>>>,
    stack: Slot<Vec<String>>,
    /// How often the cycle/depth guard cut a resolution short.
    cuts: Count,
    /// Every name resolved so far, in order (with the names each cached
    /// result rests on): what a resolution depended on is a slice of it.
    touched: Slot<Vec<String>>,
    /// How many resolutions depended on this task's own scopes or `item`.
    scoped: Count,
    /// Deepest stack a resolution in progress reached (names entered).
    deepest: Count,
    /// Top-level renders in progress: the log of consulted names is kept
    /// until they end (it says what the render rested on).
    recording: Count,
    /// Names the task's scopes define (built on first use).
    scope_names: OnceLock<HashSet<&'a str>>,
}

/// A resolution and what it rests on.
#[derive(Debug)]
pub struct Shared {
    resolved: Arc<Resolved>,
    /// Every name consulted (the name itself first), sorted after it.
    deps: Vec<String>,
    /// True when no consulted name came from the task's scopes or `item`:
    /// any task of the play whose scopes define none of `deps` sees the same.
    play_level: bool,
    /// The cycle or depth guard cut part of it short.
    cut: bool,
    /// How deep its chain of variables went (1: no variable inside).
    depth: usize,
}

/// A resolved variable: the winning definition (if static) and its value.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub lookup: LookupOwned,
    pub winner: Option<Definition>,
}

/// An owned copy of [`Lookup`] (which is not `Clone`).
#[derive(Debug, Clone)]
pub enum LookupOwned {
    Value(serde_json::Value),
    Unknown(UnknownWhy),
    Missing,
}

impl<'a> TaskVars<'a> {
    #[must_use]
    pub fn new(play: &'a PlayVars, instance: Option<&'a TaskInstance>) -> Self {
        Self::in_scopes(play, instance.map_or(&[], |i| &i.scopes[..]))
    }

    /// The variables seen under `scopes` (task, block, include, role
    /// parameter layers) in a play.
    fn in_scopes(play: &'a PlayVars, scopes: &'a [Arc<VarLayer>]) -> Self {
        TaskVars {
            play,
            item: None,
            scopes,
            cache: Slot::new(HashMap::default()),
            stack: Slot::new(Vec::new()),
            cuts: Count::default(),
            touched: Slot::new(Vec::new()),
            scoped: Count::default(),
            deepest: Count::default(),
            recording: Count::default(),
            scope_names: OnceLock::new(),
        }
    }

    /// The same task seen in one loop iteration with `item` bound.
    #[must_use]
    pub fn with_item(mut self, item: serde_json::Value) -> Self {
        self.item = Some(item);
        self
    }

    /// The winning static definition of `name` for this task, if any.
    #[must_use]
    pub fn winner(&self, name: &str) -> Option<Definition> {
        self.winner_from(name).0
    }

    /// The winner, and whether it comes from the task's own scopes.
    fn winner_from(&self, name: &str) -> (Option<Definition>, bool) {
        let defs = self.play.refs(name);
        // Extra vars beat everything, scopes included.
        if let Some(e) = defs.iter().rev().find(|d| d.rank == 30) {
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

    /// Resolves `name` to a value or says why it is unknown.
    pub fn resolve(&self, name: &str) -> Arc<Resolved> {
        if name == "item"
            && let Some(v) = &self.item
        {
            self.scoped.set(self.scoped.get() + 1);
            return Arc::new(Resolved {
                lookup: LookupOwned::Value(v.clone()),
                winner: None,
            });
        }
        let local = self.cache.borrow().get(name).cloned();
        if let Some(r) = local {
            return self.reuse(&r);
        }
        let shared = self
            .play
            .shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned();
        let depth = self.stack.borrow().len();
        // Taken only where computing it afresh would give the same: no name
        // it rests on is the task's own, and the depth guard would not cut it.
        let fits = |r: &Shared| depth + r.depth <= MAX_RENDER_DEPTH && self.sees_as_play(&r.deps);
        if let Some(r) = shared.filter(|r| fits(r)) {
            self.cache
                .borrow_mut()
                .insert(name.to_string(), Arc::clone(&r));
            return self.reuse(&r);
        }
        if let Some(r) = self.play.taken_from_run(name, fits) {
            self.play
                .shared
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(name.to_string())
                .or_insert_with(|| Arc::clone(&r));
            self.cache
                .borrow_mut()
                .insert(name.to_string(), Arc::clone(&r));
            return self.reuse(&r);
        }
        let guarded = {
            let stack = self.stack.borrow();
            stack.iter().any(|n| n == name) || stack.len() >= MAX_RENDER_DEPTH
        };
        if guarded {
            self.cuts.set(self.cuts.get() + 1);
            return Arc::new(Resolved {
                lookup: LookupOwned::Unknown(UnknownWhy::Cycle),
                winner: None,
            });
        }
        let cuts_before = self.cuts.get();
        let scoped_before = self.scoped.get();
        let outer_deepest = self.deepest.get();
        self.deepest.set(depth + 1);
        let start = self.touched.borrow().len();
        self.touched.borrow_mut().push(name.to_string());
        let (winner, from_scope) = self.winner_from(name);
        if from_scope {
            self.scoped.set(self.scoped.get() + 1);
        }
        let lookup = match &winner {
            Some(d) if d.rank < 30 && self.play.registered.contains_key(name) => {
                LookupOwned::Unknown(UnknownWhy::Registered)
            }
            Some(d) => {
                self.stack.borrow_mut().push(name.to_string());
                let v = self.value(&d.value);
                self.stack.borrow_mut().pop();
                v
            }
            None if self.play.registered.contains_key(name) => {
                LookupOwned::Unknown(UnknownWhy::Registered)
            }
            None if self.play.set_facts.contains_key(name) => self.set_fact_value(name),
            None if is_runtime_name(name) => LookupOwned::Unknown(UnknownWhy::Fact),
            None => LookupOwned::Missing,
        };
        let resolved = Arc::new(Resolved { lookup, winner });
        let mut deps: Vec<String> = self.touched.borrow()[start + 1..].to_vec();
        deps.sort_unstable();
        deps.dedup();
        deps.retain(|d| d != name);
        deps.insert(0, name.to_string());
        let deepest = self.deepest.get();
        self.deepest.set(outer_deepest.max(deepest));
        let entry = Arc::new(Shared {
            resolved: Arc::clone(&resolved),
            deps,
            play_level: self.scoped.get() == scoped_before,
            cut: self.cuts.get() != cuts_before,
            depth: deepest - depth,
        });
        // A result cut short by the cycle/depth guard depends on where the
        // resolution started: keep it for this task only.
        if entry.play_level && !entry.cut {
            self.play
                .shared
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(name.to_string(), Arc::clone(&entry));
            self.play.offer_to_run(name, &entry);
        }
        self.cache.borrow_mut().insert(name.to_string(), entry);
        if self.stack.borrow().is_empty() && self.recording.get() == 0 {
            // Nothing being resolved depends on the log any more.
            self.touched.borrow_mut().clear();
        }
        resolved
    }

    /// A cached resolution used again: what it rested on counts as consulted.
    fn reuse(&self, r: &Shared) -> Arc<Resolved> {
        self.touched.borrow_mut().extend(r.deps.iter().cloned());
        if !r.play_level {
            self.scoped.set(self.scoped.get() + 1);
        }
        if r.cut {
            self.cuts.set(self.cuts.get() + 1);
        }
        let reach = self.stack.borrow().len() + r.depth;
        self.deepest.set(self.deepest.get().max(reach));
        Arc::clone(&r.resolved)
    }

    fn render(&self, template: &str) -> LookupOwned {
        match jinja::render(template, self) {
            Rendered::Value(v) => LookupOwned::Value(v),
            Rendered::Unknown(u) => LookupOwned::Unknown(
                u.iter()
                    .map(|x| x.why.clone())
                    .min()
                    .unwrap_or(UnknownWhy::TooComplex),
            ),
        }
    }

    /// Whether a play-level result holds for this task: none of the names it
    /// rests on is defined by the task's scopes (or is `item` when bound).
    fn sees_as_play(&self, deps: &[String]) -> bool {
        if self.scopes.is_empty() && self.item.is_none() {
            return true;
        }
        let names = self.scope_names.get_or_init(|| {
            self.scopes
                .iter()
                .filter_map(|l| l.node.as_map())
                .flatten()
                .filter_map(|(k, _)| k.as_str())
                .collect()
        });
        let item_bound = self.item.is_some();
        !deps
            .iter()
            .any(|d| names.contains(d.as_str()) || (item_bound && d == "item"))
    }

    /// A name only set by `set_fact`: known when every `set_fact` of it gives
    /// the same literal (what it will be at run time), unknown otherwise.
    fn set_fact_value(&self, name: &str) -> LookupOwned {
        let sites = self.play.set_facts.get(name).map_or(&[][..], Vec::as_slice);
        match set_fact_literal(sites) {
            Some(n) => LookupOwned::Value(n.to_json()),
            None => LookupOwned::Unknown(UnknownWhy::RuntimeFact),
        }
    }

    /// Renders a templated text as a task sees it (an argument, or a
    /// template file's content). Task arguments and template files are
    /// rendered by several analyses and, on a whole tree, by every play
    /// that reaches the task: kept per template text for the run, where
    /// they rest on play-level names only. Not kept per task: the
    /// analyses keep what they rendered of a task (`Iteration::arg`,
    /// `Iteration::rendered`), and a memo per task cost more than it saved
    /// (kubespray's whole tree, `check`: 372.3M -> 369.5M instructions and
    /// ~2 MB less resident memory without it).
    pub fn render_text(&self, s: &str) -> LookupOwned {
        // Not inside a variable's resolution, whose dependencies are
        // recorded by the lookups a render makes.
        let top = self.stack.borrow().is_empty() && self.recording.get() == 0;
        if !top {
            return self.render(s);
        }
        if let Some(v) = self.play.render_from_run(s, |deps| self.sees_as_play(deps)) {
            return v;
        }
        let (start, scoped, cuts) = (
            self.touched.borrow().len(),
            self.scoped.get(),
            self.cuts.get(),
        );
        self.recording.set(1);
        let v = self.render(s);
        self.recording.set(0);
        let mut deps: Vec<String> = self.touched.borrow_mut().split_off(start);
        // Only what rested on play-level names, uncut, holds elsewhere.
        if self.scoped.get() == scoped && self.cuts.get() == cuts {
            deps.sort_unstable();
            deps.dedup();
            self.play.offer_render(s, &v, deps);
        }
        if self.stack.borrow().is_empty() {
            self.touched.borrow_mut().clear();
        }
        v
    }

    /// Renders a node's value (strings through Jinja, containers recursively).
    pub fn value(&self, node: &Node) -> LookupOwned {
        if node.tag == Tag::Vault {
            return LookupOwned::Unknown(UnknownWhy::Vault);
        }
        match &node.value {
            Value::Str(s)
                if node.tag != Tag::Unsafe && crate::ansible::project::is_templated(s) =>
            {
                self.render_text(s)
            }
            Value::Seq(items) => {
                let mut out = Vec::new();
                for i in items {
                    match self.value(i) {
                        LookupOwned::Value(v) => out.push(v),
                        other => return other,
                    }
                }
                LookupOwned::Value(serde_json::Value::Array(out))
            }
            Value::Map(pairs) => {
                let mut out = serde_json::Map::new();
                for (k, v) in pairs {
                    match self.value(v) {
                        LookupOwned::Value(val) => {
                            out.insert(k.scalar_text().unwrap_or_default(), val);
                        }
                        other => return other,
                    }
                }
                LookupOwned::Value(serde_json::Value::Object(out))
            }
            _ => LookupOwned::Value(node.to_json()),
        }
    }
}

impl VarSource for TaskVars<'_> {
    fn lookup(&self, name: &str) -> Lookup {
        match &self.resolve(name).lookup {
            LookupOwned::Value(v) => Lookup::Value(v.clone()),
            LookupOwned::Unknown(w) => Lookup::Unknown(w.clone()),
            LookupOwned::Missing => Lookup::Missing,
        }
    }
}

/// Parses `-e` arguments: `k=v` pairs (values are strings, as Ansible's
/// `parse_kv`), `@file.yml`, or inline JSON/YAML mappings.
///
/// # Errors
/// A message when a file cannot be read or a value is not a mapping.
pub fn parse_extra_vars(
    items: &[String],
    sources: &crate::source::SourceMap,
) -> Result<ExtraVars, String> {
    let mut out = ExtraVars::default();
    for item in items {
        let (text, path) = if let Some(p) = item.strip_prefix('@') {
            let text = std::fs::read_to_string(p).map_err(|e| format!("-e @{p}: {e}"))?;
            (text, std::path::PathBuf::from(p))
        } else if item.trim_start().starts_with('{') {
            (item.clone(), std::path::PathBuf::from("<-e>"))
        } else {
            let id = sources.add(std::path::Path::new("<-e>"), item.as_str().into());
            for (k, v) in crate::ansible::modules::parse_kv(item, false) {
                let span = Span::file_start(id);
                out.vars.push((
                    k,
                    Node {
                        value: Value::Str(v),
                        span,
                        tag: Tag::None,
                        quoted: true,
                    },
                ));
            }
            continue;
        };
        let id = sources.add(&path, text.as_str().into());
        let parsed = crate::yaml::parse(id, &text);
        if let Some(d) = parsed.diagnostics.first() {
            return Err(format!("-e {item}: line {}: {}", d.span.line, d.message));
        }
        match parsed.docs.first().and_then(Node::as_map) {
            Some(pairs) => {
                for (k, v) in pairs {
                    out.vars
                        .push((k.scalar_text().unwrap_or_default(), v.clone()));
                }
            }
            None => return Err(format!("-e {item}: expected a mapping of variables")),
        }
    }
    Ok(out)
}

/// Resolves templated include targets and role names with the variables
/// known when the include is reached.
pub struct VarsResolver {
    extra: ExtraVars,
    /// The index of each list of play layers met (a play's layers so far):
    /// plays that start alike, and the includes of one play between two
    /// roles, resolve over the same list. Keyed by the layers' addresses,
    /// which the index holds alive.
    plays: Mutex<HashMap<Vec<usize>, Arc<PlayVars>>>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceMap;

    fn layer(kind: LayerKind, text: &str) -> Arc<VarLayer> {
        let sources = SourceMap::new(std::path::Path::new("/"));
        let id = sources.add(std::path::Path::new("/vars.yml"), text.into());
        let doc = crate::yaml::parse(id, text).docs.remove(0);
        Arc::new(VarLayer { kind, node: doc })
    }

    fn task_vars<'a>(
        play: &'a PlayVars,
        scopes: &'a [Arc<VarLayer>],
        item: Option<serde_json::Value>,
    ) -> TaskVars<'a> {
        let mut tv = TaskVars::new(play, None);
        tv.scopes = scopes;
        tv.item = item;
        tv
    }

    fn value(tv: &TaskVars<'_>, name: &str) -> Option<serde_json::Value> {
        match &tv.resolve(name).lookup {
            LookupOwned::Value(v) => Some(v.clone()),
            _ => None,
        }
    }

    fn play() -> PlayVars {
        let defaults = layer(
            LayerKind::RoleDefaults { role: "r".into() },
            "a: \"{{ b }}-x\"\nb: one\nc: \"{{ item }}\"\nd: \"{{ a }}\"\n",
        );
        PlayVars::from_parts(&[defaults], std::iter::empty(), &ExtraVars::default())
    }

    /// Names are found by their hash and checked against the key of their
    /// first definition: every one of many names, and only those, is found.
    #[test]
    fn the_index_finds_every_name_by_its_key() {
        let text: String = (0..3000).map(|i| format!("n{i}: {i}\n")).collect();
        let more: String = (0..3000)
            .step_by(7)
            .map(|i| format!("n{i}: again\n"))
            .collect();
        let index = DefIndex::new(
            &[
                layer(LayerKind::RoleDefaults { role: "r".into() }, &text),
                layer(LayerKind::PlayVars, &more),
            ],
            &ExtraVars::default(),
        );
        for i in 0..3000 {
            let refs = index.refs(&format!("n{i}"));
            assert_eq!(refs.len(), if i % 7 == 0 { 2 } else { 1 }, "n{i}");
            assert_eq!(index.name_of(refs[0]), Some(format!("n{i}").as_str()));
        }
        for absent in ["n3000", "n", "", "n01"] {
            assert!(index.refs(absent).is_empty(), "{absent}");
        }
    }

    #[test]
    fn the_index_lists_each_names_definitions_lowest_precedence_first() {
        // Layers given out of precedence order: play vars (12) before role
        // defaults (1, in load order); extra vars (30) above all.
        let play = layer(LayerKind::PlayVars, "a: play\nb: only\n");
        let defaults = layer(
            LayerKind::RoleDefaults { role: "r".into() },
            "a: default\nc: 1\n",
        );
        let later = layer(LayerKind::RoleDefaults { role: "s".into() }, "a: again\n");
        let extra = ExtraVars {
            vars: vec![("a".into(), layer(LayerKind::PlayVars, "extra").node.clone())],
        };
        let pv = PlayVars::from_parts(&[play, defaults, later], std::iter::empty(), &extra);
        let seen = |name: &str| -> Vec<(u8, String)> {
            pv.definitions(name)
                .into_iter()
                .map(|d| (d.rank, d.value.scalar_text().unwrap_or_default()))
                .collect()
        };
        assert_eq!(
            seen("a"),
            [
                (1, "default".to_string()),
                (1, "again".to_string()),
                (12, "play".to_string()),
                (30, "extra".to_string()),
            ]
        );
        assert_eq!(seen("b"), [(12, "only".to_string())]);
        assert_eq!(seen("c"), [(1, "1".to_string())]);
        assert!(seen("missing").is_empty());
    }

    #[test]
    fn play_level_results_are_shared_only_with_tasks_that_see_the_same() {
        let pv = play();
        let plain = task_vars(&pv, &[], None);
        assert_eq!(value(&plain, "d"), Some("one-x".into()));
        // A task whose vars redefine a name the shared result rests on (two
        // levels down) must not reuse it.
        let scope = [layer(LayerKind::TaskVars, "b: two\n")];
        let scoped = task_vars(&pv, &scope, None);
        assert_eq!(value(&scoped, "d"), Some("two-x".into()));
        // ... and its result is not shared with the next plain task.
        let again = task_vars(&pv, &[], None);
        assert_eq!(value(&again, "a"), Some("one-x".into()));
        // A scope that defines unrelated names reuses the play-level result.
        let other = [layer(LayerKind::TaskVars, "z: 1\n")];
        let unrelated = task_vars(&pv, &other, None);
        assert_eq!(value(&unrelated, "d"), Some("one-x".into()));
    }

    #[test]
    fn loop_item_results_are_not_shared() {
        let pv = play();
        let first = task_vars(&pv, &[], Some("i1".into()));
        assert_eq!(value(&first, "c"), Some("i1".into()));
        let second = task_vars(&pv, &[], Some("i2".into()));
        assert_eq!(value(&second, "c"), Some("i2".into()));
        let plain = task_vars(&pv, &[], None);
        assert_eq!(value(&plain, "c"), None);
    }

    #[test]
    fn shared_results_never_reach_past_the_depth_guard() {
        // v0 -> v1 -> ... -> v39: resolving v0 afresh hits the depth guard,
        // resolving v10 does not. Whichever task comes first, v0 is the same.
        let mut text = String::new();
        for i in 0..39 {
            text.push_str(&format!("v{i}: \"{{{{ v{} }}}}\"\n", i + 1));
        }
        text.push_str("v39: end\n");
        let fresh = |names: &[&str]| {
            let l = layer(LayerKind::RoleDefaults { role: "r".into() }, &text);
            let pv = PlayVars::from_parts(&[l], std::iter::empty(), &ExtraVars::default());
            let mut out = Vec::new();
            for n in names {
                let tv = task_vars(&pv, &[], None);
                out.push(value(&tv, n));
            }
            out
        };
        let alone = fresh(&["v0"]);
        assert_eq!(alone, vec![None]);
        let after = fresh(&["v10", "v0"]);
        assert_eq!(after, vec![Some("end".into()), None]);
    }

    /// Role defaults `a: "{{ b }}-x"`, `b: one`, shared by the plays of a run.
    fn run_defaults() -> Arc<VarLayer> {
        layer(
            LayerKind::RoleDefaults { role: "r".into() },
            "a: \"{{ b }}-x\"\nb: one\n",
        )
    }

    /// A play of `run` over `defaults`, with play vars `extra` when given.
    fn run_play(run: &Arc<RunShared>, defaults: &Arc<VarLayer>, extra: Option<&str>) -> PlayVars {
        let mut layers = vec![Arc::clone(defaults)];
        if let Some(text) = extra {
            layers.push(layer(LayerKind::PlayVars, text));
        }
        PlayVars::from_parts(&layers, std::iter::empty(), &ExtraVars::default())
            .with_run(Arc::clone(run))
    }

    #[test]
    fn the_resolver_indexes_each_list_of_play_layers_once() {
        let r = VarsResolver::new(ExtraVars::default());
        let defaults = run_defaults();
        let play = layer(LayerKind::PlayVars, "b: two\n");
        let resolve = |layers: &[Arc<VarLayer>], scopes: &[Arc<VarLayer>]| {
            r.resolve("{{ a }}", &PlayContext { layers }, scopes)
        };
        let first = [Arc::clone(&defaults)];
        assert_eq!(resolve(&first, &[]).as_deref(), Some("one-x"));
        // A task scope of its own does not reach the shared index.
        let scope = [layer(LayerKind::TaskVars, "b: three\n")];
        assert_eq!(resolve(&first, &scope).as_deref(), Some("three-x"));
        assert_eq!(resolve(&first, &[]).as_deref(), Some("one-x"));
        let longer = [Arc::clone(&defaults), play];
        assert_eq!(resolve(&longer, &[]).as_deref(), Some("two-x"));
        assert_eq!(r.plays.lock().expect("lock").len(), 2);
    }

    #[test]
    fn run_wide_results_hold_only_where_the_same_definitions_win() {
        let run = Arc::new(RunShared::default());
        let defaults = run_defaults();
        let play = |extra: Option<&str>| run_play(&run, &defaults, extra);
        let first = play(None);
        assert_eq!(
            value(&task_vars(&first, &[], None), "a"),
            Some("one-x".into())
        );
        // Another play whose vars override a name `a` rests on.
        let other = play(Some("b: two\n"));
        assert_eq!(
            value(&task_vars(&other, &[], None), "a"),
            Some("two-x".into())
        );
        // ... and one that overrides nothing it rests on.
        let same = play(Some("c: 3\n"));
        assert_eq!(
            value(&task_vars(&same, &[], None), "a"),
            Some("one-x".into())
        );
        assert_eq!(run.0.lock().expect("lock")["a"].len(), 2);
    }

    #[test]
    fn run_wide_renders_hold_only_where_the_same_definitions_win() {
        let run = Arc::new(RunShared::default());
        let defaults = run_defaults();
        let play = |extra: Option<&str>| run_play(&run, &defaults, extra);
        let arg = layer(LayerKind::TaskVars, "dest: \"/etc/{{ a }}.conf\"\n");
        let dest = arg.node.get("dest").expect("dest").clone();
        let render = |pv: &PlayVars, scopes: &[Arc<VarLayer>], item: Option<serde_json::Value>| {
            match task_vars(pv, scopes, item).value(&dest) {
                LookupOwned::Value(v) => Some(v),
                _ => None,
            }
        };
        let first = play(None);
        assert_eq!(render(&first, &[], None), Some("/etc/one-x.conf".into()));
        assert_eq!(
            run.1.lock().expect("lock")[dest.as_str().expect("str")].len(),
            1
        );
        // Another play overriding a name two levels down renders afresh.
        let other = play(Some("b: two\n"));
        assert_eq!(render(&other, &[], None), Some("/etc/two-x.conf".into()));
        // A task whose own vars define such a name, in the first play.
        let scope = [layer(LayerKind::TaskVars, "b: three\n")];
        assert_eq!(
            render(&first, &scope, None),
            Some("/etc/three-x.conf".into())
        );
        // A loop item is the task's own: `b` as the item is not shared either.
        let looped = layer(LayerKind::TaskVars, "dest: \"{{ item }}-{{ a }}\"\n");
        let node = looped.node.get("dest").expect("dest").clone();
        let tv = task_vars(&first, &[], Some("i".into()));
        assert!(matches!(tv.value(&node), LookupOwned::Value(v) if v == "i-one-x"));
        let tv = task_vars(&first, &[], Some("j".into()));
        assert!(matches!(tv.value(&node), LookupOwned::Value(v) if v == "j-one-x"));
        // A play where the same definitions win takes the first render.
        let same = play(Some("c: 3\n"));
        assert_eq!(render(&same, &[], None), Some("/etc/one-x.conf".into()));
        assert_eq!(
            run.1.lock().expect("lock")[dest.as_str().expect("str")].len(),
            2
        );
    }

    #[test]
    fn run_wide_renders_over_set_fact_names_hold_where_the_same_sites_set_them() {
        let run = Arc::new(RunShared::default());
        let defaults = run_defaults();
        // `f` has no static definition: the play's `set_fact` tasks give it.
        let sites = layer(LayerKind::TaskVars, "s1: one\ns2: two\ns3: \"{{ b }}\"\n");
        let site = |k: &str| {
            let n = sites.node.get(k).expect("site").clone();
            (n.span, n)
        };
        let play = |set: &[&str]| {
            let mut pv = run_play(&run, &defaults, None);
            pv.set_facts
                .insert("f".into(), set.iter().map(|k| site(k)).collect());
            pv
        };
        let arg = layer(LayerKind::TaskVars, "dest: \"/etc/{{ f }}.conf\"\n");
        let dest = arg.node.get("dest").expect("dest").clone();
        let render = |pv: &PlayVars| match task_vars(pv, &[], None).value(&dest) {
            LookupOwned::Value(v) => Some(v),
            _ => None,
        };
        let variants = || run.1.lock().expect("lock")[dest.as_str().expect("str")].len();
        assert_eq!(render(&play(&["s1"])), Some("/etc/one.conf".into()));
        // The same site in another play: the render is taken, not redone.
        assert_eq!(render(&play(&["s1"])), Some("/etc/one.conf".into()));
        assert_eq!(variants(), 1);
        // Another literal is another value.
        assert_eq!(render(&play(&["s2"])), Some("/etc/two.conf".into()));
        assert_eq!(variants(), 2);
        // Sites that disagree, or a templated one, leave it to run time,
        // whichever sites they are.
        assert_eq!(render(&play(&["s1", "s2"])), None);
        assert_eq!(render(&play(&["s3"])), None);
        assert_eq!(variants(), 3);
    }
}

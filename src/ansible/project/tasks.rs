//! Task lists: blocks, tasks, and `import_tasks`/`include_tasks` (their
//! search paths, cycle and recursion rules), each task emitted as a
//! [`TaskInstance`] carrying what it inherits on the way.

use super::super::task::{self, Condition, IncludeKind, IncludeSpec, Item, Origin, Task};
use super::budget::MAX_INCLUDE_DEPTH;
use super::builder::{Builder, Ctx, PlayState, extended, on_stack};
use super::model::{
    BlockPart, LayerKind, PlayContext, Section, TaskInstance, VarLayer, is_templated,
};
use crate::diagnostic::{Diagnostic, Severity, code};
use crate::source::Span;
use crate::yaml::Node;
use std::path::Path;
use std::sync::Arc;

impl Builder<'_> {
    pub(super) fn expand_items(&mut self, items: &[Node], ctx: &Ctx, state: &mut PlayState) {
        for item in items {
            if self.must_stop(state, item.span, false) {
                return;
            }
            if let Some(t) = self.known_task(item) {
                self.task(t, ctx, state);
                continue;
            }
            let mut local = Vec::new();
            let parsed = task::read_item(item, &mut local);
            for d in &local {
                self.push_diag(d.clone());
            }
            match parsed {
                Err(d) => self.push_diag(*d),
                Ok(Item::Block(block)) => {
                    let mut inner = ctx.clone();
                    inner.conditions = extended(&inner.conditions, &block.when);
                    if let Some(v) = block.vars.filter(|v| v.as_map().is_some()) {
                        inner.scopes = extended(
                            &inner.scopes,
                            &[Arc::new(VarLayer {
                                kind: LayerKind::BlockVars,
                                node: v.clone(),
                            })],
                        );
                    }
                    inner.tags = extended(&inner.tags, &block.tags);
                    for (part, list) in [
                        (BlockPart::Block, block.block),
                        (BlockPart::Rescue, block.rescue),
                        (BlockPart::Always, block.always),
                    ] {
                        let mut c = inner.clone();
                        c.blocks = extended(&c.blocks, &[part]);
                        self.expand_items(list, &c, state);
                    }
                }
                Ok(Item::Task(t)) => {
                    let t: Arc<Task> = Arc::from(t);
                    self.share_task(item, &t, local);
                    self.task(t, ctx, state);
                }
            }
        }
    }

    pub(super) fn task(&mut self, t: Arc<Task>, ctx: &Ctx, state: &mut PlayState) {
        let mut scopes = Arc::clone(&ctx.scopes);
        if let Some(v) = t.vars.as_ref().filter(|v| v.as_map().is_some()) {
            let kind = if t.include.is_some() {
                LayerKind::IncludeVars
            } else {
                LayerKind::TaskVars
            };
            scopes = extended(
                &scopes,
                &[Arc::new(VarLayer {
                    kind,
                    node: v.clone(),
                })],
            );
        }
        let Some(inc) = t.include.clone() else {
            self.emit(t, ctx, scopes, state, None);
            return;
        };
        if inc.kind == IncludeKind::ImportPlaybook {
            self.push_diag(Diagnostic::error(
                code::SHAPE,
                t.action_span,
                "import_playbook is only allowed at the top level of a playbook",
            )
            .with_help("move it to the top level of the playbook, between plays; inside a play, use import_tasks or include_tasks"));
            return;
        }
        let mut inner = ctx.clone();
        if inc.kind.is_static() {
            inner.tags = extended(&inner.tags, &t.tags);
        }
        let origin = if inc.kind.is_static() {
            Origin::Import
        } else {
            Origin::Include
        };
        let own: Vec<Condition> = t
            .when
            .iter()
            .cloned()
            .map(|mut c| {
                c.origin = origin;
                c
            })
            .collect();
        inner.conditions = extended(&inner.conditions, &own);
        inner.scopes = Arc::clone(&scopes);
        let task_ref = Arc::new(t);
        // Ansible lists a dynamic include itself, before what it pulls in.
        let slot = if inc.kind.is_static() {
            None
        } else {
            let inst = self.instance(
                Arc::clone(&task_ref),
                ctx,
                scopes,
                Some(false),
                &state.layers,
            );
            let list = if ctx.section == Section::Handlers {
                &mut state.handlers
            } else {
                &mut state.tasks
            };
            list.push(inst);
            Some(list.len() - 1)
        };
        if !inc.kind.is_static() {
            inner.dynamic = true;
            if task_ref.loop_items.is_some() {
                inner.outer_loops = extended(&inner.outer_loops, &[Arc::clone(&task_ref)]);
            }
        }
        let resolved = match inc.kind {
            IncludeKind::ImportTasks | IncludeKind::IncludeTasks => {
                self.include_tasks(&inc, &inner, state)
            }
            IncludeKind::ImportRole | IncludeKind::IncludeRole => {
                self.include_role(&inc, &task_ref, &inner, state)
            }
            IncludeKind::ImportPlaybook => false,
        };
        if let Some(i) = slot {
            let list = if ctx.section == Section::Handlers {
                &mut state.handlers
            } else {
                &mut state.tasks
            };
            list[i].include_resolved = Some(resolved);
        }
    }

    pub(super) fn instance(
        &self,
        task: Arc<Task>,
        ctx: &Ctx,
        scopes: Arc<[Arc<VarLayer>]>,
        include: Option<bool>,
        layers: &[Arc<VarLayer>],
    ) -> TaskInstance {
        let conditions = extended(&ctx.conditions, &task.when);
        let mut tags = extended(&ctx.tags, &task.tags);
        // Ansible templates tags; keep the template when it cannot be rendered.
        if tags.iter().any(|t| is_templated(t)) {
            let mut own = tags.to_vec();
            for t in &mut own {
                if is_templated(t)
                    && let Some(r) = self.resolver.resolve(t, &PlayContext { layers }, &scopes)
                {
                    *t = r;
                }
            }
            tags = own.into();
        }
        TaskInstance {
            task,
            roles: Arc::clone(&ctx.roles),
            section: ctx.section,
            conditions,
            scopes,
            dynamic: ctx.dynamic,
            role_path: ctx.role_path.clone(),
            include_resolved: include,
            blocks: Arc::clone(&ctx.blocks),
            tags,
            duplicate: ctx.duplicate,
            outer_loops: Arc::clone(&ctx.outer_loops),
        }
    }

    pub(super) fn emit(
        &mut self,
        t: Arc<Task>,
        ctx: &Ctx,
        scopes: Arc<[Arc<VarLayer>]>,
        state: &mut PlayState,
        include: Option<bool>,
    ) {
        let inst = self.instance(t, ctx, scopes, include, &state.layers);
        if ctx.section == Section::Handlers {
            state.handlers.push(inst);
        } else {
            state.tasks.push(inst);
        }
    }

    pub(super) fn resolve_target(
        &mut self,
        inc: &IncludeSpec,
        ctx: &Ctx,
        state: &PlayState,
    ) -> Option<String> {
        if !is_templated(&inc.target) {
            return Some(inc.target.clone());
        }
        let r = self.resolver.resolve(
            &inc.target,
            &PlayContext {
                layers: &state.layers,
            },
            &ctx.scopes,
        );
        if r.is_none() {
            self.unresolved(
                inc.kind.as_str(),
                &inc.target,
                inc.target_span,
                "templated target; its variables are not known statically".into(),
            );
        }
        r
    }

    pub(super) fn include_tasks(
        &mut self,
        inc: &IncludeSpec,
        ctx: &Ctx,
        state: &mut PlayState,
    ) -> bool {
        let Some(target) = self.resolve_target(inc, ctx, state) else {
            return false;
        };
        let current_dir = self
            .loader
            .sources
            .get(inc.target_span.file)
            .path
            .parent()
            .map(Path::to_path_buf);
        let mut candidates = Vec::new();
        if let Some(role) = &ctx.role_path {
            candidates.push(role.join("tasks").join(&target));
            candidates.push(role.join(&target));
        }
        if let Some(d) = current_dir {
            candidates.push(d.join(&target));
        }
        candidates.push(ctx.basedir.join(&target));
        let Some(path) = candidates.into_iter().find(|p| self.loader.fs.is_file(p)) else {
            self.push_diag(
                Diagnostic::error(
                    code::INCLUDE_NOT_FOUND,
                    inc.target_span,
                    format!("{} target `{target}` not found", inc.kind.as_str()),
                )
                .with_help(
                    "paths are relative to the role's tasks/ directory or the including file",
                ),
            );
            return false;
        };
        let dynamic_edge = inc.kind == IncludeKind::IncludeTasks;
        self.tasks_file(&path, inc.target_span, ctx, state, dynamic_edge)
    }

    /// Expands a tasks file, detecting include cycles.
    pub(super) fn tasks_file(
        &mut self,
        path: &Path,
        from: Span,
        ctx: &Ctx,
        state: &mut PlayState,
        dynamic_edge: bool,
    ) -> bool {
        let key = self.loader.fs.canonical(path);
        self.probe_stack(&key, ctx);
        if on_stack(&ctx.stack, &key) && dynamic_edge {
            // A dynamic include of itself is Ansible's retry loop: bounded at
            // run time by its conditions, so it is followed once, not an error.
            self.push_diag(Diagnostic::new(
                code::INCLUDE_CYCLE,
                Severity::Info,
                from,
                format!(
                    "recursive include_tasks of {}: followed once; at run time it repeats while its conditions hold",
                    self.display(path)
                ),
            )
            .with_help("make sure the include's `when` ends the recursion; its tasks are listed once"));
            return true;
        }
        if on_stack(&ctx.stack, &key) {
            self.push_diag(
                Diagnostic::error(
                    code::INCLUDE_CYCLE,
                    from,
                    format!(
                        "include cycle: {} is already being included",
                        self.display(path)
                    ),
                )
                .with_help("remove the include or import that closes the cycle"),
            );
            return false;
        }
        if ctx.stack.len() >= MAX_INCLUDE_DEPTH {
            self.push_diag(Diagnostic::error(
                code::INCLUDE_CYCLE,
                from,
                format!("includes nested deeper than {MAX_INCLUDE_DEPTH}; not followed"),
            )
            .with_help("shorten the chain of includes; a chain this deep is usually a recursion through several files"));
            return false;
        }
        let loaded = self.load(path);
        let Some(doc) = loaded.doc() else {
            return loaded.ok();
        };
        let Some(items) = doc.as_seq() else {
            if !doc.is_null() {
                self.push_diag(
                    Diagnostic::error(code::SHAPE, doc.span, "a tasks file must be a list of tasks")
                        .with_help("start each task with `- name: ...`; a mapping at the top level is not a task list"),
                );
            }
            return false;
        };
        let mut inner = ctx.clone();
        inner.stack.push(key);
        self.expand_items(items, &inner, state);
        true
    }
}

//! Roles: references in `roles:`, `meta` dependencies and
//! `import_role`/`include_role`; finding a role's directory as Ansible does,
//! reading its defaults, vars, meta and argument spec, and running it
//! (dependencies first, a repeated run marked duplicate, handlers after its
//! tasks).

use super::super::task::{self, IncludeSpec, Origin, Task};
use super::budget::MAX_INCLUDE_DEPTH;
use super::builder::{Builder, Ctx, PlayState, extended, on_stack};
use super::model::{LayerKind, PlayContext, Role, RoleEntry, Section, VarLayer, is_templated};
use crate::diagnostic::{Diagnostic, Severity, code};
use crate::source::Span;
use crate::yaml::{Node, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Candidate file names for `main`-style lookups: `x.yml`, `x.yaml`, `x`.
pub(super) fn yaml_candidates(dir: &Path, stem: &str) -> Vec<PathBuf> {
    let plain = dir.join(stem);
    if Path::new(stem)
        .extension()
        .is_some_and(|e| e == "yml" || e == "yaml")
    {
        return vec![plain];
    }
    // `dir/stem` with each suffix appended (not `set_extension`, which
    // would replace a dotted stem's last part): one join for the four.
    let with = |suffix: &str| {
        let mut p = plain.clone().into_os_string();
        p.push(suffix);
        PathBuf::from(p)
    };
    vec![with(".yml"), with(".yaml"), with(".json"), plain]
}

fn keyword_node(map: &Node, keys: &[&str]) -> Option<Node> {
    let pairs = map.as_map()?;
    let rest: Vec<(Node, Node)> = pairs
        .iter()
        .filter(|(k, _)| k.as_str().is_none_or(|k| !keys.contains(&k)))
        .cloned()
        .collect();
    if rest.is_empty() {
        None
    } else {
        Some(Node {
            value: Value::Map(rest),
            ..map.clone()
        })
    }
}

const ROLE_ENTRY_KEYWORDS: &[&str] = &[
    "role",
    "name",
    "when",
    "tags",
    "vars",
    "become",
    "become_user",
    "become_method",
    "delegate_to",
    "environment",
    "ignore_errors",
    "no_log",
    "any_errors_fatal",
    "run_once",
    "check_mode",
    "diff",
    "collections",
    "connection",
    "remote_user",
    "tasks_from",
    "vars_from",
    "defaults_from",
    "handlers_from",
    "public",
    "apply",
    "allow_duplicates",
    "rolespec_validate",
    "debugger",
    "module_defaults",
    "throttle",
    "timeout",
];

impl RoleEntry {
    /// A role named with nothing else (`- common` in a play's roles).
    pub(super) fn bare(name: String, span: Span) -> Self {
        RoleEntry {
            name,
            span,
            when: Vec::new(),
            vars: None,
            params: None,
            tags: Vec::new(),
            tasks_from: None,
            handlers_from: None,
        }
    }
}

pub(super) fn role_entry(node: &Node, origin: Origin) -> Option<RoleEntry> {
    match &node.value {
        Value::Str(s) => Some(RoleEntry::bare(s.trim().to_string(), node.span)),
        Value::Map(_) => {
            let name_node = node.get("role").or_else(|| node.get("name"))?;
            Some(RoleEntry {
                name: name_node.scalar_text()?.trim().to_string(),
                span: name_node.span,
                when: node
                    .get("when")
                    .map(|w| task::conditions(w, origin))
                    .unwrap_or_default(),
                vars: node.get("vars").cloned(),
                params: keyword_node(node, ROLE_ENTRY_KEYWORDS),
                tags: task::string_list(node.get("tags")),
                tasks_from: node.get("tasks_from").and_then(Node::scalar_text),
                handlers_from: node.get("handlers_from").and_then(Node::scalar_text),
            })
        }
        _ => None,
    }
}

impl Builder<'_> {
    pub(super) fn include_role(
        &mut self,
        inc: &IncludeSpec,
        t: &Arc<Task>,
        ctx: &Ctx,
        state: &mut PlayState,
    ) -> bool {
        let Some(name) = self.resolve_target(inc, ctx, state) else {
            return false;
        };
        let params = t.role_params.as_ref().and_then(|n| {
            keyword_node(
                n,
                &[
                    "name",
                    "role",
                    "tasks_from",
                    "vars_from",
                    "defaults_from",
                    "handlers_from",
                    "apply",
                    "public",
                    "allow_duplicates",
                    "rolespec_validate",
                ],
            )
        });
        let entry = RoleEntry {
            name,
            span: inc.target_span,
            when: Vec::new(),
            vars: None,
            params,
            tags: Vec::new(),
            tasks_from: inc.tasks_from.clone(),
            handlers_from: inc.handlers_from.clone(),
        };
        self.run_role(&entry, ctx, state, Some(inc))
    }

    /// Finds a role directory as Ansible does: `roles/` next to the playbook,
    /// `roles_path`, the directory of the role that declares the dependency,
    /// the playbook directory, then the name as a path.
    fn find_role(&self, name: &str, ctx: &Ctx) -> Result<PathBuf, String> {
        let mut search = vec![ctx.basedir.join("roles")];
        search.extend(self.cfg.roles_path.iter().cloned());
        if let Some(parent) = ctx.role_path.as_ref().and_then(|p| p.parent()) {
            search.push(parent.to_path_buf());
        }
        search.push(ctx.basedir.clone());
        search.push(self.root.clone());
        let mut file_instead = None;
        for dir in &search {
            let p = dir.join(name);
            if self.loader.fs.is_dir(&p) {
                return Ok(p);
            }
            if self.loader.fs.is_file(&p) && file_instead.is_none() {
                file_instead = Some(p);
            }
        }
        // Last, `unfrackpath(role_name)`: the name as a path from the
        // working directory (where preflint's own paths start too).
        let p = PathBuf::from(name);
        if self.loader.fs.is_dir(&p) {
            return Ok(p);
        }
        if let Some(f) = file_instead {
            return Err(format!(
                "{} is a file, not a role directory",
                self.display(&f)
            ));
        }
        // A role at the top of the tree has the playbook directory, its own
        // parent and the root as one directory: named once.
        let mut shown: Vec<String> = Vec::new();
        for dir in &search {
            let d = self.display(dir);
            if !shown.contains(&d) {
                shown.push(d);
            }
        }
        Err(format!("searched {}", shown.join(", ")))
    }

    pub(super) fn run_role(
        &mut self,
        entry: &RoleEntry,
        ctx: &Ctx,
        state: &mut PlayState,
        inc: Option<&IncludeSpec>,
    ) -> bool {
        let name = if is_templated(&entry.name) {
            match self.resolver.resolve(
                &entry.name,
                &PlayContext {
                    layers: &state.layers,
                },
                &ctx.scopes,
            ) {
                Some(n) => n,
                None => {
                    self.unresolved(
                        "role",
                        &entry.name,
                        entry.span,
                        "templated role name".into(),
                    );
                    return false;
                }
            }
        } else {
            entry.name.clone()
        };
        match self.find_role(&name, ctx) {
            Ok(path) => {
                let entry = RoleEntry {
                    name,
                    ..entry.clone()
                };
                self.run_role_at(&entry, &path, ctx, state);
                true
            }
            Err(searched) => {
                if name.matches('.').count() >= 2 && !name.contains('/') {
                    self.push_diag(Diagnostic::new(
                        code::ROLE_EXTERNAL,
                        Severity::Info,
                        entry.span,
                        format!("role `{name}` comes from a collection that is not in the tree; not analysed"),
                    )
                    .with_help("to check the role's tasks too, run preflint on the collection's source tree"));
                    self.unresolved(
                        "role",
                        &name,
                        entry.span,
                        "role from an external collection".into(),
                    );
                } else {
                    let what = inc.map_or("role", |i| i.kind.as_str());
                    self.push_diag(
                        Diagnostic::error(
                            code::ROLE_NOT_FOUND,
                            entry.span,
                            format!("{what} `{name}` not found ({searched})"),
                        )
                        .with_help("check the role name, or set roles_path in ansible.cfg"),
                    );
                }
                false
            }
        }
    }

    /// The validation task Ansible puts first in a role whose entry point has
    /// an argument spec (`meta/argument_specs.yml` or `argument_specs` in
    /// `meta/main.yml`).
    fn argument_spec_task(&mut self, path: &Path, entry: &str) -> Option<Task> {
        let meta = path.join("meta");
        let files = [
            meta.join("argument_specs.yml"),
            meta.join("argument_specs.yaml"),
            meta.join("main.yml"),
            meta.join("main.yaml"),
        ];
        let file = files.iter().find(|f| {
            self.loader.fs.is_file(f)
                && self
                    .loader
                    .yaml(f)
                    .doc()
                    .and_then(|d| d.get("argument_specs"))
                    .is_some()
        })?;
        let loaded = self.load(file);
        let (key, spec) = loaded.doc()?.get("argument_specs")?.get_entry(entry)?;
        let mut name = format!("Validating arguments against arg spec '{entry}'");
        if let Some(d) = spec.get("short_description").and_then(Node::scalar_text) {
            name.push_str(" - ");
            name.push_str(&d);
        }
        Some(Task::synthetic(
            name,
            "ansible.builtin.validate_argument_spec",
            key.span,
        ))
    }

    pub(super) fn role(&mut self, name: &str, path: &Path) -> Arc<Role> {
        if let Some(r) = self.roles.get(path) {
            return Arc::clone(r);
        }
        if let Some(r) = self.known_role(path) {
            self.roles.insert(path.to_path_buf(), Arc::clone(&r));
            return r;
        }
        // What reading the role reports is kept with it and replayed by every
        // builder that uses it: which play reads a role first is a matter of
        // thread timing, and a play's diagnostics may be thrown away.
        let outer_diags = std::mem::take(&mut self.diags);
        let outer_reported = std::mem::take(&mut self.reported);
        let defaults = self.role_vars_dir(
            &path.join("defaults"),
            &LayerKind::RoleDefaults { role: name.into() },
        );
        let vars = self.role_vars_dir(
            &path.join("vars"),
            &LayerKind::RoleVars { role: name.into() },
        );
        let mut dependencies = Vec::new();
        let mut allow_duplicates = false;
        if let Some(meta) = yaml_candidates(&path.join("meta"), "main")
            .into_iter()
            .find(|p| self.loader.fs.is_file(p))
        {
            let l = self.load(&meta);
            if let Some(doc) = l.doc() {
                allow_duplicates = doc
                    .get("allow_duplicates")
                    .and_then(Node::as_bool)
                    .unwrap_or(false);
                if let Some(deps) = doc.get("dependencies").and_then(Node::as_seq) {
                    for d in deps {
                        match role_entry(d, Origin::Role) {
                            Some(e) => dependencies.push(e),
                            None => self.push_diag(
                                Diagnostic::error(
                                    code::SHAPE,
                                    d.span,
                                    "a dependency needs `role:` or `name:`",
                                )
                                .with_help("write the dependency as `- role: name` or `- name`"),
                            ),
                        }
                    }
                }
            }
        }
        let role = Arc::new(Role {
            name: name.to_string(),
            path: path.to_path_buf(),
            defaults,
            vars,
            dependencies,
            allow_duplicates,
        });
        let diags = std::mem::replace(&mut self.diags, outer_diags);
        self.reported = outer_reported;
        for d in &diags {
            self.push_diag(d.clone());
        }
        self.roles.insert(path.to_path_buf(), Arc::clone(&role));
        self.share_role(path, &role, diags);
        role
    }

    /// `defaults/main` or `vars/main`: a file (`main.yml`, `main.yaml`, `main`)
    /// or a directory whose files are read in sorted order.
    fn role_vars_dir(&mut self, dir: &Path, kind: &LayerKind) -> Vec<Arc<VarLayer>> {
        let mut files = Vec::new();
        let main_dir = dir.join("main");
        // A main.yml file wins over a main/ directory beside it (as in Ansible).
        let main_file = yaml_candidates(dir, "main")
            .into_iter()
            .find(|p| self.loader.fs.is_file(p));
        if let Some(f) = main_file {
            files.push(f);
        } else if self.loader.fs.is_dir(&main_dir) {
            let mut found: Vec<PathBuf> = walkdir::WalkDir::new(&main_dir)
                .follow_links(true)
                .sort_by_file_name()
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file())
                .map(|e| e.path().to_path_buf())
                .filter(|p| {
                    p.extension()
                        .is_none_or(|e| e == "yml" || e == "yaml" || e == "json")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect();
            found.sort();
            files.extend(found);
        } else if let Some(f) = yaml_candidates(dir, "main")
            .into_iter()
            .find(|p| self.loader.fs.is_file(p))
        {
            files.push(f);
        }
        let mut layers = Vec::new();
        for f in files {
            let l = self.load(&f);
            if let Some(doc) = l.doc() {
                if doc.as_map().is_some() {
                    layers.push(Arc::new(VarLayer {
                        kind: kind.clone(),
                        node: doc.clone(),
                    }));
                } else if !doc.is_null() {
                    self.push_diag(Diagnostic::error(
                        code::SHAPE,
                        doc.span,
                        "a vars file must be a mapping",
                    )
                    .with_help("write the variables as `name: value` pairs at the top level of the file"));
                }
            }
        }
        layers
    }

    pub(super) fn run_role_at(
        &mut self,
        entry: &RoleEntry,
        path: &Path,
        ctx: &Ctx,
        state: &mut PlayState,
    ) {
        if state.full {
            return;
        }
        // Role dependencies can fan out without producing tasks: count runs too.
        state.role_runs += 1;
        if self.must_stop(state, entry.span, true) {
            return;
        }
        let key = self.loader.fs.canonical(path);
        self.probe_stack(&key, ctx);
        if on_stack(&ctx.stack, &key) {
            self.push_diag(
                Diagnostic::error(
                    code::INCLUDE_CYCLE,
                    entry.span,
                    format!("role dependency cycle: `{}` depends on itself", entry.name),
                )
                .with_help("remove the dependency that closes the cycle from meta/main.yml"),
            );
            return;
        }
        if ctx.stack.len() >= MAX_INCLUDE_DEPTH {
            return;
        }
        let role = self.role(&entry.name, path);
        let params_key = entry
            .params
            .as_ref()
            .map(|p| p.to_json().to_string())
            .unwrap_or_default();
        let run_key = format!(
            "{}|{}|{}",
            key.display(),
            entry.tasks_from.as_deref().unwrap_or("main"),
            params_key
        );
        let duplicate = !role.allow_duplicates && !ctx.dynamic && state.ran.contains(&run_key);
        state.ran.insert(run_key);
        // Role defaults and vars are visible play-wide (Ansible's default).
        for l in role.defaults.iter().chain(&role.vars) {
            if !state.layers.iter().any(|x| Arc::ptr_eq(x, l)) {
                state.layers.push(Arc::clone(l));
            }
        }
        let mut inner = ctx.clone();
        inner.duplicate |= duplicate;
        inner.stack.push(key);
        inner.conditions = extended(&inner.conditions, &entry.when);
        inner.tags = extended(&inner.tags, &entry.tags);
        inner.role_path = Some(Arc::from(path));
        let layers: Vec<Arc<VarLayer>> = [
            entry.params.as_ref(),
            entry.vars.as_ref().filter(|v| v.as_map().is_some()),
        ]
        .into_iter()
        .flatten()
        .map(|node| {
            Arc::new(VarLayer {
                kind: LayerKind::RoleParams {
                    role: entry.name.clone(),
                },
                node: node.clone(),
            })
        })
        .collect();
        inner.scopes = extended(&inner.scopes, &layers);
        // Dependencies run first, inside the role's conditions.
        let deps = role.dependencies.clone();
        for dep in &deps {
            let _ = self.run_role(dep, &inner, state, None);
        }
        inner.roles = extended(&inner.roles, std::slice::from_ref(&entry.name));
        let tasks_dir = path.join("tasks");
        let stem = entry.tasks_from.as_deref().unwrap_or("main");
        if let Some(t) = self.argument_spec_task(path, stem) {
            self.emit(Arc::new(t), &inner, Arc::clone(&inner.scopes), state, None);
        }
        let tasks_file = yaml_candidates(&tasks_dir, stem)
            .into_iter()
            .find(|p| self.loader.fs.is_file(p));
        match tasks_file {
            Some(f) => {
                self.tasks_file(&f, entry.span, &inner, state, false);
            }
            None if entry.tasks_from.is_some() => self.push_diag(Diagnostic::error(
                code::INCLUDE_NOT_FOUND,
                entry.span,
                format!("tasks_from `{stem}` not found in role `{}`", entry.name),
            )
            .with_help("tasks_from names a file in the role's tasks/ directory, with or without .yml; check the name")),
            None => {}
        }
        let hstem = entry.handlers_from.as_deref().unwrap_or("main");
        if let Some(h) = yaml_candidates(&path.join("handlers"), hstem)
            .into_iter()
            .find(|p| self.loader.fs.is_file(p))
        {
            let hctx = Ctx {
                section: Section::Handlers,
                ..inner.clone()
            };
            self.tasks_file(&h, entry.span, &hctx, state, false);
        }
    }
}

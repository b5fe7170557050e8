//! A reached task iteration seen through [`crate::effect::TaskView`]: how
//! effect derivation reads arguments, command lines, role files and
//! renders templates without knowing the analysis.

use super::Iteration;
use crate::ansible::project::TaskInstance;
use crate::vars::LookupOwned;
use std::sync::Arc;

/// One task instance in one iteration, for effect derivation.
pub struct IterView<'a, 's> {
    inst: &'a TaskInstance,
    it: &'a Iteration<'s>,
}

impl<'a, 's> IterView<'a, 's> {
    #[must_use]
    pub fn new(inst: &'a TaskInstance, it: &'a Iteration<'s>) -> Self {
        IterView { inst, it }
    }
}

impl crate::effect::TaskView for IterView<'_, '_> {
    fn module(&self) -> &str {
        &self.inst.task.module
    }

    fn arg(&self, key: &str) -> Option<&str> {
        self.it.arg(self.inst, key)
    }

    fn arg_value(&self, key: &str) -> Option<serde_json::Value> {
        let node = self.inst.task.arg(key)?;
        match self.it.tv.value(node) {
            LookupOwned::Value(v) => Some(v),
            _ => Some(serde_json::Value::String(
                self.it.arg(self.inst, key)?.to_string(),
            )),
        }
    }

    fn arg_raw(&self, key: &str) -> Option<String> {
        self.inst.task.arg(key)?.scalar_text()
    }

    fn command(&self) -> Option<&str> {
        self.it.command(self.inst)
    }

    fn role_file(&self, sub: &str, src: &str) -> Option<Arc<str>> {
        super::read_role_file(self.inst, sub, src, self.it.fs)
    }

    fn render(&self, text: &str) -> Option<String> {
        match self.it.tv.render_text(text) {
            LookupOwned::Value(serde_json::Value::String(s)) => Some(s),
            _ => None,
        }
    }

    fn render_file(&self, text: &str) -> Option<crate::jinja::FileText> {
        let mut options = crate::jinja::FileOptions::default();
        for key in crate::jinja::FileOptions::TASK_ARGS {
            if let Some(v) = self.it.arg(self.inst, key) {
                options.set(key, v);
            }
        }
        let loader = RoleTemplates(self);
        Some(crate::jinja::render_file(
            text,
            &self.it.tv,
            &loader,
            &options,
        ))
    }

    fn unknown_reason(&self, text: &str) -> Option<String> {
        match crate::jinja::render(text, &self.it.tv) {
            crate::jinja::Rendered::Unknown(why) => Some(
                why.iter()
                    .map(crate::jinja::describe)
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            crate::jinja::Rendered::Value(_) => None,
        }
    }

    fn notify(&self) -> &[String] {
        &self.inst.task.notify
    }
}

/// The templates a template includes, imports or extends: from the role's
/// `templates/` (and the role's directory), as the template action's
/// search path has them.
struct RoleTemplates<'v, 'a, 's>(&'v IterView<'a, 's>);

impl crate::jinja::TemplateLoader for RoleTemplates<'_, '_, '_> {
    fn load(&self, name: &str) -> Option<Arc<str>> {
        super::read_role_file(self.0.inst, "templates", name, self.0.it.fs)
    }
}

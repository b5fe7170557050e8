//! PLACEHOLDER (being written on the effects-families branch).

use super::{Effect, TaskView};

pub(super) fn mount(_view: &dyn TaskView, _out: &mut Vec<Effect>) {}

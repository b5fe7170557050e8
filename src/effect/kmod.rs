//! PLACEHOLDER (being written on the effects-families branch).

use super::{Effect, TaskView};

pub(super) fn modprobe(_view: &dyn TaskView, _out: &mut Vec<Effect>) {}

//! Emitters: turn analysis results into text. One file per view.

pub mod tasks;
pub mod who_fixes;

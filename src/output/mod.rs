//! Emitters: turn analysis results into text. One file per view.

pub mod check;
pub mod findings;
pub mod html;
pub mod sysctl;
pub mod tasks;
pub mod who_fixes;

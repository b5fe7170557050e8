//! Node-preparation concerns: the catalog (data in `rules/`) and the
//! who-fixes analysis.

pub mod analyze;
pub mod catalog;
pub mod matching;
mod units;

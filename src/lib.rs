//! preflint: reads Ansible content the way Ansible does, without running it,
//! and tells who prepares each Kubernetes node concern.
#![forbid(unsafe_code)]

pub mod ansible;
pub mod baseline;
pub mod check;
pub mod cli;
pub mod concern;
pub mod config;
pub mod diagnostic;
pub mod discover;
pub mod glob;
pub mod jinja;
pub mod load;
pub mod output;
pub mod progress;
pub mod rule;
pub mod run;
pub mod source;
pub mod sysctl;
pub mod vars;
pub mod yaml;

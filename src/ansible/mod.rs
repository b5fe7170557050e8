//! The Ansible model: what a tree means to Ansible, read statically.

pub mod config;
pub mod inventory;
pub mod module_args;
pub mod modules;
pub mod project;
pub mod task;

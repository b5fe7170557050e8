//! preflint: reads Ansible content the way Ansible does, without running it,
//! and tells who prepares each Kubernetes node concern.

/// The crate's hash maps and sets: foldhash, randomly seeded per process,
/// instead of SipHash, which resists chosen keys (a run does not need it)
/// at a cost paid on every lookup. Output never depends on their order.
pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// See [`HashMap`].
pub type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;

pub mod ansible;
pub mod baseline;
pub mod check;
pub mod concern;
pub mod config;
pub mod diagnostic;
pub mod discover;
pub mod effect;
pub mod glob;
pub mod internal_error;
pub mod jinja;
pub mod load;
pub mod loaded;
pub mod output;
pub mod progress;
pub mod reach;
pub mod rule;
pub mod run;
pub mod settings;
pub mod source;
pub mod sysctl;
pub mod text_regex;
pub mod vars;
pub mod yaml;

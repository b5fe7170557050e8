//! Arbitrary bytes as playbook: see `preflint_fuzz::Target::Playbook`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use preflint_fuzz::{Harness, Target};
use std::sync::LazyLock;

static HARNESS: LazyLock<Harness> = LazyLock::new(|| Harness::new(Target::Playbook));

fuzz_target!(|data: &[u8]| HARNESS.run(data));

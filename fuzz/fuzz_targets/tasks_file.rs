//! Arbitrary bytes as tasks file: see `preflint_fuzz::Target::TasksFile`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use preflint_fuzz::{Harness, Target};
use std::sync::LazyLock;

static HARNESS: LazyLock<Harness> = LazyLock::new(|| Harness::new(Target::TasksFile));

fuzz_target!(|data: &[u8]| HARNESS.run(data));

//! Arbitrary bytes as vars file: see `preflint_fuzz::Target::VarsFile`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use preflint_fuzz::{Harness, Target};
use std::sync::LazyLock;

static HARNESS: LazyLock<Harness> = LazyLock::new(|| Harness::new(Target::VarsFile));

fuzz_target!(|data: &[u8]| HARNESS.run(data));

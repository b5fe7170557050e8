//! Arbitrary bytes as catalog: see `preflint_fuzz::Target::Catalog`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use preflint_fuzz::{Harness, Target};
use std::sync::LazyLock;

static HARNESS: LazyLock<Harness> = LazyLock::new(|| Harness::new(Target::Catalog));

fuzz_target!(|data: &[u8]| HARNESS.run(data));

use clap::Parser;
use std::process::ExitCode;

/// mimalloc instead of the system allocator: preflint allocates many small
/// objects from two threads, where glibc's arenas grow by `mprotect` calls
/// (~9,000 per run on kubespray). The parse floor uses the same allocator.
/// Its v2 line (the `v2` feature in Cargo.toml): with v3, kubespray's whole
/// tree peaked at 79 MB resident against 63 MB with v2, and the kernel's
/// zeroing of fresh pages is a large part of a run on a VM.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = preflint::cli::Cli::parse();
    // The whole run on the pool's workers: the main thread only waits, so
    // every allocation comes from the workers' heaps, not from a third heap
    // with pages of its own (kubespray's whole tree: ~1 fewer 2 MiB page
    // faulted in per `check`). The stacks are the main thread's size, as
    // the serial steps ran there.
    let result = match rayon::ThreadPoolBuilder::new().stack_size(8 << 20).build() {
        Ok(pool) => pool.install(move || preflint::run::run(cli)),
        Err(_) => preflint::run::run(cli),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("preflint: error: {e}");
            ExitCode::from(2)
        }
    }
}

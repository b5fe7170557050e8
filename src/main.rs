use clap::Parser;
use std::process::ExitCode;

mod cli;

/// mimalloc instead of the system allocator: preflint allocates many small
/// objects from the pool's threads, where glibc's arenas grow by `mprotect`
/// calls one small step at a time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // The whole run on the pool's workers, the parse of the arguments
    // included: the main thread only builds the pool and waits, so nearly
    // every allocation comes from the workers' heaps, not from a third heap
    // with pages of its own (measured in 9ee9d7c). The stacks are the main
    // thread's size, as the serial steps ran there.
    let run = || cli::run(cli::Cli::parse());
    let result = match rayon::ThreadPoolBuilder::new().stack_size(8 << 20).build() {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("preflint: error: {e}");
            ExitCode::from(2)
        }
    }
}

//! A progress indicator on stderr for runs that take more than about a
//! second, on terminals only: never when stderr is redirected, in CI output
//! formats, or with `--quiet`.

use crate::settings::Ui;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Shows a spinner after a delay until dropped.
pub struct Progress {
    done: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

/// How long a run may take before the indicator appears.
pub const DELAY: Duration = Duration::from_secs(1);

impl Progress {
    /// Starts the indicator when `wanted` (a human format) and stderr is a
    /// terminal and `ui` is not quiet.
    #[must_use]
    pub fn start(message: &'static str, wanted: bool, ui: Ui) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let enabled = wanted && !ui.quiet && std::io::stderr().is_terminal();
        if !enabled {
            return Progress { done, handle: None };
        }
        let flag = Arc::clone(&done);
        let handle = std::thread::spawn(move || {
            let start = Instant::now();
            while start.elapsed() < DELAY {
                if flag.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_message(message);
            while !flag.load(Ordering::Relaxed) {
                bar.tick();
                std::thread::sleep(Duration::from_millis(80));
            }
            bar.finish_and_clear();
        });
        Progress {
            done,
            handle: Some(handle),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// CPU time of every thread of the process so far (Linux: the first field
/// of each thread's `schedstat`, nanoseconds on a CPU), in milliseconds: a
/// phase whose CPU time grows slower than twice its wall time on two cores
/// leaves a core idle.
fn cpu_ms() -> Option<f64> {
    let mut ns: u64 = 0;
    for t in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let stat = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
        ns += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(ns as f64 / 1e6)
}

/// Phase timings for profiling: with `PREFLINT_TIMINGS=1` in the
/// environment, each call prints the milliseconds since the first call and
/// the phase that just ended to stderr. Costs one relaxed load otherwise.
pub fn phase(name: &str) {
    use std::sync::OnceLock;
    static START: OnceLock<Option<Instant>> = OnceLock::new();
    let start = START.get_or_init(|| {
        std::env::var_os("PREFLINT_TIMINGS")
            .is_some_and(|v| v != "0")
            .then(Instant::now)
    });
    if let Some(t) = start {
        // Resident memory too: pages first touched are zeroed by the
        // kernel, a cost that grows with the footprint.
        let rss_mib = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map_or(String::new(), |pages| {
                format!("  {:>6.1} MiB", pages * 4096.0 / 1_048_576.0)
            });
        eprintln!(
            "preflint: timing: {:>8.1} ms{rss_mib}{}  {name}",
            t.elapsed().as_secs_f64() * 1000.0,
            cpu_ms().map_or(String::new(), |ms| format!("  cpu {ms:>7.1} ms"))
        );
    }
}

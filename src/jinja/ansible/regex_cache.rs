//! Compiled regular expressions kept per thread.
//!
//! Speed machinery only: `select('match', ...)` compiles the same pattern
//! once per item, so the last few patterns compiled are kept, by their full
//! text (flags included); a pattern is compiled the same whether it is kept
//! or not.

use super::super::Fail;
use regex::Regex;
use std::cell::RefCell;

/// Most patterns kept per thread.
const KEPT: usize = 32;

thread_local! {
    static CACHE: RefCell<Vec<(String, Regex)>> = const { RefCell::new(Vec::new()) };
}

/// The regex of `full`, kept from an earlier call on this thread or
/// compiled with `compile` (and kept, the oldest dropped past [`KEPT`]).
pub(super) fn compiled(
    full: String,
    compile: impl FnOnce(&str) -> Result<Regex, Fail>,
) -> Result<Regex, Fail> {
    if let Some(re) = CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(p, _)| *p == full)
            .map(|(_, re)| re.clone())
    }) {
        return Ok(re);
    }
    let re = compile(&full)?;
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= KEPT {
            c.remove(0);
        }
        c.push((full, re.clone()));
    });
    Ok(re)
}

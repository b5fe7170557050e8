//! What keeps every evaluation finite: a screen of the source before it is
//! parsed (its length, bracket depth and operator count), and, per thread,
//! the nesting of evaluations inside evaluations and the fuel they spend
//! together. A bound hit makes the answer unknown, never wrong.

use super::{MAX_BRACKET_DEPTH, MAX_NESTING, MAX_OPERATORS, MAX_SOURCE_LEN, TOTAL_FUEL};
use std::cell::Cell;

/// The bytes the scan of [`parseable`] stops at outside the delimiters.
pub(super) static OUTSIDE_STOPS: [bool; 256] = {
    let mut t = [false; 256];
    let stops = b"{}%'\"([)]";
    let mut i = 0;
    while i < stops.len() {
        t[stops[i] as usize] = true;
        i += 1;
    }
    t
};

/// Is the source small and shallow enough to hand to the parser?
pub(super) fn parseable(src: &str) -> bool {
    if src.len() > MAX_SOURCE_LEN {
        return false;
    }
    // Most sources are short: each byte adds at most one operator (a
    // keyword is two bytes or more), and the brackets counted below bound
    // the depth, so a short source with few brackets passes the scan.
    let bytes = src.as_bytes();
    if bytes.len() <= MAX_OPERATORS
        && bytes
            .iter()
            .filter(|&&c| matches!(c, b'(' | b'[' | b'{'))
            .count()
            <= MAX_BRACKET_DEPTH
    {
        return true;
    }
    // Brackets inside string literals are skipped; template text outside
    // `{{ }}` is counted too, which only errs on the safe side. Every
    // character looked at is ASCII, so bytes are scanned (the bytes of a
    // multi-byte character never equal an ASCII one).
    let (mut depth, mut quote, mut escaped) = (0usize, None, false);
    let (mut operators, mut word_start) = (0usize, None::<usize>);
    // In a template only the code between delimiters is parsed as expressions.
    let templated = src.contains("{{") || src.contains("{%");
    let mut inside = !templated;
    let mut prev = 0u8;
    let mut i = 0;
    while i < bytes.len() {
        // Runs of bytes that change nothing but `prev` are skipped: outside
        // the delimiters all but quotes, brackets and delimiter bytes; in a
        // string literal all but its quote and backslashes. Most of a
        // template file is such text.
        let skip = if quote.is_none() && !inside {
            bytes[i..]
                .iter()
                .position(|&b| OUTSIDE_STOPS[usize::from(b)])
        } else if let Some(q) = quote
            && !escaped
        {
            bytes[i..].iter().position(|&b| b == b'\\' || b == q)
        } else {
            Some(0)
        };
        let next = skip.map_or(bytes.len(), |n| i + n);
        if next > i {
            prev = bytes[next - 1];
            word_start = None;
            i = next;
            if i == bytes.len() {
                break;
            }
        }
        let (at, c) = (i, bytes[i]);
        i += 1;
        if templated && quote.is_none() {
            if prev == b'{' && (c == b'{' || c == b'%') {
                inside = true;
            } else if (prev == b'}' || prev == b'%') && c == b'}' {
                inside = false;
            }
        }
        prev = c;
        if quote.is_none() && inside {
            if c.is_ascii_alphanumeric() || c == b'_' {
                word_start.get_or_insert(at);
            } else {
                if let Some(start) = word_start.take()
                    && matches!(
                        &bytes[start..at],
                        b"and" | b"or" | b"not" | b"in" | b"is" | b"if"
                    )
                {
                    operators += 1;
                }
                if matches!(
                    c,
                    b'|' | b'~' | b'+' | b'-' | b'*' | b'/' | b'<' | b'>' | b'=' | b'!'
                ) {
                    operators += 1;
                }
            }
            if operators > MAX_OPERATORS {
                return false;
            }
        } else {
            // The word ends where the code does (a quote or a delimiter).
            word_start = None;
        }
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == b'\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_BRACKET_DEPTH {
                        return false;
                    }
                }
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    true
}

thread_local! {
    /// How deep the current thread is in nested evaluations.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// Fuel spent by the current top-level call and everything nested in it.
    static SPENT: Cell<u64> = const { Cell::new(0) };
}

/// Marks one level of evaluation nesting on this thread.
pub(super) struct Nesting;

impl Nesting {
    pub(super) fn enter() -> Option<Nesting> {
        let depth = DEPTH.with(Cell::get);
        if depth >= MAX_NESTING {
            return None;
        }
        if depth == 0 {
            SPENT.with(|s| s.set(0));
        }
        DEPTH.with(|d| d.set(depth + 1));
        Some(Nesting)
    }
}

impl Drop for Nesting {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Adds fuel spent by one evaluation to the thread's total; `false` once
/// [`TOTAL_FUEL`] is exceeded.
pub(super) fn spend(fuel: u64) -> bool {
    SPENT.with(|s| {
        let total = s.get().saturating_add(fuel);
        s.set(total);
        total <= TOTAL_FUEL
    })
}

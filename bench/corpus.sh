#!/usr/bin/env bash
# How much of real public roles preflint reads: one row per repository of
# bench/corpus.txt (tasks reached, loops and arguments evaluated, templates
# rendered, raw-Jinja leaks, unresolved includes, sysctls and modules found).
#
# Usage: bench/corpus.sh [--only owner/name]... [--details] CORPUS_DIR
#
# CORPUS_DIR holds one checkout per line of corpus.txt, named owner+name
# (owner+name@tag for a tagged entry). Nothing is fetched: the script lists
# the `git clone` commands for the repositories it does not find there.
# preflint is $PREFLINT when set, else target/release/preflint of this crate
# (built with `cargo build --release` when absent). See README.md, "Corpus".
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
crate="$(dirname "$here")"

if ! command -v python3 >/dev/null 2>&1; then
    echo "corpus.sh: python3 is required (the driver is bench/corpus.py, stdlib only)" >&2
    exit 1
fi
if [ $# -eq 0 ]; then
    sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi

preflint="${PREFLINT:-$crate/target/release/preflint}"
if [ ! -x "$preflint" ]; then
    if [ -n "${PREFLINT:-}" ]; then
        echo "corpus.sh: PREFLINT=$PREFLINT is not an executable" >&2
        exit 1
    fi
    echo "corpus.sh: building $preflint (cargo build --release)" >&2
    (cd "$crate" && cargo build --release --quiet)
fi

exec python3 "$here/corpus.py" --preflint "$preflint" "$@"

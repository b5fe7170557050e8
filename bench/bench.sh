#!/usr/bin/env bash
# Benchmark for preflint: prints figures, never asserts timings.
#
# Usage: bench/bench.sh [--runs N] [--fast-runs N] [--baseline-runs N] [--no-baseline] [--scale]
#                       [--copies 1,10,100] [--keep-temp] TREE [PLAYBOOK]
#
# Builds preflint in release mode (the crate is the parent of this script's
# directory), then measures preflint, the floors and (unless --no-baseline)
# ansible-lint / yamllint / ansible-playbook --syntax-check, and prints one
# table plus whether each project target is met in this run. See README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! command -v python3 >/dev/null 2>&1; then
    echo "bench.sh: python3 is required (the driver is bench/bench.py, stdlib only)" >&2
    exit 1
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "bench.sh: cargo is required to build preflint" >&2
    exit 1
fi

exec python3 "$here/bench.py" "$@"

#!/usr/bin/env bash
# Writes expected/<tree>/<playbook>.json for every case of cases.txt: what
# ansible-core computes (evaluate.py), which tests/eval_oracle.rs compares
# preflint with when no Ansible is installed. Run after changing a fixture.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
py="${PREFLINT_PYTHON:-/work/venv/bin/python}"
while IFS=$'\t' read -r tree playbook inventory; do
  case "$tree" in ''|'#'*) continue ;; esac
  out="$here/expected/$tree/$playbook.json"
  mkdir -p "$(dirname "$out")"
  args=()
  [ -n "${inventory:-}" ] && args=(-i "$inventory")
  "$py" "$here/evaluate.py" "$repo/test-repos/$tree" "$playbook" "${args[@]}" > "$out" 2>/dev/null
  echo "$out"
done < "$here/cases.txt"

#!/usr/bin/env bash
# The whole test suite: unit tests, fixture-tree tests and the differential
# tests against real Ansible. On first use it installs the oracle (pinned
# ansible-core, the ansible collections package, PyYAML) from the package
# registry into target/oracle-venv; set PREFLINT_PYTHON to use another Python.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PREFLINT_PYTHON:-}" ]; then
  VENV="$PWD/target/oracle-venv"
  if ! "$VENV/bin/python" -c 'import ansible, yaml' 2>/dev/null; then
    echo "installing the Ansible oracle into $VENV (first run only)..." >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check \
      'ansible-core==2.19.14' 'ansible==12.3.0' 'PyYAML==6.0.4'
  fi
  "$VENV/bin/python" -c 'import jsonschema, rfc3986_validator' 2>/dev/null || "$VENV/bin/pip" install --quiet --disable-pip-version-check -r tests/sarif/requirements.txt
  export PREFLINT_PYTHON="$VENV/bin/python"
fi
PATH="$(dirname "$PREFLINT_PYTHON"):$PATH"
export PATH
cargo test --all-targets

#!/usr/bin/env bash
# The whole test suite: unit tests, fixture-tree tests and the differential
# tests against real tools. On first use it installs what the tests need from
# the package registries: the Ansible oracle (pinned ansible-core, the ansible
# collections package, PyYAML), pre-commit and the SARIF schema validator into
# target/oracle-venv (set PREFLINT_PYTHON to use another Python), and
# Debian's chromium for the HTML report test.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PREFLINT_PYTHON:-}" ]; then
  VENV="$PWD/target/oracle-venv"
  if ! "$VENV/bin/python" -c 'import ansible, yaml, pre_commit' 2>/dev/null; then
    echo "installing the test tools into $VENV (first run only)..." >&2
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check \
      'ansible-core==2.19.14' 'ansible==12.3.0' 'PyYAML==6.0.4' \
      'pre-commit==4.7.0' 'cfgv==3.5.0' 'identify==2.6.20' 'nodeenv==1.12.0' \
      'virtualenv==21.15.11' 'distlib==0.4.4' 'filelock==4.3.1' 'platformdirs==4.14.8'
  fi
  "$VENV/bin/python" -c 'import jsonschema, rfc3986_validator' 2>/dev/null || "$VENV/bin/pip" install --quiet --disable-pip-version-check -r tests/sarif/requirements.txt
  export PREFLINT_PYTHON="$VENV/bin/python"
fi
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ]; then
  echo "installing chromium for the HTML report test..." >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi
PATH="$(dirname "$PREFLINT_PYTHON"):$PATH"
export PATH
cargo test --all-targets

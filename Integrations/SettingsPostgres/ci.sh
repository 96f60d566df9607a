#!/usr/bin/env bash
# CI for the SettingsPostgres integration package (run from anywhere, as root: the test server runs
# PostgreSQL as the postgres user). Builds with zero warnings, runs the integration tests against a
# throwaway PostgreSQL from test-server.sh, then the sync fault script (small counts) when present.
#   SHARED_DIR=/path/to/shared bash Integrations/SettingsPostgres/ci.sh
set -euo pipefail
PKG=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$PKG/../.." && pwd)
SHARED=${SHARED_DIR:-$REPO/../shared}
SERVER="$SHARED/sync/test-server.sh"
[ -f "$SERVER" ] || { echo "ci.sh: no $SERVER (set SHARED_DIR)" >&2; exit 2; }
cd "$PKG"
echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors
BIN=$(swift build --show-bin-path)
echo "== integration tests against PostgreSQL"
bash "$SERVER" swift test --skip-build
if [ -f "$REPO/Tools/sync-fault-tests.py" ]; then
  echo "== sync fault tests (small counts)"
  bash "$SERVER" python3 "$REPO/Tools/sync-fault-tests.py" all --small --bin "$BIN"
fi
echo "== SettingsPostgres CI passed"

#!/usr/bin/env bash
# CI for the SettingsPostgres integration package (run from anywhere, as root on a fresh machine).
# Installs PostgreSQL (apt-get install -y postgresql) when missing, builds with zero warnings, then
# against a throwaway server it starts itself (Scripts/test-server.sh: provisioned with
# settings-sync-admin, removed afterwards): the integration tests, the admin tool's own check, and
# the sync fault script at small counts.
#   bash Integrations/SettingsPostgres/ci.sh
set -euo pipefail
PKG=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$PKG/../.." && pwd)
cd "$PKG"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "== install PostgreSQL"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi
echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors
BIN=$(swift build --show-bin-path)
export SETTINGS_SYNC_ADMIN_BIN="$BIN/settings-sync-admin"
echo "== integration tests, admin check and sync fault tests (small counts) against a throwaway PostgreSQL"
bash Scripts/test-server.sh bash -c '
  set -euo pipefail
  swift test --skip-build
  # The race of a user removed under install, alone (beside other tests installs may not run it).
  SETTINGS_SYNC_TEST_ALONE=1 swift test --skip-build --filter installSucceedsWhenASyncUserIsRemovedUnderIt
  "$SETTINGS_SYNC_ADMIN_BIN" check
  python3 "$0/Tools/sync-fault-tests.py" all --small --bin "$1"
' "$REPO" "$BIN"
echo "== SettingsPostgres CI passed"

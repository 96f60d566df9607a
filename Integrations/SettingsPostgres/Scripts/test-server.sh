#!/usr/bin/env bash
# Starts a throwaway PostgreSQL on 127.0.0.1 for tests and demos, provisions it for sync, runs a
# command against it, and removes it.
#   bash Scripts/test-server.sh COMMAND [ARGS...]        (from Integrations/SettingsPostgres, as root)
# Installs PostgreSQL from the distribution's packages when missing (apt-get; about 15 s). The server
# runs as the postgres user, fsync off (test data only), password (SCRAM) authentication over TCP.
# Provisioning: `settings-sync-admin install`, then `add-user settings` (password "settings"), with
# the admin tool from $SETTINGS_SYNC_ADMIN_BIN or built here (`swift build --product settings-sync-admin`).
# The command sees:
#   SETTINGS_PG_URL            postgres://settings:settings@127.0.0.1:PORT/settings (a sync user)
#   SETTINGS_PG_HOST/PORT/USER/PASSWORD/DATABASE   the same, in parts
#   SETTINGS_SYNC_ADMIN_URL, SETTINGS_SYNC_ADMIN_PASSWORD   the superuser postgres (for settings-sync-admin)
#   PGDATA_DIR, PGBIN          the cluster's data directory and binaries (restarts: pg_ctl as postgres)
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: test-server.sh COMMAND [ARGS...]" >&2; exit 2; }
PKG=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
export SETTINGS_PG_PORT=${SETTINGS_PG_PORT:-55432}
WORK=$(mktemp -d -t settings-pg.XXXXXX)
chown postgres:postgres "$WORK"
export PGDATA_DIR="$WORK/data"
ADMIN_PASSWORD=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
pg() { (cd / && runuser -u postgres -- "$@"); }   # postgres refuses to run as root
stop() { pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -m immediate -w stop >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap stop EXIT
(umask 077; printf '%s\n' "$ADMIN_PASSWORD" > "$WORK/pwfile"); chown postgres "$WORK/pwfile"
pg "$PGBIN/initdb" -D "$PGDATA_DIR" -U postgres --pwfile="$WORK/pwfile" \
   --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
rm -f "$WORK/pwfile"
pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -l "$WORK/server.log" -w -t 30 \
   -o "-c listen_addresses=127.0.0.1 -p $SETTINGS_PG_PORT -k $WORK -c fsync=off" start >/dev/null
pg "$PGBIN/psql" -h "$WORK" -p "$SETTINGS_PG_PORT" -U postgres -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE settings"
export SETTINGS_SYNC_ADMIN_URL="postgres://postgres@127.0.0.1:$SETTINGS_PG_PORT/settings"
export SETTINGS_SYNC_ADMIN_PASSWORD="$ADMIN_PASSWORD"
ADMIN=${SETTINGS_SYNC_ADMIN_BIN:-}
if [ -z "$ADMIN" ]; then
  swift build --package-path "$PKG" --product settings-sync-admin >&2
  ADMIN="$(swift build --package-path "$PKG" --show-bin-path)/settings-sync-admin"
fi
"$ADMIN" install >&2
echo settings | "$ADMIN" add-user settings >&2
export SETTINGS_PG_HOST=127.0.0.1 SETTINGS_PG_USER=settings SETTINGS_PG_PASSWORD=settings SETTINGS_PG_DATABASE=settings
export SETTINGS_PG_URL="postgres://settings:settings@127.0.0.1:$SETTINGS_PG_PORT/settings?sslmode=disable"
export PGBIN
echo "test-server: PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$SETTINGS_PG_PORT, provisioned for sync" >&2
"$@"

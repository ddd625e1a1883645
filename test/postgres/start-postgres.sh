#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the database tests, without Docker,
# and prints the environment variable that makes @backstage/backend-test-utils'
# TestDatabases use it:
#
#   eval "$(bash test/postgres/start-postgres.sh)"
#
# prints (for PostgreSQL 15, what Debian bookworm ships):
#
#   export BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING=postgresql://postgres:postgres@127.0.0.1:55432
#
# Idempotent: a server this script already started is reused. Installs the
# `postgresql` apt package first when no server binaries exist (needs root).
# Only the export line goes to stdout; progress goes to stderr.
#
# Settings (environment):
#   PVC_PRUNER_PG_PORT   first port to try (default 55432; the next free one is used)
#   PVC_PRUNER_PG_DIR    where the cluster lives (default ${TMPDIR:-/tmp}/pvc-pruner-postgres)
#
# Stop it with: bash test/postgres/start-postgres.sh --stop
set -euo pipefail

PORT=${PVC_PRUNER_PG_PORT:-55432}
BASE=${PVC_PRUNER_PG_DIR:-${TMPDIR:-/tmp}/pvc-pruner-postgres}
DATA="$BASE/data"
LOG="$BASE/server.log"
PASSWORD=postgres

log() { echo "start-postgres: $*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

find_bindir() {
  local postgres
  # Highest installed major version first.
  postgres=$(ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$postgres" ] && command -v pg_config >/dev/null 2>&1; then
    local dir
    dir=$(pg_config --bindir 2>/dev/null || true)
    [ -x "$dir/postgres" ] && postgres="$dir/postgres"
  fi
  if [ -z "$postgres" ] && command -v postgres >/dev/null 2>&1; then
    postgres=$(command -v postgres)
  fi
  [ -n "$postgres" ] && dirname "$postgres"
}

# Runs a command as the user that owns the cluster: root may not run postgres.
if [ "$(id -u)" -eq 0 ]; then
  OWNER=postgres
  as_owner() {
    if command -v runuser >/dev/null 2>&1; then
      runuser -u "$OWNER" -- "$@"
    else
      su "$OWNER" -s /bin/sh -c "$(printf '%q ' "$@")"
    fi
  }
else
  OWNER=$(id -un)
  as_owner() { "$@"; }
fi

port_in_use() {
  # bash's /dev/tcp: connecting succeeds only if something listens.
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

running_port() {
  # postmaster.pid line 1 is the pid, line 4 the port. A postmaster killed
  # with SIGKILL can linger as a zombie where nothing reaps orphans (a
  # container's PID 1), and pg_ctl status would call it running: check that
  # the process is alive and that its port answers.
  [ -f "$DATA/postmaster.pid" ] || return 1
  local pid port state
  pid=$(sed -n 1p "$DATA/postmaster.pid")
  port=$(sed -n 4p "$DATA/postmaster.pid")
  [ -n "$pid" ] && [ -n "$port" ] && [ -r "/proc/$pid/status" ] || return 1
  state=$(awk '/^State:/ { print $2 }' "/proc/$pid/status")
  [ "$state" != Z ] || return 1
  port_in_use "$port" || return 1
  echo "$port"
}

BINDIR=$(find_bindir || true)

if [ "${1:-}" = "--stop" ]; then
  if [ -n "$BINDIR" ] && [ -f "$DATA/postmaster.pid" ]; then
    as_owner "$BINDIR/pg_ctl" -D "$DATA" -m fast -w stop >&2 || true
  fi
  log "stopped (data left in $BASE; remove it to start afresh)"
  exit 0
fi

if [ -z "$BINDIR" ]; then
  [ "$(id -u)" -eq 0 ] || die "no PostgreSQL server binaries found, and installing them needs root (apt-get install postgresql)"
  command -v apt-get >/dev/null 2>&1 || die "no PostgreSQL server binaries found and no apt-get to install them"
  log "installing postgresql with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends postgresql >&2
  BINDIR=$(find_bindir || true)
  [ -n "$BINDIR" ] || die "apt-get installed postgresql but no server binaries were found under /usr/lib/postgresql"
fi

if [ "$OWNER" = postgres ] && ! id postgres >/dev/null 2>&1; then
  die "there is no 'postgres' user to run the server as (root may not run it)"
fi

MAJOR=$("$BINDIR/postgres" --version | sed -E 's/^[^0-9]*([0-9]+).*/\1/')
case "$MAJOR" in
  '' | *[!0-9]*) die "could not tell the PostgreSQL version from: $("$BINDIR/postgres" --version)" ;;
esac
log "using PostgreSQL $MAJOR from $BINDIR"

mkdir -p "$BASE"
chown "$OWNER" "$BASE" 2>/dev/null || true
chmod 700 "$BASE"

if [ -f "$DATA/PG_VERSION" ] && [ "$(cat "$DATA/PG_VERSION")" != "$MAJOR" ]; then
  log "the cluster in $DATA is from PostgreSQL $(cat "$DATA/PG_VERSION"); making a new one"
  as_owner "$BINDIR/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$DATA"
fi

if ! [ -f "$DATA/PG_VERSION" ]; then
  log "creating a throwaway cluster in $DATA"
  rm -rf "$DATA"
  pwfile="$BASE/pwfile"
  printf '%s\n' "$PASSWORD" >"$pwfile"
  chown "$OWNER" "$pwfile" 2>/dev/null || true
  chmod 600 "$pwfile"
  # Password login over TCP (what the tests use); trust on the private socket.
  as_owner "$BINDIR/initdb" -D "$DATA" -U postgres --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --no-locale >"$BASE/initdb.log" 2>&1 ||
    {
      cat "$BASE/initdb.log" >&2
      rm -f "$pwfile"
      die "initdb failed"
    }
  rm -f "$pwfile"
fi

pid_alive() {
  [ -n "$1" ] && [ -r "/proc/$1/status" ] &&
    [ "$(awk '/^State:/ { print $2 }' "/proc/$1/status")" != Z ]
}

# A server that is starting or dying: give it a moment to settle.
if [ -f "$DATA/postmaster.pid" ] && ! running_port >/dev/null; then
  for _ in $(seq 1 30); do
    running_port >/dev/null && break
    pid_alive "$(sed -n 1p "$DATA/postmaster.pid" 2>/dev/null)" || break
    sleep 0.5
  done
fi

if port=$(running_port) && [ -n "$port" ]; then
  log "already running on port $port"
  PORT=$port
else
  if [ -f "$DATA/postmaster.pid" ] && pid_alive "$(sed -n 1p "$DATA/postmaster.pid")"; then
    die "a server (pid $(sed -n 1p "$DATA/postmaster.pid")) holds $DATA but does not answer; stop it first"
  fi
  # Lock files left by a killed server would stop the new one from starting.
  rm -f "$DATA/postmaster.pid" "$DATA"/.s.PGSQL.*.lock
  tries=0
  while port_in_use "$PORT"; do
    log "port $PORT is taken; trying $((PORT + 1))"
    PORT=$((PORT + 1))
    tries=$((tries + 1))
    [ "$tries" -lt 50 ] || die "no free port found"
  done
  log "starting on 127.0.0.1:$PORT (log: $LOG)"
  # Durability is pointless for a throwaway test server; speed is not.
  # TestDatabases opens a pool per test database, so allow many connections.
  if ! as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
    -o "-p $PORT -k $DATA -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >&2; then
    tail -n 30 "$LOG" >&2 || true
    die "the server did not start"
  fi
fi

# Check the password login the tests will make.
if ! PGPASSWORD=$PASSWORD "$BINDIR/psql" -X -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tAc 'select 1' >/dev/null 2>&1; then
  if [ -x "$BINDIR/psql" ]; then
    die "the server runs on port $PORT but postgres/$PASSWORD cannot log in over TCP"
  fi
fi
log "ready"

echo "export BACKSTAGE_TEST_DATABASE_POSTGRES${MAJOR}_CONNECTION_STRING=postgresql://postgres:${PASSWORD}@127.0.0.1:${PORT}"

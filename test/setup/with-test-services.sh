#!/usr/bin/env bash
# Makes sure the services a test command needs are there, then runs it:
#
#   bash test/setup/with-test-services.sh postgres chromium -- npm run -s test:all
#
#   postgres  a PostgreSQL server for the job-store tests and the campaign:
#             the one BACKSTAGE_TEST_DATABASE_POSTGRES<N>_CONNECTION_STRING names,
#             or else one started by test/postgres/start-postgres.sh (which
#             installs the postgresql apt package first when it runs as root)
#   chromium  the browser of the e2e test, ${CHROMIUM_PATH:-/usr/bin/chromium}
#             (installed with apt-get when it is missing and this runs as root)
#
# When a service can't be had, it prints one line saying which command to run
# and exits 1 before the command starts. `npm test` and `npm run campaign`
# run through this script.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

needs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  needs+=("$1")
  shift
done
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || {
  echo "usage: $0 [postgres] [chromium] -- COMMAND..." >&2
  exit 2
}

LOG_DIR=${TMPDIR:-/tmp}/pvc-pruner-setup
mkdir -p "$LOG_DIR"

# stop WHAT COMMAND: the one line a user sees when a service is missing.
stop() {
  echo "Cannot run the tests: $1 Run \`$2\`, then try again." >&2
  exit 1
}

# How a user here would run apt-get.
APT_GET=apt-get
[ "$(id -u)" -eq 0 ] || APT_GET="sudo apt-get"

can_apt_install() {
  [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1
}

# The connection string of a PostgreSQL server the caller named, if any.
named_postgres() {
  env | sed -nE 's/^BACKSTAGE_TEST_DATABASE_POSTGRES[0-9]+_CONNECTION_STRING=(.*)$/\1/p' | head -n 1
}

# host:port of a postgresql:// URL (defaults as libpq's).
host_port_of() {
  local rest=${1#*://}
  rest=${rest#*@}
  rest=${rest%%/*}
  rest=${rest%%\?*}
  local host=${rest%:*} port=5432
  [ "$rest" != "$host" ] && port=${rest##*:}
  echo "${host:-127.0.0.1} $port"
}

answers() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

ensure_postgres() {
  local url
  url=$(named_postgres)
  if [ -n "$url" ]; then
    local host port
    read -r host port < <(host_port_of "$url")
    answers "$host" "$port" ||
      stop "nothing answers at $host:$port, the PostgreSQL server that BACKSTAGE_TEST_DATABASE_POSTGRES*_CONNECTION_STRING names." \
        "unset BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING"
    return
  fi
  local log="$LOG_DIR/start-postgres.log" env_line
  if ! env_line=$(bash test/postgres/start-postgres.sh 2>"$log"); then
    local reason
    reason=$(sed -n 's/^start-postgres: ERROR: //p' "$log" | tail -n 1)
    if ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null 2>&1; then
      stop "PostgreSQL did not start (${reason:-see $log})." "bash test/postgres/start-postgres.sh"
    elif command -v apt-get >/dev/null 2>&1; then
      stop "the tests need a PostgreSQL server and none is installed (${reason:-see $log})." "$APT_GET install -y postgresql"
    else
      stop "the tests need a PostgreSQL server and none is installed." \
        "export BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING=postgresql://USER:PASSWORD@HOST:PORT"
    fi
  fi
  eval "$env_line"
  echo "PostgreSQL: ${env_line#export }" >&2
}

ensure_chromium() {
  local chromium=${CHROMIUM_PATH:-/usr/bin/chromium}
  [ -x "$chromium" ] && return
  [ -n "${CHROMIUM_PATH:-}" ] &&
    stop "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable." "unset CHROMIUM_PATH"
  if can_apt_install; then
    local log="$LOG_DIR/apt-chromium.log"
    echo "Installing Chromium with apt-get (log: $log)…" >&2
    if DEBIAN_FRONTEND=noninteractive apt-get update -q >"$log" 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >>"$log" 2>&1 &&
      [ -x "$chromium" ]; then
      return
    fi
    stop "apt-get could not install Chromium (see $log)." "apt-get install -y chromium"
  fi
  if command -v apt-get >/dev/null 2>&1; then
    stop "the browser test needs Chromium at $chromium." "$APT_GET install -y chromium"
  fi
  stop "the browser test needs Chromium at $chromium." "export CHROMIUM_PATH=/path/to/chromium"
}

for need in "${needs[@]}"; do
  case "$need" in
    postgres) ensure_postgres ;;
    chromium) ensure_chromium ;;
    *)
      echo "$0: unknown service '$need'" >&2
      exit 2
      ;;
  esac
done

exec "$@"

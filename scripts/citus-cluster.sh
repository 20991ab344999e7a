#!/usr/bin/env bash
# A local Citus cluster for tests and benchmarks: one coordinator and N workers, each its own
# PostgreSQL 15 instance (Debian's pg_createcluster) with shared_preload_libraries = 'citus',
# trust auth on 127.0.0.1 and pgvector. Idempotent: instances that exist are reused (started if
# stopped), nodes already in the cluster are not added twice.
#
#   scripts/citus-cluster.sh up [COORDINATOR_PORT [WORKER_PORT...]]   default: 5433 5434 5435
#   scripts/citus-cluster.sh add-worker PORT [COORDINATOR_PORT]        one more worker, joined
#   scripts/citus-cluster.sh prepare DATABASE [COORDINATOR_PORT]       citus + vector in a database
#                                                                      of the coordinator, workers added
#   scripts/citus-cluster.sh spare PORT                                an instance joined to no database:
#                                                                      test/citus.test.ts adds it to its
#                                                                      own, moves a tenant there and stops it
#
# Needs root (it runs pg_createcluster and psql as postgres) and the citus and vector extensions
# installed for PostgreSQL 15. The database `postgres` of the coordinator is prepared by `up`.
set -euo pipefail

VERSION=15
cmd="${1:-up}"
shift || true

as_postgres() { if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi; }
psql_on() { # PORT DATABASE SQL...
  local port=$1 db=$2
  shift 2
  as_postgres psql -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -d "$db" -c 'SET client_min_messages = warning' "$@"
}
name_of() { echo "citus$1"; }

# Creates (once) and starts the instance on PORT.
instance() {
  local port=$1 name
  name=$(name_of "$port")
  if ! pg_lsclusters -h | awk '{print $2}' | grep -qx "$name"; then
    pg_createcluster "$VERSION" "$name" -p "$port" >/dev/null
    local conf="/etc/postgresql/$VERSION/$name"
    cat >>"$conf/postgresql.conf" <<EOF
shared_preload_libraries = 'citus'
listen_addresses = '127.0.0.1'
max_connections = 200
# A small machine runs several of these: keep each one's memory modest.
shared_buffers = 128MB
wal_level = logical
EOF
    echo "host all all 127.0.0.1/32 trust" >"$conf/pg_hba.conf.new"
    echo "local all all trust" >>"$conf/pg_hba.conf.new"
    mv "$conf/pg_hba.conf.new" "$conf/pg_hba.conf"
  fi
  # Citus runs a maintenance daemon for each database that has it, in a background worker, and a
  # rebalance's shard moves run in background workers too: PostgreSQL's 8 ran out with a few test
  # and bench databases, and citus_rebalance_wait() then waited for ever. Added to instances made
  # before this line too (a restart).
  local settings="/etc/postgresql/$VERSION/$name/postgresql.conf"
  if ! grep -qx 'max_worker_processes = 32' "$settings"; then
    echo 'max_worker_processes = 32' >>"$settings"
    if pg_lsclusters -h | awk -v n="$name" '$2 == n {print $4}' | grep -qx online; then
      pg_ctlcluster --skip-systemctl-redirect "$VERSION" "$name" restart
    fi
  fi
  if ! pg_lsclusters -h | awk -v n="$name" '$2 == n {print $4}' | grep -qx online; then
    pg_ctlcluster --skip-systemctl-redirect "$VERSION" "$name" start
  fi
  for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p "$port" && break
    sleep 1
  done
  pg_isready -q -h 127.0.0.1 -p "$port"
}

# Only what is missing: a worker whose database already holds the cluster's metadata refuses
# any CREATE EXTENSION, IF NOT EXISTS included ("operation is not allowed on this node").
extensions() { # PORT DATABASE
  local ext
  for ext in citus vector; do
    if [ "$(psql_on "$1" "$2" -c "SELECT 1 FROM pg_extension WHERE extname = '$ext'")" != 1 ]; then
      psql_on "$1" "$2" -c "CREATE EXTENSION $ext"
    fi
  done
}

# The workers of the coordinator's `postgres` database are the cluster's list of workers.
workers_of() { psql_on "$1" postgres -c "SELECT nodeport FROM pg_dist_node WHERE groupid <> 0 ORDER BY nodeport"; }

# Citus metadata lives per database: a new database needs the extensions on the coordinator and
# on every worker (a worker's database of the same name), then the coordinator and the workers.
prepare() { # DATABASE COORDINATOR_PORT WORKER_PORT...
  local db=$1 coord=$2
  shift 2
  for port in "$coord" "$@"; do
    if [ "$(psql_on "$port" postgres -c "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]; then
      psql_on "$port" postgres -c "CREATE DATABASE \"$db\""
    fi
    extensions "$port" "$db"
  done
  psql_on "$coord" "$db" -c "SELECT citus_set_coordinator_host('127.0.0.1', $coord)" >/dev/null
  for port in "$@"; do
    if [ "$(psql_on "$coord" "$db" -c "SELECT 1 FROM pg_dist_node WHERE nodeport = $port")" != 1 ]; then
      psql_on "$coord" "$db" -c "SELECT citus_add_node('127.0.0.1', $port)" >/dev/null
    fi
  done
}

case "$cmd" in
  up)
    coord=${1:-5433}
    shift || true
    workers=("$@")
    [ "${#workers[@]}" -gt 0 ] || workers=(5434 5435)
    for port in "$coord" "${workers[@]}"; do instance "$port"; done
    # A worker that exists from an earlier `add-worker` is started too.
    for port in $(workers_of "$coord" 2>/dev/null || true); do instance "$port"; done
    prepare postgres "$coord" "${workers[@]}"
    echo "citus cluster up: coordinator 127.0.0.1:$coord, workers $(workers_of "$coord" | tr '\n' ' ')"
    ;;
  add-worker)
    port=$1
    coord=${2:-5433}
    instance "$port"
    extensions "$port" postgres
    psql_on "$coord" postgres -c "SELECT citus_add_node('127.0.0.1', $port) WHERE NOT EXISTS (SELECT 1 FROM pg_dist_node WHERE nodeport = $port)" >/dev/null
    echo "worker 127.0.0.1:$port added"
    ;;
  spare)
    instance "$1"
    extensions "$1" postgres
    echo "spare instance 127.0.0.1:$1 up"
    ;;
  prepare)
    db=$1
    coord=${2:-5433}
    # shellcheck disable=SC2046
    prepare "$db" "$coord" $(workers_of "$coord")
    ;;
  *)
    echo "usage: $0 up [COORDINATOR_PORT [WORKER_PORT...]] | add-worker PORT [COORDINATOR_PORT] | spare PORT | prepare DATABASE [COORDINATOR_PORT]" >&2
    exit 2
    ;;
esac

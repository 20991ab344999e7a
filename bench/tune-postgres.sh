#!/usr/bin/env bash
# PostgreSQL settings the 1M-memory benchmark runs under (and that docs/search.md recommends for
# collections of that size), on this 24 GB machine. PostgreSQL's defaults size it for a small
# shared host: 128 MB of shared buffers cannot hold a 1M x 512-d HNSW index (1.7 GB), so every
# graph step of a search or an insert copies a page in from the OS cache. Needs a restart.
#
#   bash bench/tune-postgres.sh            # apply and restart (as root, local cluster 15/main)
#   bash bench/tune-postgres.sh --reset    # back to the defaults
set -euo pipefail
SETTINGS=(
  "shared_buffers = '6GB'"          # a quarter of RAM: the HNSW index plus the hot heap
  "effective_cache_size = '16GB'"   # what the OS cache adds, for the planner's index costs
  "maintenance_work_mem = '1GB'"    # vacuum and index builds
  "max_wal_size = '8GB'"            # bulk loads: fewer checkpoints, so fewer full-page images
  "checkpoint_timeout = '30min'"
  "wal_compression = on"            # HNSW inserts touch many pages: compress their page images
)
psql_() { psql -h 127.0.0.1 -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 "$@"; }
if [ "${1:-}" = --reset ]; then
  for s in "${SETTINGS[@]}"; do psql_ -c "alter system reset ${s%% =*}"; done
else
  for s in "${SETTINGS[@]}"; do psql_ -c "alter system set $s"; done
fi
restart() {
  pg_ctlcluster --skip-systemctl-redirect 15 main restart
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 1; done
}
restart
# Huge pages for the shared memory. With 4 KiB pages every new connection's backend takes a page
# fault on its first touch of each shared-buffer page it reads, so a filtered search reading 10k
# rows on a connection that had not read them yet took 60 to 190 ms instead of 20 (measured on the
# 1M benchmark: each pool connection paid it again). PostgreSQL uses them when the kernel has
# enough reserved (huge_pages = try, the default); PostgreSQL 15 reports how many it needs.
if [ "${1:-}" = --reset ]; then
  echo 0 >/proc/sys/vm/nr_hugepages
else
  pages=$(psql_ -c "show shared_memory_size_in_huge_pages")
  echo $((pages + 64)) >/proc/sys/vm/nr_hugepages
  restart
fi
grep -E 'HugePages_(Total|Rsvd)' /proc/meminfo
psql_ -c "select name || ' = ' || current_setting(name) from pg_settings where name in ('shared_buffers', 'effective_cache_size', 'maintenance_work_mem', 'max_wal_size', 'checkpoint_timeout', 'wal_compression') order by name"

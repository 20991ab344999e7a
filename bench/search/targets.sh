#!/usr/bin/env bash
# The search targets at one size, in one run (bench/README.md,
# "The latency targets at 10k to 1M"): the bulk load (rate, CPU per memory), hybrid search right
# after it on the service's own statistics, every search scenario after a restart, then the
# service's search_ms against its bare SQL.
#
#   bash bench/search/targets.sh 100000            # PostgreSQL as it is configured now
#   bash bench/tune-postgres.sh && bash bench/search/targets.sh 1000000   # the tuned column
#
# Logs go to bench/results/targets-<n>.log; the database is dropped at the end.
set -euo pipefail
n=${1:?usage: targets.sh N}
base=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
mkdir -p bench/results
{
  node --import tsx bench/search/run.ts --n "$n" --keep
  node --import tsx bench/search/bare.ts --n "$n" --samples 100
} 2>&1 | tee "bench/results/targets-$n.log"
psql "$base" -XAtqc "drop database if exists orgmem_bench_$n with (force)"

#!/usr/bin/env bash
# Insert cost and recall of HNSW graph settings, on copies of a loaded benchmark database:
# each copy gets the index rebuilt with (m, ef_construction), then 20,000 new vectors (stored
# ones plus noise, so none is a duplicate) are inserted by one connection and timed, then
# bench/search/hnsw-recall.ts measures recall@10 (at each of EF_SEARCH, for the vectors of
# QUERY_TABLE if set, such as dense-vectors.ts's dense_queries).
#
#   bash bench/search/hnsw-params.sh orgmem_bench_tuned 16,64 12,32 8,32
#   EF_SEARCH=100,400 QUERY_TABLE=dense_queries bash bench/search/hnsw-params.sh orgmem_dense_1m 16,64
set -euo pipefail
cd "$(dirname "$0")/../.."
source_db=$1; shift
P=(psql -h 127.0.0.1 -U postgres -XAtq -v ON_ERROR_STOP=1)
for setting in "$@"; do
  m=${setting%,*}; ef=${setting#*,}; db=hnsw_m${m}_ef${ef}
  "${P[@]}" -d postgres -c "drop database if exists $db" -c "create database $db template $source_db"
  "${P[@]}" -d "$db" -c "drop index memories_embedding" -c "set maintenance_work_mem = '${MAINTENANCE_WORK_MEM:-1GB}'" \
    -c "create index memories_embedding on memories using hnsw (embedding vector_cosine_ops) with (m = $m, ef_construction = $ef)"
  "${P[@]}" -d "$db" -c "create table fresh as select tenant_id, collection, text,
      embedding + (select array_agg(random() * 0.06 - 0.03) from generate_series(1, vector_dims(m.embedding)) where m.id is not null)::vector as embedding
    from memories m limit 20000"
  started=$(date +%s.%N)
  "${P[@]}" -d "$db" -c "insert into memories (tenant_id, id, collection, text, embedding) select tenant_id, gen_random_uuid(), collection, text, embedding from fresh"
  ended=$(date +%s.%N)
  echo "m=$m ef_construction=$ef: $(echo "20000 / ($ended - $started)" | bc) inserts/s"
  node --import tsx bench/search/hnsw-recall.ts "$db" 200 "${EF_SEARCH:-40}" ${QUERY_TABLE:-}
  "${P[@]}" -d postgres -c "drop database $db"
done

-- The vector index with a cheaper graph: m = 12 and ef_construction = 32 instead of pgvector's
-- 16 and 64. Inserting into the HNSW graph is nearly all of a memory write's cost, and with these
-- a write costs half as much (single-connection inserts into 108k memories: 873/s against 408/s)
-- while recall@10 at ef_search 40 stays 0.995 against 0.996 (bench numbers in docs/search.md).
-- Searches keep iterative scans and an ef_search of at least the candidates they want.
drop index memories_embedding;
create index memories_embedding on memories using hnsw (embedding vector_cosine_ops) with (m = 12, ef_construction = 32);

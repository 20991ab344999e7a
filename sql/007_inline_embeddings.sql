-- Keep each memory's embedding in its row. A 512-d vector is 2 KiB, which pushed every row over
-- the TOAST threshold (about 2 KiB), so the vector went out of line: ranking a matching row
-- exactly (filtered search, small collections) cost a heap visit, a TOAST index lookup and two
-- chunk reads, about 9 buffer accesses per row (981 rows of one container tag: 8,824 buffer
-- hits, 23 ms), and every insert wrote the chunks and their index entry too.
--
-- `plain` storage keeps the vector in the row; a toast_tuple_target of 8160 (the maximum) keeps
-- the other columns in the row too, unless a row would not fit a page otherwise: then long
-- texts and metadata still move out of line. Rows of 1,536-d embeddings (6 KiB) still fit.
-- Rows written before this migration keep their out-of-line vectors until rewritten.
alter table memories set (toast_tuple_target = 8160);
alter table memories alter column embedding set storage plain;

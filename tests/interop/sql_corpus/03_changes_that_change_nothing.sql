-- DELETE / UPDATE / MERGE that change no row: Java commits a snapshot for each (a metadata-only
-- DELETE a `delete`, the row-level ones an `overwrite`, a MERGE of only NOT MATCHED clauses an
-- `append`), except a DELETE whose condition is always false. The test compares each table's
-- snapshot operations after every statement; the queries compare the summaries' counts (not
-- of files: each side's writer lays the rows out its own way).
-- nc: v2 copy-on-write, partitioned; nm: v3 merge-on-read, unpartitioned; np: v2 merge-on-read,
-- partitioned; ne: never written (no snapshot).
CREATE TABLE {cat}.db.nc (id bigint, p string, v string) USING iceberg PARTITIONED BY (p) TBLPROPERTIES ('format-version'='2');
CREATE TABLE {cat}.db.nm (id bigint, p string, v string) USING iceberg TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read');
CREATE TABLE {cat}.db.np (id bigint, p string, v string) USING iceberg PARTITIONED BY (p) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read');
CREATE TABLE {cat}.db.ne (id bigint, p string, v string) USING iceberg PARTITIONED BY (p) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read');
INSERT INTO {cat}.db.nc VALUES (2, 'a', 'v2'), (4, 'a', 'v4'), (6, 'b', 'v6'), (8, 'b', 'v8');
INSERT INTO {cat}.db.nm VALUES (2, 'a', 'v2'), (4, 'a', 'v4'), (6, 'b', 'v6'), (8, 'b', 'v8');
INSERT INTO {cat}.db.np VALUES (2, 'a', 'v2'), (4, 'a', 'v4'), (6, 'b', 'v6'), (8, 'b', 'v8');
-- decided by the metadata: a partition that does not exist, a value outside every file's bounds
DELETE FROM {cat}.db.nc WHERE p = 'zz';
DELETE FROM {cat}.db.nc WHERE id > 1000;
DELETE FROM {cat}.db.nm WHERE id > 1000;
DELETE FROM {cat}.db.np WHERE p = 'zz' AND id > 3;
-- rows must be read: within the bounds but absent, a condition Iceberg cannot express
DELETE FROM {cat}.db.nc WHERE id = 5;
DELETE FROM {cat}.db.nm WHERE id % 100 = 57;
DELETE FROM {cat}.db.np WHERE id = 3 AND p = 'a';
-- always false: nothing committed
DELETE FROM {cat}.db.nc WHERE 1 = 0;
DELETE FROM {cat}.db.nm WHERE id = NULL;
DELETE FROM {cat}.db.np WHERE p = 'a' AND false;
UPDATE {cat}.db.nc SET v = 'x' WHERE id > 1000;
UPDATE {cat}.db.nc SET v = 'x' WHERE p = 'zz';
UPDATE {cat}.db.nm SET v = 'x' WHERE id % 100 = 57;
UPDATE {cat}.db.np SET v = 'x' WHERE id = 3;
UPDATE {cat}.db.np SET v = 'x' WHERE 1 = 0;
MERGE INTO {cat}.db.nc t USING (SELECT 1L AS id, 'a' AS p, 'q' AS v WHERE false) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *;
MERGE INTO {cat}.db.nc t USING (SELECT 5L AS id, 'a' AS p, 'q' AS v) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v;
MERGE INTO {cat}.db.nm t USING (SELECT 5L AS id, 'a' AS p, 'q' AS v) s ON t.id = s.id WHEN MATCHED THEN DELETE;
MERGE INTO {cat}.db.nm t USING (SELECT 2L AS id, 'a' AS p, 'q' AS v) s ON t.id = s.id WHEN MATCHED AND s.v = 'nope' THEN UPDATE SET v = s.v;
MERGE INTO {cat}.db.np t USING (SELECT 2L AS id, 'a' AS p, 'q' AS v) s ON t.id = s.id WHEN NOT MATCHED BY SOURCE AND t.id < 0 THEN DELETE;
MERGE INTO {cat}.db.np t USING (SELECT 9000L AS id, 'zz' AS p, 'q' AS v) s ON t.id = s.id AND t.p = s.p WHEN MATCHED THEN UPDATE SET v = s.v;
-- only NOT MATCHED clauses: an insert (an append, of no rows too)
MERGE INTO {cat}.db.nc t USING (SELECT 2L AS id, 'a' AS p, 'q' AS v) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *;
MERGE INTO {cat}.db.np t USING (SELECT 1L AS id, 'a' AS p, 'q' AS v WHERE false) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *;
MERGE INTO {cat}.db.np t USING (SELECT 10L AS id, 'c' AS p, 'new' AS v) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *;
-- a table without a snapshot
DELETE FROM {cat}.db.ne WHERE id % 2 = 1;
DELETE FROM {cat}.db.ne WHERE id = 1;
UPDATE {cat}.db.ne SET v = 'x';
MERGE INTO {cat}.db.ne t USING (SELECT 1L AS id, 'a' AS p, 'q' AS v) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v;
MERGE INTO {cat}.db.ne t USING (SELECT 1L AS id, 'a' AS p, 'q' AS v WHERE false) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *;
-- a partition removed whole (metadata-only, merge-on-read too) leaves the partitions table
DELETE FROM {cat}.db.np WHERE p = 'a';
SELECT partition.p, spec_id, record_count, file_count, position_delete_file_count FROM {cat}.db.np.partitions;
SELECT * FROM {cat}.db.np;
SELECT operation, summary['changed-partition-count'], summary['added-records'], summary['deleted-records'], summary['total-records'] FROM {cat}.db.nc.snapshots;
SELECT operation, summary['changed-partition-count'], summary['added-records'], summary['deleted-records'], summary['total-records'] FROM {cat}.db.nm.snapshots;
SELECT operation, summary['changed-partition-count'], summary['added-records'], summary['deleted-records'], summary['total-records'] FROM {cat}.db.np.snapshots;
SELECT operation, summary['changed-partition-count'], summary['total-records'] FROM {cat}.db.ne.snapshots;
-- CTAS appends and RTAS overwrites (a `delete` without rows), also of no rows
CREATE TABLE {cat}.db.nctas USING iceberg AS SELECT * FROM {cat}.db.nc WHERE false;
REPLACE TABLE {cat}.db.nctas USING iceberg AS SELECT * FROM {cat}.db.nc;
CREATE OR REPLACE TABLE {cat}.db.nctas USING iceberg AS SELECT * FROM {cat}.db.nc WHERE false;
SELECT operation, summary['changed-partition-count'], summary['added-records'], summary['total-records'] FROM {cat}.db.nctas.snapshots;
-- time travel by snapshot ordinal sees the same table on both sides
SELECT * FROM {cat}.db.nc VERSION AS OF {snap[db.nc][3]};
SELECT * FROM {cat}.db.np VERSION AS OF {snap[db.np][-3]};
SELECT count(*) FROM {cat}.db.ne.snapshots;

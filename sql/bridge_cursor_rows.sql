--
-- cql_bridge_cursor_rows() / cql_bridge_cursor_last_key(): how
-- "cqlbridge apply" streams a table in one pass of its rows (src/bridge/
-- cursor_rows.c).  No Cassandra needed: the rows go into a local table
-- here, exactly as apply sends them into a foreign table.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS cql_fdw;
RESET client_min_messages;

CREATE TABLE bcr_src (k int, c text, v numeric, l int[]);
INSERT INTO bcr_src
SELECT g % 7, 'c' || (g / 7), g * 1.5, ARRAY[g, NULL]
FROM generate_series(1, 2000) g;
INSERT INTO bcr_src VALUES (3, 'c0', NULL, NULL);	-- a NULL value, a duplicate key
CREATE TABLE bcr_dst (k int, c text, v numeric, l int[]);
CREATE VIEW bcr_rows AS SELECT k, c, v, l FROM bcr_src;

-- the statement apply runs: the rows stream through the target list
BEGIN;
DECLARE bcr NO SCROLL CURSOR FOR SELECT * FROM bcr_rows q ORDER BY q.k, q.c;
EXPLAIN (VERBOSE, COSTS OFF)
INSERT INTO bcr_dst (k, c, v, l) SELECT (r).* FROM
  (SELECT cql_bridge_cursor_rows('bcr', 700, '{k,c}', NULL::bcr_rows) AS r OFFSET 0) s;
-- batches of 700 rows (the function refills from the cursor 256 at a time);
-- the key of each batch's last row is what apply records
INSERT INTO bcr_dst (k, c, v, l) SELECT (r).* FROM
  (SELECT cql_bridge_cursor_rows('bcr', 700, '{k,c}', NULL::bcr_rows) AS r OFFSET 0) s;
SELECT cql_bridge_cursor_last_key();
INSERT INTO bcr_dst (k, c, v, l) SELECT (r).* FROM
  (SELECT cql_bridge_cursor_rows('bcr', 700, '{k,c}', NULL::bcr_rows) AS r OFFSET 0) s;
SELECT cql_bridge_cursor_last_key();
INSERT INTO bcr_dst (k, c, v, l) SELECT (r).* FROM
  (SELECT cql_bridge_cursor_rows('bcr', 700, '{k,c}', NULL::bcr_rows) AS r OFFSET 0) s;
SELECT cql_bridge_cursor_last_key();
-- the cursor is exhausted: an empty batch, and no key
INSERT INTO bcr_dst (k, c, v, l) SELECT (r).* FROM
  (SELECT cql_bridge_cursor_rows('bcr', 700, '{k,c}', NULL::bcr_rows) AS r OFFSET 0) s;
SELECT cql_bridge_cursor_last_key() IS NULL AS no_key;
COMMIT;
-- every row exactly once, values (NULLs, arrays, numerics) intact
SELECT (SELECT count(*) FROM bcr_dst) AS copied,
       (SELECT count(*) FROM bcr_src) AS source,
       (SELECT count(*) FROM (SELECT * FROM bcr_src EXCEPT ALL SELECT * FROM bcr_dst) d) AS missing,
       (SELECT count(*) FROM (SELECT * FROM bcr_dst EXCEPT ALL SELECT * FROM bcr_src) d) AS extra;

-- resuming from a recorded key (>=): rows from that key on, none before
TRUNCATE bcr_dst;
BEGIN;
DECLARE bcr NO SCROLL CURSOR FOR
  SELECT * FROM bcr_rows q WHERE (q.k, q.c) >= ('3', 'c100') ORDER BY q.k, q.c;
INSERT INTO bcr_dst (k, c, v, l) SELECT (r).* FROM
  (SELECT cql_bridge_cursor_rows('bcr', 1000000, '{k,c}', NULL::bcr_rows) AS r OFFSET 0) s;
SELECT cql_bridge_cursor_last_key();
COMMIT;
SELECT count(*) = (SELECT count(*) FROM bcr_src WHERE (k, c) >= (3, 'c100')) AS all_from_key,
       bool_and((k, c) >= (3, 'c100')) AS none_before
FROM bcr_dst;

-- a batch that does not complete leaves no key behind
BEGIN;
DECLARE bcr NO SCROLL CURSOR FOR SELECT * FROM bcr_rows q ORDER BY q.k, q.c;
SELECT (r).k FROM (SELECT cql_bridge_cursor_rows('bcr', 10, '{k}', NULL::bcr_rows) AS r OFFSET 0) s LIMIT 1;
SELECT cql_bridge_cursor_last_key() IS NULL AS no_key;
COMMIT;

-- the key's text reads back the same whatever the session's DateStyle
-- (a resumed load may run with other settings)
SET datestyle = 'SQL, DMY';
CREATE TABLE bcr_keys (t timestamptz, d date, f float8, i interval);
INSERT INTO bcr_keys VALUES ('2026-01-02 03:04:05.678+00', '2026-01-02', 1.0 / 3, '1 day 2 hours');
CREATE VIEW bcr_keys_rows AS SELECT * FROM bcr_keys;
BEGIN;
DECLARE bcrk NO SCROLL CURSOR FOR SELECT * FROM bcr_keys_rows;
SELECT count(*) FROM (SELECT cql_bridge_cursor_rows('bcrk', 10, '{t,d,f,i}', NULL::bcr_keys_rows) r OFFSET 0) s;
SELECT cql_bridge_cursor_last_key();
SET LOCAL datestyle = 'Postgres, MDY';
SET LOCAL intervalstyle = 'sql_standard';
SELECT k[1]::timestamptz = t AS t_same, k[2]::date = d AS d_same, k[3]::float8 = f AS f_same,
       k[4]::interval = i AS i_same
FROM bcr_keys, cql_bridge_cursor_last_key() k;
COMMIT;
RESET datestyle;
DROP VIEW bcr_keys_rows;
DROP TABLE bcr_keys;

-- bad input: a clear error each, with its SQLSTATE
\set VERBOSITY sqlstate
SELECT * FROM cql_bridge_cursor_rows('nope', 1, '{k}', NULL::bcr_rows);
\set VERBOSITY default
SELECT * FROM cql_bridge_cursor_rows('nope', 1, '{k}', NULL::bcr_rows);
BEGIN;
DECLARE bcr NO SCROLL CURSOR FOR SELECT k, c FROM bcr_src;
SELECT * FROM cql_bridge_cursor_rows('bcr', 1, '{k}', NULL::bcr_rows);
ROLLBACK;
BEGIN;
DECLARE bcr NO SCROLL CURSOR FOR SELECT c, k, v, l FROM bcr_src;
SELECT * FROM cql_bridge_cursor_rows('bcr', 1, '{k}', NULL::bcr_rows);
ROLLBACK;
BEGIN;
DECLARE bcr NO SCROLL CURSOR FOR SELECT * FROM bcr_rows;
SELECT * FROM cql_bridge_cursor_rows('bcr', 1, '{nokey}', NULL::bcr_rows);
ROLLBACK;
BEGIN;
DECLARE bcr NO SCROLL CURSOR FOR SELECT * FROM bcr_rows;
SELECT * FROM cql_bridge_cursor_rows('bcr', -1, '{k}', NULL::bcr_rows);
ROLLBACK;
BEGIN;
DECLARE bcr NO SCROLL CURSOR FOR SELECT * FROM bcr_rows;
SELECT * FROM cql_bridge_cursor_rows('bcr', 1, '{k,NULL}', NULL::bcr_rows);
ROLLBACK;
SELECT * FROM cql_bridge_cursor_rows(NULL, 1, '{k}', NULL::bcr_rows);
SELECT * FROM cql_bridge_cursor_rows('bcr', 1, '{k}', NULL::int);
SELECT * FROM cql_bridge_cursor_rows('bcr', 1, '{k}', NULL::record);

DROP VIEW bcr_rows;
DROP TABLE bcr_src, bcr_dst;

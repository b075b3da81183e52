--
-- CQL vector<float, n> as pgvector's vector(n): IMPORT FOREIGN SCHEMA picks
-- it when the extension is installed (real[] otherwise), values convert
-- both ways, and pgvector's distance operators work on them locally.  On a
-- server without pgvector only the real[] part runs (expected/vector_1.out).
--
\i sql/include/cql_server.sql
\set ks regress_vector
\i sql/include/keyspace.sql

DO $$
BEGIN
  PERFORM cql_execute('cass', 'CREATE TABLE regress_vector.items (
      id int PRIMARY KEY, v vector<float, 3>, d vector<double, 2>)');
  PERFORM cql_execute('cass', 'INSERT INTO regress_vector.items (id, v, d) VALUES (1, [1.0, 0.0, 0.0], [1.0, 2.0])');
  PERFORM cql_execute('cass', 'INSERT INTO regress_vector.items (id, v) VALUES (2, [0.0, 2.0, 0.0])');
  PERFORM cql_execute('cass', 'INSERT INTO regress_vector.items (id, v) VALUES (3, [4.0, 3.0, -0.5])');
  PERFORM cql_execute('cass', 'INSERT INTO regress_vector.items (id) VALUES (9)');
END
$$;

-- without the extension: real[]
CREATE SCHEMA vec_plain;
IMPORT FOREIGN SCHEMA regress_vector FROM SERVER cass INTO vec_plain;
SELECT attname, format_type(atttypid, atttypmod) AS type
FROM pg_attribute WHERE attrelid = 'vec_plain.items'::regclass AND attnum > 0 ORDER BY attnum;
SELECT id, v, d FROM vec_plain.items ORDER BY id;

SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS have_pgvector \gset
\if :have_pgvector
\else
\echo 'pgvector is not available on this server: the rest is skipped'
DROP SCHEMA vec_plain CASCADE;
\quit
\endif

-- with it: vector(n), schema-qualified
SET client_min_messages = warning;
CREATE SCHEMA vec_ext;
CREATE EXTENSION vector SCHEMA vec_ext;
RESET client_min_messages;
CREATE SCHEMA vec;
IMPORT FOREIGN SCHEMA regress_vector FROM SERVER cass INTO vec;
SELECT attname, format_type(atttypid, atttypmod) AS type
FROM pg_attribute WHERE attrelid = 'vec.items'::regclass AND attnum > 0 ORDER BY attnum;
SET search_path = public, vec_ext;
SELECT id, v, vector_dims(v) AS dims FROM vec.items ORDER BY id;

-- pgvector's operators, evaluated locally over the foreign rows
SELECT id, v <-> '[1,0,0]' AS l2, v <=> '[1,0,0]' AS cosine, v <#> '[1,0,0]' AS neg_inner
FROM vec.items WHERE v IS NOT NULL ORDER BY v <-> '[1,0,0]', id;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT id FROM vec.items ORDER BY v <=> '[0,1,0]' LIMIT 2;
SELECT id FROM vec.items ORDER BY v <=> '[0,1,0]' LIMIT 2;

-- writes: vector(n) -> vector<float, n>, read back through real[] (the
-- array conversion) and as vector
INSERT INTO vec.items (id, v) VALUES (4, '[0.5,-0.25,1e-3]');
UPDATE vec.items SET v = v + '[1,1,1]' WHERE id = 2;
SELECT id, v FROM vec_plain.items WHERE id IN (2, 4) ORDER BY id;
SELECT id, v FROM vec.items WHERE id IN (2, 4) ORDER BY id;

-- pgvector itself refuses a wrong dimension
INSERT INTO vec.items (id, v) VALUES (5, '[1,2]');

-- a plain vector (no typmod) takes any dimension
CREATE FOREIGN TABLE vec.items_any (id int, v vector)
  SERVER cass OPTIONS (keyspace 'regress_vector', "table" 'items');
SELECT id, v FROM vec.items_any WHERE id = 1;

-- a declaration that cannot hold the CQL type is refused at first use
CREATE FOREIGN TABLE vec.items_dim (id int, v vector(4))
  SERVER cass OPTIONS (keyspace 'regress_vector', "table" 'items');
SELECT * FROM vec.items_dim;
CREATE FOREIGN TABLE vec.items_double (id int, d vector(2))
  SERVER cass OPTIONS (keyspace 'regress_vector', "table" 'items');
SELECT * FROM vec.items_double;

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA vec, vec_plain CASCADE;
DROP EXTENSION vector;
DROP SCHEMA vec_ext;
RESET client_min_messages;

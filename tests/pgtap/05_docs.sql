--
-- tests/pgtap/05_docs.sql
--		pgTAP: every SQL function of the extension is documented.
--
-- Each function the installed extension owns must have a COMMENT (\df+,
-- \dd) and a row in the function table of docs/cql_fdw.md ("## SQL
-- functions": its exact regprocedure signature between backquotes) whose
-- "not PUBLIC" agrees with the function's privileges, and a heading there
-- that names it; a row for a function that does not exist is stale.  So a
-- function added later without a comment or docs fails here.
--
-- The docs are read by psql from the current directory: run from the
-- repository root, as scripts/test.sh does.  One transaction, rolled back;
-- needs no Cassandra.
--
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off
\set docs `cat docs/cql_fdw.md 2>/dev/null`

BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
DROP EXTENSION IF EXISTS cql_fdw CASCADE;
CREATE EXTENSION cql_fdw;
-- signatures without a schema: the extension's schema first in search_path
SELECT set_config('search_path',
                  (SELECT quote_ident(n.nspname) FROM pg_extension e
                     JOIN pg_namespace n ON n.oid = e.extnamespace
                    WHERE e.extname = 'cql_fdw') || ', pg_catalog', true);

CREATE TEMP TABLE doc_lines ON COMMIT DROP AS
SELECT line FROM regexp_split_to_table(:'docs', E'\n') AS line;

-- the rows of the function table: "| `signature` | returns | who may call |"
CREATE TEMP TABLE doc_rows ON COMMIT DROP AS
SELECT m[1] AS sig, line
  FROM doc_lines, regexp_match(line, '^\| `([a-z_]+\(.*\))` \|') AS m
 WHERE m IS NOT NULL;

CREATE TEMP TABLE ext_functions ON COMMIT DROP AS
SELECT p.oid::regprocedure::text AS sig, p.proname::text AS name,
       obj_description(p.oid, 'pg_proc') AS comment,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_depend d
  JOIN pg_proc p ON p.oid = d.objid
 WHERE d.classid = 'pg_proc'::regclass
   AND d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'cql_fdw')
   AND d.deptype = 'e';

SELECT plan(7);

SELECT ok((SELECT count(*) FROM doc_lines) > 100,
          'docs/cql_fdw.md was read (run from the repository root)');
SELECT ok((SELECT count(*) FROM ext_functions) >= 18,
          'the extension owns its functions (at least the 18 of 0.6)');
SELECT is(ARRAY(SELECT sig FROM ext_functions
                 WHERE comment IS NULL OR btrim(comment) = '' ORDER BY sig),
          '{}'::text[], 'every function of the extension has a COMMENT');
SELECT is(ARRAY(SELECT f.sig FROM ext_functions f
                 WHERE NOT EXISTS (SELECT 1 FROM doc_rows r WHERE r.sig = f.sig)
                 ORDER BY f.sig),
          '{}'::text[], 'every function has a row in the function table of docs/cql_fdw.md');
SELECT is(ARRAY(SELECT DISTINCT f.name FROM ext_functions f
                 WHERE NOT EXISTS (SELECT 1 FROM doc_lines l
                                    WHERE l.line LIKE '### %'
                                      AND strpos(l.line, '`' || f.name || '`') > 0)
                 ORDER BY f.name),
          '{}'::text[], 'every function is named in a ### heading of docs/cql_fdw.md');
SELECT is(ARRAY(SELECT f.sig FROM ext_functions f JOIN doc_rows r USING (sig)
                 WHERE f.public_execute = (strpos(r.line, 'not PUBLIC') > 0)
                 ORDER BY f.sig),
          '{}'::text[], 'the docs say "not PUBLIC" exactly for the functions PUBLIC cannot execute');
SELECT is(ARRAY(SELECT r.sig FROM doc_rows r
                 WHERE NOT EXISTS (SELECT 1 FROM ext_functions f WHERE f.sig = r.sig)
                 ORDER BY r.sig),
          '{}'::text[], 'no row of the function table names a function the extension lacks');

SELECT * FROM finish();
ROLLBACK;

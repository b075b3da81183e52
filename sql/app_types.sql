--
-- Application types in text columns (issue 26): an enum as its label, cidr
-- and macaddr as their text form (read through the type's input function,
-- written through its output function), a domain over text, and arrays of
-- an enum for list<text>.  An enum key is found by = (labels are unique);
-- its order is PostgreSQL's (sorted locally), never the labels' bytes.  A
-- domain key is looked up like its base type.  Values Cassandra holds that
-- the type refuses are errors with the type's own SQLSTATE (a domain over
-- a character type is checked on read too).
--
\i sql/include/cql_server.sql
\set ks regress_app_types
\i sql/include/keyspace.sql

SELECT cql_execute('cass', 'CREATE TABLE regress_app_types.t (k text, c text, net text, mac text, moods list<text>, PRIMARY KEY ((k), c))');

CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN tag AS text CHECK (VALUE <> '');
CREATE FOREIGN TABLE app_t (
	k mood,
	c tag,
	net cidr,
	mac macaddr,
	moods mood[]
) SERVER cass OPTIONS (keyspace 'regress_app_types', "table" 't');
-- the same table with plain text columns: what Cassandra stores
CREATE FOREIGN TABLE app_raw (
	k text,
	c text,
	net text,
	mac text,
	moods text[]
) SERVER cass OPTIONS (keyspace 'regress_app_types', "table" 't');

INSERT INTO app_t VALUES
	('happy', 'b', '10.1.0.0/16', '08:00:2b:01:02:03', ARRAY['ok', 'happy', 'ok']::mood[]),
	('happy', 'a', NULL, NULL, NULL),
	('sad', 'x', '2001:db8::/32', '08-00-2b-01-02-04', ARRAY['sad']::mood[]),
	('ok', 'y', '192.168.1.0/24', NULL, '{}');
-- stored as labels and text forms
SELECT * FROM app_raw ORDER BY k, c;
-- read back as the application's types
SELECT k, c, net, mac, moods, pg_typeof(k) AS k_type, pg_typeof(moods) AS moods_type FROM app_t ORDER BY k, c;
-- ORDER BY an enum is its order (sad, ok, happy), not the labels' bytes
SELECT k FROM app_t ORDER BY k, c;

-- equality on an enum partition key and a domain clustering column is sent
EXPLAIN (VERBOSE, COSTS OFF) SELECT c, net FROM app_t WHERE k = 'happy' AND c = 'b';
SELECT c, net FROM app_t WHERE k = 'happy' AND c = 'b';
-- a domain column compared with text, as an application's parameter
PREPARE by_tag(mood, text) AS SELECT c FROM app_t WHERE k = $1 AND c = $2;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE by_tag('sad', 'x');
EXECUTE by_tag('sad', 'x');
-- a range on an enum is not sent (its order is not the labels' order)
EXPLAIN (VERBOSE, COSTS OFF) SELECT k, c FROM app_t WHERE k > 'sad';
SELECT k, c FROM app_t WHERE k > 'sad' ORDER BY k, c;

-- UPDATE and DELETE by key
UPDATE app_t SET moods = ARRAY['happy']::mood[], net = '10.0.0.0/8' WHERE k = 'happy' AND c = 'a';
DELETE FROM app_t WHERE k = 'ok' AND c = 'y';
SELECT * FROM app_raw ORDER BY k, c;

-- values the application's types refuse on read: the type's own errors
INSERT INTO app_raw VALUES ('angry', 'z', NULL, NULL, NULL);
SELECT * FROM app_t WHERE k = 'happy' AND c = 'b';
SELECT k FROM app_t ORDER BY k;
DELETE FROM app_raw WHERE k = 'angry' AND c = 'z';
INSERT INTO app_raw VALUES ('ok', '', 'not a network', NULL, NULL);
SELECT c FROM app_t WHERE k = 'ok';
SELECT net FROM app_t;
DELETE FROM app_raw WHERE k = 'ok' AND c = '';
-- a domain is checked on write too
INSERT INTO app_t VALUES ('ok', '', NULL, NULL, NULL);

SELECT cql_execute('cass', :'ks_drop') AS ks_dropped \gset

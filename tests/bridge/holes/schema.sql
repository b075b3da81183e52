--
-- tests/bridge/holes/schema.sql
--	  A small source schema for tests/bridge/test_stream_holes.sh (the
--	  stream's correctness holes, issue 39): documents keyed by a long text
--	  key stored out of line (an unchanged TOASTed key column in UPDATEs),
--	  accounts with phones (a collection correlated by a column outside the
--	  phone's key: its DELETEs need REPLICA IDENTITY FULL), and notes
--	  without a primary key (read only by workload_nopk.sql).
--
CREATE SCHEMA holes;
CREATE TABLE holes.doc (
	doc_key		text NOT NULL,
	rev			int NOT NULL,
	title		text NOT NULL,
	PRIMARY KEY (doc_key, rev)
);
-- out of line without compression: a 2,500-byte key is TOASTed
ALTER TABLE holes.doc ALTER COLUMN doc_key SET STORAGE EXTERNAL;
CREATE TABLE holes.acct (
	acct_id		int PRIMARY KEY,
	name		text NOT NULL
);
CREATE TABLE holes.phone (
	phone_id	int PRIMARY KEY,
	acct_id		int NOT NULL REFERENCES holes.acct,
	number		text NOT NULL
);
ALTER TABLE holes.phone REPLICA IDENTITY FULL;
CREATE TABLE holes.note (
	acct_id		int NOT NULL,
	txt			text NOT NULL
);

-- 8 documents with keys of 2,500 characters (k1..k8 then x-padding), 3 revisions each
INSERT INTO holes.doc
SELECT 'k' || d || '-' || repeat('x', 2500), r, 'doc ' || d || ' rev ' || r
FROM generate_series(1, 8) d, generate_series(1, 3) r;
INSERT INTO holes.acct SELECT a, 'Account ' || a FROM generate_series(1, 20) a;
INSERT INTO holes.phone SELECT p, 1 + p % 20, '+1-555-' || lpad(p::text, 4, '0') FROM generate_series(1, 50) p;
INSERT INTO holes.note SELECT 1 + n % 20, 'note ' || n FROM generate_series(1, 40) n;

--
-- tests/bridge/holes/workload.sql
--	  Two queries over holes/schema.sql for test_stream_holes.sh: the
--	  revisions of a document (its TOASTed key is the partition key); an
--	  account with its phone numbers (a set, correlated by phone.acct_id,
--	  which is not the phone's key).
--

-- name: Q1_doc_revisions
-- description: the revisions of a document
-- params: doc_key text
-- target: holes.doc_revisions
-- published_key: ((doc_key), rev)
SELECT d.doc_key, d.rev, d.title
FROM holes.doc d
WHERE d.doc_key = :'doc_key'
ORDER BY d.rev;

-- name: Q2_acct_phones
-- description: an account with its phone numbers
-- params: acct_id int
-- target: holes.accts
-- published_key: ((acct_id))
SELECT a.acct_id, a.name,
       (SELECT array_agg(p.number ORDER BY p.number)
        FROM holes.phone p
        WHERE p.acct_id = a.acct_id) AS numbers
FROM holes.acct a
WHERE a.acct_id = :'acct_id'::int;

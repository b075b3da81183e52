--
-- tests/bridge/holes/workload_nopk.sql
--	  An account with its notes: holes.note has no primary key, so the plan
--	  cannot trace its changes (it warns) and the stream must refuse it.
--

-- name: Q1_acct_notes
-- description: an account with its notes
-- params: acct_id int
-- target: holes.acct_notes
-- published_key: ((acct_id))
SELECT a.acct_id, a.name,
       (SELECT array_agg(n.txt ORDER BY n.txt)
        FROM holes.note n
        WHERE n.acct_id = a.acct_id) AS notes
FROM holes.acct a
WHERE a.acct_id = :'acct_id'::int;

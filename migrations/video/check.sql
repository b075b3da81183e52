--
-- check.sql
--	  Self-check of the video migrations: data invariants, the deliberate
--	  traps, the format of workload.sql and a non-empty result for each of
--	  its queries.  Any failure is an ERROR (RAISE EXCEPTION), so psql with
--	  ON_ERROR_STOP exits non-zero.
--
-- Usage, from the repository root, on data made by generate.sql (written
-- for the default scale=1; any scale >= 1 passes too):
--	  psql -X -v ON_ERROR_STOP=1 -d DB -f migrations/video/check.sql
-- Variables: workload - path of workload.sql for the parser check, relative
-- to the current directory (default migrations/video/workload.sql).
--
-- Two paths run each query (the same as migrations/hotel/check.sql):
--	1. psql: sample parameters are \gset as psql variables and workload.sql
--	   is included with \ir, as a user would run it;
--	2. the splitter: the file is split into blocks by the documented format
--	   (as a C program would), each block is checked (metadata, one
--	   statement, declared params = used params), PREPAREd with $k and the
--	   declared types, and run with the sample values; zero rows, or several
--	   rows without ORDER BY, is an error.
--
-- IDENTIFICATION
--	  migrations/video/check.sql
--
\set ON_ERROR_STOP on
\if :{?workload}
\else
\set workload migrations/video/workload.sql
\endif
SET search_path = video_rel;
SET client_min_messages = notice;

-- ---------------------------------------------------------------------
-- 1. Data invariants
-- ---------------------------------------------------------------------
DO $$
DECLARE
	n bigint;
BEGIN
	SELECT count(*) INTO n FROM users;
	IF n < 10 THEN
		RAISE EXCEPTION 'check: expected at least 10 users (generate.sql), found %', n;
	END IF;

	-- time flows forward: sign-up, then upload, then comments
	SELECT count(*) INTO n FROM videos v JOIN users u ON u.user_id = v.uploader_id
	WHERE v.uploaded_at < u.created_at;
	IF n > 0 THEN
		RAISE EXCEPTION 'check: % videos uploaded before their uploader signed up', n;
	END IF;
	SELECT count(*) INTO n FROM comments c JOIN videos v USING (video_id)
	WHERE c.created_at < v.uploaded_at;
	IF n > 0 THEN
		RAISE EXCEPTION 'check: % comments posted before their video was uploaded', n;
	END IF;

	-- whole seconds everywhere, so Cassandra's millisecond timestamps
	-- round-trip exactly
	SELECT (SELECT count(*) FROM users WHERE created_at <> date_trunc('second', created_at))
		 + (SELECT count(*) FROM videos WHERE uploaded_at <> date_trunc('second', uploaded_at))
		 + (SELECT count(*) FROM comments WHERE created_at <> date_trunc('second', created_at))
	INTO n;
	IF n > 0 THEN
		RAISE EXCEPTION 'check: % timestamps with fractional seconds', n;
	END IF;

	-- Q2's tie-breaker (video_id) never decides: upload times are unique
	-- per tag, so the order does not depend on how each side compares uuids
	SELECT count(*) INTO n FROM (
		SELECT 1 FROM video_tag vt JOIN videos v USING (video_id)
		GROUP BY vt.tag_id, v.uploaded_at HAVING count(*) > 1) s;
	IF n > 0 THEN
		RAISE EXCEPTION 'check: % (tag, uploaded_at) pairs shared by several videos', n;
	END IF;
END $$;

-- ---------------------------------------------------------------------
-- 2. The deliberate traps (README.md, "Traps in the data"): each must be
--	  present, or the bridge's detection of it is not tested.
-- ---------------------------------------------------------------------
CREATE TEMP TABLE check_trap AS
SELECT 1 AS ord, 'comments_by_video rows lost to ((video_id), created_at)' AS trap,
	   (SELECT count(*) - count(DISTINCT (video_id, created_at)) FROM comments) AS n
UNION ALL
SELECT 2, 'comments_by_user rows lost to ((user_id), created_at)',
	   (SELECT count(*) - count(DISTINCT (user_id, created_at)) FROM comments)
UNION ALL
SELECT 3, 'display names shared by several users',
	   (SELECT count(*) FROM (SELECT name FROM users GROUP BY name HAVING count(*) > 1) s)
UNION ALL
SELECT 4, 'videos without tags (empty set, NULL in Q3)',
	   (SELECT count(*) FROM videos v WHERE NOT EXISTS (SELECT 1 FROM video_tag vt WHERE vt.video_id = v.video_id))
UNION ALL
SELECT 5, 'tags on no video (Q2 returns nothing)',
	   (SELECT count(*) FROM tags t WHERE NOT EXISTS (SELECT 1 FROM video_tag vt WHERE vt.tag_id = t.tag_id))
UNION ALL
SELECT 6, 'videos without description (NULL)', (SELECT count(*) FROM videos WHERE description IS NULL)
UNION ALL
SELECT 7, 'values with a quote or non-ASCII letter',
	   (SELECT count(*) FROM (SELECT name FROM users UNION ALL SELECT title FROM videos
							  UNION ALL SELECT name FROM tags UNION ALL SELECT body FROM comments) s (v)
		WHERE v ~ '''' OR v ~ '[^[:ascii:]]')
UNION ALL
SELECT 8, 'videos with more than 3x the average number of comments (hot partition)',
	   (SELECT count(*) FROM (SELECT video_id FROM comments GROUP BY video_id
							  HAVING count(*) > 3.0 * (SELECT count(*) FROM comments)
											  / (SELECT count(*) FROM videos)) s)
UNION ALL
SELECT 9, 'most target rows to rewrite when one user is renamed (comments + uploads x tags)',
	   (SELECT max((SELECT count(*) FROM comments c WHERE c.user_id = u.user_id)
				 + (SELECT count(*) FROM videos v JOIN video_tag vt USING (video_id)
					WHERE v.uploader_id = u.user_id))
		FROM users u);
SELECT trap, n FROM check_trap ORDER BY ord;
DO $$
DECLARE
	t record;
BEGIN
	FOR t IN SELECT * FROM check_trap LOOP
		IF t.n = 0 THEN
			RAISE EXCEPTION 'check: trap "%" is absent from the data', t.trap;
		END IF;
	END LOOP;
END $$;

-- ---------------------------------------------------------------------
-- 3. Sample parameters, taken from the data so they work at any scale/seed:
--	  the most commented video that has tags and two comments in the same
--	  second; the most used tag; the user with the most comments among those
--	  who posted twice in one second, and 90 days from that user's first
--	  comment; the email of a user whose name another user shares.
--	  Times are printed in UTC, so the values do not depend on TimeZone.
-- ---------------------------------------------------------------------
SET TimeZone = 'UTC';
CREATE TEMP TABLE check_param AS
SELECT (SELECT c.video_id FROM comments c
		WHERE EXISTS (SELECT 1 FROM video_tag vt WHERE vt.video_id = c.video_id)
		GROUP BY c.video_id
		HAVING count(*) > count(DISTINCT c.created_at)
		ORDER BY count(*) DESC, c.video_id
		LIMIT 1)::text AS video_id,
	   (SELECT t.name FROM tags t JOIN video_tag vt USING (tag_id)
		GROUP BY t.name ORDER BY count(*) DESC, t.name LIMIT 1) AS tag,
	   u.user_id::text AS user_id,
	   u.first_comment::text AS start_time,
	   (u.first_comment + 90 * 86400 * interval '1 second')::text AS end_time,
	   (SELECT us.email FROM users us
		WHERE (SELECT count(*) FROM users u2 WHERE u2.name = us.name) > 1
		ORDER BY us.email LIMIT 1) AS email
FROM (SELECT c.user_id, min(c.created_at) AS first_comment
	  FROM comments c
	  GROUP BY c.user_id
	  HAVING count(*) > count(DISTINCT c.created_at)
	  ORDER BY count(*) DESC, c.user_id
	  LIMIT 1) u;
RESET TimeZone;
SELECT count(*) = 1 AND bool_and(video_id IS NOT NULL AND tag IS NOT NULL AND email IS NOT NULL) AS have_params
FROM check_param \gset
\if :have_params
\else
DO $$ BEGIN RAISE EXCEPTION 'check: no data fits the sample-parameter rules'; END $$;
\endif
SELECT * FROM check_param \gset
\echo check: parameters video_id=:video_id tag=:tag user_id=:user_id start_time=:start_time end_time=:end_time email=:email

-- ---------------------------------------------------------------------
-- 4a. psql path: the file as a user runs it (output discarded)
-- ---------------------------------------------------------------------
\o /dev/null
\ir workload.sql
\o

\set expected_queries 5
\ir ../lib/check_workload.sql

-- ---------------------------------------------------------------------
-- 5. Fingerprint of the whole data set: equal on every machine for the
--	  same generate.sql variables (README.md lists the value for the
--	  defaults).  Row text is independent of locale and time zone thanks to
--	  COLLATE "C", DateStyle ISO and TimeZone UTC.
-- ---------------------------------------------------------------------
SET DateStyle = ISO;
SET TimeZone = 'UTC';
SELECT md5(string_agg(x, E'\n' ORDER BY x COLLATE "C")) AS data_fingerprint
FROM (SELECT 'users ' || t::text FROM users t
	  UNION ALL SELECT 'videos ' || t::text FROM videos t
	  UNION ALL SELECT 'tags ' || t::text FROM tags t
	  UNION ALL SELECT 'video_tag ' || t::text FROM video_tag t
	  UNION ALL SELECT 'comments ' || t::text FROM comments t) s (x);
RESET DateStyle;
RESET TimeZone;
\echo check.sql: all checks passed

--
-- generate.sql
--	  Deterministic data for the video_rel schema (schema/001-004).
--
-- Usage (from the repository root, after the schema files):
--	  psql -X -v ON_ERROR_STOP=1 -d DB -f migrations/video/generate.sql
--	  psql -X -v ON_ERROR_STOP=1 -d DB -v scale=100 -f migrations/video/generate.sql
--
-- Variables (all optional):
--	  scale		 size multiplier						default 1
--	  users		 number of users						default 20 * scale
--	  videos	 number of videos						default 50 * scale
--	  comments	 number of comments						default 400 * scale
--	  start		 earliest sign-up (timestamptz)			default 2026-01-01 00:00:00+00
--	  seed		 any text; changes every derived value	default 1
--
-- Determinism: no random(); every choice is a 32-bit field of
-- md5(seed:kind:ids), so the same variables give identical tables on any
-- machine.  Times are whole seconds added to start as intervals of seconds
-- only (never days), so the session's TimeZone and its DST rules cannot
-- change a value.
--
-- The script TRUNCATEs the five tables and fills them in one transaction,
-- in foreign-key order (the keys stay in place and are checked row by row;
-- fine up to a few hundred thousand comments), then VACUUM ANALYZEs and
-- prints row counts.  See README.md for the shape of the data and the traps
-- it contains on purpose.
--
-- IDENTIFICATION
--	  migrations/video/generate.sql
--
\set ON_ERROR_STOP on
\set QUIET on

\if :{?scale}
\else
\set scale 1
\endif
\if :{?seed}
\else
\set seed 1
\endif
\if :{?start}
\else
\set start '2026-01-01 00:00:00+00'
\endif
\if :{?users}
\else
SELECT 20 * :scale AS users \gset
\endif
\if :{?videos}
\else
SELECT 50 * :scale AS videos \gset
\endif
\if :{?comments}
\else
SELECT 400 * :scale AS comments \gset
\endif

SET search_path = video_rel;
SET client_min_messages = warning;

-- ---------------------------------------------------------------------
-- Helpers: session-local (pg_temp), so the schema stays clean.
-- ---------------------------------------------------------------------

-- 32-bit field k (0..3) of a 32-digit md5 hex string, as a bigint >= 0
CREATE OR REPLACE FUNCTION pg_temp.f(m text, k int) RETURNS bigint
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT ('x' || substr(m, 1 + 8 * k, 8))::bit(32)::bigint $$;

-- a uuid from md5 of seed, kind and number, stamped as an RFC 4122
-- version 4 uuid (version nibble 4, variant nibble 8)
CREATE OR REPLACE FUNCTION pg_temp.id(seed text, kind text, n bigint) RETURNS uuid
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT overlay(overlay(md5(seed || ':' || kind || ':' || n) PLACING '4' FROM 13)
						 PLACING '8' FROM 17)::uuid $$;

-- ASCII, lower case, no apostrophe: the local part of an email address
CREATE OR REPLACE FUNCTION pg_temp.mailname(s text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT translate(lower(s), 'éëèíóöüçã''', 'eeeioouca') $$;

CREATE OR REPLACE FUNCTION pg_temp.assert(ok boolean, msg text) RETURNS void
	LANGUAGE plpgsql
	AS $$ BEGIN IF NOT ok THEN RAISE EXCEPTION 'generate.sql: %', msg; END IF; END $$;

SELECT pg_temp.assert(:scale >= 1, 'scale must be >= 1'),
	   pg_temp.assert(:users >= 10, 'users must be >= 10 (user 2 repeats the name of user 1)'),
	   pg_temp.assert(:videos >= 25, 'videos must be >= 25 (every 25th video has no tag)'),
	   pg_temp.assert(:comments >= 100, 'comments must be >= 100 (every 100th comment is a double post)'),
	   pg_temp.assert(:videos < 300 * 86400, 'videos must be < 25920000 (one upload second each)'),
	   pg_temp.assert(:'start'::timestamptz IS NOT NULL, 'start must be a timestamptz')
\g /dev/null

\echo generate.sql: scale=:scale users=:users videos=:videos comments=:comments start=:start seed=:seed

BEGIN;
TRUNCATE comments, video_tag, tags, videos, users;

-- ---------------------------------------------------------------------
-- Word lists, indexed from 0.  Quotes and non-ASCII letters on purpose.
-- ---------------------------------------------------------------------
CREATE TEMP TABLE gen_word (list text, j int, w text) ON COMMIT DROP;
INSERT INTO gen_word
SELECT 'first', ord - 1, w FROM unnest(ARRAY[
	'Ana', 'Ben', 'Chloé', 'Dmitri', 'Emma', 'Farid', 'Grace', 'Hiro',
	'Inès', 'José', 'Kofi', 'Lena', 'Mateo', 'Nora', 'Omar', 'Zoë']) WITH ORDINALITY u (w, ord)
UNION ALL
SELECT 'last', ord - 1, w FROM unnest(ARRAY[
	'Silva', 'Smith', 'O''Connor', 'Müller', 'Nguyen', 'Okafor',
	'Rossi', 'Tanaka', 'García', 'Kowalski', 'Dubois', 'Chen']) WITH ORDINALITY u (w, ord)
UNION ALL
SELECT 'topic', ord - 1, w FROM unnest(ARRAY[
	'Sourdough Bread', 'Street Food in Hanoi', 'Cat Reacts to Cucumber', 'Speedrun World Record',
	'Linear Algebra', 'Rock''n''Roll Guitar Riffs', 'Café Latte Art', 'Night Sky Timelapse',
	'Bike Repair', 'Chess Openings', 'Home Workout', 'Budget Travel in Lisbon']) WITH ORDINALITY u (w, ord)
UNION ALL
SELECT 'kind', ord - 1, w FROM unnest(ARRAY[
	'Tutorial', 'Vlog', 'Review', 'Explained', 'Live', 'Highlights', 'Part 2', 'Don''t Try This']) WITH ORDINALITY u (w, ord)
UNION ALL
SELECT 'comment', ord - 1, w FROM unnest(ARRAY[
	'Great video!', 'First!', 'I don''t agree at all.', 'Très bien expliqué.', 'Can you do a part 2?',
	'This saved my day, thanks.', 'Audio is a bit low.', 'Who''s watching in 2026?', 'Subscribed.',
	'Wrong at 3:14, see the docs.', 'Ça marche !', 'Loved the ending.']) WITH ORDINALITY u (w, ord);
CREATE INDEX ON gen_word (list, j);
ANALYZE gen_word;

-- ---------------------------------------------------------------------
-- Users.  Every user u with u % 10 = 2 takes the name of user u - 1, so
-- display names are not unique at any scale (trap: a table keyed by name
-- alone merges users).  Emails stay unique through the user number.
-- Sign-up in the first 60 days.
-- ---------------------------------------------------------------------
CREATE TEMP TABLE gen_user ON COMMIT DROP AS
SELECT u, pg_temp.id(:'seed', 'user', u) AS user_id,
	   md5(:'seed' || ':user:' || u) AS m,
	   md5(:'seed' || ':name:' || (u - (u % 10 = 2)::int)) AS nm
FROM generate_series(1, :users) u;
CREATE UNIQUE INDEX ON gen_user (u);
ANALYZE gen_user;

INSERT INTO users (user_id, email, name, created_at)
SELECT gu.user_id,
	   pg_temp.mailname(fn.w) || '.' || pg_temp.mailname(ln.w) || gu.u
	   || CASE pg_temp.f(gu.m, 0) % 3 WHEN 0 THEN '@example.com' WHEN 1 THEN '@example.net'
		  ELSE '@mail.example.org' END,
	   fn.w || ' ' || ln.w,
	   :'start'::timestamptz + (pg_temp.f(gu.m, 1) % (60 * 86400)) * interval '1 second'
FROM gen_user gu
JOIN gen_word fn ON fn.list = 'first' AND fn.j = pg_temp.f(gu.nm, 0) % 16
JOIN gen_word ln ON ln.list = 'last' AND ln.j = pg_temp.f(gu.nm, 1) % 12;

-- ---------------------------------------------------------------------
-- Videos.  Uploaders are skewed toward the first users (user 1 uploads
-- about a fifth).  Uploads happen from day 60 to day 360, after every
-- sign-up, at a second given by an affine bijection of the video number
-- mod 300 days of seconds (multiplier coprime to 2, 3 and 5): no two videos
-- share an upload time, so Q2's order never depends on its uuid
-- tie-breaker.  20% have no description (NULL).
-- ---------------------------------------------------------------------
SELECT pg_temp.f(md5(:'seed' || ':upload'), 0) AS upload_offset \gset
CREATE TEMP TABLE gen_video ON COMMIT DROP AS
SELECT v, pg_temp.id(:'seed', 'video', v) AS video_id, x.m,
	   1 + floor(:users * power(pg_temp.f(x.m, 0) / 4294967296.0, 2))::int AS uploader,
	   :'start'::timestamptz
	   + (60 * 86400 + (v::bigint * 1103515249 + :upload_offset) % (300 * 86400)) * interval '1 second'
	   AS uploaded_at
FROM generate_series(1, :videos) v
CROSS JOIN LATERAL (SELECT md5(:'seed' || ':video:' || v) AS m OFFSET 0) x;
CREATE UNIQUE INDEX ON gen_video (v);
ANALYZE gen_video;

INSERT INTO videos (video_id, uploader_id, title, description, duration_s, uploaded_at)
SELECT gv.video_id, gu.user_id,
	   tp.w || ' – ' || kd.w || ' #' || gv.v,
	   CASE WHEN pg_temp.f(gv.m, 3) % 5 = 0 THEN NULL
			ELSE 'About ' || lower(tp.w) || ', ' || (1 + pg_temp.f(gv.m, 3) / 5 % 30) || ' minutes of it.' END,
	   30 + (pg_temp.f(gv.m, 2) / 12 % 3600)::int,
	   gv.uploaded_at
FROM gen_video gv
JOIN gen_user gu ON gu.u = gv.uploader
JOIN gen_word tp ON tp.list = 'topic' AND tp.j = pg_temp.f(gv.m, 2) % 12
JOIN gen_word kd ON kd.list = 'kind' AND kd.j = pg_temp.f(gv.m, 3) / 150 % 8;

-- ---------------------------------------------------------------------
-- Tags: a catalogue of 16 with skewed popularity (music on ~60% of the
-- videos: the widest videos_by_tag partition); "archive" is on no video.
-- Every 25th video (v % 25 = 7) has no tag at all (empty set).
-- ---------------------------------------------------------------------
CREATE TEMP TABLE gen_tag ON COMMIT DROP AS
SELECT ord::int AS tag_id, w AS name, pct
FROM unnest(ARRAY['music', 'cats', 'cooking', 'travel', 'gaming', 'education', 'sports', 'news',
				  'comedy', 'diy', 'science', 'rock''n''roll', 'café', 'tutorial', 'vlog', 'archive'],
			ARRAY[60, 45, 35, 30, 25, 20, 18, 15, 12, 10, 8, 6, 5, 4, 3, 0]) WITH ORDINALITY u (w, pct, ord);

INSERT INTO tags (tag_id, name)
SELECT tag_id, name FROM gen_tag;

INSERT INTO video_tag (video_id, tag_id)
SELECT gv.video_id, t.tag_id
FROM gen_video gv
CROSS JOIN gen_tag t
WHERE gv.v % 25 <> 7
  AND pg_temp.f(md5(:'seed' || ':tag:' || gv.v || ':' || t.tag_id), 0) % 100 < t.pct;

-- ---------------------------------------------------------------------
-- Comments.  Videos are skewed (video 1 gets about a seventh of them, some
-- get none), authors uniform.  A comment is posted on a 10-minute grid
-- within 14 days after the upload.  Every 50th comment is posted in the
-- same second as the previous one on the same video, and every 100th also
-- by the same user (a double post): created_at is unique neither per video
-- nor per user (trap: MR5 needs comment_id in the clustering key).
-- ---------------------------------------------------------------------
CREATE TEMP TABLE gen_comment ON COMMIT DROP AS
SELECT n, x.m,
	   1 + floor(:videos * power(pg_temp.f(x.m, 0) / 4294967296.0, 2))::int AS v,
	   1 + (pg_temp.f(x.m, 1) % :users)::int AS u,
	   (pg_temp.f(x.m, 2) % (14 * 24 * 6)) * 600 AS offset_s
FROM generate_series(1, :comments) n
-- the "same second as the previous comment" rule takes the video and the
-- time of comment n - 1, so both are drawn from n - 1's md5
CROSS JOIN LATERAL (SELECT md5(:'seed' || ':comment:' || (n - (n % 50 = 0)::int)) AS m,
						   md5(:'seed' || ':comment:' || (n - (n % 100 = 0)::int)) AS um OFFSET 0) y
CROSS JOIN LATERAL (SELECT overlay(y.m PLACING substr(y.um, 9, 8) FROM 9) AS m OFFSET 0) x;

INSERT INTO comments (comment_id, video_id, user_id, created_at, body)
SELECT gc.n, gv.video_id, gu.user_id,
	   gv.uploaded_at + gc.offset_s * interval '1 second',
	   cw.w
FROM gen_comment gc
JOIN gen_video gv ON gv.v = gc.v
JOIN gen_user gu ON gu.u = gc.u
JOIN gen_word cw ON cw.list = 'comment' AND cw.j = pg_temp.f(md5(:'seed' || ':body:' || gc.n), 0) % 12;
COMMIT;

VACUUM ANALYZE users, videos, tags, video_tag, comments;

-- row counts (plain SQL: query_to_xml() would need a server built with libxml)
SELECT t AS "table", n AS "rows"
FROM (VALUES
	(1, 'users', (SELECT count(*) FROM video_rel.users)),
	(2, 'videos', (SELECT count(*) FROM video_rel.videos)),
	(3, 'tags', (SELECT count(*) FROM video_rel.tags)),
	(4, 'video_tag', (SELECT count(*) FROM video_rel.video_tag)),
	(5, 'comments', (SELECT count(*) FROM video_rel.comments))) AS u (ord, t, n)
ORDER BY ord;

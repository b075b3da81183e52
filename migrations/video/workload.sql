--
-- workload.sql
--	  The five application queries of the video example as plain SQL over
--	  schema video_rel.
--
-- Run in psql (every parameter given with -v; the file prints five results):
--	  psql -X -d DB -v video_id=2bbde290-6cba-4e92-85c9-5c8b2406201a -v tag=music \
--		   -v user_id=7eb98b54-b786-4884-8724-5575b34f8602 \
--		   -v start_time='2026-03-01 00:00:00+00' -v end_time='2026-07-01 00:00:00+00' \
--		   -v email=hiro.rossi1@example.com -f migrations/video/workload.sql
--	  (values that exist in generate.sql's default data; check.sql runs every
--	  query with values it picks from the data and checks this format)
--
-- FORMAT (stable; the same as migrations/hotel/workload.sql, so one program
-- splits both files without a SQL parser):
--	* Everything before the first line starting with "-- name:" is this header.
--	* A block is: metadata lines "-- <key>: <value>" (first key is "name";
--	  then "description", "params", "target"; unknown keys are to be ignored),
--	  then exactly one SQL statement.  Blocks are separated by one blank line.
--	* name:		  Q<n>_<words>, unique, [A-Za-z0-9_].
--	  description: one line.
--	  params:	  comma-separated "<name> <PostgreSQL type>" pairs in order of
--				  first use, or "none".
--	  target:	  the table serving this query in the expected Cassandra
--				  model (keyspace.table, see README.md), for comparison only.
--	  published_key: optional; that table's primary key as expected, in
--				  CQL syntax ((partition key), clustering...), for comparison
--				  only (cqlbridge plan checks it against the data, MR5).
--	* The statement starts at the first line after the metadata, ends at the
--	  first line whose last character is ";", and contains no other ";",
--	  no comment lines and no blank lines.
--	* A parameter appears only as :'<name>' (psql's quoted-literal
--	  interpolation), followed by an explicit cast when its type is not text.
--	  A program replaces each :'<name>' by $k (k = position in params) and
--	  prepares the statement with the declared types; psql substitutes the
--	  -v value as a quoted literal.  The character sequence :' occurs
--	  nowhere else.
--	* Tables are schema-qualified (video_rel.), so no search_path is needed.
--
-- CONVENTIONS:
--	* Each query returns the rows of its target table: the key columns it
--	  searches by and the columns the target stores, under the target's
--	  column names (tag, user_name, uploader_name, video_title, ...).
--	* Where a target column is a collection the query aggregates, in
--	  cql_fdw's representation of that CQL type: set<text> -> text[] sorted
--	  and distinct.  An empty collection is NULL, as in Cassandra.
--	* Deterministic: every query that can return more than one row has an
--	  ORDER BY on the target's clustering order, made total by the source
--	  key (comment_id, video_id): created_at is unique neither per video
--	  nor per user in the generated data, which check.sql verifies.
--	* Time ranges are half-open: start inclusive, end exclusive.
--
-- IDENTIFICATION
--	  migrations/video/workload.sql
--

-- name: Q1_comments_by_video
-- description: comments on a given video, newest first, with the commenter's name
-- params: video_id uuid
-- target: video.comments_by_video
-- published_key: ((video_id), created_at, comment_id)
SELECT c.video_id, c.created_at, c.comment_id, c.user_id, u.name AS user_name, c.body
FROM video_rel.comments c
JOIN video_rel.users u ON u.user_id = c.user_id
WHERE c.video_id = :'video_id'::uuid
ORDER BY c.created_at DESC, c.comment_id;

-- name: Q2_videos_by_tag
-- description: videos with a given tag, newest first, with the uploader's name
-- params: tag text
-- target: video.videos_by_tag
-- published_key: ((tag), uploaded_at, video_id)
SELECT t.name AS tag, v.uploaded_at, v.video_id, v.title, v.duration_s,
       v.uploader_id, u.name AS uploader_name
FROM video_rel.tags t
JOIN video_rel.video_tag vt ON vt.tag_id = t.tag_id
JOIN video_rel.videos v ON v.video_id = vt.video_id
JOIN video_rel.users u ON u.user_id = v.uploader_id
WHERE t.name = :'tag'
ORDER BY v.uploaded_at DESC, v.video_id;

-- name: Q3_video_by_id
-- description: a video by id with the names of its tags (a set; NULL when it has none)
-- params: video_id uuid
-- target: video.videos
-- published_key: ((video_id))
SELECT v.video_id, v.uploader_id, v.title, v.description, v.duration_s, v.uploaded_at,
       (SELECT array_agg(DISTINCT t.name ORDER BY t.name)
        FROM video_rel.video_tag vt
        JOIN video_rel.tags t ON t.tag_id = vt.tag_id
        WHERE vt.video_id = v.video_id) AS tags
FROM video_rel.videos v
WHERE v.video_id = :'video_id'::uuid;

-- name: Q4_comments_by_user
-- description: comments of a given user posted in [start_time, end_time), newest first, with the video's title
-- params: user_id uuid, start_time timestamptz, end_time timestamptz
-- target: video.comments_by_user
-- published_key: ((user_id), created_at, comment_id)
SELECT c.user_id, c.created_at, c.comment_id, c.video_id, v.title AS video_title, c.body
FROM video_rel.comments c
JOIN video_rel.videos v ON v.video_id = c.video_id
WHERE c.user_id = :'user_id'::uuid
  AND c.created_at >= :'start_time'::timestamptz
  AND c.created_at < :'end_time'::timestamptz
ORDER BY c.created_at DESC, c.comment_id;

-- name: Q5_user_by_email
-- description: a user by email address (emails are unique; names are not)
-- params: email text
-- target: video.users_by_email
-- published_key: ((email))
SELECT u.email, u.user_id, u.name, u.created_at
FROM video_rel.users u
WHERE u.email = :'email';

-- 004_verify.sql: per workload query, parameter samples from the source view and the searched relation,
-- the original query (source) and the same question asked of the foreign table (target).

-- query: Q1_comments_by_video
-- description: comments on a given video, newest first, with the commenter's name
-- params: video_id uuid
-- table: video.comments_by_video_id
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.video_id FROM (SELECT DISTINCT s.video_id FROM cqlbridge_video.comments_by_video_id_src s) d ORDER BY md5(d.video_id::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.video_id FROM (SELECT DISTINCT r.video_id AS video_id FROM video_rel.comments r WHERE r.video_id IS NOT NULL) d ORDER BY md5(d.video_id::text) LIMIT $1 / 2) r;
-- source
SELECT s.video_id, date_trunc('milliseconds', s.created_at) AS created_at, s.comment_id, s.user_id, s.user_name, s.body FROM (SELECT c.video_id, c.created_at, c.comment_id, c.user_id, u.name AS user_name, c.body
FROM video_rel.comments c
JOIN video_rel.users u ON u.user_id = c.user_id
WHERE c.video_id = $1::uuid
ORDER BY c.created_at DESC, c.comment_id) s;
-- target
SELECT t.video_id, t.created_at, t.comment_id, t.user_id, t.user_name, t.body
FROM video_cql.comments_by_video_id t
WHERE t.video_id = $1
ORDER BY t.created_at DESC, t.comment_id;

-- query: Q2_videos_by_tag
-- description: videos with a given tag, newest first, with the uploader's name
-- params: tag text
-- table: video.videos_by_tag
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.tag FROM (SELECT DISTINCT s.tag FROM cqlbridge_video.videos_by_tag_src s) d ORDER BY md5(d.tag::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.tag FROM (SELECT DISTINCT r.name AS tag FROM video_rel.tags r WHERE r.name IS NOT NULL) d ORDER BY md5(d.tag::text) LIMIT $1 / 2) r;
-- source
SELECT s.tag, date_trunc('milliseconds', s.uploaded_at) AS uploaded_at, s.video_id, s.title, s.duration_s, s.uploader_id, s.uploader_name FROM (SELECT t.name AS tag, v.uploaded_at, v.video_id, v.title, v.duration_s,
       v.uploader_id, u.name AS uploader_name
FROM video_rel.tags t
JOIN video_rel.video_tag vt ON vt.tag_id = t.tag_id
JOIN video_rel.videos v ON v.video_id = vt.video_id
JOIN video_rel.users u ON u.user_id = v.uploader_id
WHERE t.name = $1
ORDER BY v.uploaded_at DESC, v.video_id) s;
-- target
SELECT t.tag, t.uploaded_at, t.video_id, t.title, t.duration_s, t.uploader_id, t.uploader_name
FROM video_cql.videos_by_tag t
WHERE t.tag = $1
ORDER BY t.uploaded_at DESC, t.video_id;

-- query: Q3_video_by_id
-- description: a video by id with the names of its tags (a set; NULL when it has none)
-- params: video_id uuid
-- table: video.videos
-- ordered: false
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.video_id FROM (SELECT DISTINCT s.video_id FROM cqlbridge_video.videos_src s) d ORDER BY md5(d.video_id::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.video_id FROM (SELECT DISTINCT r.video_id AS video_id FROM video_rel.videos r WHERE r.video_id IS NOT NULL) d ORDER BY md5(d.video_id::text) LIMIT $1 / 2) r;
-- source
SELECT s.video_id, s.uploader_id, s.title, s.description, s.duration_s, date_trunc('milliseconds', s.uploaded_at) AS uploaded_at, s.tags FROM (SELECT v.video_id, v.uploader_id, v.title, v.description, v.duration_s, v.uploaded_at,
       (SELECT array_agg(DISTINCT t.name ORDER BY t.name)
        FROM video_rel.video_tag vt
        JOIN video_rel.tags t ON t.tag_id = vt.tag_id
        WHERE vt.video_id = v.video_id) AS tags
FROM video_rel.videos v
WHERE v.video_id = $1::uuid) s;
-- target
SELECT t.video_id, t.uploader_id, t.title, t.description, t.duration_s, t.uploaded_at, CASE WHEN t.tags IS NULL THEN NULL ELSE ARRAY(SELECT e FROM unnest(t.tags) e ORDER BY e) END AS tags
FROM video_cql.videos t
WHERE t.video_id = $1;

-- query: Q4_comments_by_user
-- description: comments of a given user posted in [start_time, end_time), newest first, with the video's title
-- params: user_id uuid, start_time timestamptz, end_time timestamptz
-- table: video.comments_by_user_id
-- ordered: true
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.user_id, d.created_at, (d.created_at + interval '7 days') FROM (SELECT DISTINCT s.user_id, s.created_at FROM cqlbridge_video.comments_by_user_id_src s) d ORDER BY md5(d.user_id::text || '|' || d.created_at::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.user_id, d.created_at, (d.created_at + interval '7 days') FROM (SELECT DISTINCT r.user_id AS user_id, date_trunc('milliseconds', r.created_at) AS created_at FROM video_rel.comments r WHERE r.user_id IS NOT NULL AND r.created_at IS NOT NULL) d ORDER BY md5(d.user_id::text || '|' || d.created_at::text) LIMIT $1 / 2) r;
-- source
SELECT s.user_id, date_trunc('milliseconds', s.created_at) AS created_at, s.comment_id, s.video_id, s.video_title, s.body FROM (SELECT c.user_id, c.created_at, c.comment_id, c.video_id, v.title AS video_title, c.body
FROM video_rel.comments c
JOIN video_rel.videos v ON v.video_id = c.video_id
WHERE c.user_id = $1::uuid
  AND c.created_at >= $2::timestamptz
  AND c.created_at < $3::timestamptz
ORDER BY c.created_at DESC, c.comment_id) s;
-- target
SELECT t.user_id, t.created_at, t.comment_id, t.video_id, t.video_title, t.body
FROM video_cql.comments_by_user_id t
WHERE t.user_id = $1 AND t.created_at >= $2 AND t.created_at < $3
ORDER BY t.created_at DESC, t.comment_id;

-- query: Q5_user_by_email
-- description: a user by email address (emails are unique; names are not)
-- params: email text
-- table: video.users_by_email
-- ordered: false
-- single_partition: true
-- sample
SELECT * FROM (SELECT d.email FROM (SELECT DISTINCT s.email FROM cqlbridge_video.users_by_email_src s) d ORDER BY md5(d.email::text) LIMIT $1 - $1 / 2) v
UNION ALL
SELECT * FROM (SELECT d.email FROM (SELECT DISTINCT r.email AS email FROM video_rel.users r WHERE r.email IS NOT NULL) d ORDER BY md5(d.email::text) LIMIT $1 / 2) r;
-- source
SELECT s.email, s.user_id, s.name, date_trunc('milliseconds', s.created_at) AS created_at FROM (SELECT u.email, u.user_id, u.name, u.created_at
FROM video_rel.users u
WHERE u.email = $1) s;
-- target
SELECT t.email, t.user_id, t.name, t.created_at
FROM video_cql.users_by_email t
WHERE t.email = $1;

-- 003_load.sql: per target table, the SELECT of its rows (columns in the order of "columns").
-- apply streams them into the foreign table in one pass, ordered by the partition key and
-- resumable batch by batch, or with --chunks N in hash chunks of whole partitions.
-- "affected" lines: source relation (primary key) | key columns of the target rows it feeds.
-- Names are SQL identifiers, quoted where needed; the keyspace names the plan's objects.
-- keyspace: video

-- table: video.comments_by_video_id
-- foreign_table: video_cql.comments_by_video_id
-- source_view: cqlbridge_video.comments_by_video_id_src
-- columns: video_id, created_at, comment_id, user_id, user_name, body
-- key: video_id, created_at, comment_id
-- partition_key: video_id
-- rows: 400
-- affected: video_rel.comments (comment_id) | SELECT s.video_id, s.created_at, s.comment_id FROM cqlbridge_video.comments_by_video_id_src s WHERE s.lin_c_comment_id = $1
-- affected: video_rel.users (user_id) | SELECT s.video_id, s.created_at, s.comment_id FROM cqlbridge_video.comments_by_video_id_src s WHERE s.lin_u_user_id = $1
SELECT s.video_id, s.created_at, s.comment_id, s.user_id, s.user_name, s.body
FROM cqlbridge_video.comments_by_video_id_src s;

-- table: video.videos_by_tag
-- foreign_table: video_cql.videos_by_tag
-- source_view: cqlbridge_video.videos_by_tag_src
-- columns: tag, uploaded_at, video_id, title, duration_s, uploader_id, uploader_name
-- key: tag, uploaded_at, video_id
-- partition_key: tag
-- rows: 130
-- affected: video_rel.tags (tag_id) | SELECT s.tag, s.uploaded_at, s.video_id FROM cqlbridge_video.videos_by_tag_src s WHERE s.lin_t_tag_id = $1
-- affected: video_rel.video_tag (video_id, tag_id) | SELECT s.tag, s.uploaded_at, s.video_id FROM cqlbridge_video.videos_by_tag_src s WHERE s.lin_vt_video_id = $1 AND s.lin_vt_tag_id = $2
-- affected: video_rel.videos (video_id) | SELECT s.tag, s.uploaded_at, s.video_id FROM cqlbridge_video.videos_by_tag_src s WHERE s.lin_v_video_id = $1
-- affected: video_rel.users (user_id) | SELECT s.tag, s.uploaded_at, s.video_id FROM cqlbridge_video.videos_by_tag_src s WHERE s.lin_u_user_id = $1
SELECT s.tag, s.uploaded_at, s.video_id, s.title, s.duration_s, s.uploader_id, s.uploader_name
FROM cqlbridge_video.videos_by_tag_src s;

-- table: video.videos
-- foreign_table: video_cql.videos
-- source_view: cqlbridge_video.videos_src
-- columns: video_id, uploader_id, title, description, duration_s, uploaded_at, tags
-- key: video_id
-- partition_key: video_id
-- rows: 50
-- affected: video_rel.videos (video_id) | SELECT s.video_id FROM cqlbridge_video.videos_src s WHERE s.lin_v_video_id = $1
-- affected: video_rel.video_tag (video_id, tag_id) | SELECT s.video_id FROM cqlbridge_video.videos_src s WHERE (s.lin_v_video_id) IN (SELECT vt.video_id FROM video_rel.video_tag vt WHERE vt.video_id = $1 AND vt.tag_id = $2)
-- affected: video_rel.tags (tag_id) | SELECT s.video_id FROM cqlbridge_video.videos_src s WHERE (s.lin_v_video_id) IN (SELECT vt.video_id FROM video_rel.tags t, video_rel.video_tag vt WHERE t.tag_id = vt.tag_id AND t.tag_id = $1)
SELECT s.video_id, s.uploader_id, s.title, s.description, s.duration_s, s.uploaded_at, s.tags
FROM cqlbridge_video.videos_src s;

-- table: video.comments_by_user_id
-- foreign_table: video_cql.comments_by_user_id
-- source_view: cqlbridge_video.comments_by_user_id_src
-- columns: user_id, created_at, comment_id, video_id, video_title, body
-- key: user_id, created_at, comment_id
-- partition_key: user_id
-- rows: 400
-- affected: video_rel.comments (comment_id) | SELECT s.user_id, s.created_at, s.comment_id FROM cqlbridge_video.comments_by_user_id_src s WHERE s.lin_c_comment_id = $1
-- affected: video_rel.videos (video_id) | SELECT s.user_id, s.created_at, s.comment_id FROM cqlbridge_video.comments_by_user_id_src s WHERE s.lin_v_video_id = $1
SELECT s.user_id, s.created_at, s.comment_id, s.video_id, s.video_title, s.body
FROM cqlbridge_video.comments_by_user_id_src s;

-- table: video.users_by_email
-- foreign_table: video_cql.users_by_email
-- source_view: cqlbridge_video.users_by_email_src
-- columns: email, user_id, name, created_at
-- key: email
-- partition_key: email
-- rows: 20
-- affected: video_rel.users (user_id) | SELECT s.email FROM cqlbridge_video.users_by_email_src s WHERE s.lin_u_user_id = $1
SELECT s.email, s.user_id, s.name, s.created_at
FROM cqlbridge_video.users_by_email_src s;

-- 002_foreign_tables.sql: foreign tables of keyspace video and the source views
-- (the target rows computed from the relational tables, in CQL shape, then lineage columns).
-- Run in one transaction; re-runnable.
-- Create the schemas, or check that they belong to the role running this.
DO $cqlbridge$
DECLARE
	s text;
	owner name;
BEGIN
	FOREACH s IN ARRAY ARRAY['cqlbridge', 'cqlbridge_video', 'video_cql']::text[] LOOP
		SELECT pg_catalog.pg_get_userbyid(n.nspowner) INTO owner
			FROM pg_catalog.pg_namespace n WHERE n.nspname = s;
		IF NOT FOUND THEN
			EXECUTE pg_catalog.format('CREATE SCHEMA %I', s);
		ELSIF owner <> CURRENT_USER THEN
			RAISE EXCEPTION 'schema % belongs to role %, not to %', pg_catalog.quote_ident(s), owner, CURRENT_USER
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = 'The owner of a schema can drop and replace the objects in it; cqlbridge keeps its objects in schemas of the role that runs it.',
					  HINT = pg_catalog.format('Run cqlbridge as role %I, or take the schema over: ALTER SCHEMA %I OWNER TO %I.', owner, s, CURRENT_USER);
		END IF;
	END LOOP;
END
$cqlbridge$;

DROP FOREIGN TABLE IF EXISTS video_cql.comments_by_video_id;
CREATE FOREIGN TABLE video_cql.comments_by_video_id (
    video_id uuid OPTIONS (column_name 'video_id', kind 'partition_key', position '0', cql_type 'uuid') NOT NULL,
    created_at timestamp with time zone OPTIONS (column_name 'created_at', kind 'clustering', position '0', clustering_order 'desc', cql_type 'timestamp') NOT NULL,
    comment_id bigint OPTIONS (column_name 'comment_id', kind 'clustering', position '1', clustering_order 'asc', cql_type 'bigint') NOT NULL,
    user_id uuid OPTIONS (column_name 'user_id', kind 'regular', cql_type 'uuid'),
    user_name text OPTIONS (column_name 'user_name', kind 'regular', cql_type 'text'),
    body text OPTIONS (column_name 'body', kind 'regular', cql_type 'text')
) SERVER cqlbridge OPTIONS (keyspace 'video', "table" 'comments_by_video_id');
DROP VIEW IF EXISTS cqlbridge_video.comments_by_video_id_src;
CREATE VIEW cqlbridge_video.comments_by_video_id_src WITH (security_invoker = true) AS
SELECT q.video_id, date_trunc('milliseconds', q.created_at) AS created_at, q.comment_id, q.user_id, q.user_name, q.body, q.lin_c_comment_id, q.lin_u_user_id
FROM ( SELECT c.video_id,
    c.created_at,
    c.comment_id,
    c.user_id,
    u.name AS user_name,
    c.body,
    c.comment_id AS lin_c_comment_id,
    u.user_id AS lin_u_user_id
   FROM (video_rel.comments c
     JOIN video_rel.users u ON ((u.user_id = c.user_id)))) q;

DROP FOREIGN TABLE IF EXISTS video_cql.videos_by_tag;
CREATE FOREIGN TABLE video_cql.videos_by_tag (
    tag text OPTIONS (column_name 'tag', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    uploaded_at timestamp with time zone OPTIONS (column_name 'uploaded_at', kind 'clustering', position '0', clustering_order 'desc', cql_type 'timestamp') NOT NULL,
    video_id uuid OPTIONS (column_name 'video_id', kind 'clustering', position '1', clustering_order 'asc', cql_type 'uuid') NOT NULL,
    title text OPTIONS (column_name 'title', kind 'regular', cql_type 'text'),
    duration_s integer OPTIONS (column_name 'duration_s', kind 'regular', cql_type 'int'),
    uploader_id uuid OPTIONS (column_name 'uploader_id', kind 'regular', cql_type 'uuid'),
    uploader_name text OPTIONS (column_name 'uploader_name', kind 'regular', cql_type 'text')
) SERVER cqlbridge OPTIONS (keyspace 'video', "table" 'videos_by_tag');
DROP VIEW IF EXISTS cqlbridge_video.videos_by_tag_src;
CREATE VIEW cqlbridge_video.videos_by_tag_src WITH (security_invoker = true) AS
SELECT q.tag, date_trunc('milliseconds', q.uploaded_at) AS uploaded_at, q.video_id, q.title, q.duration_s, q.uploader_id, q.uploader_name, q.lin_t_tag_id, q.lin_vt_video_id, q.lin_vt_tag_id, q.lin_v_video_id, q.lin_u_user_id
FROM ( SELECT t.name AS tag,
    v.uploaded_at,
    v.video_id,
    v.title,
    v.duration_s,
    v.uploader_id,
    u.name AS uploader_name,
    t.tag_id AS lin_t_tag_id,
    vt.video_id AS lin_vt_video_id,
    vt.tag_id AS lin_vt_tag_id,
    v.video_id AS lin_v_video_id,
    u.user_id AS lin_u_user_id
   FROM (((video_rel.tags t
     JOIN video_rel.video_tag vt ON ((vt.tag_id = t.tag_id)))
     JOIN video_rel.videos v ON ((v.video_id = vt.video_id)))
     JOIN video_rel.users u ON ((u.user_id = v.uploader_id)))) q;

DROP FOREIGN TABLE IF EXISTS video_cql.videos;
CREATE FOREIGN TABLE video_cql.videos (
    video_id uuid OPTIONS (column_name 'video_id', kind 'partition_key', position '0', cql_type 'uuid') NOT NULL,
    uploader_id uuid OPTIONS (column_name 'uploader_id', kind 'regular', cql_type 'uuid'),
    title text OPTIONS (column_name 'title', kind 'regular', cql_type 'text'),
    description text OPTIONS (column_name 'description', kind 'regular', cql_type 'text'),
    duration_s integer OPTIONS (column_name 'duration_s', kind 'regular', cql_type 'int'),
    uploaded_at timestamp with time zone OPTIONS (column_name 'uploaded_at', kind 'regular', cql_type 'timestamp'),
    tags text[] OPTIONS (column_name 'tags', kind 'regular', cql_type 'set<text>')
) SERVER cqlbridge OPTIONS (keyspace 'video', "table" 'videos');
DROP VIEW IF EXISTS cqlbridge_video.videos_src;
CREATE VIEW cqlbridge_video.videos_src WITH (security_invoker = true) AS
SELECT q.video_id, q.uploader_id, q.title, q.description, q.duration_s, date_trunc('milliseconds', q.uploaded_at) AS uploaded_at, q.tags, q.lin_v_video_id
FROM ( SELECT video_id,
    uploader_id,
    title,
    description,
    duration_s,
    uploaded_at,
    ( SELECT array_agg(DISTINCT t.name ORDER BY t.name) AS array_agg
           FROM (video_rel.video_tag vt
             JOIN video_rel.tags t ON ((t.tag_id = vt.tag_id)))
          WHERE (vt.video_id = v.video_id)) AS tags,
    video_id AS lin_v_video_id
   FROM video_rel.videos v) q;

DROP FOREIGN TABLE IF EXISTS video_cql.comments_by_user_id;
CREATE FOREIGN TABLE video_cql.comments_by_user_id (
    user_id uuid OPTIONS (column_name 'user_id', kind 'partition_key', position '0', cql_type 'uuid') NOT NULL,
    created_at timestamp with time zone OPTIONS (column_name 'created_at', kind 'clustering', position '0', clustering_order 'desc', cql_type 'timestamp') NOT NULL,
    comment_id bigint OPTIONS (column_name 'comment_id', kind 'clustering', position '1', clustering_order 'asc', cql_type 'bigint') NOT NULL,
    video_id uuid OPTIONS (column_name 'video_id', kind 'regular', cql_type 'uuid'),
    video_title text OPTIONS (column_name 'video_title', kind 'regular', cql_type 'text'),
    body text OPTIONS (column_name 'body', kind 'regular', cql_type 'text')
) SERVER cqlbridge OPTIONS (keyspace 'video', "table" 'comments_by_user_id');
DROP VIEW IF EXISTS cqlbridge_video.comments_by_user_id_src;
CREATE VIEW cqlbridge_video.comments_by_user_id_src WITH (security_invoker = true) AS
SELECT q.user_id, date_trunc('milliseconds', q.created_at) AS created_at, q.comment_id, q.video_id, q.video_title, q.body, q.lin_c_comment_id, q.lin_v_video_id
FROM ( SELECT c.user_id,
    c.created_at,
    c.comment_id,
    c.video_id,
    v.title AS video_title,
    c.body,
    c.comment_id AS lin_c_comment_id,
    v.video_id AS lin_v_video_id
   FROM (video_rel.comments c
     JOIN video_rel.videos v ON ((v.video_id = c.video_id)))) q;

DROP FOREIGN TABLE IF EXISTS video_cql.users_by_email;
CREATE FOREIGN TABLE video_cql.users_by_email (
    email text OPTIONS (column_name 'email', kind 'partition_key', position '0', cql_type 'text') NOT NULL,
    user_id uuid OPTIONS (column_name 'user_id', kind 'regular', cql_type 'uuid'),
    name text OPTIONS (column_name 'name', kind 'regular', cql_type 'text'),
    created_at timestamp with time zone OPTIONS (column_name 'created_at', kind 'regular', cql_type 'timestamp')
) SERVER cqlbridge OPTIONS (keyspace 'video', "table" 'users_by_email');
DROP VIEW IF EXISTS cqlbridge_video.users_by_email_src;
CREATE VIEW cqlbridge_video.users_by_email_src WITH (security_invoker = true) AS
SELECT q.email, q.user_id, q.name, date_trunc('milliseconds', q.created_at) AS created_at, q.lin_u_user_id
FROM ( SELECT email,
    user_id,
    name,
    created_at,
    user_id AS lin_u_user_id
   FROM video_rel.users u) q;

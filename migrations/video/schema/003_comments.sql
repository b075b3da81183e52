--
-- 003_comments.sql
--	  Comments: a user comments on a video at a point in time.
--
-- comment_id is the key; created_at is NOT unique, not even per video or
-- per user (two comments posted in the same second), so a Cassandra table
-- clustered by created_at alone would silently merge them: the comment id
-- must follow it in the clustering key (MR5).
--
-- IDENTIFICATION
--	  migrations/video/schema/003_comments.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS video_rel;
SET search_path = video_rel;

CREATE TABLE IF NOT EXISTS comments (
	comment_id			bigint PRIMARY KEY,
	video_id			uuid NOT NULL REFERENCES videos (video_id) ON DELETE CASCADE,
	user_id				uuid NOT NULL REFERENCES users (user_id),
	created_at			timestamptz NOT NULL,
	body				text NOT NULL
);
COMMENT ON TABLE comments IS 'A comment on a video by a user. created_at (whole seconds) is not unique per video or per user.';
COMMIT;

--
-- 004_workload_indexes.sql
--	  Secondary indexes so the relational side answers Q1-Q5 by index too.
--
-- Primary keys and unique constraints of 001-003 already serve:
--	  Q3 videos (video_id) and video_tag (video_id, ...); Q5 users (email).
-- What is missing are the reverse directions of the foreign keys:
--	  Q1 comments of a video, newest first; Q2 tag name -> videos;
--	  Q4 comments of a user in a time range.
-- videos (uploader_id) is the index of the foreign key (deleting a user).
--
-- For a large load, apply this file after generate.sql: building an index
-- once is cheaper than maintaining it row by row.
--
-- IDENTIFICATION
--	  migrations/video/schema/004_workload_indexes.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS video_rel;
SET search_path = video_rel;

-- Q1: comments of a video, newest first, ties by comment id
CREATE INDEX IF NOT EXISTS comments_video_idx ON comments (video_id, created_at DESC, comment_id);
-- Q4: comments of a user in a time range
CREATE INDEX IF NOT EXISTS comments_user_idx ON comments (user_id, created_at DESC, comment_id);
-- Q2: videos of a tag
CREATE INDEX IF NOT EXISTS video_tag_tag_idx ON video_tag (tag_id, video_id);
-- foreign key of videos
CREATE INDEX IF NOT EXISTS videos_uploader_idx ON videos (uploader_id);
COMMIT;

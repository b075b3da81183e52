--
-- 002_videos_tags.sql
--	  Videos (each uploaded by one user), tags, and the m:n video_tag.
--
-- A tag is a catalogue entry with a unique name, so tables keyed by the tag
-- name are keyed by a natural key proven unique by the schema.  A video may
-- have no tag at all: its tag set is then empty, which Cassandra (and the
-- workload's Q3) reads back as NULL.
--
-- IDENTIFICATION
--	  migrations/video/schema/002_videos_tags.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS video_rel;
SET search_path = video_rel;

CREATE TABLE IF NOT EXISTS videos (
	video_id			uuid PRIMARY KEY,
	uploader_id			uuid NOT NULL REFERENCES users (user_id),
	title				text NOT NULL,
	description			text,
	duration_s			integer NOT NULL CHECK (duration_s > 0),
	uploaded_at			timestamptz NOT NULL
);
COMMENT ON TABLE videos IS 'A video, uploaded by one user. description is nullable (a NULL is a tombstone when written to Cassandra).';

CREATE TABLE IF NOT EXISTS tags (
	tag_id				integer PRIMARY KEY,
	name				text NOT NULL UNIQUE
);
COMMENT ON TABLE tags IS 'Tag catalogue; names are unique.';

CREATE TABLE IF NOT EXISTS video_tag (
	video_id			uuid NOT NULL REFERENCES videos (video_id) ON DELETE CASCADE,
	tag_id				integer NOT NULL REFERENCES tags (tag_id) ON DELETE CASCADE,
	PRIMARY KEY (video_id, tag_id)
);
COMMENT ON TABLE video_tag IS 'm:n: the video is tagged with the tag (set semantics).';
COMMIT;

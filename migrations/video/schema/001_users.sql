--
-- 001_users.sql
--	  Users of the video site.
--
-- Relational side of the video example (a KillrVideo-like site: users upload
-- videos, tag them and comment on them), the second schema for cqlbridge.
--
-- Every migration file of this directory is self-contained: it creates the
-- schema if needed and sets search_path itself, so a runner may apply the
-- files one by one, in name order, each in its own session.  IF NOT EXISTS
-- makes a second run a no-op (it does not alter existing tables).
--
-- The display name is NOT unique (two users may both be "Ana Silva"); the
-- email is, so a table keyed by email alone is safe from the constraints,
-- while one keyed by name needs user_id in its key (MR5).
--
-- IDENTIFICATION
--	  migrations/video/schema/001_users.sql
--
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS video_rel;
SET search_path = video_rel;

CREATE TABLE IF NOT EXISTS users (
	user_id				uuid PRIMARY KEY,
	email				text NOT NULL UNIQUE CHECK (email = lower(email) AND email LIKE '%_@_%'),
	name				text NOT NULL,
	created_at			timestamptz NOT NULL
);
COMMENT ON TABLE users IS 'A user (viewer, uploader, commenter). email is unique, name is not. Source of users_by_email and of the denormalized user/uploader names.';
COMMENT ON COLUMN users.created_at IS 'Sign-up time, whole seconds (Cassandra timestamps keep milliseconds).';
COMMIT;

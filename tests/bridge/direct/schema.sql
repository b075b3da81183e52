--
-- tests/bridge/direct/schema.sql
--	  A small source schema for tests/bridge/test_stream_direct.sh (the
--	  stream's tables applied from the change itself, issue 42): items of
--	  many types (timestamps with microseconds, money, json, jsonb, arrays,
--	  an enum, a uuid, an interval, a TOASTed note), which three query
--	  tables project row by row (one keyed by an enum, a timestamp and a
--	  uuid: kind, made, ref); owners and pets, which one table joins (it keeps
--	  recomputing).  dx.mix(n) makes n random changes in one transaction.
--
CREATE SCHEMA dx;
CREATE TYPE dx.mood AS ENUM ('calm', 'busy', 'odd');
CREATE TABLE dx.item (
	id			int PRIMARY KEY,
	grp			int NOT NULL,
	name		text,
	seen		timestamptz,
	born		timestamp,
	price		numeric(12, 3),
	cost		money,
	doc			jsonb,
	meta		json,
	tags		text[],
	nums		int[],
	mood		dx.mood,
	uid			uuid,
	span		interval,
	flag		boolean NOT NULL DEFAULT true,
	note		text,
	kind		dx.mood NOT NULL,
	made		timestamptz NOT NULL,
	ref			uuid NOT NULL
);
-- out of line without compression: a long note is TOASTed
ALTER TABLE dx.item ALTER COLUMN note SET STORAGE EXTERNAL;
CREATE TABLE dx.owner (
	owner_id	int PRIMARY KEY,
	name		text NOT NULL
);
CREATE TABLE dx.pet (
	pet_id		int PRIMARY KEY,
	owner_id	int NOT NULL REFERENCES dx.owner,
	name		text NOT NULL
);

-- one random item row for id k (NULLs, empty arrays, microseconds)
CREATE FUNCTION dx.random_item(k int) RETURNS dx.item LANGUAGE sql VOLATILE AS $$
SELECT ROW(k, 1 + floor(random() * 4)::int,
		   CASE WHEN random() < 0.15 THEN NULL ELSE 'item ' || k || ' ' || md5(random()::text) END,
		   CASE WHEN random() < 0.15 THEN NULL ELSE clock_timestamp() - random() * interval '300 days' END,
		   CASE WHEN random() < 0.15 THEN NULL ELSE localtimestamp - random() * interval '30 days' END,
		   CASE WHEN random() < 0.15 THEN NULL ELSE round((random() * 10000)::numeric, 3) END,
		   CASE WHEN random() < 0.15 THEN NULL ELSE (random() * 1000)::numeric(10, 2)::money END,
		   CASE WHEN random() < 0.15 THEN NULL ELSE jsonb_build_object('k', k, 'r', round(random()::numeric, 4), 'a', jsonb_build_array(1, 'x')) END,
		   CASE WHEN random() < 0.15 THEN NULL ELSE json_build_object('k', k, 'n', 'é "q"') END,
		   CASE WHEN random() < 0.15 THEN NULL WHEN random() < 0.2 THEN '{}'::text[] ELSE ARRAY['t' || k, 'b,c', 'q"x'] END,
		   CASE WHEN random() < 0.15 THEN NULL WHEN random() < 0.2 THEN '{}'::int[] ELSE ARRAY[k, 2, 3] END,
		   CASE WHEN random() < 0.15 THEN NULL ELSE (ARRAY['calm', 'busy', 'odd'])[1 + floor(random() * 3)::int]::dx.mood END,
		   CASE WHEN random() < 0.15 THEN NULL ELSE gen_random_uuid() END,
		   CASE WHEN random() < 0.15 THEN NULL ELSE make_interval(secs => round((random() * 100000)::numeric, 6)::float8) END,
		   random() < 0.7,
		   CASE WHEN random() < 0.15 THEN NULL ELSE 'note ' || k END,
		   (ARRAY['calm', 'busy', 'odd'])[1 + floor(random() * 3)::int]::dx.mood,
		   clock_timestamp() - random() * interval '30 days',
		   gen_random_uuid())::dx.item
$$;

-- n random changes of items c*60+1..c*60+60 (and of pets c*10+1..c*10+10)
-- in one transaction: inserts, updates (of the group and the filter
-- column too), key moves (id +/- 1000), deletes.  Clients with different
-- c never touch the same rows.
CREATE FUNCTION dx.mix(n int, c int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	k int;
	op float8;
	r dx.item;
BEGIN
	FOR i IN 1..n LOOP
		k := c * 60 + 1 + floor(random() * 60)::int;
		op := random();
		r := dx.random_item(k);
		IF op < 0.25 THEN
			INSERT INTO dx.item SELECT r.* ON CONFLICT (id) DO UPDATE SET
				grp = excluded.grp, name = excluded.name, seen = excluded.seen, price = excluded.price,
				tags = excluded.tags, flag = excluded.flag, doc = excluded.doc, cost = excluded.cost;
		ELSIF op < 0.55 THEN
			UPDATE dx.item SET grp = r.grp, name = r.name, seen = r.seen, born = r.born, meta = r.meta,
				nums = r.nums, mood = r.mood, uid = r.uid, span = r.span, flag = NOT flag,
				kind = r.kind, made = CASE WHEN random() < 0.5 THEN r.made ELSE made END
			WHERE id IN (k, k + 1000);
		ELSIF op < 0.65 THEN
			UPDATE dx.item SET id = id + 1000 WHERE id = k AND NOT EXISTS (SELECT 1 FROM dx.item WHERE id = k + 1000);
		ELSIF op < 0.72 THEN
			UPDATE dx.item SET id = id - 1000 WHERE id = k + 1000 AND NOT EXISTS (SELECT 1 FROM dx.item WHERE id = k);
		ELSIF op < 0.85 THEN
			DELETE FROM dx.item WHERE id IN (k, k + 1000);
		ELSE
			UPDATE dx.pet SET owner_id = 1 + floor(random() * 5)::int, name = 'pet ' || md5(random()::text)
			WHERE pet_id = c * 10 + 1 + k % 10;
		END IF;
	END LOOP;
END
$$;

INSERT INTO dx.item SELECT (dx.random_item(k)).* FROM generate_series(1, 40) k;
INSERT INTO dx.owner SELECT o, 'owner ' || o FROM generate_series(1, 5) o;
INSERT INTO dx.pet SELECT p, 1 + p % 5, 'pet ' || p FROM generate_series(1, 20) p;

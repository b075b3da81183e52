--
-- app_style.sql
--	  Turn the whole-second, tidy data of a generated schema into data as
--	  applications write it (issue 26), in place, deterministically:
--	  * every timestamp / timestamptz column gets microseconds (0-999 us
--	    added, from a hash of the row: now() and clock_timestamp() values
--	    carry them); whole-second values stay in their millisecond, so no
--	    key gains a duplicate at the millisecond;
--	  * text columns that no constraint, index or key mentions get odd text
--	    in every fifth row (quotes, a backslash, a tab, a newline, an emoji,
--	    a combining accent).
--	  psql -v schema=hotel_rel -f migrations/lib/app_style.sql
--	  (used by tests/bridge/test_bridge_e2e.sh and test_buckets.sh; the
--	  schema-specific generators stay whole-second for the golden files)
--
\set ON_ERROR_STOP on
SELECT set_config('app_style.schema', :'schema', false) AS app_style_schema \gset

DO $$
DECLARE
	r record;
	sch text := current_setting('app_style.schema');
BEGIN
	FOR r IN
		SELECT c.relname, a.attname, t.typname
		FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_type t ON t.oid = a.atttypid
		WHERE n.nspname = sch AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
		  AND t.typname IN ('timestamptz', 'timestamp')
		ORDER BY c.relname, a.attnum
	LOOP
		EXECUTE format('UPDATE %I.%I SET %I = %I + ((hashtext(%I::text) & 1023) %% 1000) * interval ''1 microsecond''',
					   sch, r.relname, r.attname, r.attname, r.attname);
	END LOOP;
	FOR r IN
		SELECT c.relname, a.attname
		FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = sch AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
		  AND a.atttypid = 'text'::regtype
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = c.oid AND a.attnum = ANY (k.conkey))
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.confrelid = c.oid AND a.attnum = ANY (k.confkey))
		  AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND a.attnum = ANY (i.indkey::int2[]))
		ORDER BY c.relname, a.attnum
	LOOP
		EXECUTE format('UPDATE %I.%I SET %I = %I || E'' O''''Brien "q" \\ \t x\ny 🙂 cafe\u0301'' WHERE hashtext(%I) %% 5 = 0',
					   sch, r.relname, r.attname, r.attname, r.attname);
	END LOOP;
END $$;

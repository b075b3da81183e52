--
-- check_workload.sql
--	  The workload-format check shared by migrations/*/check.sql: split
--	  :workload (a workload.sql path) the way a program does, without a SQL
--	  parser (format in the header of migrations/hotel/workload.sql), run
--	  every query with parameter values picked from the data, and require
--	  :expected_queries blocks named Q1..Qn in order, each returning rows.
--
-- Include with \ir after setting both variables.
--
-- IDENTIFICATION
--	  migrations/lib/check_workload.sql
--
SELECT set_config('check.expected_queries', :'expected_queries', false) \g /dev/null
-- ---------------------------------------------------------------------
-- 4b. splitter path
-- ---------------------------------------------------------------------
\set workload_text `cat :workload`
CREATE TEMP TABLE check_workload AS SELECT :'workload_text'::text AS body;

CREATE TEMP TABLE check_result (name text, rows bigint, params text);
DO $$
DECLARE
	body		text;
	blocks		text[];
	blk			text;
	lines		text[];
	ln			text;
	li			int;
	meta		jsonb;
	stmt		text;
	prepared	text;
	executed	text;
	pname		text;
	ptype		text;
	pnames		text[];
	ptypes		text[];
	used		text[];
	val			text;
	vals		text[];
	nrows		bigint;
	names		text[] := '{}';
	pv			jsonb;
	k			int;
BEGIN
	SELECT w.body INTO body FROM check_workload w;
	SELECT to_jsonb(p) INTO pv FROM check_param p;
	body := replace(body, E'\r\n', E'\n');
	IF position(E'\n-- name: ' IN E'\n' || body) = 0 THEN
		RAISE EXCEPTION 'workload: no "-- name:" block';
	END IF;
	-- header = everything before the first "-- name:" line
	blocks := regexp_split_to_array(substr(body, position(E'\n-- name: ' IN E'\n' || body)),
									E'\n(?=-- name: )');
	FOREACH blk IN ARRAY blocks LOOP
		lines := string_to_array(rtrim(blk, E'\n'), E'\n');
		meta := '{}';
		li := 1;
		WHILE li <= cardinality(lines) AND lines[li] ~ '^-- [a-z_]+: ' LOOP
			meta := meta || jsonb_build_object(substring(lines[li] FROM '^-- ([a-z_]+): '),
											   substring(lines[li] FROM '^-- [a-z_]+: (.*)$'));
			li := li + 1;
		END LOOP;
		IF NOT (meta ? 'name' AND meta ? 'description' AND meta ? 'params' AND meta ? 'target')
		   OR meta->>'name' !~ '^Q[0-9]+_[A-Za-z0-9_]+$' THEN
			RAISE EXCEPTION 'workload: bad metadata in block starting %', quote_literal(lines[1]);
		END IF;
		IF meta->>'name' = ANY (names) THEN
			RAISE EXCEPTION 'workload: duplicate name %', meta->>'name';
		END IF;
		names := names || (meta->>'name');

		-- the statement: up to the first line ending in ";", then nothing
		stmt := NULL;
		FOR k IN li .. cardinality(lines) LOOP
			ln := lines[k];
			IF ln ~ '^\s*$' OR ln ~ '^\s*--' THEN
				RAISE EXCEPTION 'workload %: blank or comment line inside the statement', meta->>'name';
			END IF;
			stmt := coalesce(stmt || E'\n', '') || ln;
			IF ln ~ ';$' THEN
				IF k <> cardinality(lines) THEN
					RAISE EXCEPTION 'workload %: text after the statement', meta->>'name';
				END IF;
				EXIT;
			END IF;
		END LOOP;
		IF stmt IS NULL OR stmt !~ ';$' OR position(';' IN left(stmt, -1)) > 0 THEN
			RAISE EXCEPTION 'workload %: need exactly one statement ending with ";" at end of line', meta->>'name';
		END IF;
		stmt := left(stmt, -1);

		-- declared parameters vs used ones
		pnames := '{}';
		ptypes := '{}';
		IF meta->>'params' <> 'none' THEN
			FOREACH ln IN ARRAY string_to_array(meta->>'params', ',') LOOP
				pname := substring(btrim(ln) FROM '^([A-Za-z_][A-Za-z0-9_]*) ');
				ptype := substring(btrim(ln) FROM '^[A-Za-z_][A-Za-z0-9_]* (.+)$');
				IF pname IS NULL OR ptype IS NULL THEN
					RAISE EXCEPTION 'workload %: bad params entry %', meta->>'name', quote_literal(ln);
				END IF;
				pnames := pnames || pname;
				ptypes := ptypes || ptype;
			END LOOP;
		END IF;
		SELECT coalesce(array_agg(DISTINCT m[1] ORDER BY m[1]), '{}') INTO used
		FROM regexp_matches(stmt, ':''([A-Za-z_][A-Za-z0-9_]*)''', 'g') m;
		IF used IS DISTINCT FROM (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(pnames) x)
		   OR cardinality(pnames) <> (SELECT count(DISTINCT x) FROM unnest(pnames) x) THEN
			RAISE EXCEPTION 'workload %: params % declared, % used', meta->>'name', pnames, used;
		END IF;

		-- as a program would: $k with the declared types
		prepared := stmt;
		executed := stmt;
		vals := '{}';
		FOR k IN 1 .. cardinality(pnames) LOOP
			val := pv->>pnames[k];
			IF val IS NULL THEN
				RAISE EXCEPTION 'workload %: no sample value for parameter %', meta->>'name', pnames[k];
			END IF;
			prepared := replace(prepared, ':''' || pnames[k] || '''', '$' || k);
			executed := replace(executed, ':''' || pnames[k] || '''', '$' || k);
			vals := vals || format('%L::%s', val, ptypes[k]);
		END LOOP;
		IF position(':''' IN prepared) > 0 THEN
			RAISE EXCEPTION 'workload %: stray :'' left after substitution', meta->>'name';
		END IF;
		EXECUTE format('PREPARE check_stmt%s AS %s',
					   CASE WHEN cardinality(ptypes) > 0 THEN '(' || array_to_string(ptypes, ', ') || ')' ELSE '' END,
					   prepared);
		DEALLOCATE check_stmt;
		-- and count its rows with the values bound through the same $k
		FOR k IN REVERSE cardinality(pnames) .. 1 LOOP
			executed := replace(executed, '$' || k, vals[k]);
		END LOOP;
		EXECUTE format('SELECT count(*) FROM (%s) q', executed) INTO nrows;
		IF nrows = 0 THEN
			RAISE EXCEPTION 'workload %: no rows for %', meta->>'name', vals;
		END IF;
		IF nrows > 1 AND stmt !~* '\morder\s+by\M[^)]*$' THEN
			RAISE EXCEPTION 'workload %: % rows but no final ORDER BY', meta->>'name', nrows;
		END IF;
		INSERT INTO check_result VALUES (meta->>'name', nrows, array_to_string(vals, ', '));
	END LOOP;
	IF names IS DISTINCT FROM ARRAY(SELECT x FROM unnest(names) x ORDER BY substring(x FROM '^Q([0-9]+)')::int)
	   OR cardinality(names) <> current_setting('check.expected_queries')::int THEN
		RAISE EXCEPTION 'workload: expected Q1..Q% in order, found %',
			current_setting('check.expected_queries'), names;
	END IF;
END $$;
SELECT name, rows, params FROM check_result ORDER BY substring(name FROM '^Q([0-9]+)')::int;

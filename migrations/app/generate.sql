--
-- generate.sql
--	  Application-style data for schema app_rel: timestamps from now() and
--	  clock_timestamp() (microseconds), NULLs and empty arrays, duplicate
--	  array elements, jsonb with nested values and odd text (quotes,
--	  backslashes, tabs, newlines, emoji, combining accents), intervals with
--	  months and microseconds, negative intervals.  No edge value Cassandra
--	  cannot store (tests/bridge/test_app_data.sh adds those one by one).
--	  psql -v scale=N (default 1): 40*N customers, 400*N orders.
--
\if :{?scale}
\else
\set scale 1
\endif

INSERT INTO app_rel.customer (customer_id, email, name, nick, country, ip, net, created_at)
SELECT i,
	   'user' || i || '@example.com',
	   (ARRAY['Ana', E'O''Brien "Bob"', E'Zoë\tTab', E'line1\nline2', 'Back\slash', 'Émile 🙂', E'cafe\u0301'])[1 + i % 7] || ' ' || i,
	   CASE WHEN i % 3 = 0 THEN NULL ELSE (ARRAY['Nick', 'NICK', 'nick'])[1 + i % 3] || i END,
	   (ARRAY['DE', 'FR', 'US', 'J'])[1 + i % 4],
	   CASE i % 3 WHEN 0 THEN NULL WHEN 1 THEN ('10.0.' || i || '.1')::inet ELSE ('2001:db8::' || i)::inet END,
	   CASE WHEN i % 2 = 0 THEN NULL ELSE ('10.' || i || '.0.0/16')::cidr END,
	   clock_timestamp() - i * interval '1 hour 7 minutes 0.123457 seconds'
FROM generate_series(1, 40 * :scale) i;

INSERT INTO app_rel.orders (order_id, customer_id, status, placed_at, attrs, tags, scores, total, delivery, qty, weight, seen_at)
SELECT i,
	   1 + i % (40 * :scale),
	   (enum_range(NULL::app_rel.order_status))[1 + i % 4],
	   clock_timestamp() - i * interval '13 minutes 0.000777 seconds',
	   CASE i % 5
		   WHEN 0 THEN NULL
		   WHEN 1 THEN jsonb_build_object('gift', i % 2 = 0, 'note', E'say "hi"\n\\o/ ü', 'n', i * 1.50)
		   WHEN 2 THEN '{"nested": {"a": [1, 2.0, null], "b": {}}, "z": null}'::jsonb
		   WHEN 3 THEN '[]'::jsonb
		   ELSE to_jsonb(i)
	   END,
	   CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN '{}'::text[]
		   ELSE ARRAY['t' || i % 5, 'b', 'b', E'odd "\\'' text'] END,
	   CASE WHEN i % 3 = 0 THEN NULL ELSE ARRAY[i, -i, 0, i] END,
	   CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 1.25)::numeric::money END,
	   CASE i % 6
		   WHEN 0 THEN NULL
		   WHEN 1 THEN make_interval(months => i % 13, days => i % 9, secs => i * 1.000001)
		   WHEN 2 THEN interval '-1 days -02:03:04.000005'
		   ELSE i * interval '1 minute 0.5 microseconds'
	   END,
	   CASE WHEN i % 4 = 0 THEN NULL ELSE 1 + i % 9 END,
	   CASE WHEN i % 5 = 0 THEN NULL ELSE i / 7.0 END,
	   CASE i % 3 WHEN 0 THEN NULL WHEN 1 THEN '{}'::timestamptz[]
		   ELSE ARRAY[clock_timestamp(), now() - interval '1 day'] END
FROM generate_series(1, 400 * :scale) i;

-- signals: mostly apart, but pairs of one user within one millisecond
-- (different microseconds): the key (user_id, created_at) merges them in
-- Cassandra, so MR5 must key the table by signal_id too
INSERT INTO app_rel.signal (signal_id, user_id, created_at, kind)
SELECT i,
	   1 + (i / 2) % 10,
	   date_trunc('milliseconds', now()) - (i / 2) * interval '3.017 seconds'
	   + CASE WHEN i % 2 = 0 THEN interval '700 microseconds' ELSE interval '200 microseconds' END,
	   (enum_range(NULL::app_rel.order_status))[1 + i % 4]
FROM generate_series(1, 200 * :scale) i;

--
-- cql_bridge_cpu_priority(text): "cqlbridge stream --priority background"
-- and "--priority idle" lower its backend's and walsender's CPU priority
-- with it (src/bridge/cpu_priority.c).  Checked against the kernel's own
-- record: the class (field 41 of /proc/PID/stat: 0 SCHED_OTHER, 5
-- SCHED_IDLE) and the nice value that ranks the backend, its autogroup's
-- (/proc/PID/autogroup) where autogroups are on and the backend leads its
-- session, else its own (field 19 of /proc/PID/stat).
--
\i sql/include/cql_server.sql
CREATE FUNCTION pg_temp.stat_field(n int) RETURNS int LANGUAGE sql AS $$
	SELECT split_part(regexp_replace(pg_read_file('/proc/' || pg_backend_pid() || '/stat'),
									 '^.*\) ', ''), ' ', n - 2)::int $$;
CREATE FUNCTION pg_temp.sched_policy() RETURNS int LANGUAGE sql AS $$
	SELECT pg_temp.stat_field(41) $$;
-- the nice value that ranks this backend against the other sessions
CREATE FUNCTION pg_temp.ranking_nice() RETURNS int LANGUAGE sql AS $$
	SELECT CASE WHEN pg_read_file('/proc/sys/kernel/sched_autogroup_enabled', 0, 8, true) LIKE '1%'
				 AND pg_temp.stat_field(6) = pg_backend_pid()
			THEN substring(pg_read_file('/proc/' || pg_backend_pid() || '/autogroup') FROM ' nice (-?[0-9]+)')::int
			ELSE pg_temp.stat_field(19) END $$;

-- a new session is normal, and 'normal' says so without changing it
SELECT cql_bridge_cpu_priority('normal') AS class, pg_temp.sched_policy() AS policy,
	   pg_temp.ranking_nice() AS nice;

-- anything else than background, idle or normal: 22023, with a hint
SELECT cql_bridge_cpu_priority('low');
SELECT cql_bridge_cpu_priority(NULL) IS NULL AS strict;

-- a role without REPLICATION may not (42501), one with it may
CREATE ROLE regress_cpu_plain;
CREATE ROLE regress_cpu_streamer REPLICATION;
SET ROLE regress_cpu_plain;
SELECT cql_bridge_cpu_priority('background');
SELECT cql_bridge_cpu_priority('idle');
RESET ROLE;
SELECT pg_temp.sched_policy() AS still_normal, pg_temp.ranking_nice() AS nice;

-- background: the normal class, the ranking nice value 10; asking again is
-- harmless, going back to normal is refused (55000)
SET ROLE regress_cpu_streamer;
SELECT cql_bridge_cpu_priority('background') AS class;
SELECT cql_bridge_cpu_priority('background') AS class;
SELECT cql_bridge_cpu_priority('normal');
RESET ROLE;
SELECT pg_temp.sched_policy() AS policy, pg_temp.ranking_nice() AS nice;

-- idle from background: SCHED_IDLE, the ranking nice value 19 (Linux takes
-- one autogroup change a 100 ms: the function waits for its turn)
SET ROLE regress_cpu_streamer;
SELECT cql_bridge_cpu_priority('idle') AS class;
RESET ROLE;
SELECT pg_temp.sched_policy() AS policy, pg_temp.ranking_nice() AS nice;

-- idle for the rest of the session: asking again is harmless, going back
-- to background or normal is refused (55000), and work goes on
SELECT cql_bridge_cpu_priority('idle') AS class;
SELECT cql_bridge_cpu_priority('background');
SELECT cql_bridge_cpu_priority('normal');
SELECT count(*) FROM generate_series(1, 100000);

DROP ROLE regress_cpu_plain;
DROP ROLE regress_cpu_streamer;

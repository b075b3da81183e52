--
-- sql/include/proc_sched.sql: the kernel's record of this backend's CPU
-- priority, for the tests of cql_bridge_cpu_priority and
-- cql_bridge_autogroup_nice: the class (field 41 of /proc/PID/stat: 0
-- SCHED_OTHER, 5 SCHED_IDLE) and the nice value that ranks the backend,
-- its autogroup's (/proc/PID/autogroup) where autogroups are on and the
-- backend leads its session, else its own (field 19 of /proc/PID/stat).
-- Temporary functions: included again after a reconnect.
--
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

-- whether the autogroup's nice value ranks this backend
CREATE FUNCTION pg_temp.autogroup_counts() RETURNS boolean LANGUAGE sql AS $$
	SELECT pg_read_file('/proc/sys/kernel/sched_autogroup_enabled', 0, 8, true) LIKE '1%'
		   AND pg_temp.stat_field(6) = pg_backend_pid() $$;

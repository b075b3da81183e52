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
\i sql/include/proc_sched.sql
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

-- 'auto' (0.9), in a new session: SCHED_IDLE where the session's autogroup
-- counts, nothing elsewhere; cql_bridge_autogroup_nice() then moves that
-- autogroup's nice value both ways without privilege.  Written to hold on
-- a kernel without autogroups too (NULL: nothing to move).
\c
\i sql/include/proc_sched.sql
-- (the kernel's record is read as the superuser: \gset keeps each result)
SET ROLE regress_cpu_streamer;
SELECT cql_bridge_cpu_priority('auto') AS auto_class \gset
RESET ROLE;
SELECT :'auto_class' = CASE WHEN pg_temp.autogroup_counts() THEN 'idle' ELSE 'normal' END AS auto,
	   pg_temp.sched_policy() = CASE WHEN pg_temp.autogroup_counts() THEN 5 ELSE 0 END AS policy;
SET ROLE regress_cpu_streamer;
SELECT coalesce(cql_bridge_autogroup_nice(19)::text, 'null') AS yield_nice \gset
RESET ROLE;
SELECT :'yield_nice' = CASE WHEN pg_temp.autogroup_counts() THEN '19' ELSE 'null' END AS yielding,
	   pg_temp.ranking_nice() = CASE WHEN pg_temp.autogroup_counts() THEN 19 ELSE 0 END AS ranked;
SET ROLE regress_cpu_streamer;
SELECT coalesce(cql_bridge_autogroup_nice(0, pg_backend_pid())::text, 'null') AS full_nice \gset
RESET ROLE;
SELECT :'full_nice' = CASE WHEN pg_temp.autogroup_counts() THEN '0' ELSE 'null' END AS full_share,
	   pg_temp.ranking_nice() AS nice;
-- asking again is harmless; out of range (22023); NULL does nothing
SET ROLE regress_cpu_streamer;
SELECT cql_bridge_cpu_priority('auto') = :'auto_class' AS again;
SELECT cql_bridge_autogroup_nice(20);
SELECT cql_bridge_autogroup_nice(-1);
SELECT cql_bridge_autogroup_nice(NULL) IS NULL AS null_does_nothing;
-- another process only when it is a session of the role (22023)
SELECT cql_bridge_autogroup_nice(5, 1);
RESET ROLE;
-- a role without REPLICATION may not (42501)
SET ROLE regress_cpu_plain;
SELECT cql_bridge_autogroup_nice(0);
RESET ROLE;

DROP ROLE regress_cpu_plain;
DROP ROLE regress_cpu_streamer;

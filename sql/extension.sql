--
-- The extension, its objects, and option validation (no Cassandra needed).
--
CREATE EXTENSION cql_fdw;
\dx cql_fdw
\dew cql_fdw
SELECT p.proname, pg_get_function_result(p.oid) AS result, p.proretset AS set_returning
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'cql_fdw'
ORDER BY p.proname, pg_get_function_identity_arguments(p.oid) COLLATE "C";

-- options are checked where they are set
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (hots 'x');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (host 'a,,b');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (host 'a:99999');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '[::1');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (port '0');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (protocol_version '3');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (compression 'snappy');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (consistency 'ANY');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (write_consistency 'SERIAL');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (consistency 'most');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (fetch_size '0');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (request_timeout 'soon');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (write_mode 'later');
CREATE SERVER s_bad FOREIGN DATA WRAPPER cql_fdw OPTIONS (keyspace 'ks');
CREATE SERVER s_ok FOREIGN DATA WRAPPER cql_fdw OPTIONS (
  host 'node1, node2:9043, [::1]:9044, 10.0.0.1', port '9042', protocol_version 'auto',
  compression 'none', consistency 'local_quorum', write_consistency 'EACH_QUORUM',
  fetch_size '1000', connect_timeout '2000', request_timeout '5000', local_dc 'dc1',
  ttl '0', batch_size '50', write_mode 'on_commit', truncatable 'false');
ALTER SERVER s_ok OPTIONS (SET consistency 'TWO');
ALTER SERVER s_ok OPTIONS (SET consistency 'ANY');

-- user mappings
CREATE USER MAPPING FOR CURRENT_USER SERVER s_ok OPTIONS (host 'x');
CREATE USER MAPPING FOR CURRENT_USER SERVER s_ok OPTIONS (username 'u', password 'secret', password_required 'false');
CREATE ROLE regress_cql_user;
GRANT USAGE ON FOREIGN SERVER s_ok TO regress_cql_user;
SET ROLE regress_cql_user;
CREATE USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (username 'u', password_required 'false');
CREATE USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (username 'u', password 'p');
-- file options (read by the server process) are for superusers to set ...
ALTER USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (ADD sslcert '/etc/cql/u.pem');
RESET ROLE;
ALTER USER MAPPING FOR regress_cql_user SERVER s_ok
  OPTIONS (ADD sslcert '/etc/cql/u.pem', ADD sslkey '/etc/cql/u.key');
-- ... but once set, the owner still changes the mapping's other options
SET ROLE regress_cql_user;
ALTER USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (SET password 'p2');
ALTER USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (SET sslkey '/etc/cql/other.key');
ALTER USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (DROP sslkey);
RESET ROLE;
-- the same for a server a non-superuser owns
GRANT USAGE ON FOREIGN DATA WRAPPER cql_fdw TO regress_cql_user;
CREATE SERVER s_owned FOREIGN DATA WRAPPER cql_fdw
  OPTIONS (sslmode 'verify-full', sslrootcert '/etc/cql/ca.pem');
ALTER SERVER s_owned OWNER TO regress_cql_user;
SET ROLE regress_cql_user;
ALTER SERVER s_owned OPTIONS (ADD fetch_size '100', SET sslmode 'verify-ca');
ALTER SERVER s_owned OPTIONS (SET sslrootcert '/etc/cql/other-ca.pem');
CREATE SERVER s_mine FOREIGN DATA WRAPPER cql_fdw OPTIONS (sslrootcert '/etc/cql/ca.pem');
RESET ROLE;
-- a new session: its first statement loads the library (the validator
-- then finds the statement in the active portal, not in the hook)
\c
SET ROLE regress_cql_user;
ALTER SERVER s_owned OPTIONS (SET fetch_size '200');
\c
SET ROLE regress_cql_user;
ALTER USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (SET password 'p3');
\c
SET ROLE regress_cql_user;
ALTER USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (SET sslcert '/etc/cql/x.pem');
-- (the one case left strict: a session's first such statement run from a
-- function, where neither the hook nor the portal shows it)
\c
SET ROLE regress_cql_user;
DO $$BEGIN
  EXECUTE 'ALTER USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (SET password ''p4'')';
END$$;
DO $$BEGIN
  EXECUTE 'ALTER USER MAPPING FOR regress_cql_user SERVER s_ok OPTIONS (SET password ''p4'')';
END$$;
RESET ROLE;
SELECT srvoptions FROM pg_foreign_server WHERE srvname = 's_owned';
SELECT array(SELECT o FROM unnest(umoptions) o WHERE o NOT LIKE 'password=%') AS options,
       'password=p4' = ANY (umoptions) AS password_changed
FROM pg_user_mapping m JOIN pg_foreign_server s ON s.oid = m.umserver
WHERE s.srvname = 's_ok' AND m.umuser = 'regress_cql_user'::regrole;

-- foreign tables and columns
CREATE FOREIGN TABLE ft_bad (a int) SERVER s_ok OPTIONS (host 'x');
CREATE FOREIGN TABLE ft_bad (a int) SERVER s_ok OPTIONS (allow_filtering 'maybe');
CREATE FOREIGN TABLE ft_bad (a int OPTIONS (kind 'primary')) SERVER s_ok;
CREATE FOREIGN TABLE ft_bad (a int OPTIONS (clustering_order 'up')) SERVER s_ok;
CREATE FOREIGN TABLE ft_bad (a int OPTIONS (position '-1')) SERVER s_ok;
CREATE FOREIGN TABLE ft (a int OPTIONS (column_name 'A', kind 'partition_key', position '0'),
                         b text OPTIONS (kind 'clustering', position '0', clustering_order 'desc'))
  SERVER s_ok OPTIONS (keyspace 'ks', "table" 'T', consistency 'ONE', fetch_size '10',
                       allow_filtering 'true', if_not_exists 'true', ttl '3600');
-- a table whose key options have a hole is refused when planned
CREATE FOREIGN TABLE ft_hole (a int OPTIONS (kind 'partition_key', position '1'))
  SERVER s_ok OPTIONS (keyspace 'ks');
EXPLAIN (COSTS OFF) SELECT * FROM ft_hole;
CREATE FOREIGN TABLE ft_noks (a int OPTIONS (kind 'partition_key', position '0')) SERVER s_ok;
EXPLAIN (COSTS OFF) SELECT * FROM ft_noks;
-- plain EXPLAIN needs no connection (the hosts above do not exist)
EXPLAIN (VERBOSE, COSTS OFF) SELECT b FROM ft WHERE a = 1 AND b > 'x' COLLATE "C";

-- cql_execute needs a cql_fdw server
CREATE FOREIGN DATA WRAPPER other_fdw;
CREATE SERVER s_other FOREIGN DATA WRAPPER other_fdw;
SELECT cql_execute('s_other', 'SELECT 1');
SELECT cql_execute('no_such_server', 'SELECT 1');

DROP SERVER s_owned;
DROP OWNED BY regress_cql_user;
DROP ROLE regress_cql_user;
DROP SERVER s_other;
DROP FOREIGN DATA WRAPPER other_fdw;
DROP EXTENSION cql_fdw CASCADE;

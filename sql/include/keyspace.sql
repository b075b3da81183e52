-- A fresh, empty Cassandra keyspace :ks for a suite (\set ks NAME first),
-- made through cql_execute on the server cass.  Prints nothing.
\ir keyspace_cql.sql
SELECT cql_execute('cass', :'ks_drop') AS ks_dropped \gset
SELECT cql_execute('cass', :'ks_create') AS ks_created \gset

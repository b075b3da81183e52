-- The CQL that makes a fresh keyspace :ks, as :ks_drop and :ks_create (run
-- by keyspace.sql, tested by tests/pgtap/include/keyspace.sql).
SELECT format('DROP KEYSPACE IF EXISTS %I', :'ks') AS ks_drop,
       format($c$CREATE KEYSPACE %I WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}$c$, :'ks') AS ks_create
\gset

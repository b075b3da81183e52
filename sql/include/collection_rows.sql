-- The type :ks.address and the table :ks.collections, a column of every
-- collection kind (list, set, map, frozen list, tuple, UDT, map of UDTs,
-- nested lists, vector, set of timestamps), and its three rows, written by
-- Cassandra's own CQL parser (cql_execute): row 1 with values, row 2 empty
-- collections, row 3 only its key.  Shared by types.sql and
-- bridge_row_hash.sql.  Prints nothing.
SELECT cql_execute('cass', format('CREATE TYPE %I.address (street text, city text, zip int)', :'ks'))
  AS address_created \gset
SELECT cql_execute('cass', format($c$CREATE TABLE %I.collections (
      id int PRIMARY KEY, l list<int>, st set<text>, m map<text, int>,
      fl frozen<list<bigint>>, tp tuple<int, text, boolean>, ad frozen<address>,
      addrs map<text, frozen<address>>, nested list<frozen<list<int>>>,
      ve vector<float, 3>, ts set<timestamp>)$c$, :'ks'))
  AS collections_created \gset
SELECT cql_execute('cass', format($c$INSERT INTO %I.collections
      (id, l, st, m, fl, tp, ad, addrs, nested, ve, ts) VALUES
      (1, [3, 1, 2], {'b', 'a', 'é'}, {'x': 1, 'y': -2}, [9007199254740993], (7, 'seven', true),
       {street: '1 Main St', city: 'Springfield', zip: 12345},
       {'home': {street: 'a', city: 'b', zip: 1}, 'work': {street: 'c', city: null, zip: 2}},
       [[1], [2, 3], []], [1.0, 2.5, -3.25], {'2024-01-01 00:00:00Z', '2023-06-01 12:00:00.5Z'})$c$, :'ks'))
  AS collections_row1 \gset
SELECT cql_execute('cass', format('INSERT INTO %I.collections (id, fl, l) VALUES (2, [], [])', :'ks'))
  AS collections_row2 \gset
SELECT cql_execute('cass', format('INSERT INTO %I.collections (id) VALUES (3)', :'ks'))
  AS collections_row3 \gset

--
-- tests/bridge/direct/workload.sql
--	  Four queries over direct/schema.sql for test_stream_direct.sh: an
--	  item by id (every column: a row-by-row projection of one relation);
--	  the flagged items of a group (a filter on the row, and a key that
--	  moves with the group); the pets of an owner by name (a join: it is
--	  recomputed); the items of a kind (an enum, a timestamp cut to
--	  milliseconds and a uuid in the key).
--

-- name: Q1_item_by_id
-- description: an item with every column
-- params: id int
-- target: dx.item_by_id
-- published_key: ((id))
SELECT i.id, i.grp, i.name, i.seen, i.born, i.price, i.cost, i.doc, i.meta, i.tags, i.nums,
       i.mood, i.uid, i.span, i.flag, i.note
FROM dx.item i
WHERE i.id = :'id'::int;

-- name: Q2_items_by_grp
-- description: the flagged items of a group
-- params: grp int
-- target: dx.items_by_grp
-- published_key: ((grp), id)
SELECT i.grp, i.id, i.name, i.seen, i.tags, i.price
FROM dx.item i
WHERE i.grp = :'grp'::int
  AND i.flag
ORDER BY i.id;

-- name: Q3_pets_by_owner_name
-- description: the pets of an owner, by the owner's name
-- params: owner_name text
-- target: dx.pets_by_owner_name
-- published_key: ((owner_name), pet_id)
SELECT o.name AS owner_name, p.pet_id, p.name
FROM dx.pet p
JOIN dx.owner o ON o.owner_id = p.owner_id
WHERE o.name = :'owner_name'
ORDER BY p.pet_id;

-- name: Q4_items_by_kind
-- description: the items of a kind, newest first (enum, timestamp and uuid key columns)
-- params: kind dx.mood
-- target: dx.items_by_kind
-- published_key: ((kind), made, ref, id)
SELECT i.kind, i.made, i.ref, i.id, i.name
FROM dx.item i
WHERE i.kind = :'kind'::dx.mood
ORDER BY i.made DESC, i.ref, i.id;

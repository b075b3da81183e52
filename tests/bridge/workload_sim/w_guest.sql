\set i random(1, :nguest)
SELECT g AS gid FROM sim.guest WHERE i = :i \gset
UPDATE hotel_rel.guest SET title = title WHERE guest_id = :gid::uuid;

\set i random(1, :nguest)
SELECT n FROM sim.guest WHERE i = :i \gset
SELECT g.guest_id, g.first_name, g.last_name FROM hotel_rel.guest g
WHERE lower(g.last_name) = lower(:n) ORDER BY g.guest_id;

\set i random(1, :npoi)
SELECT v AS poi FROM sim.poi WHERE i = :i \gset
SELECT p.name AS poi_name, h.id AS hotel_id, h.name, h.phone,
       h.street, h.city, h.state_or_province, h.postal_code, h.country
FROM hotel_rel.point_of_interest p
JOIN hotel_rel.hotel_poi hp ON hp.poi_id = p.id
JOIN hotel_rel.hotel h ON h.id = hp.hotel_id
WHERE p.name = :poi
ORDER BY h.id, p.id;

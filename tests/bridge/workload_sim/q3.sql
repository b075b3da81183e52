\set i random(1, :nhotel)
SELECT v AS h FROM sim.hotel WHERE i = :i \gset
SELECT hp.hotel_id, p.name AS poi_name, p.description
FROM hotel_rel.hotel_poi hp
JOIN hotel_rel.point_of_interest p ON p.id = hp.poi_id
WHERE hp.hotel_id = :h
ORDER BY p.name, p.id;

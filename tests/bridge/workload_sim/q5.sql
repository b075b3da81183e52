\set i random(1, :nroom)
SELECT h, r FROM sim.room WHERE i = :i \gset
SELECT r.hotel_id, r.room_number, r.rate, a.name AS amenity_name, a.description
FROM hotel_rel.room r
LEFT JOIN hotel_rel.room_amenity ra ON ra.hotel_id = r.hotel_id AND ra.room_number = r.room_number
LEFT JOIN hotel_rel.amenity a ON a.id = ra.amenity_id
WHERE r.hotel_id = :h
  AND r.room_number = :r::smallint
ORDER BY a.name;

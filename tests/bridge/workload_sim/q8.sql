\set i random(1, :nguest)
SELECT n FROM sim.guest WHERE i = :i \gset
SELECT g.last_name AS guest_last_name, r.hotel_id, r.start_date, r.end_date,
       r.room_number, r.confirm_number, r.guest_id
FROM hotel_rel.guest g
JOIN hotel_rel.reservation r ON r.guest_id = g.guest_id
WHERE g.last_name = :n
ORDER BY r.hotel_id, r.start_date, r.room_number;

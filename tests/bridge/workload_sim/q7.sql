\set i random(1, :nres)
SELECT h, d FROM sim.res WHERE i = :i \gset
SELECT r.hotel_id, r.start_date, r.room_number, r.end_date, r.confirm_number, r.guest_id
FROM hotel_rel.reservation r
WHERE r.hotel_id = :h
  AND r.start_date = :d::date
ORDER BY r.room_number;

\set i random(1, :nres)
SELECT c FROM sim.res WHERE i = :i \gset
SELECT r.confirm_number, r.hotel_id, r.start_date, r.end_date, r.room_number, r.guest_id
FROM hotel_rel.reservation r
WHERE r.confirm_number = :c;

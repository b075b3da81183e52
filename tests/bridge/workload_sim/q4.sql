\set i random(1, :navail)
SELECT h, d, d2 FROM sim.avail WHERE i = :i \gset
SELECT ra.hotel_id, ra.date, ra.room_number, ra.is_available
FROM hotel_rel.room_availability ra
WHERE ra.hotel_id = :h
  AND ra.date >= :d::date
  AND ra.date < :d2::date
  AND ra.is_available
ORDER BY ra.date, ra.room_number;

\set i random(1, :navail)
SELECT h, r, d FROM sim.avail WHERE i = :i \gset
UPDATE hotel_rel.room_availability SET is_available = NOT is_available
WHERE hotel_id = :h AND room_number = :r AND date = :d::date;

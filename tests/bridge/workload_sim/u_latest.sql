\set i random(1, :nhotel)
SELECT v AS h FROM sim.hotel WHERE i = :i \gset
SELECT r.confirm_number, r.start_date FROM hotel_rel.reservation r WHERE r.hotel_id = :h ORDER BY r.start_date DESC, r.confirm_number DESC LIMIT 1;

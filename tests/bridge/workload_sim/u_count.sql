\set i random(1, :nhotel)
SELECT v AS h FROM sim.hotel WHERE i = :i \gset
SELECT count(*) AS reservations FROM hotel_rel.reservation r WHERE r.hotel_id = :h;

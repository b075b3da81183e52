\set i random(1, :nhotel)
\set j random(1, :nhotel)
SELECT v AS h1 FROM sim.hotel WHERE i = :i \gset
SELECT v AS h2 FROM sim.hotel WHERE i = :j \gset
SELECT h.id, h.name FROM hotel_rel.hotel h WHERE h.id = :h1 OR h.name = :h2;

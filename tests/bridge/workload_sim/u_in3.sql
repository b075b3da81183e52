\set i random(1, :nhotel)
SELECT v AS h1, lead(v, 1, v) OVER (ORDER BY i) AS h2, lead(v, 2, v) OVER (ORDER BY i) AS h3 FROM sim.hotel ORDER BY i = :i DESC LIMIT 1 \gset
SELECT h.id, h.name FROM hotel_rel.hotel h WHERE h.id IN (:h1, :h2, :h3) ORDER BY h.id;

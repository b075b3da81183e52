\set i random(1, :nhotel)
SELECT v AS h FROM sim.hotel WHERE i = :i \gset
SELECT h.id, h.name, h.phone,
       h.street, h.city, h.state_or_province, h.postal_code, h.country,
       (SELECT array_agg(DISTINCT p.name ORDER BY p.name)
        FROM hotel_rel.hotel_poi hp
        JOIN hotel_rel.point_of_interest p ON p.id = hp.poi_id
        WHERE hp.hotel_id = h.id) AS pois
FROM hotel_rel.hotel h
WHERE h.id = :h;

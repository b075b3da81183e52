\set i random(1, :nguest)
SELECT g FROM sim.guest WHERE i = :i \gset
SELECT g.guest_id, g.first_name, g.last_name, g.title,
       (SELECT array_agg(e.email ORDER BY e.email)
        FROM hotel_rel.guest_email e
        WHERE e.guest_id = g.guest_id) AS emails,
       (SELECT array_agg(ph.phone ORDER BY ph.position)
        FROM hotel_rel.guest_phone ph
        WHERE ph.guest_id = g.guest_id) AS phone_numbers,
       (SELECT jsonb_object_agg(a.kind, jsonb_build_object(
                   'street', a.street, 'city', a.city,
                   'state_or_province', a.state_or_province,
                   'postal_code', a.postal_code, 'country', a.country))
        FROM hotel_rel.guest_address a
        WHERE a.guest_id = g.guest_id) AS addresses
FROM hotel_rel.guest g
WHERE g.guest_id = ':g'::uuid;

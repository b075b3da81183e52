\set i random(1, :nroom)
\set g random(1, :nguest)
\set n random(1, 1000000000)
SELECT h, r FROM sim.room WHERE i = :i \gset
SELECT g AS gid FROM sim.guest WHERE i = :g \gset
INSERT INTO hotel_rel.reservation (confirm_number, guest_id, hotel_id, room_number, start_date, end_date)
VALUES ('SIM' || :n::text, :gid::uuid, :h, :r::smallint, DATE '2031-01-01' + :n % 300, DATE '2031-01-01' + :n % 300 + 2)
ON CONFLICT DO NOTHING;
DELETE FROM hotel_rel.reservation WHERE confirm_number = 'SIM' || :n::text;

-- tests/bridge/merge/schema.sql: a small order-entry schema (warehouses,
-- districts, customers, orders) for the merged tables of test_merge.sh.
-- No foreign keys on purpose: some customers name a warehouse that does
-- not exist, and some orders a customer that does not, so an inner join
-- to them drops rows.
DROP SCHEMA IF EXISTS mrg_rel CASCADE;
CREATE SCHEMA mrg_rel;

CREATE TABLE mrg_rel.warehouse (
    w_id    integer PRIMARY KEY,
    w_name  text NOT NULL,
    w_tax   numeric(4, 4)
);

CREATE TABLE mrg_rel.district (
    d_w_id  integer NOT NULL,
    d_id    integer NOT NULL,
    d_name  text NOT NULL,
    d_tax   numeric(4, 4),
    PRIMARY KEY (d_w_id, d_id)
);

CREATE TABLE mrg_rel.customer (
    c_w_id      integer NOT NULL,
    c_d_id      integer NOT NULL,
    c_id        integer NOT NULL,
    c_first     text NOT NULL,
    c_last      text NOT NULL,
    c_credit    text NOT NULL,
    c_discount  numeric(4, 4),
    c_balance   numeric(12, 2) NOT NULL,
    PRIMARY KEY (c_w_id, c_d_id, c_id)
);

CREATE TABLE mrg_rel.orders (
    o_w_id      integer NOT NULL,
    o_d_id      integer NOT NULL,
    o_id        integer NOT NULL,
    o_c_id      integer,
    o_entry_d   timestamptz(3) NOT NULL,
    o_carrier   integer,
    PRIMARY KEY (o_w_id, o_d_id, o_id)
);

CREATE TABLE mrg_rel.order_line (
    ol_w_id     integer NOT NULL,
    ol_d_id     integer NOT NULL,
    ol_o_id     integer NOT NULL,
    ol_number   integer NOT NULL,
    ol_i_id     integer NOT NULL,
    ol_amount   numeric(8, 2) NOT NULL,
    PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
);

-- 3 warehouses (customers of warehouse 4 have none), 4 districts each
INSERT INTO mrg_rel.warehouse
SELECT w, 'W' || w, (w * 0.0125)::numeric(4, 4) FROM generate_series(1, 3) w;
INSERT INTO mrg_rel.district
SELECT w, d, 'D' || w || '-' || d, CASE WHEN d = 2 THEN NULL ELSE (d * 0.01)::numeric(4, 4) END
FROM generate_series(1, 4) w, generate_series(1, 4) d;
INSERT INTO mrg_rel.customer
SELECT w, d, c, 'F' || c, 'L' || (c % 7), CASE WHEN c % 5 = 0 THEN 'BC' ELSE 'GC' END,
       CASE WHEN c % 3 = 0 THEN NULL ELSE (c * 0.001)::numeric(4, 4) END, c * 10.5
FROM generate_series(1, 4) w, generate_series(1, 4) d, generate_series(1, 20) c;
-- orders of customers 1..25 (21..25 do not exist), entered a minute apart
INSERT INTO mrg_rel.orders
SELECT w, d, o, CASE WHEN o % 11 = 0 THEN NULL ELSE 1 + o % 25 END,
       timestamptz '2026-01-01 00:00:00+00' + o * interval '1 minute', CASE WHEN o % 4 = 0 THEN NULL ELSE o % 10 END
FROM generate_series(1, 4) w, generate_series(1, 4) d, generate_series(1, 30) o;
INSERT INTO mrg_rel.order_line
SELECT w, d, o, n, 100 + (o * n) % 17, n * 1.25
FROM generate_series(1, 2) w, generate_series(1, 2) d, generate_series(1, 30) o, generate_series(1, 3) n;
ANALYZE mrg_rel.warehouse, mrg_rel.district, mrg_rel.customer, mrg_rel.orders, mrg_rel.order_line;

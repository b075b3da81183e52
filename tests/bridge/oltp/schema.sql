--
-- schema.sql
--	  A small order-entry schema of our own making (warehouses, districts,
--	  customers, orders, order lines, items, stock, new orders) with
--	  deterministic data, for the workload shapes of real OLTP
--	  applications: aggregates within one partition, "latest row" lookups
--	  with LIMIT 1 and LIMIT $n, IN lists, ORs of equalities, queries that
--	  share a key, a range read joined with per-row lookups, and an
--	  aggregate across partitions that no bounded plan serves
--	  (tests/bridge/test_oltp.sh).
--
DROP SCHEMA IF EXISTS oltp CASCADE;
CREATE SCHEMA oltp;

CREATE TABLE oltp.warehouse (
	w_id int PRIMARY KEY,
	w_name text NOT NULL,
	w_tax numeric(4, 4) NOT NULL
);

CREATE TABLE oltp.district (
	d_w_id int NOT NULL REFERENCES oltp.warehouse,
	d_id int NOT NULL,
	d_name text NOT NULL,
	d_tax numeric(4, 4) NOT NULL,
	d_next_o_id int NOT NULL,
	PRIMARY KEY (d_w_id, d_id)
);

CREATE TABLE oltp.customer (
	c_w_id int NOT NULL,
	c_d_id int NOT NULL,
	c_id int NOT NULL,
	c_first text NOT NULL,
	c_last text NOT NULL,
	c_credit text NOT NULL,
	c_discount numeric(4, 4) NOT NULL,
	c_balance numeric(12, 2) NOT NULL,
	c_since timestamptz NOT NULL,
	PRIMARY KEY (c_w_id, c_d_id, c_id),
	FOREIGN KEY (c_w_id, c_d_id) REFERENCES oltp.district
);

CREATE TABLE oltp.item (
	i_id int PRIMARY KEY,
	i_name text NOT NULL,
	i_price numeric(5, 2) NOT NULL
);

CREATE TABLE oltp.stock (
	s_w_id int NOT NULL REFERENCES oltp.warehouse,
	s_i_id int NOT NULL REFERENCES oltp.item,
	s_quantity int NOT NULL,
	s_ytd int NOT NULL,
	PRIMARY KEY (s_w_id, s_i_id)
);

CREATE TABLE oltp.orders (
	o_w_id int NOT NULL,
	o_d_id int NOT NULL,
	o_id int NOT NULL,
	o_c_id int NOT NULL,
	o_entry_d timestamptz NOT NULL,
	o_carrier_id int,
	o_ol_cnt int NOT NULL,
	PRIMARY KEY (o_w_id, o_d_id, o_id)
);

CREATE TABLE oltp.order_line (
	ol_w_id int NOT NULL,
	ol_d_id int NOT NULL,
	ol_o_id int NOT NULL,
	ol_number int NOT NULL,
	ol_i_id int NOT NULL REFERENCES oltp.item,
	ol_supply_w_id int NOT NULL,
	ol_quantity int NOT NULL,
	ol_amount numeric(6, 2) NOT NULL,
	ol_delivery_d timestamptz,
	PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
);

CREATE TABLE oltp.new_order (
	no_w_id int NOT NULL,
	no_d_id int NOT NULL,
	no_o_id int NOT NULL,
	PRIMARY KEY (no_w_id, no_d_id, no_o_id)
);

-- 2 warehouses x 4 districts x 30 customers, 100 items, 12 orders per
-- customer with 1-8 lines each; the last 3 orders of a district undelivered
INSERT INTO oltp.warehouse
SELECT w, 'warehouse ' || w, ((w * 37) % 2000) / 10000.0 FROM generate_series(1, 2) w;
INSERT INTO oltp.district
SELECT w, d, 'district ' || w || '-' || d, ((w * 7 + d * 13) % 2000) / 10000.0, 361
FROM generate_series(1, 2) w, generate_series(1, 4) d;
INSERT INTO oltp.customer
SELECT w, d, c, 'first' || c, (ARRAY['BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES'])[1 + (c * 7 + d) % 5] || 'NAME',
	   CASE WHEN c % 10 = 0 THEN 'BC' ELSE 'GC' END, ((c * 31) % 5000) / 10000.0,
	   ((w * 1000 + d * 100 + c) % 997) - 10.5,
	   timestamptz '2026-01-01 00:00:00+00' + (c * 3 + d) * interval '1 hour 17 minutes 3.123457 seconds'
FROM generate_series(1, 2) w, generate_series(1, 4) d, generate_series(1, 30) c;
INSERT INTO oltp.item
SELECT i, 'item ' || i, 1 + ((i * 97) % 9900) / 100.0 FROM generate_series(1, 100) i;
INSERT INTO oltp.stock
SELECT w, i, 10 + (w * 31 + i * 17) % 91, (w + i) % 50 FROM generate_series(1, 2) w, generate_series(1, 100) i;
INSERT INTO oltp.orders
SELECT w, d, o, 1 + (o * 7) % 30,
	   timestamptz '2026-02-01 00:00:00+00' + o * interval '37 minutes 11.654321 seconds',
	   CASE WHEN o > 357 THEN NULL ELSE 1 + o % 10 END, 1 + (o * 3 + d) % 8
FROM generate_series(1, 2) w, generate_series(1, 4) d, generate_series(1, 360) o;
INSERT INTO oltp.order_line
SELECT o.o_w_id, o.o_d_id, o.o_id, n, 1 + (o.o_id * 13 + n * 7 + o.o_d_id) % 100,
	   CASE WHEN n % 5 = 0 THEN 3 - o.o_w_id ELSE o.o_w_id END, 1 + (o.o_id + n) % 10,
	   ((o.o_id * 101 + n * 37) % 99999) / 100.0,
	   CASE WHEN o.o_carrier_id IS NULL THEN NULL ELSE o.o_entry_d + interval '2 days' END
FROM oltp.orders o, generate_series(1, 8) n
WHERE n <= o.o_ol_cnt;
INSERT INTO oltp.new_order
SELECT o_w_id, o_d_id, o_id FROM oltp.orders WHERE o_carrier_id IS NULL;
ANALYZE oltp.warehouse, oltp.district, oltp.customer, oltp.item, oltp.stock,
	oltp.orders, oltp.order_line, oltp.new_order;

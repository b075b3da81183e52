--
-- workload.sql
--	  The read statements of an order-entry application over schema oltp
--	  (tests/bridge/oltp/schema.sql), in the format of
--	  migrations/hotel/workload.sql: the shapes of a real OLTP workload.
--

-- name: O1_customer
-- description: a customer by its key
-- params: w int, d int, c int
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_first, c.c_last, c.c_balance FROM oltp.customer c WHERE c.c_w_id = :'w'::int AND c.c_d_id = :'d'::int AND c.c_id = :'c'::int;

-- name: O2_customer_credit
-- description: the same customer, its credit and discount
-- params: w int, d int, c int
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_credit, c.c_discount, c.c_since FROM oltp.customer c WHERE c.c_w_id = :'w'::int AND c.c_d_id = :'d'::int AND c.c_id = :'c'::int;

-- name: O3_order_total
-- description: the total and line count of one order
-- params: w int, d int, o int
SELECT count(*) AS lines, sum(ol.ol_amount) AS total, max(ol.ol_delivery_d) AS delivered, avg(ol.ol_quantity) AS avg_qty, min(ol.ol_i_id) AS first_item FROM oltp.order_line ol WHERE ol.ol_w_id = :'w'::int AND ol.ol_d_id = :'d'::int AND ol.ol_o_id = :'o'::int;

-- name: O4_order_supply
-- description: one order's quantities per supplying warehouse
-- params: w int, d int, o int
SELECT ol.ol_supply_w_id, count(*) AS n, sum(ol.ol_quantity) AS qty, max(ol.ol_number) AS last_line FROM oltp.order_line ol WHERE ol.ol_w_id = :'w'::int AND ol.ol_d_id = :'d'::int AND ol.ol_o_id = :'o'::int GROUP BY ol.ol_supply_w_id ORDER BY qty DESC, ol.ol_supply_w_id;

-- name: O5_last_order
-- description: the last order of a customer
-- params: w int, d int, c int
SELECT o.o_id, o.o_entry_d, o.o_carrier_id FROM oltp.orders o WHERE o.o_w_id = :'w'::int AND o.o_d_id = :'d'::int AND o.o_c_id = :'c'::int ORDER BY o.o_id DESC LIMIT 1;

-- name: O6_recent_orders
-- description: a customer's latest orders, as many as the caller asks for
-- params: w int, d int, c int, n bigint
SELECT o.o_id, o.o_entry_d, o.o_ol_cnt FROM oltp.orders o WHERE o.o_w_id = :'w'::int AND o.o_d_id = :'d'::int AND o.o_c_id = :'c'::int ORDER BY o.o_id DESC LIMIT :'n'::bigint;

-- name: O7_oldest_new_order
-- description: the oldest undelivered order of a district
-- params: w int, d int
SELECT no.no_o_id FROM oltp.new_order no WHERE no.no_w_id = :'w'::int AND no.no_d_id = :'d'::int ORDER BY no.no_o_id LIMIT 1;

-- name: O8_items
-- description: the items of a cart, by an IN list
-- params: ids int[]
SELECT i.i_id, i.i_name, i.i_price FROM oltp.item i WHERE i.i_id = ANY (:'ids'::int[]);

-- name: O9_two_districts
-- description: two districts of a warehouse, by an OR of equalities
-- params: w int, d1 int, d2 int
SELECT d.d_w_id, d.d_id, d.d_name, d.d_tax FROM oltp.district d WHERE d.d_w_id = :'w'::int AND (d.d_id = :'d1'::int OR d.d_id = :'d2'::int);

-- name: O10_stock
-- description: the stock of an item in a warehouse
-- params: w int, i int
SELECT s.s_w_id, s.s_i_id, s.s_quantity FROM oltp.stock s WHERE s.s_w_id = :'w'::int AND s.s_i_id = :'i'::int;

-- name: O11_order_lines_stock
-- description: the lines of a district's recent orders with their stock below a threshold
-- params: w int, d int, o int, q int
SELECT ol.ol_o_id, ol.ol_number, ol.ol_i_id, s.s_quantity FROM oltp.order_line ol JOIN oltp.stock s ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id WHERE ol.ol_w_id = :'w'::int AND ol.ol_d_id = :'d'::int AND ol.ol_o_id >= :'o'::int AND s.s_quantity < :'q'::int;

-- name: O12_all_orders
-- description: how many orders there are (an aggregate across partitions)
-- params: none
SELECT count(*) AS orders FROM oltp.orders o;

-- name: O13_customers_of_warehouse
-- description: customers of several warehouses by an IN list of parameters
-- params: w1 int, w2 int, d int, c int
SELECT c.c_w_id, c.c_id, c.c_last FROM oltp.customer c WHERE c.c_w_id IN (:'w1'::int, :'w2'::int) AND c.c_d_id = :'d'::int AND c.c_id = :'c'::int;

-- name: O14_low_stock_lines
-- description: order lines of any district whose stock is low (unbounded lookups)
-- params: o int, q int
SELECT ol.ol_o_id, ol.ol_number, s.s_quantity FROM oltp.order_line ol JOIN oltp.stock s ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id WHERE ol.ol_o_id >= :'o'::int AND s.s_quantity < :'q'::int;

-- tests/bridge/merge/workload.sql: queries that share tables (test_merge.sh).
-- Q1 and Q2 read the same customers with different columns (one table, the
-- union of the columns); Q3 and Q4 add a to-one join to a warehouse or a
-- district (the same table, the joined columns added, each reading only the
-- rows its inner join keeps); Q5 filters by a constant (other rows: a table
-- of its own), and so does Q9 (a filter on the joined warehouse).  Q6 and
-- Q7: the orders of a district, Q6 with the customer and warehouse joined
-- in, planned first (one table, defined by Q7's rows once Q7 comes; orders
-- whose customer does not exist are Q7's only).  Q8 joins the order lines
-- (to-many: another key).  Q10 LEFT JOINs the warehouse (under another
-- alias): all of Q1's rows, so it shares customers without a marker.

-- name: Q1_customer
-- description: a customer by id
-- params: w integer, d integer, c integer
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_first, c.c_last, c.c_balance
FROM mrg_rel.customer c
WHERE c.c_w_id = :'w'::integer AND c.c_d_id = :'d'::integer AND c.c_id = :'c'::integer;

-- name: Q2_customer_credit
-- description: a customer's credit and discount
-- params: w integer, d integer, c integer
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_credit, c.c_discount
FROM mrg_rel.customer c
WHERE c.c_w_id = :'w'::integer AND c.c_d_id = :'d'::integer AND c.c_id = :'c'::integer;

-- name: Q3_customer_tax
-- description: a customer with the warehouse tax joined in
-- params: w integer, d integer, c integer
-- published_key: ((c_w_id), c_d_id, c_id)
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_last, c.c_discount, w.w_tax
FROM mrg_rel.customer c
JOIN mrg_rel.warehouse w ON w.w_id = c.c_w_id
WHERE c.c_w_id = :'w'::integer AND c.c_d_id = :'d'::integer AND c.c_id = :'c'::integer;

-- name: Q4_customer_district
-- description: a customer with the district name and tax
-- params: w integer, d integer, c integer
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_first, d.d_name, d.d_tax
FROM mrg_rel.customer c
JOIN mrg_rel.district d ON d.d_w_id = c.c_w_id AND d.d_id = c.c_d_id
WHERE c.c_w_id = :'w'::integer AND c.c_d_id = :'d'::integer AND c.c_id = :'c'::integer;

-- name: Q5_bad_credit
-- description: a customer with bad credit (a constant filter: other rows)
-- params: w integer, d integer, c integer
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_last, c.c_balance
FROM mrg_rel.customer c
WHERE c.c_w_id = :'w'::integer AND c.c_d_id = :'d'::integer AND c.c_id = :'c'::integer
  AND c.c_credit = 'BC';

-- name: Q6_district_orders_named
-- description: the orders of a district with the customer's name and the warehouse's
-- params: w integer, d integer
SELECT o.o_w_id, o.o_d_id, o.o_id, o.o_entry_d, c.c_last, w.w_name
FROM mrg_rel.orders o
JOIN mrg_rel.customer c ON c.c_w_id = o.o_w_id AND c.c_d_id = o.o_d_id AND c.c_id = o.o_c_id
JOIN mrg_rel.warehouse w ON w.w_id = o.o_w_id
WHERE o.o_w_id = :'w'::integer AND o.o_d_id = :'d'::integer
ORDER BY o.o_id DESC;

-- name: Q7_district_orders
-- description: the orders of a district, newest first
-- params: w integer, d integer
SELECT o.o_w_id, o.o_d_id, o.o_id, o.o_c_id, o.o_entry_d, o.o_carrier
FROM mrg_rel.orders o
WHERE o.o_w_id = :'w'::integer AND o.o_d_id = :'d'::integer
ORDER BY o.o_id DESC;

-- name: Q8_order_lines
-- description: the lines of a district's orders (to-many: a key of its own)
-- params: w integer, d integer
SELECT o.o_w_id, o.o_d_id, o.o_id, o.o_entry_d, l.ol_number, l.ol_amount
FROM mrg_rel.orders o
JOIN mrg_rel.order_line l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id
WHERE o.o_w_id = :'w'::integer AND o.o_d_id = :'d'::integer
ORDER BY o.o_id DESC, l.ol_number;

-- name: Q9_customer_low_tax
-- description: a customer of a low-tax warehouse (a filter on the joined relation: other rows)
-- params: w integer, d integer, c integer
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_last, w.w_tax
FROM mrg_rel.customer c
JOIN mrg_rel.warehouse w ON w.w_id = c.c_w_id
WHERE c.c_w_id = :'w'::integer AND c.c_d_id = :'d'::integer AND c.c_id = :'c'::integer
  AND w.w_tax < 0.03;

-- name: Q10_customer_warehouse_name
-- description: a customer with the name of the warehouse, if there is one (LEFT JOIN: every row)
-- params: w integer, d integer, c integer
SELECT c.c_w_id, c.c_d_id, c.c_id, c.c_balance, w2.w_name
FROM mrg_rel.customer c
LEFT JOIN mrg_rel.warehouse w2 ON w2.w_id = c.c_w_id
WHERE c.c_w_id = :'w'::integer AND c.c_d_id = :'d'::integer AND c.c_id = :'c'::integer;

--
-- workload.sql
--	  Six queries of the app_rel shop, in the format of
--	  migrations/hotel/workload.sql (see its header): enum, domain and
--	  timestamp columns in keys; jsonb, arrays, interval, money, citext,
--	  char(n) and a domain in values.
--

-- name: Q1_orders_by_customer
-- description: a customer's orders, newest first
-- params: customer_id bigint
SELECT o.customer_id, o.placed_at, o.order_id, o.status, o.attrs, o.tags, o.scores, o.total, o.delivery, o.qty, o.weight, o.seen_at
FROM app_rel.orders o
WHERE o.customer_id = :'customer_id'::bigint
ORDER BY o.placed_at DESC, o.order_id;

-- name: Q2_orders_by_status
-- description: orders in one status, with the customer's contact
-- params: status app_rel.order_status
SELECT o.status, o.order_id, o.customer_id, c.email, c.nick, c.country, o.placed_at
FROM app_rel.orders o
JOIN app_rel.customer c ON c.customer_id = o.customer_id
WHERE o.status = :'status'::app_rel.order_status
ORDER BY o.order_id;

-- name: Q3_customer_by_email
-- description: a customer by email (a domain over text)
-- params: email app_rel.email
SELECT c.email, c.customer_id, c.name, c.nick, c.country, c.ip, c.net, c.created_at
FROM app_rel.customer c
WHERE c.email = :'email'::app_rel.email;

-- name: Q4_signals_by_user
-- description: a user's signals, newest first
-- params: user_id bigint
SELECT s.user_id, s.created_at, s.kind
FROM app_rel.signal s
WHERE s.user_id = :'user_id'::bigint
ORDER BY s.created_at DESC;

-- name: Q5_orders_by_customer_status
-- description: a customer's orders by status (an enum clustering column)
-- params: customer_id bigint
SELECT o.customer_id, o.status, o.order_id, o.total
FROM app_rel.orders o
WHERE o.customer_id = :'customer_id'::bigint
ORDER BY o.status, o.order_id;

-- name: Q6_customer_order_times
-- description: a customer with the times of their orders (a list in order, a set)
-- params: customer_id bigint
SELECT c.customer_id, c.name, (SELECT array_agg(o.placed_at ORDER BY o.order_id) FROM app_rel.orders o WHERE o.customer_id = c.customer_id) AS order_times, (SELECT array_agg(DISTINCT o.placed_at) FROM app_rel.orders o WHERE o.customer_id = c.customer_id) AS order_time_set
FROM app_rel.customer c
WHERE c.customer_id = :'customer_id'::bigint;

--
-- 001_app.sql
--	  A small shop with application-style types: an enum, domains, jsonb,
--	  arrays, interval, money, citext and char(n), and timestamps written
--	  with now()/clock_timestamp() (microseconds).  Everything lives in
--	  schema app_rel (citext in public).  Used by tests/bridge/test_app_data.sh.
--	  citext is a contrib module: where it is not installed, nick is text.
--
CREATE SCHEMA app_rel;

CREATE TYPE app_rel.order_status AS ENUM ('new', 'paid', 'shipped', 'cancelled');
CREATE DOMAIN app_rel.email AS text CHECK (VALUE LIKE '%_@_%');
CREATE DOMAIN app_rel.quantity AS integer CHECK (VALUE > 0);

CREATE TABLE app_rel.customer (
	customer_id			bigint PRIMARY KEY,
	email				app_rel.email NOT NULL UNIQUE,
	name				text NOT NULL,
	nick				text,			-- citext where the module is installed
	country				char(2) NOT NULL,
	ip					inet,
	net					cidr,
	created_at			timestamptz NOT NULL DEFAULT now()
);

DO $$
BEGIN
	IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'citext') THEN
		CREATE EXTENSION IF NOT EXISTS citext SCHEMA public;
		ALTER TABLE app_rel.customer ALTER COLUMN nick TYPE public.citext;
	END IF;
END $$;

CREATE SEQUENCE app_rel.order_ids START 100000;

CREATE TABLE app_rel.orders (
	order_id			bigint PRIMARY KEY DEFAULT nextval('app_rel.order_ids'),
	customer_id			bigint NOT NULL REFERENCES app_rel.customer,
	status				app_rel.order_status NOT NULL,
	placed_at			timestamptz NOT NULL DEFAULT clock_timestamp(),
	attrs				jsonb,
	tags				text[],
	scores				integer[],
	total				money,
	delivery			interval,
	qty					app_rel.quantity,
	weight				numeric,
	seen_at				timestamptz[]
);
CREATE INDEX ON app_rel.orders (customer_id);

-- a user's signals: (user_id, created_at) is unique at the microsecond, not
-- at the millisecond Cassandra stores (the MR5 trap of issue 26)
CREATE SEQUENCE app_rel.signal_ids START 100000;

CREATE TABLE app_rel.signal (
	signal_id			bigint PRIMARY KEY DEFAULT nextval('app_rel.signal_ids'),
	user_id				bigint NOT NULL,
	created_at			timestamptz NOT NULL DEFAULT clock_timestamp(),
	kind				app_rel.order_status NOT NULL,
	UNIQUE (user_id, created_at)
);

-- pg_temp.await_cql(server, VARIADIC cql): run the statements through
-- cql_execute until all succeed, at most 30 s.  Every node builds a new
-- Storage-Attached Index on its own, and refuses queries through it until
-- it has: a suite waits for the indexes it needs instead of sleeping.
CREATE FUNCTION pg_temp.await_cql(server text, VARIADIC cqls text[]) RETURNS void
LANGUAGE plpgsql AS $await$
BEGIN
  FOR i IN 1..150 LOOP
    BEGIN
      FOR j IN 1..cardinality(cqls) LOOP
        PERFORM cql_execute(server, cqls[j]);
      END LOOP;
      RETURN;
    EXCEPTION WHEN OTHERS THEN
      PERFORM pg_sleep(0.2);
    END;
  END LOOP;
END $await$;

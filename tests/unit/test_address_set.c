/*
 * test_address_set.c
 *		cql_address_set: the endpoints a cluster restricted to its contact
 *		points may connect to (no server; "localhost" is resolved through
 *		/etc/hosts).
 */
#include "tap.h"
#include "cql_cluster.h"
#include "failing_alloc.h"

static void
test_numeric(void)
{
	cql_address_set *s = NULL;

	ok(cql_address_set_create(NULL, &s) == CQL_OK, "create");
	ok(cql_address_set_add(s, "127.0.0.1", 9042, NULL, NULL, 1000) == CQL_OK, "add 127.0.0.1:9042");
	ok(cql_address_set_add(s, "::1", 9043, NULL, NULL, 1000) == CQL_OK, "add ::1:9043");
	ok(cql_address_set_contains(s, "127.0.0.1", 9042), "same address and port");
	ok(!cql_address_set_contains(s, "127.0.0.1", 9043), "same address, other port");
	ok(!cql_address_set_contains(s, "127.0.0.2", 9042), "a peer's address is not a contact point");
	ok(cql_address_set_contains(s, "0:0::1", 9043), "IPv6 compared in binary form");
	ok(!cql_address_set_contains(s, "::1", 9042), "IPv6 with another port");
	ok(!cql_address_set_contains(s, "::ffff:127.0.0.2", 9042), "mapped address of a peer");
	ok(!cql_address_set_contains(s, NULL, 9042), "NULL host");
	ok(!cql_address_set_contains(NULL, "127.0.0.1", 9042), "NULL set");
	ok(!cql_address_set_contains(s, "", 9042), "empty host");
	cql_address_set_free(s);
}

static void
test_names(void)
{
	cql_address_set *s = NULL;

	ok(cql_address_set_create(NULL, &s) == CQL_OK, "create");
	ok(cql_address_set_add(s, "localhost", 9042, NULL, NULL, 2000) == CQL_OK, "add localhost");
	ok(cql_address_set_contains(s, "LOCALHOST", 9042), "names compare case-insensitively");
	ok(cql_address_set_contains(s, "127.0.0.1", 9042), "localhost resolved to 127.0.0.1");
	ok(!cql_address_set_contains(s, "127.0.0.3", 9042), "but not to 127.0.0.3");
	ok(cql_address_set_add(s, "no-such-host.invalid", 9042, NULL, NULL, 2000) == CQL_OK,
	   "an unresolvable name is not an error");
	ok(cql_address_set_contains(s, "no-such-host.invalid", 9042), "... it matches by name");
	cql_address_set_free(s);
}

static void
test_nomem(void)
{
	int			clean = 1;

	for (long k = 0; k < 20; k++)
	{
		cql_address_set *s = NULL;
		cql_status	st;

		fail_countdown = k;
		st = cql_address_set_create(&failing_allocator, &s);
		if (st == CQL_OK)
			for (int i = 0; i < 12 && st == CQL_OK; i++)
			{
				char		h[32];

				snprintf(h, sizeof(h), "10.0.0.%d", i);
				st = cql_address_set_add(s, h, 9042, NULL, NULL, 1000);
			}
		fail_countdown = -1;
		if (st != CQL_OK && st != CQL_ERR_NOMEM)
			clean = 0;
		cql_address_set_free(s);
	}
	ok(clean, "every allocation failure is CQL_ERR_NOMEM and leaks nothing");
}

int
main(void)
{
	plan(20);		/* every assertion runs on a passing build */
	test_numeric();
	test_names();
	test_nomem();
	return done_testing();
}

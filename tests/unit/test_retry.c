/*
 * test_retry.c
 *		The retry policy (src/cql/cql_retry.c), rule by rule: what may be
 *		sent again, where, and what never is (non-idempotent requests after
 *		anything that may have reached a replica).
 */
#include <string.h>

#include "tap.h"
#include "cql_conn.h"

static cql_error
server_error(int32_t code)
{
	cql_error	e;

	cql_error_clear(&e);
	e.status = CQL_ERR_SERVER;
	e.code = code;
	return e;
}

static void
test_transport(void)
{
	cql_error	e;

	cql_error_clear(&e);
	is_int(cql_retry_decide(CQL_ERR_CLOSED, &e, true, 0), CQL_RETRY_NEXT_HOST,
		   "connection closed, idempotent: next host");
	is_int(cql_retry_decide(CQL_ERR_CLOSED, &e, false, 0), CQL_RETRY_NO,
		   "connection closed, not idempotent: never (it may have been applied)");
	is_int(cql_retry_decide(CQL_ERR_IO, &e, true, 2), CQL_RETRY_NEXT_HOST,
		   "I/O error, idempotent: next host (the caller bounds the tries)");
	is_int(cql_retry_decide(CQL_ERR_STATE, &e, false, 0), CQL_RETRY_NO,
		   "broken connection, not idempotent: never");
	is_int(cql_retry_decide(CQL_ERR_TIMEOUT, &e, true, 0), CQL_RETRY_NEXT_HOST,
		   "no answer in time, idempotent: next host");
	is_int(cql_retry_decide(CQL_ERR_TIMEOUT, &e, false, 0), CQL_RETRY_NO,
		   "no answer in time, not idempotent: never");
	is_int(cql_retry_decide(CQL_ERR_CONNECT, &e, false, 0), CQL_RETRY_NEXT_HOST,
		   "connect refused: never sent, any request goes to the next host");
	is_int(cql_retry_decide(CQL_ERR_INTERRUPTED, &e, true, 0), CQL_RETRY_NO,
		   "the caller's own interrupt: never");
	is_int(cql_retry_decide(CQL_ERR_MALFORMED, &e, true, 0), CQL_RETRY_NO,
		   "a malformed answer: never");
	is_int(cql_retry_decide(CQL_ERR_TOO_LARGE, &e, true, 0), CQL_RETRY_NO,
		   "an answer over max_body: never");
}

static void
test_server(void)
{
	cql_error	e;

	e = server_error(CQL_ERRCODE_UNAVAILABLE);
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, false, 0), CQL_RETRY_NEXT_HOST,
		   "Unavailable: nothing happened, next host once, any request");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 1), CQL_RETRY_NO,
		   "Unavailable a second time: returned");

	e = server_error(CQL_ERRCODE_OVERLOADED);
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NEXT_HOST,
		   "Overloaded, idempotent: next host");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, false, 0), CQL_RETRY_NO,
		   "Overloaded, not idempotent: never");
	e = server_error(CQL_ERRCODE_IS_BOOTSTRAPPING);
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NEXT_HOST,
		   "IsBootstrapping, idempotent: next host");
	e = server_error(CQL_ERRCODE_SERVER_ERROR);
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NEXT_HOST,
		   "Server_error, idempotent: next host");

	e = server_error(CQL_ERRCODE_READ_TIMEOUT);
	e.received = 2;
	e.blockfor = 2;
	e.data_present = false;
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_SAME_HOST,
		   "read timeout with enough replicas but no data: same host once (the drivers' rule)");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 1), CQL_RETRY_NEXT_HOST,
		   "... and the next host after that");
	e.received = 1;
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NEXT_HOST,
		   "read timeout with too few replicas: next host");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, false, 0), CQL_RETRY_NO,
		   "read timeout of a non-idempotent request (an LWT read): never");

	e = server_error(CQL_ERRCODE_WRITE_TIMEOUT);
	strcpy(e.write_type, "SIMPLE");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NEXT_HOST,
		   "write timeout of a timestamped upsert: next host");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, false, 0), CQL_RETRY_NO,
		   "write timeout of a non-idempotent write: never");
	strcpy(e.write_type, "UNLOGGED_BATCH");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NEXT_HOST,
		   "write timeout of a timestamped unlogged batch: next host");
	strcpy(e.write_type, "COUNTER");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NO,
		   "write timeout of a counter update: never, whatever the caller says");
	strcpy(e.write_type, "CAS");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NO,
		   "write timeout of a lightweight transaction: never");
	strcpy(e.write_type, "BATCH_LOG");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, false, 0), CQL_RETRY_SAME_HOST,
		   "batch log write timeout: same host once (the batch log replays it)");
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, false, 1), CQL_RETRY_NO,
		   "... not twice");

	e = server_error(CQL_ERRCODE_READ_FAILURE);
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NO,
		   "Read_failure: never");
	e = server_error(CQL_ERRCODE_WRITE_FAILURE);
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NO,
		   "Write_failure: never");
	e = server_error(CQL_ERRCODE_SYNTAX_ERROR);
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NO,
		   "syntax error: never");
	e = server_error(CQL_ERRCODE_INVALID);
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NO,
		   "invalid request: never");
	e = server_error(CQL_ERRCODE_UNAUTHORIZED);
	is_int(cql_retry_decide(CQL_ERR_SERVER, &e, true, 0), CQL_RETRY_NO,
		   "unauthorized: never");
	is_int(cql_retry_decide(CQL_ERR_SERVER, NULL, true, 0), CQL_RETRY_NO,
		   "a server error without details: never");
	is_str(cql_retry_decision_name(CQL_RETRY_NEXT_HOST), "retry on the next host",
		   "decisions have names for the logs");
}

int
main(void)
{
	plan(34);		/* every assertion runs on a passing build */
	test_transport();
	test_server();
	return done_testing();
}

/*-------------------------------------------------------------------------
 *
 * timeuuid.c
 *		Version-1 (time-based) UUIDs from SQL, for Cassandra's timeuuid:
 *
 *		cql_timeuuid_now()				a new timeuuid of the current time
 *										(CQL now())
 *		cql_timeuuid(timestamptz)		a new timeuuid of a given time
 *		cql_min_timeuuid(timestamptz)	the smallest timeuuid of the
 *										millisecond of t (CQL minTimeuuid)
 *		cql_max_timeuuid(timestamptz)	the largest one (CQL maxTimeuuid)
 *		cql_timeuuid_time(uuid)			the millisecond of a timeuuid (CQL
 *										toTimestamp)
 *
 * A version-1 UUID (RFC 4122, 4.1.2) holds a 60-bit count of 100 ns ticks
 * since 1582-10-15 00:00 UTC: bytes 0-3 are its low 32 bits, 4-5 the next
 * 16, 6-7 the top 12 under the version nibble (1); bytes 8-9 are the
 * variant (binary 10) and a 14-bit clock sequence, 10-15 the node.
 *
 * Cassandra compares timeuuids by that tick count first and then by the
 * last 8 bytes as signed bytes (TimeUUIDType).  minTimeuuid(t) is the first
 * tick of t's millisecond with eight bytes 0x80 (-128, the smallest), and
 * maxTimeuuid(t) the last tick with eight bytes 0x7f: every timeuuid of
 * that millisecond lies between them (Cassandra's TimeUUID.minAtUnixMillis
 * and maxAtUnixMillis).  CQL timestamps are milliseconds: the microseconds
 * of a timestamptz are dropped (rounded down) here as well.
 *
 * PostgreSQL's uuid comparison is bytewise, which for version-1 UUIDs is
 * no order of time at all (the low bits of the time come first).  A range
 * "timeuuid column > cql_min_timeuuid(...)" is therefore only meaningful
 * in Cassandra: the planner sends it as a clustering range (deparse.c,
 * via cqlfdw_timeuuid_bound) and refuses to check it locally
 * (cqlfdw_check_local_timeuuid).  The bounds are STABLE rather than
 * IMMUTABLE so that a call on constants stays a call the planner can
 * recognize, instead of being folded into a plain uuid constant.
 *
 * IDENTIFICATION
 *		src/fdw/timeuuid.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "timeuuid.h"

PG_FUNCTION_INFO_V1(cql_timeuuid_now);
PG_FUNCTION_INFO_V1(cql_timeuuid);
PG_FUNCTION_INFO_V1(cql_min_timeuuid);
PG_FUNCTION_INFO_V1(cql_max_timeuuid);
PG_FUNCTION_INFO_V1(cql_timeuuid_time);

/* 100 ns ticks from the UUID epoch (1582-10-15) to the Unix epoch */
#define UUID_TICKS_TO_UNIX	INT64CONST(122192928000000000)
/* microseconds from the Unix epoch to PostgreSQL's (2000-01-01) */
#define UNIX_TO_PG_USECS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)
/* the largest tick count: 60 bits (a little after the year 5236) */
#define UUID_TICKS_MAX		((INT64CONST(1) << 60) - 1)

/*
 * floor_div
 *		a / b rounded towards minus infinity (b > 0).
 */
static int64
floor_div(int64 a, int64 b)
{
	int64		q = a / b;

	if (a % b < 0)
		q--;
	return q;
}

/*
 * ticks_of_ms
 *		The tick count of the first 100 ns of the Unix millisecond of ts
 *		(microseconds dropped, as a CQL timestamp has none), checked to be
 *		a timeuuid time with 'extra' ticks after it; 'fn' names the caller
 *		in the error.
 */
static int64
ticks_of_ms(TimestampTz ts, int64 extra, const char *fn)
{
	int64		unix_ms;
	int64		ticks;

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s() cannot take an infinite timestamp", fn),
				 errhint("Give a finite timestamptz between 1582-10-15 and 5236-03-31 (UTC).")));
	unix_ms = floor_div(ts + UNIX_TO_PG_USECS, 1000);
	ticks = unix_ms * 10000 + UUID_TICKS_TO_UNIX;
	if (ticks < 0 || ticks > UUID_TICKS_MAX - extra)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for a timeuuid: %s",
						timestamptz_to_str(ts)),
				 errdetail("A version 1 UUID counts 100 ns steps from 1582-10-15 00:00 UTC in 60 bits."),
				 errhint("Give a timestamptz between 1582-10-15 and 5236-03-31 (UTC).")));
	return ticks;
}

/*
 * fill_time
 *		The first 8 bytes of a version-1 UUID of tick count 'ticks'.
 */
static void
fill_time(pg_uuid_t *u, int64 ticks)
{
	uint64		t = (uint64) ticks;

	u->data[0] = (uint8) (t >> 24);
	u->data[1] = (uint8) (t >> 16);
	u->data[2] = (uint8) (t >> 8);
	u->data[3] = (uint8) t;
	u->data[4] = (uint8) (t >> 40);
	u->data[5] = (uint8) (t >> 32);
	u->data[6] = (uint8) (0x10 | ((t >> 56) & 0x0f));
	u->data[7] = (uint8) (t >> 48);
}

/*
 * fill_random_node
 *		Bytes 8-15 of a generated UUID: the RFC 4122 variant, a random
 *		clock sequence and a random node with the multicast bit set (RFC
 *		4122, 4.5: a node that is no IEEE 802 address).
 */
static void
fill_random_node(pg_uuid_t *u)
{
	if (!pg_strong_random(&u->data[8], 8))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate random bytes for a timeuuid")));
	u->data[8] = (uint8) (0x80 | (u->data[8] & 0x3f));
	u->data[10] |= 0x01;
}

/*
 * cql_timeuuid_now
 *		cql_timeuuid_now() -> uuid: a new timeuuid of the current time, as
 *		CQL's now() gives.
 *
 * The time is the clock at the call (not the transaction's start), in
 * microseconds.  Within a backend the ids are strictly increasing in
 * Cassandra's order: a call in the same microsecond as the previous one
 * takes the next 100 ns tick.  The clock sequence and node are random,
 * drawn once per backend, so two backends do not produce the same id.
 */
Datum
cql_timeuuid_now(PG_FUNCTION_ARGS)
{
	static int64 last_ticks = -1;
	static pg_uuid_t node;
	static bool have_node = false;
	pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));
	TimestampTz now = GetCurrentTimestamp();
	int64		ticks;

	if (!have_node)
	{
		fill_random_node(&node);
		have_node = true;
	}
	ticks = (now + UNIX_TO_PG_USECS) * 10 + UUID_TICKS_TO_UNIX;
	if (ticks <= last_ticks)
		ticks = last_ticks + 1;
	last_ticks = ticks;
	fill_time(u, ticks);
	memcpy(&u->data[8], &node.data[8], 8);
	PG_RETURN_UUID_P(u);
}

/*
 * cql_timeuuid
 *		cql_timeuuid(timestamptz) -> uuid: a new timeuuid of the given time
 *		(to the microsecond), unique by its 62 random bits of clock
 *		sequence and node; for rows whose key is a time of the past.
 */
Datum
cql_timeuuid(PG_FUNCTION_ARGS)
{
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));
	int64		ticks;

	/* range check on the millisecond, then the microseconds */
	ticks = ticks_of_ms(ts, 9999, "cql_timeuuid");
	ticks += (ts - floor_div(ts, 1000) * 1000) * 10;
	fill_time(u, ticks);
	fill_random_node(u);
	PG_RETURN_UUID_P(u);
}

/*
 * cql_min_timeuuid
 *		cql_min_timeuuid(timestamptz) -> uuid: CQL's minTimeuuid(t), the
 *		smallest timeuuid of t's millisecond in Cassandra's order.  Meant
 *		for queries only: it is no unique id.
 */
Datum
cql_min_timeuuid(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

	fill_time(u, ticks_of_ms(PG_GETARG_TIMESTAMPTZ(0), 9999, "cql_min_timeuuid"));
	memset(&u->data[8], 0x80, 8);
	PG_RETURN_UUID_P(u);
}

/*
 * cql_max_timeuuid
 *		cql_max_timeuuid(timestamptz) -> uuid: CQL's maxTimeuuid(t), the
 *		largest timeuuid of t's millisecond in Cassandra's order.
 */
Datum
cql_max_timeuuid(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

	fill_time(u, ticks_of_ms(PG_GETARG_TIMESTAMPTZ(0), 9999, "cql_max_timeuuid") + 9999);
	memset(&u->data[8], 0x7f, 8);
	PG_RETURN_UUID_P(u);
}

/*
 * cql_timeuuid_time
 *		cql_timeuuid_time(uuid) -> timestamptz: the time of a timeuuid to
 *		the millisecond, as CQL's toTimestamp(id) gives (rounded down:
 *		Cassandra rounds the rare ids before 1970 towards 1970 instead).
 *		Comparing it with a timestamptz orders by time, unlike uuid's own
 *		comparison.
 */
Datum
cql_timeuuid_time(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *u = PG_GETARG_UUID_P(0);
	const uint8 *d = u->data;
	uint64		ticks;
	int64		unix_us;

	if ((d[6] >> 4) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cql_timeuuid_time() needs a version 1 UUID, got version %d",
						d[6] >> 4),
				 errdetail("Only time-based (version 1) UUIDs, Cassandra's timeuuid, hold a time."),
				 errhint("Pass a timeuuid column or a value of cql_timeuuid_now() or cql_timeuuid().")));
	ticks = ((uint64) (d[6] & 0x0f) << 56) | ((uint64) d[7] << 48) |
		((uint64) d[4] << 40) | ((uint64) d[5] << 32) |
		((uint64) d[0] << 24) | ((uint64) d[1] << 16) |
		((uint64) d[2] << 8) | (uint64) d[3];
	unix_us = (int64) (ticks / 10) - UUID_TICKS_TO_UNIX / 10;
	PG_RETURN_TIMESTAMPTZ(floor_div(unix_us, 1000) * 1000 - UNIX_TO_PG_USECS);
}

/*
 * cqlfdw_timeuuid_bound
 *		Is e (under binary relabelings) a call of cql_min_timeuuid() or
 *		cql_max_timeuuid()?  Recognized by the C function it runs, so the
 *		extension's schema and the function's name do not matter.
 */
CqlTimeuuidBound
cqlfdw_timeuuid_bound(Expr *e)
{
	FuncExpr   *f;
	FmgrInfo	flinfo;

	while (e && IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	if (e == NULL || !IsA(e, FuncExpr))
		return CQLTIMEUUID_NOT_BOUND;
	f = (FuncExpr *) e;
	if (f->funcresulttype != UUIDOID || list_length(f->args) != 1 ||
		exprType(linitial(f->args)) != TIMESTAMPTZOID)
		return CQLTIMEUUID_NOT_BOUND;
	fmgr_info(f->funcid, &flinfo);
	if (flinfo.fn_addr == cql_min_timeuuid)
		return CQLTIMEUUID_MIN;
	if (flinfo.fn_addr == cql_max_timeuuid)
		return CQLTIMEUUID_MAX;
	return CQLTIMEUUID_NOT_BOUND;
}

/*
 * local_timeuuid_walker
 *		Finds a uuid ordering comparison (<, <=, >, >=) with a
 *		cql_min_timeuuid() or cql_max_timeuuid() operand; sets *found to it.
 */
static bool
local_timeuuid_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) node;

		set_opfuncid(op);
		if ((op->opfuncid == F_UUID_LT || op->opfuncid == F_UUID_LE ||
			 op->opfuncid == F_UUID_GT || op->opfuncid == F_UUID_GE) &&
			list_length(op->args) == 2 &&
			(cqlfdw_timeuuid_bound(linitial(op->args)) != CQLTIMEUUID_NOT_BOUND ||
			 cqlfdw_timeuuid_bound(lsecond(op->args)) != CQLTIMEUUID_NOT_BOUND))
		{
			*(OpExpr **) context = op;
			return true;
		}
	}
	return expression_tree_walker(node, local_timeuuid_walker, context);
}

/*
 * cqlfdw_check_local_timeuuid
 *		Refuses a scan that would check a timeuuid range locally: PostgreSQL
 *		would compare the uuids' bytes, not their times, and return other
 *		rows than Cassandra.  local_exprs are the scan's local quals.
 */
void
cqlfdw_check_local_timeuuid(List *local_exprs, const char *relname)
{
	OpExpr	   *op = NULL;

	if (!local_timeuuid_walker((Node *) local_exprs, &op))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("a range with cql_min_timeuuid() or cql_max_timeuuid() on foreign table \"%s\" cannot be sent to Cassandra",
					relname),
			 errdetail("Only Cassandra compares timeuuids by time; PostgreSQL compares uuid values byte by byte, which would return other rows."),
			 errhint("Compare a timeuuid clustering column and restrict the partition key (and the clustering columns before it) with =, or compare cql_timeuuid_time(column) with a timestamptz.")));
}

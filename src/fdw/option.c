/*-------------------------------------------------------------------------
 *
 * option.c
 *		Validation and merging of cql_fdw options.
 *
 * Every option is checked when it is set (CREATE/ALTER SERVER, USER
 * MAPPING, FOREIGN TABLE), not at first use, so a typo is reported where it
 * was made.  Table options override server options of the same name.
 *
 * IDENTIFICATION
 *		src/fdw/option.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/pquery.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/portal.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "bucket.h"
#include "convert.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "cql_wire.h"



/* What an option is, and where it may appear */
typedef enum CqlOptionKind
{
	OPT_STRING,
	OPT_HOSTS,
	OPT_PORT,
	OPT_INT_POSITIVE,			/* > 0 */
	OPT_INT_NONNEG,				/* >= 0 */
	OPT_BOOL,
	OPT_BYTES,					/* size in bytes, units allowed: '16MB' */
	OPT_PROTOCOL,
	OPT_COMPRESSION,
	OPT_READ_CONSISTENCY,
	OPT_WRITE_CONSISTENCY,
	OPT_SERIAL_CONSISTENCY,		/* SERIAL, LOCAL_SERIAL */
	OPT_MS_POSITIVE,			/* a time > 0, in ms or with a unit: '10s' */
	OPT_MS_NONNEG,				/* a time >= 0, in ms or with a unit */
	OPT_S_NONNEG,				/* a time >= 0, in s or with a unit: '1h' */
	OPT_WRITE_MODE,
	OPT_COLUMN_KIND,
	OPT_CLUSTERING_ORDER,
	OPT_SSLMODE,
	OPT_BUCKET,					/* bucket.c's spec */
	OPT_SIMILARITY,				/* cosine, euclidean, dot_product */
	OPT_TS_PRECISION,			/* truncate, round, error */
	OPT_FILE					/* absolute path read by the server process:
								 * superuser only */
} CqlOptionKind;

typedef struct CqlOption
{
	const char *name;
	Oid			context;		/* catalog where it may be set */
	CqlOptionKind kind;
} CqlOption;

static const CqlOption cql_options[] = {
	/* connection */
	{"host", ForeignServerRelationId, OPT_HOSTS},
	{"port", ForeignServerRelationId, OPT_PORT},
	{"protocol_version", ForeignServerRelationId, OPT_PROTOCOL},
	{"compression", ForeignServerRelationId, OPT_COMPRESSION},
	{"connect_timeout", ForeignServerRelationId, OPT_MS_POSITIVE},
	{"request_timeout", ForeignServerRelationId, OPT_MS_POSITIVE},
	{"local_dc", ForeignServerRelationId, OPT_STRING},
	{"discover_peers", ForeignServerRelationId, OPT_BOOL},
	{"max_response_size", ForeignServerRelationId, OPT_BYTES},
	{"heartbeat_interval", ForeignServerRelationId, OPT_MS_NONNEG},
	{"application_name", ForeignServerRelationId, OPT_STRING},
	{"keep_connections", ForeignServerRelationId, OPT_BOOL},
	{"updatable", ForeignServerRelationId, OPT_BOOL},
	{"updatable", ForeignTableRelationId, OPT_BOOL},

	/* TLS, with libpq's names and meanings (docs/cql_fdw.md) */
	{"sslmode", ForeignServerRelationId, OPT_SSLMODE},
	{"sslrootcert", ForeignServerRelationId, OPT_FILE},
	{"sslcert", ForeignServerRelationId, OPT_FILE},
	{"sslkey", ForeignServerRelationId, OPT_FILE},

	/* retries of idempotent requests on other hosts (docs/cql_fdw.md) */
	{"max_retries", ForeignServerRelationId, OPT_INT_NONNEG},
	{"max_retries", ForeignTableRelationId, OPT_INT_NONNEG},
	{"retry_timeout", ForeignServerRelationId, OPT_MS_POSITIVE},
	{"retry_timeout", ForeignTableRelationId, OPT_MS_POSITIVE},
	{"speculative_delay", ForeignServerRelationId, OPT_MS_NONNEG},
	{"speculative_delay", ForeignTableRelationId, OPT_MS_NONNEG},

	/* credentials; "user" as in postgres_fdw and libpq, "username" too */
	{"user", UserMappingRelationId, OPT_STRING},
	{"username", UserMappingRelationId, OPT_STRING},
	{"password", UserMappingRelationId, OPT_STRING},
	{"password_required", UserMappingRelationId, OPT_BOOL},
	{"sslcert", UserMappingRelationId, OPT_FILE},
	{"sslkey", UserMappingRelationId, OPT_FILE},
	{"sslpassword", UserMappingRelationId, OPT_STRING},

	/* reads: server default, table override */
	{"consistency", ForeignServerRelationId, OPT_READ_CONSISTENCY},
	{"consistency", ForeignTableRelationId, OPT_READ_CONSISTENCY},
	{"fetch_size", ForeignServerRelationId, OPT_INT_POSITIVE},
	{"fetch_size", ForeignTableRelationId, OPT_INT_POSITIVE},
	{"scan_window", ForeignServerRelationId, OPT_INT_POSITIVE},
	{"scan_window", ForeignTableRelationId, OPT_INT_POSITIVE},

	/* writes: server default, table override */
	{"write_consistency", ForeignServerRelationId, OPT_WRITE_CONSISTENCY},
	{"write_consistency", ForeignTableRelationId, OPT_WRITE_CONSISTENCY},
	{"serial_consistency", ForeignServerRelationId, OPT_SERIAL_CONSISTENCY},
	{"serial_consistency", ForeignTableRelationId, OPT_SERIAL_CONSISTENCY},
	{"ttl", ForeignServerRelationId, OPT_S_NONNEG},
	{"ttl", ForeignTableRelationId, OPT_S_NONNEG},
	{"batch_size", ForeignServerRelationId, OPT_INT_POSITIVE},
	{"batch_size", ForeignTableRelationId, OPT_INT_POSITIVE},
	{"write_mode", ForeignServerRelationId, OPT_WRITE_MODE},
	{"write_mode", ForeignTableRelationId, OPT_WRITE_MODE},
	{"truncatable", ForeignServerRelationId, OPT_BOOL},
	{"truncatable", ForeignTableRelationId, OPT_BOOL},
	{"direct_modify", ForeignServerRelationId, OPT_BOOL},
	{"direct_modify", ForeignTableRelationId, OPT_BOOL},
	{"analyze_rows", ForeignServerRelationId, OPT_INT_NONNEG},
	{"analyze_rows", ForeignTableRelationId, OPT_INT_NONNEG},
	{"max_buckets", ForeignServerRelationId, OPT_INT_POSITIVE},
	{"max_buckets", ForeignTableRelationId, OPT_INT_POSITIVE},
	{"index_pushdown", ForeignServerRelationId, OPT_BOOL},
	{"index_pushdown", ForeignTableRelationId, OPT_BOOL},
	{"async_capable", ForeignServerRelationId, OPT_BOOL},
	{"async_capable", ForeignTableRelationId, OPT_BOOL},
	{"aggregate_pushdown", ForeignServerRelationId, OPT_BOOL},
	{"aggregate_pushdown", ForeignTableRelationId, OPT_BOOL},
	{"timestamp_precision", ForeignServerRelationId, OPT_TS_PRECISION},
	{"timestamp_precision", ForeignTableRelationId, OPT_TS_PRECISION},

	/* table only */
	{"keyspace", ForeignTableRelationId, OPT_STRING},
	{"table", ForeignTableRelationId, OPT_STRING},
	{"allow_filtering", ForeignTableRelationId, OPT_BOOL},
	{"if_not_exists", ForeignTableRelationId, OPT_BOOL},

	/* columns (IMPORT FOREIGN SCHEMA records the key layout here) */
	{"column_name", AttributeRelationId, OPT_STRING},
	{"kind", AttributeRelationId, OPT_COLUMN_KIND},
	{"position", AttributeRelationId, OPT_INT_NONNEG},
	{"clustering_order", AttributeRelationId, OPT_CLUSTERING_ORDER},
	{"cql_type", AttributeRelationId, OPT_STRING},
	{"bucket", AttributeRelationId, OPT_BUCKET},	/* bucket.c */
	{"bucket_of", AttributeRelationId, OPT_STRING},
	{"sai_index", AttributeRelationId, OPT_STRING},	/* written by IMPORT */
	{"sai_similarity", AttributeRelationId, OPT_SIMILARITY},	/* written by IMPORT */
	{"sai_values_index", AttributeRelationId, OPT_STRING},	/* written by IMPORT */
	{"sai_keys_index", AttributeRelationId, OPT_STRING},	/* written by IMPORT */
	{"sai_entries_index", AttributeRelationId, OPT_STRING},	/* written by IMPORT */
	{"masked", AttributeRelationId, OPT_STRING},	/* written by IMPORT */
	{"writetime_of", AttributeRelationId, OPT_STRING},	/* write_metadata.c */
	{"ttl_of", AttributeRelationId, OPT_STRING},
	{"timestamp_precision", AttributeRelationId, OPT_TS_PRECISION},

	{NULL, InvalidOid, OPT_STRING}
};

/*
 * cqlfdw_consistency_from_name
 *		Map a consistency level name to its protocol code; -1 if unknown or
 *		not allowed for the direction.
 *
 * Cassandra rejects ANY and EACH_QUORUM for reads and SERIAL/LOCAL_SERIAL as
 * the consistency of a plain write, so those are refused here, where the
 * user set them, instead of failing on every query later.  NODE_LOCAL is a
 * server-internal level and never accepted.
 */
int
cqlfdw_consistency_from_name(const char *name, bool for_write)
{
	uint16_t	code;

	if (cql_consistency_parse(name, &code) != CQL_OK ||
		code == CQL_CONSISTENCY_NODE_LOCAL)
		return -1;
	if (!for_write &&
		(code == CQL_CONSISTENCY_ANY || code == CQL_CONSISTENCY_EACH_QUORUM))
		return -1;
	if (for_write &&
		(code == CQL_CONSISTENCY_SERIAL || code == CQL_CONSISTENCY_LOCAL_SERIAL))
		return -1;
	return code;
}

/*
 * serial_consistency_from_name
 *		The protocol code of a serial consistency level (the consistency of
 *		a lightweight transaction's Paxos phase): SERIAL or LOCAL_SERIAL,
 *		else -1.
 */
static int
serial_consistency_from_name(const char *name)
{
	uint16_t	code;

	if (cql_consistency_parse(name, &code) != CQL_OK ||
		(code != CQL_CONSISTENCY_SERIAL && code != CQL_CONSISTENCY_LOCAL_SERIAL))
		return -1;
	return code;
}

/*
 * ts_precision_from_name
 *		The CqlTsPrecision of a value of option timestamp_precision, or -1.
 */
static int
ts_precision_from_name(const char *value)
{
	if (strcmp(value, "truncate") == 0)
		return CQLTS_TRUNCATE;
	if (strcmp(value, "round") == 0)
		return CQLTS_ROUND;
	if (strcmp(value, "error") == 0)
		return CQLTS_ERROR;
	return -1;
}

/*
 * write_mode_from_name
 *		1 for "on_commit", 0 for "immediate" (either case), else -1: the
 *		values of option write_mode and of setting cql_fdw.write_mode.
 */
static int
write_mode_from_name(const char *value)
{
	if (pg_strcasecmp(value, "on_commit") == 0)
		return 1;
	if (pg_strcasecmp(value, "immediate") == 0)
		return 0;
	return -1;
}

/*
 * Check one entry of a contact point list: "host" or "host:port" or
 * "[ipv6]:port".  The client library parses it again when it connects; here
 * we only want errors at CREATE SERVER time.
 */
static bool
valid_contact_point(const char *s, const char **why)
{
	const char *colon;

	while (*s == ' ')
		s++;
	if (*s == '\0')
	{
		*why = "an entry is empty";
		return false;
	}
	if (*s == '[')
	{
		const char *close = strchr(s, ']');

		if (close == NULL || close == s + 1)
		{
			*why = "an IPv6 address in brackets is not closed";
			return false;
		}
		colon = (close[1] == ':') ? close + 1 : NULL;
		if (!colon && close[1] != '\0' && close[1] != ' ')
		{
			*why = "unexpected text after an IPv6 address";
			return false;
		}
	}
	else
	{
		colon = strchr(s, ':');
		/* a bare IPv6 address has several colons and no port */
		if (colon && strchr(colon + 1, ':'))
			colon = NULL;
	}
	if (colon)
	{
		char	   *end;
		long		port = strtol(colon + 1, &end, 10);

		while (*end == ' ')
			end++;
		if (colon[1] == '\0' || *end != '\0' || port < 1 || port > 65535)
		{
			*why = "a port is not a number between 1 and 65535";
			return false;
		}
	}
	return true;
}

/*
 * check_hosts
 *		Validate the value of the server option host: a comma-separated list
 *		of contact points, each checked by valid_contact_point.
 *
 * An empty entry ("a,,b", a trailing comma) is an error too; the first bad
 * entry raises the error.
 */
static void
check_hosts(const char *value)
{
	char	   *copy = pstrdup(value);
	char	   *tok;
	const char *why = NULL;

	/* strtok_r would skip empty entries; split by hand to catch "a,,b" */
	tok = copy;
	for (;;)
	{
		char	   *comma = strchr(tok, ',');

		if (comma)
			*comma = '\0';
		if (!valid_contact_point(tok, &why))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("invalid value for option \"host\": \"%s\"", value),
					 errdetail("In the contact point list, %s.", why),
					 errhint("Use a comma-separated list such as 'node1,node2:9043,[::1]:9042'.")));
		if (!comma)
			break;
		tok = comma + 1;
	}
	pfree(copy);
}

/*
 * parse_int_option
 *		The value of an integer option, between min and INT_MAX; anything
 *		else (not a number, trailing text other than spaces, out of range)
 *		is an error naming the option.
 */
static int
parse_int_option(const char *name, const char *value, int min)
{
	int			v;
	char	   *end;
	long		l;

	errno = 0;
	l = strtol(value, &end, 10);
	while (*end == ' ')
		end++;
	if (errno != 0 || end == value || *end != '\0' || l < min || l > INT_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("The value must be an integer between %d and %d.", min, INT_MAX)));
	v = (int) l;
	return v;
}

/*
 * parse_bytes_option
 *		A size such as '1048576', '64MB' or '1GB' (PostgreSQL's memory units),
 *		between 64 kB and 1 GB.  The lower bound keeps the handshake and
 *		schema queries working; the upper one keeps a response below what a
 *		palloc'ed copy could hold.
 */
static int
parse_bytes_option(const char *name, const char *value)
{
	int			v;
	const char *hintmsg = NULL;

	if (!parse_int(value, &v, GUC_UNIT_BYTE, &hintmsg) ||
		v < 64 * 1024 || v > 1024 * 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("The value must be a size between 64kB and 1GB, in bytes or with a unit such as '64MB'.")));
	return v;
}

/*
 * parse_time_option
 *		A time such as '500', '500ms', '10s' or '1min' (PostgreSQL's time
 *		units, as for settings): a bare number is in the option's
 *		documented unit (GUC_UNIT_MS or GUC_UNIT_S), the result in that
 *		unit, at least min.  A bad unit or value is an error naming the
 *		option, with the valid units as hint.
 */
static int
parse_time_option(const char *name, const char *value, int unit, int min)
{
	int			v;
	const char *hintmsg = NULL;

	if (!parse_int(value, &v, unit, &hintmsg) || v < min)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 hintmsg ? errdetail("%s", _(hintmsg)) : 0,
				 errhint("The value must be a time of at least %d %s: a number of %s, or a number with a unit (us, ms, s, min, h, d) such as '%s'.",
						 min, unit == GUC_UNIT_MS ? "ms" : "s",
						 unit == GUC_UNIT_MS ? "milliseconds" : "seconds",
						 unit == GUC_UNIT_MS ? "10s" : "1h")));
	return v;
}

/*
 * validate_value
 *		Check the value of one option against its kind; an invalid value is
 *		an error naming the option.  Only password may be an empty string.
 */
static void
validate_value(const CqlOption *opt, DefElem *def)
{
	const char *value = defGetString(def);

	switch (opt->kind)
	{
		case OPT_STRING:
			if (value[0] == '\0' && strcmp(opt->name, "password") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("option \"%s\" must not be empty", opt->name)));
			break;
		case OPT_HOSTS:
			check_hosts(value);
			break;
		case OPT_PORT:
			{
				int			port = parse_int_option(opt->name, value, 1);

				if (port > 65535)
					ereport(ERROR,
							(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
							 errmsg("invalid value for option \"port\": \"%s\"", value),
							 errhint("The port must be between 1 and 65535.")));
			}
			break;
		case OPT_INT_POSITIVE:
			(void) parse_int_option(opt->name, value, 1);
			break;
		case OPT_INT_NONNEG:
			(void) parse_int_option(opt->name, value, 0);
			break;
		case OPT_BOOL:
			(void) defGetBoolean(def);
			break;
		case OPT_BYTES:
			(void) parse_bytes_option(opt->name, value);
			break;
		case OPT_MS_POSITIVE:
			(void) parse_time_option(opt->name, value, GUC_UNIT_MS, 1);
			break;
		case OPT_MS_NONNEG:
			(void) parse_time_option(opt->name, value, GUC_UNIT_MS, 0);
			break;
		case OPT_S_NONNEG:
			(void) parse_time_option(opt->name, value, GUC_UNIT_S, 0);
			break;
		case OPT_SERIAL_CONSISTENCY:
			if (serial_consistency_from_name(value) < 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("invalid value for option \"%s\": \"%s\"", opt->name, value),
						 errdetail("The serial consistency is the consistency of a lightweight transaction's Paxos phase (if_not_exists, ON CONFLICT DO NOTHING)."),
						 errhint("Valid serial consistency levels are SERIAL and LOCAL_SERIAL.")));
			break;
		case OPT_PROTOCOL:
			if (pg_strcasecmp(value, "auto") != 0 &&
				strcmp(value, "4") != 0 && strcmp(value, "5") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("invalid value for option \"protocol_version\": \"%s\"", value),
						 errhint("Valid values are \"auto\", \"4\" and \"5\".")));
			break;
		case OPT_COMPRESSION:
			if (pg_strcasecmp(value, "lz4") != 0 && pg_strcasecmp(value, "none") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("invalid value for option \"compression\": \"%s\"", value),
						 errhint("Valid values are \"lz4\" and \"none\".")));
			break;
		case OPT_READ_CONSISTENCY:
		case OPT_WRITE_CONSISTENCY:
			{
				bool		for_write = (opt->kind == OPT_WRITE_CONSISTENCY);

				if (cqlfdw_consistency_from_name(value, for_write) < 0)
					ereport(ERROR,
							(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
							 errmsg("invalid value for option \"%s\": \"%s\"", opt->name, value),
							 for_write ?
							 errhint("Valid write consistency levels are ANY, ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM and LOCAL_ONE.") :
							 errhint("Valid read consistency levels are ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, SERIAL, LOCAL_SERIAL and LOCAL_ONE.")));
			}
			break;
		case OPT_WRITE_MODE:
			if (write_mode_from_name(value) < 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("invalid value for option \"write_mode\": \"%s\"", value),
						 errhint("Valid values are \"immediate\" (writes are sent as the statement runs) and \"on_commit\" (writes are sent when the transaction commits).")));
			break;
		case OPT_COLUMN_KIND:
			if (strcmp(value, "partition_key") != 0 && strcmp(value, "clustering") != 0 &&
				strcmp(value, "regular") != 0 && strcmp(value, "static") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("invalid value for option \"kind\": \"%s\"", value),
						 errhint("Valid values are \"partition_key\", \"clustering\", \"regular\" and \"static\".")));
			break;
		case OPT_CLUSTERING_ORDER:
			if (pg_strcasecmp(value, "asc") != 0 && pg_strcasecmp(value, "desc") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("invalid value for option \"clustering_order\": \"%s\"", value),
						 errhint("Valid values are \"asc\" and \"desc\".")));
			break;
		case OPT_SIMILARITY:
			if (strcmp(value, "cosine") != 0 && strcmp(value, "euclidean") != 0 &&
				strcmp(value, "dot_product") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("invalid value for option \"sai_similarity\": \"%s\"", value),
						 errhint("Valid values are \"cosine\", \"euclidean\" and \"dot_product\", the similarity_function of the vector column's SAI index.")));
			break;
		case OPT_TS_PRECISION:
			if (ts_precision_from_name(value) < 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("invalid value for option \"timestamp_precision\": \"%s\"", value),
						 errdetail("The option says what a written timestamp with digits below the millisecond becomes: Cassandra timestamps have millisecond precision."),
						 errhint("Valid values are \"truncate\" (drop the digits, as the Java and Python drivers do), \"round\" (to the nearest millisecond) and \"error\" (refuse the write).")));
			break;
		case OPT_BUCKET:
			{
				CqlBucketSpec spec;
				const char *why;

				if (!cqlfdw_bucket_parse(value, &spec, &why))
					ereport(ERROR,
							(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
							 errmsg("invalid value for option \"bucket\": \"%s\"", value),
							 errdetail("%s", why),
							 errhint("Valid values are a time unit (hour, day, week, month, year), optionally with a multiple (\"6 hours\", \"2 weeks\"), or \"hash N\" with N from 2 to 65536.")));
			}
			break;
		case OPT_SSLMODE:
			{
				cql_ssl_mode m;

				if (cql_ssl_mode_parse(value, &m) != CQL_OK)
					ereport(ERROR,
							(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
							 errmsg("invalid value for option \"sslmode\": \"%s\"", value),
							 errhint("Valid values are \"disable\", \"require\", \"verify-ca\" and \"verify-full\" (libpq's meanings).")));
			}
			break;
		case OPT_FILE:
			/* who may set it: cql_fdw_validator, file_option_set */
			if (!is_absolute_path(value))
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("option \"%s\" must be an absolute path", opt->name)));
			break;
	}
}

/*
 * find_option
 *		The entry of cql_options for option name in catalog context, or NULL
 *		when the option does not exist there.
 */
static const CqlOption *
find_option(const char *name, Oid context)
{
	for (const CqlOption *o = cql_options; o->name; o++)
		if (o->context == context && strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/*
 * check_tls_options
 *		Cross-check a server's TLS options, which each look valid alone:
 *		verify-ca and verify-full need a root certificate to verify
 *		against.  Saying so at CREATE/ALTER SERVER beats the first query
 *		failing.  (A root certificate with sslmode disable is ignored, as
 *		in libpq, so that the options can be changed one at a time.)
 */
static void
check_tls_options(List *options_list)
{
	const char *mode = NULL;
	bool		rootcert = false;
	ListCell   *cell;

	foreach(cell, options_list)
	{
		DefElem    *def = (DefElem *) lfirst(cell);

		if (strcmp(def->defname, "sslmode") == 0)
			mode = defGetString(def);
		else if (strcmp(def->defname, "sslrootcert") == 0)
			rootcert = true;
	}
	if (mode && (strcmp(mode, "verify-ca") == 0 || strcmp(mode, "verify-full") == 0) &&
		!rootcert)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("sslmode \"%s\" needs option \"sslrootcert\"", mode),
				 errdetail("The server's certificate is verified against the root certificate (the CA) given in sslrootcert."),
				 errhint("Add sslrootcert '/absolute/path/ca.pem' (superuser), or use sslmode 'require' to encrypt without verifying.")));
}

/*
 * check_metadata_options
 *		Cross-check the options of one column: a write metadata column
 *		(writetime_of or ttl_of) reads a function of another column and has
 *		no remote column of its own, so it takes neither both options nor
 *		one describing a remote column.
 *
 * Whether the column it names exists, is a regular column and has a type
 * Cassandra reports write metadata for is known only with the table's
 * layout: write_metadata.c checks that when the table is first used.
 */
static void
check_metadata_options(List *options_list)
{
	const char *meta = NULL;
	const char *other = NULL;
	ListCell   *cell;

	foreach(cell, options_list)
	{
		DefElem    *def = (DefElem *) lfirst(cell);

		if (strcmp(def->defname, "writetime_of") == 0 ||
			strcmp(def->defname, "ttl_of") == 0)
		{
			if (meta)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
						 errmsg("options \"%s\" and \"%s\" cannot be used together",
								meta, def->defname),
						 errdetail("A write metadata column reads either the write time or the TTL of one column."),
						 errhint("Declare one column for each: wt bigint OPTIONS (writetime_of 'v'), remaining integer OPTIONS (ttl_of 'v').")));
			meta = def->defname;
		}
		else
			other = def->defname;
	}
	if (meta && other)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("option \"%s\" cannot be used together with option \"%s\"",
						meta, other),
				 errdetail("A column with option \"%s\" is no Cassandra column: it reads %s of the column it names.",
						   meta, strcmp(meta, "ttl_of") == 0 ? "TTL()" : "WRITETIME()"),
				 errhint("Remove option \"%s\" from this column.", other)));
}

/*
 * check_user_options
 *		A user mapping names its Cassandra role as "user" (postgres_fdw's
 *		and libpq's name) or "username" (cql_fdw's first name for it), not
 *		both: which one counted would depend on their order.
 */
static void
check_user_options(List *options_list)
{
	bool		user = false;
	bool		username = false;
	ListCell   *cell;

	foreach(cell, options_list)
	{
		DefElem    *def = (DefElem *) lfirst(cell);

		user |= strcmp(def->defname, "user") == 0;
		username |= strcmp(def->defname, "username") == 0;
	}
	if (user && username)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("options \"user\" and \"username\" cannot be used together"),
				 errdetail("Both name the Cassandra role of the user mapping; \"username\" is another name for \"user\"."),
				 errhint("Keep one: ALTER USER MAPPING ... OPTIONS (DROP username).")));
}

/* ---------------------------------------------------------------------
 * The options the running statement sets
 *
 * A validator is given the object's whole option list as it will be after
 * the statement (transformGenericOptions merges the old options with the
 * statement's ADD/SET/DROP first), not which options the statement names:
 * ALTER USER MAPPING ... OPTIONS (SET password 'x') on a mapping whose
 * sslcert a superuser set validates sslcert too.  The superuser check of
 * the file options (sslrootcert, sslcert, sslkey) must apply only to the
 * options a statement adds or sets, or the owner of such a mapping or
 * server could no longer change anything else in it.  postgres_fdw, which
 * cannot tell either, refuses every ALTER of such a mapping by a
 * non-superuser.
 *
 * The statement is taken from a ProcessUtility hook, or, for a statement
 * that began before the library was loaded (the validator's call loaded
 * it, so the hook was not there yet: the first one of a session), from
 * the active portal.  The statement must be a CREATE/ALTER of the same
 * catalog and agree with the merged list; otherwise (e.g. the first
 * statement of a session run from a function) every file option is
 * checked, as before.
 * ---------------------------------------------------------------------
 */

static ProcessUtility_hook_type prev_process_utility = NULL;

/* the utility statement our hook is running (the innermost), or NULL */
static Node *running_stmt = NULL;

/*
 * cqlfdw_process_utility
 *		ProcessUtility hook: remember the statement while it runs, for
 *		file_option_set.
 */
static void
cqlfdw_process_utility(PlannedStmt *pstmt, const char *queryString,
					   bool readOnlyTree, ProcessUtilityContext context,
					   ParamListInfo params, QueryEnvironment *queryEnv,
					   DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *saved = running_stmt;

	running_stmt = pstmt->utilityStmt;
	PG_TRY();
	{
		if (prev_process_utility)
			prev_process_utility(pstmt, queryString, readOnlyTree, context,
								 params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		running_stmt = saved;
	}
	PG_END_TRY();
}

/*
 * cqlfdw_watch_option_statements
 *		Install the ProcessUtility hook (from _PG_init).
 */
void
cqlfdw_watch_option_statements(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = cqlfdw_process_utility;
}

/*
 * statement_options
 *		The OPTIONS clause of a CREATE/ALTER SERVER or USER MAPPING
 *		statement, and in *catalog the catalog it goes to; NIL and
 *		InvalidOid for any other statement.
 */
static List *
statement_options(Node *stmt, Oid *catalog)
{
	*catalog = InvalidOid;
	if (stmt == NULL)
		return NIL;
	switch (nodeTag(stmt))
	{
		case T_CreateForeignServerStmt:
			*catalog = ForeignServerRelationId;
			return ((CreateForeignServerStmt *) stmt)->options;
		case T_AlterForeignServerStmt:
			*catalog = ForeignServerRelationId;
			return ((AlterForeignServerStmt *) stmt)->options;
		case T_CreateUserMappingStmt:
			*catalog = UserMappingRelationId;
			return ((CreateUserMappingStmt *) stmt)->options;
		case T_AlterUserMappingStmt:
			*catalog = UserMappingRelationId;
			return ((AlterUserMappingStmt *) stmt)->options;
		default:
			return NIL;
	}
}

/*
 * statement_agrees
 *		Whether the merged option list is what the statement's options
 *		make: each option it adds or sets is there with that value, each
 *		one it drops is gone.  A guard that the statement found is the one
 *		being validated.
 */
static bool
statement_agrees(List *named, List *merged)
{
	ListCell   *lc;

	foreach(lc, named)
	{
		DefElem    *def = (DefElem *) lfirst(lc);
		DefElem    *found = NULL;
		ListCell   *mc;

		foreach(mc, merged)
		{
			DefElem    *m = (DefElem *) lfirst(mc);

			if (strcmp(m->defname, def->defname) == 0)
			{
				found = m;
				break;
			}
		}
		if (def->defaction == DEFELEM_DROP)
		{
			if (found)
				return false;
		}
		else if (found == NULL || def->arg == NULL ||
				 strcmp(defGetString(found), defGetString(def)) != 0)
			return false;
	}
	return true;
}

/*
 * file_option_set
 *		Whether the statement being validated adds or sets option name
 *		(to a catalog's merged list): true when it names it without DROP,
 *		false when it does not name it, and true when the statement cannot
 *		be told (see the comment of this section).
 */
static bool
file_option_set(const char *name, Oid catalog, List *merged)
{
	Node	   *stmt = running_stmt;
	Oid			stmt_catalog;
	List	   *named;
	ListCell   *lc;

	/* the statement began before the hook was installed: its portal's */
	if (stmt == NULL && ActivePortal != NULL &&
		list_length(ActivePortal->stmts) == 1 &&
		IsA(linitial(ActivePortal->stmts), PlannedStmt))
	{
		PlannedStmt *pstmt = linitial_node(PlannedStmt, ActivePortal->stmts);

		if (pstmt->commandType == CMD_UTILITY)
			stmt = pstmt->utilityStmt;
	}
	named = statement_options(stmt, &stmt_catalog);
	if (stmt_catalog != catalog || !statement_agrees(named, merged))
		return true;
	foreach(lc, named)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, name) == 0 && def->defaction != DEFELEM_DROP)
			return true;
	}
	return false;
}

PG_FUNCTION_INFO_V1(cql_fdw_validator);

/*
 * cql_fdw_validator
 *		Validate the options of a CREATE/ALTER of a server, user mapping,
 *		foreign table or column.
 */
Datum
cql_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options_list = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	ListCell   *cell;

	foreach(cell, options_list)
	{
		DefElem    *def = (DefElem *) lfirst(cell);
		const CqlOption *opt = find_option(def->defname, catalog);

		if (opt == NULL)
		{
			StringInfoData buf;

			initStringInfo(&buf);
			for (const CqlOption *o = cql_options; o->name; o++)
			{
				if (o->context != catalog)
					continue;
				appendStringInfo(&buf, "%s%s", buf.len > 0 ? ", " : "", o->name);
			}
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("invalid option \"%s\"", def->defname),
					 buf.len > 0
					 ? errhint("Valid options in this context are: %s.", buf.data)
					 : errhint("There are no valid options in this context.")));
		}

		/*
		 * Only a superuser may waive the password requirement, as in
		 * postgres_fdw: otherwise a non-superuser could make the server
		 * connect with whatever access the PostgreSQL host itself has.
		 */
		if (strcmp(opt->name, "password_required") == 0 &&
			!defGetBoolean(def) && !superuser())
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("password_required=false is superuser-only"),
					 errhint("User mappings with the password_required option set to false may only be created or modified by the superuser.")));

		/*
		 * A file option names a file the PostgreSQL server process opens:
		 * only a superuser may name one (another role could otherwise make
		 * the server use any file it can read, its own key included).  An
		 * option the statement does not add or set was set before, by a
		 * superuser, and stays: the owner may still change the others.
		 */
		if (opt->kind == OPT_FILE && !superuser() &&
			file_option_set(opt->name, catalog, options_list))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("only a superuser can set option \"%s\"", opt->name),
					 errhint("The file is read by the PostgreSQL server process; ask a superuser to set it.")));

		validate_value(opt, def);
	}
	if (catalog == UserMappingRelationId)
		check_user_options(options_list);
	if (catalog == ForeignServerRelationId)
		check_tls_options(options_list);
	if (catalog == AttributeRelationId)
		check_metadata_options(options_list);

	PG_RETURN_VOID();
}

/*
 * apply_option
 *		Store one option's value in o, overriding an earlier value of the
 *		same name.
 *
 * The value was validated when it was set (cql_fdw_validator), so it is
 * converted without further checks (max_response_size is parsed again for
 * its unit); a name it does not know is ignored.
 */
static void
apply_option(CqlFdwOptions *o, DefElem *def)
{
	const char *name = def->defname;
	const char *value = defGetString(def);

	if (strcmp(name, "host") == 0)
		o->host = pstrdup(value);
	else if (strcmp(name, "port") == 0)
		o->port = atoi(value);
	else if (strcmp(name, "protocol_version") == 0)
		o->protocol_version = (pg_strcasecmp(value, "auto") == 0) ? 0 : atoi(value);
	else if (strcmp(name, "compression") == 0)
		o->compression = (pg_strcasecmp(value, "lz4") == 0);
	else if (strcmp(name, "connect_timeout") == 0)
		o->connect_timeout_ms = parse_time_option(name, value, GUC_UNIT_MS, 1);
	else if (strcmp(name, "request_timeout") == 0)
		o->request_timeout_ms = parse_time_option(name, value, GUC_UNIT_MS, 1);
	else if (strcmp(name, "local_dc") == 0)
		o->local_dc = pstrdup(value);
	else if (strcmp(name, "discover_peers") == 0)
		o->discover_peers = defGetBoolean(def);
	else if (strcmp(name, "max_response_size") == 0)
		o->max_response_size = parse_bytes_option(name, value);
	else if (strcmp(name, "sslmode") == 0)
	{
		cql_ssl_mode m = CQL_SSL_DISABLE;

		(void) cql_ssl_mode_parse(value, &m);
		o->sslmode = (int) m;
	}
	else if (strcmp(name, "sslrootcert") == 0)
		o->sslrootcert = pstrdup(value);
	else if (strcmp(name, "sslcert") == 0)
		o->sslcert = pstrdup(value);
	else if (strcmp(name, "sslkey") == 0)
		o->sslkey = pstrdup(value);
	else if (strcmp(name, "sslpassword") == 0)
		o->sslpassword = pstrdup(value);
	else if (strcmp(name, "application_name") == 0)
		o->application_name = pstrdup(value);
	else if (strcmp(name, "keep_connections") == 0)
		o->keep_connections = defGetBoolean(def);
	else if (strcmp(name, "updatable") == 0)
		o->updatable = defGetBoolean(def);
	else if (strcmp(name, "heartbeat_interval") == 0)
		o->heartbeat_interval_ms = parse_time_option(name, value, GUC_UNIT_MS, 0);
	else if (strcmp(name, "max_retries") == 0)
		o->max_retries = atoi(value);
	else if (strcmp(name, "retry_timeout") == 0)
		o->retry_timeout_ms = parse_time_option(name, value, GUC_UNIT_MS, 1);
	else if (strcmp(name, "speculative_delay") == 0)
		o->speculative_delay_ms = parse_time_option(name, value, GUC_UNIT_MS, 0);
	else if (strcmp(name, "username") == 0 || strcmp(name, "user") == 0)
		o->username = pstrdup(value);
	else if (strcmp(name, "password") == 0)
		o->password = pstrdup(value);
	else if (strcmp(name, "password_required") == 0)
		o->password_required = defGetBoolean(def);
	else if (strcmp(name, "keyspace") == 0)
		o->keyspace = pstrdup(value);
	else if (strcmp(name, "table") == 0)
		o->table = pstrdup(value);
	else if (strcmp(name, "consistency") == 0)
		o->consistency = cqlfdw_consistency_from_name(value, false);
	else if (strcmp(name, "write_consistency") == 0)
		o->write_consistency = cqlfdw_consistency_from_name(value, true);
	else if (strcmp(name, "serial_consistency") == 0)
		o->serial_consistency = serial_consistency_from_name(value);
	else if (strcmp(name, "fetch_size") == 0)
		o->fetch_size = atoi(value);
	else if (strcmp(name, "scan_window") == 0)
		o->scan_window = atoi(value);
	else if (strcmp(name, "allow_filtering") == 0)
		o->allow_filtering = defGetBoolean(def);
	else if (strcmp(name, "ttl") == 0)
		o->ttl = parse_time_option(name, value, GUC_UNIT_S, 0);
	else if (strcmp(name, "batch_size") == 0)
		o->batch_size = atoi(value);
	else if (strcmp(name, "write_mode") == 0)
		o->write_on_commit = (write_mode_from_name(value) == 1);
	else if (strcmp(name, "if_not_exists") == 0)
		o->if_not_exists = defGetBoolean(def);
	else if (strcmp(name, "truncatable") == 0)
		o->truncatable = defGetBoolean(def);
	else if (strcmp(name, "direct_modify") == 0)
		o->direct_modify = defGetBoolean(def);
	else if (strcmp(name, "analyze_rows") == 0)
		o->analyze_rows = atoi(value);
	else if (strcmp(name, "max_buckets") == 0)
		o->max_buckets = atoi(value);
	else if (strcmp(name, "index_pushdown") == 0)
		o->index_pushdown = defGetBoolean(def);
	else if (strcmp(name, "async_capable") == 0)
		o->async_capable = defGetBoolean(def);
	else if (strcmp(name, "aggregate_pushdown") == 0)
		o->aggregate_pushdown = defGetBoolean(def);
	else if (strcmp(name, "timestamp_precision") == 0)
		o->timestamp_precision = ts_precision_from_name(value);
}

/*
 * cqlfdw_options_add_mapping
 *		Add a user mapping's options (credentials, client certificate) to
 *		merged options.  No table option has a user-mapping name, so the
 *		result is the same whether the table's were merged before or not:
 *		cqlfdw_resolve_table adds the mapping only when it needs it.
 */
void
cqlfdw_options_add_mapping(CqlFdwOptions *o, UserMapping *um)
{
	ListCell   *lc;

	foreach(lc, um->options)
		apply_option(o, (DefElem *) lfirst(lc));
}

/* ---------------------------------------------------------------------
 * Settings (GUCs): consistency levels per session or transaction
 * ---------------------------------------------------------------------
 */

/* '' (the default) = the options' level */
static char *setting_consistency = NULL;
static char *setting_write_consistency = NULL;
static char *setting_serial_consistency = NULL;
static char *setting_write_mode = NULL;

/*
 * check_level
 *		Check hook of the consistency settings: '' or a level valid for the
 *		direction (which: 'r'ead, 'w'rite, 's'erial), with a detail and the
 *		valid levels as hint, as the options say them.
 */
static bool
check_level(char **newval, char which)
{
	const char *v = *newval;
	bool		ok;

	if (v == NULL || v[0] == '\0')
		return true;
	if (which == 's')
		ok = serial_consistency_from_name(v) >= 0;
	else
		ok = cqlfdw_consistency_from_name(v, which == 'w') >= 0;
	if (ok)
		return true;
	GUC_check_errdetail("\"%s\" is not a %s consistency level Cassandra accepts.", v,
						which == 'r' ? "read" : which == 'w' ? "write" : "serial");
	if (which == 'r')
		GUC_check_errhint("Valid read consistency levels are ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, SERIAL, LOCAL_SERIAL and LOCAL_ONE, or '' for the options' level.");
	else if (which == 'w')
		GUC_check_errhint("Valid write consistency levels are ANY, ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM and LOCAL_ONE, or '' for the options' level.");
	else
		GUC_check_errhint("Valid serial consistency levels are SERIAL and LOCAL_SERIAL, or '' for the options' level.");
	return false;
}

/* check hooks of the three settings */
static bool
check_read_level(char **newval, void **extra, GucSource source)
{
	return check_level(newval, 'r');
}

static bool
check_write_level(char **newval, void **extra, GucSource source)
{
	return check_level(newval, 'w');
}

static bool
check_serial_level(char **newval, void **extra, GucSource source)
{
	return check_level(newval, 's');
}

/* check hook of cql_fdw.write_mode: '', 'immediate' or 'on_commit' */
static bool
check_write_mode(char **newval, void **extra, GucSource source)
{
	const char *v = *newval;

	if (v == NULL || v[0] == '\0' || write_mode_from_name(v) >= 0)
		return true;
	GUC_check_errdetail("\"%s\" is not a write mode.", v);
	GUC_check_errhint("Valid values are \"immediate\" (writes are sent as the statement runs), \"on_commit\" (writes are sent when the transaction commits) and '' for the option write_mode.");
	return false;
}

/*
 * cqlfdw_define_settings
 *		Define cql_fdw.consistency, cql_fdw.write_consistency,
 *		cql_fdw.serial_consistency and cql_fdw.write_mode (from _PG_init).
 *
 * Empty by default: the options consistency, write_consistency,
 * serial_consistency and write_mode (table, else server) decide.  Set, a setting wins
 * over the options for every foreign table of the session, or of one
 * transaction with SET LOCAL: the session's explicit choice is more
 * specific than the defaults an owner set once for every user, as a
 * statement's level beats the execution profile's in the DataStax drivers
 * (docs/cql_fdw.md, Settings).
 */
void
cqlfdw_define_settings(void)
{
	DefineCustomStringVariable("cql_fdw.consistency",
							   "Consistency level of reads from Cassandra; empty: the option consistency.",
							   NULL, &setting_consistency, "", PGC_USERSET, 0,
							   check_read_level, NULL, NULL);
	DefineCustomStringVariable("cql_fdw.write_consistency",
							   "Consistency level of writes to Cassandra; empty: the option write_consistency.",
							   NULL, &setting_write_consistency, "", PGC_USERSET, 0,
							   check_write_level, NULL, NULL);
	DefineCustomStringVariable("cql_fdw.serial_consistency",
							   "Serial consistency (SERIAL or LOCAL_SERIAL) of lightweight transactions; empty: the option serial_consistency.",
							   NULL, &setting_serial_consistency, "", PGC_USERSET, 0,
							   check_serial_level, NULL, NULL);
	DefineCustomStringVariable("cql_fdw.write_mode",
							   "When writes are sent to Cassandra (immediate or on_commit); empty: the option write_mode.",
							   NULL, &setting_write_mode, "", PGC_USERSET, 0,
							   check_write_mode, NULL, NULL);
}

/*
 * apply_settings
 *		Override the options' consistency levels and write mode in o with
 *		the settings that are set (checked by their hooks).  Options are resolved when a
 *		statement starts, so a SET takes effect with the next statement,
 *		cached plans included.
 */
static void
apply_settings(CqlFdwOptions *o)
{
	if (setting_consistency && setting_consistency[0])
		o->consistency = cqlfdw_consistency_from_name(setting_consistency, false);
	if (setting_write_consistency && setting_write_consistency[0])
		o->write_consistency = cqlfdw_consistency_from_name(setting_write_consistency, true);
	if (setting_serial_consistency && setting_serial_consistency[0])
		o->serial_consistency = serial_consistency_from_name(setting_serial_consistency);
	if (setting_write_mode && setting_write_mode[0])
		o->write_on_commit = (write_mode_from_name(setting_write_mode) == 1);
}

/* ---------------------------------------------------------------------
 * Merged options, cached per backend
 * ---------------------------------------------------------------------
 */

/* what the merge depends on: the catalogs' rows of these three */
typedef struct OptionsKey
{
	Oid			serverid;
	Oid			userid;
	Oid			relid;
} OptionsKey;

typedef struct OptionsEntry
{
	OptionsKey	key;			/* hash key: must be first */
	CqlFdwOptions opts;			/* before the settings; strings in
								 * OptionsCxt */
} OptionsEntry;

static HTAB *OptionsCache = NULL;
static MemoryContext OptionsCxt = NULL;
static uint64 options_invals = 0;

/*
 * options_cache_reset
 *		Forget every merged entry.  Options change rarely (ALTER SERVER,
 *		USER MAPPING, FOREIGN TABLE), so any change that may concern one
 *		drops them all.
 */
static void
options_cache_reset(void)
{
	options_invals++;
	if (OptionsCache)
	{
		hash_destroy(OptionsCache);
		OptionsCache = NULL;
	}
	if (OptionsCxt)
		MemoryContextReset(OptionsCxt);
}

/* Syscache callback: a server, user mapping or foreign table changed. */
static void
options_syscache_inval(Datum arg, int cacheid, uint32 hashvalue)
{
	options_cache_reset();
}

/*
 * Relcache callback: a relation changed (its name, the default remote
 * table name; a column's options are read elsewhere).  Only the cached
 * tables' own invalidations, or a reset of every relation, drop the cache.
 */
static void
options_relcache_inval(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS scan;
	OptionsEntry *e;

	if (OptionsCache == NULL)
		return;
	if (!OidIsValid(relid))
	{
		options_cache_reset();
		return;
	}
	hash_seq_init(&scan, OptionsCache);
	while ((e = (OptionsEntry *) hash_seq_search(&scan)) != NULL)
	{
		if (e->key.relid == relid)
		{
			hash_seq_term(&scan);
			options_cache_reset();
			return;
		}
	}
}

/* A copy of s in cxt (NULL stays NULL). */
static char *
copy_string(MemoryContext cxt, const char *s)
{
	return s ? MemoryContextStrdup(cxt, s) : NULL;
}

/*
 * copy_options
 *		*dst = *src with every string copied into cxt.  The string fields
 *		are listed here: a new char * field of CqlFdwOptions must be too.
 */
static void
copy_options(CqlFdwOptions *dst, const CqlFdwOptions *src, MemoryContext cxt)
{
	*dst = *src;
	dst->host = copy_string(cxt, src->host);
	dst->local_dc = copy_string(cxt, src->local_dc);
	dst->sslrootcert = copy_string(cxt, src->sslrootcert);
	dst->sslcert = copy_string(cxt, src->sslcert);
	dst->sslkey = copy_string(cxt, src->sslkey);
	dst->sslpassword = copy_string(cxt, src->sslpassword);
	dst->application_name = copy_string(cxt, src->application_name);
	dst->username = copy_string(cxt, src->username);
	dst->password = copy_string(cxt, src->password);
	dst->keyspace = copy_string(cxt, src->keyspace);
	dst->table = copy_string(cxt, src->table);
}

/*
 * merge_options
 *		Server, user mapping and table options over the defaults, as the
 *		catalogs say now (the settings are applied by the caller).
 */
static void
merge_options(Oid serverid, Oid userid, Oid relid, CqlFdwOptions *o)
{
	ForeignServer *server = GetForeignServer(serverid);
	ListCell   *lc;

	memset(o, 0, sizeof(*o));
	o->host = "127.0.0.1";
	o->port = CQLFDW_DEFAULT_PORT;
	o->protocol_version = 0;
	o->compression = true;
	o->connect_timeout_ms = CQLFDW_DEFAULT_CONNECT_TIMEOUT;
	o->request_timeout_ms = CQLFDW_DEFAULT_REQUEST_TIMEOUT;
	o->password_required = true;
	o->keep_connections = true;
	o->updatable = -1;
	o->max_response_size = CQLFDW_DEFAULT_MAX_RESPONSE;
	o->heartbeat_interval_ms = CQLFDW_DEFAULT_HEARTBEAT_INTERVAL;
	o->max_retries = CQLFDW_DEFAULT_MAX_RETRIES;
	o->retry_timeout_ms = CQLFDW_DEFAULT_RETRY_TIMEOUT;
	o->direct_modify = true;
	o->analyze_rows = CQLFDW_DEFAULT_ANALYZE_ROWS;
	o->max_buckets = CQLFDW_DEFAULT_MAX_BUCKETS;
	o->index_pushdown = true;
	o->async_capable = true;
	o->aggregate_pushdown = true;
	o->timestamp_precision = CQLTS_TRUNCATE;
	o->consistency = CQL_CONSISTENCY_LOCAL_ONE;
	o->write_consistency = CQL_CONSISTENCY_LOCAL_ONE;
	o->serial_consistency = CQL_CONSISTENCY_SERIAL;
	o->fetch_size = CQLFDW_DEFAULT_FETCH_SIZE;
	o->scan_window = CQLFDW_DEFAULT_SCAN_WINDOW;
	o->batch_size = CQLFDW_DEFAULT_BATCH_SIZE;

	foreach(lc, server->options)
		apply_option(o, (DefElem *) lfirst(lc));

	if (OidIsValid(userid))
		cqlfdw_options_add_mapping(o, GetUserMapping(userid, serverid));

	if (OidIsValid(relid))
	{
		ForeignTable *table = GetForeignTable(relid);

		foreach(lc, table->options)
			apply_option(o, (DefElem *) lfirst(lc));
		if (o->table == NULL)
			o->table = get_rel_name(relid);
	}
}

/*
 * cqlfdw_get_options
 *		Merge server, user mapping and (if relid is valid) table options,
 *		then the settings.
 *
 * userid is the user whose mapping is used (the checkAsUser of the scan, not
 * necessarily the session user).  A missing user mapping is an error only
 * where a connection is needed, so it is tolerated here when userid is
 * InvalidOid.
 *
 * Every statement on a foreign table asks (planning, then each execution:
 * a PL/pgSQL loop of DELETEs by key asks once a row), and parsing the
 * catalogs' option arrays cost more than the DELETE itself; so the merge
 * is cached per backend until a server, user mapping or foreign table
 * changes (syscache and relcache callbacks).  A merge that an invalidation
 * overtook is used once, not cached.  The strings returned are the
 * caller's (CurrentMemoryContext), as before.
 */
void
cqlfdw_get_options(Oid serverid, Oid userid, Oid relid, CqlFdwOptions *o)
{
	OptionsKey	key;
	OptionsEntry *e;
	uint64		invals;
	bool		found;

	if (OptionsCache == NULL)
	{
		HASHCTL		ctl;

		if (OptionsCxt == NULL)
		{
			OptionsCxt = AllocSetContextCreate(CacheMemoryContext, "cql_fdw options",
											   ALLOCSET_SMALL_SIZES);
			CacheRegisterSyscacheCallback(FOREIGNSERVEROID, options_syscache_inval, (Datum) 0);
			CacheRegisterSyscacheCallback(USERMAPPINGOID, options_syscache_inval, (Datum) 0);
			CacheRegisterSyscacheCallback(FOREIGNTABLEREL, options_syscache_inval, (Datum) 0);
			CacheRegisterRelcacheCallback(options_relcache_inval, (Datum) 0);
		}
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(OptionsKey);
		ctl.entrysize = sizeof(OptionsEntry);
		ctl.hcxt = OptionsCxt;
		OptionsCache = hash_create("cql_fdw options", 64, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	memset(&key, 0, sizeof(key));
	key.serverid = serverid;
	key.userid = userid;
	key.relid = relid;
	e = (OptionsEntry *) hash_search(OptionsCache, &key, HASH_FIND, NULL);
	if (e != NULL)
		copy_options(o, &e->opts, CurrentMemoryContext);
	else
	{
		invals = options_invals;
		merge_options(serverid, userid, relid, o);
		/* no catalog access from here on: no invalidation can come in */
		if (invals == options_invals && OptionsCache != NULL)
		{
			e = (OptionsEntry *) hash_search(OptionsCache, &key, HASH_ENTER, &found);
			copy_options(&e->opts, o, OptionsCxt);
		}
	}
	apply_settings(o);
}

/*
 * cqlfdw_timestamp_precision
 *		The option timestamp_precision of column attnum of foreign table
 *		relid (a CqlTsPrecision): the column's own, else opts's (the
 *		table's, else the server's, else truncate; cqlfdw_get_options).
 *		Writers call it once per column when they set up.
 */
int
cqlfdw_timestamp_precision(Oid relid, AttrNumber attnum, const CqlFdwOptions *opts)
{
	ListCell   *lc;

	foreach(lc, GetForeignColumnOptions(relid, attnum))
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "timestamp_precision") == 0)
			return ts_precision_from_name(defGetString(def));
	}
	return opts->timestamp_precision;
}

/*-------------------------------------------------------------------------
 *
 * cql_request.c
 *		Builders of request bodies: STARTUP, OPTIONS, AUTH_RESPONSE,
 *		REGISTER, QUERY, PREPARE, EXECUTE and BATCH, for v4 and v5.
 *
 * The two versions differ only in details (the width of the flags field,
 * the v5-only keyspace/now_in_seconds options, the result_metadata_id of
 * EXECUTE), so one builder per message takes the version as an argument.
 * Arguments are validated before anything is appended: a [string] longer
 * than 65535 bytes or an "unset" value on v3 is reported as a status rather
 * than silently producing bytes the server would misparse.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_request.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_wire.h"

#include <string.h>

void
cql_query_params_init(cql_query_params *p)
{
	memset(p, 0, sizeof(*p));
	p->consistency = CQL_CONSISTENCY_ONE;
	p->default_timestamp = CQL_NO_TIMESTAMP;
}

static bool
version_ok(int version)
{
	return version >= CQL_PROTOCOL_V3 && version <= CQL_PROTOCOL_V5;
}

static cql_status
check_string(const char *s)
{
	if (s == NULL)
		return CQL_ERR_INVALID_ARG;
	if (strlen(s) > 0xFFFF)
		return CQL_ERR_TOO_LARGE;
	return CQL_OK;
}

static cql_status
check_long_string(const char *s)
{
	if (s == NULL)
		return CQL_ERR_INVALID_ARG;
	if (strlen(s) > CQL_MAX_BODY_LENGTH)
		return CQL_ERR_TOO_LARGE;
	return CQL_OK;
}

/* Finish: report a writer failure (the buffer keeps it sticky). */
static cql_status
finish(cql_buf *b)
{
	return b->failed ? CQL_ERR_NOMEM : CQL_OK;
}

static cql_status
check_values(int version, int n, const cql_value_ref *v, const char *const *names)
{
	if (n < 0 || n > 0xFFFF)
		return CQL_ERR_TOO_LARGE;
	if (n > 0 && v == NULL)
		return CQL_ERR_INVALID_ARG;
	for (int i = 0; i < n; i++)
	{
		if (v[i].n == CQL_VALUE_UNSET)
		{
			if (version < CQL_PROTOCOL_V4)
				return CQL_ERR_UNSUPPORTED;
		}
		else if (v[i].n < CQL_VALUE_UNSET)
			return CQL_ERR_INVALID_ARG;
		else if (v[i].n > 0 && v[i].p == NULL)
			return CQL_ERR_INVALID_ARG;
		if (names)
		{
			cql_status	st = check_string(names[i]);

			if (st != CQL_OK)
				return st;
		}
	}
	return CQL_OK;
}

static void
write_values(cql_buf *b, int n, const cql_value_ref *v, const char *const *names)
{
	cql_buf_u16(b, (uint16_t) n);
	for (int i = 0; i < n; i++)
	{
		if (names)
			cql_buf_string(b, names[i]);
		/* [value]: -1 null, -2 unset, no bytes follow either */
		cql_buf_i32(b, v[i].n);
		if (v[i].n > 0)
			cql_buf_put(b, v[i].p, (size_t) v[i].n);
	}
}

static void
write_flags(cql_buf *b, int version, uint32_t flags)
{
	if (version >= CQL_PROTOCOL_V5)
		cql_buf_u32(b, flags);
	else
		cql_buf_u8(b, (uint8_t) flags);
}

/*
 * check_tail_params
 *		The parameters a QUERY, an EXECUTE and a BATCH share at the end of
 *		their body: a keyspace and now_in_seconds need protocol v5.
 */
static cql_status
check_tail_params(int version, const cql_query_params *p)
{
	cql_status	st;

	if (p->keyspace)
	{
		if (version < CQL_PROTOCOL_V5)
			return CQL_ERR_UNSUPPORTED;
		if ((st = check_string(p->keyspace)) != CQL_OK)
			return st;
	}
	if (p->now_in_seconds != 0 && version < CQL_PROTOCOL_V5)
		return CQL_ERR_UNSUPPORTED;
	return CQL_OK;
}

/* The flags of those shared parameters (the only ones a BATCH has) */
static uint32_t
tail_flags(const cql_query_params *p)
{
	uint32_t	flags = 0;

	if (p->serial_consistency != 0)
		flags |= CQL_QFLAG_WITH_SERIAL_CONSISTENCY;
	if (p->default_timestamp != CQL_NO_TIMESTAMP)
		flags |= CQL_QFLAG_WITH_DEFAULT_TIMESTAMP;
	if (p->keyspace)
		flags |= CQL_QFLAG_WITH_KEYSPACE;
	if (p->now_in_seconds != 0)
		flags |= CQL_QFLAG_WITH_NOW_IN_SECONDS;
	return flags;
}

/* [serial][timestamp][keyspace][now], as the flags say */
static void
write_tail(cql_buf *b, const cql_query_params *p, uint32_t flags)
{
	if (flags & CQL_QFLAG_WITH_SERIAL_CONSISTENCY)
		cql_buf_u16(b, p->serial_consistency);
	if (flags & CQL_QFLAG_WITH_DEFAULT_TIMESTAMP)
		cql_buf_i64(b, p->default_timestamp);
	if (flags & CQL_QFLAG_WITH_KEYSPACE)
		cql_buf_string(b, p->keyspace);
	if (flags & CQL_QFLAG_WITH_NOW_IN_SECONDS)
		cql_buf_i32(b, p->now_in_seconds);
}

static cql_status
check_params(int version, const cql_query_params *p)
{
	cql_status	st;

	if (p == NULL || !version_ok(version))
		return CQL_ERR_INVALID_ARG;
	st = check_values(version, p->nvalues, p->values, p->value_names);
	if (st != CQL_OK)
		return st;
	if (p->page_size < 0)
		return CQL_ERR_INVALID_ARG;
	if (p->paging_state && p->paging_state_len < 0)
		return CQL_ERR_INVALID_ARG;
	return check_tail_params(version, p);
}

/* <consistency><flags>[values][page size][paging state][serial][ts][ks][now] */
static void
write_params(cql_buf *b, int version, const cql_query_params *p)
{
	uint32_t	flags = 0;

	if (p->nvalues > 0)
		flags |= CQL_QFLAG_VALUES;
	if (p->nvalues > 0 && p->value_names)
		flags |= CQL_QFLAG_WITH_NAMES_FOR_VALUES;
	if (p->skip_metadata)
		flags |= CQL_QFLAG_SKIP_METADATA;
	if (p->page_size > 0)
		flags |= CQL_QFLAG_PAGE_SIZE;
	if (p->paging_state)
		flags |= CQL_QFLAG_WITH_PAGING_STATE;
	flags |= tail_flags(p);

	cql_buf_u16(b, p->consistency);
	write_flags(b, version, flags);
	if (flags & CQL_QFLAG_VALUES)
		write_values(b, p->nvalues, p->values,
					 (flags & CQL_QFLAG_WITH_NAMES_FOR_VALUES) ? p->value_names : NULL);
	if (flags & CQL_QFLAG_PAGE_SIZE)
		cql_buf_i32(b, p->page_size);
	if (flags & CQL_QFLAG_WITH_PAGING_STATE)
		cql_buf_bytes(b, p->paging_state, p->paging_state_len);
	write_tail(b, p, flags);
}

cql_status
cql_write_startup(cql_buf *b, const char *const *keys, const char *const *values, int n)
{
	cql_status	st;

	if (n < 0 || n > 0xFFFF || (n > 0 && (keys == NULL || values == NULL)))
		return CQL_ERR_INVALID_ARG;
	for (int i = 0; i < n; i++)
	{
		if ((st = check_string(keys[i])) != CQL_OK ||
			(st = check_string(values[i])) != CQL_OK)
			return st;
	}
	cql_buf_u16(b, (uint16_t) n);
	for (int i = 0; i < n; i++)
	{
		cql_buf_string(b, keys[i]);
		cql_buf_string(b, values[i]);
	}
	return finish(b);
}

cql_status
cql_write_options(cql_buf *b)
{
	return finish(b);
}

cql_status
cql_write_auth_response(cql_buf *b, const uint8_t *token, int32_t n)
{
	if (n < -1 || (n > 0 && token == NULL))
		return CQL_ERR_INVALID_ARG;
	if (n > CQL_MAX_BODY_LENGTH)
		return CQL_ERR_TOO_LARGE;
	cql_buf_bytes(b, token, n);
	return finish(b);
}

cql_status
cql_sasl_plain_token(cql_buf *out, const char *user, const char *password)
{
	size_t		ul;
	size_t		pl;

	if (user == NULL || password == NULL)
		return CQL_ERR_INVALID_ARG;
	ul = strlen(user);
	pl = strlen(password);
	if (ul > 0xFFFF || pl > 0xFFFF)
		return CQL_ERR_TOO_LARGE;
	/* authzid (empty) NUL authcid NUL password */
	cql_buf_u8(out, 0);
	cql_buf_put(out, user, ul);
	cql_buf_u8(out, 0);
	cql_buf_put(out, password, pl);
	return finish(out);
}

cql_status
cql_write_register(cql_buf *b, const char *const *events, int n)
{
	cql_status	st;

	if (n < 0 || n > 0xFFFF || (n > 0 && events == NULL))
		return CQL_ERR_INVALID_ARG;
	for (int i = 0; i < n; i++)
		if ((st = check_string(events[i])) != CQL_OK)
			return st;
	cql_buf_string_list(b, events, n);
	return finish(b);
}

cql_status
cql_write_query(cql_buf *b, int version, const char *query, const cql_query_params *p)
{
	cql_status	st;

	if ((st = check_long_string(query)) != CQL_OK)
		return st;
	if ((st = check_params(version, p)) != CQL_OK)
		return st;
	cql_buf_long_string(b, query, strlen(query));
	write_params(b, version, p);
	return finish(b);
}

cql_status
cql_write_prepare(cql_buf *b, int version, const char *query, const char *keyspace)
{
	cql_status	st;

	if (!version_ok(version))
		return CQL_ERR_INVALID_ARG;
	if ((st = check_long_string(query)) != CQL_OK)
		return st;
	if (keyspace)
	{
		if (version < CQL_PROTOCOL_V5)
			return CQL_ERR_UNSUPPORTED;
		if ((st = check_string(keyspace)) != CQL_OK)
			return st;
	}
	cql_buf_long_string(b, query, strlen(query));
	if (version >= CQL_PROTOCOL_V5)
	{
		cql_buf_u32(b, keyspace ? CQL_PREPARE_FLAG_WITH_KEYSPACE : 0);
		if (keyspace)
			cql_buf_string(b, keyspace);
	}
	return finish(b);
}

cql_status
cql_write_execute(cql_buf *b, int version, const uint8_t *id, uint16_t id_len,
				  const uint8_t *rmid, uint16_t rmid_len,
				  const cql_query_params *p)
{
	cql_status	st;

	if (id == NULL && id_len > 0)
		return CQL_ERR_INVALID_ARG;
	if (id_len == 0)
		return CQL_ERR_INVALID_ARG;
	/* v5 servers refuse an EXECUTE without the result metadata id */
	if (version >= CQL_PROTOCOL_V5 && (rmid == NULL || rmid_len == 0))
		return CQL_ERR_INVALID_ARG;
	if ((st = check_params(version, p)) != CQL_OK)
		return st;
	cql_buf_short_bytes(b, id, id_len);
	if (version >= CQL_PROTOCOL_V5)
		cql_buf_short_bytes(b, rmid, rmid_len);
	write_params(b, version, p);
	return finish(b);
}

cql_status
cql_write_batch(cql_buf *b, int version, uint8_t batch_type,
				const cql_batch_stmt *stmts, int nstmts,
				const cql_query_params *p)
{
	cql_status	st;
	uint32_t	flags = 0;

	if (p == NULL || !version_ok(version))
		return CQL_ERR_INVALID_ARG;
	if (batch_type > CQL_BATCH_COUNTER)
		return CQL_ERR_INVALID_ARG;
	if (nstmts < 0 || nstmts > 0xFFFF || (nstmts > 0 && stmts == NULL))
		return CQL_ERR_INVALID_ARG;
	for (int i = 0; i < nstmts; i++)
	{
		const cql_batch_stmt *s = &stmts[i];

		if (s->query)
		{
			if ((st = check_long_string(s->query)) != CQL_OK)
				return st;
		}
		else if (s->id == NULL || s->id_len == 0)
			return CQL_ERR_INVALID_ARG;
		if ((st = check_values(version, s->nvalues, s->values, NULL)) != CQL_OK)
			return st;
	}
	if ((st = check_tail_params(version, p)) != CQL_OK)
		return st;

	cql_buf_u8(b, batch_type);
	cql_buf_u16(b, (uint16_t) nstmts);
	for (int i = 0; i < nstmts; i++)
	{
		const cql_batch_stmt *s = &stmts[i];

		if (s->query)
		{
			cql_buf_u8(b, 0);
			cql_buf_long_string(b, s->query, strlen(s->query));
		}
		else
		{
			cql_buf_u8(b, 1);
			cql_buf_short_bytes(b, s->id, s->id_len);
		}
		write_values(b, s->nvalues, s->values, NULL);
	}

	/* only these flags are meaningful in a BATCH; never names (broken) */
	flags |= tail_flags(p);
	cql_buf_u16(b, p->consistency);
	write_flags(b, version, flags);
	write_tail(b, p, flags);
	return finish(b);
}

/*-------------------------------------------------------------------------
 *
 * cql_response.c
 *		Decoders of response bodies: ERROR, READY, AUTHENTICATE,
 *		AUTH_CHALLENGE/AUTH_SUCCESS, SUPPORTED, EVENT and RESULT.
 *
 * Every byte read here comes from the server and is treated as hostile:
 * all reads go through cql_reader, and every count read from the wire is
 * compared with the bytes actually left (each element has a known minimum
 * encoded size) BEFORE anything is allocated for it.  That is what keeps a
 * four-byte "rows_count = 2^31" from turning into a huge allocation.
 *
 * A decoded RESULT owns a copy of its body; the cell index of a Rows
 * result points into that copy, so cells stay valid as long as the result.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_response.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------------
 * Small helpers
 * ---------------------------------------------------------------------
 */

/* copy n bytes of s into a fixed buffer, NUL-terminated, truncated */
static void
copy_fixed(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	if (n > 0)
		memcpy(dst, s, n);
	dst[n] = '\0';
}

static cql_status
read_string_fixed(cql_reader *r, char *dst, size_t cap)
{
	const char *s;
	size_t		n;
	cql_status	st;

	if ((st = cql_read_string(r, &s, &n)) != CQL_OK)
		return st;
	copy_fixed(dst, cap, s, n);
	return CQL_OK;
}

static void
free_string_array(char **v, int n, const cql_allocator *a)
{
	if (v == NULL)
		return;
	for (int i = 0; i < n; i++)
		cql_free(a, v[i]);
	cql_free(a, v);
}

/*
 * [string list] into an allocated array of allocated strings.  Each
 * [string] takes at least 2 bytes, which bounds the count.
 */
static cql_status
read_string_list_dup(cql_reader *r, const cql_allocator *a, int *nout, char ***out)
{
	uint16_t	n;
	char	  **v;
	cql_status	st;

	*nout = 0;
	*out = NULL;
	if ((st = cql_read_u16(r, &n)) != CQL_OK)
		return st;
	if ((size_t) n * 2 > cql_reader_remaining(r))
		return CQL_ERR_MALFORMED;
	if (n == 0)
		return CQL_OK;
	v = cql_alloc0(a, sizeof(char *) * n);
	if (v == NULL)
		return CQL_ERR_NOMEM;
	for (int i = 0; i < n; i++)
	{
		if ((st = cql_read_string_dup(r, a, &v[i])) != CQL_OK)
		{
			free_string_array(v, i, a);
			return st;
		}
	}
	*nout = n;
	*out = v;
	return CQL_OK;
}

static cql_status
dup_bytes(const cql_allocator *a, const uint8_t *p, size_t n, uint8_t **out)
{
	*out = cql_alloc(a, n ? n : 1);
	if (*out == NULL)
		return CQL_ERR_NOMEM;
	if (n)
		memcpy(*out, p, n);
	return CQL_OK;
}

static bool
str_eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* ---------------------------------------------------------------------
 * Prefixes: tracing id, warnings, custom payload
 * ---------------------------------------------------------------------
 */
cql_status
cql_response_strip(const uint8_t *body, size_t n, uint8_t flags,
				   const cql_allocator *a, cql_response_extras *ex,
				   size_t *msg_offset)
{
	cql_reader	r;
	cql_status	st;

	memset(ex, 0, sizeof(*ex));
	*msg_offset = 0;
	cql_reader_init(&r, body, n);

	/* order fixed by the protocol: tracing, warnings, custom payload */
	if (flags & CQL_FLAG_TRACING)
	{
		const uint8_t *id;

		if ((st = cql_read_raw(&r, 16, &id)) != CQL_OK)
			return st;
		memcpy(ex->tracing_id, id, 16);
		ex->has_tracing_id = true;
	}
	if (flags & CQL_FLAG_WARNING)
	{
		if ((st = read_string_list_dup(&r, a, &ex->nwarnings, &ex->warnings)) != CQL_OK)
			return st;
	}
	if (flags & CQL_FLAG_CUSTOM_PAYLOAD)
	{
		const uint8_t *start = r.p;
		uint16_t	count;

		if ((st = cql_read_u16(&r, &count)) != CQL_OK)
			goto fail;
		for (int i = 0; i < count; i++)
		{
			const char *k;
			size_t		kn;
			const uint8_t *v;
			int32_t		vn;

			if ((st = cql_read_string(&r, &k, &kn)) != CQL_OK ||
				(st = cql_read_bytes(&r, &v, &vn)) != CQL_OK)
				goto fail;
		}
		ex->ncustom = count;
		ex->custom_payload = start;
		ex->custom_payload_len = (size_t) (r.p - start);
	}
	*msg_offset = (size_t) (r.p - body);
	return CQL_OK;

fail:
	cql_response_extras_free(ex, a);
	return st;
}

void
cql_response_extras_free(cql_response_extras *ex, const cql_allocator *a)
{
	free_string_array(ex->warnings, ex->nwarnings, a);
	memset(ex, 0, sizeof(*ex));
}

/* ---------------------------------------------------------------------
 * ERROR
 * ---------------------------------------------------------------------
 */
const char *
cql_error_code_name(int32_t code)
{
	switch (code)
	{
		case CQL_ERRCODE_SERVER_ERROR:
			return "Server_error";
		case CQL_ERRCODE_PROTOCOL_ERROR:
			return "Protocol_error";
		case CQL_ERRCODE_AUTH_ERROR:
			return "Authentication_error";
		case CQL_ERRCODE_UNAVAILABLE:
			return "Unavailable";
		case CQL_ERRCODE_OVERLOADED:
			return "Overloaded";
		case CQL_ERRCODE_IS_BOOTSTRAPPING:
			return "Is_bootstrapping";
		case CQL_ERRCODE_TRUNCATE_ERROR:
			return "Truncate_error";
		case CQL_ERRCODE_WRITE_TIMEOUT:
			return "Write_timeout";
		case CQL_ERRCODE_READ_TIMEOUT:
			return "Read_timeout";
		case CQL_ERRCODE_READ_FAILURE:
			return "Read_failure";
		case CQL_ERRCODE_FUNCTION_FAILURE:
			return "Function_failure";
		case CQL_ERRCODE_WRITE_FAILURE:
			return "Write_failure";
		case CQL_ERRCODE_CDC_WRITE_FAILURE:
			return "CDC_write_failure";
		case CQL_ERRCODE_CAS_WRITE_UNKNOWN:
			return "CAS_write_unknown";
		case CQL_ERRCODE_SYNTAX_ERROR:
			return "Syntax_error";
		case CQL_ERRCODE_UNAUTHORIZED:
			return "Unauthorized";
		case CQL_ERRCODE_INVALID:
			return "Invalid";
		case CQL_ERRCODE_CONFIG_ERROR:
			return "Config_error";
		case CQL_ERRCODE_ALREADY_EXISTS:
			return "Already_exists";
		case CQL_ERRCODE_UNPREPARED:
			return "Unprepared";
	}
	return "Unknown";
}

/*
 * cql_error_is_tombstone_failure
 *		True for a Read_failure that a replica reported as
 *		READ_TOO_MANY_TOMBSTONES: in the v5 reason map, or (protocol v4,
 *		which has no map, or reasons beyond the entries kept) in the
 *		server's message, which Cassandra builds from the reasons.  A
 *		reader may try again in smaller pages: the threshold counts the
 *		tombstones one read command meets.
 */
bool
cql_error_is_tombstone_failure(const cql_error *e)
{
	if (e == NULL || e->status != CQL_ERR_SERVER || e->code != CQL_ERRCODE_READ_FAILURE)
		return false;
	for (int i = 0; i < e->nreasons && i < CQL_ERROR_MAX_REASONS; i++)
		if (e->reasons[i].code == CQL_FAILURE_READ_TOO_MANY_TOMBSTONES)
			return true;
	return strstr(e->message, "READ_TOO_MANY_TOMBSTONES") != NULL;
}

void
cql_error_clear(cql_error *e)
{
	memset(e, 0, sizeof(*e));
	e->status = CQL_OK;
	e->code = -1;
	e->contentions = -1;
}

void
cql_error_setf(cql_error *e, cql_status st, const char *fmt,...)
{
	char		host[sizeof(e->host)];
	int			sys_errno = e->sys_errno;
	va_list		ap;

	/* the connection layer may have recorded the peer already: keep it */
	memcpy(host, e->host, sizeof(host));
	cql_error_clear(e);
	memcpy(e->host, host, sizeof(host));
	e->host[sizeof(e->host) - 1] = '\0';
	e->sys_errno = sys_errno;
	e->status = st;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

static cql_status
read_cl_received_blockfor(cql_reader *r, cql_error *e)
{
	cql_status	st;

	if ((st = cql_read_u16(r, &e->consistency)) != CQL_OK ||
		(st = cql_read_i32(r, &e->received)) != CQL_OK ||
		(st = cql_read_i32(r, &e->blockfor)) != CQL_OK)
		return st;
	return CQL_OK;
}

/* v4: [int] numfailures; v5: [int] n + n x ([inetaddr], [short] reason) */
static cql_status
read_failures(cql_reader *r, int version, cql_error *e)
{
	cql_status	st;
	int32_t		n;

	if ((st = cql_read_i32(r, &n)) != CQL_OK)
		return st;
	if (n < 0)
		return CQL_ERR_MALFORMED;
	e->numfailures = n;
	if (version < CQL_PROTOCOL_V5)
		return CQL_OK;
	/* each entry: [byte] len, >= 4 address bytes, [short] reason */
	if ((uint64_t) n * 7 > cql_reader_remaining(r))
		return CQL_ERR_MALFORMED;
	e->nreasons = n;
	for (int32_t i = 0; i < n; i++)
	{
		uint8_t		alen;
		const uint8_t *addr;
		uint16_t	code;

		if ((st = cql_read_u8(r, &alen)) != CQL_OK)
			return st;
		if (alen != 4 && alen != 16)
			return CQL_ERR_MALFORMED;
		if ((st = cql_read_raw(r, alen, &addr)) != CQL_OK ||
			(st = cql_read_u16(r, &code)) != CQL_OK)
			return st;
		if (i < CQL_ERROR_MAX_REASONS)
		{
			memcpy(e->reasons[i].addr, addr, alen);
			e->reasons[i].addr_len = alen;
			e->reasons[i].code = code;
		}
	}
	return CQL_OK;
}

static cql_status
read_write_type(cql_reader *r, cql_error *e)
{
	return read_string_fixed(r, e->write_type, sizeof(e->write_type));
}

cql_status
cql_decode_error(const uint8_t *p, size_t n, int version, cql_error *e)
{
	cql_reader	r;
	cql_status	st;
	int32_t		code;
	uint8_t		b;
	char		host[sizeof(e->host)];

	memcpy(host, e->host, sizeof(host));
	cql_error_clear(e);
	memcpy(e->host, host, sizeof(host));
	e->host[sizeof(e->host) - 1] = '\0';
	e->status = CQL_ERR_SERVER;

	cql_reader_init(&r, p, n);
	if ((st = cql_read_i32(&r, &code)) != CQL_OK)
		goto bad;
	e->code = code;
	if ((st = read_string_fixed(&r, e->message, sizeof(e->message))) != CQL_OK)
		goto bad;

	switch (code)
	{
		case CQL_ERRCODE_UNAVAILABLE:
			/* cl, required, alive: 'required' is kept in blockfor */
			if ((st = cql_read_u16(&r, &e->consistency)) != CQL_OK ||
				(st = cql_read_i32(&r, &e->blockfor)) != CQL_OK ||
				(st = cql_read_i32(&r, &e->alive)) != CQL_OK)
				goto bad;
			break;
		case CQL_ERRCODE_WRITE_TIMEOUT:
			if ((st = read_cl_received_blockfor(&r, e)) != CQL_OK ||
				(st = read_write_type(&r, e)) != CQL_OK)
				goto bad;
			if (version >= CQL_PROTOCOL_V5 && strcmp(e->write_type, "CAS") == 0)
			{
				uint16_t	c;

				if ((st = cql_read_u16(&r, &c)) != CQL_OK)
					goto bad;
				e->contentions = c;
			}
			break;
		case CQL_ERRCODE_READ_TIMEOUT:
			if ((st = read_cl_received_blockfor(&r, e)) != CQL_OK ||
				(st = cql_read_u8(&r, &b)) != CQL_OK)
				goto bad;
			e->data_present = b != 0;
			break;
		case CQL_ERRCODE_READ_FAILURE:
			if ((st = read_cl_received_blockfor(&r, e)) != CQL_OK ||
				(st = read_failures(&r, version, e)) != CQL_OK ||
				(st = cql_read_u8(&r, &b)) != CQL_OK)
				goto bad;
			e->data_present = b != 0;
			break;
		case CQL_ERRCODE_WRITE_FAILURE:
			if ((st = read_cl_received_blockfor(&r, e)) != CQL_OK ||
				(st = read_failures(&r, version, e)) != CQL_OK ||
				(st = read_write_type(&r, e)) != CQL_OK)
				goto bad;
			break;
		case CQL_ERRCODE_CAS_WRITE_UNKNOWN:
			if ((st = read_cl_received_blockfor(&r, e)) != CQL_OK)
				goto bad;
			break;
		case CQL_ERRCODE_FUNCTION_FAILURE:
			{
				uint16_t	nargs;
				size_t		used = 0;

				if ((st = read_string_fixed(&r, e->keyspace, sizeof(e->keyspace))) != CQL_OK ||
					(st = read_string_fixed(&r, e->function, sizeof(e->function))) != CQL_OK ||
					(st = cql_read_u16(&r, &nargs)) != CQL_OK)
					goto bad;
				e->nargs = nargs;
				for (int i = 0; i < nargs; i++)
				{
					const char *s;
					size_t		sn;

					if ((st = cql_read_string(&r, &s, &sn)) != CQL_OK)
						goto bad;
					/* join as "int, text", truncating at the buffer end */
					if (i > 0 && used + 2 < sizeof(e->arg_types))
					{
						memcpy(e->arg_types + used, ", ", 2);
						used += 2;
					}
					if (used < sizeof(e->arg_types) - 1)
					{
						size_t		k = sn;

						if (k > sizeof(e->arg_types) - 1 - used)
							k = sizeof(e->arg_types) - 1 - used;
						memcpy(e->arg_types + used, s, k);
						used += k;
					}
					e->arg_types[used] = '\0';
				}
				break;
			}
		case CQL_ERRCODE_ALREADY_EXISTS:
			if ((st = read_string_fixed(&r, e->keyspace, sizeof(e->keyspace))) != CQL_OK ||
				(st = read_string_fixed(&r, e->table, sizeof(e->table))) != CQL_OK)
				goto bad;
			break;
		case CQL_ERRCODE_UNPREPARED:
			{
				const uint8_t *id;
				uint16_t	idn;

				if ((st = cql_read_short_bytes(&r, &id, &idn)) != CQL_OK)
					goto bad;
				e->unprepared_id_len = idn;
				memcpy(e->unprepared_id, id,
					   idn < sizeof(e->unprepared_id) ? idn : sizeof(e->unprepared_id));
				break;
			}
		default:
			/* no extra fields (or an unknown code: keep code + message) */
			break;
	}
	return CQL_OK;

bad:
	return st;
}

/* ---------------------------------------------------------------------
 * Handshake messages
 * ---------------------------------------------------------------------
 */
cql_status
cql_decode_ready(const uint8_t *p, size_t n)
{
	/* READY has an empty body; extra bytes are tolerated (forward compat) */
	return CQL_OK;
}

cql_status
cql_decode_authenticate(const uint8_t *p, size_t n, const cql_allocator *a,
						char **class_name)
{
	cql_reader	r;

	*class_name = NULL;
	cql_reader_init(&r, p, n);
	return cql_read_string_dup(&r, a, class_name);
}

cql_status
cql_decode_auth_token(const uint8_t *p, size_t n, const uint8_t **token,
					  int32_t *token_len)
{
	cql_reader	r;

	*token = NULL;
	*token_len = -1;
	cql_reader_init(&r, p, n);
	return cql_read_bytes(&r, token, token_len);
}

cql_status
cql_decode_supported(const uint8_t *p, size_t n, const cql_allocator *a,
					 cql_supported *out)
{
	cql_reader	r;
	uint16_t	count;
	cql_status	st;

	memset(out, 0, sizeof(*out));
	cql_reader_init(&r, p, n);
	if ((st = cql_read_u16(&r, &count)) != CQL_OK)
		return st;
	/* key [string] + [string list] >= 4 bytes per entry */
	if ((size_t) count * 4 > cql_reader_remaining(&r))
		return CQL_ERR_MALFORMED;
	if (count == 0)
		return CQL_OK;
	out->entries = cql_alloc0(a, sizeof(cql_supported_entry) * count);
	if (out->entries == NULL)
		return CQL_ERR_NOMEM;
	for (int i = 0; i < count; i++)
	{
		cql_supported_entry *e = &out->entries[i];

		out->n = i + 1;
		if ((st = cql_read_string_dup(&r, a, &e->key)) != CQL_OK ||
			(st = read_string_list_dup(&r, a, &e->nvalues, &e->values)) != CQL_OK)
		{
			cql_supported_free(out, a);
			return st;
		}
	}
	return CQL_OK;
}

const cql_supported_entry *
cql_supported_get(const cql_supported *s, const char *key)
{
	for (int i = 0; i < s->n; i++)
		if (s->entries[i].key && strcmp(s->entries[i].key, key) == 0)
			return &s->entries[i];
	return NULL;
}

bool
cql_supported_has(const cql_supported *s, const char *key, const char *value)
{
	const cql_supported_entry *e = cql_supported_get(s, key);

	if (e == NULL)
		return false;
	for (int i = 0; i < e->nvalues; i++)
		if (strcasecmp(e->values[i], value) == 0)
			return true;
	return false;
}

void
cql_supported_free(cql_supported *s, const cql_allocator *a)
{
	if (s->entries)
	{
		for (int i = 0; i < s->n; i++)
		{
			cql_free(a, s->entries[i].key);
			free_string_array(s->entries[i].values, s->entries[i].nvalues, a);
		}
		cql_free(a, s->entries);
	}
	memset(s, 0, sizeof(*s));
}

/* ---------------------------------------------------------------------
 * Schema changes and events
 * ---------------------------------------------------------------------
 */
void
cql_schema_change_free(cql_schema_change *sc, const cql_allocator *a)
{
	cql_free(a, sc->change);
	cql_free(a, sc->target);
	cql_free(a, sc->keyspace);
	cql_free(a, sc->name);
	free_string_array(sc->args, sc->nargs, a);
	memset(sc, 0, sizeof(*sc));
}

/* <change><target><options>; caller frees on error */
static cql_status
read_schema_change(cql_reader *r, const cql_allocator *a, cql_schema_change *sc)
{
	cql_status	st;
	const char *t;

	if ((st = cql_read_string_dup(r, a, &sc->change)) != CQL_OK ||
		(st = cql_read_string_dup(r, a, &sc->target)) != CQL_OK)
		return st;
	t = sc->target;
	if ((st = cql_read_string_dup(r, a, &sc->keyspace)) != CQL_OK)
		return st;
	if (strcmp(t, "KEYSPACE") == 0)
		return CQL_OK;
	if (strcmp(t, "TABLE") == 0 || strcmp(t, "TYPE") == 0)
		return cql_read_string_dup(r, a, &sc->name);
	if (strcmp(t, "FUNCTION") == 0 || strcmp(t, "AGGREGATE") == 0)
	{
		if ((st = cql_read_string_dup(r, a, &sc->name)) != CQL_OK)
			return st;
		return read_string_list_dup(r, a, &sc->nargs, &sc->args);
	}
	return CQL_ERR_UNSUPPORTED;
}

cql_status
cql_decode_event(const uint8_t *p, size_t n, const cql_allocator *a, cql_event *ev)
{
	cql_reader	r;
	cql_status	st;
	const char *type;
	size_t		tn;

	memset(ev, 0, sizeof(*ev));
	cql_reader_init(&r, p, n);
	if ((st = cql_read_string(&r, &type, &tn)) != CQL_OK)
		return st;
	if (str_eq(type, tn, "TOPOLOGY_CHANGE") || str_eq(type, tn, "STATUS_CHANGE"))
	{
		uint8_t		alen;
		const uint8_t *addr;

		ev->type = str_eq(type, tn, "STATUS_CHANGE") ?
			CQL_EVENT_STATUS_CHANGE : CQL_EVENT_TOPOLOGY_CHANGE;
		if ((st = cql_read_string_dup(&r, a, &ev->change)) != CQL_OK)
			goto fail;
		if ((st = cql_read_u8(&r, &alen)) != CQL_OK)
			goto fail;
		if (alen != 4 && alen != 16)
		{
			st = CQL_ERR_MALFORMED;
			goto fail;
		}
		if ((st = cql_read_raw(&r, alen, &addr)) != CQL_OK ||
			(st = cql_read_i32(&r, &ev->port)) != CQL_OK)
			goto fail;
		memcpy(ev->addr, addr, alen);
		ev->addr_len = alen;
		return CQL_OK;
	}
	if (str_eq(type, tn, "SCHEMA_CHANGE"))
	{
		ev->type = CQL_EVENT_SCHEMA_CHANGE;
		if ((st = read_schema_change(&r, a, &ev->schema)) != CQL_OK)
			goto fail;
		return CQL_OK;
	}
	return CQL_ERR_UNSUPPORTED;

fail:
	cql_event_free(ev, a);
	return st;
}

void
cql_event_free(cql_event *ev, const cql_allocator *a)
{
	cql_free(a, ev->change);
	cql_schema_change_free(&ev->schema, a);
	memset(ev, 0, sizeof(*ev));
}

/* ---------------------------------------------------------------------
 * RESULT
 * ---------------------------------------------------------------------
 */
void
cql_columns_free(cql_column *cols, int32_t n, const cql_allocator *a)
{
	if (cols == NULL)
		return;
	for (int32_t i = 0; i < n; i++)
	{
		cql_free(a, cols[i].keyspace);
		cql_free(a, cols[i].table);
		cql_free(a, cols[i].name);
		cql_type_free(cols[i].type, a);
	}
	cql_free(a, cols);
}

cql_status
cql_columns_copy(const cql_column *cols, int32_t n, const cql_allocator *a,
				 cql_column **out)
{
	cql_column *c;

	*out = NULL;
	if (n < 0 || (n > 0 && cols == NULL))
		return CQL_ERR_INVALID_ARG;
	if (n == 0)
		return CQL_OK;
	c = cql_alloc0(a, sizeof(cql_column) * (size_t) n);
	if (c == NULL)
		return CQL_ERR_NOMEM;
	for (int32_t i = 0; i < n; i++)
	{
		if ((cols[i].keyspace && !(c[i].keyspace = cql_strdup(a, cols[i].keyspace))) ||
			(cols[i].table && !(c[i].table = cql_strdup(a, cols[i].table))) ||
			(cols[i].name && !(c[i].name = cql_strdup(a, cols[i].name))) ||
			(cols[i].type && !(c[i].type = cql_type_copy(cols[i].type, a))))
		{
			cql_columns_free(c, n, a);
			return CQL_ERR_NOMEM;
		}
	}
	*out = c;
	return CQL_OK;
}

/*
 * Column specs: [<ks><table>] if GLOBAL_TABLES_SPEC, then per column
 * [<ks><table>] unless global, <name>, <type option>.
 */
static cql_status
read_col_specs(cql_reader *r, const cql_allocator *a, int32_t flags, int32_t ncols,
			   cql_column **out)
{
	bool		global = (flags & CQL_ROWS_GLOBAL_TABLES_SPEC) != 0;
	const char *gks = NULL;
	const char *gtab = NULL;
	size_t		gksn = 0;
	size_t		gtabn = 0;
	size_t		min_per_col = global ? 4 : 8;
	cql_column *cols;
	cql_status	st;
	int			budget = CQL_MAX_RESULT_TYPE_NODES;	/* for all columns */

	*out = NULL;
	if (ncols < 0)
		return CQL_ERR_MALFORMED;
	if (global)
	{
		if ((st = cql_read_string(r, &gks, &gksn)) != CQL_OK ||
			(st = cql_read_string(r, &gtab, &gtabn)) != CQL_OK)
			return st;
	}
	if ((uint64_t) ncols * min_per_col > cql_reader_remaining(r))
		return CQL_ERR_MALFORMED;
	/* every column has at least one type node */
	if (ncols > budget)
		return CQL_ERR_TOO_LARGE;
	if (ncols == 0)
		return CQL_OK;
	cols = cql_alloc0(a, sizeof(cql_column) * (size_t) ncols);
	if (cols == NULL)
		return CQL_ERR_NOMEM;
	for (int32_t i = 0; i < ncols; i++)
	{
		const char *ks = gks;
		const char *tab = gtab;
		size_t		ksn = gksn;
		size_t		tabn = gtabn;

		if (!global)
		{
			if ((st = cql_read_string(r, &ks, &ksn)) != CQL_OK ||
				(st = cql_read_string(r, &tab, &tabn)) != CQL_OK)
				goto fail;
		}
		cols[i].keyspace = cql_strndup(a, ks, ksn);
		cols[i].table = cql_strndup(a, tab, tabn);
		if (cols[i].keyspace == NULL || cols[i].table == NULL)
		{
			st = CQL_ERR_NOMEM;
			goto fail;
		}
		if ((st = cql_read_string_dup(r, a, &cols[i].name)) != CQL_OK)
			goto fail;
		if ((st = cql_type_read_option_budget(r, a, &cols[i].type, &budget)) != CQL_OK)
			goto fail;
	}
	*out = cols;
	return CQL_OK;

fail:
	cql_columns_free(cols, ncols, a);
	return st;
}

/* Rows metadata; under NO_METADATA the caller's cached columns are used */
static cql_status
read_rows_metadata(cql_reader *r, int version, const cql_allocator *a,
				   cql_rows_metadata *m, const cql_column *cached, int ncached)
{
	cql_status	st;

	if ((st = cql_read_i32(r, &m->flags)) != CQL_OK ||
		(st = cql_read_i32(r, &m->ncols)) != CQL_OK)
		return st;
	if (m->ncols < 0)
		return CQL_ERR_MALFORMED;
	m->paging_state_len = -1;
	if (m->flags & CQL_ROWS_HAS_MORE_PAGES)
	{
		const uint8_t *ps;
		int32_t		psn;

		if ((st = cql_read_bytes(r, &ps, &psn)) != CQL_OK)
			return st;
		if (psn >= 0)
		{
			if ((st = dup_bytes(a, ps, (size_t) psn, &m->paging_state)) != CQL_OK)
				return st;
			m->paging_state_len = psn;
		}
	}
	/* spec order: paging_state first, then new_metadata_id (v5) */
	if (version >= CQL_PROTOCOL_V5 && (m->flags & CQL_ROWS_METADATA_CHANGED))
	{
		const uint8_t *id;
		uint16_t	idn;

		if ((st = cql_read_short_bytes(r, &id, &idn)) != CQL_OK)
			return st;
		if ((st = dup_bytes(a, id, idn, &m->new_metadata_id)) != CQL_OK)
			return st;
		m->new_metadata_id_len = idn;
		m->has_new_metadata_id = true;
	}
	if (m->flags & CQL_ROWS_NO_METADATA)
	{
		if (cached != NULL && ncached != m->ncols)
			return CQL_ERR_MALFORMED;
		m->cols = (cql_column *) cached;
		m->cols_borrowed = true;
		return CQL_OK;
	}
	m->cols_borrowed = false;
	return read_col_specs(r, a, m->flags, m->ncols, &m->cols);
}

static cql_status
read_rows(cql_reader *r, cql_result *res)
{
	cql_status	st;
	uint64_t	ncells;
	int32_t		ncols = res->meta.ncols;

	if ((st = cql_read_i32(r, &res->rows_count)) != CQL_OK)
		return st;
	if (res->rows_count < 0)
		return CQL_ERR_MALFORMED;
	ncells = (uint64_t) res->rows_count * (uint64_t) ncols;
	/* every cell is at least its 4-byte length: check before allocating */
	if (ncells > cql_reader_remaining(r) / 4)
		return CQL_ERR_MALFORMED;
	if (ncells == 0)
		return CQL_OK;
	res->cells = cql_alloc(res->alloc, sizeof(cql_elem) * (size_t) ncells);
	if (res->cells == NULL)
		return CQL_ERR_NOMEM;
	for (uint64_t i = 0; i < ncells; i++)
	{
		if ((st = cql_read_bytes(r, &res->cells[i].p, &res->cells[i].n)) != CQL_OK)
			return st;
	}
	return CQL_OK;
}

static cql_status
read_prepared(cql_reader *r, int version, cql_result *res)
{
	const cql_allocator *a = res->alloc;
	cql_prepared_metadata *b = &res->bind;
	const uint8_t *id;
	uint16_t	idn;
	cql_status	st;

	if ((st = cql_read_short_bytes(r, &id, &idn)) != CQL_OK)
		return st;
	if ((st = dup_bytes(a, id, idn, &res->prepared_id)) != CQL_OK)
		return st;
	res->prepared_id_len = idn;
	if (version >= CQL_PROTOCOL_V5)
	{
		if ((st = cql_read_short_bytes(r, &id, &idn)) != CQL_OK)
			return st;
		if ((st = dup_bytes(a, id, idn, &res->result_metadata_id)) != CQL_OK)
			return st;
		res->result_metadata_id_len = idn;
	}

	/* bind-marker metadata */
	if ((st = cql_read_i32(r, &b->flags)) != CQL_OK ||
		(st = cql_read_i32(r, &b->ncols)) != CQL_OK)
		return st;
	if (b->ncols < 0)
		return CQL_ERR_MALFORMED;
	if (version >= CQL_PROTOCOL_V4)
	{
		if ((st = cql_read_i32(r, &b->npk)) != CQL_OK)
			return st;
		if (b->npk < 0 || (uint64_t) b->npk * 2 > cql_reader_remaining(r))
			return CQL_ERR_MALFORMED;
		if (b->npk > 0)
		{
			b->pk_indexes = cql_alloc(a, sizeof(uint16_t) * (size_t) b->npk);
			if (b->pk_indexes == NULL)
				return CQL_ERR_NOMEM;
			for (int32_t i = 0; i < b->npk; i++)
			{
				if ((st = cql_read_u16(r, &b->pk_indexes[i])) != CQL_OK)
					return st;
				/* an index must name an existing bind marker */
				if (b->pk_indexes[i] >= b->ncols)
					return CQL_ERR_MALFORMED;
			}
		}
	}
	if ((st = read_col_specs(r, a, b->flags, b->ncols, &b->cols)) != CQL_OK)
		return st;

	/* result metadata: a Rows metadata block (no cached columns here) */
	return read_rows_metadata(r, version, a, &res->meta, NULL, 0);
}

cql_status
cql_decode_result_take(cql_result *res, int version, uint8_t flags,
					   uint8_t *body, size_t n, const cql_allocator *a,
					   const cql_column *cached, int ncached)
{
	cql_reader	r;
	cql_status	st;
	size_t		off;

	memset(res, 0, sizeof(*res));
	res->alloc = a;
	res->body = body;
	res->body_len = n;
	res->meta.paging_state_len = -1;

	if (body == NULL && n > 0)
	{
		st = CQL_ERR_INVALID_ARG;
		goto fail;
	}
	if ((st = cql_response_strip(body, n, flags, a, &res->extras, &off)) != CQL_OK)
		goto fail;
	cql_reader_init(&r, body + off, n - off);
	if ((st = cql_read_i32(&r, &res->kind)) != CQL_OK)
		goto fail;

	switch (res->kind)
	{
		case CQL_RESULT_VOID:
			break;
		case CQL_RESULT_ROWS:
			if ((st = read_rows_metadata(&r, version, a, &res->meta, cached, ncached)) != CQL_OK ||
				(st = read_rows(&r, res)) != CQL_OK)
				goto fail;
			break;
		case CQL_RESULT_SET_KEYSPACE:
			if ((st = cql_read_string_dup(&r, a, &res->keyspace)) != CQL_OK)
				goto fail;
			break;
		case CQL_RESULT_PREPARED:
			if ((st = read_prepared(&r, version, res)) != CQL_OK)
				goto fail;
			break;
		case CQL_RESULT_SCHEMA_CHANGE:
			if ((st = read_schema_change(&r, a, &res->schema)) != CQL_OK)
				goto fail;
			break;
		default:
			st = CQL_ERR_UNSUPPORTED;
			goto fail;
	}
	return CQL_OK;

fail:
	cql_result_free(res);
	return st;
}

cql_status
cql_decode_result(cql_result *res, int version, uint8_t flags,
				  const uint8_t *body, size_t n, const cql_allocator *a,
				  const cql_column *cached, int ncached)
{
	uint8_t    *copy;

	memset(res, 0, sizeof(*res));
	if (body == NULL && n > 0)
		return CQL_ERR_INVALID_ARG;
	if (n > CQL_MAX_BODY_LENGTH)
		return CQL_ERR_TOO_LARGE;
	copy = cql_alloc(a, n ? n : 1);
	if (copy == NULL)
		return CQL_ERR_NOMEM;
	if (n)
		memcpy(copy, body, n);
	return cql_decode_result_take(res, version, flags, copy, n, a, cached, ncached);
}

void
cql_result_free(cql_result *res)
{
	const cql_allocator *a = res->alloc;

	if (a == NULL)
		return;
	cql_response_extras_free(&res->extras, a);
	cql_free(a, res->keyspace);
	cql_schema_change_free(&res->schema, a);
	cql_free(a, res->prepared_id);
	cql_free(a, res->result_metadata_id);
	cql_columns_free(res->bind.cols, res->bind.ncols, a);
	cql_free(a, res->bind.pk_indexes);
	if (!res->meta.cols_borrowed)
		cql_columns_free(res->meta.cols, res->meta.ncols, a);
	cql_free(a, res->meta.paging_state);
	cql_free(a, res->meta.new_metadata_id);
	cql_free(a, res->cells);
	cql_free(a, res->body);
	memset(res, 0, sizeof(*res));
}

/*
 * cql_result_check_columns
 *		cql_result_has_columns() as a status with a message, for callers
 *		that report errors (see cql_wire.h).
 */
cql_status
cql_result_check_columns(const cql_result *res, int32_t ncols, cql_error *err)
{
	if (cql_result_has_columns(res, ncols))
		return CQL_OK;
	if (err)
	{
		cql_error_clear(err);
		if (res == NULL || res->kind != CQL_RESULT_ROWS)
			cql_error_setf(err, CQL_ERR_MALFORMED,
						   "server answered with result kind %d where rows were expected",
						   res ? (int) res->kind : -1);
		else if (res->meta.ncols != ncols)
			cql_error_setf(err, CQL_ERR_MALFORMED,
						   "server returned %d columns per row, expected %d",
						   (int) res->meta.ncols, (int) ncols);
		else
			cql_error_setf(err, CQL_ERR_MALFORMED,
						   "server returned rows without column metadata");
	}
	return CQL_ERR_MALFORMED;
}

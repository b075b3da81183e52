/*-------------------------------------------------------------------------
 *
 * cql_query.c
 *		cql_query() and cql_query_records(): an ad-hoc CQL SELECT on a
 *		foreign server, its rows returned as jsonb objects or as records of
 *		a column definition list.
 *
 * The statement is prepared (never sent as text with values spliced in):
 * the bind metadata gives the CQL type of every marker, and each argument
 * after the statement is converted from its PostgreSQL type by the FDW's
 * own conversions (convert.c), through an assignment cast to the default
 * type of the marker's CQL type where the argument's type is not directly
 * convertible.  Rows are read a page (option fetch_size) at a time on one
 * connection, and each page is converted and appended to the tuplestore of
 * a materialize-mode set-returning function before the next is requested:
 * the protocol library holds one page at a time, and the tuplestore spills
 * to disk beyond work_mem, so memory stays bounded whatever the row count.
 * Every wait goes through the connection's wait hook, so cancel and
 * statement_timeout interrupt a long query between and within pages.
 *
 * The privileges are those of cql_execute(): USAGE on the foreign server,
 * checked here, and EXECUTE, revoked from PUBLIC by the extension script.
 * The CQL shown in error contexts is redacted as cql_execute's is
 * (cql_execute.c).
 *
 * IDENTIFICATION
 *		src/fdw/cql_query.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "compat.h"
#include "connection.h"
#include "convert.h"
#include "cql_cluster.h"
#include "cql_conn.h"
#include "cql_execute.h"
#include "cql_fdw.h"
#include "import.h"
#include "remote.h"

PG_FUNCTION_INFO_V1(cqlfdw_query_jsonb);
PG_FUNCTION_INFO_V1(cqlfdw_query_records);

/* the state of one call */
typedef struct CqlQueryState
{
	CqlRemote	remote;			/* user, options, pinned connection */
	const char *cql;			/* the statement as sent */
	const char *shown;			/* ... as error contexts show it */
	bool		records;		/* cql_query_records: a column list */
	cql_conn   *conn;			/* where it is prepared and paged */
	cql_prepared *prep;
	int			ncols;			/* result columns */
	CqlConv    *convs;			/* per result column */
	char	  **keys;			/* jsonb form: the column names */
	FmgrInfo   *tojsonb;		/* jsonb form: to_jsonb of each column */
	int			error_col;		/* result column being converted, -1 */
	/* outside palloc: released by the reset callback */
	cql_request *req;			/* page in flight */
	cql_result	page;
	bool		have_page;
} CqlQueryState;

/*
 * release_query
 *		Free what the protocol library allocated for this call: the page in
 *		flight (orphaned: the library drops its late answer) and the page
 *		held.  A request of a connection that was closed meanwhile went with
 *		it and is not touched.  Registered as the reset callback of the
 *		call's memory context, so it also runs after an error or a cancel.
 */
static void
release_query(void *arg)
{
	CqlQueryState *st = (CqlQueryState *) arg;

	if (st->req && cqlfdw_remote_alive(&st->remote))
		cql_request_free(st->req);
	st->req = NULL;
	if (st->have_page)
		cql_result_free(&st->page);
	st->have_page = false;
}

/*
 * query_error_callback
 *		Error context while a received cell is converted: which column of
 *		the result.
 */
static void
query_error_callback(void *arg)
{
	CqlQueryState *st = (CqlQueryState *) arg;

	if (st->error_col >= 0 && st->error_col < st->ncols)
		errcontext("column %d (\"%s\") of the CQL result",
				   st->error_col + 1, st->prep->cols[st->error_col].name);
}

/*
 * query_fail
 *		Raise the error of a failed request, with the statement (redacted as
 *		by cql_execute) as context; a transport failure also tells the
 *		cluster, so that the next request avoids that node.
 */
cqlfdw_noreturn static void
query_fail(CqlQueryState *st, cql_conn *conn, cql_status s, cql_error *err)
{
	cqlfdw_fail(st->remote.entry, st->remote.generation, conn, s, err,
				cqlfdw_redact_cql(st->cql, err));
}

/*
 * prepare_on
 *		Prepare the statement on conn (or find it in the connection's
 *		cache).  A syntax or schema error from Cassandra is raised here,
 *		before anything runs.
 */
static cql_prepared *
prepare_on(CqlQueryState *st, cql_conn *conn)
{
	cql_prepared *p;
	cql_error	err;
	cql_status	s;

	cql_error_clear(&err);
	for (;;)
	{
		s = cql_prepare(conn, st->cql, &p, &err);
		if (s != CQL_ERR_INTERRUPTED)
			break;
		cqlfdw_check_interrupts();
	}
	if (s != CQL_OK)
		query_fail(st, conn, s, &err);
	return p;
}

/*
 * default_type
 *		The PostgreSQL type a CQL type maps to by default (IMPORT FOREIGN
 *		SCHEMA's), except that a vector is always real[] here rather than
 *		pgvector's vector: the jsonb form of a row must not depend on which
 *		extensions are installed.
 */
static void
default_type(const cql_type *ctype, Oid *typid, int32 *typmod)
{
	cqlfdw_parse_type_string(cqlfdw_pg_type_for(ctype), typid, typmod);
	if (OidIsValid(*typid) && *typid == cqlfdw_pgvector_type())
	{
		*typid = FLOAT4ARRAYOID;
		*typmod = -1;
	}
}

/*
 * cast_value
 *		Apply the coercion find_coercion_pathway found from type 'from' to
 *		'to': nothing for a binary-compatible type, the cast function, or
 *		output then input (a cast through text).
 */
static Datum
cast_value(Datum d, Oid from, Oid to, CoercionPathType path, Oid funcid)
{
	switch (path)
	{
		case COERCION_PATH_RELABELTYPE:
			return d;
		case COERCION_PATH_FUNC:
			switch (get_func_nargs(funcid))
			{
				case 1:
					return OidFunctionCall1(funcid, d);
				case 2:
					return OidFunctionCall2(funcid, d, Int32GetDatum(-1));
				default:
					return OidFunctionCall3(funcid, d, Int32GetDatum(-1),
											BoolGetDatum(false));
			}
		case COERCION_PATH_COERCEVIAIO:
			{
				Oid			outfunc;
				Oid			infunc;
				Oid			ioparam;
				bool		isvarlena;
				char	   *s;

				getTypeOutputInfo(from, &outfunc, &isvarlena);
				s = OidOutputFunctionCall(outfunc, d);
				getTypeInputInfo(to, &infunc, &ioparam);
				return OidInputFunctionCall(infunc, s, ioparam, -1);
			}
		default:
			elog(ERROR, "unexpected coercion path %d", (int) path);
	}
	return (Datum) 0;
}

/*
 * cqlfdw_bind_prepare
 *		Decide how argument i (1-based in messages, named "<what> $i") of
 *		PostgreSQL type argtype is encoded for a bind marker of CQL type
 *		ctype, into bp; errors when it cannot be.  The plan holds lookups
 *		(type I/O functions, a cast) made in the current memory context,
 *		which must live as long as bp: a caller encoding many values of the
 *		same argument (cql_token() per row) prepares once and encodes each
 *		value with cqlfdw_bind_encode.
 *
 * Integers of any width go through bigint (the value is range-checked
 * against the CQL type when written), as for pushed-down comparisons.  A
 * type the marker's type does not take directly is cast to the marker's
 * default PostgreSQL type when an assignment cast exists (integer to a
 * varint or decimal, date to timestamp, ...).  Text (also an untyped
 * literal) is parsed as a CQL literal of the marker's type.
 */
void
cqlfdw_bind_prepare(const char *what, int i, const cql_type *ctype,
					Oid argtype, CqlBindPlan *bp)
{
	Oid			type = getBaseType(argtype);

	memset(bp, 0, sizeof(*bp));
	bp->argtype = argtype;
	bp->path = COERCION_PATH_NONE;
	if (type == INT2OID || type == INT4OID)
	{
		bp->widen = type;
		type = INT8OID;
	}
	bp->from = type;
	if (!cqlfdw_conv_init(&bp->cv, ctype, type, -1))
	{
		Oid			target;
		int32		typmod;

		default_type(ctype, &target, &typmod);
		if (target != type)
			bp->path = find_coercion_pathway(target, type, COERCION_ASSIGNMENT,
											 &bp->funcid);
		if ((bp->path != COERCION_PATH_FUNC && bp->path != COERCION_PATH_RELABELTYPE &&
			 bp->path != COERCION_PATH_COERCEVIAIO) ||
			!cqlfdw_conv_init(&bp->cv, ctype, target, -1))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("%s $%d of type %s cannot be bound to Cassandra type %s",
							what, i, format_type_be(argtype), cqlfdw_cql_type_string(ctype)),
					 errhint("Cast the argument to %s, or pass it as text in CQL literal form.",
							 format_type_be(target))));
		bp->target = target;
	}
}

/*
 * cqlfdw_bind_encode
 *		Encode d, a value of the argument bp was prepared for, into out;
 *		errors when it is not a valid value of the CQL type.
 */
void
cqlfdw_bind_encode(const char *what, int i, CqlBindPlan *bp, Datum d,
				   cql_buf *out)
{
	if (bp->widen == INT2OID)
		d = Int64GetDatum((int64) DatumGetInt16(d));
	else if (bp->widen == INT4OID)
		d = Int64GetDatum((int64) DatumGetInt32(d));
	if (bp->path != COERCION_PATH_NONE)
		d = cast_value(d, bp->from, bp->target, bp->path, bp->funcid);
	if (cqlfdw_conv_write(&bp->cv, d, out) != CQLW_OK)
	{
		Oid			outfunc;
		bool		isvarlena;

		getTypeOutputInfo(bp->cv.pgtype, &outfunc, &isvarlena);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s $%d (%s) is not a valid value of Cassandra type %s",
						what, i, OidOutputFunctionCall(outfunc, d),
						cqlfdw_cql_type_string(bp->cv.ctype)),
				 bp->cv.method == CONV_TEXT_LITERAL
				 ? errhint("A text argument is read as a CQL literal of type %s.",
						   cqlfdw_cql_type_string(bp->cv.ctype))
				 : cqlfdw_conv_refusal_errdetail(&bp->cv)));
	}
	if (cql_buf_status(out) != CQL_OK)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory while encoding a value for Cassandra")));
}

/*
 * cqlfdw_bind_any
 *		Encode one value of argument i of type argtype for a bind marker of
 *		CQL type ctype (cqlfdw_bind_prepare, then cqlfdw_bind_encode).
 */
void
cqlfdw_bind_any(const char *what, int i, const cql_type *ctype, Datum d,
				Oid argtype, cql_buf *out)
{
	CqlBindPlan bp;

	cqlfdw_bind_prepare(what, i, ctype, argtype, &bp);
	cqlfdw_bind_encode(what, i, &bp, d, out);
}

/*
 * bind_params
 *		The values of the bind markers, from the arguments after the
 *		statement (the VARIADIC "any" part, or an explicit VARIADIC array).
 *		Their number must match the markers; a NULL is refused, since a CQL
 *		SELECT cannot match a null (a marker compared with it would select
 *		nothing, and Cassandra refuses null clustering bounds outright).
 */
static cql_value_ref *
bind_params(CqlQueryState *st, FunctionCallInfo fcinfo)
{
	cql_prepared *p = st->prep;
	cql_value_ref *values = palloc0(sizeof(cql_value_ref) * Max(p->nbind, 1));
	Datum	   *args = NULL;
	Oid		   *types = NULL;
	bool	   *nulls = NULL;
	int			nargs = 0;

	if (PG_NARGS() > 2)
	{
		nargs = extract_variadic_args(fcinfo, 2, true, &args, &types, &nulls);
		if (nargs < 0)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("the VARIADIC parameter array of cql_query must not be null"),
					 errhint("Pass an array (possibly empty), or omit the parameters.")));
	}
	if (nargs != p->nbind)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("wrong number of parameters for the CQL statement"),
				 errdetail("Bind markers in the statement: %d; parameters given: %d.",
						   p->nbind, nargs),
				 errhint("Pass one value after the statement for each ? or :name marker, in order.")));
	for (int i = 0; i < nargs; i++)
	{
		cql_buf		b;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("parameter $%d of the CQL statement is null", i + 1),
					 errdetail("Cassandra type %s, marker \"%s\".",
							   cqlfdw_cql_type_string(p->bind[i].type),
							   p->bind[i].name ? p->bind[i].name : "?"),
					 errhint("CQL cannot compare with null: leave the condition out of the statement, or pass a value.")));
		cql_buf_init(&b, &cqlfdw_palloc_allocator);
		cqlfdw_bind_any("parameter", i + 1, p->bind[i].type, args[i], types[i], &b);
		values[i].p = b.data;
		values[i].n = (int32_t) b.len;
	}
	return values;
}

/*
 * refuse_non_select
 *		cql_query is for statements that return rows; anything else (a
 *		write, a schema change, USE) belongs to cql_execute.  Raised before
 *		execution when the prepared statement has no result columns, so a
 *		write is never applied by mistake.
 */
static void
refuse_non_select(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
			 errmsg("CQL statement does not return rows"),
			 errdetail("cql_query() and cql_query_records() run statements that return rows, such as SELECT."),
			 errhint("Use cql_execute() for INSERT, UPDATE, DELETE, BATCH and schema changes.")));
}

/*
 * setup_jsonb
 *		The jsonb form: each result column read as its default PostgreSQL
 *		type and turned into JSON by to_jsonb, so that a row is the same
 *		object to_jsonb() gives for the row of a foreign table with IMPORT
 *		FOREIGN SCHEMA's types; the keys are the result column names.
 */
static void
setup_jsonb(CqlQueryState *st)
{
	cql_prepared *p = st->prep;

	st->keys = palloc(sizeof(char *) * Max(st->ncols, 1));
	st->tojsonb = palloc0(sizeof(FmgrInfo) * Max(st->ncols, 1));
	for (int i = 0; i < st->ncols; i++)
	{
		const char *name = p->cols[i].name ? p->cols[i].name : "";
		Oid			typid;
		int32		typmod;

		default_type(p->cols[i].type, &typid, &typmod);
		if (!cqlfdw_conv_init(&st->convs[i], p->cols[i].type, typid, typmod))
			elog(ERROR, "no default mapping for Cassandra type %s",
				 cqlfdw_cql_type_string(p->cols[i].type));
		st->keys[i] = pg_any_to_server(name, strlen(name), PG_UTF8);

		/* to_jsonb finds its argument's type in the call expression */
		fmgr_info(F_TO_JSONB, &st->tojsonb[i]);
		fmgr_info_set_expr((Node *) makeFuncExpr(F_TO_JSONB, JSONBOID,
												 list_make1(makeNullConst(typid, typmod, InvalidOid)),
												 InvalidOid, InvalidOid,
												 COERCE_EXPLICIT_CALL),
						   &st->tojsonb[i]);
	}
}

/*
 * setup_records
 *		The records form: result columns matched to the column definition
 *		list by position, each converted to its declared type as a foreign
 *		table column of that type would be.  A count or type mismatch is
 *		reported before any row is read.
 */
static void
setup_records(CqlQueryState *st, TupleDesc tupdesc)
{
	cql_prepared *p = st->prep;

	if (tupdesc->natts != st->ncols)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg_plural("CQL result has %d column, but the column definition list has %d",
							   "CQL result has %d columns, but the column definition list has %d",
							   st->ncols, st->ncols, tupdesc->natts),
				 errhint("Declare one column for each result column of the SELECT, in order.")));
	for (int i = 0; i < st->ncols; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (!cqlfdw_conv_init(&st->convs[i], p->cols[i].type, att->atttypid,
							  att->atttypmod))
		{
			Oid			typid;
			int32		typmod;

			default_type(p->cols[i].type, &typid, &typmod);
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d (\"%s\") of the CQL result has Cassandra type %s, which cannot be read as %s",
							i + 1, p->cols[i].name, cqlfdw_cql_type_string(p->cols[i].type),
							format_type_with_typemod(att->atttypid, att->atttypmod)),
					 errhint("Declare column \"%s\" with a type that holds it, such as %s (the default mapping); jsonb and text hold any Cassandra type.",
							 NameStr(att->attname), format_type_with_typemod(typid, typmod))));
		}
	}
}

/*
 * emit_page
 *		Convert the rows of st->page and append them to the tuplestore.
 *		Each row is built in rowcxt, which is reset after the tuplestore
 *		has copied it.
 */
static void
emit_page(CqlQueryState *st, ReturnSetInfo *rsinfo, MemoryContext rowcxt)
{
	int			ncols = st->ncols;
	int			nout = st->records ? ncols : 1;
	Datum	   *values = palloc(sizeof(Datum) * Max(nout, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(nout, 1));
	ErrorContextCallback errcb;

	errcb.callback = query_error_callback;
	errcb.arg = st;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	for (int r = 0; r < st->page.rows_count; r++)
	{
		const cql_elem *cells = &st->page.cells[(size_t) r * ncols];
		MemoryContext old = MemoryContextSwitchTo(rowcxt);

		if (st->records)
		{
			for (int c = 0; c < ncols; c++)
			{
				st->error_col = c;
				values[c] = cqlfdw_conv_read(&st->convs[c], cells[c].p, cells[c].n,
											 &nulls[c]);
			}
		}
		else
		{
			JsonbParseState *ps = NULL;
			JsonbValue *obj;

			pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
			for (int c = 0; c < ncols; c++)
			{
				JsonbValue	k;
				JsonbValue	v;
				bool		isnull;
				Datum		d;

				st->error_col = c;
				k.type = jbvString;
				k.val.string.val = st->keys[c];
				k.val.string.len = strlen(st->keys[c]);
				pushJsonbValue(&ps, WJB_KEY, &k);
				d = cqlfdw_conv_read(&st->convs[c], cells[c].p, cells[c].n, &isnull);
				if (isnull)
					v.type = jbvNull;
				else
				{
					Jsonb	   *j = DatumGetJsonbP(FunctionCall1(&st->tojsonb[c], d));

					v.type = jbvBinary;
					v.val.binary.data = &j->root;
					v.val.binary.len = VARSIZE(j) - VARHDRSZ;
				}
				pushJsonbValue(&ps, WJB_VALUE, &v);
			}
			obj = pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
			values[0] = JsonbPGetDatum(JsonbValueToJsonb(obj));
			nulls[0] = false;
		}
		st->error_col = -1;
		MemoryContextSwitchTo(old);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextReset(rowcxt);
	}
	error_context_stack = errcb.previous;
	pfree(values);
	pfree(nulls);
}

/*
 * send_page
 *		Request the page that paging state (state, len) designates (the
 *		first page: NULL) on st->conn; the request is left in st->req.
 *		While every stream of the connection is in use the send waits.
 */
static cql_status
send_page(CqlQueryState *st, cql_value_ref *values, const uint8_t *state,
		  int32 len, cql_error *err)
{
	cql_query_params params;
	cql_status	s;

	cql_query_params_init(&params);
	params.consistency = st->remote.opts.consistency;
	params.page_size = st->remote.opts.fetch_size;
	params.paging_state = state;
	params.paging_state_len = len;
	params.nvalues = st->prep->nbind;
	params.values = values;

	st->req = NULL;
	do
		s = cql_send_execute(st->conn, st->prep, &params, &st->req, err);
	while (cqlfdw_retry_busy(st->conn, &s, err));
	if (s != CQL_OK)
		st->req = NULL;
	return s;
}

/*
 * fetch_all
 *		Execute the statement page by page and emit every row.
 *
 * One page is held at a time; its paging state asks for the next, which
 * is requested before the rows of the page are converted, so that the
 * node reads it meanwhile (as a scan prefetches).  A failed page is
 * retried by the library's policy (a read is idempotent), on the next
 * host when the policy says so: the statement is prepared there and the
 * same page requested again from its paging state, so no row is read
 * twice or skipped.  Between pages a pending cancel is processed.
 */
static void
fetch_all(CqlQueryState *st, ReturnSetInfo *rsinfo, cql_value_ref *values,
		  MemoryContext cxt)
{
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "cql_query row",
												 ALLOCSET_DEFAULT_SIZES);
	uint8_t    *state = NULL;	/* paging state of the page in flight */
	int32		state_len = 0;
	CqlRetry	rt;
	cql_error	err;
	cql_status	s;

	cqlfdw_retry_start(&rt);
	cql_error_clear(&err);
	s = send_page(st, values, NULL, 0, &err);
	for (;;)
	{
		bool		more;

		if (s == CQL_OK)
		{
			memset(&st->page, 0, sizeof(st->page));
			s = cqlfdw_await(st->conn, st->req, &st->page, &err);
			cql_request_free(st->req);
			st->req = NULL;
			st->have_page = (s == CQL_OK);
		}
		if (s != CQL_OK)
		{
			cql_retry_decision d = cqlfdw_remote_retry(&st->remote, &rt, st->conn,
													   s, &err, true);

			if (d == CQL_RETRY_NO)
				query_fail(st, st->conn, s, &err);
			if (d == CQL_RETRY_NEXT_HOST || cql_conn_status(st->conn) != CQL_OK)
			{
				st->conn = cqlfdw_remote_conn_for_token(&st->remote, &rt, NULL);
				st->prep = prepare_on(st, st->conn);
			}
			cql_error_clear(&err);
			s = send_page(st, values, state, state_len, &err);
			continue;
		}

		if (st->page.kind != CQL_RESULT_ROWS)
			refuse_non_select();
		/* the columns the conversions were set up for, on every page */
		cqlfdw_check_rows(&st->page, st->ncols, st->convs, st->ncols,
						  "cql_query", st->shown);

		/* the next page in flight while this one is converted */
		more = cql_result_has_more_pages(&st->page);
		if (more)
		{
			if (state)
				pfree(state);
			state_len = st->page.meta.paging_state_len;
			state = MemoryContextAlloc(cxt, Max(state_len, 1));
			memcpy(state, st->page.meta.paging_state, state_len);
			cqlfdw_retry_start(&rt);
			cql_error_clear(&err);
			s = send_page(st, values, state, state_len, &err);
		}
		emit_page(st, rsinfo, rowcxt);
		cql_result_free(&st->page);
		st->have_page = false;
		if (!more)
			break;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * run_query
 *		The common body of both functions: check the arguments and the
 *		privileges, open the server as the current user, prepare, bind,
 *		set up the conversions of the result and fetch it into the
 *		materialize-mode result of fcinfo.
 */
static void
run_query(FunctionCallInfo fcinfo, bool records)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ForeignServer *server;
	CqlQueryState *st;
	MemoryContext cxt;
	MemoryContext old;
	MemoryContextCallback *cb;
	cql_value_ref *values;
	TupleDesc	tupdesc = NULL;
	cql_error	err;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("server name and CQL statement of cql_query must not be null")));
	if (records &&
		get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("function returning record called in context that cannot accept type record"),
				 errhint("Call cql_query_records in FROM with a column definition list, e.g. FROM cql_query_records(...) AS t(k int, v text), or use cql_query for jsonb rows.")));
	server = cqlfdw_server_for_cql(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	InitMaterializedSRF(fcinfo, records ? 0 : MAT_SRF_USE_EXPECTED_DESC);

	/* everything of this call, released with it (also after an error) */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "cql_query",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	st = palloc0(sizeof(CqlQueryState));
	st->cql = text_to_cstring(PG_GETARG_TEXT_PP(1));
	st->records = records;
	st->error_col = -1;
	cb = palloc0(sizeof(MemoryContextCallback));
	cb->func = release_query;
	cb->arg = st;
	MemoryContextRegisterResetCallback(cxt, cb);

	/* the statement as error contexts of the remote layer show it */
	cql_error_clear(&err);
	st->shown = cqlfdw_redact_cql(st->cql, &err);
	cqlfdw_remote_open_server(&st->remote, server, GetUserId(), st->shown);
	PG_TRY();
	{
		st->conn = cqlfdw_remote_control(&st->remote);
		st->prep = prepare_on(st, st->conn);
		st->ncols = st->prep->ncols;
		if (st->ncols <= 0)
			refuse_non_select();
		values = bind_params(st, fcinfo);
		st->convs = palloc0(sizeof(CqlConv) * st->ncols);
		if (records)
			setup_records(st, rsinfo->setDesc);
		else
			setup_jsonb(st);
		fetch_all(st, rsinfo, values, cxt);
	}
	PG_FINALLY();
	{
		/* also when the error is caught, e.g. in a PL/pgSQL block */
		cqlfdw_remote_release(&st->remote);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * cql_query(server_name text, cql text [, VARIADIC params "any"])
 *		returns setof jsonb
 *		The rows of a CQL SELECT, one jsonb object per row: keys are the
 *		result column names, values the JSON form of each column read as
 *		its default PostgreSQL type.
 */
Datum
cqlfdw_query_jsonb(PG_FUNCTION_ARGS)
{
	run_query(fcinfo, false);
	return (Datum) 0;
}

/*
 * cql_query_records(server_name text, cql text [, VARIADIC params "any"])
 *		returns setof record
 *		The rows of a CQL SELECT as records of the caller's column
 *		definition list, matched by position.
 */
Datum
cqlfdw_query_records(PG_FUNCTION_ARGS)
{
	run_query(fcinfo, true);
	return (Datum) 0;
}

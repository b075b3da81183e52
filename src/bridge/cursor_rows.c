/*-------------------------------------------------------------------------
 *
 * cursor_rows.c
 *	  cql_bridge_cursor_rows(): the next rows of an open cursor, as a set
 *	  function that an INSERT ... SELECT reads while it writes, so that
 *	  "cqlbridge apply" loads a table in one pass of its source view while
 *	  committing its progress batch by batch.
 *
 * apply declares one cursor over the source rows ordered by the partition
 * key and runs, batch after batch,
 *
 *	INSERT INTO ft (...) SELECT (r).* FROM
 *		(SELECT cql_bridge_cursor_rows('c', 50000, '{k}', NULL::row_type) r
 *		 OFFSET 0) s;
 *
 * then asks cql_bridge_cursor_last_key() for the partition key of the last
 * row sent, which it records as the point to resume from.  The function is
 * called in the target list (ValuePerCall), so the rows stream: the view is
 * evaluated while the FDW's writes are in flight, as in a plain INSERT ...
 * SELECT, instead of being materialized batch by batch first as a set
 * function in FROM would be.  Rows are taken from the cursor a few hundred
 * at a time into a buffer that is reset at each refill: memory stays
 * bounded whatever the batch size.
 *
 * Only the caller's own cursors are reachable (they are the session's
 * portals), so the function gives no access the caller did not have.
 *
 * layer: extension (compiled into cql_fdw.so; nothing of src/bridge/cli)
 *
 * IDENTIFICATION
 *	  src/bridge/cursor_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "tcop/dest.h"
#include "tcop/pquery.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/portal.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(cql_bridge_cursor_rows);
PG_FUNCTION_INFO_V1(cql_bridge_cursor_last_key);

/* rows taken from the cursor per refill of the buffer */
#define CURSOR_ROWS_REFILL 256

/*
 * A DestReceiver that keeps the fetched rows as heap tuples in the
 * buffer's memory context.
 */
typedef struct RowBuffer
{
	DestReceiver pub;
	MemoryContext cxt;
	HeapTuple  *rows;
	int			nrows;
	int			next;			/* the next row to return */
} RowBuffer;

/* the state of one call series (one batch) */
typedef struct CursorRows
{
	char	   *portal_name;
	TupleDesc	desc;			/* the cursor's rows (a copy) */
	int64		left;			/* rows the batch may still return */
	TupleDesc	rettupdesc;		/* the row type the caller asked for */
	int			nkey;
	AttrNumber *key;			/* key columns in the cursor's rows */
	RowBuffer	buf;
	HeapTuple	last;			/* the last row returned, in buf.cxt */
} CursorRows;

/* The key of the last row of the last completed batch, in TopMemoryContext. */
static int	last_nkey = 0;
static char **last_key = NULL;

/*
 * rowbuf_receive
 *		DestReceiver callback: copy one fetched row into the buffer's memory
 *		context.
 */
static bool
rowbuf_receive(TupleTableSlot *slot, DestReceiver *self)
{
	RowBuffer  *b = (RowBuffer *) self;
	MemoryContext old = MemoryContextSwitchTo(b->cxt);

	b->rows[b->nrows++] = ExecCopySlotHeapTuple(slot);
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * rowbuf_startup
 *		DestReceiver callback: nothing to set up (refill() readies the buffer
 *		before each fetch).
 */
static void
rowbuf_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

/*
 * rowbuf_shutdown
 *		DestReceiver callback: nothing to finish.
 */
static void
rowbuf_shutdown(DestReceiver *self)
{
}

/*
 * rowbuf_destroy
 *		DestReceiver callback: nothing to free here; the rows live in the
 *		buffer's memory context, which refill() resets.
 */
static void
rowbuf_destroy(DestReceiver *self)
{
}

/*
 * find_cursor
 *		The caller's open cursor of that name, which must return rows.
 */
static Portal
find_cursor(const char *name)
{
	Portal		portal = GetPortalByName(name);

	if (!PortalIsValid(portal))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_CURSOR),
				 errmsg("cursor \"%s\" does not exist", name),
				 errhint("Declare the cursor in the same transaction before reading it with cql_bridge_cursor_rows().")));
	if (portal->tupDesc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_STATE),
				 errmsg("cursor \"%s\" does not return rows", name)));
	return portal;
}

/*
 * check_row_type
 *		The cursor's columns must be those of the requested row type, in
 *		number and type: the rows are returned as values of that type.
 */
static void
check_row_type(const char *name, TupleDesc have, TupleDesc want)
{
	int			n = 0;

	for (int i = 0; i < want->natts; i++)
	{
		Form_pg_attribute w = TupleDescAttr(want, i);
		Form_pg_attribute h;

		if (w->attisdropped)
			continue;
		if (n >= have->natts)
			break;
		h = TupleDescAttr(have, n++);
		if (h->atttypid != w->atttypid)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of cursor \"%s\" is of type %s, the row type expects %s",
							n, name, format_type_be(h->atttypid), format_type_be(w->atttypid)),
					 errhint("Declare the cursor over the rows the row type describes.")));
	}
	if (n != have->natts || n != want->natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cursor \"%s\" returns %d columns, the row type has %d",
						name, have->natts, want->natts),
				 errhint("Declare the cursor over the rows the row type describes.")));
}

/*
 * key_columns
 *		Positions in the cursor's rows of the named key columns.
 */
static AttrNumber *
key_columns(const char *name, TupleDesc desc, ArrayType *names, int *nkey)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	AttrNumber *key;

	deconstruct_array(names, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	key = palloc(sizeof(AttrNumber) * Max(n, 1));
	for (int k = 0; k < n; k++)
	{
		char	   *col;

		if (nulls[k])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("key column names must not be null")));
		col = TextDatumGetCString(elems[k]);
		key[k] = InvalidAttrNumber;
		for (int i = 0; i < desc->natts; i++)
			if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), col) == 0)
				key[k] = i + 1;
		if (key[k] == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("cursor \"%s\" has no column \"%s\"", name, col),
					 errhint("Name key columns as the cursor's result names them.")));
	}
	*nkey = n;
	return key;
}

/*
 * remember_last_key
 *		Keep the text of the key columns of 'tuple' for
 *		cql_bridge_cursor_last_key(); NULL when the batch returned nothing.
 */
static void
remember_last_key(CursorRows *st, TupleDesc desc)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	for (int k = 0; k < last_nkey; k++)
		if (last_key[k])
			pfree(last_key[k]);
	if (last_key)
		pfree(last_key);
	last_key = NULL;
	last_nkey = 0;
	if (st->last != NULL)
	{
		/*
		 * The text must read back the same in the session that resumes,
		 * whatever its settings: ISO dates, postgres intervals, floats
		 * that round-trip (as postgres_fdw sends values).
		 */
		int			nest = NewGUCNestLevel();

		(void) set_config_option("datestyle", "ISO", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
		(void) set_config_option("intervalstyle", "postgres", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
		(void) set_config_option("extra_float_digits", "3", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
		last_key = palloc0(sizeof(char *) * Max(st->nkey, 1));
		for (int k = 0; k < st->nkey; k++)
		{
			bool		isnull;
			Datum		d = heap_getattr(st->last, st->key[k], desc, &isnull);
			Oid			out;
			bool		varlena;

			if (isnull)
				continue;
			getTypeOutputInfo(TupleDescAttr(desc, st->key[k] - 1)->atttypid, &out, &varlena);
			last_key[k] = OidOutputFunctionCall(out, d);
		}
		last_nkey = st->nkey;
		AtEOXact_GUC(true, nest);
	}
	MemoryContextSwitchTo(old);
}

/*
 * refill
 *		Take the next rows from the cursor into the buffer (whose previous
 *		rows, the last returned one included, are released).  The cursor is
 *		looked up by name each time: the query may have closed it since.
 */
static void
refill(CursorRows *st)
{
	long		want = (long) Min(st->left, (int64) CURSOR_ROWS_REFILL);
	Portal		portal;

	MemoryContextReset(st->buf.cxt);
	st->last = NULL;
	st->buf.nrows = 0;
	st->buf.next = 0;
	if (want <= 0)
		return;
	portal = find_cursor(st->portal_name);
	PortalRunFetch(portal, FETCH_FORWARD, want, (DestReceiver *) &st->buf);
}

/*
 * cql_bridge_cursor_rows(cursor text, max_rows bigint, key_columns text[],
 *						  row_type anyelement) RETURNS SETOF anyelement
 *		Up to max_rows further rows of the caller's cursor, as values of
 *		row_type's composite type; at the end, the key columns of the last
 *		row are kept for cql_bridge_cursor_last_key().
 */
Datum
cql_bridge_cursor_rows(PG_FUNCTION_ARGS)
{
	FuncCallContext *fctx;
	CursorRows *st;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext old;
		Oid			rowtype = get_fn_expr_argtype(fcinfo->flinfo, 3);
		char	   *name;
		Portal		portal;

		if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("cursor name, row count and key columns must not be null")));
		if (!OidIsValid(rowtype) || !type_is_rowtype(rowtype) || rowtype == RECORDOID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("row_type must be a null value of a named composite type"),
					 errhint("Pass NULL::some_view or NULL::some_type.")));
		fctx = SRF_FIRSTCALL_INIT();
		/* a batch that does not complete leaves no key to resume from */
		st = NULL;
		remember_last_key(&(CursorRows) {0}, NULL);
		old = MemoryContextSwitchTo(fctx->multi_call_memory_ctx);
		name = text_to_cstring(PG_GETARG_TEXT_PP(0));
		portal = find_cursor(name);
		st = palloc0(sizeof(CursorRows));
		st->portal_name = name;
		st->left = PG_GETARG_INT64(1);
		if (st->left < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("row count must not be negative")));
		st->rettupdesc = lookup_rowtype_tupdesc_copy(rowtype, -1);
		check_row_type(name, portal->tupDesc, st->rettupdesc);
		st->desc = CreateTupleDescCopy(portal->tupDesc);
		st->key = key_columns(name, portal->tupDesc, PG_GETARG_ARRAYTYPE_P(2), &st->nkey);
		st->buf.pub.receiveSlot = rowbuf_receive;
		st->buf.pub.rStartup = rowbuf_startup;
		st->buf.pub.rShutdown = rowbuf_shutdown;
		st->buf.pub.rDestroy = rowbuf_destroy;
		st->buf.pub.mydest = DestNone;
		st->buf.rows = palloc(sizeof(HeapTuple) * CURSOR_ROWS_REFILL);
		st->buf.cxt = AllocSetContextCreate(fctx->multi_call_memory_ctx,
											"cql_bridge_cursor_rows buffer",
											ALLOCSET_DEFAULT_SIZES);
		fctx->user_fctx = st;
		MemoryContextSwitchTo(old);
	}
	fctx = SRF_PERCALL_SETUP();
	st = (CursorRows *) fctx->user_fctx;

	if (st->buf.next >= st->buf.nrows && st->left > 0)
	{
		HeapTuple	keep = NULL;

		/* the last row returned so far survives the refill for the key */
		if (st->last != NULL)
			keep = heap_copytuple(st->last);
		refill(st);
		if (st->buf.nrows == 0 && keep != NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(st->buf.cxt);

			st->last = heap_copytuple(keep);
			MemoryContextSwitchTo(old);
		}
		if (keep)
			heap_freetuple(keep);
	}
	if (st->buf.next < st->buf.nrows)
	{
		HeapTuple	row = st->buf.rows[st->buf.next++];

		st->left--;
		st->last = row;
		SRF_RETURN_NEXT(fctx, heap_copy_tuple_as_datum(row, st->rettupdesc));
	}
	remember_last_key(st, st->desc);
	SRF_RETURN_DONE(fctx);
}

/*
 * cql_bridge_cursor_last_key() RETURNS text[]
 *		The key columns, as text, of the last row the last completed
 *		cql_bridge_cursor_rows() call series returned; NULL if it returned
 *		none.
 */
Datum
cql_bridge_cursor_last_key(PG_FUNCTION_ARGS)
{
	Datum	   *elems;
	bool	   *nulls;
	int			dims[1];
	int			lbs[1] = {1};

	if (last_key == NULL)
		PG_RETURN_NULL();
	elems = palloc(sizeof(Datum) * Max(last_nkey, 1));
	nulls = palloc(sizeof(bool) * Max(last_nkey, 1));
	for (int k = 0; k < last_nkey; k++)
	{
		nulls[k] = last_key[k] == NULL;
		elems[k] = nulls[k] ? (Datum) 0 : CStringGetTextDatum(last_key[k]);
	}
	dims[0] = last_nkey;
	PG_RETURN_ARRAYTYPE_P(construct_md_array(elems, nulls, 1, dims, lbs,
											 TEXTOID, -1, false, TYPALIGN_INT));
}

/*-------------------------------------------------------------------------
 *
 * schema_cache.c
 *		Key layout of hand-written foreign tables, read from Cassandra.
 *
 * IMPORT FOREIGN SCHEMA stores each column's key role as column options,
 * so planning needs no round trip.  A foreign table created by hand
 * without them gets its layout from system_schema at first use; the answer
 * is kept per backend until the foreign table's definition changes
 * (relcache invalidation), so repeated planning stays local.
 *
 * IDENTIFICATION
 *		src/fdw/schema_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "connection.h"
#include "cql_conn.h"
#include "cql_fdw.h"
#include "cql_schema.h"

typedef struct LayoutCacheEntry
{
	Oid			relid;			/* hash key */
	int			natts;
	CqlColumnKind *kinds;
	int		   *positions;
	bool	   *desc;
	char	  **types;
	char	  **sai;			/* SAI index names, NULL for none */
	char	  **sim;			/* their similarity functions (vectors) */
	char	  **vals;			/* SAI on a collection's values */
	char	  **keys;			/* SAI on a map's keys */
	char	  **mask;			/* masking functions */
	char	  **ents;			/* SAI on a map's entries */
} LayoutCacheEntry;

static HTAB *LayoutCache = NULL;

/*
 * layout_inval
 *		Relcache invalidation callback: forget the cached layout of relid,
 *		or of every table when relid is InvalidOid.
 */
static void
layout_inval(Datum arg, Oid relid)
{
	LayoutCacheEntry *e;

	if (LayoutCache == NULL)
		return;
	if (!OidIsValid(relid))
	{
		HASH_SEQ_STATUS scan;

		hash_seq_init(&scan, LayoutCache);
		while ((e = hash_seq_search(&scan)) != NULL)
			hash_search(LayoutCache, &e->relid, HASH_REMOVE, NULL);
		return;
	}
	hash_search(LayoutCache, &relid, HASH_REMOVE, NULL);
}

/*
 * apply_entry
 *		Copy a cached layout (kind, key position, clustering order, and the
 *		CQL type where no column option gave one) into t's mapped columns.
 */
static void
apply_entry(CqlFdwTable *t, const LayoutCacheEntry *e)
{
	for (int i = 0; i < t->natts && i < e->natts; i++)
	{
		if (t->cols[i].remote_name == NULL)
			continue;
		t->cols[i].kind = e->kinds[i];
		t->cols[i].position = e->positions[i];
		t->cols[i].desc = e->desc[i];
		if (t->cols[i].cql_type == NULL && e->types[i])
			t->cols[i].cql_type = pstrdup(e->types[i]);
		if (t->cols[i].sai_index == NULL && e->sai[i])
		{
			t->cols[i].sai_index = pstrdup(e->sai[i]);
			if (t->cols[i].sai_similarity == NULL && e->sim[i])
				t->cols[i].sai_similarity = pstrdup(e->sim[i]);
		}
		if (t->cols[i].sai_values_index == NULL && e->vals[i])
			t->cols[i].sai_values_index = pstrdup(e->vals[i]);
		if (t->cols[i].sai_keys_index == NULL && e->keys[i])
			t->cols[i].sai_keys_index = pstrdup(e->keys[i]);
		if (t->cols[i].masked == NULL && e->mask[i])
			t->cols[i].masked = pstrdup(e->mask[i]);
		if (t->cols[i].sai_entries_index == NULL && e->ents[i])
			t->cols[i].sai_entries_index = pstrdup(e->ents[i]);
	}
}

/*
 * cqlfdw_complete_layout
 *		Fill kind/position/order/type of every column from the remote
 *		schema (or the cache), then build the key arrays.
 */
void
cqlfdw_complete_layout(CqlFdwTable *t, Oid relid, UserMapping *user,
					   const CqlFdwOptions *opts)
{
	LayoutCacheEntry *e;
	LayoutCacheEntry filled;
	bool		found;
	CqlConnEntry *conn;
	cql_table_meta *meta = NULL;
	cql_error	err;
	cql_status	st;
	MemoryContext old;
	char	   *relname = get_rel_name(relid);

	if (LayoutCache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(LayoutCacheEntry);
		ctl.hcxt = CacheMemoryContext;
		LayoutCache = hash_create("cql_fdw table layouts", 16, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(layout_inval, (Datum) 0);
	}

	e = hash_search(LayoutCache, &relid, HASH_FIND, NULL);
	if (e && e->natts == t->natts)
	{
		apply_entry(t, e);
		cqlfdw_build_key_arrays(t, relname);
		return;
	}

	conn = cqlfdw_get_connection(user, opts);
	cql_error_clear(&err);
	st = cql_schema_load_table(cql_cluster_control(conn->cluster), t->keyspace,
							   t->table, &cql_malloc_allocator, &meta, &err);
	if (st != CQL_OK)
	{
		if (cql_schema_missing(st, &err))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_TABLE_NOT_FOUND),
					 errmsg("Cassandra table \"%s\".\"%s\" of foreign table \"%s\" does not exist",
							t->keyspace, t->table, relname),
					 errdetail("%s", err.message),
					 errhint("Check the keyspace and table options of the foreign table.")));
		cqlfdw_report(ERROR, st, &err, NULL);
	}

	old = MemoryContextSwitchTo(CacheMemoryContext);
	PG_TRY();
	{
		for (int i = 0; i < t->natts; i++)
		{
			const cql_column_meta *cm;

			if (t->cols[i].remote_name == NULL)
				continue;
			cm = cql_table_meta_column(meta, t->cols[i].remote_name);
			if (cm == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
						 errmsg("column \"%s\" of foreign table \"%s\" does not exist in Cassandra table \"%s\".\"%s\"",
								t->cols[i].remote_name, relname, t->keyspace, t->table),
						 errhint("Use the column option column_name to map it to a Cassandra column.")));
		}

		/*
		 * Fill a private copy and publish it in the hash table only when it
		 * is complete: an out-of-memory error half-way must not leave an
		 * entry with unset pointers for the next lookup to use.
		 */
		filled.natts = t->natts;
		filled.kinds = palloc0(sizeof(CqlColumnKind) * Max(t->natts, 1));
		filled.positions = palloc0(sizeof(int) * Max(t->natts, 1));
		filled.desc = palloc0(sizeof(bool) * Max(t->natts, 1));
		filled.types = palloc0(sizeof(char *) * Max(t->natts, 1));
		filled.sai = palloc0(sizeof(char *) * Max(t->natts, 1));
		filled.sim = palloc0(sizeof(char *) * Max(t->natts, 1));
		filled.vals = palloc0(sizeof(char *) * Max(t->natts, 1));
		filled.keys = palloc0(sizeof(char *) * Max(t->natts, 1));
		filled.mask = palloc0(sizeof(char *) * Max(t->natts, 1));
		filled.ents = palloc0(sizeof(char *) * Max(t->natts, 1));
		for (int i = 0; i < t->natts; i++)
		{
			const cql_column_meta *cm;

			if (t->cols[i].remote_name == NULL)
				continue;
			cm = cql_table_meta_column(meta, t->cols[i].remote_name);
			switch (cm->kind)
			{
				case CQL_COLUMN_PARTITION_KEY:
					filled.kinds[i] = CQLCOL_PARTITION_KEY;
					break;
				case CQL_COLUMN_CLUSTERING:
					filled.kinds[i] = CQLCOL_CLUSTERING;
					break;
				case CQL_COLUMN_STATIC:
					filled.kinds[i] = CQLCOL_STATIC;
					break;
				default:
					filled.kinds[i] = CQLCOL_REGULAR;
					break;
			}
			filled.positions[i] = cm->position;
			filled.desc[i] = (cm->order == CQL_ORDER_DESC);
			filled.types[i] = pstrdup(cm->type_text);
			filled.sai[i] = cm->sai_index ? pstrdup(cm->sai_index) : NULL;
			filled.sim[i] = cm->sai_similarity ? pstrdup(cm->sai_similarity) : NULL;
			filled.vals[i] = cm->sai_values_index ? pstrdup(cm->sai_values_index) : NULL;
			filled.keys[i] = cm->sai_keys_index ? pstrdup(cm->sai_keys_index) : NULL;
			filled.mask[i] = cm->mask ? pstrdup(cm->mask) : NULL;
			filled.ents[i] = cm->sai_entries_index ? pstrdup(cm->sai_entries_index) : NULL;
		}
		e = hash_search(LayoutCache, &relid, HASH_ENTER, &found);
		if (found)
		{
			/* a stale layout of another column count */
			for (int i = 0; i < e->natts; i++)
			{
				if (e->types[i])
					pfree(e->types[i]);
				if (e->sai[i])
					pfree(e->sai[i]);
				if (e->sim[i])
					pfree(e->sim[i]);
				if (e->vals[i])
					pfree(e->vals[i]);
				if (e->keys[i])
					pfree(e->keys[i]);
				if (e->mask[i])
					pfree(e->mask[i]);
				if (e->ents[i])
					pfree(e->ents[i]);
			}
			pfree(e->sai);
			pfree(e->sim);
			pfree(e->vals);
			pfree(e->keys);
			pfree(e->mask);
			pfree(e->ents);
			pfree(e->kinds);
			pfree(e->positions);
			pfree(e->desc);
			pfree(e->types);
		}
		/* keep the hash key; take the filled arrays */
		e->natts = filled.natts;
		e->kinds = filled.kinds;
		e->positions = filled.positions;
		e->desc = filled.desc;
		e->types = filled.types;
		e->sai = filled.sai;
		e->sim = filled.sim;
		e->vals = filled.vals;
		e->keys = filled.keys;
		e->mask = filled.mask;
		e->ents = filled.ents;
	}
	PG_FINALLY();
	{
		MemoryContextSwitchTo(old);
		cql_table_meta_free(meta);
	}
	PG_END_TRY();

	apply_entry(t, e);

	/*
	 * Every key column of the Cassandra table must be mapped, or no scan
	 * could be narrowed and no row could be written.
	 */
	cqlfdw_build_key_arrays(t, relname);
}

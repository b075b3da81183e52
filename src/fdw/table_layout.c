/*-------------------------------------------------------------------------
 *
 * table_layout.c
 *		Which attribute of a foreign table is which remote column, and its
 *		place in the Cassandra primary key.
 *
 * The planner cannot push anything down without knowing the partition key
 * and the clustering columns.  IMPORT FOREIGN SCHEMA records them as column
 * options so planning needs no round trip; a foreign table written by hand
 * without them is completed from the remote schema at first use, and the
 * answer is cached per backend (cqlfdw_complete_layout in schema_cache.c).
 *
 * IDENTIFICATION
 *		src/fdw/table_layout.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_attribute.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "bucket.h"
#include "cql_fdw.h"

/*
 * sort helper: attnums by key position
 */
static CqlFdwTable *sort_table;

/*
 * cmp_position
 *		qsort comparator of attnums by their position in the key, read from
 *		sort_table (qsort passes no context).
 */
static int
cmp_position(const void *a, const void *b)
{
	AttrNumber	x = *(const AttrNumber *) a;
	AttrNumber	y = *(const AttrNumber *) b;

	return sort_table->cols[x - 1].position - sort_table->cols[y - 1].position;
}

/*
 * cqlfdw_build_key_arrays
 *		Fill pk[] and ck[] from the per-column kind/position, and check that
 *		positions are complete (0..n-1 without gaps or duplicates).
 */
void
cqlfdw_build_key_arrays(CqlFdwTable *t, const char *relname)
{
	t->npk = t->nck = 0;
	t->pk = palloc(sizeof(AttrNumber) * Max(t->natts, 1));
	t->ck = palloc(sizeof(AttrNumber) * Max(t->natts, 1));
	for (int i = 0; i < t->natts; i++)
	{
		if (t->cols[i].remote_name == NULL)
			continue;
		if (t->cols[i].kind == CQLCOL_PARTITION_KEY)
			t->pk[t->npk++] = i + 1;
		else if (t->cols[i].kind == CQLCOL_CLUSTERING)
			t->ck[t->nck++] = i + 1;
	}
	sort_table = t;
	qsort(t->pk, t->npk, sizeof(AttrNumber), cmp_position);
	qsort(t->ck, t->nck, sizeof(AttrNumber), cmp_position);
	sort_table = NULL;

	for (int i = 0; i < t->npk; i++)
		if (t->cols[t->pk[i] - 1].position != i)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("foreign table \"%s\" has an incomplete partition key", relname),
					 errdetail("No column has kind 'partition_key' at position %d.", i),
					 errhint("Drop the column options kind/position to let cql_fdw read the key from Cassandra, or re-run IMPORT FOREIGN SCHEMA.")));
	for (int i = 0; i < t->nck; i++)
		if (t->cols[t->ck[i] - 1].position != i)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("foreign table \"%s\" has an incomplete clustering key", relname),
					 errdetail("No column has kind 'clustering' at position %d.", i),
					 errhint("Drop the column options kind/position to let cql_fdw read the key from Cassandra, or re-run IMPORT FOREIGN SCHEMA.")));
}

/*
 * cqlfdw_get_table
 *		Layout of foreign table 'relid' from its options.
 *
 * *complete is set to false when no column carries a 'kind' option: the
 * caller must then complete the layout from the remote schema.
 */
CqlFdwTable *
cqlfdw_get_table(Oid relid, const CqlFdwOptions *opts, bool *complete)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	tupdesc = RelationGetDescr(rel);
	CqlFdwTable *t = palloc0(sizeof(CqlFdwTable));
	bool		any_kind = false;

	t->keyspace = opts->keyspace;
	t->table = opts->table;
	t->natts = tupdesc->natts;
	t->cols = palloc0(sizeof(CqlFdwColumn) * Max(t->natts, 1));

	if (t->keyspace == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("foreign table \"%s\" has no keyspace option",
						RelationGetRelationName(rel)),
				 errhint("Add OPTIONS (keyspace 'name') to the foreign table, or create it with IMPORT FOREIGN SCHEMA.")));

	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		CqlFdwColumn *c = &t->cols[i];
		List	   *options;
		ListCell   *lc;

		if (att->attisdropped)
			continue;
		c->remote_name = pstrdup(NameStr(att->attname));
		c->pgtype = att->atttypid;
		c->pgtypmod = att->atttypmod;
		c->collation = att->attcollation;
		c->kind = CQLCOL_REGULAR;
		c->position = -1;

		options = GetForeignColumnOptions(relid, att->attnum);
		foreach(lc, options)
		{
			DefElem    *def = (DefElem *) lfirst(lc);
			const char *v = defGetString(def);

			if (strcmp(def->defname, "column_name") == 0)
				c->remote_name = pstrdup(v);
			else if (strcmp(def->defname, "kind") == 0)
			{
				any_kind = true;
				if (strcmp(v, "partition_key") == 0)
					c->kind = CQLCOL_PARTITION_KEY;
				else if (strcmp(v, "clustering") == 0)
					c->kind = CQLCOL_CLUSTERING;
				else if (strcmp(v, "static") == 0)
					c->kind = CQLCOL_STATIC;
				else
					c->kind = CQLCOL_REGULAR;
			}
			else if (strcmp(def->defname, "position") == 0)
				c->position = atoi(v);
			else if (strcmp(def->defname, "clustering_order") == 0)
				c->desc = (pg_strcasecmp(v, "desc") == 0);
			else if (strcmp(def->defname, "cql_type") == 0)
				c->cql_type = pstrdup(v);
			else if (strcmp(def->defname, "bucket") == 0)
			{
				const char *why;

				if (!cqlfdw_bucket_parse(v, &c->bucket, &why))
					ereport(ERROR,
							(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
							 errmsg("invalid value for option \"bucket\": \"%s\"", v),
							 errdetail("%s", why)));
			}
			else if (strcmp(def->defname, "bucket_of") == 0)
				c->bucket_of = pstrdup(v);
			else if (strcmp(def->defname, "sai_index") == 0)
				c->sai_index = pstrdup(v);
			else if (strcmp(def->defname, "sai_similarity") == 0)
				c->sai_similarity = pstrdup(v);
			else if (strcmp(def->defname, "sai_values_index") == 0)
				c->sai_values_index = pstrdup(v);
			else if (strcmp(def->defname, "sai_keys_index") == 0)
				c->sai_keys_index = pstrdup(v);
			else if (strcmp(def->defname, "sai_entries_index") == 0)
				c->sai_entries_index = pstrdup(v);
			else if (strcmp(def->defname, "masked") == 0)
				c->masked = pstrdup(v);
			else if (strcmp(def->defname, "writetime_of") == 0 ||
					 strcmp(def->defname, "ttl_of") == 0)
			{
				c->meta = (def->defname[0] == 'w') ? CQLMETA_WRITETIME : CQLMETA_TTL;
				c->meta_of = pstrdup(v);
			}
		}
		/* a metadata column is no remote column (write_metadata.c) */
		if (c->meta != CQLMETA_NONE)
			c->remote_name = NULL;
	}

	*complete = any_kind;
	if (any_kind)
		cqlfdw_build_key_arrays(t, RelationGetRelationName(rel));
	cqlfdw_bucket_resolve(t, relid, RelationGetRelationName(rel));

	table_close(rel, AccessShareLock);
	return t;
}

/*
 * cqlfdw_column_by_remote_name
 *		Attribute number of the column mapped to remote column 'name', or
 *		InvalidAttrNumber.
 */
AttrNumber
cqlfdw_column_by_remote_name(const CqlFdwTable *t, const char *name)
{
	for (int i = 0; i < t->natts; i++)
		if (t->cols[i].remote_name && strcmp(t->cols[i].remote_name, name) == 0)
			return i + 1;
	return InvalidAttrNumber;
}

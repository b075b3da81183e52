/*-------------------------------------------------------------------------
 *
 * import.c
 *		IMPORT FOREIGN SCHEMA for cql_fdw.
 *
 * One foreign table per Cassandra table of the keyspace, every column
 * mapped with the default type mapping of convert.c, and the key layout
 * recorded as column options (kind, position, clustering_order, cql_type)
 * so that planning never needs a round trip.  Key columns are declared NOT
 * NULL: Cassandra cannot store a row without them, and the planner may use
 * the fact.
 *
 * IDENTIFICATION
 *		src/fdw/import.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/defrem.h"
#include "foreign/fdwapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"

#include "connection.h"
#include "cql_conn.h"
#include "convert.h"
#include "cql_fdw.h"
#include "cql_schema.h"
#include "import.h"
#include "write_metadata.h"

/*
 * cqlfdw_pg_type_for
 *		The PostgreSQL type (as SQL text) a CQL type maps to by default.
 */
const char *
cqlfdw_pg_type_for(const cql_type *t)
{
	switch (t->id)
	{
		case CQL_TYPE_ASCII:
		case CQL_TYPE_VARCHAR:
			return "text";
		case CQL_TYPE_INT:
			return "integer";
		case CQL_TYPE_BIGINT:
		case CQL_TYPE_COUNTER:
			return "bigint";
		case CQL_TYPE_SMALLINT:
		case CQL_TYPE_TINYINT:
			return "smallint";
		case CQL_TYPE_BOOLEAN:
			return "boolean";
		case CQL_TYPE_FLOAT:
			return "real";
		case CQL_TYPE_DOUBLE:
			return "double precision";
		case CQL_TYPE_DECIMAL:
		case CQL_TYPE_VARINT:
			return "numeric";
		case CQL_TYPE_UUID:
		case CQL_TYPE_TIMEUUID:
			return "uuid";
		case CQL_TYPE_TIMESTAMP:
			return "timestamp with time zone";
		case CQL_TYPE_DATE:
			return "date";
		case CQL_TYPE_TIME:
			return "time without time zone";
		case CQL_TYPE_DURATION:
			return "interval";
		case CQL_TYPE_BLOB:
			return "bytea";
		case CQL_TYPE_INET:
			return "inet";
		case CQL_TYPE_LIST:
		case CQL_TYPE_SET:
		case CQL_TYPE_VECTOR:
			/* vector<float, n>: pgvector's vector(n) if it is installed */
			if (t->id == CQL_TYPE_VECTOR && t->nsub == 1 &&
				t->sub[0]->id == CQL_TYPE_FLOAT && t->dimension >= 1)
			{
				Oid			vt = cqlfdw_pgvector_type();

				if (OidIsValid(vt))
					return format_type_extended(vt, t->dimension,
												FORMAT_TYPE_TYPEMOD_GIVEN |
												FORMAT_TYPE_FORCE_QUALIFY);
			}
			if (t->nsub == 1)
			{
				const cql_type *e = t->sub[0];

				if (e->id != CQL_TYPE_LIST && e->id != CQL_TYPE_SET &&
					e->id != CQL_TYPE_MAP && e->id != CQL_TYPE_VECTOR &&
					e->id != CQL_TYPE_UDT && e->id != CQL_TYPE_TUPLE &&
					e->id != CQL_TYPE_CUSTOM)
					return psprintf("%s[]", cqlfdw_pg_type_for(e));
			}
			return "jsonb";
		case CQL_TYPE_MAP:
		case CQL_TYPE_TUPLE:
		case CQL_TYPE_UDT:
			return "jsonb";
		case CQL_TYPE_CUSTOM:
			return "text";
	}
	return "text";
}

/*
 * append_option
 *		Append "name 'value'" to an OPTIONS list being built, after a comma
 *		unless it is the first.
 */
static void
append_option(StringInfo buf, bool *first, const char *name, const char *value)
{
	appendStringInfo(buf, "%s%s %s", *first ? "" : ", ", name,
					 quote_literal_cstr(value));
	*first = false;
}

/*
 * table_definition
 *		The CREATE FOREIGN TABLE command for one Cassandra table.
 *
 * Every column gets its default type (cqlfdw_pg_type_for) and the column
 * options of the key layout: column_name, kind, position (key columns),
 * clustering_order (clustering columns) and cql_type; key columns are NOT
 * NULL.  A column type the library does not know is an error.  With
 * write_meta (IMPORT option write_metadata) every regular or static column
 * of a single-cell type, not a counter, also gets two write metadata
 * columns (write_metadata.c): "<col>_writetime" timestamptz and
 * "<col>_ttl" integer.
 */
static char *
table_definition(ImportForeignSchemaStmt *stmt, const cql_table_meta *meta,
				 bool write_meta)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "CREATE FOREIGN TABLE %s.%s (\n",
					 quote_identifier(stmt->local_schema),
					 quote_identifier(meta->name));
	for (int i = 0; i < meta->ncolumns; i++)
	{
		const cql_column_meta *c = &meta->columns[i];
		bool		first = true;
		const char *pgtype;

		if (c->type == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("cannot import column \"%s\" of Cassandra table \"%s\".\"%s\": type %s is not supported",
							c->name, meta->keyspace, meta->name, c->type_text)));
		pgtype = cqlfdw_pg_type_for(c->type);
		if (i > 0)
			appendStringInfoString(&buf, ",\n");
		appendStringInfo(&buf, "  %s %s OPTIONS (", quote_identifier(c->name), pgtype);
		append_option(&buf, &first, "column_name", c->name);
		append_option(&buf, &first, "kind", cql_column_kind_name(c->kind));
		if (c->kind == CQL_COLUMN_PARTITION_KEY || c->kind == CQL_COLUMN_CLUSTERING)
			append_option(&buf, &first, "position", psprintf("%d", c->position));
		if (c->kind == CQL_COLUMN_CLUSTERING)
			append_option(&buf, &first, "clustering_order",
						  c->order == CQL_ORDER_DESC ? "desc" : "asc");
		append_option(&buf, &first, "cql_type", c->type_text);
		if (c->sai_index)
			append_option(&buf, &first, "sai_index", c->sai_index);
		if (c->sai_similarity)
			append_option(&buf, &first, "sai_similarity", c->sai_similarity);
		if (c->sai_values_index)
			append_option(&buf, &first, "sai_values_index", c->sai_values_index);
		if (c->sai_keys_index)
			append_option(&buf, &first, "sai_keys_index", c->sai_keys_index);
		if (c->sai_entries_index)
			append_option(&buf, &first, "sai_entries_index", c->sai_entries_index);
		if (c->mask)
			append_option(&buf, &first, "masked", c->mask);
		appendStringInfoChar(&buf, ')');
		if (c->kind == CQL_COLUMN_PARTITION_KEY || c->kind == CQL_COLUMN_CLUSTERING)
			appendStringInfoString(&buf, " NOT NULL");
	}
	for (int i = 0; write_meta && i < meta->ncolumns; i++)
	{
		const cql_column_meta *c = &meta->columns[i];

		if ((c->kind != CQL_COLUMN_REGULAR && c->kind != CQL_COLUMN_STATIC) ||
			cqlfdw_meta_is_multicell(c->type_text) ||
			pg_strcasecmp(c->type_text, "counter") == 0)
			continue;
		appendStringInfo(&buf, ",\n  %s timestamptz OPTIONS (writetime_of %s)",
						 quote_identifier(psprintf("%s_writetime", c->name)),
						 quote_literal_cstr(c->name));
		appendStringInfo(&buf, ",\n  %s integer OPTIONS (ttl_of %s)",
						 quote_identifier(psprintf("%s_ttl", c->name)),
						 quote_literal_cstr(c->name));
	}
	appendStringInfoChar(&buf, '\n');
	appendStringInfo(&buf, ") SERVER %s OPTIONS (keyspace %s, \"table\" %s)",
					 quote_identifier(stmt->server_name),
					 quote_literal_cstr(meta->keyspace),
					 quote_literal_cstr(meta->name));
	return buf.data;
}

/*
 * table_wanted
 *		Is the Cassandra table selected by LIMIT TO / EXCEPT?  Names compare
 *		case-sensitively, as Cassandra's do.
 */
static bool
table_wanted(ImportForeignSchemaStmt *stmt, const char *name)
{
	ListCell   *lc;

	if (stmt->list_type == FDW_IMPORT_SCHEMA_ALL)
		return true;
	foreach(lc, stmt->table_list)
	{
		RangeVar   *rv = (RangeVar *) lfirst(lc);

		if (strcmp(rv->relname, name) == 0)
			return stmt->list_type == FDW_IMPORT_SCHEMA_LIMIT_TO;
	}
	return stmt->list_type == FDW_IMPORT_SCHEMA_EXCEPT;
}


/*
 * import_table
 *		The CREATE FOREIGN TABLE command of one table of the keyspace; its
 *		metadata is freed on every path.  (A function of its own rather than
 *		a PG_TRY nested in the caller's: nested ones shadow each other's
 *		locals.)
 */
static char *
import_table(cql_conn *conn, ImportForeignSchemaStmt *stmt, const char *name,
			 bool write_meta)
{
	cql_table_meta *meta = NULL;
	cql_error	err;
	cql_status	st;
	char	   *command = NULL;

	cql_error_clear(&err);
	st = cql_schema_load_table(conn, stmt->remote_schema, name,
							   &cql_malloc_allocator, &meta, &err);
	if (st != CQL_OK)
		cqlfdw_report(ERROR, st, &err, NULL);
	PG_TRY();
	{
		command = table_definition(stmt, meta, write_meta);
	}
	PG_FINALLY();
	{
		cql_table_meta_free(meta);
	}
	PG_END_TRY();
	return command;
}
/*
 * cqlImportForeignSchema
 *		ImportForeignSchema callback: the remote schema is a keyspace; one
 *		CREATE FOREIGN TABLE per selected table.
 *
 * The tables are read from Cassandra's schema over the current user's
 * mapping, on the control connection.  The statement's one option,
 * write_metadata (boolean, default false), adds write time and TTL columns
 * (table_definition); another is an error.  A keyspace that does not exist
 * is an error.  The library's schema objects
 * (malloc'd) are freed also when an error is raised.
 */
List *
cqlImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	UserMapping *user = GetUserMapping(GetUserId(), serverOid);
	CqlFdwOptions opts;
	CqlConnEntry *entry;
	cql_conn   *conn;
	cql_error	err;
	cql_status	st;
	bool		exists = false;
	char	  **names = NULL;
	int			n = 0;
	List	   *commands = NIL;
	ListCell   *lc;
	bool		write_meta = false;

	foreach(lc, stmt->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "write_metadata") == 0)
			write_meta = defGetBoolean(def);
		else
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("invalid option \"%s\"", def->defname),
					 errhint("The one option of IMPORT FOREIGN SCHEMA of cql_fdw is write_metadata (a boolean).")));
	}

	cqlfdw_get_options(serverOid, GetUserId(), InvalidOid, &opts);
	entry = cqlfdw_get_connection(user, &opts);
	conn = cql_cluster_control(entry->cluster);

	cql_error_clear(&err);
	st = cql_schema_keyspace_exists(conn, stmt->remote_schema, &exists, &err);
	if (st != CQL_OK)
		cqlfdw_report(ERROR, st, &err, NULL);
	if (!exists)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
				 errmsg("keyspace \"%s\" does not exist on server \"%s\"",
						stmt->remote_schema, stmt->server_name),
				 errhint("Keyspace names are case-sensitive; create it with cql_execute() first.")));

	st = cql_schema_list_tables(conn, stmt->remote_schema, &cql_malloc_allocator,
								&names, &n, &err);
	if (st != CQL_OK)
		cqlfdw_report(ERROR, st, &err, NULL);

	PG_TRY();
	{
		for (int i = 0; i < n; i++)
		{
			if (!table_wanted(stmt, names[i]))
				continue;
			commands = lappend(commands, import_table(conn, stmt, names[i], write_meta));
		}
	}
	PG_FINALLY();
	{
		cql_schema_names_free(names, n, &cql_malloc_allocator);
	}
	PG_END_TRY();

	return commands;
}

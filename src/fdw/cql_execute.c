/*-------------------------------------------------------------------------
 *
 * cql_execute.c
 *		cql_execute(): one ad-hoc CQL statement on a foreign server, and
 *		what it shares with cql_query() (cql_query.c): the check of the
 *		server named by the caller and the redaction of passwords in the
 *		CQL an error shows.
 *
 * Both run free-form CQL with the Cassandra credentials of the current
 * user's mapping, through the statement handle of remote.c; connection.c
 * below them keeps the cache of cluster handles and maps library errors to
 * SQLSTATEs.
 *
 * IDENTIFICATION
 *		src/fdw/cql_execute.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "foreign/foreign.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "compat.h"
#include "connection.h"
#include "cql_cluster.h"
#include "cql_conn.h"
#include "cql_execute.h"
#include "cql_fdw.h"
#include "cql_schema.h"
#include "remote.h"

PG_FUNCTION_INFO_V1(cqlfdw_execute_sql);

/*
 * cqlfdw_redact_cql
 *		The statement as it may be shown in an error: when it mentions a
 *		password (CREATE/ALTER ROLE or USER ... PASSWORD), every string
 *		literal ('...' and $$...$$) is replaced by '***', and the server's
 *		message, which may quote the statement (Cassandra's syntax errors
 *		do), has every occurrence of a literal's text replaced as well, so
 *		that the secret reaches neither the client nor the server log.
 *		Returns cql itself when nothing needs hiding.  Also used by
 *		cql_query() (cql_query.c), whose CQL is as free-form.
 */
const char *
cqlfdw_redact_cql(const char *cql, cql_error *err)
{
	StringInfoData buf;
	List	   *secrets = NIL;
	ListCell   *lc;
	const char *p;

	for (p = cql; *p; p++)
		if (pg_strncasecmp(p, "password", 8) == 0)
			break;
	if (*p == '\0')
		return cql;

	initStringInfo(&buf);
	p = cql;
	while (*p)
	{
		const char *start;
		const char *end;

		if (*p == '\'')
		{
			/* '' inside a literal is an escaped quote */
			start = ++p;
			for (; *p; p++)
				if (*p == '\'' && p[1] != '\'')
					break;
				else if (*p == '\'')
					p++;
			end = p;
			if (*p)
				p++;
		}
		else if (p[0] == '$' && p[1] == '$')
		{
			start = p + 2;
			end = strstr(start, "$$");
			if (end == NULL)
				end = start + strlen(start);
			p = *end ? end + 2 : end;
		}
		else
		{
			appendStringInfoChar(&buf, *p++);
			continue;
		}
		appendStringInfoString(&buf, "'***'");
		if (end > start)
			secrets = lappend(secrets, pnstrdup(start, end - start));
	}

	foreach(lc, secrets)
	{
		const char *secret = lfirst(lc);
		char	   *hit;

		size_t		slen = strlen(secret);

		if (strspn(secret, "*") == slen)
			continue;			/* nothing to hide, and would match forever */
		while ((hit = strstr(err->message, secret)) != NULL)
		{
			/* "***" in place; a shorter secret becomes as many stars */
			size_t		keep = Min(slen, 3);

			memset(hit, '*', keep);
			memmove(hit + keep, hit + slen, strlen(hit + slen) + 1);
		}
	}
	return buf.data;
}

/*
 * cqlfdw_server_is_ours
 *		Whether server belongs to a wrapper with cql_fdw's handler (any
 *		wrapper created with it, not only the one named cql_fdw).
 */
bool
cqlfdw_server_is_ours(const ForeignServer *server)
{
	return GetForeignDataWrapper(server->fdwid)->fdwhandler ==
		GetForeignDataWrapperByName("cql_fdw", false)->fdwhandler;
}

/*
 * cqlfdw_server_for_cql
 *		The cql_fdw server of that name for raw CQL (cql_execute,
 *		cql_query): it must exist and belong to cql_fdw, and the current
 *		user must have USAGE on it.
 */
ForeignServer *
cqlfdw_server_for_cql(const char *servername)
{
	ForeignServer *server = GetForeignServerByName(servername, false);
	AclResult	aclresult;

	if (!cqlfdw_server_is_ours(server))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("server \"%s\" is not a cql_fdw server", servername)));
	aclresult = cqlfdw_server_aclcheck(server->serverid, GetUserId(), ACL_USAGE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_FOREIGN_SERVER, server->servername);
	return server;
}

/*
 * cql_execute(server_name text, cql text) returns void
 *		Run one CQL statement through the current user's mapping.
 *
 * The statement runs with the Cassandra credentials of a user mapping, so
 * the caller needs USAGE on the foreign server, as for dblink and for any
 * foreign table of it; the extension script also revokes EXECUTE from
 * PUBLIC, so a DBA decides who may send arbitrary CQL.
 *
 * Schema changes are followed by a schema-agreement wait in Cassandra's
 * coordinator, so a following statement on the same server sees them.
 */
Datum
cqlfdw_execute_sql(PG_FUNCTION_ARGS)
{
	char	   *servername = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *cql = text_to_cstring(PG_GETARG_TEXT_PP(1));
	ForeignServer *server = cqlfdw_server_for_cql(servername);
	CqlRemote	remote;
	cql_conn   *conn;
	cql_query_params params;
	cql_result	res;
	cql_error	err;
	cql_status	st;

	cqlfdw_remote_open_server(&remote, server, GetUserId(), cql);
	cqlfdw_remote_will_write(&remote);
	PG_TRY();
	{
		conn = cqlfdw_remote_control(&remote);

		cql_query_params_init(&params);
		params.consistency = remote.opts.write_consistency;
		/* for a statement with IF: its Paxos phase */
		params.serial_consistency = remote.opts.serial_consistency;
		memset(&res, 0, sizeof(res));
		cql_error_clear(&err);
		st = cql_query(conn, cql, &params, &res, &err);
		if (st != CQL_OK)
		{
			if (st != CQL_ERR_SERVER)
				cql_cluster_report_failure(remote.entry->cluster, conn, st);
			cqlfdw_report(ERROR, st, &err, cqlfdw_redact_cql(cql, &err));
		}
		if (res.kind == CQL_RESULT_SCHEMA_CHANGE)
		{
			/*
			 * After DDL, wait until every node has the new schema: a write sent
			 * to another node right after CREATE TABLE would otherwise fail,
			 * and let the router see new keyspaces.  Peers the cluster knows
			 * to be down do not count (as in the drivers).
			 */
			cql_result_free(&res);
			st = cql_cluster_await_schema_agreement(remote.entry->cluster, conn,
													remote.opts.request_timeout_ms, &err);
			if (st == CQL_ERR_INTERRUPTED)
				cqlfdw_check_interrupts();
			if (st != CQL_OK)
				cqlfdw_report(ERROR, st, &err, cqlfdw_redact_cql(cql, &err));
			(void) cql_cluster_refresh_keyspaces(remote.entry->cluster, &err);
		}
		else
			cql_result_free(&res);
	}
	PG_FINALLY();
	{
		/* also when the error is caught, e.g. in a PL/pgSQL block */
		cqlfdw_remote_release(&remote);
	}
	PG_END_TRY();
	PG_RETURN_VOID();
}


/*-------------------------------------------------------------------------
 *
 * common.c
 *	  Shared pieces of the cqlbridge program: error exits, allocation, a
 *	  growable string, the libpq connection and statement helpers, and
 *	  file I/O.  The block-format reader is in blocks.c.
 *
 * IDENTIFICATION
 *	  src/bridge/cli/common.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common.h"

/* ------------------------------------------------------------------------
 * Errors and allocation
 * ------------------------------------------------------------------------
 */

void
bridge_fatal(const char *fmt,...)
{
	va_list		ap;

	fflush(stdout);
	fputs("cqlbridge: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(BRIDGE_EXIT_FAILURE);
}

void
bridge_fatal_hint(const char *hint, const char *fmt,...)
{
	va_list		ap;

	fflush(stdout);
	fputs("cqlbridge: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (hint)
		fprintf(stderr, "HINT:  %s\n", hint);
	exit(BRIDGE_EXIT_FAILURE);
}

void *
bridge_malloc(size_t size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
		bridge_fatal("out of memory (%zu bytes)", size);
	return p;
}

char *
bridge_strdup(const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *p = bridge_malloc(n);

	memcpy(p, s, n);
	return p;
}

static char *
bridge_vprintf(const char *fmt, va_list ap)
{
	va_list		ap2;
	int			n;
	char	   *p;
	char		probe[1];

	if (fmt == NULL)			/* never, but sanitizer builds cannot tell */
		fmt = "";
	va_copy(ap2, ap);
	n = vsnprintf(probe, sizeof(probe), fmt, ap2);
	va_end(ap2);
	if (n < 0)
		bridge_fatal("could not format a message");
	p = bridge_malloc((size_t) n + 1);
	vsnprintf(p, (size_t) n + 1, fmt, ap);
	return p;
}

char *
bridge_printf(const char *fmt,...)
{
	va_list		ap;
	char	   *p;

	va_start(ap, fmt);
	p = bridge_vprintf(fmt, ap);
	va_end(ap);
	return p;
}

/* ------------------------------------------------------------------------
 * Growable string
 * ------------------------------------------------------------------------
 */

void
sb_init(StrBuf *sb)
{
	sb->cap = 256;
	sb->len = 0;
	sb->data = bridge_malloc(sb->cap);
	sb->data[0] = '\0';
}

static void
sb_reserve(StrBuf *sb, size_t more)
{
	if (sb->len + more + 1 <= sb->cap)
		return;
	while (sb->len + more + 1 > sb->cap)
		sb->cap *= 2;
	sb->data = realloc(sb->data, sb->cap);
	if (sb->data == NULL)
		bridge_fatal("out of memory (%zu bytes)", sb->cap);
}

void
sb_append(StrBuf *sb, const char *s)
{
	size_t		n = strlen(s);

	sb_reserve(sb, n);
	memcpy(sb->data + sb->len, s, n + 1);
	sb->len += n;
}

void
sb_appendf(StrBuf *sb, const char *fmt,...)
{
	va_list		ap;
	char	   *p;

	va_start(ap, fmt);
	p = bridge_vprintf(fmt, ap);
	va_end(ap);
	sb_append(sb, p);
	free(p);
}

void
sb_free(StrBuf *sb)
{
	free(sb->data);
	sb->data = NULL;
	sb->len = sb->cap = 0;
}

/* ------------------------------------------------------------------------
 * libpq
 * ------------------------------------------------------------------------
 */

/* Notices (e.g. "relation already exists, skipping") are not news. */
static void
quiet_notice_processor(void *arg, const char *message)
{
	(void) arg;
	if (getenv("CQLBRIDGE_NOTICES"))
		fputs(message, stderr);
}

PGconn *
bridge_connect(const BridgeOptions *opts)
{
	const char *keys[6];
	const char *vals[6];
	int			n = 0;
	PGconn	   *conn;

	/* expand_dbname = 1: -d may be a conninfo string or URI, like psql */
	if (opts->host)
	{
		keys[n] = "host";
		vals[n++] = opts->host;
	}
	if (opts->port)
	{
		keys[n] = "port";
		vals[n++] = opts->port;
	}
	if (opts->user)
	{
		keys[n] = "user";
		vals[n++] = opts->user;
	}
	keys[n] = "fallback_application_name";
	vals[n++] = "cqlbridge";
	if (opts->dbname)
	{
		keys[n] = "dbname";
		vals[n++] = opts->dbname;
	}
	keys[n] = NULL;
	vals[n] = NULL;

	conn = PQconnectdbParams(keys, vals, 1);
	if (conn == NULL)
		bridge_fatal("out of memory while connecting");
	if (PQstatus(conn) != CONNECTION_OK)
	{
		char	   *msg = bridge_strdup(PQerrorMessage(conn));
		size_t		len = strlen(msg);

		while (len > 0 && msg[len - 1] == '\n')
			msg[--len] = '\0';
		PQfinish(conn);
		bridge_fatal_hint("Give the database with -d, -h, -p, -U or the PGDATABASE, PGHOST, PGPORT, PGUSER environment variables.",
						  "could not connect to the database: %s", msg);
	}
	PQsetNoticeProcessor(conn, quiet_notice_processor, NULL);
	return conn;
}

PGresult *
bridge_exec(PGconn *conn, const char *what, const char *sql,
			int nparams, const char *const *params)
{
	PGresult   *res;
	ExecStatusType st;

	res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
	st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
	{
		const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
		const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
		const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
		const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
		const char *context = res ? PQresultErrorField(res, PG_DIAG_CONTEXT) : NULL;

		/* a statement cancelled by Ctrl-C: say so, not "failed" */
		bridge_check_interrupt(NULL);
		fflush(stdout);
		fprintf(stderr, "cqlbridge: %s failed: %s", what,
				msg ? msg : PQerrorMessage(conn));
		if (state)
			fprintf(stderr, " (SQLSTATE %s)", state);
		fputc('\n', stderr);
		if (detail)
			fprintf(stderr, "DETAIL:  %s\n", detail);
		if (hint)
			fprintf(stderr, "HINT:  %s\n", hint);
		if (context)
			fprintf(stderr, "CONTEXT:  %s\n", context);
		exit(BRIDGE_EXIT_FAILURE);
	}
	return res;
}

char *
bridge_quote_ident(const char *ident)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "\"");
	for (const char *p = ident; *p; p++)
	{
		char		c[2] = {*p, '\0'};

		if (*p == '"')
			sb_append(&sb, "\"");
		sb_append(&sb, c);
	}
	sb_append(&sb, "\"");
	return sb.data;
}

char *
bridge_quote_literal(const char *s)
{
	StrBuf		sb;
	bool		backslash = strchr(s, '\\') != NULL;

	sb_init(&sb);
	/* E'' form only when needed, so the text stays readable */
	sb_append(&sb, backslash ? "E'" : "'");
	for (const char *p = s; *p; p++)
	{
		char		c[2] = {*p, '\0'};

		if (*p == '\'' || *p == '\\')
			sb_append(&sb, c);
		sb_append(&sb, c);
	}
	sb_append(&sb, "'");
	return sb.data;
}

/* ------------------------------------------------------------------------
 * Files
 * ------------------------------------------------------------------------
 */

char *
bridge_read_file(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	StrBuf		sb;
	char		buf[8192];
	size_t		n;

	if (f == NULL)
		bridge_fatal("could not open \"%s\": %s", path, strerror(errno));
	sb_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
	{
		sb_reserve(&sb, n);
		memcpy(sb.data + sb.len, buf, n);
		sb.len += n;
		sb.data[sb.len] = '\0';
	}
	if (ferror(f))
		bridge_fatal("could not read \"%s\": %s", path, strerror(errno));
	fclose(f);
	if (memchr(sb.data, '\0', sb.len) != NULL)
		bridge_fatal("\"%s\" is not a text file (it contains a NUL byte)", path);
	return sb.data;
}

/* mkdir -p of the directory part of path */
static void
make_parent_dirs(const char *path)
{
	char	   *copy = bridge_strdup(path);

	for (char *p = copy + 1; *p; p++)
	{
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0777) != 0 && errno != EEXIST)
			bridge_fatal("could not create directory \"%s\": %s", copy, strerror(errno));
		*p = '/';
	}
	free(copy);
}

void
bridge_write_file(const char *path, const char *contents)
{
	char	   *tmp = bridge_printf("%s.tmp", path);
	FILE	   *f;
	size_t		len = strlen(contents);

	make_parent_dirs(path);
	/* write then rename: a reader never sees half a file */
	f = fopen(tmp, "wb");
	if (f == NULL)
		bridge_fatal("could not create \"%s\": %s", tmp, strerror(errno));
	if (fwrite(contents, 1, len, f) != len || fclose(f) != 0)
		bridge_fatal("could not write \"%s\": %s", tmp, strerror(errno));
	if (rename(tmp, path) != 0)
		bridge_fatal("could not rename \"%s\" to \"%s\": %s", tmp, path, strerror(errno));
	free(tmp);
}

char *
bridge_path(const char *dir, const char *name)
{
	size_t		n = strlen(dir);

	if (n > 0 && dir[n - 1] == '/')
		return bridge_printf("%s%s", dir, name);
	return bridge_printf("%s/%s", dir, name);
}

void
bridge_exec_script(PGconn *conn, const char *what, const char *sql)
{
	PGresult   *res;
	bool		ok = true;

	if (!PQsendQuery(conn, sql))
		bridge_fatal("%s failed: %s", what, PQerrorMessage(conn));
	while ((res = PQgetResult(conn)) != NULL)
	{
		ExecStatusType st = PQresultStatus(res);

		if (ok && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK &&
			st != PGRES_EMPTY_QUERY)
		{
			const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
			const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
			const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
			const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);
			const char *context = PQresultErrorField(res, PG_DIAG_CONTEXT);
			const char *pos = PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION);

			bridge_check_interrupt(NULL);
			fflush(stdout);
			fprintf(stderr, "cqlbridge: %s failed: %s", what,
					msg ? msg : PQerrorMessage(conn));
			if (state)
				fprintf(stderr, " (SQLSTATE %s)", state);
			fputc('\n', stderr);
			if (pos)
			{
				/* turn the character position into a line number */
				long		p = atol(pos);
				int			line = 1;

				for (long i = 0; i < p - 1 && sql[i]; i++)
					if (sql[i] == '\n')
						line++;
				fprintf(stderr, "LINE:  %d of the script\n", line);
			}
			if (detail)
				fprintf(stderr, "DETAIL:  %s\n", detail);
			if (hint)
				fprintf(stderr, "HINT:  %s\n", hint);
			if (context)
				fprintf(stderr, "CONTEXT:  %s\n", context);
			ok = false;
		}
		PQclear(res);
	}
	if (!ok)
		exit(BRIDGE_EXIT_FAILURE);
}

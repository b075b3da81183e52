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
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

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

/*
 * bridge_write_file
 *		Write a whole file: into a new temporary file of the same directory,
 *		then rename it over path, so a reader never sees half a file.
 *
 * The temporary file is created by mkstemp (O_CREAT | O_EXCL, a random
 * name): a symbolic link planted under a predictable name ("path.tmp")
 * cannot redirect the write to another file.  rename() replaces path
 * itself, never the target of a link at path.  The file gets the mode a
 * plain creation would (0666 minus the umask).
 */
void
bridge_write_file(const char *path, const char *contents)
{
	const char *slash = strrchr(path, '/');
	char	   *tmp;
	size_t		len = strlen(contents);
	size_t		done = 0;
	mode_t		mask;
	int			fd;

	make_parent_dirs(path);
	if (slash)
		tmp = bridge_printf("%.*s/.%s.XXXXXX", (int) (slash - path), path, slash + 1);
	else
		tmp = bridge_printf(".%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		bridge_fatal("could not create a temporary file for \"%s\": %s", path, strerror(errno));
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0)
	{
		unlink(tmp);
		bridge_fatal("could not set the mode of \"%s\": %s", tmp, strerror(errno));
	}
	while (done < len)
	{
		ssize_t		n = write(fd, contents + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
		{
			int			save = errno;

			close(fd);
			unlink(tmp);
			bridge_fatal("could not write \"%s\": %s", tmp, strerror(save));
		}
		done += (size_t) n;
	}
	if (close(fd) != 0)
	{
		unlink(tmp);
		bridge_fatal("could not write \"%s\": %s", tmp, strerror(errno));
	}
	if (rename(tmp, path) != 0)
	{
		int			save = errno;

		unlink(tmp);
		bridge_fatal("could not rename \"%s\" to \"%s\": %s", tmp, path, strerror(save));
	}
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

/* ------------------------------------------------------------------------
 * Names in generated files
 * ------------------------------------------------------------------------
 */

/*
 * bridge_has_control
 *		True when s holds a control character (bytes 0x01-0x1f and 0x7f):
 *		newline, carriage return, tab...  Such names are refused by plan:
 *		the generated files are line-oriented ("-- key: value" lines), and
 *		a newline in a name could forge a metadata line.
 */
bool
bridge_has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/*
 * bridge_show_name
 *		A name for a message: double-quoted, control characters written as
 *		\n, \r, \t or \xNN, so that the message stays on its line and shows
 *		what is wrong with the name.
 */
char *
bridge_show_name(const char *s)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "\"");
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		if (*p == '\n')
			sb_append(&sb, "\\n");
		else if (*p == '\r')
			sb_append(&sb, "\\r");
		else if (*p == '\t')
			sb_append(&sb, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			sb_appendf(&sb, "\\x%02x", *p);
		else
		{
			char		c[2] = {(char) *p, '\0'};

			sb_append(&sb, c);
		}
	}
	sb_append(&sb, "\"");
	return sb.data;
}

/*
 * bridge_parse_ident
 *		Parse one SQL identifier at *p (blanks before it are skipped): a
 *		double-quoted one ("" stands for a quote) or a plain one (letters,
 *		digits, '_', '$' and non-ASCII bytes, taken as written).  Returns the
 *		name without quotes (allocated) and advances *p past it, or NULL
 *		when there is no identifier at *p.
 */
char *
bridge_parse_ident(const char **p)
{
	const char *s = *p;
	StrBuf		sb;

	while (*s == ' ' || *s == '\t')
		s++;
	sb_init(&sb);
	if (*s == '"')
	{
		s++;
		for (;;)
		{
			char		c[2] = {*s, '\0'};

			if (*s == '\0')
			{
				sb_free(&sb);
				return NULL;	/* unterminated */
			}
			if (*s == '"' && s[1] != '"')
				break;
			if (*s == '"')
				s++;
			sb_append(&sb, c);
			s++;
		}
		s++;
		if (sb.len == 0)
		{
			sb_free(&sb);
			return NULL;
		}
	}
	else
	{
		while (isalnum((unsigned char) *s) || *s == '_' || *s == '$' ||
			   (unsigned char) *s >= 0x80)
		{
			char		c[2] = {*s, '\0'};

			sb_append(&sb, c);
			s++;
		}
		if (sb.len == 0)
		{
			sb_free(&sb);
			return NULL;
		}
	}
	*p = s;
	return sb.data;
}

/*
 * bridge_split_idents
 *		Split "a, \"B, c\", d" (SQL identifiers separated by commas, as the
 *		generated files write name lists) into the names, unquoted: a comma
 *		inside a quoted name does not split it.  Returns NULL on a syntax
 *		error (the caller names the file and line).
 */
char	  **
bridge_split_idents(const char *list, int *n)
{
	char	  **items = NULL;
	const char *p = list;

	*n = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0')
		return bridge_malloc(sizeof(char *));
	for (;;)
	{
		char	   *item = bridge_parse_ident(&p);

		if (item == NULL)
			return NULL;
		items = realloc(items, sizeof(char *) * (*n + 1));
		if (!items)
			bridge_fatal("out of memory");
		items[(*n)++] = item;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			return items;
		if (*p != ',')
			return NULL;
		p++;
	}
}

/*
 * bridge_valid_keyspace
 *		Keyspace names cqlbridge accepts: what Cassandra accepts unquoted
 *		and keeps as written, 1 to 48 of [a-z0-9_].  Every per-plan object
 *		name in PostgreSQL is derived from it (bridge_plan_schema,
 *		bridge_plan_tag), so it must be a plain name.
 */
bool
bridge_valid_keyspace(const char *ks)
{
	size_t		n = strlen(ks);

	if (n == 0 || n > 48)
		return false;
	for (const char *c = ks; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	return true;
}

/*
 * bridge_plan_schema
 *		The schema of a plan's own objects (source views, sync functions,
 *		the sync lock table): "cqlbridge_<keyspace>".  One per keyspace, so
 *		two plan directories of one database never redefine each other's
 *		objects; at most 58 bytes, within NAMEDATALEN.
 */
char *
bridge_plan_schema(const char *keyspace)
{
	return bridge_printf("cqlbridge_%s", keyspace);
}

/*
 * bridge_plan_tag
 *		A short token of the plan for names that also carry other parts
 *		(trigger names, temp tables, the pending-work setting): the keyspace
 *		when it has at most 20 bytes, else its first 12 bytes, '_' and 8 hex
 *		digits of a hash of it (21 bytes, so never equal to a short one).
 */
char *
bridge_plan_tag(const char *keyspace)
{
	uint32_t	h = 2166136261u;	/* FNV-1a */

	if (strlen(keyspace) <= 20)
		return bridge_strdup(keyspace);
	for (const unsigned char *c = (const unsigned char *) keyspace; *c; c++)
	{
		h ^= *c;
		h *= 16777619u;
	}
	return bridge_printf("%.12s_%08x", keyspace, (unsigned) h);
}

/*
 * bridge_finish_tags
 *		Replace every BRIDGE_TAG_MARK of text by a dollar-quote tag that
 *		occurs nowhere else in the text ("$cqlbridge$", else
 *		"$cqlbridge_2$", ...), so a name holding the tag cannot end a
 *		dollar-quoted function body early.  The text must not contain the
 *		mark otherwise (names with control characters are refused).
 */
char *
bridge_finish_tags(const char *text)
{
	char	   *tag = bridge_strdup("$cqlbridge$");
	StrBuf		sb;

	for (int i = 2; strstr(text, tag) != NULL; i++)
	{
		free(tag);
		tag = bridge_printf("$cqlbridge_%d$", i);
	}
	sb_init(&sb);
	for (const char *p = text; *p; p++)
	{
		if (*p == BRIDGE_TAG_MARK)
			sb_append(&sb, tag);
		else
		{
			char		c[2] = {*p, '\0'};

			sb_append(&sb, c);
		}
	}
	free(tag);
	return sb.data;
}

/*
 * bridge_schema_check_sql
 *		A DO block (dollar quotes as BRIDGE_TAG marks) that creates each
 *		schema that does not exist, and refuses one that belongs to another
 *		role: the owner of a schema can drop or replace the objects in it
 *		(views read by the triggers, the sync functions, the foreign
 *		tables), so cqlbridge never adopts someone else's schema.
 */
char *
bridge_schema_check_sql(const char *const *schemas, int n)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb,
			  "-- Create the schemas, or check that they belong to the role running this.\n"
			  "DO " BRIDGE_TAG "\nDECLARE\n\ts text;\n\towner name;\nBEGIN\n\tFOREACH s IN ARRAY ARRAY[");
	for (int i = 0; i < n; i++)
	{
		char	   *lit = bridge_quote_literal(schemas[i]);

		sb_appendf(&sb, "%s%s", i ? ", " : "", lit);
		free(lit);
	}
	sb_append(&sb,
			  "]::text[] LOOP\n"
			  "\t\tSELECT pg_catalog.pg_get_userbyid(n.nspowner) INTO owner\n"
			  "\t\t\tFROM pg_catalog.pg_namespace n WHERE n.nspname = s;\n"
			  "\t\tIF NOT FOUND THEN\n"
			  "\t\t\tEXECUTE pg_catalog.format('CREATE SCHEMA %I', s);\n"
			  "\t\tELSIF owner <> CURRENT_USER THEN\n"
			  "\t\t\tRAISE EXCEPTION 'schema % belongs to role %, not to %', pg_catalog.quote_ident(s), owner, CURRENT_USER\n"
			  "\t\t\t\tUSING ERRCODE = 'insufficient_privilege',\n"
			  "\t\t\t\t\t  DETAIL = 'The owner of a schema can drop and replace the objects in it; cqlbridge keeps its objects in schemas of the role that runs it.',\n"
			  "\t\t\t\t\t  HINT = pg_catalog.format('Run cqlbridge as role %I, or take the schema over: ALTER SCHEMA %I OWNER TO %I.', owner, s, CURRENT_USER);\n"
			  "\t\tEND IF;\n"
			  "\tEND LOOP;\n"
			  "END\n" BRIDGE_TAG ";\n");
	return sb.data;
}

/*
 * bridge_plain_ident
 *		Can s be written without quotes in SQL or CQL: ASCII lower-case
 *		letters, digits and '_', not starting with a digit, and none of the
 *		keywords in the NULL-terminated list reserved?
 */
bool
bridge_plain_ident(const char *s, const char *const *reserved)
{
	if (!s[0] || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	for (int i = 0; reserved[i]; i++)
		if (strcmp(reserved[i], s) == 0)
			return false;
	return true;
}

/*
 * SQL identifier, quoted only when needed (so the generated SQL stays
 * readable): reserved and type/function-name keywords of PostgreSQL.
 */
char *
bridge_qi(const char *s)
{
	static const char *const reserved[] = {
		"all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
		"authorization", "binary", "both", "case", "cast", "check", "collate", "collation",
		"column", "concurrently", "constraint", "create", "cross", "current_catalog",
		"current_date", "current_role", "current_schema", "current_time",
		"current_timestamp", "current_user", "default", "deferrable", "desc", "distinct",
		"do", "else", "end", "except", "false", "fetch", "for", "foreign", "freeze", "from",
		"full", "grant", "group", "having", "ilike", "in", "initially", "inner", "intersect",
		"into", "is", "isnull", "join", "lateral", "leading", "left", "like", "limit",
		"localtime", "localtimestamp", "natural", "not", "notnull", "null", "offset", "on",
		"only", "or", "order", "outer", "overlaps", "placing", "primary", "references",
		"returning", "right", "select", "session_user", "similar", "some", "symmetric",
		"system_user", "table", "tablesample", "then", "to", "trailing", "true", "union",
		"unique", "user", "using", "variadic", "verbose", "when", "where", "window", "with",
		NULL
	};

	return bridge_plain_ident(s, reserved) ? bridge_strdup(s) : bridge_quote_ident(s);
}


/*-------------------------------------------------------------------------
 *
 * cqlcli.c
 *		A small command-line client over the CQL protocol library: runs
 *		statements given with -e or read from a file and prints rows.
 *
 *	cqlcli [-h host] [-p port] [-v auto|4|5] [-z lz4|none] [-u user]
 *		   [-k keyspace] [-c consistency] [-t timeout_ms] [--require-auth]
 *		   [--sslmode MODE] [--sslrootcert FILE] [--sslcert FILE --sslkey FILE]
 *		   [--json] [--info] [-e "CQL"]... [-f file] | --help | --version
 *
 * Every option has a long name too (--host, --port, --protocol-version,
 * --compression, --username, --keyspace, --consistency, --timeout,
 * --execute, --file; "--name value" or "--name=value").  -h and -p are the
 * host and port as in psql; in cqlsh -p is the password, which cqlcli never
 * takes from the command line, so a -p that is no port number is refused
 * without repeating it.
 *
 * TLS settings have libpq's names and meanings (as cql_fdw's server and
 * user mapping options); they may also come from cqlcli's own variables
 * CQL_SSLMODE, CQL_SSLROOTCERT, CQL_SSLCERT and CQL_SSLKEY (not libpq's
 * PGSSL*, which are meant for PostgreSQL), and a key's passphrase from
 * CQL_SSLPASSWORD.
 *
 * The password never comes from the command line (argv is visible to every
 * user through ps): it is taken from the environment variable CQL_PASSWORD,
 * or, with -u and no CQL_PASSWORD, asked for on the terminal with echo off
 * when stdin is a terminal.  The old -P option is refused with a message
 * saying so.  --require-auth refuses a server that does not ask for the
 * password (a connection must never silently skip authentication).
 * Statements are split on ';' outside
 * quotes and comments.  Rows print as a header line of column names and
 * one line per row, values in CQL literal form separated by " | ", then
 * "(N rows)"; with --json each row is one JSON object.  Results are paged
 * (5000 rows a page), so any result size prints in bounded memory.
 * Exit status, as cqlsh's: 0 on success, 1 on any error (reported on
 * stderr), 2 for usage errors.  (cqlbridge's 1 means "differences found",
 * which cqlcli has no use for; a failure is 1 here, 2 there.)
 * The version (--version, and the driver version the STARTUP message
 * reports) is cql_fdw's: CQLCLI_VERSION, which the Makefile derives from
 * cql_fdw.control.
 *
 * IDENTIFICATION
 *		src/tools/cqlcli.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define PAGE_SIZE 5000

#ifndef CQLCLI_VERSION
#error "CQLCLI_VERSION is defined by the Makefile (make tools), from cql_fdw.control"
#endif

typedef struct cli_opts
{
	cql_conn_options conn;
	uint16_t	consistency;
	bool		json;
	bool		info;
	int			nstmts;
	char	  **stmts;
} cli_opts;

/*
 * usage
 *		Print the usage (--help; after a usage error, to stderr).
 */
static void
usage(FILE *f)
{
	fprintf(f,
			"usage: cqlcli [OPTION]... [-e \"CQL\"]... [-f FILE]\n"
			"  -h, --host HOST           the node (default 127.0.0.1)\n"
			"  -p, --port PORT           its CQL port (default 9042; -p is the port as in\n"
			"                            psql, not cqlsh's password option)\n"
			"  -v, --protocol-version auto|4|5\n"
			"  -z, --compression lz4|none\n"
			"  -u, --username USER       log in as USER (password: see below)\n"
			"      --require-auth        refuse a node that does not ask for the password\n"
			"  -k, --keyspace KEYSPACE   USE it after connecting\n"
			"  -c, --consistency LEVEL   of every statement (default ONE)\n"
			"  -t, --timeout MS          connect and request timeout, 1 to 3600000\n"
			"      --sslmode disable|require|verify-ca|verify-full\n"
			"      --sslrootcert FILE    --sslcert FILE  --sslkey FILE\n"
			"      --json                one JSON object per row\n"
			"      --info                print the connection's properties first\n"
			"  -e, --execute \"CQL\"       statements to run (repeatable)\n"
			"  -f, --file FILE           statements read from FILE (- for stdin)\n"
			"      --help                this help;  -V, --version  the version\n"
			"TLS settings default to CQL_SSLMODE, CQL_SSLROOTCERT, CQL_SSLCERT, CQL_SSLKEY\n"
			"(libpq's PGSSL* are not read); a key's passphrase is read from CQL_SSLPASSWORD.\n"
			"The password is read from the environment variable CQL_PASSWORD or, with -u,\n"
			"asked for on the terminal (never given on the command line).\n"
			"Exit status (as cqlsh's): 0 success, 1 error, 2 usage error.\n");
}

/*
 * prompt_password
 *		Ask for the password on the terminal with echo switched off (stdin
 *		must be a terminal).  Returns a malloc'd string, or NULL.
 */
static char *
prompt_password(const char *user)
{
	struct termios old,
				noecho;
	char		buf[1024];
	char	   *res = NULL;
	bool		restored;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &old) != 0)
		return NULL;
	noecho = old;
	noecho.c_lflag &= ~(tcflag_t) ECHO;
	noecho.c_lflag |= ECHONL;
	fprintf(stderr, "Password for user %s: ", user);
	fflush(stderr);
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &noecho) != 0)
		return NULL;
	if (fgets(buf, sizeof(buf), stdin) != NULL)
	{
		buf[strcspn(buf, "\r\n")] = '\0';
		res = strdup(buf);
	}
	restored = tcsetattr(STDIN_FILENO, TCSAFLUSH, &old) == 0;
	memset(buf, 0, sizeof(buf));
	if (!restored)
		fprintf(stderr, "cqlcli: could not restore terminal echo\n");
	return res;
}

static void
add_stmt(cli_opts *o, const char *s, size_t n)
{
	/* trim blanks */
	while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++, n--;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	if (n == 0)
		return;
	o->stmts = realloc(o->stmts, sizeof(char *) * (size_t) (o->nstmts + 1));
	if (o->stmts == NULL)
	{
		fprintf(stderr, "cqlcli: out of memory\n");
		exit(1);
	}
	o->stmts[o->nstmts] = strndup(s, n);
	o->nstmts++;
}

/*
 * split_statements
 *		Split on ';' that are not inside '...' (with '' escapes), "..."
 *		identifiers, $$...$$ strings, -- or // line comments, or block
 *		comments.  Comments are kept in the statement text (the server
 *		ignores them).
 */
static void
split_statements(cli_opts *o, const char *text)
{
	const char *start = text;
	const char *p = text;

	while (*p)
	{
		if (*p == '\'' || *p == '"')
		{
			char		q = *p++;

			while (*p)
			{
				if (*p == q)
				{
					if (p[1] == q)
					{
						p += 2;
						continue;
					}
					break;
				}
				p++;
			}
			if (*p)
				p++;
		}
		else if (p[0] == '$' && p[1] == '$')
		{
			const char *end = strstr(p + 2, "$$");

			p = end ? end + 2 : p + strlen(p);
		}
		else if ((p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '/'))
		{
			while (*p && *p != '\n')
				p++;
		}
		else if (p[0] == '/' && p[1] == '*')
		{
			const char *end = strstr(p + 2, "*/");

			p = end ? end + 2 : p + strlen(p);
		}
		else if (*p == ';')
		{
			add_stmt(o, start, (size_t) (p - start));
			start = ++p;
		}
		else
			p++;
	}
	add_stmt(o, start, (size_t) (p - start));
}

static char *
read_file(const char *path)
{
	FILE	   *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	char	   *buf = NULL;
	size_t		len = 0,
				cap = 0;

	if (f == NULL)
	{
		fprintf(stderr, "cqlcli: could not open \"%s\": %s\n", path, strerror(errno));
		exit(1);
	}
	for (;;)
	{
		size_t		got;

		if (cap - len < 4096)
		{
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			if (buf == NULL)
			{
				fprintf(stderr, "cqlcli: out of memory\n");
				exit(1);
			}
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0)
			break;
	}
	buf[len] = '\0';
	if (f != stdin)
		fclose(f);
	return buf;
}

static void
print_error(const char *what, cql_status st, const cql_error *err)
{
	if (err->status == CQL_ERR_SERVER)
		fprintf(stderr, "cqlcli: %s: server error 0x%04x (%s): %s\n", what,
				(unsigned) err->code, cql_error_code_name(err->code), err->message);
	else
		fprintf(stderr, "cqlcli: %s: %s\n", what,
				err->message[0] ? err->message : cql_status_message(st));
}

/* JSON string for a column name */
static void
json_key(cql_buf *b, const char *s)
{
	cql_buf_u8(b, '"');
	for (; *s; s++)
	{
		unsigned char ch = (unsigned char) *s;

		if (ch == '"' || ch == '\\')
		{
			cql_buf_u8(b, '\\');
			cql_buf_u8(b, ch);
		}
		else if (ch < 0x20)
		{
			char		esc[8];

			snprintf(esc, sizeof(esc), "\\u%04x", ch);
			cql_buf_put(b, esc, 6);
		}
		else
			cql_buf_u8(b, ch);
	}
	cql_buf_u8(b, '"');
}

/* Print one page; returns false on a formatting failure. */
static bool
print_page(const cli_opts *o, const cql_result *res, bool first, cql_buf *line)
{
	int32_t		ncols = res->meta.ncols;

	if (res->meta.cols == NULL)
		return false;
	if (first && !o->json)
	{
		cql_buf_reset(line);
		for (int32_t c = 0; c < ncols; c++)
		{
			if (c > 0)
				cql_buf_put(line, " | ", 3);
			cql_buf_put(line, res->meta.cols[c].name, strlen(res->meta.cols[c].name));
		}
		if (cql_buf_status(line) != CQL_OK)
			return false;
		fwrite(line->data, 1, line->len, stdout);
		fputc('\n', stdout);
	}
	for (int32_t r = 0; r < res->rows_count; r++)
	{
		cql_buf_reset(line);
		if (o->json)
			cql_buf_u8(line, '{');
		for (int32_t c = 0; c < ncols; c++)
		{
			const cql_elem *e = cql_result_cell(res, r, c);
			cql_status	st;

			if (c > 0)
				cql_buf_put(line, o->json ? ", " : " | ", o->json ? 2 : 3);
			if (o->json)
			{
				json_key(line, res->meta.cols[c].name);
				cql_buf_put(line, ": ", 2);
			}
			st = cql_value_format(res->meta.cols[c].type, e->p, e->n,
								  o->json ? CQL_FORMAT_JSON : CQL_FORMAT_LITERAL, line);
			if (st != CQL_OK)
			{
				fprintf(stderr, "cqlcli: cannot format column %s of row %d: %s\n",
						res->meta.cols[c].name, r + 1, cql_status_message(st));
				return false;
			}
		}
		if (o->json)
			cql_buf_u8(line, '}');
		if (cql_buf_status(line) != CQL_OK)
			return false;
		fwrite(line->data, 1, line->len, stdout);
		fputc('\n', stdout);
	}
	return true;
}

static int
run_statement(cli_opts *o, cql_conn *c, const char *stmt)
{
	cql_query_params prm;
	cql_pager	pg;
	cql_error	err;
	cql_buf		line;
	int64_t		rows = 0;
	bool		first = true;
	bool		is_rows = false;
	int			rc = 0;

	cql_query_params_init(&prm);
	prm.consistency = o->consistency;
	prm.page_size = PAGE_SIZE;
	cql_pager_init(&pg, c, stmt, NULL, &prm);
	cql_buf_init(&line, &cql_malloc_allocator);
	while (!pg.done)
	{
		cql_result	page;
		cql_status	st = cql_pager_next(&pg, &page, &err);

		if (st != CQL_OK)
		{
			print_error(stmt, st, &err);
			rc = 1;
			break;
		}
		if (page.kind == CQL_RESULT_ROWS)
		{
			is_rows = true;
			if (!print_page(o, &page, first, &line))
			{
				cql_result_free(&page);
				rc = 1;
				break;
			}
			first = false;
			rows += page.rows_count;
		}
		cql_result_free(&page);
	}
	if (rc == 0 && is_rows)
		printf("(%lld rows)\n", (long long) rows);
	fflush(stdout);
	cql_buf_free(&line);
	cql_pager_free(&pg);
	return rc;
}

/*
 * option_value
 *		If argv[*i] is the option short_name ("-h") or long_name ("--host",
 *		"--host=VALUE"), its value: the text after '=', else the next
 *		argument (*i moves past it).  NULL if argv[*i] is another option.
 *		An option without its value is a usage error (exit 2).
 */
static const char *
option_value(int argc, char **argv, int *i, const char *short_name,
			 const char *long_name)
{
	const char *a = argv[*i];
	size_t		n = strlen(long_name);

	if (strncmp(a, long_name, n) == 0 && a[n] == '=')
		return a + n + 1;
	if (strcmp(a, long_name) != 0 &&
		(short_name == NULL || strcmp(a, short_name) != 0))
		return NULL;
	if (*i + 1 >= argc)
	{
		fprintf(stderr, "cqlcli: option %s needs an argument\n", a);
		usage(stderr);
		exit(2);
	}
	return argv[++*i];
}

int
main(int argc, char **argv)
{
	cli_opts	o;
	cql_conn   *c;
	cql_error	err;
	cql_status	st;
	int			rc = 0;
	char	   *prompted = NULL;
	cql_tls_config tc;
	cql_tls_context *tls = NULL;
	const char *sslmode = getenv("CQL_SSLMODE");
	const char *sslmode_from = "CQL_SSLMODE";
	const char *v;

	/* cqlcli's own variables: PGSSL* are libpq's, meant for PostgreSQL */
	memset(&tc, 0, sizeof(tc));
	tc.rootcert = getenv("CQL_SSLROOTCERT");
	tc.cert = getenv("CQL_SSLCERT");
	tc.key = getenv("CQL_SSLKEY");
	tc.key_password = getenv("CQL_SSLPASSWORD");
	memset(&o, 0, sizeof(o));
	cql_conn_options_init(&o.conn);
	o.conn.driver_name = "cqlcli";
	o.conn.driver_version = CQLCLI_VERSION;
	o.conn.password = getenv("CQL_PASSWORD");
	o.consistency = CQL_CONSISTENCY_ONE;

	for (int i = 1; i < argc; i++)
	{
		const char *a = argv[i];

		if ((v = option_value(argc, argv, &i, "-h", "--host")) != NULL)
			o.conn.host = v;
		else if ((v = option_value(argc, argv, &i, "-p", "--port")) != NULL)
		{
			char	   *end;
			long		port;

			errno = 0;
			port = strtol(v, &end, 10);
			if (end == v || *end != '\0' || strspn(v, "0123456789") != strlen(v))
			{
				/* not repeated: it may be a password given as in cqlsh */
				fprintf(stderr,
						"cqlcli: invalid port given to %s: not a number\n"
						"-p is the port (as in psql), not the password (as in cqlsh): the "
						"password comes from CQL_PASSWORD or the prompt.\n", a);
				rc = 2;
				goto out;
			}
			if (errno != 0 || port <= 0 || port > 65535)
			{
				fprintf(stderr, "cqlcli: invalid port \"%s\" (1 to 65535)\n", v);
				rc = 2;
				goto out;
			}
			o.conn.port = (int) port;
		}
		else if ((v = option_value(argc, argv, &i, "-v", "--protocol-version")) != NULL)
		{
			if (strcmp(v, "auto") == 0)
				o.conn.protocol_version = 0;
			else if (strcmp(v, "4") == 0 || strcmp(v, "5") == 0)
				o.conn.protocol_version = atoi(v);
			else
			{
				fprintf(stderr, "cqlcli: invalid protocol version \"%s\" (auto, 4 or 5)\n", v);
				rc = 2;
				goto out;
			}
		}
		else if ((v = option_value(argc, argv, &i, "-z", "--compression")) != NULL)
		{
			if (strcmp(v, "lz4") == 0)
				o.conn.compression = CQL_COMPRESSION_LZ4;
			else if (strcmp(v, "none") == 0)
				o.conn.compression = CQL_COMPRESSION_NONE;
			else
			{
				fprintf(stderr, "cqlcli: invalid compression \"%s\" (lz4 or none)\n", v);
				rc = 2;
				goto out;
			}
		}
		else if ((v = option_value(argc, argv, &i, "-u", "--username")) != NULL)
			o.conn.username = v;
		else if (strcmp(a, "-P") == 0 || strcmp(a, "--password") == 0 ||
				 strncmp(a, "--password=", 11) == 0)
		{
			fprintf(stderr,
					"cqlcli: %s is not accepted: a password on the command line is "
					"visible to other users (ps).\n"
					"Set CQL_PASSWORD in the environment, or give -u and type the "
					"password at the prompt.\n", strcmp(a, "-P") == 0 ? "-P" : "--password");
			rc = 2;
			goto out;
		}
		else if (strcmp(a, "--require-auth") == 0)
			o.conn.require_auth = true;
		else if ((v = option_value(argc, argv, &i, "-k", "--keyspace")) != NULL)
			o.conn.keyspace = v;
		else if ((v = option_value(argc, argv, &i, "-c", "--consistency")) != NULL)
		{
			if (cql_consistency_parse(v, &o.consistency) != CQL_OK)
			{
				fprintf(stderr, "cqlcli: unknown consistency level \"%s\"\n", v);
				rc = 2;
				goto out;
			}
		}
		else if ((v = option_value(argc, argv, &i, "-t", "--timeout")) != NULL)
		{
			char	   *end;
			long		ms = strtol(v, &end, 10);

			if (*end || end == v || ms <= 0 || ms > 3600000)
			{
				fprintf(stderr, "cqlcli: invalid timeout \"%s\" (milliseconds, 1 to 3600000)\n",
						v);
				rc = 2;
				goto out;
			}
			o.conn.request_timeout_ms = (int) ms;
			o.conn.connect_timeout_ms = o.conn.request_timeout_ms;
		}
		else if ((v = option_value(argc, argv, &i, "-e", "--execute")) != NULL)
			split_statements(&o, v);
		else if ((v = option_value(argc, argv, &i, "-f", "--file")) != NULL)
		{
			char	   *text = read_file(v);

			split_statements(&o, text);
			free(text);
		}
		else if ((v = option_value(argc, argv, &i, NULL, "--sslmode")) != NULL)
		{
			sslmode = v;
			sslmode_from = "--sslmode";
		}
		else if ((v = option_value(argc, argv, &i, NULL, "--sslrootcert")) != NULL)
			tc.rootcert = v;
		else if ((v = option_value(argc, argv, &i, NULL, "--sslcert")) != NULL)
			tc.cert = v;
		else if ((v = option_value(argc, argv, &i, NULL, "--sslkey")) != NULL)
			tc.key = v;
		else if (strcmp(a, "--json") == 0)
			o.json = true;
		else if (strcmp(a, "--info") == 0)
			o.info = true;
		else if (strcmp(a, "--help") == 0)
		{
			usage(stdout);
			goto out;
		}
		else if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0)
		{
			printf("cqlcli (cql_fdw) %s\n", CQLCLI_VERSION);
			goto out;
		}
		else
		{
			fprintf(stderr, "cqlcli: unknown option \"%s\"\n", a);
			usage(stderr);
			rc = 2;
			goto out;
		}
	}
	if (sslmode && cql_ssl_mode_parse(sslmode, &tc.mode) != CQL_OK)
	{
		fprintf(stderr, "cqlcli: invalid sslmode \"%s\" from %s (disable, require, verify-ca or verify-full)\n",
				sslmode, sslmode_from);
		rc = 2;
		goto out;
	}
	if (tc.mode != CQL_SSL_DISABLE)
	{
		cql_error_clear(&err);
		if ((st = cql_tls_context_new(&tc, &tls, &err)) != CQL_OK)
		{
			print_error("TLS", st, &err);
			rc = 1;
			goto out;
		}
		o.conn.tls = tls;
	}

	if (o.conn.password && !o.conn.username)
		o.conn.password = NULL;	/* CQL_PASSWORD alone means nothing */
	if (o.conn.username && !o.conn.password &&
		(prompted = prompt_password(o.conn.username)) != NULL)
		o.conn.password = prompted;

	st = cql_connect(&o.conn, &c, &err);
	if (prompted)
	{
		/* the connection keeps its own copy */
		memset(prompted, 0, strlen(prompted));
		free(prompted);
		prompted = NULL;
		o.conn.password = NULL;
	}
	if (st != CQL_OK)
	{
		print_error("connect", st, &err);
		rc = 1;
		goto out;
	}
	if (o.info)
	{
		const cql_supported_entry *e = cql_supported_get(cql_conn_supported(c), "CQL_VERSION");

		printf("host: %s\n", cql_conn_peer(c));
		printf("protocol_version: %d\n", cql_conn_protocol_version(c));
		printf("compression: %s\n",
			   cql_conn_compression(c) == CQL_COMPRESSION_LZ4 ? "lz4" : "none");
		printf("cql_version: %s\n", (e && e->nvalues > 0) ? e->values[0] : "unknown");
		printf("authenticated: %s\n", cql_conn_authenticated(c) ? "yes" : "no");
	}
	for (int i = 0; i < o.nstmts && rc == 0; i++)
		rc = run_statement(&o, c, o.stmts[i]);
	cql_conn_close(c);
out:
	cql_tls_context_free(tls);
	for (int i = 0; i < o.nstmts; i++)
		free(o.stmts[i]);
	free(o.stmts);
	return rc;
}

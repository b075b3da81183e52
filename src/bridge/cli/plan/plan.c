/*-------------------------------------------------------------------------
 *
 * plan.c
 *	  "cqlbridge plan": from a relational schema and its workload to the
 *	  generated directory (model.txt, report.md, 001-005, the diagrams
 *	  logical.dot and physical.dot, their SVGs and report.html).
 *
 * Steps: catalog and workload (workload.c), analysis of every query
 * by cql_bridge_analyze(), the mapping rules (rules.c), measurements
 * on the data (sizing.c), then the files (emit.c,
 * report.c, emit_sync()).
 *
 * Atomicity: every error is detected while the plan is built in memory,
 * before anything is written.  The files are then written into a new
 * directory DIR.tmpXXXXXX (mkdtemp; 005 by emit_sync from 003 there), which
 * replaces DIR in one rename, so a failed run leaves no directory and never
 * half of one.  An
 * existing DIR is replaced only when it looks like a plan directory (it
 * has a model.txt); anything else there is an error.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/plan.c
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture.h"
#include "plan/plan.h"
#include "sync/sync.h"

static const char *const plan_files[] = {
	"model.txt", "report.md", "001_schema.cql", "002_foreign_tables.sql",
	"003_load.sql", "004_verify.sql", "005_sync.sql",
	"logical.dot", "physical.dot", "logical.svg", "physical.svg", "report.html",
	/* not written by plan: the reports of verify and diff, replaced with the plan */
	"verify.json", "diff.json", NULL
};

/* the files written in every run, in plan_files' order; the SVGs need dot */
#define PLAN_NFILES 12

/*
 * is_plan_file
 *		Whether name is one of the files plan writes (only those may be
 *		replaced in an existing output directory).
 */
static bool
is_plan_file(const char *name)
{
	for (int i = 0; plan_files[i]; i++)
		if (strcmp(plan_files[i], name) == 0)
			return true;
	return false;
}

/*
 * check_plan_dir
 *		May plan replace dir?  It must not exist, or be a plan directory
 *		(model.txt) holding nothing but plan files; fatal otherwise.  False
 *		when it does not exist.  Checked before anything is written, so a
 *		refusal leaves no temporary directory behind.
 */
static bool
check_plan_dir(const char *dir, bool must_be_plan)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	struct stat st;

	if (!d)
	{
		if (errno == ENOENT)
			return false;
		bridge_fatal("could not open directory \"%s\": %s", dir, strerror(errno));
	}
	if (must_be_plan && stat(bridge_path(dir, "model.txt"), &st) != 0)
		bridge_fatal_hint("Choose another -o directory or remove it.",
						  "\"%s\" exists and is not a cqlbridge plan directory (no model.txt)", dir);
	while ((e = readdir(d)) != NULL)
	{
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (!is_plan_file(e->d_name))
			bridge_fatal_hint("Move the file away or choose another -o directory.",
							  "\"%s\" contains \"%s\", which is not a file cqlbridge plan writes; not replacing it",
							  dir, e->d_name);
	}
	closedir(d);
	return true;
}

/* remove a directory that holds only plan files; fatal otherwise */
static void
remove_plan_dir(const char *dir, bool must_be_plan)
{
	if (!check_plan_dir(dir, must_be_plan))
		return;
	for (int i = 0; plan_files[i]; i++)
		if (unlink(bridge_path(dir, plan_files[i])) != 0 && errno != ENOENT)
			bridge_fatal("could not remove \"%s\": %s", bridge_path(dir, plan_files[i]), strerror(errno));
	if (rmdir(dir) != 0)
		bridge_fatal("could not remove directory \"%s\": %s", dir, strerror(errno));
}

/*
 * check_plan_names
 *		The names given on the command line: the keyspace names every
 *		per-plan object (bridge_plan_schema, bridge_plan_tag), so it must be
 *		a plain Cassandra name; the other names go into the generated files
 *		quoted, but never with a control character (line-oriented files).
 */
static void
check_plan_names(const Plan *p)
{
	const char *const what[] = {"--schema", "--foreign-schema", "--server"};
	const char *const name[] = {p->cat.schema, p->foreign_schema, p->server};

	if (!bridge_valid_keyspace(p->keyspace))
		bridge_fatal_hint("Give a keyspace of 1 to 48 lower-case letters, digits and '_' with --keyspace (the default is derived from --schema).",
						  "keyspace %s is not a name cqlbridge can use", bridge_show_name(p->keyspace));
	for (int i = 0; i < 3; i++)
		if (bridge_has_control(name[i]))
			bridge_fatal_hint("Use a name without control characters (newline, tab, ...); quotes, spaces, upper case and non-ASCII letters are fine.",
							  "%s %s contains a control character, which cqlbridge does not write into its line-oriented files",
							  what[i], bridge_show_name(name[i]));
}

/* the process umask (mkdtemp creates 0700; a plan directory is 0777 - umask) */
static mode_t
current_umask(void)
{
	mode_t		mask = umask(0);

	umask(mask);
	return mask;
}

/*
 * cmd_plan
 *		"cqlbridge plan": read the workload and the catalog, analyze and map
 *		every query to a table, measure the tables on the data, and write
 *		the generated files into a temporary directory renamed over DIR, so
 *		DIR is either the old plan or the whole new one.  Returns 0, or 3
 *		when statements were left out (plan_serve); failures exit.
 */
int
cmd_plan(const BridgeOptions *opts)
{
	Plan		p;
	char	   *dir;
	char	   *tmp;
	char	   *files[PLAN_NFILES];
	size_t		dl;

	memset(&p, 0, sizeof(p));
	p.opts = opts;
	if (!opts->source_schema)
		bridge_fatal_hint("Give the relational schema, e.g. --schema hotel_rel.", "plan needs --schema");
	if (!opts->workload)
		bridge_fatal("plan needs --workload FILE");
	if (!opts->dir)
		bridge_fatal("plan needs -o DIR");
	p.cat.schema = bridge_strdup(opts->source_schema);
	p.keyspace = bridge_strdup(opts->keyspace ? opts->keyspace : opts->source_schema);
	p.foreign_schema = opts->foreign_schema ? bridge_strdup(opts->foreign_schema)
		: bridge_printf("%s_cql", p.keyspace);
	p.server = bridge_strdup(opts->server ? opts->server : "cqlbridge");
	p.workload_path = bridge_strdup(opts->workload);
	check_plan_names(&p);

	/* the workload first: its format errors need no database */
	plan_read_workload(&p);
	p.conn = bridge_connect(opts);
	/* text forms of dates and numbers must not depend on the session */
	PQclear(bridge_exec(p.conn, "setting DateStyle", "SET DateStyle = 'ISO, YMD'", 0, NULL));
	PQclear(bridge_exec(p.conn, "setting TimeZone", "SET TimeZone = 'UTC'", 0, NULL));
	plan_types_init(p.conn);
	plan_read_catalog(&p);
	plan_serve(&p);
	plan_measure(&p);

	files[0] = plan_model_txt(&p);
	files[1] = plan_report_md(&p);
	files[2] = plan_emit_schema(&p);
	files[3] = plan_emit_foreign(&p);
	files[4] = plan_emit_load(&p);
	files[5] = plan_emit_verify(&p);
	files[6] = NULL;				/* 005_sync.sql: emit_sync() writes it from 003 */
	files[7] = plan_logical_dot(&p);
	files[8] = plan_physical_dot(&p);
	files[11] = plan_render(&p, files[7], files[8], &files[9], &files[10]);
	if (files[9] == NULL)
		fprintf(stderr, "cqlbridge plan: Graphviz's dot is not installed (not found in PATH): "
				"the diagrams are written as logical.dot and physical.dot only, without SVG; "
				"install graphviz for logical.svg, physical.svg and the diagrams in report.html\n");

	/* everything succeeded: write DIR.tmp, then swap it in */
	dir = bridge_strdup(opts->dir);
	dl = strlen(dir);
	while (dl > 1 && dir[dl - 1] == '/')
		dir[--dl] = '\0';
	/*
	 * A new directory of a random name (mkdtemp: created, never adopted),
	 * not a predictable DIR.tmp that someone could have planted as a link.
	 */
	{
		struct stat st;

		if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
			bridge_fatal_hint("Give the directory itself with -o.",
							  "\"%s\" is a symbolic link; cqlbridge plan does not replace it", dir);
	}
	(void) check_plan_dir(dir, true);
	tmp = bridge_printf("%s.tmpXXXXXX", dir);
	if (mkdtemp(tmp) == NULL)
		bridge_fatal("could not create a directory next to \"%s\": %s", dir, strerror(errno));
	if (chmod(tmp, 0777 & ~current_umask()) != 0)
		bridge_fatal("could not set the mode of \"%s\": %s", tmp, strerror(errno));
	for (int i = 0; i < 6; i++)
		bridge_write_file(bridge_path(tmp, plan_files[i]), files[i]);
	emit_sync(tmp);				/* plan_files[6], 005_sync.sql */
	for (int i = 7; i < PLAN_NFILES; i++)
		if (files[i])
			bridge_write_file(bridge_path(tmp, plan_files[i]), files[i]);
	/* every statement of the plan prepares, or nothing is written (prove.c) */
	{
		char	   *why = plan_prove(p.conn, tmp);

		if (why != NULL)
		{
			remove_plan_dir(tmp, false);
			bridge_fatal_hint("The plan was not written. Fix the workload (a parameter's declared type, a cast, a column) or the schema, and plan again.",
							  "%s", why);
		}
	}
	PQfinish(p.conn);
	remove_plan_dir(dir, true);
	if (rename(tmp, dir) != 0)
		bridge_fatal("could not rename \"%s\" to \"%s\": %s", tmp, dir, strerror(errno));
	if (opts->json)
		bridge_write_output(opts->json, plan_json(&p));
	if (!opts->quiet)
	{
		printf("cqlbridge plan: %d queries, %d tables written to %s\n", plan_nworkload(&p), p.ntables, dir);
		for (int i = 0; i < p.nqueries; i++)
		{
			Query	   *q = &p.queries[i];

			printf("  %-36s %s%s\n", q->name, plan_serving_text(q),
				   q->pub_lost > 0 ? "  (published key LOSSY)" : "");
		}
		for (int i = 0; i < p.ntables; i++)
		{
			char	   *text;
			int			saved = plan_writes_saved(p.tables[i], &text);

			if (text)
			{
				printf("  %s serves", p.tables[i]->name);
				for (int k = 0; k < p.tables[i]->nqueries; k++)
					printf("%s %s", k ? "," : "", p.tables[i]->queries[k]->name);
				printf(" (merged, %d write%s saved per change):\n", saved, saved == 1 ? "" : "s");
				/* the relations read by several of them: the writes saved */
				for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
					if (strstr(line, " instead of "))
						printf("    %s\n", line);
				free(text);
			}
		}
		if (p.nprofile > 0)
		{
			printf("Cassandra writes per second under the write profile (model.txt explains them):\n");
			for (int i = 0; i < p.ntables; i++)
				printf("  %-36s %.3f/s\n", p.tables[i]->name, plan_table_writes(&p, p.tables[i]));
		}
	}
	if (p.nleft > 0)
	{
		fflush(stdout);
		fprintf(stderr, "cqlbridge plan: %d of %d statements left out (no table can serve them; report.md says why):\n",
				p.nleft, p.nleft + plan_nworkload(&p));
		for (int i = 0; i < p.nleft; i++)
		{
			fprintf(stderr, "  %s (%s:%d) [%s]: %s\n", p.left[i].name, p.workload_path, p.left[i].line,
					p.left[i].rule, p.left[i].reason);
			if (p.left[i].hint)
				fprintf(stderr, "    HINT:  %s\n", p.left[i].hint);
		}
	}

	/* a migration of this keyspace in progress: the plan diff against it */
	p.conn = bridge_connect(opts);
	cap_tables_report(p.conn, dir, opts->quiet);
	PQfinish(p.conn);
	return p.nleft > 0 ? BRIDGE_EXIT_PARTIAL : BRIDGE_EXIT_SUCCESS;
}

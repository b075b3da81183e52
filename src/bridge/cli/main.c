/*-------------------------------------------------------------------------
 *
 * main.c
 *	  cqlbridge: move a relational schema and its queries to Cassandra
 *	  query tables through cql_fdw.
 *
 *	  cqlbridge workload [options] --schema S [-o FILE]
 *	  cqlbridge plan   [options] --workload FILE -o DIR
 *	  cqlbridge apply  [options] DIR [--chunks N] [--batch-rows N] [--restart] [--no-load]
 *	  cqlbridge verify [options] DIR [--samples N]
 *	  cqlbridge diff   [options] DIR [--table T] [--examples N] [--json FILE]
 *						 [--repair] [--consistency LEVEL] [--write-consistency LEVEL]
 *						 [--jobs N] [--row-by-row]
 *	  cqlbridge sync   [options] DIR [--uninstall]
 *	  cqlbridge stream [options] DIR [--status | --drop] [--priority LEVEL]
 *		[--flush-interval MS]
 *
 * Connection options are psql's (-d -h -p -U, and the PG* environment
 * through libpq; -W prompts for the password).  Exit status: 0 success,
 * 1 differences found, 2 error, usage errors included (BRIDGE_EXIT_* of
 * common/common.h, the one definition of every command).
 *
 * layer: main
 *
 * IDENTIFICATION
 *	  src/bridge/cli/main.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check/diff.h"
#include "check/verify.h"
#include "draft/draft.h"
#include "load/apply.h"
#include "plan/plan.h"
#include "capture/capture.h"
#include "sync/sync.h"

enum
{
	OPT_WORKLOAD = 1000,
	OPT_SCHEMA,
	OPT_KEYSPACE,
	OPT_FOREIGN_SCHEMA,
	OPT_SERVER,
	OPT_RF,
	OPT_MAX_VALUES,
	OPT_MAX_BYTES,
	OPT_GROWTH,
	OPT_NO_BUCKET,
	OPT_STRICT,
	OPT_CHUNKS,
	OPT_BATCH_ROWS,
	OPT_RESTART,
	OPT_SAMPLES,
	OPT_UNINSTALL,
	OPT_SHOW,
	OPT_REPLICATION,
	OPT_DRY_RUN,
	OPT_JSON,
	OPT_TABLE,
	OPT_VERSION,
	OPT_TOP,
	OPT_MIN_CALLS,
	OPT_ROLE,
	OPT_EXAMPLES,
	OPT_REPAIR,
	OPT_CONSISTENCY,
	OPT_WRITE_CONSISTENCY,
	OPT_JOBS,
	OPT_ROW_BY_ROW,
	OPT_NO_LOAD,
	OPT_STATUS,
	OPT_DROP,
	OPT_WARN_WAL,
	OPT_LOG_POSITIONS,
	OPT_REPLAN,
	OPT_DROP_REMOVED,
	OPT_PRIORITY,
	OPT_YIELD_LAG,
	OPT_FLUSH_INTERVAL,
	OPT_HELP
};

typedef struct Command
{
	const char *name;
	const char *summary;
	const char *usage;
	const char *options;		/* command-specific help text */
	int			(*run) (const BridgeOptions *opts);
	bool		takes_dir;		/* DIR is a positional argument */
} Command;

static const char *const connection_help =
"Connection options:\n"
"  -d, --dbname=DBNAME      database name or connection string (PGDATABASE)\n"
"  -h, --host=HOST          server host or socket directory (PGHOST)\n"
"  -p, --port=PORT          server port (PGPORT)\n"
"  -U, --username=USER      user name (PGUSER)\n"
"  -W, --password           prompt for the password (needs a terminal); without\n"
"                           -W it is prompted for when the server asks for one\n"
"                           and stdin is a terminal\n"
"  -q, --quiet              no progress output\n"
"  -V, --version            show the version and exit\n"
"      --help               show this help and exit\n"
"\nExit status: 0 success, 1 differences found (verify, diff), 2 error.\n";

static const Command commands[] = {
	{"workload", "draft the workload file from pg_stat_statements",
		"cqlbridge workload [OPTION]... --schema SCHEMA [-o FILE]",
		"  --schema=SCHEMA          relational schema whose statements are drafted\n"
		"  -o, --output=FILE        the workload file to write (default: stdout;\n"
		"                           an existing file is not overwritten)\n"
		"  --top=N                  keep the N queries of most total time (default: all)\n"
		"  --min-calls=N            keep queries called at least N times (default: 0)\n"
		"  --role=ROLE              only the statements of that role (the application's)\n",
	cmd_workload, false},
	{"plan", "derive Cassandra query tables from the schema and workload",
		"cqlbridge plan [OPTION]... --schema SCHEMA --workload FILE -o DIR  (or DIR)",
		"  --workload=FILE          the application's queries (block format)\n"
		"  --schema=SCHEMA          relational schema (e.g. hotel_rel)\n"
		"  --keyspace=NAME          Cassandra keyspace (default: schema without \"_rel\")\n"
		"  --foreign-schema=NAME    schema of the foreign tables (default: keyspace + \"_cql\")\n"
		"  --server=NAME            cql_fdw foreign server (default: cqlbridge)\n"
		"  --replication-factor=N   keyspace replication factor (default: 3)\n"
		"  --replication=DC:N,...   NetworkTopologyStrategy instead, e.g. 'dc1:3,dc2:3'\n"
		"  --max-values=N           values per partition before a warning (default: 100000)\n"
		"  --max-bytes=SIZE         bytes per partition before a warning, kB/MB/GB allowed\n"
		"                           (default: 100MB)\n"
		"  --growth=FACTOR          a wide table's bucket must hold FACTOR times the\n"
		"                           widest bucket measured on the data (default: 2)\n"
		"  --no-bucket              keep wide tables unbucketed (with a warning)\n"
		"  --strict                 all or nothing: a statement no table can serve is an\n"
		"                           error (default: left out and reported, exit status 3)\n"
		"  -o, --output=DIR         directory to write model.txt, report.md, 001-005\n"
		"  --json=FILE              also write the plan's report as JSON to FILE\n"
		"                           (- for stdout: the rest goes to stderr)\n",
	cmd_plan, false},
	{"apply", "create the keyspace, tables and foreign tables, then load them",
		"cqlbridge apply [OPTION]... DIR  (or -o DIR)",
		"  --batch-rows=N           rows per batch of a streamed table: the work a\n"
		"                           resumed load may repeat (default: 50000)\n"
		"  --chunks=N               load each table in N hash chunks, one transaction\n"
		"                           each, instead of streaming it (each chunk reads\n"
		"                           the whole source)\n"
		"  --restart                forget recorded progress and load everything again\n"
		"  --table=TABLE            load only this table (keyspace.table or table;\n"
		"                           repeatable, or comma-separated)\n"
		"  --dry-run                print what would be done, change nothing\n"
		"  --json=FILE              write the load report as JSON to FILE (- for\n"
		"                           stdout: the rest goes to stderr)\n"
		"  --no-load                create the keyspace, tables, foreign tables and\n"
		"                           views only (\"cqlbridge stream\" loads from its slot)\n"
		"  --write-consistency=LEVEL  consistency of the writes to Cassandra\n"
		"                           (default: LOCAL_QUORUM)\n",
	cmd_apply, true},
	{"verify", "compare the workload's answers on both sides",
		"cqlbridge verify [OPTION]... DIR  (or -o DIR)",
		"  --samples=N              parameter sets per query (default: 5)\n"
		"  --show                   also print, for the first sample of each query,\n"
		"                           the target statement, its EXPLAIN and its rows\n"
		"  --table=TABLE            verify only the queries of this table (repeatable)\n"
		"  --json=FILE              write the results as JSON to FILE (- for stdout:\n"
		"                           the rest goes to stderr)\n",
	cmd_verify, true},
	{"diff", "compare every row of the query tables with their source views",
		"cqlbridge diff [OPTION]... DIR  (or -o DIR)",
		"  --table=TABLE            only this query table (keyspace.table or table;\n"
		"                           repeatable, or comma-separated)\n"
		"  --examples=N             differences shown per table, with keys (default: 10)\n"
		"  --json=FILE              also write the report as JSON into FILE (- for\n"
		"                           stdout: the rest goes to stderr)\n"
		"  --repair                 write the missing and different rows, delete the\n"
		"                           extra ones, then compare those keys again\n"
		"  --dry-run                with --repair: print the keys it would write and\n"
		"                           delete per table, change nothing\n"
		"  --consistency=LEVEL      read consistency of the Cassandra scans\n"
		"                           (default: LOCAL_QUORUM)\n"
		"  --write-consistency=LEVEL  consistency of --repair's writes\n"
		"                           (default: LOCAL_QUORUM)\n"
		"  --restart                forget the checkpoints of an interrupted diff\n"
		"  --row-by-row             merge every row of every token range, also where\n"
		"                           a range's row count and hash agree on both sides\n"
		"  --jobs=N                 tables compared at once, each by a process of its\n"
		"                           own with its own sessions (default: 2, or the\n"
		"                           number of tables if fewer)\n"
		"Exit status: 0 no difference (after --repair: all repaired), 1 differences,\n"
		"2 error.\n",
	cmd_diff, true},
	{"sync", "install triggers that keep the Cassandra tables up to date",
		"cqlbridge sync [OPTION]... DIR  (or -o DIR)",
		"  --uninstall              remove the triggers instead\n"
		"  --dry-run                print what would be done, change nothing\n"
		"  --write-consistency=LEVEL  consistency of the writes to Cassandra\n"
		"                           (default: LOCAL_QUORUM)\n",
	cmd_sync, true},
	{"stream", "load, then stream changes by logical decoding (online migration)",
		"cqlbridge stream [OPTION]... DIR  (or -o DIR)",
		"  --status                 print the status of the stream of DIR and exit\n"
		"  --drop                   remove its replication slot, publication and\n"
		"                           tables (the source keeps no more WAL for it)\n"
		"                           (with --dry-run: list them, change nothing)\n"
		"  --warn-wal=SIZE          warn when the slot retains more WAL than SIZE,\n"
		"                           kB/MB/GB allowed (default: 1GB)\n"
		"  --log-positions          log every BEGIN/COMMIT position received, every\n"
		"                           keepalive and every position confirmed, with why\n"
		"  --priority=auto|normal|background|idle\n"
		"                           the CPU priority of the stream's process, backend\n"
		"                           and walsender (default auto): auto yields to the\n"
		"                           application while the stream keeps up (SCHED_IDLE,\n"
		"                           Linux autogroups at nice 19) and takes a full share\n"
		"                           while it lags more than --yield-lag; background\n"
		"                           yields always (nice 10, long time slices); idle\n"
		"                           runs only on CPU nothing else wants (nice 19)\n"
		"  --yield-lag=SECONDS      with --priority auto, the lag above which the\n"
		"                           stream stops yielding (1 to 3600, default 10)\n"
		"  --flush-interval=MS      changes are coalesced this long before they are\n"
		"                           written (10 to 10000, default 500): longer costs\n"
		"                           Cassandra and PostgreSQL less CPU per change and\n"
		"                           adds lag\n"
		"  --replan                 DIR is a new plan of the stream's keyspace: apply\n"
		"                           its differences online (tables added or changed\n"
		"                           are backfilled while the others keep streaming),\n"
		"                           then stream with it (stop the old stream first)\n"
		"  --dry-run                with --replan: print the plan diff; with --drop:\n"
		"                           what it would remove; change nothing\n"
		"  --drop-removed           with --replan: drop the tables the plan no longer\n"
		"                           has in Cassandra too (kept by default)\n"
		"  --write-consistency=LEVEL  consistency of the writes to Cassandra\n"
		"                           (default: LOCAL_QUORUM)\n",
	cmd_stream, true},
};

#define NCOMMANDS ((int) (sizeof(commands) / sizeof(commands[0])))

/*
 * usage_general
 *		"cqlbridge --help": the commands and their one-line summaries.
 */
static void
usage_general(FILE *out)
{
	fprintf(out,
			"cqlbridge moves a relational schema and its queries to Cassandra query\n"
			"tables through cql_fdw.\n\n"
			"Usage:\n  cqlbridge COMMAND [OPTION]...\n\nCommands:\n");
	for (int i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nRun \"cqlbridge COMMAND --help\" for the options of a command.\n");
}

/*
 * usage_command
 *		"cqlbridge COMMAND --help": usage, options and the connection
 *		options.
 */
static void
usage_command(const Command *c, FILE *out)
{
	fprintf(out, "cqlbridge %s: %s.\n\nUsage:\n  %s\n\nOptions:\n%s\n%s",
			c->name, c->summary, c->usage, c->options, connection_help);
}

/*
 * usage_error
 *		Report a wrong command line (fmt with one %s for arg), point to
 *		--help and exit with BRIDGE_EXIT_USAGE (2), like other PostgreSQL
 *		tools.
 */
static void
usage_error(const Command *c, const char *fmt, const char *arg)
{
	fprintf(stderr, "cqlbridge: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	if (c)
		fprintf(stderr, "Try \"cqlbridge %s --help\" for more information.\n", c->name);
	else
		fprintf(stderr, "Try \"cqlbridge --help\" for more information.\n");
	exit(BRIDGE_EXIT_USAGE);
}

/*
 * parse_factor
 *		--growth: a decimal factor from 1 to 1000 (1 = no headroom: the
 *		data as it is must fit; 2 = a bucket may double before it is too
 *		wide).
 */
static double
parse_factor(const Command *c, const char *opt, const char *arg)
{
	char	   *end;
	double		v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || errno != 0 || *end != '\0' || !(v >= 1.0 && v <= 1000.0))
	{
		char	   *msg = bridge_printf("invalid value \"%%s\" for %s (a number from 1 to 1000, e.g. 1.5)", opt);

		usage_error(c, msg, arg);
	}
	return v;
}

/*
 * parse_long
 *		The value of a numeric option, between min and max, with an optional
 *		kB/MB/GB suffix when size_units; anything else is a usage error
 *		naming the option.
 */
static long
parse_long(const Command *c, const char *opt, const char *arg, long min, long max,
		   bool size_units)
{
	char	   *end;
	long		v;
	long		mult = 1;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (end == arg || errno != 0)
		goto bad;
	while (*end == ' ')
		end++;
	if (size_units && *end)
	{
		if (strcmp(end, "kB") == 0 || strcmp(end, "k") == 0 || strcmp(end, "K") == 0)
			mult = 1024L;
		else if (strcmp(end, "MB") == 0 || strcmp(end, "M") == 0)
			mult = 1024L * 1024;
		else if (strcmp(end, "GB") == 0 || strcmp(end, "G") == 0)
			mult = 1024L * 1024 * 1024;
		else
			goto bad;
		end += strlen(end);
	}
	if (*end != '\0' || v > max / mult)
		goto bad;
	v *= mult;
	if (v < min || v > max)
		goto bad;
	return v;

bad:
	{
		char	   *msg = bridge_printf("invalid value \"%%s\" for %s (an integer from %ld to %ld%s)",
										opt, min, max, size_units ? ", kB/MB/GB allowed" : "");

		usage_error(c, msg, arg);
	}
	return 0;					/* not reached */
}

/*
 * only_for_any
 *		A usage error when option opt is given to a command other than a
 *		and b.
 */
static void
only_for_any(const Command *cmd, const char *a, const char *b, const char *opt)
{
	if (strcmp(cmd->name, a) != 0 && strcmp(cmd->name, b) != 0)
		usage_error(cmd, "option \"%s\" is not an option of this command", opt);
}

/*
 * print_version
 *		"cqlbridge --version": the version of the cql_fdw it comes with.
 */
static void
print_version(void)
{
	printf("cqlbridge (cql_fdw) %s\n", CQLBRIDGE_VERSION);
}

/*
 * parse_replication
 *		--replication 'dc1:3,dc2:3': the data centers of a
 *		NetworkTopologyStrategy keyspace and their replication factors
 *		(1-100 each).  A DC name is written into 001 as a CQL string, so it
 *		may hold letters, digits, '_', '-' and '.' only.  The replication
 *		factor used for the size estimate becomes the sum (all copies).
 */
static void
parse_replication(const Command *c, const char *arg, BridgeOptions *opts)
{
	char	   *copy = bridge_strdup(arg);
	int			total = 0;

	opts->ndcs = 0;
	for (char *item = strtok(copy, ","); item; item = strtok(NULL, ","))
	{
		char	   *colon = strrchr(item, ':');
		char	   *name;
		char	   *end;
		long		rf;

		while (*item == ' ')
			item++;
		if (!colon || colon == item)
			usage_error(c, "invalid value \"%s\" for --replication (DC:N[,DC:N]..., e.g. 'dc1:3,dc2:3')", arg);
		*colon = '\0';
		name = bridge_trim_copy(item, strlen(item));
		for (char *p = name; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
				  *p == '_' || *p == '-' || *p == '.'))
				usage_error(c, "invalid data center name in --replication \"%s\" (letters, digits, '_', '-', '.')", arg);
		errno = 0;
		rf = strtol(colon + 1, &end, 10);
		while (*end == ' ')
			end++;
		if (name[0] == '\0' || end == colon + 1 || *end != '\0' || errno != 0 || rf < 1 || rf > 100)
			usage_error(c, "invalid value \"%s\" for --replication (each replication factor an integer from 1 to 100)", arg);
		for (int i = 0; i < opts->ndcs; i++)
			if (strcmp(opts->dc_names[i], name) == 0)
				usage_error(c, "data center named twice in --replication \"%s\"", arg);
		opts->dc_names = bridge_realloc(opts->dc_names, sizeof(char *) * (opts->ndcs + 1));
		opts->dc_rf = bridge_realloc(opts->dc_rf, sizeof(int) * (opts->ndcs + 1));
		if (!opts->dc_names || !opts->dc_rf)
			bridge_fatal("out of memory");
		opts->dc_names[opts->ndcs] = name;
		opts->dc_rf[opts->ndcs] = (int) rf;
		opts->ndcs++;
		total += (int) rf;
	}
	if (opts->ndcs == 0)
		usage_error(c, "invalid value \"%s\" for --replication (DC:N[,DC:N]..., e.g. 'dc1:3,dc2:3')", arg);
	opts->replication_factor = total;
	free(copy);
}

/*
 * level_in
 *		Whether consistency level name (any case) is one of levels, a
 *		space-separated list (--consistency, --write-consistency).
 */
static bool
level_in(const char *name, const char *levels)
{
	size_t		n = strlen(name);

	for (const char *l = levels; *l;)
	{
		size_t		len = strcspn(l, " ");

		if (len == n && strncasecmp(l, name, n) == 0)
			return true;
		l += len;
		l += strspn(l, " ");
	}
	return false;
}

/*
 * only_for
 *		A usage error when an option of another command is given to cmd.
 */
static void
only_for(const Command *cmd, const char *cmdname, const struct option *long_options,
		 int optidx)
{
	if (strcmp(cmd->name, cmdname) != 0)
		usage_error(cmd, "option \"--%s\" is not an option of this command",
					optidx >= 0 ? long_options[optidx].name : "?");
}

/*
 * main
 *		Parse the command and its options (getopt_long, psql-like connection
 *		options) into BridgeOptions and run the command; the process exit
 *		status is the command's.
 */
int
main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"dbname", required_argument, NULL, 'd'},
		{"host", required_argument, NULL, 'h'},
		{"port", required_argument, NULL, 'p'},
		{"username", required_argument, NULL, 'U'},
		{"password", no_argument, NULL, 'W'},
		{"version", no_argument, NULL, 'V'},
		{"replication", required_argument, NULL, OPT_REPLICATION},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"json", required_argument, NULL, OPT_JSON},
		{"table", required_argument, NULL, OPT_TABLE},
		{"quiet", no_argument, NULL, 'q'},
		{"output", required_argument, NULL, 'o'},
		{"workload", required_argument, NULL, OPT_WORKLOAD},
		{"schema", required_argument, NULL, OPT_SCHEMA},
		{"keyspace", required_argument, NULL, OPT_KEYSPACE},
		{"foreign-schema", required_argument, NULL, OPT_FOREIGN_SCHEMA},
		{"server", required_argument, NULL, OPT_SERVER},
		{"replication-factor", required_argument, NULL, OPT_RF},
		{"max-values", required_argument, NULL, OPT_MAX_VALUES},
		{"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
		{"growth", required_argument, NULL, OPT_GROWTH},
		{"no-bucket", no_argument, NULL, OPT_NO_BUCKET},
		{"strict", no_argument, NULL, OPT_STRICT},
		{"chunks", required_argument, NULL, OPT_CHUNKS},
		{"batch-rows", required_argument, NULL, OPT_BATCH_ROWS},
		{"restart", no_argument, NULL, OPT_RESTART},
		{"samples", required_argument, NULL, OPT_SAMPLES},
		{"uninstall", no_argument, NULL, OPT_UNINSTALL},
		{"show", no_argument, NULL, OPT_SHOW},
		{"top", required_argument, NULL, OPT_TOP},
		{"min-calls", required_argument, NULL, OPT_MIN_CALLS},
		{"role", required_argument, NULL, OPT_ROLE},
		{"examples", required_argument, NULL, OPT_EXAMPLES},
		{"repair", no_argument, NULL, OPT_REPAIR},
		{"consistency", required_argument, NULL, OPT_CONSISTENCY},
		{"write-consistency", required_argument, NULL, OPT_WRITE_CONSISTENCY},
		{"jobs", required_argument, NULL, OPT_JOBS},
		{"row-by-row", no_argument, NULL, OPT_ROW_BY_ROW},
		{"no-load", no_argument, NULL, OPT_NO_LOAD},
		{"status", no_argument, NULL, OPT_STATUS},
		{"drop", no_argument, NULL, OPT_DROP},
		{"warn-wal", required_argument, NULL, OPT_WARN_WAL},
		{"log-positions", no_argument, NULL, OPT_LOG_POSITIONS},
		{"replan", no_argument, NULL, OPT_REPLAN},
		{"drop-removed", no_argument, NULL, OPT_DROP_REMOVED},
		{"priority", required_argument, NULL, OPT_PRIORITY},
		{"yield-lag", required_argument, NULL, OPT_YIELD_LAG},
		{"flush-interval", required_argument, NULL, OPT_FLUSH_INTERVAL},
		{"help", no_argument, NULL, OPT_HELP},
		{NULL, 0, NULL, 0}
	};
	BridgeOptions opts;
	const Command *cmd = NULL;
	int			c;
	bool		have_rf = false;
	bool		have_replication = false;

	if (argc < 2)
	{
		usage_general(stderr);
		return BRIDGE_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-?") == 0 ||
		strcmp(argv[1], "help") == 0)
	{
		usage_general(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
	{
		print_version();
		return 0;
	}
	for (int i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			cmd = &commands[i];
	if (cmd == NULL)
		usage_error(NULL, "unknown command \"%s\" (workload, plan, apply, verify, diff, sync or stream)", argv[1]);

	memset(&opts, 0, sizeof(opts));
	opts.server = "cqlbridge";
	opts.replication_factor = 3;
	opts.max_values = 100000;
	opts.max_bytes = 100L * 1024 * 1024;
	opts.growth = 2.0;
	opts.samples = 5;
	opts.examples = 10;
	opts.jobs = 2;
	opts.warn_wal = 1024L * 1024 * 1024;
	opts.flush_interval_ms = 500;
	opts.priority = "auto";
	opts.yield_lag_s = 10;

	/* options of another command are usage errors, not silently ignored */
#define ONLY_FOR(cmdname) only_for(cmd, (cmdname), long_options, optidx)

	argv++;
	argc--;
	optind = 1;
	for (;;)
	{
		int			optidx = -1;

		c = getopt_long(argc, argv, "d:h:p:U:WVqo:", long_options, &optidx);
		if (c == -1)
			break;
		switch (c)
		{
			case 'd':
				opts.dbname = optarg;
				break;
			case 'h':
				opts.host = optarg;
				break;
			case 'p':
				opts.port = optarg;
				break;
			case 'U':
				opts.user = optarg;
				break;
			case 'q':
				opts.quiet = true;
				break;
			case 'W':
				opts.password_prompt = true;
				break;
			case 'V':
				print_version();
				return 0;
			case OPT_REPLICATION:
				ONLY_FOR("plan");
				parse_replication(cmd, optarg, &opts);
				have_replication = true;
				break;
			case 'o':
				if (strcmp(cmd->name, "workload") == 0)
				{
					opts.output = optarg;
					break;
				}
				/* the plan directory: -o DIR or DIR, for every command */
				if (opts.dir != NULL && strcmp(opts.dir, optarg) != 0)
					usage_error(cmd, "the plan directory is given twice (-o %s)", optarg);
				opts.dir = optarg;
				break;
			case OPT_TOP:
				ONLY_FOR("workload");
				opts.top = (int) parse_long(cmd, "--top", optarg, 1, 100000, false);
				break;
			case OPT_MIN_CALLS:
				ONLY_FOR("workload");
				opts.min_calls = parse_long(cmd, "--min-calls", optarg, 0, LONG_MAX, false);
				break;
			case OPT_ROLE:
				ONLY_FOR("workload");
				opts.role = optarg;
				break;
			case OPT_DRY_RUN:
				if (strcmp(cmd->name, "stream") != 0 && strcmp(cmd->name, "diff") != 0)
					only_for_any(cmd, "apply", "sync", "--dry-run");
				opts.dry_run = true;
				break;
			case OPT_JSON:
				if (strcmp(cmd->name, "plan") != 0 && strcmp(cmd->name, "diff") != 0)
					only_for_any(cmd, "apply", "verify", "--json");
				opts.json = optarg;
				break;
			case OPT_TABLE:
				if (strcmp(cmd->name, "diff") != 0)
					only_for_any(cmd, "apply", "verify", "--table");
				{
					int			n;
					char	  **items = bridge_split_list(optarg, &n);

					if (n == 0)
						usage_error(cmd, "invalid value \"%s\" for --table (a table name)", optarg);
					opts.tables = bridge_realloc(opts.tables, sizeof(char *) * (opts.ntables + n));
					if (!opts.tables)
						bridge_fatal("out of memory");
					for (int i = 0; i < n; i++)
						opts.tables[opts.ntables++] = items[i];
				}
				break;
			case OPT_WORKLOAD:
				ONLY_FOR("plan");
				opts.workload = optarg;
				break;
			case OPT_SCHEMA:
				if (strcmp(cmd->name, "workload") != 0)
					ONLY_FOR("plan");
				opts.source_schema = optarg;
				break;
			case OPT_KEYSPACE:
				ONLY_FOR("plan");
				opts.keyspace = optarg;
				break;
			case OPT_FOREIGN_SCHEMA:
				ONLY_FOR("plan");
				opts.foreign_schema = optarg;
				break;
			case OPT_SERVER:
				ONLY_FOR("plan");
				opts.server = optarg;
				break;
			case OPT_RF:
				ONLY_FOR("plan");
				have_rf = true;
				opts.replication_factor = (int) parse_long(cmd, "--replication-factor", optarg, 1, 100, false);
				break;
			case OPT_MAX_VALUES:
				ONLY_FOR("plan");
				opts.max_values = parse_long(cmd, "--max-values", optarg, 1, LONG_MAX, false);
				break;
			case OPT_MAX_BYTES:
				ONLY_FOR("plan");
				opts.max_bytes = parse_long(cmd, "--max-bytes", optarg, 1, LONG_MAX, true);
				break;
			case OPT_GROWTH:
				ONLY_FOR("plan");
				opts.growth = parse_factor(cmd, "--growth", optarg);
				break;
			case OPT_NO_BUCKET:
				ONLY_FOR("plan");
				opts.no_bucket = true;
				break;
			case OPT_STRICT:
				ONLY_FOR("plan");
				opts.strict = true;
				break;
			case OPT_CHUNKS:
				ONLY_FOR("apply");
				opts.chunks = (int) parse_long(cmd, "--chunks", optarg, 1, 65536, false);
				break;
			case OPT_BATCH_ROWS:
				ONLY_FOR("apply");
				opts.batch_rows = parse_long(cmd, "--batch-rows", optarg, 1, 100000000, false);
				break;
			case OPT_RESTART:
				if (strcmp(cmd->name, "diff") != 0)
					ONLY_FOR("apply");
				opts.restart = true;
				break;
			case OPT_SAMPLES:
				ONLY_FOR("verify");
				opts.samples = (int) parse_long(cmd, "--samples", optarg, 1, 100000, false);
				break;
			case OPT_UNINSTALL:
				ONLY_FOR("sync");
				opts.uninstall = true;
				break;
			case OPT_SHOW:
				ONLY_FOR("verify");
				opts.show = true;
				break;
			case OPT_EXAMPLES:
				ONLY_FOR("diff");
				opts.examples = (int) parse_long(cmd, "--examples", optarg, 0, 1000000, false);
				break;
			case OPT_REPAIR:
				ONLY_FOR("diff");
				opts.repair = true;
				break;
			case OPT_ROW_BY_ROW:
				ONLY_FOR("diff");
				opts.row_by_row = true;
				break;
			case OPT_CONSISTENCY:
				ONLY_FOR("diff");
				if (!level_in(optarg, "ONE TWO THREE QUORUM ALL LOCAL_QUORUM LOCAL_ONE SERIAL LOCAL_SERIAL"))
					usage_error(cmd, "invalid value \"%s\" for --consistency (ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, LOCAL_ONE, SERIAL or LOCAL_SERIAL)", optarg);
				opts.consistency = optarg;
				break;
			case OPT_WRITE_CONSISTENCY:
				if (strcmp(cmd->name, "apply") != 0 && strcmp(cmd->name, "stream") != 0)
					only_for_any(cmd, "sync", "diff", "--write-consistency");
				if (!level_in(optarg, "ANY ONE TWO THREE QUORUM ALL LOCAL_QUORUM EACH_QUORUM LOCAL_ONE"))
					usage_error(cmd, "invalid value \"%s\" for --write-consistency (ANY, ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM or LOCAL_ONE)", optarg);
				opts.write_consistency = optarg;
				break;
			case OPT_JOBS:
				ONLY_FOR("diff");
				opts.jobs = (int) parse_long(cmd, "--jobs", optarg, 1, 64, false);
				break;
			case OPT_NO_LOAD:
				ONLY_FOR("apply");
				opts.no_load = true;
				break;
			case OPT_STATUS:
				ONLY_FOR("stream");
				opts.stream_status = true;
				break;
			case OPT_DROP:
				ONLY_FOR("stream");
				opts.stream_drop = true;
				break;
			case OPT_WARN_WAL:
				ONLY_FOR("stream");
				opts.warn_wal = parse_long(cmd, "--warn-wal", optarg, 0, LONG_MAX, true);
				break;
			case OPT_LOG_POSITIONS:
				ONLY_FOR("stream");
				opts.log_positions = true;
				break;
			case OPT_REPLAN:
				ONLY_FOR("stream");
				opts.replan = true;
				break;
			case OPT_DROP_REMOVED:
				ONLY_FOR("stream");
				opts.drop_removed = true;
				break;
			case OPT_PRIORITY:
				ONLY_FOR("stream");
				if (strcmp(optarg, "background") == 0 || strcmp(optarg, "idle") == 0 ||
					strcmp(optarg, "normal") == 0 || strcmp(optarg, "auto") == 0)
					opts.priority = optarg;
				else
					usage_error(cmd, "invalid value \"%s\" for --priority (auto, normal, background or idle)", optarg);
				break;
			case OPT_YIELD_LAG:
				ONLY_FOR("stream");
				opts.yield_lag_s = (int) parse_long(cmd, "--yield-lag", optarg, 1, 3600, false);
				break;
			case OPT_FLUSH_INTERVAL:
				ONLY_FOR("stream");
				opts.flush_interval_ms = (int) parse_long(cmd, "--flush-interval", optarg, 10, 10000, false);
				break;
			case OPT_HELP:
				usage_command(cmd, stdout);
				return 0;
			default:
				/* getopt printed the message */
				fprintf(stderr, "Try \"cqlbridge %s --help\" for more information.\n", cmd->name);
				return BRIDGE_EXIT_USAGE;
		}
	}

	/* the plan directory: DIR, or -o DIR as plan writes it */
	if ((cmd->takes_dir || strcmp(cmd->name, "plan") == 0) && optind < argc)
	{
		if (opts.dir != NULL && strcmp(opts.dir, argv[optind]) != 0)
			usage_error(cmd, "the plan directory is given twice (-o and \"%s\")", argv[optind]);
		opts.dir = argv[optind++];
	}
	if (cmd->takes_dir)
	{
		if (opts.dir == NULL)
			usage_error(cmd, "missing the directory argument of \"%s\" (DIR or -o DIR)", cmd->name);
	}
	else if (strcmp(cmd->name, "workload") == 0)
	{
		if (opts.source_schema == NULL)
			usage_error(cmd, "%s needs --schema SCHEMA (the relational schema, e.g. hotel_rel)", "workload");
	}
	else if (strcmp(cmd->name, "plan") == 0)
	{
		if (opts.dir == NULL)
			usage_error(cmd, "%s needs -o DIR (or DIR)", "plan");
		if (opts.workload == NULL)
			usage_error(cmd, "%s needs --workload FILE", "plan");
		if (opts.source_schema == NULL)
			usage_error(cmd, "%s needs --schema SCHEMA (the relational schema, e.g. hotel_rel)", "plan");
	}
	if (optind < argc)
		usage_error(cmd, "too many arguments (first extra: \"%s\")", argv[optind]);
	if (have_rf && have_replication)
		usage_error(cmd, "give either --replication-factor or --replication, not both%s", "");

	/* derived defaults of plan */
	if (opts.keyspace == NULL && opts.source_schema != NULL)
	{
		size_t		n = strlen(opts.source_schema);
		char	   *ks = bridge_strdup(opts.source_schema);

		if (n > 4 && strcmp(ks + n - 4, "_rel") == 0)
			ks[n - 4] = '\0';

		/*
		 * A keyspace is 1-48 of [a-z0-9_] (plan checks it): make one of a
		 * schema name that needs quoting ("Hotel Rel" -> hotel_rel).
		 */
		for (char *c = ks; *c; c++)
		{
			if (*c >= 'A' && *c <= 'Z')
				*c = (char) (*c - 'A' + 'a');
			else if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
				*c = '_';
		}
		if (strlen(ks) > 48)
			ks[48] = '\0';
		opts.keyspace = ks;
	}
	if (opts.foreign_schema == NULL && opts.keyspace != NULL)
		opts.foreign_schema = bridge_printf("%s_cql", opts.keyspace);

	/* --json -: the report alone on stdout, the rest on stderr */
	if (opts.json != NULL && strcmp(opts.json, "-") == 0)
		bridge_json_to_stdout();

	if (strcmp(cmd->name, "stream") == 0)
	{
		if (opts.drop_removed && !opts.replan)
			usage_error(cmd, "%s goes with --replan", "--drop-removed");
		if (opts.dry_run && !opts.replan && !opts.stream_drop)
			usage_error(cmd, "%s goes with --replan or --drop", "--dry-run");
		if (opts.replan && (opts.stream_status || opts.stream_drop))
			usage_error(cmd, "--replan goes with neither --status nor --drop%s", "");
		if (opts.replan)
			return cmd_replan(&opts);
		if (opts.stream_drop && opts.dry_run)
			return cmd_stream_drop_dry_run(&opts);
	}
	if (strcmp(cmd->name, "diff") == 0 && opts.dry_run && !opts.repair)
		usage_error(cmd, "%s goes with --repair", "--dry-run");
	return cmd->run(&opts);
}

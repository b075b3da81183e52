/*-------------------------------------------------------------------------
 *
 * main.c
 *	  cqlbridge: move a relational schema and its queries to Cassandra
 *	  query tables through cql_fdw.
 *
 *	  cqlbridge plan   [options] --workload FILE -o DIR
 *	  cqlbridge apply  [options] DIR [--chunks N] [--batch-rows N] [--restart] [--no-load]
 *	  cqlbridge verify [options] DIR [--samples N]
 *	  cqlbridge sync   [options] DIR [--uninstall]
 *	  cqlbridge stream [options] DIR [--status | --drop]
 *
 * Connection options are psql's (-d -h -p -U, and the PG* environment
 * through libpq).  Usage errors exit with status 2, failures with 1.
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

#include "check/verify.h"
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
	OPT_CHUNKS,
	OPT_BATCH_ROWS,
	OPT_RESTART,
	OPT_SAMPLES,
	OPT_UNINSTALL,
	OPT_SHOW,
	OPT_NO_LOAD,
	OPT_STATUS,
	OPT_DROP,
	OPT_WARN_WAL,
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
"  -q, --quiet              no progress output\n"
"      --help               show this help and exit\n";

static const Command commands[] = {
	{"plan", "derive Cassandra query tables from the schema and workload",
		"cqlbridge plan [OPTION]... --schema SCHEMA --workload FILE -o DIR",
		"  --workload=FILE          the application's queries (block format)\n"
		"  --schema=SCHEMA          relational schema (e.g. hotel_rel)\n"
		"  --keyspace=NAME          Cassandra keyspace (default: schema without \"_rel\")\n"
		"  --foreign-schema=NAME    schema of the foreign tables (default: keyspace + \"_cql\")\n"
		"  --server=NAME            cql_fdw foreign server (default: cqlbridge)\n"
		"  --replication-factor=N   keyspace replication factor (default: 3)\n"
		"  --max-values=N           values per partition before a warning (default: 100000)\n"
		"  --max-bytes=SIZE         bytes per partition before a warning, kB/MB/GB allowed\n"
		"                           (default: 100MB)\n"
		"  --growth=FACTOR          a wide table's bucket must hold FACTOR times the\n"
		"                           widest bucket measured on the data (default: 2)\n"
		"  --no-bucket              keep wide tables unbucketed (with a warning)\n"
		"  -o, --output=DIR         directory to write model.txt, report.md, 001-005\n",
	cmd_plan, false},
	{"apply", "create the keyspace, tables and foreign tables, then load them",
		"cqlbridge apply [OPTION]... DIR",
		"  --batch-rows=N           rows per batch of a streamed table: the work a\n"
		"                           resumed load may repeat (default: 50000)\n"
		"  --chunks=N               load each table in N hash chunks, one transaction\n"
		"                           each, instead of streaming it (each chunk reads\n"
		"                           the whole source)\n"
		"  --restart                forget recorded progress and load everything again\n"
		"  --no-load                create the keyspace, tables, foreign tables and\n"
		"                           views only (\"cqlbridge stream\" loads from its slot)\n",
	cmd_apply, true},
	{"verify", "compare the workload's answers on both sides",
		"cqlbridge verify [OPTION]... DIR",
		"  --samples=N              parameter sets per query (default: 5)\n"
		"  --show                   also print, for the first sample of each query,\n"
		"                           the target statement, its EXPLAIN and its rows\n",
	cmd_verify, true},
	{"sync", "install triggers that keep the Cassandra tables up to date",
		"cqlbridge sync [OPTION]... DIR",
		"  --uninstall              remove the triggers instead\n",
	cmd_sync, true},
	{"stream", "load, then stream changes by logical decoding (online migration)",
		"cqlbridge stream [OPTION]... DIR",
		"  --status                 print the status of the stream of DIR and exit\n"
		"  --drop                   remove its replication slot, publication and\n"
		"                           tables (the source keeps no more WAL for it)\n"
		"  --warn-wal=SIZE          warn when the slot retains more WAL than SIZE,\n"
		"                           kB/MB/GB allowed (default: 1GB)\n",
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
		{"chunks", required_argument, NULL, OPT_CHUNKS},
		{"batch-rows", required_argument, NULL, OPT_BATCH_ROWS},
		{"restart", no_argument, NULL, OPT_RESTART},
		{"samples", required_argument, NULL, OPT_SAMPLES},
		{"uninstall", no_argument, NULL, OPT_UNINSTALL},
		{"show", no_argument, NULL, OPT_SHOW},
		{"no-load", no_argument, NULL, OPT_NO_LOAD},
		{"status", no_argument, NULL, OPT_STATUS},
		{"drop", no_argument, NULL, OPT_DROP},
		{"warn-wal", required_argument, NULL, OPT_WARN_WAL},
		{"help", no_argument, NULL, OPT_HELP},
		{NULL, 0, NULL, 0}
	};
	BridgeOptions opts;
	const Command *cmd = NULL;
	int			c;

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
	for (int i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			cmd = &commands[i];
	if (cmd == NULL)
		usage_error(NULL, "unknown command \"%s\" (plan, apply, verify, sync or stream)", argv[1]);

	memset(&opts, 0, sizeof(opts));
	opts.server = "cqlbridge";
	opts.replication_factor = 3;
	opts.max_values = 100000;
	opts.max_bytes = 100L * 1024 * 1024;
	opts.growth = 2.0;
	opts.samples = 5;
	opts.warn_wal = 1024L * 1024 * 1024;

	/* options of another command are usage errors, not silently ignored */
#define ONLY_FOR(cmdname) only_for(cmd, (cmdname), long_options, optidx)

	argv++;
	argc--;
	optind = 1;
	for (;;)
	{
		int			optidx = -1;

		c = getopt_long(argc, argv, "d:h:p:U:qo:", long_options, &optidx);
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
			case 'o':
				if (strcmp(cmd->name, "plan") != 0)
					usage_error(cmd, "option \"%s\" is only for plan", "-o");
				opts.dir = optarg;
				break;
			case OPT_WORKLOAD:
				ONLY_FOR("plan");
				opts.workload = optarg;
				break;
			case OPT_SCHEMA:
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
			case OPT_CHUNKS:
				ONLY_FOR("apply");
				opts.chunks = (int) parse_long(cmd, "--chunks", optarg, 1, 65536, false);
				break;
			case OPT_BATCH_ROWS:
				ONLY_FOR("apply");
				opts.batch_rows = parse_long(cmd, "--batch-rows", optarg, 1, 100000000, false);
				break;
			case OPT_RESTART:
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
			case OPT_HELP:
				usage_command(cmd, stdout);
				return 0;
			default:
				/* getopt printed the message */
				fprintf(stderr, "Try \"cqlbridge %s --help\" for more information.\n", cmd->name);
				return BRIDGE_EXIT_USAGE;
		}
	}

	if (cmd->takes_dir)
	{
		if (optind >= argc)
			usage_error(cmd, "missing the directory argument of \"%s\"", cmd->name);
		opts.dir = argv[optind++];
	}
	else if (strcmp(cmd->name, "plan") == 0)
	{
		if (opts.dir == NULL)
			usage_error(cmd, "%s needs -o DIR", "plan");
		if (opts.workload == NULL)
			usage_error(cmd, "%s needs --workload FILE", "plan");
		if (opts.source_schema == NULL)
			usage_error(cmd, "%s needs --schema SCHEMA (the relational schema, e.g. hotel_rel)", "plan");
	}
	if (optind < argc)
		usage_error(cmd, "too many arguments (first extra: \"%s\")", argv[optind]);

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

	return cmd->run(&opts);
}

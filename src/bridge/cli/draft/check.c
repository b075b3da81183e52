/*-------------------------------------------------------------------------
 *
 * check.c
 *	  Would "cqlbridge plan" serve a drafted block?  The answer comes from
 *	  plan's own code (read the block, the catalog, cql_bridge_analyze,
 *	  the mapping rules MR2-MR5), not from a second set of rules that could
 *	  drift from it.
 *
 * Plan stops at the first problem with a message and exit status: that is
 * its contract with its users, so the check runs it in a child process
 * (fork) with its own connection, and the child's message becomes the
 * reason written above the commented-out block.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/draft/check.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "draft/draft.h"
#include "plan/plan.h"

/*
 * run_plan_rules
 *		In the child: plan's steps up to the mapping (plan_serve: a table,
 *		or a composition of two), on the one-block workload file path.
 *		Returns only when plan serves it.
 */
static void
run_plan_rules(const BridgeOptions *opts, const char *path)
{
	Plan		p;
	BridgeOptions strict = *opts;

	/* --strict: the statement's failure ends the child with its reason */
	strict.strict = true;
	memset(&p, 0, sizeof(p));
	p.opts = opts;
	p.cat.schema = bridge_strdup(opts->source_schema);
	p.keyspace = bridge_strdup("draft");
	p.foreign_schema = bridge_strdup("draft_cql");
	p.server = bridge_strdup("cqlbridge");
	p.workload_path = bridge_strdup(path);
	plan_read_workload(&p);
	p.conn = bridge_connect(opts);
	plan_read_catalog(&p);
	/* served, composed of two tables, or left out with plan's reason */
	p.opts = &strict;
	plan_serve(&p);
	PQfinish(p.conn);
}

/*
 * reason_of
 *		The child's stderr as one line: "cqlbridge: " prefixes and the
 *		temporary file's name out, lines joined by "; ".
 */
static char *
reason_of(const char *out, const char *path)
{
	StrBuf		sb;
	char	   *copy = bridge_strdup(out);

	sb_init(&sb);
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n"))
	{
		char	   *l = line;
		char	   *at;

		if (strncmp(l, "cqlbridge: ", 11) == 0)
			l += 11;
		if (strncmp(l, "HINT:  ", 7) == 0)
		{
			sb_append(&sb, "; HINT: ");
			l += 7;
		}
		else if (sb.len)
			sb_append(&sb, "; ");
		/* "query Q (/tmp/x:1): ..." -> "query Q: ..." */
		while ((at = strstr(l, path)) != NULL)
		{
			char	   *close = strchr(at, ')');

			if (at - l >= 2 && at[-1] == '(' && at[-2] == ' ' && close)
			{
				at[-2] = '\0';
				sb_append(&sb, l);
				l = close + 1;
			}
			else
			{
				*at = '\0';
				sb_append(&sb, l);
				sb_append(&sb, "workload");
				l = at + strlen(path);
			}
		}
		sb_append(&sb, l);
	}
	free(copy);
	if (sb.data == NULL)
		sb_append(&sb, "plan refused it (no message)");
	/* "query Q10_x: " names the block the reason is written above */
	if (strncmp(sb.data, "query ", 6) == 0 && strstr(sb.data, ": "))
		return bridge_strdup(strstr(sb.data, ": ") + 2);
	return sb.data;
}

/*
 * draft_check_block
 *		NULL when plan's rules accept the block (one workload block), else
 *		plan's message (allocated).
 */
char *
draft_check_block(const BridgeOptions *opts, const char *block)
{
	char		path[] = "/tmp/cqlbridge_draft_XXXXXX";
	int			fd = mkstemp(path);
	int			pipefd[2];
	pid_t		pid;
	StrBuf		out;
	char		buf[4096];
	ssize_t		got;
	int			status;
	size_t		len = strlen(block);

	if (fd < 0)
		bridge_fatal("could not create a temporary file: %s", strerror(errno));
	if (write(fd, block, len) != (ssize_t) len || close(fd) != 0)
		bridge_fatal("could not write \"%s\": %s", path, strerror(errno));
	if (pipe(pipefd) != 0)
		bridge_fatal("could not create a pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		bridge_fatal("could not fork: %s", strerror(errno));
	if (pid == 0)
	{
		close(pipefd[0]);
		dup2(pipefd[1], 2);
		dup2(pipefd[1], 1);
		close(pipefd[1]);
		run_plan_rules(opts, path);
		fflush(NULL);
		_exit(0);
	}
	close(pipefd[1]);
	sb_init(&out);
	while ((got = read(pipefd[0], buf, sizeof(buf) - 1)) > 0 ||
		   (got < 0 && errno == EINTR))
	{
		if (got <= 0)
			continue;
		buf[got] = '\0';
		sb_append(&out, buf);
	}
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			bridge_fatal("waiting for the plan check failed: %s", strerror(errno));
	unlink(path);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
	{
		sb_free(&out);
		return NULL;
	}
	return reason_of(out.data ? out.data : "", path);
}

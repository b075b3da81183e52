/*-------------------------------------------------------------------------
 *
 * diff_jobs.c
 *	  cqlbridge diff --jobs N: the query tables compared N at a time, each
 *	  in a worker process of its own.
 *
 * A table's comparison waits on its backends most of the time (the source
 * view is evaluated and sorted whole before its first row comes out, the
 * Cassandra side is a scan), so comparing tables side by side keeps the
 * machine busy where one table after another leaves it idle.  The parent
 * forks one worker per table, at most N at a time, the largest tables (by
 * the plan's row count) first.  A worker opens its own three sessions
 * (never one inherited from the parent), runs the comparison of one table
 * (diff_compare), which records every token range it compares in the
 * checkpoint tables (diff_progress.c), and ends with _exit.  Once every
 * worker ended, the parent reads each table's result back from those
 * records, exactly as a resumed run reads the tables an interrupted run
 * compared; the report, the repair and the exit status are then the
 * single-process ones.
 *
 * Each worker's stderr is a pipe the parent relays line by line (so that
 * the parent's progress line on a terminal, read from the checkpoint rows,
 * stays readable).  A worker that fails (its message relayed) makes the
 * parent stop the others (SIGTERM) and exit with status 2.  SIGINT/SIGTERM
 * of the parent is passed on to the workers, which cancel their statements
 * and exit silently; the parent waits for them and reports the
 * interruption once.  A worker whose parent dies (SIGKILL) gets SIGTERM
 * (bridge_cancel_forked), so no record is written after the parent is
 * gone.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/check/diff_jobs.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check/diff.h"

/* One worker process: the table it compares and the read end of its stderr */
typedef struct DiffJob
{
	pid_t		pid;			/* 0: ended and reaped */
	int			fd;				/* -1: closed (the worker's end is closed) */
	int			table;
	StrBuf		partial;		/* a line of its stderr not yet complete */
} DiffJob;

/* the workers running, for the exit handler */
static DiffJob *jobs_list;
static int	jobs_n;
static pid_t jobs_parent;

/*
 * jobs_signal
 *		Send sig to every worker still running.
 */
static void
jobs_signal(int sig)
{
	for (int j = 0; j < jobs_n; j++)
		if (jobs_list[j].pid > 0)
			(void) kill(jobs_list[j].pid, sig);
}

/*
 * jobs_at_exit
 *		The parent exits (an error of its own, an interruption noticed in a
 *		statement): stop the workers and wait for them, so that none writes
 *		a record after the parent is gone.  A worker that does not stop
 *		within 5 s (a server that does not answer its cancel) is killed.
 *		Workers inherit this handler: it does nothing in them.
 */
static void
jobs_at_exit(void)
{
	double		t0 = bridge_now();
	bool		killed = false;

	if (getpid() != jobs_parent)
		return;
	for (int j = 0; j < jobs_n; j++)
		if (jobs_list[j].fd >= 0)
		{
			close(jobs_list[j].fd);
			jobs_list[j].fd = -1;
		}
	jobs_signal(SIGTERM);
	for (int j = 0; j < jobs_n; j++)
		while (jobs_list[j].pid > 0)
		{
			pid_t		r = waitpid(jobs_list[j].pid, NULL, WNOHANG);

			if (r == jobs_list[j].pid || (r < 0 && errno != EINTR))
				jobs_list[j].pid = 0;
			else if (!killed && bridge_now() - t0 > 5)
			{
				jobs_signal(SIGKILL);
				killed = true;
			}
			else
			{
				struct timespec ts = {0, 10 * 1000 * 1000};

				nanosleep(&ts, NULL);
			}
		}
}

/*
 * job_worker
 *		The worker process of table t: its own sessions, the comparison,
 *		_exit.  Errors exit with status 2 and their message on stderr.
 */
static void
job_worker(const BridgeOptions *opts, DiffTable *t, DiffProgress *p,
		   pid_t parent, int errfd)
{
	PGconn	   *src;
	PGconn	   *tgt;

	bridge_cancel_forked(parent);
	/* the read ends of the other workers' pipes are the parent's */
	for (int j = 0; j < jobs_n; j++)
		if (jobs_list[j].fd >= 0)
			close(jobs_list[j].fd);
	if (dup2(errfd, STDERR_FILENO) < 0)
		_exit(BRIDGE_EXIT_ERROR);
	close(errfd);
	src = diff_open_source(opts);
	tgt = diff_open_target(opts);
	p->conn = bridge_connect(opts);
	diff_compare(src, tgt, p, t, false, opts);
	PQfinish(p->conn);
	PQfinish(src);
	PQfinish(tgt);
	fflush(stderr);
	_exit(0);
}

/*
 * job_start
 *		Fork the worker of table i into job j.
 */
static void
job_start(const BridgeOptions *opts, DiffTable *tables, DiffProgress *progs,
		  int i, DiffJob *job)
{
	int			fds[2];
	pid_t		pid;

	if (pipe(fds) != 0)
		bridge_fatal("could not create a pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		bridge_fatal("could not start a process for the diff of %s: %s",
					 tables[i].target, strerror(errno));
	if (pid == 0)
	{
		close(fds[0]);
		job_worker(opts, &tables[i], &progs[i], jobs_parent, fds[1]);
	}
	close(fds[1]);
	job->pid = pid;
	job->fd = fds[0];
	job->table = i;
	sb_init(&job->partial);
}

/*
 * job_relay
 *		Read what the worker wrote to stderr and print its complete lines
 *		(the rest at its end); on a terminal the progress line is cleared
 *		first.  The pipe's end closes the fd.
 */
static void
job_relay(DiffJob *job, bool tty)
{
	char		buf[4096];
	ssize_t		n = read(job->fd, buf, sizeof(buf));
	char	   *nl;

	if (n < 0 && errno == EINTR)
		return;
	if (n > 0)
	{
		for (ssize_t k = 0; k < n; k++)
			sb_appendc(&job->partial, buf[k]);
	}
	else
	{
		close(job->fd);
		job->fd = -1;
		if (job->partial.len > 0)
			sb_appendc(&job->partial, '\n');
	}
	nl = job->partial.len > 0 ? strrchr(job->partial.data, '\n') : NULL;
	if (nl == NULL)
		return;
	if (tty)
		fputs("\r\033[K", stderr);
	fwrite(job->partial.data, 1, (size_t) (nl + 1 - job->partial.data), stderr);
	fflush(stderr);
	job->partial.len -= (size_t) (nl + 1 - job->partial.data);
	memmove(job->partial.data, nl + 1, job->partial.len + 1);
}

/*
 * show_progress
 *		The parent's progress line (terminal only): tables compared, rows
 *		of every table so far (the recorded ranges), the rate since the
 *		start and the ETA.
 */
static void
show_progress(PGconn *conn, bool repair, DiffTable *tables, int n, const char *targets,
			  int done, int running, long long base, double t0)
{
	const char *params[2] = {targets, repair ? "true" : "false"};
	PGresult   *res;
	long long	rows;
	long long	expected = 0;
	double		rate;

	res = bridge_exec(conn, "reading diff checkpoints",
					  "SELECT coalesce(sum(GREATEST(s, t)), 0) FROM"
					  " (SELECT sum(src_rows) s, sum(tgt_rows) t FROM cqlbridge.diff_progress"
					  "  WHERE target = ANY (pg_catalog.string_to_array($1, E'\\n'))"
					  "  AND repair = $2::boolean GROUP BY target) x",
					  2, params);
	rows = atoll(PQgetvalue(res, 0, 0));
	PQclear(res);
	for (int i = 0; i < n; i++)
		expected += tables[i].expected;
	rate = bridge_now() > t0 ? (rows - base) / (bridge_now() - t0) : 0;
	fprintf(stderr, "\r\033[Kdiff: %d of %d tables compared, %d running: %lld", done, n, running, rows);
	if (expected > rows)
		fprintf(stderr, "/%lld", expected);
	fprintf(stderr, " rows, %.0f rows/s", rate);
	if (rate > 0 && expected > rows)
		fprintf(stderr, ", ETA %.0fs", (expected - rows) / rate);
	fflush(stderr);
}

/*
 * job_ended
 *		Reap the worker whose stderr closed.  false when it failed: its
 *		message was relayed, or it is said here when a signal ended it.
 */
static bool
job_ended(DiffJob *job, DiffTable *tables)
{
	int			st;
	pid_t		r;

	while ((r = waitpid(job->pid, &st, 0)) < 0 && errno == EINTR)
		;
	job->pid = 0;
	sb_free(&job->partial);
	if (r < 0)
		bridge_fatal("diff of %s: could not wait for its process: %s",
					 tables[job->table].target, strerror(errno));
	if (WIFEXITED(st))
		return WEXITSTATUS(st) == 0;
	if (!bridge_interrupted())
		fprintf(stderr, "cqlbridge: diff of %s: its process ended by signal %d (%s)\n",
				tables[job->table].target, WTERMSIG(st), strsignal(WTERMSIG(st)));
	return false;
}

/*
 * diff_jobs_run
 *		Compare the tables todo[0..ntodo-1] (indexes into tables and progs,
 *		whose records were read by diff_progress_resume) in up to 'jobs'
 *		worker processes, then read every one's result back from the
 *		records into tables.  An interruption or a worker's failure exits
 *		with status 2, once the workers ended.
 */
void
diff_jobs_run(const BridgeOptions *opts, PGconn *prog_conn, DiffTable *tables,
			  DiffProgress *progs, int n, const int *todo, int ntodo, int jobs)
{
	int		   *order = bridge_malloc(sizeof(int) * ntodo);
	int			next = 0;
	int			done = n - ntodo;
	int			running = 0;
	bool		failed = false;
	bool		stopping = false;
	bool		tty = isatty(fileno(stderr)) && !opts->quiet;
	struct pollfd *pfd = bridge_malloc(sizeof(struct pollfd) * jobs);
	DiffJob   **pjob = bridge_malloc(sizeof(DiffJob *) * jobs);
	StrBuf		targets;
	long long	base = 0;
	double		t0 = bridge_now();
	double		shown = 0;

	/* the largest tables first: the last ones to start are then short */
	for (int k = 0; k < ntodo; k++)
	{
		int			m = k;

		while (m > 0 && tables[order[m - 1]].expected < tables[todo[k]].expected)
		{
			order[m] = order[m - 1];
			m--;
		}
		order[m] = todo[k];
	}
	sb_init(&targets);
	for (int i = 0; i < n; i++)
	{
		sb_appendf(&targets, "%s%s", i ? "\n" : "", tables[i].target);
		base += tables[i].src_rows > tables[i].tgt_rows ? tables[i].src_rows : tables[i].tgt_rows;
	}
	jobs_list = calloc(ntodo, sizeof(DiffJob));
	if (jobs_list == NULL)
		bridge_fatal("out of memory");
	jobs_parent = getpid();
	atexit(jobs_at_exit);

	while (next < ntodo || running > 0)
	{
		int			npfd = 0;

		if (bridge_interrupted() || failed)
		{
			/* pass the interruption on (or stop the others of a failure), once */
			if (!stopping)
				jobs_signal(SIGTERM);
			stopping = true;
		}
		while (!stopping && running < jobs && next < ntodo)
		{
			job_start(opts, tables, progs, order[next++], &jobs_list[jobs_n]);
			jobs_n++;
			running++;
		}
		for (int j = 0; j < jobs_n; j++)
			if (jobs_list[j].fd >= 0)
			{
				pfd[npfd].fd = jobs_list[j].fd;
				pfd[npfd].events = POLLIN;
				pjob[npfd++] = &jobs_list[j];
			}
		if (npfd == 0)
		{
			if (stopping)
				break;
			continue;
		}
		if (poll(pfd, npfd, tty ? 200 : 1000) < 0 && errno != EINTR)
			bridge_fatal("could not wait for the diff processes: %s", strerror(errno));
		for (int k = 0; k < npfd; k++)
			if (pfd[k].revents != 0)
			{
				job_relay(pjob[k], tty);
				if (pjob[k]->fd < 0)
				{
					if (!job_ended(pjob[k], tables))
						failed = true;
					else
						done++;
					running--;
				}
			}
		if (tty && !stopping && bridge_now() - shown > 0.5)
		{
			shown = bridge_now();
			show_progress(prog_conn, opts->repair, tables, n, targets.data, done, running, base, t0);
		}
	}
	if (tty)
		fputs("\r\033[K", stderr);
	bridge_check_interrupt(NULL);
	if (failed)
		exit(BRIDGE_EXIT_ERROR);

	/* every range of every table recorded: read them back, as a resumed run does */
	for (int k = 0; k < ntodo; k++)
	{
		DiffTable  *t = &tables[todo[k]];

		t->src_rows = t->tgt_rows = 0;
		t->missing = t->extra = t->different = 0;
		memset(t->col_diffs, 0, sizeof(long long) * t->ncols);
		t->nexamples = 0;
		t->nrepair = 0;
		diff_progress_resume(&progs[todo[k]], t, opts->examples);
		if (progs[todo[k]].next < DIFF_RANGES)
			bridge_fatal("internal error: the diff of %s ended with %d of %d token ranges recorded",
						 t->target, progs[todo[k]].next, DIFF_RANGES);
	}
	sb_free(&targets);
	free(order);
	free(pfd);
	free(pjob);
}

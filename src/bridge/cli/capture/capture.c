/*-------------------------------------------------------------------------
 *
 * capture.c
 *	  "cqlbridge stream DIR [--status | --drop]": the long-running process
 *	  that keeps the Cassandra query tables in step with the relational
 *	  tables from PostgreSQL's logical decoding.
 *
 * The loop reads the slot's changes (whole committed transactions,
 * pgoutput version 1), queues what each change may affect (keys.c) and
 * flushes at a transaction boundary when --flush-interval (500 ms) passed
 * since the first unflushed change or 5000 requests are queued
 * (writer.c); inside a large transaction, in chunks of 5000 requests.
 * After a flush committed (Cassandra acknowledged every write), the
 * commit's end LSN is confirmed to the slot.  Any failure of
 * PostgreSQL or Cassandra drops what was not flushed, reconnects with
 * backoff (1 s doubling to 15 s; back to 1 s once a session confirmed
 * something) and resumes from the slot: at least once,
 * and each replayed key is recomputed from the current data (idempotent).
 * The source's DDL does not stop it unless it changes what the plan reads
 * (relations.c); partitions created, attached, detached, dropped or
 * truncated are polled for (partitions.c).  SIGINT/SIGTERM: flush what
 * was received, confirm it, exit 0.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/capture.c
 *
 *-------------------------------------------------------------------------
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

#define FLUSH_REQUESTS	5000	/* or this many queued requests */
#define BEHIND_S		2.0		/* a commit this old: the stream is behind */
#define FLUSH_AFTER_BEHIND_S 1.0	/* and then coalesces at least this long */
#define FLUSH_REQUESTS_BEHIND 20000 /* and more (bench/README.md) */
#define STATUS_EVERY_S	10.0	/* standby status update at least this often */
#define IDLE_CONFIRM_S	0.1		/* commits without work confirmed at most
								 * this often: each confirmation polls the
								 * partitions, and cap_read returns empty
								 * after each of its 20 ms pauses */
#define PG_EPOCH_UNIX	946684800.0
#define BACKOFF_MAX_S	15.0	/* retry interval after repeated failures */

static volatile sig_atomic_t stop_signal = 0;

static void
on_stop(int signo)
{
	if (stop_signal)
		_exit(BRIDGE_EXIT_ERROR);	/* a second signal: now */
	stop_signal = signo;
}

typedef enum
{
	SESSION_STOP,				/* signal: flushed and confirmed */
	SESSION_RETRY,				/* a failure: reconnect and resume */
} SessionEnd;

typedef struct Stream
{
	const BridgeOptions *opts;
	CapPlan    *p;
	PGconn	   *conn;
	PGconn	   *repl;
	CapKeySet	req;
	CapStats	st;
	StrBuf		xids;			/* bigint[] literal body: the batch's xids */
	uint32_t	cur_xid;
	bool		tty;
	char		err[1024];
} Stream;

/* Stop the process with a message (and hint): a change it must not apply. */
static void
stop_fatal(Stream *s, const char *hint, const char *msg)
{
	if (s->conn && PQstatus(s->conn) == CONNECTION_OK)
	{
		snprintf(s->st.last_error, sizeof(s->st.last_error), "%s", msg);
		cap_status_update(s->conn, s->p, &s->st, true, false, true);
	}
	if (s->tty)
		fputc('\n', stderr);
	bridge_fatal_hint(hint, "%s", msg);
}

/*
 * lower_priority
 *		The backend of conn (the walsender when replication) at the
 *		stream's --priority (priority.c); true when done or not needed,
 *		false with s->err set.
 */
static bool
lower_priority(Stream *s, PGconn *conn, bool replication)
{
	return cap_priority_session(conn, replication, s->opts, bridge_extension_schema(s->conn),
								s->err, sizeof(s->err));
}

/*
 * checked
 *		The outcome of a check of relations.c or partitions.c: true when
 *		it passed, false when the session must be retried (s->err says
 *		why); a fatal one stops the process with its message and hint.
 */
static bool
checked(Stream *s, CapCheck c, const char *hint)
{
	if (c == CAP_CHECK_FATAL)
		stop_fatal(s, hint, s->err);
	return c == CAP_CHECK_OK;
}

/*
 * relation_message
 *		A Relation message: for a source relation (by OID), its columns are
 *		matched to those the plan reads (relations.c).  Columns added,
 *		dropped or retyped that the plan does not read, generated columns
 *		and renames do not stop the stream; a read column gone or retyped
 *		does, before anything of the transaction is written (the slot
 *		resumes there after a new plan).  False with s->err when the
 *		catalog could not be read (retry the session).
 */
static bool
relation_message(Stream *s, CapMessage *m)
{
	const char *hint = NULL;
	CapCheck	c = cap_relation_message(s->conn, s->p, &m->rel, s->err, sizeof(s->err), &hint);

	return checked(s, c, hint);
}

/*
 * check_failure
 *		After a failed flush: stop (not retry forever) when an object the
 *		stream reads was dropped (relations.c), or a Cassandra table it
 *		writes (setup.c).
 */
static void
check_failure(Stream *s)
{
	char		err[1024];
	const char *hint = NULL;

	if (PQstatus(s->conn) == CONNECTION_OK &&
		cap_views_check(s->conn, s->p, err, sizeof(err), &hint) == CAP_CHECK_FATAL)
	{
		char	   *msg = bridge_printf("%s; the flush failed: %s", err, s->err);

		stop_fatal(s, hint, msg);
	}
	if (PQstatus(s->conn) == CONNECTION_OK)
	{
		char	   *gone = NULL;

		cap_target_missing(s->conn, s->p, &gone);
		if (gone != NULL)
			stop_fatal(s, "Nothing of the changes since the last confirmation was written, and the slot keeps them. Create the tables again (\"cqlbridge apply DIR --no-load\"); they are empty then: remove the stream (\"cqlbridge stream DIR --drop\") and start it again, which loads them.",
					   bridge_printf("%s; the flush failed: %s", gone, s->err));
	}
}

/*
 * poll_partitions
 *		Partitions of the source relations created, attached, detached,
 *		dropped or truncated since the last poll (partitions.c): their keys
 *		are queued for the next flush (first_unflushed, when not NULL, set
 *		if it was not).  False with s->err when the catalog could not be
 *		read.
 */
static bool
poll_partitions(Stream *s, double *first_unflushed)
{
	const char *hint = NULL;
	size_t		before = s->req.n;
	CapCheck	c = cap_partitions_poll(s->conn, s->p, &s->req, s->err, sizeof(s->err), &hint);

	if (!checked(s, c, hint))
		return false;
	if (first_unflushed && s->req.n > before && *first_unflushed == 0)
		*first_unflushed = bridge_now();
	return true;
}

/* A --log-positions line: lsn as X/Y after the text. */
static void
trace_lsn(const Stream *s, const char *what, CapLsn lsn, const char *more)
{
	char	   *t;

	if (!s->opts->log_positions)
		return;
	t = cap_lsn_text(lsn);
	cap_log("position: %s %s%s", what, t, more ? more : "");
	free(t);
}

/*
 * send_status
 *		A standby status update with the positions received and confirmed;
 *		false with s->err on failure.
 */
static bool
send_status(Stream *s)
{
	if (cap_send_status(s->repl, s->st.received, s->st.confirmed, false))
		return true;
	snprintf(s->err, sizeof(s->err), "sending the confirmed position failed: %s", PQerrorMessage(s->repl));
	return false;
}

/* Seconds from commit_time (a commit timestamp: microseconds since 2000) to now. */
static double
commit_age(int64_t commit_time)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9 - (commit_time / 1e6 + PG_EPOCH_UNIX);
}

/*
 * flush_and_confirm
 *		Flush what was received, then confirm upto (why: for
 *		--log-positions); false with s->err on failure.  open_xid, when not
 *		0, is the transaction being received (a chunk of a large one): its
 *		changes so far are flushed on a snapshot that sees it, and upto is
 *		the commit before it.
 */
static bool
flush_and_confirm(Stream *s, CapLsn upto, int64_t commit_time, const char *why,
				  uint32_t open_xid)
{
	/*
	 * Partitions changed before upto was received are in this flush: a
	 * position confirmed implies them too (partitions.c).  A poll that
	 * failed (the database going away, e.g. a fast shutdown waiting for
	 * this confirmation) is done again at the next session's start.
	 */
	s->p->parts_polled = 0;
	(void) poll_partitions(s, NULL);
	if (s->req.n > 0 || cap_pending_total(s->p) > 0 || cap_direct_count(s->p) > 0)
	{
		char	   *xids;
		StrBuf		lit;

		/*
		 * A status update first (the position already confirmed): the
		 * walsender ends a connection that sent none for
		 * wal_sender_timeout (60 s), and nothing is read while the flush
		 * runs.
		 */
		if (!send_status(s))
			return false;

		sb_init(&lit);
		sb_appendf(&lit, "{%s", s->xids.data ? s->xids.data : "");
		if (open_xid)
			sb_appendf(&lit, "%s%u", s->xids.len ? "," : "", (unsigned) open_xid);
		sb_appendc(&lit, '}');
		xids = lit.data;

		if (!cap_flush(s->conn, s->p, &s->req, xids, &s->st.flushed_keys, s->err, sizeof(s->err)))
		{
			free(xids);
			check_failure(s);
			return false;
		}
		free(xids);
		if (commit_time)
		{
			s->st.lag_seconds = commit_age(commit_time);
			if (s->st.lag_seconds < 0)
				s->st.lag_seconds = 0;
		}
	}
	s->xids.len = 0;
	s->xids.data[0] = '\0';
	if (upto > s->st.confirmed)
		s->st.confirmed = upto;
	if (s->p->replay_until != 0 && s->st.confirmed >= s->p->replay_until)
		s->p->replay_until = 0; /* past what an earlier session can have
								 * written */
	if (s->opts->log_positions)
	{
		char	   *r = cap_lsn_text(s->st.received);
		char	   *more = bridge_printf(" (received %s; %s)", r, why);

		trace_lsn(s, "confirm", s->st.confirmed, more);
		free(more);
		free(r);
	}
	return send_status(s);
}

/*
 * behind
 *		Whether the last commit received is more than BEHIND_S old: the
 *		stream is catching up (a backlog in the slot), so larger flushes pay
 *		(each flush's statements cost a fixed part plus a part per key; per
 *		change the stream's backend spent 0.13 ms of CPU at 1,000/s and
 *		0.05 ms in the larger flushes of a catch-up).  Live, the short
 *		window keeps the lag low.
 */
static bool
behind(int64_t commit_time)
{
	return commit_time != 0 && commit_age(commit_time) > BEHIND_S;
}

/*
 * flush_window
 *		How long changes are coalesced before a flush: --flush-interval
 *		(500 ms by default), at least FLUSH_AFTER_BEHIND_S while catching
 *		up.  A flush does not wait for the stream to fall quiet: with
 *		asynchronous commits the walsender sends WAL in bursts (each
 *		wal_writer_delay), and a flush after every burst cost twice the
 *		CPU of Cassandra and of the stream's backend that one every 500 ms
 *		costs (each flush merges its rows into every partition it touches;
 *		each runs the same statements), bench/README.md.
 */
static double
flush_window(const Stream *s, bool late)
{
	double		w = s->opts->flush_interval_ms / 1000.0;

	return late && w < FLUSH_AFTER_BEHIND_S ? FLUSH_AFTER_BEHIND_S : w;
}

/*
 * slot_check
 *		After the replication connection failed: a slot that can no longer
 *		give the changes (invalidated: its WAL removed under
 *		max_slot_wal_keep_size, which also ends the walsender holding it)
 *		stops the stream with what happened, as a dropped slot does,
 *		instead of a retry that can never succeed.  A failed lookup (the
 *		database is away) is left to the retry.
 */
static void
slot_check(Stream *s)
{
	char	   *gone = NULL;

	if (s->conn && PQstatus(s->conn) == CONNECTION_OK &&
		cap_slot_unusable(s->conn, s->p, &gone, NULL, 0) && gone != NULL)
		stop_fatal(s, cap_reload_hint, gone);
}

/*
 * replay_horizon
 *		At a session's start: the WAL insert position, up to which the
 *		changes the slot gives again may have been written to Cassandra
 *		already, by a flush of an earlier session (or process) that failed
 *		or was not confirmed.  Such a flush wrote the last states of its
 *		rows, which may be earlier states of this session's flushes: until
 *		the stream has confirmed past that position, a direct table's flush
 *		deletes the keys of its rows' earlier states too (direct.c).  After
 *		it, an earlier state was never written by anyone, and deleting its
 *		key would only leave a tombstone: a row whose key moves ten times
 *		between two flushes would leave ten in the partitions it passed.
 *		False with s->err when the query fails.
 */
static bool
replay_horizon(Stream *s)
{
	PGresult   *res = cap_exec(s->conn, "SELECT pg_catalog.pg_current_wal_insert_lsn()", 0, NULL,
							   s->err, sizeof(s->err));
	bool		ok = res != NULL && PQntuples(res) == 1 &&
		cap_parse_lsn(PQgetvalue(res, 0, 0), &s->p->replay_until);

	if (res != NULL && !ok)
		snprintf(s->err, sizeof(s->err), "the WAL insert position could not be read");
	PQclear(res);
	return ok;
}

/*
 * session
 *		Stream from the slot until a signal (SESSION_STOP) or a failure
 *		(SESSION_RETRY, s->err says which).
 */
static SessionEnd
session(Stream *s)
{
	char		state[6] = "";
	bool		in_txn = false;
	CapLsn		last_commit = 0;	/* end LSN of the last commit received */
	int64_t		last_commit_time = 0;
	double		first_unflushed = 0;
	double		last_status = bridge_now();

	if (!cap_start(s->repl, s->p->slot, 0, s->p->publication, s->err, sizeof(s->err), state))
	{
		if (strcmp(state, "42704") == 0)
			stop_fatal(s, "The slot was dropped: changes since are lost. Run \"cqlbridge stream DIR --drop\", empty the tables and start again (it loads again).", s->err);
		slot_check(s);
		return SESSION_RETRY;
	}
	cap_keyset_clear(&s->req);
	for (int i = 0; i < s->p->ntables; i++)
		cap_keyset_clear(&s->p->tables[i].pending);
	cap_direct_clear(s->p);
	if (!replay_horizon(s))
		return SESSION_RETRY;
	s->p->parts_polled = 0;		/* what a failed flush did not record */
	cap_join_start(s->conn, s->opts, s->p);	/* tables joining the stream */
	s->xids.len = 0;
	s->xids.data[0] = '\0';

	for (;;)
	{
		char	   *buf = NULL;
		int			n;
		double		now;
		bool		late;
		bool		full;			/* enough requests queued for a flush */
		size_t		queued;			/* requests and direct changes */

		if (stop_signal && !in_txn)
		{
			if (!flush_and_confirm(s, last_commit, last_commit_time, "stop signal", 0))
				return SESSION_RETRY;
			return SESSION_STOP;
		}
		/* paced only while caught up: a stream behind reads at once */
		n = cap_read(s->repl, 100, !behind(last_commit_time), &buf);
		if (n < 0)
		{
			PGresult   *res = PQgetResult(s->repl);
			const char *msg = res ? PQresultErrorMessage(res) : "";

			snprintf(s->err, sizeof(s->err), "the replication stream ended: %.*s",
					 (int) strcspn(*msg ? msg : PQerrorMessage(s->repl), "\n"),
					 *msg ? msg : PQerrorMessage(s->repl));
			PQclear(res);
			slot_check(s);
			return SESSION_RETRY;
		}
		if (n > 0 && buf[0] == 'k' && n >= 18)
		{
			CapLsn		walend = cap_get64(buf + 1);
			bool		reply = buf[17] != 0;

			if (s->opts->log_positions)
				trace_lsn(s, "keepalive walEnd", walend, reply ? " (reply requested)" : "");
			if (walend > s->st.received)
				s->st.received = walend;
			/*
			 * walend is the walsender's sent position: every transaction
			 * committed before it came before this message.  Confirmed
			 * only when a reply is asked outside a transaction, after the
			 * flush of everything received (a fast shutdown of PostgreSQL
			 * waits until the client has confirmed what was sent; without
			 * this, pg_ctl restart timed out under a running stream).  An
			 * idle stream also advances with the commits of its own status
			 * row, which is in the publication.
			 */
			if (reply && in_txn)
			{
				/*
				 * Mid-transaction (a large one being received): answer
				 * with the position already confirmed, flushing nothing.
				 * The requests queued so far include this transaction's
				 * first changes: they go out in a chunk (with its xid in
				 * the flush's visibility check) or after its COMMIT.
				 */
				trace_lsn(s, "confirm", s->st.confirmed, " (keepalive reply inside a transaction: nothing flushed)");
				if (!send_status(s))
				{
					PQfreemem(buf);
					return SESSION_RETRY;
				}
				last_status = bridge_now();
			}
			else if (reply)
			{
				if (!flush_and_confirm(s, walend > last_commit ? walend : last_commit, 0,
									   "keepalive reply: everything received is flushed", 0))
				{
					PQfreemem(buf);
					return SESSION_RETRY;
				}
				last_status = bridge_now();
				first_unflushed = 0;
			}
		}
		else if (n > 0 && buf[0] == 'w' && n >= 25)
		{
			CapMessage	m;
			char		err[1024];

			if (!cap_decode(buf + 25, n - 25, &m, err, sizeof(err)))
				stop_fatal(s, "This is a bug or an unsupported server: report it with the server version.", err);
			switch (m.kind)
			{
				case CAP_BEGIN:
					in_txn = true;
					s->cur_xid = m.xid;
					if (s->opts->log_positions)
					{
						char	   *more = bridge_printf(" (xid %u)", (unsigned) m.xid);

						trace_lsn(s, "BEGIN final", m.lsn, more);
						free(more);
					}
					break;
				case CAP_COMMIT:
					in_txn = false;
					sb_appendf(&s->xids, "%s%u", s->xids.len ? "," : "", (unsigned) s->cur_xid);
					last_commit = m.end_lsn;
					last_commit_time = m.commit_time;
					if (s->opts->log_positions)
					{
						char	   *e = cap_lsn_text(m.end_lsn);
						char	   *more = bridge_printf(" end %s (xid %u)", e, (unsigned) s->cur_xid);

						trace_lsn(s, "COMMIT", m.lsn, more);
						free(more);
						free(e);
					}
					if (m.end_lsn > s->st.received)
						s->st.received = m.end_lsn;
					break;
				case CAP_RELATION:
					if (!relation_message(s, &m))
					{
						cap_message_free(&m);
						PQfreemem(buf);
						return SESSION_RETRY;
					}
					break;
				case CAP_INSERT:
				case CAP_UPDATE:
				case CAP_DELETE:
					s->st.changes++;
					if (first_unflushed == 0)
						first_unflushed = bridge_now();
					if (!cap_change_keys(s->p, &s->req, &m, err, sizeof(err)))
						stop_fatal(s, "Set REPLICA IDENTITY FULL on the relation, then start the stream again (it resumes from the slot).", err);
					break;
				case CAP_TRUNCATE:
					s->st.changes++;
					if (first_unflushed == 0)
						first_unflushed = bridge_now();
					cap_truncate_keys(s->p, &s->req, &m);
					break;
				case CAP_IGNORED:
					break;
			}
			cap_message_free(&m);
		}
		if (buf)
			PQfreemem(buf);

		if (!in_txn && !poll_partitions(s, &first_unflushed))
			return SESSION_RETRY;
		if (!in_txn && s->p->join_conn)
		{
			size_t		before = s->req.n + cap_pending_total(s->p);

			if (cap_join_poll(s->conn, s->p, &s->req, s->err, sizeof(s->err)) != CAP_CHECK_OK)
				return SESSION_RETRY;
			if (s->req.n + cap_pending_total(s->p) > before && first_unflushed == 0)
				first_unflushed = bridge_now();
		}
		now = bridge_now();
		late = !in_txn && behind(last_commit_time);
		queued = s->req.n + cap_direct_count(s->p);
		full = queued >= (late ? FLUSH_REQUESTS_BEHIND : FLUSH_REQUESTS);
		if (!in_txn && (queued > 0 || cap_pending_total(s->p) > 0) &&
			(full || now - first_unflushed >= flush_window(s, late)))
		{
			if (!flush_and_confirm(s, last_commit, last_commit_time,
								   full ? "flush: requests" : "flush: interval", 0))
				return SESSION_RETRY;
			first_unflushed = 0;
			last_status = now;
		}
		else if (in_txn && queued >= FLUSH_REQUESTS)
		{
			/*
			 * A large transaction: its changes so far are flushed in a
			 * chunk (memory stays bounded), on a snapshot that sees the
			 * transaction (committed: protocol version 1 sends it after
			 * its COMMIT).  Only the commit before it is confirmed; a
			 * restart replays the whole transaction.
			 */
			if (!flush_and_confirm(s, last_commit, 0, "flush: chunk of a large transaction", s->cur_xid))
				return SESSION_RETRY;
			first_unflushed = 0;
			last_status = now;
		}
		else if (n == 0 && !in_txn && queued == 0)
		{
			s->st.lag_seconds = 0;
			if (now - last_status >= STATUS_EVERY_S ||
				(last_commit > s->st.confirmed && now - last_status >= IDLE_CONFIRM_S))
			{
				if (!flush_and_confirm(s, last_commit, 0, "idle", 0))
					return SESSION_RETRY;
				last_status = now;
			}
		}
		cap_priority_adapt(s->conn, s->st.lag_seconds, s->opts, bridge_extension_schema(s->conn));
		cap_status_update(s->conn, s->p, &s->st, false, s->tty, s->opts->quiet);
	}
}

/* Sleep up to secs, waking for a stop signal. */
static void
nap(double secs)
{
	double		until = bridge_now() + secs;

	while (!stop_signal && bridge_now() < until)
		usleep(50000);
}

/*
 * cmd_stream
 *		"cqlbridge stream DIR": check the source, prepare the publication
 *		and tables, load from a new slot's snapshot when the stream has not
 *		loaded yet, then stream until SIGINT/SIGTERM, reconnecting with
 *		backoff after failures.  --status and --drop are one-shot.
 */
int
cmd_stream(const BridgeOptions *opts)
{
	Stream		s;
	struct sigaction sa;
	CapLsn		confirmed = 0;
	double		backoff = 1.0;
	bool		reset_conn = false;	/* s.conn reconnected but its priority
									 * not lowered: reset it again */

	memset(&s, 0, sizeof(s));
	sb_init(&s.xids);
	s.opts = opts;
	s.p = cap_read_plan(opts->dir);
	s.p->write_consistency = bridge_write_consistency(opts);
	if (opts->stream_status)
		return cap_status_command(opts, s.p);
	if (opts->stream_drop)
		return cap_drop(opts, s.p);
	s.tty = isatty(fileno(stderr)) && !opts->quiet;
	s.st.warn_wal = opts->warn_wal;

	cap_priority_process(opts);
	s.conn = bridge_connect(opts);
	cap_tables_define(s.p);
	cap_tables_compare(s.conn, s.p);
	if (cap_tables_differ(s.p))
		bridge_fatal_hint("Stop the stream of the old plan, then run \"cqlbridge stream DIR --replan --dry-run\" to see what applying this plan online does, and \"cqlbridge stream DIR --replan\" to do it.",
						  "the plan in %s is not the one the stream of keyspace %s runs:\n%s",
						  opts->dir, s.p->keyspace, cap_tables_diff_text(s.p));
	cap_check_server(s.conn, s.p);
	if (!lower_priority(&s, s.conn, false))
		bridge_fatal_hint("Run the stream as a role WITH REPLICATION (or a superuser), with cql_fdw 0.7 or later (ALTER EXTENSION cql_fdw UPDATE), or with --priority normal.",
						  "%s", s.err);
	cap_relations_resolve(s.conn, s.p);
	cap_check_uncaptured(s.conn, s.p);
	cap_plan_prepare(s.conn, s.p);
	cap_direct_prepare(s.conn, s.p);
	cap_check_source(s.conn, s.p);
	cap_check_targets(s.conn, s.p);
	cap_prepare_objects(s.conn, s.p);
	cap_direct_lineage(s.conn, s.p);
	cap_partitions_prepare(s.conn, s.p);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	s.repl = cap_repl_connect(opts, s.err, sizeof(s.err));
	if (s.repl == NULL)
		bridge_fatal_hint("The role needs the REPLICATION attribute and pg_hba.conf must allow it (for \"replication=database\" the database's own lines apply).",
						  "%s", s.err);
	if (!lower_priority(&s, s.repl, true))
		bridge_fatal_hint("Run the stream as a role WITH REPLICATION (or a superuser), or with --priority normal.",
						  "%s", s.err);
	if (strcmp(cap_phase(s.conn, s.p, &confirmed), "load") == 0)
	{
		cap_initial_load(s.conn, s.repl, s.p, opts);
		(void) cap_phase(s.conn, s.p, &confirmed);
	}
	else if (!s.p->recorded)
	{
		/* a stream of an older cqlbridge: its tables recorded, at once */
		bridge_exec_script(s.conn, "recording the stream's tables", "BEGIN");
		cap_tables_record(s.conn, s.p);
		bridge_exec_script(s.conn, "recording the stream's tables", "COMMIT");
	}
	s.st.confirmed = confirmed;
	if (!opts->quiet)
		cap_log("streaming slot %s (publication %s) into %d tables, written at %s", s.p->slot,
				s.p->publication, s.p->ntables, s.p->write_consistency);

	for (;;)
	{
		CapLsn		before = s.st.confirmed;
		SessionEnd	end = session(&s);

		if (end == SESSION_STOP)
			break;

		/*
		 * A session that confirmed something worked until this failure:
		 * retry soon.  One that confirmed nothing (Cassandra still down,
		 * the flush failing again) waits longer each time.
		 */
		if (s.st.confirmed > before)
			backoff = 1.0;
		if (s.tty)
			fputc('\n', stderr);
		cap_log("%s; retrying in %.0f s (resumes from the slot's confirmed position)", s.err, backoff);
		snprintf(s.st.last_error, sizeof(s.st.last_error), "%s", s.err);
		if (s.conn && PQstatus(s.conn) == CONNECTION_OK)
			cap_status_update(s.conn, s.p, &s.st, true, false, true);
		PQfinish(s.repl);
		s.repl = NULL;
		nap(backoff);
		backoff = backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : backoff * 2;
		while (!stop_signal)
		{
			if (PQstatus(s.conn) != CONNECTION_OK || reset_conn)
			{
				PQreset(s.conn);
				/* a new backend: lower its priority again */
				reset_conn = PQstatus(s.conn) == CONNECTION_OK && !lower_priority(&s, s.conn, false);
			}
			if (!reset_conn && PQstatus(s.conn) == CONNECTION_OK)
			{
				s.repl = cap_repl_connect(opts, s.err, sizeof(s.err));
				if (s.repl && !lower_priority(&s, s.repl, true))
				{
					PQfinish(s.repl);
					s.repl = NULL;
				}
				if (s.repl)
					break;
			}
			else if (!reset_conn)
				snprintf(s.err, sizeof(s.err), "could not reconnect to the database: %.*s",
						 (int) strcspn(PQerrorMessage(s.conn), "\n"), PQerrorMessage(s.conn));
			cap_log("%s; retrying in %.0f s", s.err, backoff);
			nap(backoff);
			backoff = backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : backoff * 2;
		}
		if (stop_signal)
			break;
	}
	if (s.tty)
		fputc('\n', stderr);
	if (!opts->quiet)
		cap_log("stopped (%s); confirmed %s", stop_signal == SIGINT ? "SIGINT" : "SIGTERM",
				cap_lsn_text(s.st.confirmed));
	cap_join_stop(s.p);
	PQfinish(s.repl);
	PQfinish(s.conn);
	return 0;
}

/*-------------------------------------------------------------------------
 *
 * replication.c
 *	  The replication connection of "cqlbridge stream": libpq with
 *	  replication=database, CREATE_REPLICATION_SLOT ... (SNAPSHOT
 *	  'export'), START_REPLICATION ... LOGICAL with pgoutput, CopyData read
 *	  with a timeout, and standby status updates ('r') that confirm what
 *	  Cassandra acknowledged.  Nothing here is fatal: the caller decides
 *	  whether to retry.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/replication.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>

#include "capture/capture.h"

/* microseconds between 1970-01-01 and 2000-01-01 (PostgreSQL's epoch) */
#define PG_EPOCH_OFFSET_US INT64_C(946684800000000)

/* Big-endian 64-bit integer at p. */
uint64_t
cap_get64(const char *p)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | (unsigned char) p[i];
	return v;
}

static void
put64(char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--)
	{
		p[i] = (char) (v & 0xff);
		v >>= 8;
	}
}

/* "X/Y" of an LSN (allocated). */
char *
cap_lsn_text(CapLsn lsn)
{
	return bridge_printf("%X/%X", (unsigned int) (lsn >> 32), (unsigned int) lsn);
}

/* Parse "X/Y"; false if it is not an LSN. */
bool
cap_parse_lsn(const char *s, CapLsn *lsn)
{
	unsigned int hi,
				lo;
	char		extra;

	if (s == NULL || sscanf(s, "%X/%X%c", &hi, &lo, &extra) != 2)
		return false;
	*lsn = ((CapLsn) hi << 32) | lo;
	return true;
}

/* Copy the first line of libpq's message into err. */
static void
conn_error(PGconn *conn, const char *what, char *err, size_t errlen)
{
	const char *msg = conn ? PQerrorMessage(conn) : "out of memory";
	size_t		n = strcspn(msg, "\n");

	snprintf(err, errlen, "%s: %.*s", what, (int) n, msg);
}

/*
 * cap_repl_connect
 *		A replication connection (replication=database) with the command's
 *		connection options and the PG* environment.  NULL with err set when
 *		it fails (the caller retries or reports).
 */
PGconn *
cap_repl_connect(const BridgeOptions *opts, char *err, size_t errlen)
{
	char		msg[1024];
	PGconn	   *conn = bridge_connect_try(opts, "database", msg, sizeof(msg));

	if (conn == NULL)
		snprintf(err, errlen, "could not open a replication connection: %s", msg);
	return conn;
}

/* The error of a failed command result, with its SQLSTATE copied out. */
static void
result_error(PGconn *conn, PGresult *res, const char *what, char *err, size_t errlen,
			 char *sqlstate)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (msg == NULL)
	{
		conn_error(conn, what, err, errlen);
		msg = "";
	}
	else
		snprintf(err, errlen, "%s: %s", what, msg);
	if (sqlstate)
		snprintf(sqlstate, 6, "%s", state ? state : "");
}

/*
 * cap_create_slot
 *		CREATE_REPLICATION_SLOT slot LOGICAL pgoutput (SNAPSHOT 'export'):
 *		the slot, its consistent point, and the name of a snapshot that
 *		sees exactly the transactions committed before that point.  The
 *		snapshot stays importable until the next command on repl.
 */
bool
cap_create_slot(PGconn *repl, const char *slot, char **snapshot,
				CapLsn *consistent, char *err, size_t errlen, char *sqlstate)
{
	char	   *q = bridge_printf("CREATE_REPLICATION_SLOT %s LOGICAL pgoutput (SNAPSHOT 'export')",
								  bridge_quote_ident(slot));
	PGresult   *res = PQexec(repl, q);

	free(q);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 ||
		PQnfields(res) < 3)
	{
		result_error(repl, res, "creating the replication slot", err, errlen, sqlstate);
		PQclear(res);
		return false;
	}
	if (!cap_parse_lsn(PQgetvalue(res, 0, 1), consistent))
	{
		snprintf(err, errlen, "creating the replication slot: bad consistent point \"%s\"",
				 PQgetvalue(res, 0, 1));
		PQclear(res);
		return false;
	}
	*snapshot = bridge_strdup(PQgetvalue(res, 0, 2));
	PQclear(res);
	return true;
}

/*
 * cap_start
 *		START_REPLICATION SLOT slot LOGICAL from (proto_version '1',
 *		publication_names 'publication'): version 1 is understood by every
 *		supported server (15, 16, 18) and sends each transaction whole at
 *		its commit (a large one is spilled by the server, not streamed).
 */
bool
cap_start(PGconn *repl, const char *slot, CapLsn from, const char *publication,
		  char *err, size_t errlen, char *sqlstate)
{
	char	   *lsn = cap_lsn_text(from);
	char	   *pubs = bridge_quote_literal(bridge_quote_ident(publication));
	char	   *q = bridge_printf("START_REPLICATION SLOT %s LOGICAL %s (proto_version '1', publication_names %s)",
								  bridge_quote_ident(slot), lsn, pubs);
	PGresult   *res = PQexec(repl, q);

	free(q);
	free(lsn);
	free(pubs);
	if (res == NULL || PQresultStatus(res) != PGRES_COPY_BOTH)
	{
		result_error(repl, res, "starting replication", err, errlen, sqlstate);
		PQclear(res);
		return false;
	}
	PQclear(res);
	return true;
}

/*
 * How the stream waits for the walsender.  Waiting in select() wakes the
 * stream for every message the walsender writes: at 1,000 transactions a
 * second, three messages each, that is thousands of wakeups a second of
 * both processes, each a context switch on the source's cores and a
 * preemption of whatever ran there (bench/README.md, issue 42).  So once
 * the socket holds nothing more (the stream has caught up), the stream
 * sleeps READ_PACE_MS and then takes what arrived meanwhile in a few
 * reads: the walsender's writes wake nobody, the socket buffer holds them.
 * The pause adds at most READ_PACE_MS to the lag, against a flush every
 * --flush-interval (500 ms by default).  Only while the stream is caught
 * up (the caller says: its last commit received is recent): a stream that
 * is behind finds the socket empty too whenever the walsender decodes
 * slower than the stream reads, and pauses there capped a catch-up at
 * about 6,000 changes a second where waking for each message gives 49,000
 * (bench/README.md, issue 42, "Follow-up 4").
 */
#define READ_PACE_MS		20

/*
 * next_buffered
 *		The next message already read (n > 0, buf set), after reading what
 *		the socket holds without waiting: 0 when there is none, -1 on
 *		failure or the end of the stream.
 */
static int
next_buffered(PGconn *repl, char **buf)
{
	int			n = PQgetCopyData(repl, buf, 1);

	if (n != 0)
		return n > 0 ? n : -1;
	if (!PQconsumeInput(repl))
		return -1;
	n = PQgetCopyData(repl, buf, 1);
	return n >= 0 ? n : -1;
}

/*
 * cap_read
 *		The next CopyData message of the stream, waiting at most timeout_ms
 *		(with paced, a pause of READ_PACE_MS when that is shorter, see
 *		above): its length (buf set, PQfreemem it), 0 on timeout, -1 when
 *		the stream ended or the connection failed.
 */
int
cap_read(PGconn *repl, int timeout_ms, bool paced, char **buf)
{
	int			n = next_buffered(repl, buf);

	if (n != 0)
		return n;
	if (paced && timeout_ms > READ_PACE_MS)
	{
		struct timespec ts = {0, READ_PACE_MS * 1000000L};

		nanosleep(&ts, NULL);
	}
	else
	{
		fd_set		fds;
		struct timeval tv;
		int			sock = PQsocket(repl);

		if (sock < 0)
			return -1;
		FD_ZERO(&fds);
		FD_SET(sock, &fds);
		tv.tv_sec = timeout_ms / 1000;
		tv.tv_usec = (timeout_ms % 1000) * 1000;
		if (select(sock + 1, &fds, NULL, NULL, &tv) < 0 && errno != EINTR)
			return -1;
	}
	return next_buffered(repl, buf);
}

/*
 * cap_send_status
 *		A standby status update: written/received and flushed/applied
 *		positions (flushed = what Cassandra acknowledged; the slot keeps WAL
 *		from there), the clock, and whether the server should answer.
 */
bool
cap_send_status(PGconn *repl, CapLsn received, CapLsn flushed, bool reply)
{
	char		msg[1 + 8 + 8 + 8 + 8 + 1];
	struct timeval tv;
	int64_t		now;

	gettimeofday(&tv, NULL);
	now = (int64_t) tv.tv_sec * 1000000 + tv.tv_usec - PG_EPOCH_OFFSET_US;
	msg[0] = 'r';
	put64(msg + 1, received);
	put64(msg + 9, flushed);
	put64(msg + 17, flushed);
	put64(msg + 25, (uint64_t) now);
	msg[33] = reply ? 1 : 0;
	if (PQputCopyData(repl, msg, sizeof(msg)) <= 0 || PQflush(repl) != 0)
		return false;
	return true;
}

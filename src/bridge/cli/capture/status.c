/*-------------------------------------------------------------------------
 *
 * status.c
 *	  What "cqlbridge stream" tells: a progress line on a terminal (plain
 *	  log lines otherwise), the status row cqlbridge_<keyspace>.stream_state
 *	  that another session can query, with the WAL the slot retains and a
 *	  warning above --warn-wal, and "cqlbridge stream DIR --status".
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/status.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

/* A log line: UTC time, "cqlbridge stream:", the message. */
void
cap_log(const char *fmt,...)
{
	va_list		ap;
	time_t		now = time(NULL);
	struct tm	tm;
	char		when[32];

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(stderr, "%s cqlbridge stream: ", when);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Bytes in a readable unit. */
static char *
human(long long b)
{
	if (b >= 10LL * 1024 * 1024 * 1024)
		return bridge_printf("%.1f GB", b / (1024.0 * 1024 * 1024));
	if (b >= 10LL * 1024 * 1024)
		return bridge_printf("%.1f MB", b / (1024.0 * 1024));
	if (b >= 10LL * 1024)
		return bridge_printf("%.1f kB", b / 1024.0);
	return bridge_printf("%lld B", b);
}

/*
 * cap_status_update
 *		Every 2 s (or when force): the rate of changes, the status row
 *		(confirmed position, lag, retained WAL, last error), a warning when
 *		the slot retains more than --warn-wal; the progress line on a
 *		terminal (each second), a log line otherwise (every 10 s, and when
 *		force).  A failing update (PostgreSQL restarting) is skipped: the
 *		stream's loop notices the connection itself.
 */
void
cap_status_update(PGconn *conn, CapPlan *p, CapStats *st, bool force, bool tty, bool quiet)
{
	double		now = bridge_now();
	char	   *lsn;
	char	   *sql;
	const char *params[9];
	char		b[6][64];
	PGresult   *res;
	char		err[512];
	long long	lag_bytes = -1;
	long long	retained = -1;

	if (!force && now - st->last_report < 2.0)
		return;
	if (now - st->rate_t0 >= 2.0 || st->rate_t0 == 0)
	{
		if (st->rate_t0 > 0)
			st->rate = (st->changes - st->rate_n0) / (now - st->rate_t0);
		st->rate_t0 = now;
		st->rate_n0 = st->changes;
	}
	lsn = cap_lsn_text(st->confirmed);
	snprintf(b[0], 64, "%d", (int) getpid());
	snprintf(b[1], 64, "%lld", st->changes);
	snprintf(b[2], 64, "%lld", st->flushed_keys);
	snprintf(b[3], 64, "%.1f", st->rate);
	snprintf(b[4], 64, "%.3f", st->lag_seconds);
	params[0] = lsn;
	params[1] = b[0];
	params[2] = b[1];
	params[3] = b[2];
	params[4] = b[3];
	params[5] = b[4];
	params[6] = st->last_error[0] ? st->last_error : NULL;
	params[7] = p->slot;
	params[8] = p->write_consistency;
	sql = bridge_printf("UPDATE %s.stream_state SET confirmed_lsn = $1::pg_lsn, pid = $2::int, changes = $3::bigint, "
						"write_consistency = $9, "
						"keys_written = $4::bigint, changes_per_s = $5::float8, lag_seconds = $6::float8, "
						"lag_bytes = pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_insert_lsn(), $1::pg_lsn)::bigint, "
						"retained_bytes = (SELECT pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), restart_lsn)::bigint "
						"  FROM pg_catalog.pg_replication_slots WHERE slot_name = $8), "
						"last_error = coalesce($7, last_error), "
						"last_error_at = CASE WHEN $7 IS NULL THEN last_error_at ELSE now() END, updated_at = now() "
						"RETURNING lag_bytes, retained_bytes", p->schema);
	res = cap_exec(conn, sql, 9, params, err, sizeof(err));
	free(sql);
	if (res && PQntuples(res) == 1)
	{
		lag_bytes = PQgetisnull(res, 0, 0) ? -1 : atoll(PQgetvalue(res, 0, 0));
		retained = PQgetisnull(res, 0, 1) ? -1 : atoll(PQgetvalue(res, 0, 1));
	}
	PQclear(res);
	st->last_error[0] = '\0';	/* recorded */
	if (st->warn_wal > 0 && retained > st->warn_wal)
	{
		char	   *h = human(retained);

		cap_log("WARNING: slot %s retains %s of WAL (more than --warn-wal); if the stream cannot catch up, stop it and run \"cqlbridge stream DIR --drop\" so PostgreSQL can recycle it",
				p->slot, h);
		free(h);
	}
	if (!quiet)
	{
		char	   *lb = lag_bytes >= 0 ? human(lag_bytes) : bridge_strdup("?");

		if (tty)
			fprintf(stderr, "\rstream: %lld changes, %.0f/s, %lld keys written, lag %.2f s / %s, confirmed %s   ",
					st->changes, st->rate, st->flushed_keys, st->lag_seconds, lb, lsn);
		else if (force || now - st->last_log >= 10.0)
		{
			cap_log("%lld changes, %.0f/s, %lld keys written, lag %.2f s / %s, confirmed %s",
					st->changes, st->rate, st->flushed_keys, st->lag_seconds, lb, lsn);
			st->last_log = now;
		}
		free(lb);
	}
	st->last_report = now;
	free(lsn);
}

/*
 * cap_status_command
 *		"cqlbridge stream DIR --status": the status row and the slot as
 *		PostgreSQL sees it, one "name: value" line each.  Exit status 1
 *		when no stream was started for this plan.
 */
int
cap_status_command(const BridgeOptions *opts, CapPlan *p)
{
	PGconn	   *conn = bridge_connect(opts);
	const char *params[2] = {p->slot, p->schema_plain};
	PGresult   *res;
	char	   *sql;

	res = bridge_exec(conn, "looking up the status table",
					  "SELECT to_regclass(quote_ident($1) || '.stream_state') IS NOT NULL", 1, params + 1);
	if (strcmp(PQgetvalue(res, 0, 0), "t") != 0)
		bridge_fatal_hint("Start it with \"cqlbridge stream DIR\".", "no stream of plan %s in this database",
						  p->keyspace);
	PQclear(res);
	sql = bridge_printf("SELECT st.phase, st.slot, st.publication, st.pid::text, "
						"coalesce(sl.active, false)::text, st.confirmed_lsn::text, "
						"sl.confirmed_flush_lsn::text, st.changes::text, st.keys_written::text, "
						"round(st.changes_per_s::numeric, 1)::text, round(st.lag_seconds::numeric, 3)::text, "
						"pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_insert_lsn(), sl.confirmed_flush_lsn)::bigint::text, "
						"pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), sl.restart_lsn)::bigint::text, "
						"sl.wal_status, st.last_error, st.last_error_at::text, st.updated_at::text, "
						"round(extract(epoch FROM now() - st.updated_at)::numeric, 1)::text, st.write_consistency "
						"FROM %s.stream_state st LEFT JOIN pg_catalog.pg_replication_slots sl ON sl.slot_name = $1",
						p->schema);
	res = bridge_exec(conn, "reading the stream's status", sql, 1, params);
	free(sql);
	if (PQntuples(res) == 0)
		bridge_fatal_hint("Start it with \"cqlbridge stream DIR\".", "the stream of plan %s has not finished its initial load",
						  p->keyspace);
	{
		static const char *const names[] = {
			"phase", "slot", "publication", "pid", "slot active", "confirmed (stream)",
			"confirmed (slot)", "changes", "keys written", "changes/s", "lag seconds",
			"lag bytes", "retained WAL bytes", "wal_status", "last error", "last error at",
			"updated at", "seconds since update", "write consistency"
		};

		for (int c = 0; c < (int) (sizeof(names) / sizeof(names[0])); c++)
			printf("%-21s %s\n", names[c], PQgetisnull(res, 0, c) ? "" : PQgetvalue(res, 0, c));
	}
	PQclear(res);
	PQfinish(conn);
	return 0;
}

/*-------------------------------------------------------------------------
 *
 * progress.c
 *	  What both ways of loading a table (apply.c in hash chunks, stream.c
 *	  in one pass) share: the progress line on a terminal, the report of
 *	  a failed load with the hint to resume, and the column lists of the
 *	  rows query.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/load/progress.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>

#include "load/apply.h"

/* How to resume, in the messages of an interrupted or failed load. */
const char *const apply_resume_hint = "run the same \"cqlbridge apply\" again to resume";

/*
 * format_duration
 *		Seconds as "42s", "3m07s" or "2h05m" ("?" when not a sensible number).
 */
static void
format_duration(char *buf, size_t size, double s)
{
	if (s < 0 || s > 1e9)
		snprintf(buf, size, "?");
	else if (s < 60)
		snprintf(buf, size, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, size, "%dm%02ds", (int) s / 60, (int) s % 60);
	else
		snprintf(buf, size, "%dh%02dm", (int) s / 3600, ((int) s % 3600) / 60);
}

/*
 * apply_show_progress
 *		The updating progress line of one table (terminal only): rows so
 *		far against plan's count, chunks or batches, rate and ETA.  units
 *		is 0 when their number is not known in advance (batches).
 */
void
apply_show_progress(const ApplyTable *t, long long done, long long loaded_now,
					double elapsed, const char *unit, int units_done, int units)
{
	double		rate = elapsed > 0 ? loaded_now / elapsed : 0;
	char		eta[32];

	if (rate > 0 && t->expected > done)
		format_duration(eta, sizeof(eta), (t->expected - done) / rate);
	else
		snprintf(eta, sizeof(eta), "-");
	if (units > 0)
		fprintf(stderr, "\r\033[K%s: %lld/%lld rows, %s %d/%d, %.0f rows/s, ETA %s",
				t->target, done, t->expected, unit, units_done, units, rate, eta);
	else
		fprintf(stderr, "\r\033[K%s: %lld/%lld rows, %s %d, %.0f rows/s, ETA %s",
				t->target, done, t->expected, unit, units_done, rate, eta);
	fflush(stderr);
}

/*
 * apply_load_failed
 *		Report a failed step of a table's load with the server's SQLSTATE,
 *		detail and hint, then how to resume, and exit 1.
 */
void
apply_load_failed(const ApplyTable *t, PGconn *conn, PGresult *res, const char *step,
				  bool tty, const BridgeOptions *opts)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;

	bridge_check_interrupt(apply_resume_hint);
	if (tty && !opts->quiet)
		fputc('\n', stderr);
	fprintf(stderr, "cqlbridge: %s:%d: loading %s, %s failed: %s (SQLSTATE %s)\n",
			t->f->path, t->b->line, t->target, step,
			msg ? msg : PQerrorMessage(conn), state ? state : "?");
	if (detail)
		fprintf(stderr, "DETAIL:  %s\n", detail);
	if (hint)
		fprintf(stderr, "HINT:  %s\n", hint);
	fprintf(stderr, "HINT:  Recorded progress is kept; fix the cause and %s.\n", apply_resume_hint);
	exit(BRIDGE_EXIT_ERROR);
}

/*
 * apply_column_list
 *		The columns of the rows query q, each quoted and written as
 *		before + "q.<name>" + after, joined by sep: "q.a, q.b" for an
 *		ORDER BY, "(q.a)::text || '|' || (q.b)::text" for the chunk hash.
 */
char *
apply_column_list(char **names, int n, const char *before, const char *after,
				  const char *sep)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int i = 0; i < n; i++)
	{
		char	   *qi = bridge_quote_ident(names[i]);

		sb_appendf(&sb, "%s%sq.%s%s", i ? sep : "", before, qi, after);
		free(qi);
	}
	return sb.data;
}

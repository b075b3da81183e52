/*-------------------------------------------------------------------------
 *
 * serve.c
 *	  Every workload statement analyzed and mapped on its own: one that no
 *	  table serves (the analysis refuses it, no mapping rule gives it a
 *	  table, no composition of two tables answers it) is left out with its
 *	  reason, and the plan covers the others.
 *
 * Errors of one statement are caught (bridge_catcher) rather than ending
 * the command: plan reports them (report.md, --json, stderr, exit status
 * 3), --strict ends the command at the first as before, and "cqlbridge
 * workload" comments the statement out with the same reason.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/serve.c
 *
 *-------------------------------------------------------------------------
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/*
 * left_out
 *		Record that query q is left out of the plan because of the caught
 *		error c (in phase "analysis" or "mapping"): the rule that refused it
 *		is the mapping rule the message or its hint names (MR2 ... MR5), or
 *		the phase.
 */
static void
left_out(Plan *p, const Query *q, const BridgeCatch *c, const char *phase)
{
	LeftOut    *l;
	const char *ref = plan_query_ref(q);
	size_t		rl = strlen(ref);
	const char *texts[2] = {c->message, c->hint};

	p->left = bridge_realloc(p->left, sizeof(LeftOut) * (p->nleft + 1));
	l = &p->left[p->nleft++];
	l->name = q->name;
	l->line = q->line;
	l->reason = c->message;
	if (strncmp(l->reason, ref, rl) == 0 && strncmp(l->reason + rl, ": ", 2) == 0)
		l->reason += rl + 2;
	l->hint = c->hint;
	l->compose_why = NULL;
	l->rule = bridge_strdup(phase);
	for (int i = 1; i >= 0; i--)
	{
		const char *m = texts[i] ? strstr(texts[i], "MR") : NULL;

		while (m && !(m[2] >= '1' && m[2] <= '9'))
			m = strstr(m + 2, "MR");
		if (m)
			l->rule = bridge_printf("%.3s", m);
	}
}

/*
 * try_compose
 *		After plan_derive refused q: serve it by a composition of two query
 *		tables (compose.c).  False, with the composition's reason in
 *		*why, when it cannot be composed; the plan is then as it was.
 */
static bool
try_compose(Plan *p, Query *q, char **why)
{
	BridgeCatch c;
	int			nqueries = p->nqueries;
	int			nwarn = p->nwarn;

	memset(&c, 0, sizeof(c));
	if (setjmp(c.jump) == 0)
	{
		bridge_catcher = &c;
		plan_compose(p, q);
		bridge_catcher = NULL;
		return true;
	}
	if (PQstatus(p->conn) != CONNECTION_OK)
		bridge_fatal("%s", c.message);
	p->nqueries = nqueries;
	p->nwarn = nwarn;
	q->compose = NULL;
	*why = c.message;
	return false;
}

/*
 * relocate
 *		The query pointer x into the array old, moved to the array new by
 *		map (index in old -> index in new).
 */
static Query *
relocate(Query *x, Query *old, Query *new, const int *map)
{
	return x ? &new[map[x - old]] : NULL;
}

/*
 * plan_serve
 *		Analyze and map every query, each on its own: a query that fails
 *		(the analysis refuses it, no mapping rule gives it a table, and no
 *		composition of two tables answers it) is left out with its reason,
 *		and the others are planned as if it were not in the workload.  A
 *		failure leaves the plan as it was: the analysis only reads, a
 *		query's table joins the plan only at the end of plan_derive, and a
 *		composition's parts are mapped only when both can be.  With
 *		--strict, or when nothing can be served, the first failure ends the
 *		command as it always did.
 */
void
plan_serve(Plan *p)
{
	bool	   *failed = bridge_malloc(sizeof(bool) * (p->qcap + 1));
	Query	   *kept;
	int			nkept = 0;
	int		   *map = bridge_malloc(sizeof(int) * (p->qcap + 1));
	int			nworkload = p->nqueries;

	memset(failed, 0, sizeof(bool) * (p->qcap + 1));
	for (int phase = 0; phase < 2; phase++)
		for (int i = 0; i < nworkload; i++)
		{
			BridgeCatch c;
			int			nwarn = p->nwarn;
			Query	   *q = &p->queries[i];
			char	   *why = NULL;

			if (failed[i])
				continue;
			memset(&c, 0, sizeof(c));
			if (setjmp(c.jump) == 0)
			{
				bridge_catcher = &c;
				if (phase == 0)
					plan_analyze(p, q);
				else
					plan_derive(p, q);
				bridge_catcher = NULL;
				continue;
			}
			/* a lost connection is no fault of the statement */
			if (PQstatus(p->conn) != CONNECTION_OK)
				bridge_fatal("%s", c.message);
			/* the warnings of a statement left out do not concern the plan */
			p->nwarn = nwarn;
			if (phase == 1 && plan_compose_candidate(q) && try_compose(p, q, &why))
				continue;
			failed[i] = true;
			left_out(p, q, &c, phase == 0 ? "analysis" : "mapping");
			if (why)
			{
				LeftOut    *l = &p->left[p->nleft - 1];

				/* the reason the composition gave, after the rule's */
				l->compose_why = why;
				l->reason = bridge_printf("%s; no composition either: %s", l->reason, why);
			}
			/* --strict: the error as plan always reported it, nothing written */
			if (p->opts->strict)
				bridge_fatal_hint(c.hint ? c.hint : "Without --strict, plan writes the tables of the other statements and reports this one as left out (exit status 3).",
								  "%s: %s", plan_query_ref(q), p->left[p->nleft - 1].reason);
		}
	if (p->nleft == nworkload)
		bridge_fatal_hint(p->left[0].hint,
						  "no statement of the workload can be served; the first, %s, because: %s",
						  plan_query_ref(&p->queries[0]), p->left[0].reason);

	/*
	 * The queries left out go; the tables and compositions point to the
	 * kept ones, which move to a new array.
	 */
	kept = bridge_malloc(sizeof(Query) * p->qcap);
	for (int i = 0; i < p->nqueries; i++)
	{
		map[i] = failed[i] ? -1 : nkept;
		if (!failed[i])
			kept[nkept++] = p->queries[i];
	}
	for (int ti = 0; ti < p->ntables; ti++)
	{
		Table	   *t = p->tables[ti];

		for (int k = 0; k < t->nqueries; k++)
			t->queries[k] = relocate(t->queries[k], p->queries, kept, map);
		t->def = relocate(t->def, p->queries, kept, map);
	}
	for (int i = 0; i < nkept; i++)
	{
		Query	   *q = &kept[i];

		q->part_of = relocate(q->part_of, p->queries, kept, map);
		if (q->compose)
		{
			q->compose->drive = relocate(q->compose->drive, p->queries, kept, map);
			q->compose->lookup = relocate(q->compose->lookup, p->queries, kept, map);
		}
		for (int ti = 0; ti < p->ntables; ti++)
			for (int k = 0; k < p->tables[ti]->nqueries; k++)
				if (p->tables[ti]->queries[k] == q)
					q->table = p->tables[ti];
	}
	/* the tables are final: a composed query's parameters in its drive's table */
	for (int i = 0; i < nkept; i++)
		if (kept[i].compose)
			plan_compose_params(&kept[i]);
	p->queries = kept;
	p->nqueries = nkept;
	free(failed);
	free(map);
}

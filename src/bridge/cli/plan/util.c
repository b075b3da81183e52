/*-------------------------------------------------------------------------
 *
 * util.c
 *	  Small helpers shared by the plan_*.c files: warnings, list splitting,
 *	  lookups in the analysis rows and in a table's columns, table-name
 *	  plurals and the parser of published keys.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/plan/util.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

/* ---------------------------------------------------------------- */
/* small helpers													*/
/* ---------------------------------------------------------------- */

/*
 * add_warning
 *		Append the text of fmt to a list of warnings, in the order raised.
 */
static void
add_warning(char ***warnings, int *nwarn, const char *fmt, va_list ap)
{
	*warnings = bridge_realloc(*warnings, sizeof(char *) * (*nwarn + 1));
	if (!*warnings)
		bridge_fatal("out of memory");
	(*warnings)[(*nwarn)++] = bridge_vprintf(fmt, ap);
}

/*
 * plan_table_warn
 *		A warning of one table (model.txt, report.md), in the order raised.
 */
void
plan_table_warn(Table *t, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	add_warning(&t->warnings, &t->nwarn, fmt, ap);
	va_end(ap);
}

/*
 * plan_warn
 *		A warning of the whole plan (e.g. from the analysis).
 */
void
plan_warn(Plan *p, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	add_warning(&p->warnings, &p->nwarn, fmt, ap);
	va_end(ap);
}

/* split on sep, trimming blanks; empty input gives 0 items */
char	  **
plan_split(const char *list, char sep, int *n)
{
	char	  **out = NULL;
	int			cnt = 0;
	const char *s = list;

	while (s && *s)
	{
		const char *e = strchr(s, sep);
		size_t		len = e ? (size_t) (e - s) : strlen(s);
		char	   *item;

		while (len > 0 && (*s == ' ' || *s == '\t'))
		{
			s++;
			len--;
		}
		while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		item = bridge_malloc(len + 1);
		memcpy(item, s, len);
		item[len] = '\0';
		out = bridge_realloc(out, sizeof(char *) * (cnt + 1));
		if (!out)
			bridge_fatal("out of memory");
		if (len > 0)
			out[cnt++] = item;
		else
			free(item);
		if (!e)
			break;
		s = e + 1;
	}
	*n = cnt;
	return out;
}

/*
 * plan_split_idents
 *		A list of SQL identifiers as the plan keeps key columns ("id",
 *		"hotel_id, \"Room, No\""), split into the names, unquoted.
 */
char	  **
plan_split_idents(const char *list, int *n)
{
	char	  **items = bridge_split_idents(list ? list : "", n);

	if (items == NULL)
		bridge_fatal("internal error: bad identifier list \"%s\"", list);
	return items;
}

/* names -> "a, \"B c\"" (plan_qi each, ", " between) */
char *
plan_join_idents(char **names, int n)
{
	StrBuf		sb;

	sb_init(&sb);
	for (int i = 0; i < n; i++)
		sb_appendf(&sb, "%s%s", i ? ", " : "", plan_qi(names[i]));
	return sb.data;
}

/*
 * plan_streq
 *		strcmp equality that is false when either side is NULL.
 */
bool
plan_streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/*
 * plan_is_kind
 *		Whether an analysis row is of kind k.
 */
bool
plan_is_kind(const ARow *r, const char *k)
{
	return plan_streq(r->kind, k);
}

/* a new column of the table (REGULAR, no position); fatal on a duplicate */
int
plan_add_column(Table *t, const char *name)
{
	Column	   *col;

	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			bridge_fatal("internal error: column %s added twice to %s", name, t->name ? t->name : "?");
	t->cols = bridge_realloc(t->cols, sizeof(Column) * (t->ncols + 1));
	if (!t->cols)
		bridge_fatal("out of memory");
	col = &t->cols[t->ncols];
	memset(col, 0, sizeof(Column));
	col->name = bridge_strdup(name);
	col->kind = COL_REGULAR;
	col->position = -1;
	return t->ncols++;
}

/* index of the column named name, or -1 */
int
plan_find_column(Table *t, const char *name)
{
	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return i;
	return -1;
}

/* the first analysis row of a kind at a level (and ord, unless ord < 0) */
const ARow *
plan_find_row(const Query *q, const char *kind, int level, int ord)
{
	for (int i = 0; i < q->nrows; i++)
		if (plan_streq(q->rows[i].kind, kind) && q->rows[i].level == level &&
			(ord < 0 || q->rows[i].ord == ord))
			return &q->rows[i];
	return NULL;
}

/*
 * plan_plural
 *		The plural of a relation name for table names (point_of_interest ->
 *		points_of_interest, hotel -> hotels, amenity -> amenities),
 *		allocated.
 */
char *
plan_plural(const char *name)
{
	const char *of = strstr(name, "_of_");
	size_t		n;

	/* point_of_interest -> points_of_interest */
	if (of)
	{
		char	   *head = bridge_malloc(of - name + 1);

		memcpy(head, name, of - name);
		head[of - name] = '\0';
		return bridge_printf("%s%s", plan_plural(head), of);
	}
	n = strlen(name);
	if (n > 1 && name[n - 1] == 'y' && !strchr("aeiou", name[n - 2]))
		return bridge_printf("%.*sies", (int) (n - 1), name);
	/* class, box, dish, match -> +es */
	if ((n > 1 && name[n - 1] == 's' && name[n - 2] == 's') ||
		(n > 0 && name[n - 1] == 'x') ||
		(n > 1 && name[n - 1] == 'h' && (name[n - 2] == 's' || name[n - 2] == 'c')))
		return bridge_printf("%ses", name);
	/* tables are often named in the plural already: comments, users */
	if (n > 0 && name[n - 1] == 's')
		return bridge_strdup(name);
	return bridge_printf("%ss", name);
}

/*
 * The published key "((a, b), c, d)", "((a))", "(a, b)" -> columns, the
 * first npk of which form the partition key.  n = 0 when unparsable.
 */
void
plan_parse_key(const char *text, int *n, char ***cols, int *npk)
{
	const char *s = text;
	char	   *inner;
	size_t		len;

	*n = 0;
	*npk = 0;
	*cols = NULL;
	while (*s == ' ')
		s++;
	if (*s != '(')
		return;
	len = strlen(s);
	while (len > 0 && s[len - 1] == ' ')
		len--;
	if (s[len - 1] != ')')
		return;
	inner = bridge_malloc(len - 1);
	memcpy(inner, s + 1, len - 2);
	inner[len - 2] = '\0';
	s = inner;
	while (*s == ' ')
		s++;
	if (*s == '(')
	{
		const char *e = strchr(s, ')');
		char	   *part;
		int			np;
		char	  **pc;
		int			nr = 0;
		char	  **rc = NULL;

		if (!e)
			return;
		part = bridge_malloc(e - s);
		memcpy(part, s + 1, e - s - 1);
		part[e - s - 1] = '\0';
		pc = plan_split(part, ',', &np);
		s = e + 1;
		while (*s == ' ' || *s == ',')
			s++;
		if (*s)
			rc = plan_split(s, ',', &nr);
		*cols = bridge_malloc(sizeof(char *) * (np + nr + 1));
		for (int i = 0; i < np; i++)
			(*cols)[i] = pc[i];
		for (int i = 0; i < nr; i++)
			(*cols)[np + i] = rc[i];
		*n = np + nr;
		*npk = np;
	}
	else
	{
		*cols = plan_split(s, ',', n);
		*npk = *n > 0 ? 1 : 0;
	}
}

/*
 * plan_qi
 *		SQL identifier, quoted only when needed (bridge_qi).
 */
char *
plan_qi(const char *s)
{
	return bridge_qi(s);
}

/*
 * plan_key_text
 *		"((a, b), c, d)": the primary key of t as CQL writes it, for messages,
 *		model.txt and report.md.
 */
char *
plan_key_text(const Table *t)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_append(&sb, "((");
	for (int i = 0; i < t->npk; i++)
		sb_appendf(&sb, "%s%s", i ? ", " : "", t->cols[i].name);
	sb_append(&sb, ")");
	for (int i = t->npk; i < t->npk + t->nck; i++)
		sb_appendf(&sb, ", %s", t->cols[i].name);
	sb_append(&sb, ")");
	return sb.data;
}

/*
 * plan_lval
 *		Field (r, c) of a measurement's result as a long, 0 for NULL.
 */
long
plan_lval(PGresult *res, int r, int c)
{
	return PQgetisnull(res, r, c) ? 0 : atol(PQgetvalue(res, r, c));
}

/*
 * plan_nworkload
 *		The plan's workload statements: its queries without the parts of
 *		composed answers (compose.c).
 */
int
plan_nworkload(const Plan *p)
{
	int			n = 0;

	for (int i = 0; i < p->nqueries; i++)
		if (p->queries[i].part_of == NULL)
			n++;
	return n;
}

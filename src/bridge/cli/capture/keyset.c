/*-------------------------------------------------------------------------
 *
 * keyset.c
 *	  The stream's sets of encoded strings (pending target keys, derivation
 *	  requests) and the values they encode: lists of text values read from
 *	  a change's tuples or from query results.  Below keys.c, writer.c,
 *	  direct.c and join.c, which all queue and read them.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/keyset.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

/* ------------------------------------------------------------------------
 * Sets of encoded strings (pending keys, derivation requests)
 * ------------------------------------------------------------------------
 */

static size_t
hash_str(const char *s)
{
	size_t		h = 1469598103934665603ULL;

	for (; *s; s++)
	{
		h ^= (unsigned char) *s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* Add a copy of encoded to the set unless it is there. */
void
cap_keyset_add(CapKeySet *s, const char *encoded)
{
	size_t		i;

	if (s->n * 2 >= s->cap)
	{
		CapKeySet	old = *s;

		s->cap = old.cap ? old.cap * 2 : 64;
		s->slots = calloc(s->cap, sizeof(char *));
		if (!s->slots)
			bridge_fatal("out of memory");
		s->n = 0;
		for (size_t j = 0; j < old.cap; j++)
			if (old.slots[j])
			{
				i = hash_str(old.slots[j]) & (s->cap - 1);
				while (s->slots[i])
					i = (i + 1) & (s->cap - 1);
				s->slots[i] = old.slots[j];
				s->n++;
			}
		free(old.slots);
	}
	i = hash_str(encoded) & (s->cap - 1);
	while (s->slots[i])
	{
		if (strcmp(s->slots[i], encoded) == 0)
			return;
		i = (i + 1) & (s->cap - 1);
	}
	s->slots[i] = bridge_strdup(encoded);
	s->n++;
}

/* Empty the set. */
void
cap_keyset_clear(CapKeySet *s)
{
	for (size_t i = 0; i < s->cap; i++)
	{
		free(s->slots[i]);
		s->slots[i] = NULL;
	}
	s->n = 0;
}

/* Whether table's requests wait (it joins the stream: join.c). */
bool
cap_table_waits(const CapPlan *p, int table)
{
	return p->tables[table].state == CAP_JOINING || p->tables[table].state == CAP_BACKFILL;
}

/*
 * Pending target keys of every table that is written (not of one being
 * backfilled), plus one for each table that caught up with its backfill and
 * goes live with the next flush.
 */
size_t
cap_pending_total(const CapPlan *p)
{
	size_t		n = 0;

	for (int i = 0; i < p->ntables; i++)
		if (!cap_table_waits(p, i))
			n += p->tables[i].pending.n + (p->tables[i].state == CAP_CATCHUP);
	return n;
}

/*
 * A list of values (NULL = SQL null) as one string: per value "N", or "V",
 * its length, ':' and its bytes.  Text values hold no NUL byte.
 */
void
cap_encode_values(StrBuf *sb, char **vals, int n)
{
	for (int i = 0; i < n; i++)
	{
		if (vals[i] == NULL)
			sb_appendc(sb, 'N');
		else
		{
			size_t		vlen = strlen(vals[i]);
			size_t		len = vlen;
			char		head[32];
			char	   *h = head + sizeof(head);

			/* "V<len>:" by hand: this runs for every value of every change */
			*--h = ':';
			do
				*--h = (char) ('0' + len % 10);
			while ((len /= 10) > 0);
			*--h = 'V';
			sb_appendn(sb, h, (size_t) (head + sizeof(head) - h));
			sb_appendn(sb, vals[i], vlen);
		}
	}
}

/* The values of an encoded list (allocated); *n set.  NULL if malformed. */
char	  **
cap_decode_values(const char *s, int *n)
{
	char	  **vals = bridge_malloc(sizeof(char *) * (strlen(s) + 1));

	*n = 0;
	while (*s)
	{
		if (*s == 'N')
		{
			vals[(*n)++] = NULL;
			s++;
		}
		else if (*s == 'V')
		{
			char	   *end;
			unsigned long len = strtoul(s + 1, &end, 10);

			if (*end != ':' || strlen(end + 1) < len)
				return NULL;
			vals[*n] = bridge_malloc(len + 1);
			memcpy(vals[*n], end + 1, len);
			vals[*n][len] = '\0';
			(*n)++;
			s = end + 1 + len;
		}
		else
			return NULL;
	}
	return vals;
}

/*
 * cap_tuple_values
 *		The values of cols from tuple t (falling back to tuple alt for an
 *		unchanged TOASTed value); false with err when one is missing.
 */
bool
cap_tuple_values(const CapSource *s, const CapTuple *t, const CapTuple *alt, char **cols, int n,
			 char **out, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++)
	{
		int			c = cap_source_column(s, cols[i]);
		const CapTuple *src;

		if (c < 0 || c >= t->ncols)
		{
			snprintf(err, errlen, "column %s of %s is not in the change stream's row%s",
					 bridge_show_name(cols[i]), s->current,
					 c == -1 ? " (a generated column: pgoutput does not send them)" : "");
			return false;
		}
		/* this column only: the next ones are the new tuple's again */
		src = t;
		if (src->kinds[c] == 'u' && alt && c < alt->ncols && alt->kinds[c] != 'u')
			src = alt;
		if (src->kinds[c] == 'u')
		{
			snprintf(err, errlen, "the change of %s does not carry the value of column %s (an unchanged TOASTed value); set REPLICA IDENTITY FULL on it",
					 s->current, bridge_show_name(cols[i]));
			return false;
		}
		out[i] = src->kinds[c] == 't' ? src->values[c] : NULL;
	}
	return true;
}

/* Queue request mode ('n' new, 'o' old) of affected entry a with vals. */
void
cap_request_add(CapKeySet *req, int a, char mode, char **vals, int n)
{
	StrBuf		sb;

	sb_init(&sb);
	sb_appendf(&sb, "%d:%c:", a, mode);
	cap_encode_values(&sb, vals, n);
	cap_keyset_add(req, sb.data);
	sb_free(&sb);
}

/* Add the rows of res (key columns) to table t's pending keys. */
void
cap_add_keys(CapTable *t, PGresult *res)
{
	char	  **vals = bridge_malloc(sizeof(char *) * (t->nkey + 1));
	StrBuf		sb;

	sb_init(&sb);
	for (int r = 0; r < PQntuples(res); r++)
	{
		for (int k = 0; k < t->nkey; k++)
			vals[k] = PQgetisnull(res, r, k) ? NULL : PQgetvalue(res, r, k);
		sb.len = 0;
		sb.data[0] = '\0';
		cap_encode_values(&sb, vals, t->nkey);
		cap_keyset_add(&t->pending, sb.data);
	}
	sb_free(&sb);
	free(vals);
}

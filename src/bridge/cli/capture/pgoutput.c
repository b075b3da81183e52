/*-------------------------------------------------------------------------
 *
 * pgoutput.c
 *	  Decoding of the messages of PostgreSQL's pgoutput plugin, protocol
 *	  version 1 (whole transactions at commit): Begin, Commit, Relation,
 *	  Insert, Update, Delete, Truncate; Origin, Type and logical messages
 *	  are recognized and ignored.  No I/O: the bytes come from
 *	  replication.c, every read is bounds-checked and a malformed message
 *	  is an error, never a guess.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/capture/pgoutput.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

typedef struct Reader
{
	const unsigned char *p;
	int			len;
	int			pos;
	bool		bad;
} Reader;

/* Bytes available, or the reader is marked bad. */
static bool
need(Reader *r, int n)
{
	if (r->bad || n < 0 || r->len - r->pos < n)
	{
		r->bad = true;
		return false;
	}
	return true;
}

static unsigned int
get8(Reader *r)
{
	if (!need(r, 1))
		return 0;
	return r->p[r->pos++];
}

static unsigned int
get16(Reader *r)
{
	unsigned int v;

	if (!need(r, 2))
		return 0;
	v = ((unsigned int) r->p[r->pos] << 8) | r->p[r->pos + 1];
	r->pos += 2;
	return v;
}

static uint32_t
get32(Reader *r)
{
	uint32_t	v = 0;

	if (!need(r, 4))
		return 0;
	for (int i = 0; i < 4; i++)
		v = (v << 8) | r->p[r->pos + i];
	r->pos += 4;
	return v;
}

static uint64_t
get64(Reader *r)
{
	uint64_t	v;

	if (!need(r, 8))
		return 0;
	v = cap_get64((const char *) r->p + r->pos);
	r->pos += 8;
	return v;
}

/* A NUL-terminated string, copied. */
static char *
getstr(Reader *r)
{
	const unsigned char *start;
	const unsigned char *nul;

	if (r->bad)
		return bridge_strdup("");
	start = r->p + r->pos;
	nul = memchr(start, '\0', r->len - r->pos);
	if (nul == NULL)
	{
		r->bad = true;
		return bridge_strdup("");
	}
	r->pos += (int) (nul - start) + 1;
	return bridge_strdup((const char *) start);
}

/*
 * get_tuple
 *		TupleData: int16 column count, then per column a kind byte ('n'
 *		null, 'u' unchanged TOASTed value that is not sent, 't' text with an
 *		int32 length; 'b' binary is refused: the stream never asks for it).
 */
static void
get_tuple(Reader *r, CapTuple *t)
{
	t->ncols = (int) get16(r);
	t->kinds = bridge_malloc(t->ncols + 1);
	t->values = bridge_malloc(sizeof(char *) * (t->ncols + 1));
	for (int i = 0; i < t->ncols; i++)
	{
		char		k = (char) get8(r);

		t->kinds[i] = k;
		t->values[i] = NULL;
		if (k == 't')
		{
			uint32_t	n = get32(r);

			if (n > (uint32_t) (r->len - r->pos) || !need(r, (int) n))
			{
				r->bad = true;
				t->kinds[i] = 'n';
				continue;
			}
			t->values[i] = bridge_malloc(n + 1);
			memcpy(t->values[i], r->p + r->pos, n);
			t->values[i][n] = '\0';
			r->pos += (int) n;
		}
		else if (k != 'n' && k != 'u')
		{
			r->bad = true;
			t->kinds[i] = 'n';
		}
	}
}

static void
tuple_free(CapTuple *t)
{
	for (int i = 0; i < t->ncols; i++)
		free(t->values[i]);
	free(t->values);
	free(t->kinds);
	memset(t, 0, sizeof(*t));
}

/* Free what a Relation message allocated. */
void
cap_relation_free(CapRelation *r)
{
	for (int i = 0; i < r->natts; i++)
		free(r->cols[i].name);
	free(r->cols);
	free(r->nspname);
	free(r->relname);
	memset(r, 0, sizeof(*r));
}

/* Free what cap_decode allocated in m (a Relation message's copy too). */
void
cap_message_free(CapMessage *m)
{
	tuple_free(&m->oldt);
	tuple_free(&m->newt);
	cap_relation_free(&m->rel);
	free(m->trunc_relids);
	memset(m, 0, sizeof(*m));
}

/*
 * cap_decode
 *		Decode one pgoutput message (the payload of an XLogData message)
 *		into m.  Returns false with a message in err when it is malformed or
 *		of a kind protocol version 1 does not send (e.g. streamed
 *		transactions, which the stream does not request).
 */
bool
cap_decode(const char *buf, int len, CapMessage *m, char *err, size_t errlen)
{
	Reader		r = {(const unsigned char *) buf, len, 0, false};
	char		tag;

	memset(m, 0, sizeof(*m));
	tag = (char) get8(&r);
	switch (tag)
	{
		case 'B':
			m->kind = CAP_BEGIN;
			m->lsn = get64(&r);
			m->commit_time = (int64_t) get64(&r);
			m->xid = get32(&r);
			break;
		case 'C':
			m->kind = CAP_COMMIT;
			(void) get8(&r);	/* flags */
			m->lsn = get64(&r);
			m->end_lsn = get64(&r);
			m->commit_time = (int64_t) get64(&r);
			break;
		case 'R':
			m->kind = CAP_RELATION;
			m->rel.relid = get32(&r);
			m->rel.nspname = getstr(&r);
			m->rel.relname = getstr(&r);
			m->rel.identity = (char) get8(&r);
			m->rel.natts = (int) get16(&r);
			m->rel.cols = bridge_malloc(sizeof(CapColumn) * (m->rel.natts + 1));
			for (int i = 0; i < m->rel.natts; i++)
			{
				m->rel.cols[i].flags = (int) get8(&r);
				m->rel.cols[i].name = getstr(&r);
				m->rel.cols[i].typid = get32(&r);
				m->rel.cols[i].typmod = (int) get32(&r);
			}
			break;
		case 'I':
			m->kind = CAP_INSERT;
			m->relid = get32(&r);
			if (get8(&r) != 'N')
				r.bad = true;
			get_tuple(&r, &m->newt);
			break;
		case 'U':
			{
				char		k;

				m->kind = CAP_UPDATE;
				m->relid = get32(&r);
				k = (char) get8(&r);
				if (k == 'K' || k == 'O')
				{
					m->has_old = true;
					m->old_full = k == 'O';
					get_tuple(&r, &m->oldt);
					k = (char) get8(&r);
				}
				if (k != 'N')
					r.bad = true;
				get_tuple(&r, &m->newt);
				break;
			}
		case 'D':
			{
				char		k;

				m->kind = CAP_DELETE;
				m->relid = get32(&r);
				k = (char) get8(&r);
				if (k != 'K' && k != 'O')
					r.bad = true;
				m->has_old = true;
				m->old_full = k == 'O';
				get_tuple(&r, &m->oldt);
				break;
			}
		case 'T':
			m->kind = CAP_TRUNCATE;
			m->ntrunc = (int) get32(&r);
			(void) get8(&r);	/* options: CASCADE, RESTART IDENTITY */
			if (m->ntrunc < 0 || m->ntrunc > 100000 || !need(&r, 4 * m->ntrunc))
			{
				r.bad = true;
				m->ntrunc = 0;
			}
			m->trunc_relids = bridge_malloc(sizeof(unsigned int) * (m->ntrunc + 1));
			for (int i = 0; i < m->ntrunc; i++)
				m->trunc_relids[i] = get32(&r);
			break;
		case 'O':				/* origin */
		case 'Y':				/* type */
		case 'M':				/* logical message */
			m->kind = CAP_IGNORED;
			return true;
		default:
			snprintf(err, errlen, "unexpected pgoutput message type 0x%02x (protocol version 1 sends B, C, R, I, U, D, T, O, Y, M)",
					 (unsigned char) tag);
			return false;
	}
	if (r.bad)
	{
		snprintf(err, errlen, "malformed pgoutput message '%c' (%d bytes)", tag, len);
		return false;
	}
	return true;
}

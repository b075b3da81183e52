/*-------------------------------------------------------------------------
 *
 * cql_frame.c
 *		Envelope headers, v4 LZ4 bodies, and the v5 outer framing: the
 *		frame encoder and the incremental decoder of received bytes.
 *
 * The decoder is a state machine that never blocks and never trusts a
 * length it has not checked: the caller feeds whatever recv() returned and
 * pulls complete envelopes.  Bytes are buffered until a whole frame (v5) or
 * a whole envelope (v4) is present, so the only allocations driven by the
 * peer are one frame payload (<= 131071 bytes, fixed) and one message whose
 * length has been checked against the configured maximum first.
 *
 * layer: transport
 *
 * IDENTIFICATION
 *		src/cql/cql_frame.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_frame_int.h"

#include <ctype.h>
#include <limits.h>
#include <string.h>

#include <lz4.h>

/* scratch buffers bigger than this are released once a message is handed out */
#define KEEP_BUFFER_BYTES	(1024 * 1024)
/* first allocation of a large (multi-frame) message after its header */
#define BIG_FIRST_BYTES		(256 * 1024)

/* ---------------------------------------------------------------------
 * Names
 * ---------------------------------------------------------------------
 */
const char *
cql_opcode_name(int opcode)
{
	switch (opcode)
	{
		case CQL_OP_ERROR:
			return "ERROR";
		case CQL_OP_STARTUP:
			return "STARTUP";
		case CQL_OP_READY:
			return "READY";
		case CQL_OP_AUTHENTICATE:
			return "AUTHENTICATE";
		case CQL_OP_OPTIONS:
			return "OPTIONS";
		case CQL_OP_SUPPORTED:
			return "SUPPORTED";
		case CQL_OP_QUERY:
			return "QUERY";
		case CQL_OP_RESULT:
			return "RESULT";
		case CQL_OP_PREPARE:
			return "PREPARE";
		case CQL_OP_EXECUTE:
			return "EXECUTE";
		case CQL_OP_REGISTER:
			return "REGISTER";
		case CQL_OP_EVENT:
			return "EVENT";
		case CQL_OP_BATCH:
			return "BATCH";
		case CQL_OP_AUTH_CHALLENGE:
			return "AUTH_CHALLENGE";
		case CQL_OP_AUTH_RESPONSE:
			return "AUTH_RESPONSE";
		case CQL_OP_AUTH_SUCCESS:
			return "AUTH_SUCCESS";
	}
	return "UNKNOWN";
}

static const char *const consistency_names[] = {
	"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM",
	"EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE", "NODE_LOCAL"
};

#define N_CONSISTENCY ((int) (sizeof(consistency_names) / sizeof(consistency_names[0])))

const char *
cql_consistency_name(int code)
{
	if (code < 0 || code >= N_CONSISTENCY)
		return NULL;
	return consistency_names[code];
}

cql_status
cql_consistency_parse(const char *name, uint16_t *code)
{
	if (name == NULL)
		return CQL_ERR_INVALID_ARG;
	for (int i = 0; i < N_CONSISTENCY; i++)
	{
		const char *a = consistency_names[i];
		const char *b = name;

		while (*a && *b && toupper((unsigned char) *b) == *a)
		{
			a++;
			b++;
		}
		if (*a == '\0' && *b == '\0')
		{
			*code = (uint16_t) i;
			return CQL_OK;
		}
	}
	return CQL_ERR_INVALID_ARG;
}

/* ---------------------------------------------------------------------
 * Envelope header
 * ---------------------------------------------------------------------
 */
void
cql_envelope_header_encode(const cql_envelope_header *h, uint8_t out[CQL_HEADER_LEN])
{
	out[0] = (uint8_t) ((h->version & 0x7F) | (h->response ? CQL_VERSION_RESPONSE : 0));
	out[1] = h->flags;
	out[2] = (uint8_t) ((uint16_t) h->stream >> 8);
	out[3] = (uint8_t) h->stream;
	out[4] = h->opcode;
	cql_put_be32(out + 5, h->length);
}

cql_status
cql_envelope_header_decode(const uint8_t *p, size_t n, cql_envelope_header *h)
{
	if (n < CQL_HEADER_LEN)
		return CQL_ERR_TRUNCATED;
	h->version = p[0] & 0x7F;
	h->response = (p[0] & CQL_VERSION_RESPONSE) != 0;
	h->flags = p[1];
	h->stream = (int16_t) cql_get_be16(p + 2);
	h->opcode = p[4];
	h->length = cql_get_be32(p + 5);
	/* v1/v2 had an 8-byte header: we cannot even frame them */
	if (h->version < CQL_PROTOCOL_V3)
		return CQL_ERR_UNSUPPORTED;
	if (h->length > CQL_MAX_BODY_LENGTH)
		return CQL_ERR_TOO_LARGE;
	return CQL_OK;
}

size_t
cql_envelope_begin(cql_buf *b, int version, uint8_t flags, int16_t stream,
				   uint8_t opcode)
{
	size_t		start = b->len;
	cql_envelope_header h;
	uint8_t		raw[CQL_HEADER_LEN];

	h.version = (uint8_t) version;
	h.response = false;
	h.flags = flags;
	h.stream = stream;
	h.opcode = opcode;
	h.length = 0;
	cql_envelope_header_encode(&h, raw);
	cql_buf_put(b, raw, sizeof(raw));
	return start;
}

cql_status
cql_envelope_end(cql_buf *b, size_t start, bool lz4_compress)
{
	size_t		body_len;
	cql_status	st;

	if (b->failed)
		return CQL_ERR_NOMEM;
	if (start > b->len || b->len - start < CQL_HEADER_LEN)
		return CQL_ERR_INVALID_ARG;
	body_len = b->len - start - CQL_HEADER_LEN;
	if (body_len > CQL_MAX_BODY_LENGTH)
		return CQL_ERR_TOO_LARGE;

	/*
	 * Only v4 compresses envelope bodies; in v5 the outer frame does it and
	 * the envelope flag is ignored.  Empty bodies are left alone (the
	 * server accepts either form and the compressed one is longer).
	 */
	if (lz4_compress && body_len > 0 && (b->data[start] & 0x7F) < CQL_PROTOCOL_V5)
	{
		cql_buf		tmp;

		cql_buf_init(&tmp, b->alloc);
		st = cql_lz4_compress_body(&tmp, b->data + start + CQL_HEADER_LEN, body_len);
		if (st != CQL_OK)
		{
			cql_buf_free(&tmp);
			return st;
		}
		b->len = start + CQL_HEADER_LEN;
		cql_buf_put(b, tmp.data, tmp.len);
		cql_buf_free(&tmp);
		if (b->failed)
			return CQL_ERR_NOMEM;
		b->data[start + 1] |= CQL_FLAG_COMPRESSION;
		body_len = b->len - start - CQL_HEADER_LEN;
	}
	cql_put_be32(b->data + start + 5, (uint32_t) body_len);
	return CQL_OK;
}

cql_status
cql_envelope_build(cql_buf *b, int version, uint8_t flags, int16_t stream,
				   uint8_t opcode, const uint8_t *body, size_t body_len,
				   bool lz4_compress)
{
	size_t		start;

	if (body_len > CQL_MAX_BODY_LENGTH)
		return CQL_ERR_TOO_LARGE;
	start = cql_envelope_begin(b, version, flags, stream, opcode);
	if (body_len > 0)
		cql_buf_put(b, body, body_len);
	return cql_envelope_end(b, start, lz4_compress);
}

/* ---------------------------------------------------------------------
 * v4 body compression
 * ---------------------------------------------------------------------
 */
cql_status
cql_lz4_compress_body(cql_buf *out, const uint8_t *p, size_t n)
{
	int			bound;
	int			clen;

	if (n > CQL_MAX_BODY_LENGTH)
		return CQL_ERR_TOO_LARGE;
	bound = LZ4_compressBound((int) n);
	if (bound <= 0)
		return CQL_ERR_COMPRESSION;
	if (!cql_buf_reserve(out, 4 + (size_t) bound))
		return CQL_ERR_NOMEM;
	cql_put_be32(out->data + out->len, (uint32_t) n);
	clen = LZ4_compress_default((const char *) p, (char *) out->data + out->len + 4,
								(int) n, bound);
	if (clen <= 0)
		return CQL_ERR_COMPRESSION;
	out->len += 4 + (size_t) clen;
	return CQL_OK;
}

cql_status
cql_lz4_decompress_body(cql_buf *out, const uint8_t *p, size_t n, size_t max_len)
{
	uint32_t	ulen;
	size_t		clen;
	int			got;

	if (max_len == 0 || max_len > CQL_MAX_BODY_LENGTH)
		max_len = CQL_MAX_BODY_LENGTH;
	if (n < 4)
		return CQL_ERR_COMPRESSION;
	ulen = cql_get_be32(p);
	clen = n - 4;
	if (ulen > max_len)
		return CQL_ERR_TOO_LARGE;
	if (clen > INT_MAX)
		return CQL_ERR_TOO_LARGE;

	/*
	 * An LZ4 block cannot expand more than ~255:1, so a claimed length far
	 * beyond that is a lie; refuse it before allocating the claimed size.
	 */
	if ((uint64_t) ulen > (uint64_t) clen * 255 + 64)
		return CQL_ERR_COMPRESSION;
	if (!cql_buf_reserve(out, (size_t) ulen + 1))
		return CQL_ERR_NOMEM;
	got = LZ4_decompress_safe((const char *) p + 4, (char *) out->data + out->len,
							  (int) clen, (int) ulen);
	if (got < 0 || (uint32_t) got != ulen)
		return CQL_ERR_COMPRESSION;
	out->len += ulen;
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * v5 frame headers
 * ---------------------------------------------------------------------
 */
int
cql_frame_header_len(cql_frame_format fmt)
{
	return fmt == CQL_FRAME_LZ4 ? CQL_FRAME_LZ4_HEADER_LEN : CQL_FRAME_CRC_HEADER_LEN;
}

void
cql_frame_header_encode(cql_frame_format fmt, const cql_frame_header *h, uint8_t *out)
{
	uint64_t	v;
	int			nbytes;
	uint32_t	crc;

	if (fmt == CQL_FRAME_LZ4)
	{
		v = (uint64_t) (h->payload_len & 0x1FFFF) |
			((uint64_t) (h->uncompressed_len & 0x1FFFF) << 17) |
			((uint64_t) (h->self_contained ? 1 : 0) << 34);
		nbytes = 5;
	}
	else
	{
		v = (uint64_t) (h->payload_len & 0x1FFFF) |
			((uint64_t) (h->self_contained ? 1 : 0) << 17);
		nbytes = 3;
	}
	for (int i = 0; i < nbytes; i++)
		out[i] = (uint8_t) (v >> (8 * i));
	crc = cql_crc24(v, nbytes);
	for (int i = 0; i < 3; i++)
		out[nbytes + i] = (uint8_t) (crc >> (8 * i));
}

cql_status
cql_frame_header_decode(cql_frame_format fmt, const uint8_t *p, size_t n,
						cql_frame_header *h)
{
	int			nbytes = fmt == CQL_FRAME_LZ4 ? 5 : 3;
	uint64_t	v = 0;
	uint32_t	crc = 0;

	if (n < (size_t) nbytes + 3)
		return CQL_ERR_TRUNCATED;
	for (int i = nbytes - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	for (int i = 2; i >= 0; i--)
		crc = (crc << 8) | p[nbytes + i];
	if (crc != cql_crc24(v, nbytes))
		return CQL_ERR_CRC;
	h->payload_len = (uint32_t) (v & 0x1FFFF);
	if (fmt == CQL_FRAME_LZ4)
	{
		h->uncompressed_len = (uint32_t) ((v >> 17) & 0x1FFFF);
		h->self_contained = ((v >> 34) & 1) != 0;
	}
	else
	{
		h->uncompressed_len = 0;
		h->self_contained = ((v >> 17) & 1) != 0;
	}
	/* 17-bit fields cannot exceed the limit, but keep the check explicit */
	if (h->payload_len > CQL_FRAME_MAX_PAYLOAD ||
		h->uncompressed_len > CQL_FRAME_MAX_PAYLOAD)
		return CQL_ERR_TOO_LARGE;
	return CQL_OK;
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

static uint32_t
get_le32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) |
		((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

cql_status
cql_frame_encode(cql_buf *out, cql_frame_format fmt, const uint8_t *payload,
				 size_t n, bool self_contained)
{
	cql_frame_header h;
	int			hl = cql_frame_header_len(fmt);
	uint8_t    *hdr;
	uint8_t    *body;
	size_t		start;

	if (n > CQL_FRAME_MAX_PAYLOAD)
		return CQL_ERR_TOO_LARGE;
	if (out->failed)
		return CQL_ERR_NOMEM;
	h.self_contained = self_contained;
	h.uncompressed_len = 0;
	h.payload_len = (uint32_t) n;
	start = out->len;

	if (fmt == CQL_FRAME_LZ4)
	{
		int			bound = LZ4_compressBound((int) n);
		int			clen = 0;

		if (!cql_buf_reserve(out, (size_t) hl + (size_t) bound + CQL_FRAME_TRAILER_LEN))
			return CQL_ERR_NOMEM;
		body = out->data + start + hl;
		if (n > 0)
			clen = LZ4_compress_default((const char *) payload, (char *) body,
										(int) n, bound);
		if (clen > 0 && (size_t) clen < n)
		{
			h.payload_len = (uint32_t) clen;
			h.uncompressed_len = (uint32_t) n;
		}
		else
		{
			/* incompressible: send as-is, flagged by uncompressed_len 0 */
			if (n > 0)
				memcpy(body, payload, n);
		}
	}
	else
	{
		if (!cql_buf_reserve(out, (size_t) hl + n + CQL_FRAME_TRAILER_LEN))
			return CQL_ERR_NOMEM;
		body = out->data + start + hl;
		if (n > 0)
			memcpy(body, payload, n);
	}
	hdr = out->data + start;
	cql_frame_header_encode(fmt, &h, hdr);
	put_le32(body + h.payload_len, cql_crc32(body, h.payload_len));
	out->len = start + (size_t) hl + h.payload_len + CQL_FRAME_TRAILER_LEN;
	return CQL_OK;
}

cql_status
cql_frames_encode(cql_buf *out, cql_frame_format fmt, const uint8_t *env, size_t n)
{
	size_t		out_start = out->len;
	size_t		pos = 0;
	size_t		frame_start = 0;
	cql_status	st = CQL_OK;

	if (n > 0 && env == NULL)
		return CQL_ERR_INVALID_ARG;

	/* validate the whole input first so that nothing partial is written */
	while (pos < n)
	{
		cql_envelope_header h;

		if (cql_envelope_header_decode(env + pos, n - pos, &h) != CQL_OK)
			return CQL_ERR_INVALID_ARG;
		if (h.length > n - pos - CQL_HEADER_LEN)
			return CQL_ERR_INVALID_ARG;
		pos += CQL_HEADER_LEN + h.length;
	}

	pos = 0;
	while (pos < n && st == CQL_OK)
	{
		size_t		total = CQL_HEADER_LEN + cql_get_be32(env + pos + 5);

		if (total > CQL_FRAME_MAX_PAYLOAD)
		{
			/* a large message: flush what is pending, then slice it */
			if (pos > frame_start)
				st = cql_frame_encode(out, fmt, env + frame_start, pos - frame_start, true);
			for (size_t off = 0; off < total && st == CQL_OK; off += CQL_FRAME_MAX_PAYLOAD)
			{
				size_t		chunk = total - off;

				if (chunk > CQL_FRAME_MAX_PAYLOAD)
					chunk = CQL_FRAME_MAX_PAYLOAD;
				st = cql_frame_encode(out, fmt, env + pos + off, chunk, false);
			}
			pos += total;
			frame_start = pos;
			continue;
		}
		if (pos + total - frame_start > CQL_FRAME_MAX_PAYLOAD)
		{
			st = cql_frame_encode(out, fmt, env + frame_start, pos - frame_start, true);
			frame_start = pos;
		}
		pos += total;
	}
	if (st == CQL_OK && pos > frame_start)
		st = cql_frame_encode(out, fmt, env + frame_start, pos - frame_start, true);
	if (st != CQL_OK && !out->failed)
		out->len = out_start;
	return st;
}

/* ---------------------------------------------------------------------
 * Incremental decoder
 * ---------------------------------------------------------------------
 */
void
cql_segment_decoder_init(cql_segment_decoder *d, const cql_allocator *a,
						 cql_decode_mode mode)
{
	memset(d, 0, sizeof(*d));
	d->alloc = a;
	d->mode = mode;
	d->max_body = CQL_MAX_BODY_LENGTH;
	d->fatal = CQL_OK;
	cql_buf_init(&d->scratch, a);
}

void
cql_segment_decoder_free(cql_segment_decoder *d)
{
	if (d->in)
		cql_free(d->alloc, d->in);
	if (d->plbuf)
		cql_free(d->alloc, d->plbuf);
	if (d->big)
		cql_free(d->alloc, d->big);
	cql_buf_free(&d->scratch);
	d->in = d->plbuf = d->big = NULL;
	d->in_pos = d->in_len = d->in_cap = 0;
	d->big_len = d->big_cap = d->big_total = 0;
	d->pl_active = d->big_active = false;
}

void
cql_segment_decoder_set_mode(cql_segment_decoder *d, cql_decode_mode mode)
{
	d->mode = mode;
}

void
cql_segment_decoder_set_v4_lz4(cql_segment_decoder *d, bool on)
{
	d->v4_lz4 = on;
}

void
cql_segment_decoder_set_max_body(cql_segment_decoder *d, size_t max_body)
{
	if (max_body == 0 || max_body > CQL_MAX_BODY_LENGTH)
		max_body = CQL_MAX_BODY_LENGTH;
	d->max_body = max_body;
}

cql_status
cql_segment_decoder_take_body(cql_segment_decoder *d, const cql_envelope *env,
							  uint8_t **body)
{
	*body = NULL;
	if (env == NULL || (env->body == NULL && env->body_len > 0))
		return CQL_ERR_INVALID_ARG;

	/* the reassembled large message: hand over the buffer itself */
	if (d->big != NULL && !d->big_active && d->big_total > 0 &&
		env->body == d->big + CQL_HEADER_LEN &&
		env->body_len == d->big_total - CQL_HEADER_LEN)
	{
		memmove(d->big, d->big + CQL_HEADER_LEN, env->body_len);
		*body = d->big;
		d->big = NULL;
		d->big_cap = 0;
		d->big_len = 0;
		d->big_total = 0;
		return CQL_OK;
	}
	*body = cql_alloc(d->alloc, env->body_len ? env->body_len : 1);
	if (*body == NULL)
		return CQL_ERR_NOMEM;
	if (env->body_len > 0)
		memcpy(*body, env->body, env->body_len);
	return CQL_OK;
}

size_t
cql_segment_decoder_buffered(const cql_segment_decoder *d)
{
	return d->in_len - d->in_pos;
}

static cql_status
decoder_fail(cql_segment_decoder *d, cql_status st)
{
	d->fatal = st;
	d->pl_active = false;
	d->big_active = false;
	return st;
}

cql_status
cql_segment_decoder_feed(cql_segment_decoder *d, const uint8_t *p, size_t n)
{
	size_t		unread;

	if (d->fatal != CQL_OK)
		return d->fatal;
	if (n == 0)
		return CQL_OK;

	/* drop consumed bytes (this invalidates borrowed envelope bodies) */
	unread = d->in_len - d->in_pos;
	if (d->in_pos > 0)
	{
		if (unread > 0)
			memmove(d->in, d->in + d->in_pos, unread);
		d->in_pos = 0;
		d->in_len = unread;
	}
	if (n > SIZE_MAX / 2 - d->in_len)
		return decoder_fail(d, CQL_ERR_TOO_LARGE);
	if (d->in_len + n > d->in_cap)
	{
		size_t		ncap = d->in_cap ? d->in_cap : 4096;
		uint8_t    *nb;

		while (ncap < d->in_len + n)
			ncap *= 2;
		nb = cql_realloc(d->alloc, d->in, ncap);
		if (nb == NULL)
			return decoder_fail(d, CQL_ERR_NOMEM);
		d->in = nb;
		d->in_cap = ncap;
	}
	memcpy(d->in + d->in_len, p, n);
	d->in_len += n;
	return CQL_OK;
}

/* v4 (and handshake) mode: one 9-byte header + body at a time */
static cql_status
next_envelope(cql_segment_decoder *d, cql_envelope *env)
{
	size_t		avail = d->in_len - d->in_pos;
	const uint8_t *p = d->in + d->in_pos;
	cql_envelope_header h;
	cql_status	st;

	if (avail < CQL_HEADER_LEN)
		return CQL_ERR_TRUNCATED;
	st = cql_envelope_header_decode(p, avail, &h);
	if (st != CQL_OK)
		return decoder_fail(d, st);
	if (h.length > d->max_body)
		return decoder_fail(d, CQL_ERR_TOO_LARGE);
	if (avail - CQL_HEADER_LEN < h.length)
		return CQL_ERR_TRUNCATED;

	env->body = p + CQL_HEADER_LEN;
	env->body_len = h.length;
	if (h.flags & CQL_FLAG_COMPRESSION)
	{
		if (h.version >= CQL_PROTOCOL_V5)
		{
			/* deprecated and ignored in v5 */
		}
		else if (!d->v4_lz4)
			return decoder_fail(d, CQL_ERR_MALFORMED);
		else
		{
			cql_buf_reset(&d->scratch);
			st = cql_lz4_decompress_body(&d->scratch, env->body, env->body_len,
										 d->max_body);
			if (st != CQL_OK)
				return decoder_fail(d, st);
			env->body = d->scratch.data;
			env->body_len = d->scratch.len;
		}
		h.flags &= ~CQL_FLAG_COMPRESSION;
	}
	/* consume the raw (possibly compressed) envelope */
	d->in_pos += CQL_HEADER_LEN + (size_t) h.length;
	h.length = (uint32_t) env->body_len;
	env->hdr = h;
	return CQL_OK;
}

/* append payload bytes of a non-self-contained frame to the large message */
static cql_status
big_append(cql_segment_decoder *d, const uint8_t *p, size_t n)
{
	if (!d->big_active)
	{
		d->big_active = true;
		d->big_len = 0;
		d->big_total = 0;
	}
	if (d->big_total == 0)
	{
		size_t		take = CQL_HEADER_LEN - d->big_len;

		if (take > n)
			take = n;
		if (d->big_cap < CQL_HEADER_LEN)
		{
			uint8_t    *nb = cql_realloc(d->alloc, d->big, CQL_HEADER_LEN);

			if (nb == NULL)
				return CQL_ERR_NOMEM;
			d->big = nb;
			d->big_cap = CQL_HEADER_LEN;
		}
		memcpy(d->big + d->big_len, p, take);
		d->big_len += take;
		p += take;
		n -= take;
		if (d->big_len < CQL_HEADER_LEN)
			return CQL_OK;
		{
			cql_envelope_header h;
			cql_status	st = cql_envelope_header_decode(d->big, d->big_len, &h);

			if (st != CQL_OK)
				return st;
			if (h.length > d->max_body)
				return CQL_ERR_TOO_LARGE;
			d->big_total = CQL_HEADER_LEN + (size_t) h.length;
		}
	}
	/* frames of a large message carry only that message */
	if (n > d->big_total - d->big_len)
		return CQL_ERR_MALFORMED;
	if (d->big_len + n > d->big_cap)
	{
		/*
		 * Grow with the bytes that really arrived (doubling, capped by the
		 * claimed total), never to the claimed size up front: a few bytes
		 * of header must not buy a max_body allocation.
		 */
		size_t		need = d->big_len + n;
		size_t		ncap = d->big_cap < BIG_FIRST_BYTES ? BIG_FIRST_BYTES : d->big_cap;
		uint8_t    *nb;

		while (ncap < need)
			ncap *= 2;
		if (ncap > d->big_total)
			ncap = d->big_total;
		nb = cql_realloc(d->alloc, d->big, ncap);
		if (nb == NULL)
			return CQL_ERR_NOMEM;
		d->big = nb;
		d->big_cap = ncap;
	}
	if (n > 0)
		memcpy(d->big + d->big_len, p, n);
	d->big_len += n;
	return CQL_OK;
}

cql_status
cql_segment_decoder_next(cql_segment_decoder *d, cql_envelope *env)
{
	cql_frame_format fmt;
	int			hl;

	if (d->fatal != CQL_OK)
		return d->fatal;

	/* the large message handed out last time is no longer borrowed */
	if (d->big_total > 0 && !d->big_active)
	{
		d->big_total = 0;
		d->big_len = 0;
		if (d->big_cap > KEEP_BUFFER_BYTES)
		{
			cql_free(d->alloc, d->big);
			d->big = NULL;
			d->big_cap = 0;
		}
	}
	if (d->scratch.cap > KEEP_BUFFER_BYTES)
	{
		cql_buf_free(&d->scratch);
		cql_buf_init(&d->scratch, d->alloc);
	}

	if (d->mode == CQL_DECODE_ENVELOPES)
		return next_envelope(d, env);

	fmt = d->mode == CQL_DECODE_FRAMES_LZ4 ? CQL_FRAME_LZ4 : CQL_FRAME_CRC;
	hl = cql_frame_header_len(fmt);

	for (;;)
	{
		size_t		avail;
		const uint8_t *fp;
		const uint8_t *payload;
		cql_frame_header fh;
		cql_status	st;
		size_t		total;
		size_t		plen;

		if (d->pl_active)
		{
			size_t		rem = d->pl_len - d->pl_pos;
			const uint8_t *ep = d->plbuf + d->pl_pos;
			cql_envelope_header h;

			if (rem == 0)
			{
				d->pl_active = false;
				continue;
			}
			/* a self-contained payload holds only complete envelopes */
			st = cql_envelope_header_decode(ep, rem, &h);
			if (st == CQL_ERR_TRUNCATED)
				return decoder_fail(d, CQL_ERR_MALFORMED);
			if (st != CQL_OK)
				return decoder_fail(d, st);
			if (h.length > rem - CQL_HEADER_LEN)
				return decoder_fail(d, CQL_ERR_MALFORMED);
			if (h.length > d->max_body)
				return decoder_fail(d, CQL_ERR_TOO_LARGE);
			env->hdr = h;
			env->hdr.flags &= ~CQL_FLAG_COMPRESSION;
			env->body = ep + CQL_HEADER_LEN;
			env->body_len = h.length;
			d->pl_pos += CQL_HEADER_LEN + h.length;
			return CQL_OK;
		}

		avail = d->in_len - d->in_pos;
		fp = d->in + d->in_pos;
		if (avail < (size_t) hl)
			return CQL_ERR_TRUNCATED;
		st = cql_frame_header_decode(fmt, fp, avail, &fh);
		if (st != CQL_OK)
			return decoder_fail(d, st);
		total = (size_t) hl + fh.payload_len + CQL_FRAME_TRAILER_LEN;
		if (avail < total)
			return CQL_ERR_TRUNCATED;
		payload = fp + hl;
		if (get_le32(payload + fh.payload_len) != cql_crc32(payload, fh.payload_len))
		{
			d->in_pos += total;
			if (!fh.self_contained || d->big_active)
				return decoder_fail(d, CQL_ERR_CRC);
			/* only this frame's envelopes are lost; the stream stays in sync */
			d->corrupt_frames++;
			return CQL_ERR_CRC;
		}

		if (d->plbuf == NULL)
		{
			d->plbuf = cql_alloc(d->alloc, CQL_FRAME_MAX_PAYLOAD);
			if (d->plbuf == NULL)
				return decoder_fail(d, CQL_ERR_NOMEM);
		}
		if (fmt == CQL_FRAME_LZ4 && fh.uncompressed_len > 0)
		{
			int			got;

			got = LZ4_decompress_safe((const char *) payload, (char *) d->plbuf,
									  (int) fh.payload_len, (int) fh.uncompressed_len);
			if (got < 0 || (uint32_t) got != fh.uncompressed_len)
				return decoder_fail(d, CQL_ERR_COMPRESSION);
			plen = fh.uncompressed_len;
		}
		else
		{
			if (fh.payload_len > 0)
				memcpy(d->plbuf, payload, fh.payload_len);
			plen = fh.payload_len;
		}
		d->in_pos += total;

		if (fh.self_contained)
		{
			/* a large message must not be interrupted by other frames */
			if (d->big_active)
				return decoder_fail(d, CQL_ERR_MALFORMED);
			d->pl_active = true;
			d->pl_pos = 0;
			d->pl_len = plen;
			continue;
		}

		st = big_append(d, d->plbuf, plen);
		if (st != CQL_OK)
			return decoder_fail(d, st);
		if (d->big_total > 0 && d->big_len == d->big_total)
		{
			cql_envelope_header h;

			(void) cql_envelope_header_decode(d->big, d->big_len, &h);
			h.flags &= ~CQL_FLAG_COMPRESSION;
			env->hdr = h;
			env->body = d->big + CQL_HEADER_LEN;
			env->body_len = h.length;
			d->big_active = false;	/* released at the next call */
			return CQL_OK;
		}
	}
}

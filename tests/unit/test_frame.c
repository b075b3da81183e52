/*
 * test_frame.c
 *		Envelope headers, v4 LZ4 bodies, v5 frame encoding and the
 *		incremental decoder (any split of the input, corrupt CRCs,
 *		truncation, lengths past the end, large multi-frame messages).
 */
#include "cql_frame_int.h"
#include "tap.h"
#include "counting_alloc.h"

static const cql_allocator *A = &cql_malloc_allocator;

/* Append one response envelope with a deterministic body. */
static void
add_envelope(cql_buf *b, int version, int16_t stream, uint8_t opcode,
			 size_t body_len, unsigned seed, bool compressible)
{
	cql_envelope_header h = {(uint8_t) version, true, 0, stream, opcode, (uint32_t) body_len};
	uint8_t		raw[CQL_HEADER_LEN];
	uint32_t	x = seed * 2654435761u + 1;

	cql_envelope_header_encode(&h, raw);
	cql_buf_put(b, raw, sizeof(raw));
	for (size_t i = 0; i < body_len; i++)
	{
		x = x * 1103515245u + 12345u;
		cql_buf_u8(b, compressible ? (uint8_t) ('a' + (i / 7 + seed) % 5) : (uint8_t) (x >> 16));
	}
}

/* Decoded envelopes, copied out of the decoder. */
typedef struct got_env
{
	cql_envelope_header hdr;
	uint8_t    *body;
	size_t		len;
} got_env;

typedef struct got_list
{
	got_env		e[64];
	int			n;
	cql_status	last;			/* first non-TRUNCATED error, or TRUNCATED */
} got_list;

static void
got_free(got_list *g)
{
	for (int i = 0; i < g->n; i++)
		free(g->e[i].body);
	g->n = 0;
}

static void
pull_all(cql_segment_decoder *d, got_list *g)
{
	cql_envelope env;
	cql_status	st;

	while ((st = cql_segment_decoder_next(d, &env)) == CQL_OK)
	{
		if (g->n < 64)
		{
			g->e[g->n].hdr = env.hdr;
			g->e[g->n].body = malloc(env.body_len ? env.body_len : 1);
			memcpy(g->e[g->n].body, env.body, env.body_len);
			g->e[g->n].len = env.body_len;
			g->n++;
		}
	}
	g->last = st;
}

/* Feed 'in' in chunks of 'chunk' bytes (0 = all at once), pulling as we go. */
static void
decode_chunks(cql_decode_mode mode, const uint8_t *in, size_t n, size_t chunk,
			  got_list *g, bool v4_lz4)
{
	cql_segment_decoder d;

	memset(g, 0, sizeof(*g));
	cql_segment_decoder_init(&d, A, mode);
	cql_segment_decoder_set_v4_lz4(&d, v4_lz4);
	if (chunk == 0)
		chunk = n ? n : 1;
	for (size_t off = 0; off < n; off += chunk)
	{
		size_t		k = n - off < chunk ? n - off : chunk;

		if (cql_segment_decoder_feed(&d, in + off, k) != CQL_OK)
			break;
		pull_all(&d, g);
		if (g->last != CQL_ERR_TRUNCATED)
			break;
	}
	if (n == 0)
		pull_all(&d, g);
	cql_segment_decoder_free(&d);
}

/* Compare decoded envelopes against the original concatenated envelopes. */
static int
same_envelopes(const got_list *g, const uint8_t *env, size_t n)
{
	size_t		pos = 0;
	int			i = 0;

	while (pos < n)
	{
		cql_envelope_header h;

		if (cql_envelope_header_decode(env + pos, n - pos, &h) != CQL_OK)
			return 0;
		if (i >= g->n)
			return 0;
		if (g->e[i].hdr.stream != h.stream || g->e[i].hdr.opcode != h.opcode ||
			g->e[i].hdr.version != h.version || g->e[i].len != h.length ||
			g->e[i].hdr.length != h.length ||
			memcmp(g->e[i].body, env + pos + 9, h.length) != 0)
			return 0;
		pos += 9 + h.length;
		i++;
	}
	return i == g->n;
}

static void
test_envelope_header(void)
{
	cql_envelope_header h = {4, true, CQL_FLAG_WARNING, -1, CQL_OP_EVENT, 1234};
	cql_envelope_header back;
	uint8_t		raw[9];
	unsigned char want[16];
	size_t		wn;

	cql_envelope_header_encode(&h, raw);
	wn = tap_unhex("84 08 ff ff 0c 00 00 04 d2", want, sizeof(want));
	is_mem(raw, 9, want, wn, "event header encodes (response bit, stream -1)");
	ok(cql_envelope_header_decode(raw, 9, &back) == CQL_OK, "header decodes");
	is_int(back.version, 4, "version 4");
	ok(back.response, "response bit");
	is_int(back.flags, CQL_FLAG_WARNING, "flags");
	is_int(back.stream, -1, "stream -1 is signed");
	is_int(back.opcode, CQL_OP_EVENT, "opcode");
	is_int(back.length, 1234, "length");
	is_int(cql_envelope_header_decode(raw, 8, &back), CQL_ERR_TRUNCATED, "8 bytes are not a header");

	raw[0] = 0x83;
	ok(cql_envelope_header_decode(raw, 9, &back) == CQL_OK && back.version == 3,
	   "v3 handshake reply header accepted");
	raw[0] = 0x86;
	ok(cql_envelope_header_decode(raw, 9, &back) == CQL_OK && back.version == 6,
	   "v6 header accepted (caller checks the version)");
	raw[0] = 0x82;
	is_int(cql_envelope_header_decode(raw, 9, &back), CQL_ERR_UNSUPPORTED, "v2 header refused");
	raw[0] = 0x84;
	cql_put_be32(raw + 5, CQL_MAX_BODY_LENGTH + 1);
	is_int(cql_envelope_header_decode(raw, 9, &back), CQL_ERR_TOO_LARGE, "length over 256MB refused");
	cql_put_be32(raw + 5, 0xFFFFFFFFu);
	is_int(cql_envelope_header_decode(raw, 9, &back), CQL_ERR_TOO_LARGE, "negative length refused");
	cql_put_be32(raw + 5, CQL_MAX_BODY_LENGTH);
	is_int(cql_envelope_header_decode(raw, 9, &back), CQL_OK, "length of exactly 256MB accepted");

	is_str(cql_opcode_name(CQL_OP_AUTH_SUCCESS), "AUTH_SUCCESS", "opcode name");
	is_str(cql_opcode_name(0x04), "UNKNOWN", "0x04 (v1 CREDENTIALS) is unknown");
	is_str(cql_opcode_name(0x42), "UNKNOWN", "unknown opcode name");

	/* consistency names */
	{
		uint16_t	c = 0;

		is_str(cql_consistency_name(CQL_CONSISTENCY_LOCAL_ONE), "LOCAL_ONE", "LOCAL_ONE name");
		is_str(cql_consistency_name(CQL_CONSISTENCY_ANY), "ANY", "ANY name");
		ok(cql_consistency_name(0x42) == NULL, "unknown consistency code has no name");
		ok(cql_consistency_name(-1) == NULL, "negative code has no name");
		ok(cql_consistency_parse("local_quorum", &c) == CQL_OK && c == 6, "parse local_quorum");
		ok(cql_consistency_parse("Each_Quorum", &c) == CQL_OK && c == 7, "parse Each_Quorum");
		ok(cql_consistency_parse("ONE", &c) == CQL_OK && c == 1, "parse ONE");
		ok(cql_consistency_parse("LOCAL_SERIAL", &c) == CQL_OK && c == 9, "parse LOCAL_SERIAL");
		is_int(cql_consistency_parse("ONEX", &c), CQL_ERR_INVALID_ARG, "ONEX refused");
		is_int(cql_consistency_parse("ON", &c), CQL_ERR_INVALID_ARG, "prefix ON refused");
		is_int(cql_consistency_parse("", &c), CQL_ERR_INVALID_ARG, "empty refused");
		is_int(cql_consistency_parse(NULL, &c), CQL_ERR_INVALID_ARG, "NULL refused");
		for (int i = 0; i <= 0x0B; i++)
			ok(cql_consistency_parse(cql_consistency_name(i), &c) == CQL_OK && c == i,
			   "consistency %d round-trips by name", i);
	}
}

static void
test_v4_lz4(void)
{
	cql_buf		b;
	cql_buf		out;
	unsigned char want[128];
	size_t		wn;
	size_t		start;
	const char *q = "SELECT key FROM system.local";

	/* the worked example of section 9: literal-only block */
	cql_buf_init(&b, A);
	start = cql_envelope_begin(&b, 4, 0, 1, CQL_OP_QUERY);
	cql_buf_long_string(&b, q, strlen(q));
	cql_buf_u16(&b, CQL_CONSISTENCY_ONE);
	cql_buf_u8(&b, 0);
	ok(cql_envelope_end(&b, start, true) == CQL_OK, "compressed QUERY builds");
	wn = tap_unhex("04 01 00 01 07 00 00 00 29 00 00 00 23 f0 14"
				   "00 00 00 1c 53 45 4c 45 43 54 20 6b 65 79 20 46 52 4f 4d 20 73 79 73 74 65 6d 2e 6c 6f 63 61 6c"
				   "00 01 00", want, sizeof(want));
	is_mem(b.data, b.len, want, wn, "v4 LZ4 QUERY matches the worked example");

	cql_buf_init(&out, A);
	ok(cql_lz4_decompress_body(&out, b.data + 9, b.len - 9, 0) == CQL_OK, "example body decompresses");
	is_mem(out.data, out.len, want + 15, 35, "decompressed body is the QUERY body");

	/* v5 envelopes are never compressed at envelope level */
	cql_buf_reset(&b);
	start = cql_envelope_begin(&b, 5, 0, 1, CQL_OP_QUERY);
	cql_buf_long_string(&b, q, strlen(q));
	ok(cql_envelope_end(&b, start, true) == CQL_OK && b.data[1] == 0 && b.len == 9 + 4 + strlen(q),
	   "lz4 flag ignored for v5 envelopes");
	/* empty bodies are left alone */
	cql_buf_reset(&b);
	start = cql_envelope_begin(&b, 4, 0, 2, CQL_OP_OPTIONS);
	ok(cql_envelope_end(&b, start, true) == CQL_OK && b.len == 9 && b.data[1] == 0,
	   "empty body not compressed");
	is_int(cql_envelope_end(&b, 5, false), CQL_ERR_INVALID_ARG, "end with bogus start refused");

	/* round trips of several sizes */
	{
		size_t		sizes[] = {1, 2, 15, 16, 100, 4096, 131072, 300000};

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		{
			cql_buf		src;
			cql_buf		c;

			cql_buf_init(&src, A);
			cql_buf_init(&c, A);
			for (size_t k = 0; k < sizes[i]; k++)
				cql_buf_u8(&src, (uint8_t) ((k % 97) * (i + 1) + (k / 1000)));
			ok(cql_lz4_compress_body(&c, src.data, src.len) == CQL_OK, "compress %zu bytes", sizes[i]);
			is_int(cql_get_be32(c.data), sizes[i], "prefix is the BE uncompressed length (%zu)", sizes[i]);
			cql_buf_reset(&out);
			ok(cql_lz4_decompress_body(&out, c.data, c.len, 0) == CQL_OK &&
			   out.len == src.len && memcmp(out.data, src.data, src.len) == 0,
			   "round trip of %zu bytes", sizes[i]);
			cql_buf_reset(&out);
			is_int(cql_lz4_decompress_body(&out, c.data, c.len, sizes[i] - 1 ? sizes[i] - 1 : 0),
				   sizes[i] > 1 ? CQL_ERR_TOO_LARGE : CQL_OK,
				   "limit below the real size refused (%zu)", sizes[i]);
			cql_buf_free(&src);
			cql_buf_free(&c);
		}
	}
	/* hostile compressed bodies */
	{
		uint8_t		bad[16] = {0, 0, 0, 5, 0x50, 'a', 'b', 'c', 'd', 'e'};

		cql_buf_reset(&out);
		ok(cql_lz4_decompress_body(&out, bad, 10, 0) == CQL_OK && out.len == 5 &&
		   memcmp(out.data, "abcde", 5) == 0, "hand-made block decompresses");
		cql_buf_reset(&out);
		is_int(cql_lz4_decompress_body(&out, bad, 3, 0), CQL_ERR_COMPRESSION, "body shorter than prefix");
		cql_buf_reset(&out);
		is_int(cql_lz4_decompress_body(&out, bad, 9, 0), CQL_ERR_COMPRESSION, "truncated block");
		bad[3] = 6;
		cql_buf_reset(&out);
		is_int(cql_lz4_decompress_body(&out, bad, 10, 0), CQL_ERR_COMPRESSION, "claimed length too long");
		bad[3] = 4;
		cql_buf_reset(&out);
		is_int(cql_lz4_decompress_body(&out, bad, 10, 0), CQL_ERR_COMPRESSION, "claimed length too short");
		cql_put_be32(bad, 200 * 1024 * 1024);
		cql_buf_reset(&out);
		is_int(cql_lz4_decompress_body(&out, bad, 10, 0), CQL_ERR_COMPRESSION,
			   "200MB claimed from 6 bytes refused before allocating");
		ok(out.cap < 1024 * 1024, "nothing big was allocated");
		cql_put_be32(bad, 0x7FFFFFFF);
		is_int(cql_lz4_decompress_body(&out, bad, 10, 0), CQL_ERR_TOO_LARGE, "2GB claimed refused");
		cql_put_be32(bad, 0);
		bad[4] = 0;
		cql_buf_reset(&out);
		ok(cql_lz4_decompress_body(&out, bad, 5, 0) == CQL_OK && out.len == 0, "empty body 00000000 00 decompresses");
	}
	cql_buf_free(&out);
	cql_buf_free(&b);
}

static void
test_frame_encode(void)
{
	cql_buf		b;
	unsigned char want[256];
	unsigned char env[64];
	size_t		wn;
	size_t		en;
	cql_frame_header fh;

	cql_buf_init(&b, A);
	en = tap_unhex("05 00 00 00 05 00 00 00 00", env, sizeof(env));
	ok(cql_frame_encode(&b, CQL_FRAME_CRC, env, en, true) == CQL_OK, "OPTIONS frame encodes");
	wn = tap_unhex("09 00 02 a4 c8 c1 05 00 00 00 05 00 00 00 00 10 86 28 4d", want, sizeof(want));
	is_mem(b.data, b.len, want, wn, "OPTIONS v5 CRC frame matches the worked example");

	ok(cql_frame_header_decode(CQL_FRAME_CRC, b.data, b.len, &fh) == CQL_OK, "header decodes");
	ok(fh.payload_len == 9 && fh.self_contained && fh.uncompressed_len == 0, "header fields");
	is_int(cql_frame_header_decode(CQL_FRAME_CRC, b.data, 5, &fh), CQL_ERR_TRUNCATED, "5 bytes are not a CRC header");
	b.data[0] ^= 0x01;
	is_int(cql_frame_header_decode(CQL_FRAME_CRC, b.data, b.len, &fh), CQL_ERR_CRC, "flipped length bit -> CRC");
	b.data[0] ^= 0x01;
	b.data[4] ^= 0x80;
	is_int(cql_frame_header_decode(CQL_FRAME_CRC, b.data, b.len, &fh), CQL_ERR_CRC, "flipped CRC bit -> CRC");

	/* cql_frames_encode of a single envelope gives the same frame */
	cql_buf_reset(&b);
	ok(cql_frames_encode(&b, CQL_FRAME_CRC, env, en) == CQL_OK, "frames_encode OPTIONS");
	is_mem(b.data, b.len, want, wn, "frames_encode OPTIONS identical");

	/* AUTH_RESPONSE examples */
	en = tap_unhex("05 00 00 01 0f 00 00 00 18 00 00 00 14 00 63 61 73 73 61 6e 64 72 61 00 63 61 73 73 61 6e 64 72 61",
				   env, sizeof(env));
	cql_buf_reset(&b);
	ok(cql_frame_encode(&b, CQL_FRAME_CRC, env, en, true) == CQL_OK, "AUTH_RESPONSE CRC frame");
	wn = tap_unhex("21 00 02 21 62 8d", want, sizeof(want));
	memcpy(want + wn, env, en);
	wn += en;
	wn += tap_unhex("dd b9 db 3a", want + wn, sizeof(want) - wn);
	is_mem(b.data, b.len, want, wn, "AUTH_RESPONSE CRC frame matches the worked example");

	fh.payload_len = 33;
	fh.uncompressed_len = 0;
	fh.self_contained = true;
	cql_frame_header_encode(CQL_FRAME_LZ4, &fh, want);
	wn = tap_unhex("21 00 00 00 04 16 d2 cf", want + 16, 16);
	is_mem(want, 8, want + 16, wn, "LZ4 header with uncompressed_length 0 matches the worked example");
	ok(cql_frame_header_decode(CQL_FRAME_LZ4, want, 8, &fh) == CQL_OK &&
	   fh.payload_len == 33 && fh.uncompressed_len == 0 && fh.self_contained, "LZ4 header decodes");
	fh.payload_len = 64;
	fh.uncompressed_len = 138;
	fh.self_contained = true;
	cql_frame_header_encode(CQL_FRAME_LZ4, &fh, want);
	wn = tap_unhex("40 00 14 01 04 83 fb 91", want + 16, 16);
	is_mem(want, 8, want + 16, wn, "LZ4 compressed header matches the worked example");
	fh.self_contained = false;
	cql_frame_header_encode(CQL_FRAME_LZ4, &fh, want);
	ok(cql_frame_header_decode(CQL_FRAME_LZ4, want, 8, &fh) == CQL_OK && !fh.self_contained &&
	   fh.uncompressed_len == 138 && fh.payload_len == 64, "non-self-contained LZ4 header round-trips");
	is_int(cql_frame_header_decode(CQL_FRAME_LZ4, want, 7, &fh), CQL_ERR_TRUNCATED, "7 bytes are not an LZ4 header");
	want[2] ^= 0x10;
	is_int(cql_frame_header_decode(CQL_FRAME_LZ4, want, 8, &fh), CQL_ERR_CRC, "corrupt LZ4 header -> CRC");

	/* LZ4 frame: incompressible payload is stored with uncompressed_len 0 */
	{
		uint8_t		rnd[200];
		uint32_t	x = 7;

		for (int i = 0; i < 200; i++)
		{
			x = x * 1103515245u + 12345u;
			rnd[i] = (uint8_t) (x >> 16);
		}
		cql_buf_reset(&b);
		ok(cql_frame_encode(&b, CQL_FRAME_LZ4, rnd, 200, true) == CQL_OK, "LZ4 frame of random bytes");
		ok(cql_frame_header_decode(CQL_FRAME_LZ4, b.data, b.len, &fh) == CQL_OK &&
		   fh.uncompressed_len == 0 && fh.payload_len == 200, "random payload stored raw");
		is_int(b.len, 12 + 200, "total size 12 + payload");
		is_mem(b.data + 8, 200, rnd, 200, "raw payload follows the header");
		is_int((uint32_t) b.data[208] | ((uint32_t) b.data[209] << 8) |
			   ((uint32_t) b.data[210] << 16) | ((uint32_t) b.data[211] << 24),
			   cql_crc32(rnd, 200), "little-endian CRC32 trailer of the raw payload");
	}
	/* LZ4 frame: compressible payload is compressed */
	{
		uint8_t		rep[1000];

		memset(rep, 'a', sizeof(rep));
		cql_buf_reset(&b);
		ok(cql_frame_encode(&b, CQL_FRAME_LZ4, rep, 1000, true) == CQL_OK, "LZ4 frame of 1000 'a'");
		ok(cql_frame_header_decode(CQL_FRAME_LZ4, b.data, b.len, &fh) == CQL_OK &&
		   fh.uncompressed_len == 1000 && fh.payload_len < 100, "compressible payload compressed");
		is_int(b.len, 12 + fh.payload_len, "total size 12 + compressed length");
		{
			uint32_t	trailer = (uint32_t) b.data[8 + fh.payload_len] |
				((uint32_t) b.data[9 + fh.payload_len] << 8) |
				((uint32_t) b.data[10 + fh.payload_len] << 16) |
				((uint32_t) b.data[11 + fh.payload_len] << 24);

			is_int(trailer, cql_crc32(b.data + 8, fh.payload_len), "CRC32 covers the compressed bytes");
		}
	}
	/* empty payload */
	cql_buf_reset(&b);
	ok(cql_frame_encode(&b, CQL_FRAME_CRC, NULL, 0, true) == CQL_OK && b.len == 10, "empty CRC frame is 10 bytes");
	cql_buf_reset(&b);
	ok(cql_frame_encode(&b, CQL_FRAME_LZ4, NULL, 0, true) == CQL_OK && b.len == 12, "empty LZ4 frame is 12 bytes");
	{
		uint8_t    *big = calloc(1, 131072);

		cql_buf_reset(&b);
		is_int(cql_frame_encode(&b, CQL_FRAME_CRC, big, 131072, true), CQL_ERR_TOO_LARGE, "payload 131072 refused");
		ok(cql_frame_encode(&b, CQL_FRAME_CRC, big, 131071, true) == CQL_OK && b.len == 131071 + 10,
		   "payload 131071 accepted");
		free(big);
	}

	/* invalid input to frames_encode: nothing appended */
	cql_buf_reset(&b);
	cql_buf_u8(&b, 0xAA);
	is_int(cql_frames_encode(&b, CQL_FRAME_CRC, env, en - 1), CQL_ERR_INVALID_ARG, "truncated envelope refused");
	is_int(b.len, 1, "nothing appended on error");
	is_int(cql_frames_encode(&b, CQL_FRAME_CRC, env, 5), CQL_ERR_INVALID_ARG, "partial header refused");
	ok(cql_frames_encode(&b, CQL_FRAME_CRC, env, 0) == CQL_OK && b.len == 1, "no envelopes, no frames");
	cql_buf_free(&b);
}

/* walk frames of an encoded buffer, collect payload lengths and flags */
static int
list_frames(cql_frame_format fmt, const uint8_t *p, size_t n, uint32_t *lens,
			bool *sc, uint32_t *ulens, int max)
{
	size_t		pos = 0;
	int			k = 0;
	int			hl = cql_frame_header_len(fmt);

	while (pos < n && k < max)
	{
		cql_frame_header fh;

		if (cql_frame_header_decode(fmt, p + pos, n - pos, &fh) != CQL_OK)
			return -1;
		lens[k] = fh.payload_len;
		ulens[k] = fh.uncompressed_len;
		sc[k] = fh.self_contained;
		k++;
		pos += hl + fh.payload_len + 4;
	}
	return pos == n ? k : -1;
}

static void
test_packing_and_decoding(void)
{
	cql_buf		env;
	cql_buf		fr;
	got_list	g;
	uint32_t	lens[32];
	uint32_t	ulens[32];
	bool		sc[32];
	int			nf;

	cql_buf_init(&env, A);
	cql_buf_init(&fr, A);

	/* several small envelopes -> one self-contained frame */
	for (int i = 0; i < 5; i++)
		add_envelope(&env, 5, (int16_t) i, CQL_OP_RESULT, 10 + i * 3, i, false);
	ok(cql_frames_encode(&fr, CQL_FRAME_CRC, env.data, env.len) == CQL_OK, "5 small envelopes encode");
	nf = list_frames(CQL_FRAME_CRC, fr.data, fr.len, lens, sc, ulens, 32);
	is_int(nf, 1, "packed into one frame");
	ok(nf == 1 && sc[0] && lens[0] == env.len, "one self-contained frame carrying all bytes");
	{
		size_t		chunks[] = {0, 1, 2, 5, 6, 7, 13, 64};

		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++)
		{
			decode_chunks(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, chunks[c], &g, false);
			is_int(g.n, 5, "5 envelopes decoded (chunk %zu)", chunks[c]);
			is_int(g.last, CQL_ERR_TRUNCATED, "decoder waits for more (chunk %zu)", chunks[c]);
			ok(same_envelopes(&g, env.data, env.len), "envelopes identical (chunk %zu)", chunks[c]);
			ok(g.n > 4 && g.e[4].hdr.response && g.e[4].hdr.stream == 4, "stream ids kept (chunk %zu)", chunks[c]);
			got_free(&g);
		}
	}
	/* same in LZ4 format */
	cql_buf_reset(&fr);
	ok(cql_frames_encode(&fr, CQL_FRAME_LZ4, env.data, env.len) == CQL_OK, "5 small envelopes encode (LZ4)");
	decode_chunks(CQL_DECODE_FRAMES_LZ4, fr.data, fr.len, 1, &g, false);
	ok(g.n == 5 && same_envelopes(&g, env.data, env.len), "LZ4 frames decoded one byte at a time");
	got_free(&g);

	/* envelopes that together exceed one payload: several self-contained frames */
	cql_buf_reset(&env);
	for (int i = 0; i < 6; i++)
		add_envelope(&env, 5, (int16_t) (100 + i), CQL_OP_RESULT, 50000, i, i % 2 == 0);
	cql_buf_reset(&fr);
	ok(cql_frames_encode(&fr, CQL_FRAME_CRC, env.data, env.len) == CQL_OK, "6 x 50KB envelopes encode");
	nf = list_frames(CQL_FRAME_CRC, fr.data, fr.len, lens, sc, ulens, 32);
	is_int(nf, 3, "two envelopes per frame");
	{
		bool		all_sc = true;
		bool		all_small = true;

		for (int i = 0; i < nf; i++)
		{
			all_sc &= sc[i];
			all_small &= lens[i] <= CQL_FRAME_MAX_PAYLOAD;
		}
		ok(all_sc && all_small, "all self-contained and within 131071");
	}
	decode_chunks(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, 4096, &g, false);
	ok(g.n == 6 && same_envelopes(&g, env.data, env.len), "6 envelopes decoded");
	got_free(&g);
	cql_buf_reset(&fr);
	ok(cql_frames_encode(&fr, CQL_FRAME_LZ4, env.data, env.len) == CQL_OK, "6 x 50KB envelopes encode (LZ4)");
	nf = list_frames(CQL_FRAME_LZ4, fr.data, fr.len, lens, sc, ulens, 32);
	ok(nf == 3 && ulens[0] > 0 && lens[0] < ulens[0], "compressible frames compressed");
	decode_chunks(CQL_DECODE_FRAMES_LZ4, fr.data, fr.len, 1000, &g, false);
	ok(g.n == 6 && same_envelopes(&g, env.data, env.len), "6 envelopes decoded (LZ4)");
	got_free(&g);

	/* small, large (300000-byte body), small: sliced at 131071 */
	cql_buf_reset(&env);
	add_envelope(&env, 5, 1, CQL_OP_RESULT, 20, 1, false);
	add_envelope(&env, 5, 2, CQL_OP_RESULT, 300000, 2, false);
	add_envelope(&env, 5, 3, CQL_OP_RESULT, 30, 3, false);
	for (int f = 0; f < 2; f++)
	{
		cql_frame_format fmt = f ? CQL_FRAME_LZ4 : CQL_FRAME_CRC;
		cql_decode_mode mode = f ? CQL_DECODE_FRAMES_LZ4 : CQL_DECODE_FRAMES_CRC;

		cql_buf_reset(&fr);
		ok(cql_frames_encode(&fr, fmt, env.data, env.len) == CQL_OK, "small+large+small encode (%s)", f ? "LZ4" : "CRC");
		nf = list_frames(fmt, fr.data, fr.len, lens, sc, ulens, 32);
		is_int(nf, 5, "five frames: sc, 3 slices, sc");
		if (nf == 5)
		{
			uint32_t	l1 = f && ulens[1] ? ulens[1] : lens[1];
			uint32_t	l2 = f && ulens[2] ? ulens[2] : lens[2];
			uint32_t	l3 = f && ulens[3] ? ulens[3] : lens[3];

			ok(sc[0] && !sc[1] && !sc[2] && !sc[3] && sc[4], "self-contained flags");
			ok(l1 == 131071 && l2 == 131071 && l3 == 300009 - 2 * 131071, "slices at 131071");
		}
		{
			size_t		chunks[] = {0, 1, 3, 4096, 131083};

			for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++)
			{
				/* one byte at a time over 300KB is slow under ASan: LZ4 only 4096+ */
				if (f && chunks[c] == 1)
					continue;
				decode_chunks(mode, fr.data, fr.len, chunks[c], &g, false);
				ok(g.n == 3 && same_envelopes(&g, env.data, env.len),
				   "small+large+small decoded (%s, chunk %zu)", f ? "LZ4" : "CRC", chunks[c]);
				got_free(&g);
			}
		}
	}

	/* a 2MB message (exercises release of the large-message buffer) */
	cql_buf_reset(&env);
	add_envelope(&env, 5, 9, CQL_OP_RESULT, 2 * 1024 * 1024, 9, true);
	add_envelope(&env, 5, 10, CQL_OP_RESULT, 2 * 1024 * 1024, 10, false);
	add_envelope(&env, 5, 11, CQL_OP_RESULT, 3, 11, false);
	cql_buf_reset(&fr);
	ok(cql_frames_encode(&fr, CQL_FRAME_LZ4, env.data, env.len) == CQL_OK, "2 x 2MB envelopes encode");
	decode_chunks(CQL_DECODE_FRAMES_LZ4, fr.data, fr.len, 65536, &g, false);
	ok(g.n == 3 && same_envelopes(&g, env.data, env.len), "2 x 2MB envelopes decoded");
	got_free(&g);

	/* an envelope of exactly 131071 bytes is self-contained; 131072 is not */
	cql_buf_reset(&env);
	add_envelope(&env, 5, 1, CQL_OP_RESULT, 131071 - 9, 1, false);
	cql_buf_reset(&fr);
	ok(cql_frames_encode(&fr, CQL_FRAME_CRC, env.data, env.len) == CQL_OK, "131071-byte envelope");
	nf = list_frames(CQL_FRAME_CRC, fr.data, fr.len, lens, sc, ulens, 32);
	ok(nf == 1 && sc[0] && lens[0] == 131071, "131071-byte envelope in one self-contained frame");
	cql_buf_reset(&env);
	add_envelope(&env, 5, 1, CQL_OP_RESULT, 131072 - 9, 1, false);
	cql_buf_reset(&fr);
	ok(cql_frames_encode(&fr, CQL_FRAME_CRC, env.data, env.len) == CQL_OK, "131072-byte envelope");
	nf = list_frames(CQL_FRAME_CRC, fr.data, fr.len, lens, sc, ulens, 32);
	ok(nf == 2 && !sc[0] && !sc[1] && lens[0] == 131071 && lens[1] == 1, "131072-byte envelope in two slices");
	decode_chunks(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, 0, &g, false);
	ok(g.n == 1 && same_envelopes(&g, env.data, env.len), "131072-byte envelope reassembled");
	got_free(&g);

	cql_buf_free(&env);
	cql_buf_free(&fr);
}

/* Build a frame by hand (valid CRCs) from an arbitrary payload. */
static void
raw_frame(cql_buf *out, cql_frame_format fmt, const uint8_t *p, size_t n, bool sc)
{
	ok(cql_frame_encode(out, fmt, p, n, sc) == CQL_OK, "(helper) frame of %zu bytes", n);
}

static cql_status
decode_status(cql_decode_mode mode, const uint8_t *p, size_t n, int *count)
{
	got_list	g;
	cql_status	st;

	decode_chunks(mode, p, n, 0, &g, false);
	*count = g.n;
	st = g.last;
	got_free(&g);
	return st;
}

static void
test_decoder_errors(void)
{
	cql_buf		env;
	cql_buf		fr;
	cql_segment_decoder d;
	cql_envelope e;
	int			cnt;

	cql_buf_init(&env, A);
	cql_buf_init(&fr, A);
	add_envelope(&env, 5, 7, CQL_OP_RESULT, 40, 1, false);
	add_envelope(&env, 5, 8, CQL_OP_RESULT, 40, 2, false);

	/* corrupt header CRC: fatal and sticky */
	ok(cql_frames_encode(&fr, CQL_FRAME_CRC, env.data, env.len) == CQL_OK, "frame for corruption tests");
	fr.data[4] ^= 0x01;
	cql_segment_decoder_init(&d, A, CQL_DECODE_FRAMES_CRC);
	ok(cql_segment_decoder_feed(&d, fr.data, fr.len) == CQL_OK, "feed corrupt frame");
	is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_CRC, "header CRC mismatch reported");
	is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_CRC, "header CRC mismatch is sticky");
	is_int(cql_segment_decoder_feed(&d, fr.data, 1), CQL_ERR_CRC, "feed after fatal error refused");
	cql_segment_decoder_free(&d);
	fr.data[4] ^= 0x01;

	/* header CRC is checked as soon as the header is complete */
	cql_segment_decoder_init(&d, A, CQL_DECODE_FRAMES_CRC);
	fr.data[1] ^= 0x40;
	cql_segment_decoder_feed(&d, fr.data, 5);
	is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_TRUNCATED, "5 header bytes: need more");
	cql_segment_decoder_feed(&d, fr.data + 5, 1);
	is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_CRC, "6th byte completes a bad header: CRC");
	cql_segment_decoder_free(&d);
	fr.data[1] ^= 0x40;

	/* corrupt payload CRC in a self-contained frame: frame dropped, stream continues */
	{
		size_t		flen = fr.len;

		ok(cql_frames_encode(&fr, CQL_FRAME_CRC, env.data, env.len) == CQL_OK, "second copy of the frame");
		fr.data[20] ^= 0xFF;	/* inside the first frame's payload */
		cql_segment_decoder_init(&d, A, CQL_DECODE_FRAMES_CRC);
		cql_segment_decoder_feed(&d, fr.data, fr.len);
		is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_CRC, "payload CRC mismatch reported");
		is_int(d.corrupt_frames, 1, "corrupt frame counted");
		ok(cql_segment_decoder_next(&d, &e) == CQL_OK && e.hdr.stream == 7, "next frame decodes (stream 7)");
		ok(cql_segment_decoder_next(&d, &e) == CQL_OK && e.hdr.stream == 8, "next frame decodes (stream 8)");
		is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_TRUNCATED, "then need more");
		is_int(cql_segment_decoder_buffered(&d), 0, "everything consumed");
		cql_segment_decoder_free(&d);
		fr.data[20] ^= 0xFF;
		/* corrupt trailer */
		fr.data[flen - 1] ^= 0x01;
		cql_segment_decoder_init(&d, A, CQL_DECODE_FRAMES_CRC);
		cql_segment_decoder_feed(&d, fr.data, fr.len);
		is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_CRC, "corrupt CRC32 trailer reported");
		cql_segment_decoder_free(&d);
		fr.data[flen - 1] ^= 0x01;
		fr.len = flen;
	}

	/* truncated frames: never an envelope, always "need more" */
	{
		long		bad = -1;
		cql_status	bad_st = CQL_OK;
		int			bad_cnt = 0;

		for (size_t cut = 0; cut < fr.len && bad < 0; cut++)
		{
			cql_status	st = decode_status(CQL_DECODE_FRAMES_CRC, fr.data, cut, &cnt);

			if (st != CQL_ERR_TRUNCATED || cnt != 0)
			{
				bad = (long) cut;
				bad_st = st;
				bad_cnt = cnt;
			}
		}
		if (!ok(bad < 0, "every truncation of a frame waits for more bytes"))
			diag("truncated at %ld: status %d count %d", bad, bad_st, bad_cnt);
	}
	is_int(decode_status(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, &cnt), CQL_ERR_TRUNCATED, "whole frame decodes");
	is_int(cnt, 2, "whole frame yields 2 envelopes");

	/* envelope length past the end of a self-contained payload */
	{
		uint8_t		pl[64];

		memcpy(pl, env.data, 49);
		cql_put_be32(pl + 5, 41);	/* claims one byte more than present */
		cql_buf_reset(&fr);
		raw_frame(&fr, CQL_FRAME_CRC, pl, 49, true);
		is_int(decode_status(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, &cnt), CQL_ERR_MALFORMED,
			   "envelope longer than its self-contained frame -> MALFORMED");
		/* incomplete header at the end of a self-contained payload */
		memcpy(pl, env.data, 49);
		memcpy(pl + 49, env.data, 5);
		cql_buf_reset(&fr);
		raw_frame(&fr, CQL_FRAME_CRC, pl, 54, true);
		is_int(decode_status(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, &cnt), CQL_ERR_MALFORMED,
			   "partial envelope header in self-contained frame -> MALFORMED");
		is_int(cnt, 1, "the complete envelope before it was delivered");
		/* huge length inside a self-contained payload */
		memcpy(pl, env.data, 49);
		cql_put_be32(pl + 5, 0x7FFFFFFF);
		cql_buf_reset(&fr);
		raw_frame(&fr, CQL_FRAME_CRC, pl, 49, true);
		is_int(decode_status(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, &cnt), CQL_ERR_TOO_LARGE,
			   "absurd envelope length in a frame -> TOO_LARGE");
		/* v2 envelope inside a frame */
		memcpy(pl, env.data, 49);
		pl[0] = 0x82;
		cql_buf_reset(&fr);
		raw_frame(&fr, CQL_FRAME_CRC, pl, 49, true);
		is_int(decode_status(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, &cnt), CQL_ERR_UNSUPPORTED,
			   "v2 envelope inside a frame -> UNSUPPORTED");
	}

	/* large message interrupted by a self-contained frame */
	{
		cql_buf		big;

		cql_buf_init(&big, A);
		add_envelope(&big, 5, 3, CQL_OP_RESULT, 200000, 3, false);
		cql_buf_reset(&fr);
		raw_frame(&fr, CQL_FRAME_CRC, big.data, 131071, false);
		raw_frame(&fr, CQL_FRAME_CRC, env.data, 49, true);
		is_int(decode_status(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, &cnt), CQL_ERR_MALFORMED,
			   "self-contained frame inside a large message -> MALFORMED");

		/* more bytes than the envelope needs in the last slice */
		cql_buf_reset(&fr);
		raw_frame(&fr, CQL_FRAME_CRC, big.data, 131071, false);
		cql_buf_put(&big, "xyz", 3);
		raw_frame(&fr, CQL_FRAME_CRC, big.data + 131071, big.len - 131071, false);
		is_int(decode_status(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, &cnt), CQL_ERR_MALFORMED,
			   "extra bytes after a large message -> MALFORMED");
		big.len -= 3;

		/* envelope header split across frames (5 + 4 + rest) */
		cql_buf_reset(&fr);
		raw_frame(&fr, CQL_FRAME_CRC, big.data, 5, false);
		raw_frame(&fr, CQL_FRAME_CRC, big.data + 5, 4, false);
		raw_frame(&fr, CQL_FRAME_CRC, NULL, 0, false);
		raw_frame(&fr, CQL_FRAME_CRC, big.data + 9, 100000, false);
		raw_frame(&fr, CQL_FRAME_CRC, big.data + 100009, big.len - 100009, false);
		raw_frame(&fr, CQL_FRAME_CRC, env.data, env.len, true);
		{
			got_list	g;

			decode_chunks(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, 777, &g, false);
			ok(g.n == 3 && g.e[0].len == 200000 && memcmp(g.e[0].body, big.data + 9, 200000) == 0 &&
			   g.e[1].hdr.stream == 7 && g.e[2].hdr.stream == 8,
			   "header split across frames reassembles, followed by a packed frame");
			got_free(&g);
		}

		/* payload CRC error inside a large message is fatal */
		cql_buf_reset(&fr);
		raw_frame(&fr, CQL_FRAME_CRC, big.data, 131071, false);
		raw_frame(&fr, CQL_FRAME_CRC, big.data + 131071, big.len - 131071, false);
		fr.data[131090] ^= 0x01;
		cql_segment_decoder_init(&d, A, CQL_DECODE_FRAMES_CRC);
		cql_segment_decoder_feed(&d, fr.data, fr.len);
		is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_CRC, "payload CRC error in a large message");
		is_int(d.fatal, CQL_ERR_CRC, "... is fatal");
		cql_segment_decoder_free(&d);

		/* large message over the configured body limit */
		cql_buf_reset(&fr);
		raw_frame(&fr, CQL_FRAME_CRC, big.data, 131071, false);
		cql_segment_decoder_init(&d, A, CQL_DECODE_FRAMES_CRC);
		cql_segment_decoder_set_max_body(&d, 100000);
		cql_segment_decoder_feed(&d, fr.data, fr.len);
		is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_TOO_LARGE, "large message over max_body refused");
		ok(d.big_cap <= 9, "no buffer of the claimed size was allocated");
		cql_segment_decoder_free(&d);
		cql_buf_free(&big);
	}

	/* LZ4 frame with garbage compressed data (valid CRCs) */
	{
		cql_frame_header fh = {20, 500, true};
		uint8_t		frame[64];
		uint32_t	crc;

		cql_frame_header_encode(CQL_FRAME_LZ4, &fh, frame);
		memset(frame + 8, 0xEE, 20);
		crc = cql_crc32(frame + 8, 20);
		frame[28] = (uint8_t) crc;
		frame[29] = (uint8_t) (crc >> 8);
		frame[30] = (uint8_t) (crc >> 16);
		frame[31] = (uint8_t) (crc >> 24);
		is_int(decode_status(CQL_DECODE_FRAMES_LZ4, frame, 32, &cnt), CQL_ERR_COMPRESSION,
			   "garbage LZ4 block -> COMPRESSION");
		/* a valid block whose real length differs from the header */
		{
			cql_buf		t;
			cql_frame_header th;

			cql_buf_init(&t, A);
			{
				uint8_t		rep[600];

				memset(rep, 'z', sizeof(rep));
				ok(cql_frame_encode(&t, CQL_FRAME_LZ4, rep, sizeof(rep), true) == CQL_OK, "LZ4 frame of 600 'z'");
			}
			cql_frame_header_decode(CQL_FRAME_LZ4, t.data, t.len, &th);
			th.uncompressed_len = 601;
			cql_frame_header_encode(CQL_FRAME_LZ4, &th, t.data);
			is_int(decode_status(CQL_DECODE_FRAMES_LZ4, t.data, t.len, &cnt), CQL_ERR_COMPRESSION,
				   "uncompressed length mismatch -> COMPRESSION");
			th.uncompressed_len = 599;
			cql_frame_header_encode(CQL_FRAME_LZ4, &th, t.data);
			is_int(decode_status(CQL_DECODE_FRAMES_LZ4, t.data, t.len, &cnt), CQL_ERR_COMPRESSION,
				   "uncompressed length too short -> COMPRESSION");
			cql_buf_free(&t);
		}
	}
	/* empty self-contained frames are harmless */
	cql_buf_reset(&fr);
	raw_frame(&fr, CQL_FRAME_CRC, NULL, 0, true);
	raw_frame(&fr, CQL_FRAME_CRC, env.data, 49, true);
	is_int(decode_status(CQL_DECODE_FRAMES_CRC, fr.data, fr.len, &cnt), CQL_ERR_TRUNCATED, "empty frame skipped");
	is_int(cnt, 1, "envelope after an empty frame delivered");

	cql_buf_free(&env);
	cql_buf_free(&fr);
}

static void
test_v4_stream(void)
{
	cql_buf		env;
	cql_buf		comp;
	got_list	g;
	int			cnt;

	cql_buf_init(&env, A);
	cql_buf_init(&comp, A);
	add_envelope(&env, 4, 0, CQL_OP_READY, 0, 0, false);
	add_envelope(&env, 4, 1, CQL_OP_RESULT, 1000, 1, true);
	add_envelope(&env, 4, -1, CQL_OP_EVENT, 30, 2, false);
	add_envelope(&env, 4, 2, CQL_OP_RESULT, 70000, 3, false);
	{
		size_t		chunks[] = {0, 1, 8, 9, 10, 4096};

		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++)
		{
			decode_chunks(CQL_DECODE_ENVELOPES, env.data, env.len, chunks[c], &g, false);
			ok(g.n == 4 && same_envelopes(&g, env.data, env.len) && g.last == CQL_ERR_TRUNCATED,
			   "v4 envelope stream decoded (chunk %zu)", chunks[c]);
			ok(g.n == 4 && g.e[2].hdr.stream == -1 && g.e[0].len == 0, "EVENT stream -1, empty READY");
			got_free(&g);
		}
	}

	/* the same envelopes, bodies compressed as the server does (all of them) */
	{
		size_t		pos = 0;

		while (pos < env.len)
		{
			cql_envelope_header h;

			cql_envelope_header_decode(env.data + pos, env.len - pos, &h);
			ok(cql_envelope_build(&comp, 4, h.flags, h.stream, h.opcode, env.data + pos + 9,
								  h.length, true) == CQL_OK, "compressed envelope stream %d", h.stream);
			/* it is a request header (direction bit) but the decoder does not care */
			pos += 9 + h.length;
		}
		decode_chunks(CQL_DECODE_ENVELOPES, comp.data, comp.len, 3, &g, true);
		ok(g.n == 4 && same_envelopes(&g, env.data, env.len), "LZ4 v4 bodies decompressed (chunk 3)");
		ok(g.n == 4 && (g.e[1].hdr.flags & CQL_FLAG_COMPRESSION) == 0, "COMPRESSION flag cleared");
		ok(g.n == 4 && g.e[1].hdr.length == 1000, "header length is the decompressed length");
		got_free(&g);
		is_int(decode_status(CQL_DECODE_ENVELOPES, comp.data, comp.len, &cnt), CQL_ERR_MALFORMED,
			   "compressed body without lz4 negotiated -> MALFORMED");
		is_int(cnt, 1, "the uncompressed empty READY before it was delivered");
	}

	/* v5 envelope with the (ignored) compression flag in envelope mode */
	{
		uint8_t		e5[] = {0x85, 0x01, 0, 0, 0x02, 0, 0, 0, 0};

		decode_chunks(CQL_DECODE_ENVELOPES, e5, sizeof(e5), 0, &g, false);
		ok(g.n == 1 && g.e[0].hdr.version == 5 && g.e[0].hdr.opcode == CQL_OP_READY, "v5 READY with stale flag");
		got_free(&g);
	}
	/* errors */
	{
		uint8_t		bad[] = {0x82, 0, 0, 0, 0x02, 0, 0, 0, 0};
		cql_segment_decoder d;
		cql_envelope e;

		is_int(decode_status(CQL_DECODE_ENVELOPES, bad, sizeof(bad), &cnt), CQL_ERR_UNSUPPORTED, "v2 header -> UNSUPPORTED");
		bad[0] = 0x84;
		cql_put_be32(bad + 5, 0x40000000);
		is_int(decode_status(CQL_DECODE_ENVELOPES, bad, sizeof(bad), &cnt), CQL_ERR_TOO_LARGE, "1GB body -> TOO_LARGE");
		cql_put_be32(bad + 5, 5000);
		cql_segment_decoder_init(&d, A, CQL_DECODE_ENVELOPES);
		cql_segment_decoder_set_max_body(&d, 4096);
		cql_segment_decoder_feed(&d, bad, sizeof(bad));
		is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_TOO_LARGE, "body over configured max -> TOO_LARGE");
		cql_segment_decoder_free(&d);
		cql_put_be32(bad + 5, 100);
		is_int(decode_status(CQL_DECODE_ENVELOPES, bad, sizeof(bad), &cnt), CQL_ERR_TRUNCATED, "body missing -> need more");
		/* compressed body whose LZ4 data is garbage */
		{
			uint8_t		cb[] = {0x84, 0x01, 0, 5, 0x08, 0, 0, 0, 8, 0, 0, 0, 10, 0xFF, 0xFF, 0xFF, 0xFF};
			got_list	gl;

			decode_chunks(CQL_DECODE_ENVELOPES, cb, sizeof(cb), 0, &gl, true);
			is_int(gl.last, CQL_ERR_COMPRESSION, "garbage LZ4 body -> COMPRESSION");
			got_free(&gl);
		}
	}

	/* handshake: unframed READY then v5 frames in the same chunk */
	{
		cql_buf		in;
		cql_buf		inner;
		cql_segment_decoder d;
		cql_envelope e;

		cql_buf_init(&in, A);
		cql_buf_init(&inner, A);
		add_envelope(&in, 5, 0, CQL_OP_READY, 0, 0, false);
		add_envelope(&inner, 5, 1, CQL_OP_RESULT, 12, 5, false);
		add_envelope(&inner, 5, 2, CQL_OP_RESULT, 12, 6, false);
		ok(cql_frames_encode(&in, CQL_FRAME_CRC, inner.data, inner.len) == CQL_OK, "frames after READY");
		cql_segment_decoder_init(&d, A, CQL_DECODE_ENVELOPES);
		cql_segment_decoder_feed(&d, in.data, in.len);
		ok(cql_segment_decoder_next(&d, &e) == CQL_OK && e.hdr.opcode == CQL_OP_READY, "READY read unframed");
		cql_segment_decoder_set_mode(&d, CQL_DECODE_FRAMES_CRC);
		ok(cql_segment_decoder_next(&d, &e) == CQL_OK && e.hdr.stream == 1 && e.body_len == 12, "framed RESULT 1");
		ok(cql_segment_decoder_next(&d, &e) == CQL_OK && e.hdr.stream == 2, "framed RESULT 2");
		is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_TRUNCATED, "then need more");
		cql_segment_decoder_free(&d);
		cql_buf_free(&in);
		cql_buf_free(&inner);
	}
	cql_buf_free(&env);
	cql_buf_free(&comp);
}

static void
test_take_body(void)
{
	cql_buf		env;
	cql_buf		fr;
	cql_segment_decoder d;
	cql_envelope e;
	uint8_t    *body = NULL;
	uint8_t		unk[9 + 3] = {0x85, 0, 0, 9, 0x42, 0, 0, 0, 3, 'a', 'b', 'c'};

	cql_buf_init(&env, A);
	cql_buf_init(&fr, A);
	add_envelope(&env, 5, 4, CQL_OP_RESULT, 300000, 4, false);
	cql_buf_put(&env, unk, sizeof(unk));
	ok(cql_frames_encode(&fr, CQL_FRAME_CRC, env.data, env.len) == CQL_OK, "large + unknown-opcode envelopes encode");
	cql_segment_decoder_init(&d, A, CQL_DECODE_FRAMES_CRC);
	cql_segment_decoder_feed(&d, fr.data, fr.len);
	ok(cql_segment_decoder_next(&d, &e) == CQL_OK && e.body_len == 300000, "large message decoded");
	{
		const uint8_t *big_before = d.big;

		ok(cql_segment_decoder_take_body(&d, &e, &body) == CQL_OK && body == big_before,
		   "large body handed over without a copy");
		ok(body && memcmp(body, env.data + 9, 300000) == 0, "handed-over body is the message body");
		ok(d.big == NULL, "decoder no longer owns it");
		cql_free(A, body);
	}
	ok(cql_segment_decoder_next(&d, &e) == CQL_OK && e.hdr.opcode == 0x42 && e.hdr.stream == 9 &&
	   e.body_len == 3, "unknown opcode passed through by the decoder");
	ok(cql_segment_decoder_take_body(&d, &e, &body) == CQL_OK && body != e.body &&
	   memcmp(body, "abc", 3) == 0, "small body copied");
	{
		cql_result	r;

		/* ownership goes on to the result decoder (which refuses this body) */
		is_int(cql_decode_result_take(&r, 5, 0, body, 3, A, NULL, 0), CQL_ERR_TRUNCATED,
			   "taken body passed to cql_decode_result_take");
	}
	is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_TRUNCATED, "then need more");
	cql_segment_decoder_free(&d);
	cql_buf_free(&env);
	cql_buf_free(&fr);
}

/*
 * A v5 frame of a few bytes claiming a huge message must not make the
 * decoder allocate the claimed size: the reassembly buffer grows with the
 * bytes that really arrive.
 */
static void
test_claimed_size(void)
{
	count_stats cs;
	cql_allocator ca = counting_allocator(&cs);
	cql_segment_decoder d;
	cql_envelope e;
	cql_buf		fr;
	cql_buf		big;
	uint8_t		hdr[CQL_HEADER_LEN];
	cql_envelope_header h = {5, true, 0, 1, CQL_OP_RESULT, 200u * 1024 * 1024};

	cql_envelope_header_encode(&h, hdr);
	cql_buf_init(&fr, A);
	raw_frame(&fr, CQL_FRAME_CRC, hdr, sizeof(hdr), false);
	ok(fr.len < 24, "a %zu-byte frame claims a 200 MB message", fr.len);
	cql_segment_decoder_init(&d, &ca, CQL_DECODE_FRAMES_CRC);
	cql_segment_decoder_feed(&d, fr.data, fr.len);
	is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_TRUNCATED, "... it waits for more bytes");
	ok(cs.peak < 1024 * 1024, "... without allocating the claimed size (peak %zu bytes)", cs.peak);

	/* bytes that do arrive are kept; memory follows them */
	{
		uint8_t    *chunk = calloc(1, 100000);

		cql_buf_reset(&fr);
		for (int i = 0; i < 5; i++)
			raw_frame(&fr, CQL_FRAME_CRC, chunk, 100000, false);
		cql_segment_decoder_feed(&d, fr.data, fr.len);
		is_int(cql_segment_decoder_next(&d, &e), CQL_ERR_TRUNCATED, "500 kB of it arrived");
		ok(cs.peak < 4 * 1024 * 1024, "... peak memory follows the bytes received (%zu bytes)",
		   cs.peak);
		free(chunk);
	}
	cql_segment_decoder_free(&d);
	is_int(cs.cur, 0, "everything freed");

	/* a complete large message still reassembles, growing step by step */
	cql_buf_init(&big, A);
	add_envelope(&big, 5, 9, CQL_OP_RESULT, 700000, 5, false);
	cql_buf_reset(&fr);
	for (size_t off = 0; off < big.len; off += 131071)
		raw_frame(&fr, CQL_FRAME_CRC, big.data + off,
				  big.len - off < 131071 ? big.len - off : 131071, false);
	ca = counting_allocator(&cs);
	cql_segment_decoder_init(&d, &ca, CQL_DECODE_FRAMES_CRC);
	cql_segment_decoder_feed(&d, fr.data, fr.len);
	ok(cql_segment_decoder_next(&d, &e) == CQL_OK && e.body_len == 700000 &&
	   memcmp(e.body, big.data + 9, 700000) == 0, "a 700 kB message reassembles");
	{
		uint8_t    *body = NULL;

		ok(cql_segment_decoder_take_body(&d, &e, &body) == CQL_OK && body &&
		   memcmp(body, big.data + 9, 700000) == 0, "... and its body can be taken");
		cql_free(&ca, body);
	}
	cql_segment_decoder_free(&d);
	is_int(cs.cur, 0, "everything freed");
	cql_buf_free(&big);
	cql_buf_free(&fr);
}

int
main(void)
{
	plan(309);		/* every assertion below runs on a passing build */
	test_claimed_size();
	test_envelope_header();
	test_v4_lz4();
	test_frame_encode();
	test_packing_and_decoding();
	test_decoder_errors();
	test_v4_stream();
	test_take_body();
	return done_testing();
}

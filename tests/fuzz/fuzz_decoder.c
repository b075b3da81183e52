/*
 * fuzz_decoder.c
 *		libFuzzer target for everything that parses server bytes: the v5
 *		frame decoder (CRC and LZ4 formats), the v4 envelope decoder and
 *		every response decoder, RESULT included (which parses column
 *		types with cql_type_read_option).
 *
 * Input layout:
 *	byte 0: bits 0-1 mode (0 v4 envelopes, 1 v5 CRC frames, 2 v5 LZ4
 *			frames, 3 no framing: bytes 1-2 are opcode and flags and the
 *			rest is one response body), bit 2 v4 LZ4 bodies on, bit 3
 *			protocol v5 (else v4), bits 4-7 feed chunk size.
 *	rest:   the received byte stream (modes 0-2).
 *
 * Build and run: see tests/fuzz/README.md.
 */
#include "cql_frame_int.h"

#include <stdlib.h>
#include <string.h>

static const cql_allocator *A = &cql_malloc_allocator;

/* sink so that reads of decoded slices cannot be optimised away */
static volatile unsigned sink;

static void
touch(const uint8_t *p, int64_t n)
{
	if (p != NULL && n > 0)
		sink += p[0] + p[n - 1];
}

static void
decode_result(int version, uint8_t flags, const uint8_t *body, size_t n)
{
	static cql_type t_int = {CQL_TYPE_INT};
	static cql_column cached[3] = {
		{NULL, NULL, "a", &t_int}, {NULL, NULL, "b", &t_int}, {NULL, NULL, "c", &t_int}
	};
	cql_result	r;

	/* alternate between having and not having cached columns */
	if (cql_decode_result(&r, version, flags, body, n, A,
						  (n & 1) ? cached : NULL, (n & 1) ? 3 : 0) != CQL_OK)
		return;
	if (r.kind == CQL_RESULT_ROWS)
	{
		/*
		 * Every cell of every row by the metadata's column count: each
		 * must exist (the decoder keeps rows_count x meta.ncols cells) and
		 * render with its column's type when that is known.
		 */
		for (int32_t row = 0; row < r.rows_count && row < 1000; row++)
			for (int32_t c = 0; c < r.meta.ncols; c++)
			{
				const cql_elem *e = cql_result_cell(&r, row, c);

				if (e == NULL)
					abort();
				touch(e->p, e->n);
				if (r.meta.cols && r.meta.cols[c].type && row < 4)
				{
					cql_buf		out;

					cql_buf_init(&out, A);
					(void) cql_value_format(r.meta.cols[c].type, e->p, e->n,
											CQL_FORMAT_LITERAL, &out);
					cql_buf_free(&out);
				}
			}

		/*
		 * A consumer that expects its own column count (3, like the cached
		 * columns) reads only after cql_result_has_columns says yes; then
		 * every cell and column spec it reads must be there.  Outside the
		 * result, cql_result_cell is NULL.
		 */
		if (cql_result_has_columns(&r, 3))
		{
			for (int32_t row = 0; row < r.rows_count; row++)
				for (int32_t c = 0; c < 3; c++)
				{
					const cql_elem *e = cql_result_cell(&r, row, c);

					if (e == NULL || r.meta.cols[c].type == NULL)
						abort();
					touch(e->p, e->n);
				}
		}
		else if (cql_result_check_columns(&r, 3, NULL) == CQL_OK)
			abort();
		if (cql_result_cell(&r, r.rows_count, 0) != NULL ||
			cql_result_cell(&r, 0, r.meta.ncols) != NULL ||
			cql_result_cell(&r, -1, 0) != NULL)
			abort();
	}
	touch(r.meta.paging_state, r.meta.paging_state_len);
	touch(r.meta.new_metadata_id, r.meta.new_metadata_id_len);
	touch(r.prepared_id, r.prepared_id_len);
	for (int32_t i = 0; i < r.bind.npk; i++)
		sink += r.bind.pk_indexes[i];
	if (r.bind.ncols > 0)
	{
		cql_column *copy = NULL;

		if (cql_columns_copy(r.bind.cols, r.bind.ncols, A, &copy) == CQL_OK)
			cql_columns_free(copy, r.bind.ncols, A);
	}
	if (r.meta.cols && !r.meta.cols_borrowed)
	{
		for (int32_t c = 0; c < r.meta.ncols; c++)
			sink += (unsigned) strlen(r.meta.cols[c].name) + r.meta.cols[c].type->id;
	}
	cql_result_free(&r);
}

static void
decode_body(int version, uint8_t opcode, uint8_t flags, const uint8_t *body, size_t n)
{
	cql_response_extras ex;
	size_t		off = 0;
	const uint8_t *msg;
	size_t		mn;

	if (opcode == CQL_OP_RESULT)
	{
		decode_result(version, flags, body, n);
		return;
	}
	if (cql_response_strip(body, n, flags, A, &ex, &off) != CQL_OK)
		return;
	for (int i = 0; i < ex.nwarnings; i++)
		sink += (unsigned) strlen(ex.warnings[i]);
	touch(ex.custom_payload, (int64_t) ex.custom_payload_len);
	cql_response_extras_free(&ex, A);
	msg = body + off;
	mn = n - off;

	switch (opcode)
	{
		case CQL_OP_ERROR:
			{
				cql_error	e;

				memset(&e, 0, sizeof(e));
				if (cql_decode_error(msg, mn, version, &e) == CQL_OK)
					sink += (unsigned) strlen(e.message) + (unsigned) strlen(cql_error_code_name(e.code)) +
						(unsigned) strlen(e.arg_types) + (unsigned) strlen(e.write_type);
				break;
			}
		case CQL_OP_READY:
			(void) cql_decode_ready(msg, mn);
			break;
		case CQL_OP_AUTHENTICATE:
			{
				char	   *cls = NULL;

				if (cql_decode_authenticate(msg, mn, A, &cls) == CQL_OK)
					sink += (unsigned) strlen(cls);
				cql_free(A, cls);
				break;
			}
		case CQL_OP_AUTH_CHALLENGE:
		case CQL_OP_AUTH_SUCCESS:
			{
				const uint8_t *tok;
				int32_t		tn;

				if (cql_decode_auth_token(msg, mn, &tok, &tn) == CQL_OK)
					touch(tok, tn);
				break;
			}
		case CQL_OP_SUPPORTED:
			{
				cql_supported s;

				if (cql_decode_supported(msg, mn, A, &s) == CQL_OK)
				{
					sink += cql_supported_has(&s, "COMPRESSION", "lz4");
					cql_supported_free(&s, A);
				}
				break;
			}
		case CQL_OP_EVENT:
			{
				cql_event	ev;

				if (cql_decode_event(msg, mn, A, &ev) == CQL_OK)
				{
					if (ev.schema.keyspace)
						sink += (unsigned) strlen(ev.schema.keyspace);
					for (int i = 0; i < ev.schema.nargs; i++)
						sink += (unsigned) strlen(ev.schema.args[i]);
					cql_event_free(&ev, A);
				}
				break;
			}
		default:
			{
				/* unknown opcode: try the generic decoders anyway */
				cql_error	e;
				cql_supported s;
				cql_event	ev;

				memset(&e, 0, sizeof(e));
				(void) cql_decode_error(msg, mn, version, &e);
				if (cql_decode_supported(msg, mn, A, &s) == CQL_OK)
					cql_supported_free(&s, A);
				if (cql_decode_event(msg, mn, A, &ev) == CQL_OK)
					cql_event_free(&ev, A);
				break;
			}
	}
}

/*
 * Round trip: the envelopes decoded from the input, re-framed with
 * cql_frames_encode, must decode back to exactly the same envelopes.  This
 * puts the encoder under the fuzzer too.
 */
static void
check_round_trip(const cql_buf *envs, int nenv, cql_frame_format fmt)
{
	cql_buf		fr;
	cql_segment_decoder d;
	cql_envelope e;
	size_t		pos = 0;
	int			n = 0;

	cql_buf_init(&fr, A);
	if (cql_frames_encode(&fr, fmt, envs->data, envs->len) != CQL_OK)
		abort();
	cql_segment_decoder_init(&d, A, fmt == CQL_FRAME_LZ4 ? CQL_DECODE_FRAMES_LZ4 : CQL_DECODE_FRAMES_CRC);
	if (cql_segment_decoder_feed(&d, fr.data, fr.len) != CQL_OK)
		abort();
	while (cql_segment_decoder_next(&d, &e) == CQL_OK)
	{
		uint8_t		raw[CQL_HEADER_LEN];

		cql_envelope_header_encode(&e.hdr, raw);
		if (pos + CQL_HEADER_LEN + e.body_len > envs->len ||
			memcmp(envs->data + pos, raw, CQL_HEADER_LEN) != 0 ||
			(e.body_len && memcmp(envs->data + pos + CQL_HEADER_LEN, e.body, e.body_len) != 0))
			abort();
		pos += CQL_HEADER_LEN + e.body_len;
		n++;
	}
	if (n != nenv || pos != envs->len || d.fatal != CQL_OK || cql_segment_decoder_buffered(&d) != 0)
		abort();
	cql_segment_decoder_free(&d);
	cql_buf_free(&fr);
}

static const size_t chunk_sizes[16] = {0, 1, 2, 3, 5, 7, 9, 13, 64, 100, 512, 1000, 4096, 8, 6, 12};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t		ctl;
	int			mode;
	int			version;
	size_t		chunk;
	cql_segment_decoder d;
	int			budget = 10000;
	cql_buf		envs;
	int			nenv = 0;

	if (size < 1)
		return 0;
	ctl = data[0];
	data++;
	size--;
	mode = ctl & 3;
	version = (ctl & 8) ? 5 : 4;
	chunk = chunk_sizes[ctl >> 4];

	if (mode == 3)
	{
		if (size < 2)
			return 0;
		decode_body(version, data[0], data[1], data + 2, size - 2);
		return 0;
	}

	cql_buf_init(&envs, A);
	cql_segment_decoder_init(&d, A, (cql_decode_mode) mode);
	cql_segment_decoder_set_v4_lz4(&d, (ctl & 4) != 0);
	/* a lower limit so that the fuzzer can reach TOO_LARGE cheaply */
	cql_segment_decoder_set_max_body(&d, 1024 * 1024);
	if (chunk == 0)
		chunk = size ? size : 1;
	for (size_t off = 0; off < size && budget > 0; off += chunk)
	{
		size_t		k = size - off < chunk ? size - off : chunk;
		cql_envelope env;
		cql_status	st;

		if (cql_segment_decoder_feed(&d, data + off, k) != CQL_OK)
			break;
		while (budget-- > 0)
		{
			st = cql_segment_decoder_next(&d, &env);
			if (st == CQL_OK)
			{
				touch(env.body, (int64_t) env.body_len);
				if (env.body_len != env.hdr.length)
					abort();
				if (envs.len + env.body_len < 1024 * 1024)
				{
					uint8_t		raw[CQL_HEADER_LEN];

					cql_envelope_header_encode(&env.hdr, raw);
					cql_buf_put(&envs, raw, sizeof(raw));
					cql_buf_put(&envs, env.body, env.body_len);
					nenv++;
				}
				decode_body(env.hdr.version >= 5 ? 5 : 4, env.hdr.opcode, env.hdr.flags,
							env.body, env.body_len);
				/* after the handshake READY, v5 switches to framing */
				if (mode == 0 && env.hdr.opcode == CQL_OP_READY && version == 5)
					cql_segment_decoder_set_mode(&d, (ctl & 4) ? CQL_DECODE_FRAMES_LZ4 : CQL_DECODE_FRAMES_CRC);
				continue;
			}
			if (st == CQL_ERR_CRC && d.fatal == CQL_OK)
				continue;		/* dropped frame, stream goes on */
			break;
		}
		if (d.fatal != CQL_OK)
			break;
	}
	cql_segment_decoder_free(&d);
	if (nenv > 0 && !envs.failed)
		check_round_trip(&envs, nenv, (ctl & 0x80) ? CQL_FRAME_LZ4 : CQL_FRAME_CRC);
	cql_buf_free(&envs);
	return 0;
}

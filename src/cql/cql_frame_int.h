/*-------------------------------------------------------------------------
 *
 * cql_frame_int.h
 *		Private: envelope headers, v4 LZ4 bodies, the v5 outer framing
 *		(encoder and incremental decoder) and its checksums (cql_frame.c,
 *		cql_crc.c).  Included by the transport (cql_conn_int.h) and by the
 *		unit tests and fuzz targets that test these functions; not part of
 *		the public API (the FDW does not include it).
 *
 * layer: transport (private; pure functions, no I/O)
 *
 * IDENTIFICATION
 *		src/cql/cql_frame_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_FRAME_INT_H
#define CQL_FRAME_INT_H

#include "cql_wire.h"

/* ---------------------------------------------------------------------
 * Checksums (v5 framing) - cql_crc.c
 * ---------------------------------------------------------------------
 */

/*
 * CRC24 of the first 'nbytes' (3 or 5) bytes of a v5 frame header, given
 * as the little-endian integer 'hdr' (bytes consumed in wire order).
 */
extern uint32_t cql_crc24(uint64_t hdr, int nbytes);

/* Plain zlib-style CRC-32 update (crc = 0 to start). */
extern uint32_t cql_crc32_update(uint32_t crc, const uint8_t *p, size_t n);

/* CRC-32 primed with FA 2D 55 CA, as used for v5 frame payloads. */
extern uint32_t cql_crc32(const uint8_t *p, size_t n);

/* ---------------------------------------------------------------------
 * Envelope header - cql_frame.c
 * ---------------------------------------------------------------------
 */
typedef struct cql_envelope_header
{
	uint8_t		version;		/* 3, 4, 5 (direction bit removed) */
	bool		response;		/* direction bit */
	uint8_t		flags;			/* CQL_FLAG_* */
	int16_t		stream;
	uint8_t		opcode;			/* CQL_OP_* */
	uint32_t	length;			/* body length */
} cql_envelope_header;

/* Write the 9 header bytes. */
extern void cql_envelope_header_encode(const cql_envelope_header *h, uint8_t out[CQL_HEADER_LEN]);

/*
 * Parse 9 header bytes.  Accepts any version >= 3 (the server may answer a
 * handshake with a version other than the one requested; the caller checks
 * it).  CQL_ERR_TRUNCATED if n < 9, CQL_ERR_UNSUPPORTED for version < 3,
 * CQL_ERR_TOO_LARGE for a length over CQL_MAX_BODY_LENGTH.
 */
extern cql_status cql_envelope_header_decode(const uint8_t *p, size_t n,
											 cql_envelope_header *h);

/*
 * Build an envelope in a buffer: cql_envelope_begin() appends a header with
 * length 0 and returns its offset; the caller appends the body (e.g. with
 * a cql_write_* function); cql_envelope_end() patches the length.  With
 * lz4_compress (v4 only, non-empty body) the body is replaced by its
 * compressed form and CQL_FLAG_COMPRESSION is set.
 */
extern size_t cql_envelope_begin(cql_buf *b, int version, uint8_t flags,
								 int16_t stream, uint8_t opcode);
extern cql_status cql_envelope_end(cql_buf *b, size_t start, bool lz4_compress);

/* One-shot: header + given body. */
extern cql_status cql_envelope_build(cql_buf *b, int version, uint8_t flags,
									 int16_t stream, uint8_t opcode,
									 const uint8_t *body, size_t body_len,
									 bool lz4_compress);

/* ---------------------------------------------------------------------
 * v4 body compression (LZ4 block with [u32 BE uncompressed length])
 * ---------------------------------------------------------------------
 */
extern cql_status cql_lz4_compress_body(cql_buf *out, const uint8_t *p, size_t n);

/*
 * Decompress a v4 compressed body into 'out' (appended).  Refuses an
 * uncompressed length over max_len (0 = CQL_MAX_BODY_LENGTH) with
 * CQL_ERR_TOO_LARGE before allocating, and any inconsistent block with
 * CQL_ERR_COMPRESSION.
 */
extern cql_status cql_lz4_decompress_body(cql_buf *out, const uint8_t *p, size_t n,
										  size_t max_len);

/* ---------------------------------------------------------------------
 * v5 outer framing
 * ---------------------------------------------------------------------
 */
typedef enum cql_frame_format
{
	CQL_FRAME_CRC = 0,			/* 6-byte header, uncompressed */
	CQL_FRAME_LZ4 = 1			/* 8-byte header, LZ4 block payload */
} cql_frame_format;

#define CQL_FRAME_MAX_PAYLOAD	131071	/* 2^17 - 1 */
#define CQL_FRAME_CRC_HEADER_LEN 6
#define CQL_FRAME_LZ4_HEADER_LEN 8
#define CQL_FRAME_TRAILER_LEN	4

typedef struct cql_frame_header
{
	uint32_t	payload_len;	/* bytes following the header (compressed
								 * length in LZ4 format) */
	uint32_t	uncompressed_len;	/* LZ4 only; 0 = payload stored raw */
	bool		self_contained;
} cql_frame_header;

extern int	cql_frame_header_len(cql_frame_format fmt);
extern void cql_frame_header_encode(cql_frame_format fmt, const cql_frame_header *h,
									uint8_t *out);

/* Parse and CRC24-check a frame header: TRUNCATED, CRC or TOO_LARGE. */
extern cql_status cql_frame_header_decode(cql_frame_format fmt, const uint8_t *p,
										  size_t n, cql_frame_header *h);

/*
 * Append one frame carrying 'payload' (n <= CQL_FRAME_MAX_PAYLOAD).  In the
 * LZ4 format the payload is compressed, or stored with uncompressed_len 0
 * when compression does not make it smaller.
 */
extern cql_status cql_frame_encode(cql_buf *out, cql_frame_format fmt,
								   const uint8_t *payload, size_t n,
								   bool self_contained);

/*
 * Append the frames carrying a sequence of complete envelopes (their bytes
 * back to back in 'envelopes').  Envelopes that fit are packed into
 * self-contained frames (payload <= 131071); an envelope larger than that is
 * sliced into non-self-contained frames of its own.  CQL_ERR_INVALID_ARG if
 * the input is not a whole number of well-formed envelopes.
 */
extern cql_status cql_frames_encode(cql_buf *out, cql_frame_format fmt,
									const uint8_t *envelopes, size_t n);

/* ---------------------------------------------------------------------
 * Incremental decoder of received bytes - cql_frame.c
 *
 * One interface for both versions:
 *	CQL_DECODE_ENVELOPES   v4 (and the v5 handshake): a stream of 9-byte
 *						   headers + bodies; bodies with CQL_FLAG_COMPRESSION
 *						   are LZ4-decompressed when enabled.
 *	CQL_DECODE_FRAMES_CRC  v5 frames, CRC format.
 *	CQL_DECODE_FRAMES_LZ4  v5 frames, LZ4 format.
 *
 * Usage: feed() any chunk of received bytes (any split), then call next()
 * until it returns CQL_ERR_TRUNCATED ("need more bytes").  The mode can be
 * changed between calls (v5 switches to framing after READY/AUTHENTICATE);
 * bytes already fed and not yet consumed are then read in the new mode.
 *
 * Errors from next():
 *	CQL_ERR_CRC on a header CRC24 mismatch, CQL_ERR_MALFORMED,
 *	CQL_ERR_TOO_LARGE, CQL_ERR_COMPRESSION, CQL_ERR_NOMEM: fatal; every
 *	later call returns the same status (the connection must be closed).
 *	CQL_ERR_CRC on a payload CRC32 mismatch of a self-contained frame is
 *	NOT fatal (that frame's envelopes are lost, 'corrupt_frames' counts
 *	them); in a frame of a large message it is fatal.
 *
 * Memory: at most the bytes fed and not yet consumed, one frame payload
 * (<= 131071 bytes) and one message (<= max_body + 9 bytes); no length read
 * from the wire is ever allocated before it has been checked against
 * max_body, and a large message's buffer grows with the bytes received
 * (doubling), never to its claimed size up front.
 * ---------------------------------------------------------------------
 */
typedef enum cql_decode_mode
{
	CQL_DECODE_ENVELOPES = 0,
	CQL_DECODE_FRAMES_CRC = 1,
	CQL_DECODE_FRAMES_LZ4 = 2
} cql_decode_mode;

/*
 * A decoded envelope.  'body' is BORROWED from the decoder: valid until the
 * next call of any cql_segment_decoder_* function on that decoder.  The body
 * is already decompressed (v4) and then CQL_FLAG_COMPRESSION is cleared in
 * hdr.flags; hdr.length == body_len.
 */
typedef struct cql_envelope
{
	cql_envelope_header hdr;
	const uint8_t *body;
	size_t		body_len;
} cql_envelope;

typedef struct cql_segment_decoder
{
	const cql_allocator *alloc;
	cql_decode_mode mode;
	bool		v4_lz4;			/* decompress v4 bodies flagged COMPRESSION */
	size_t		max_body;		/* limit on envelope body length */
	cql_status	fatal;			/* sticky error, CQL_OK while healthy */
	uint64_t	corrupt_frames; /* self-contained frames dropped (CRC32) */

	/* received, not yet consumed bytes: in[in_pos .. in_len) */
	uint8_t    *in;
	size_t		in_pos;
	size_t		in_len;
	size_t		in_cap;

	/* current self-contained payload (in plbuf) being split into envelopes */
	size_t		pl_pos;
	size_t		pl_len;
	bool		pl_active;
	uint8_t    *plbuf;			/* decompressed payload (131071 bytes) */

	/* large message accumulated over non-self-contained frames */
	uint8_t    *big;
	size_t		big_len;
	size_t		big_cap;
	size_t		big_total;		/* 0 until the envelope header is known */
	bool		big_active;

	/* scratch: v4 decompressed body */
	cql_buf		scratch;
} cql_segment_decoder;

extern void cql_segment_decoder_init(cql_segment_decoder *d, const cql_allocator *a,
									 cql_decode_mode mode);
extern void cql_segment_decoder_free(cql_segment_decoder *d);
extern void cql_segment_decoder_set_mode(cql_segment_decoder *d, cql_decode_mode mode);
/* v4: bodies flagged CQL_FLAG_COMPRESSION are LZ4 (after STARTUP with lz4) */
extern void cql_segment_decoder_set_v4_lz4(cql_segment_decoder *d, bool on);
/* lower the body limit (default CQL_MAX_BODY_LENGTH) */
extern void cql_segment_decoder_set_max_body(cql_segment_decoder *d, size_t max_body);
/* copy bytes in (CQL_ERR_NOMEM, or the sticky fatal status) */
extern cql_status cql_segment_decoder_feed(cql_segment_decoder *d, const uint8_t *p, size_t n);
/* CQL_OK with *env filled, CQL_ERR_TRUNCATED if more bytes are needed */
extern cql_status cql_segment_decoder_next(cql_segment_decoder *d, cql_envelope *env);
/*
 * Turn the body of the envelope just returned by next() into an allocation
 * owned by the caller (made with the decoder's allocator, free with
 * cql_free), e.g. for cql_decode_result_take().  A large v5 message gives
 * away the decoder's reassembly buffer (no copy of a big body); anything
 * else is copied.  Call it before any other call on the decoder.
 */
extern cql_status cql_segment_decoder_take_body(cql_segment_decoder *d,
												const cql_envelope *env,
												uint8_t **body);
/* bytes buffered and not yet consumed (for tests/diagnostics) */
extern size_t cql_segment_decoder_buffered(const cql_segment_decoder *d);

#endif							/* CQL_FRAME_INT_H */

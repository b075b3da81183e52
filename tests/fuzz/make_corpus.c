/*
 * make_corpus.c
 *		Writes the seed corpus of fuzz_decoder: realistic response
 *		envelopes (RESULT Rows/Prepared/..., ERROR of every code, EVENT,
 *		SUPPORTED, AUTHENTICATE...) as v4 envelope streams (plain and LZ4),
 *		v5 CRC and LZ4 frames (packed, and one message sliced into
 *		non-self-contained frames), and bare bodies for mode 3.
 *
 * Usage: make_corpus DIR   (see tests/fuzz/README.md)
 */
#include "cql_frame_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cql_allocator *A = &cql_malloc_allocator;
static const char *outdir;
static int	nfiles;

static void
write_seed(const char *name, uint8_t ctl, const uint8_t *p, size_t n)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, "wb");
	if (!f)
	{
		perror(path);
		exit(1);
	}
	fputc(ctl, f);
	fwrite(p, 1, n, f);
	fclose(f);
	nfiles++;
}

typedef struct body
{
	uint8_t		opcode;
	uint8_t		flags;
	cql_buf		b;
	const char *name;
} body;

static body bodies[64];
static int	nbodies;

static cql_buf *
new_body(const char *name, uint8_t opcode, uint8_t flags)
{
	body	   *x = &bodies[nbodies++];

	x->name = name;
	x->opcode = opcode;
	x->flags = flags;
	cql_buf_init(&x->b, A);
	return &x->b;
}

static void
colspec(cql_buf *b, const char *name)
{
	cql_buf_string(b, name);
}

static void
make_bodies(int version)
{
	cql_buf    *b;

	for (int i = 0; i < nbodies; i++)
		cql_buf_free(&bodies[i].b);
	nbodies = 0;
	new_body("ready", CQL_OP_READY, 0);
	b = new_body("authenticate", CQL_OP_AUTHENTICATE, 0);
	cql_buf_string(b, "org.apache.cassandra.auth.PasswordAuthenticator");
	b = new_body("auth_success", CQL_OP_AUTH_SUCCESS, 0);
	cql_buf_bytes(b, NULL, -1);
	b = new_body("auth_challenge", CQL_OP_AUTH_CHALLENGE, 0);
	cql_buf_bytes(b, "PLAIN-START", 11);
	{
		const char *cv[] = {"3.4.7"};
		const char *comp[] = {"snappy", "lz4"};
		const char *pv[] = {"3/v3", "4/v4", "5/v5", "6/v6-beta"};

		b = new_body("supported", CQL_OP_SUPPORTED, 0);
		cql_buf_u16(b, 3);
		cql_buf_string(b, "CQL_VERSION");
		cql_buf_string_list(b, cv, 1);
		cql_buf_string(b, "COMPRESSION");
		cql_buf_string_list(b, comp, 2);
		cql_buf_string(b, "PROTOCOL_VERSIONS");
		cql_buf_string_list(b, pv, 4);
	}
	b = new_body("event_topology", CQL_OP_EVENT, 0);
	cql_buf_string(b, "TOPOLOGY_CHANGE");
	cql_buf_string(b, "NEW_NODE");
	cql_buf_u8(b, 4);
	cql_buf_put(b, "\x7f\x00\x00\x02", 4);
	cql_buf_i32(b, 9042);
	b = new_body("event_status", CQL_OP_EVENT, 0);
	cql_buf_string(b, "STATUS_CHANGE");
	cql_buf_string(b, "UP");
	cql_buf_u8(b, 16);
	cql_buf_put(b, "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", 16);
	cql_buf_i32(b, 9042);
	{
		const char *args[] = {"int", "text"};

		b = new_body("event_schema_fn", CQL_OP_EVENT, 0);
		cql_buf_string(b, "SCHEMA_CHANGE");
		cql_buf_string(b, "CREATED");
		cql_buf_string(b, "FUNCTION");
		cql_buf_string(b, "ks");
		cql_buf_string(b, "f");
		cql_buf_string_list(b, args, 2);
	}
	b = new_body("event_schema_table", CQL_OP_EVENT, 0);
	cql_buf_string(b, "SCHEMA_CHANGE");
	cql_buf_string(b, "UPDATED");
	cql_buf_string(b, "TABLE");
	cql_buf_string(b, "ks");
	cql_buf_string(b, "t");

	/* errors */
	b = new_body("error_syntax", CQL_OP_ERROR, 0);
	cql_buf_i32(b, CQL_ERRCODE_SYNTAX_ERROR);
	cql_buf_string(b, "line 1:0 no viable alternative at input 'SELEC'");
	b = new_body("error_unavailable", CQL_OP_ERROR, 0);
	cql_buf_i32(b, CQL_ERRCODE_UNAVAILABLE);
	cql_buf_string(b, "Cannot achieve consistency level QUORUM");
	cql_buf_u16(b, 4);
	cql_buf_i32(b, 2);
	cql_buf_i32(b, 1);
	b = new_body("error_write_timeout", CQL_OP_ERROR, 0);
	cql_buf_i32(b, CQL_ERRCODE_WRITE_TIMEOUT);
	cql_buf_string(b, "Operation timed out");
	cql_buf_u16(b, 9);
	cql_buf_i32(b, 0);
	cql_buf_i32(b, 1);
	cql_buf_string(b, "CAS");
	if (version >= 5)
		cql_buf_u16(b, 2);
	b = new_body("error_read_timeout", CQL_OP_ERROR, 0);
	cql_buf_i32(b, CQL_ERRCODE_READ_TIMEOUT);
	cql_buf_string(b, "Operation timed out");
	cql_buf_u16(b, 1);
	cql_buf_i32(b, 0);
	cql_buf_i32(b, 1);
	cql_buf_u8(b, 0);
	b = new_body("error_read_failure", CQL_OP_ERROR, 0);
	cql_buf_i32(b, CQL_ERRCODE_READ_FAILURE);
	cql_buf_string(b, "Operation failed");
	cql_buf_u16(b, 1);
	cql_buf_i32(b, 0);
	cql_buf_i32(b, 1);
	cql_buf_i32(b, 1);
	if (version >= 5)
	{
		cql_buf_u8(b, 4);
		cql_buf_put(b, "\x0a\x00\x00\x01", 4);
		cql_buf_u16(b, 1);
	}
	cql_buf_u8(b, 0);
	b = new_body("error_write_failure", CQL_OP_ERROR, 0);
	cql_buf_i32(b, CQL_ERRCODE_WRITE_FAILURE);
	cql_buf_string(b, "Operation failed");
	cql_buf_u16(b, 1);
	cql_buf_i32(b, 0);
	cql_buf_i32(b, 1);
	cql_buf_i32(b, 1);
	if (version >= 5)
	{
		cql_buf_u8(b, 4);
		cql_buf_put(b, "\x0a\x00\x00\x01", 4);
		cql_buf_u16(b, 0);
	}
	cql_buf_string(b, "SIMPLE");
	{
		const char *args[] = {"int"};

		b = new_body("error_function", CQL_OP_ERROR, 0);
		cql_buf_i32(b, CQL_ERRCODE_FUNCTION_FAILURE);
		cql_buf_string(b, "failed");
		cql_buf_string(b, "ks");
		cql_buf_string(b, "fn");
		cql_buf_string_list(b, args, 1);
	}
	b = new_body("error_already_exists", CQL_OP_ERROR, 0);
	cql_buf_i32(b, CQL_ERRCODE_ALREADY_EXISTS);
	cql_buf_string(b, "Cannot add existing table");
	cql_buf_string(b, "ks");
	cql_buf_string(b, "t");
	b = new_body("error_unprepared", CQL_OP_ERROR, 0);
	cql_buf_i32(b, CQL_ERRCODE_UNPREPARED);
	cql_buf_string(b, "Prepared query with ID ... not found");
	cql_buf_short_bytes(b, "0123456789abcdef", 16);
	b = new_body("error_cas_unknown", CQL_OP_ERROR, 0);
	cql_buf_i32(b, CQL_ERRCODE_CAS_WRITE_UNKNOWN);
	cql_buf_string(b, "CAS unknown");
	cql_buf_u16(b, 9);
	cql_buf_i32(b, 0);
	cql_buf_i32(b, 1);

	/* results */
	b = new_body("result_void", CQL_OP_RESULT, 0);
	cql_buf_i32(b, CQL_RESULT_VOID);
	b = new_body("result_set_keyspace", CQL_OP_RESULT, 0);
	cql_buf_i32(b, CQL_RESULT_SET_KEYSPACE);
	cql_buf_string(b, "ks");
	b = new_body("result_schema_change", CQL_OP_RESULT, 0);
	cql_buf_i32(b, CQL_RESULT_SCHEMA_CHANGE);
	cql_buf_string(b, "CREATED");
	cql_buf_string(b, "KEYSPACE");
	cql_buf_string(b, "ks");
	{
		const char *w[] = {"Aggregation query used without partition key"};

		b = new_body("result_rows_types", CQL_OP_RESULT, CQL_FLAG_WARNING | CQL_FLAG_TRACING);
		cql_buf_put(b, "0123456789abcdef", 16);
		cql_buf_string_list(b, w, 1);
	}
	cql_buf_i32(b, CQL_RESULT_ROWS);
	cql_buf_i32(b, CQL_ROWS_GLOBAL_TABLES_SPEC | CQL_ROWS_HAS_MORE_PAGES);
	cql_buf_i32(b, 6);
	cql_buf_bytes(b, "\x00\x10\x01\x02", 4);
	cql_buf_string(b, "ks");
	cql_buf_string(b, "t");
	colspec(b, "k");
	cql_buf_u16(b, CQL_TYPE_INT);
	colspec(b, "l");
	cql_buf_u16(b, CQL_TYPE_LIST);
	cql_buf_u16(b, CQL_TYPE_VARCHAR);
	colspec(b, "m");
	cql_buf_u16(b, CQL_TYPE_MAP);
	cql_buf_u16(b, CQL_TYPE_VARCHAR);
	cql_buf_u16(b, CQL_TYPE_BIGINT);
	colspec(b, "u");
	cql_buf_u16(b, CQL_TYPE_UDT);
	cql_buf_string(b, "ks");
	cql_buf_string(b, "address");
	cql_buf_u16(b, 2);
	cql_buf_string(b, "street");
	cql_buf_u16(b, CQL_TYPE_VARCHAR);
	cql_buf_string(b, "zip");
	cql_buf_u16(b, CQL_TYPE_INT);
	colspec(b, "tu");
	cql_buf_u16(b, CQL_TYPE_TUPLE);
	cql_buf_u16(b, 2);
	cql_buf_u16(b, CQL_TYPE_UUID);
	cql_buf_u16(b, CQL_TYPE_DOUBLE);
	colspec(b, "v");
	cql_buf_u16(b, CQL_TYPE_CUSTOM);
	cql_buf_string(b, "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3)");
	cql_buf_i32(b, 2);
	for (int r = 0; r < 2; r++)
	{
		cql_buf_bytes(b, "\x00\x00\x00\x01", 4);
		cql_buf_bytes(b, "\x00\x00\x00\x01\x00\x00\x00\x01x", 9);
		cql_buf_bytes(b, NULL, -1);
		cql_buf_bytes(b, "\x00\x00\x00\x01\x61\x00\x00\x00\x04\x00\x00\x00\x05", 13);
		cql_buf_bytes(b, "\x00\x00\x00\x10" "0123456789abcdef\x00\x00\x00\x08" "\x3f\xf0\x00\x00\x00\x00\x00\x00", 32);
		cql_buf_bytes(b, "\x3f\x80\x00\x00\x40\x00\x00\x00\x40\x40\x00\x00", 12);
	}
	b = new_body("result_rows_no_metadata", CQL_OP_RESULT, 0);
	cql_buf_i32(b, CQL_RESULT_ROWS);
	cql_buf_i32(b, CQL_ROWS_NO_METADATA);
	cql_buf_i32(b, 3);
	cql_buf_i32(b, 2);
	for (int i = 0; i < 6; i++)
		cql_buf_bytes(b, "\x00\x00\x00\x07", 4);
	b = new_body("result_rows_metadata_changed", CQL_OP_RESULT, 0);
	cql_buf_i32(b, CQL_RESULT_ROWS);
	cql_buf_i32(b, CQL_ROWS_METADATA_CHANGED | CQL_ROWS_HAS_MORE_PAGES);
	cql_buf_i32(b, 1);
	cql_buf_bytes(b, "\x01\x02\x03", 3);
	if (version >= 5)
		cql_buf_short_bytes(b, "fedcba9876543210", 16);
	cql_buf_string(b, "ks");
	cql_buf_string(b, "t");
	colspec(b, "c");
	cql_buf_u16(b, CQL_TYPE_BLOB);
	cql_buf_i32(b, 1);
	cql_buf_bytes(b, "\xca\xfe", 2);
	b = new_body("result_prepared", CQL_OP_RESULT, 0);
	cql_buf_i32(b, CQL_RESULT_PREPARED);
	cql_buf_short_bytes(b, "0123456789abcdef", 16);
	if (version >= 5)
		cql_buf_short_bytes(b, "fedcba9876543210", 16);
	cql_buf_i32(b, CQL_ROWS_GLOBAL_TABLES_SPEC);
	cql_buf_i32(b, 2);
	cql_buf_i32(b, 1);
	cql_buf_u16(b, 1);
	cql_buf_string(b, "ks");
	cql_buf_string(b, "t");
	colspec(b, "v");
	cql_buf_u16(b, CQL_TYPE_SET);
	cql_buf_u16(b, CQL_TYPE_TIMEUUID);
	colspec(b, "k");
	cql_buf_u16(b, CQL_TYPE_INT);
	cql_buf_i32(b, CQL_ROWS_GLOBAL_TABLES_SPEC);
	cql_buf_i32(b, 1);
	cql_buf_string(b, "ks");
	cql_buf_string(b, "t");
	colspec(b, "v");
	cql_buf_u16(b, CQL_TYPE_DURATION);
}

static void
envelopes(cql_buf *out, int version, bool compress)
{
	for (int i = 0; i < nbodies; i++)
	{
		cql_envelope_header h = {(uint8_t) version, true, bodies[i].flags,
			(int16_t) (bodies[i].opcode == CQL_OP_EVENT ? -1 : i), bodies[i].opcode,
		(uint32_t) bodies[i].b.len};
		uint8_t		raw[9];

		if (compress)
		{
			cql_buf		c;

			cql_buf_init(&c, A);
			cql_lz4_compress_body(&c, bodies[i].b.data, bodies[i].b.len);
			h.flags |= CQL_FLAG_COMPRESSION;
			h.length = (uint32_t) c.len;
			cql_envelope_header_encode(&h, raw);
			cql_buf_put(out, raw, 9);
			cql_buf_put(out, c.data, c.len);
			cql_buf_free(&c);
		}
		else
		{
			cql_envelope_header_encode(&h, raw);
			cql_buf_put(out, raw, 9);
			cql_buf_put(out, bodies[i].b.data, bodies[i].b.len);
		}
	}
}

int
main(int argc, char **argv)
{
	cql_buf		s;
	cql_buf		f;
	char		name[256];

	if (argc != 2)
	{
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	cql_buf_init(&s, A);
	cql_buf_init(&f, A);

	for (int version = 4; version <= 5; version++)
	{
		uint8_t		vbit = version == 5 ? 8 : 0;

		make_bodies(version);

		/* mode 3: bare bodies */
		for (int i = 0; i < nbodies; i++)
		{
			cql_buf_reset(&s);
			cql_buf_u8(&s, bodies[i].opcode);
			cql_buf_u8(&s, bodies[i].flags);
			cql_buf_put(&s, bodies[i].b.data, bodies[i].b.len);
			snprintf(name, sizeof(name), "v%d_body_%s", version, bodies[i].name);
			write_seed(name, 3 | vbit, s.data, s.len);
		}

		/* mode 0: envelope stream, plain and LZ4, whole and byte by byte */
		cql_buf_reset(&s);
		envelopes(&s, version, false);
		snprintf(name, sizeof(name), "v%d_envelopes", version);
		write_seed(name, 0 | vbit, s.data, s.len);
		snprintf(name, sizeof(name), "v%d_envelopes_bytewise", version);
		write_seed(name, 0 | vbit | 0x10, s.data, s.len);
		if (version == 4)
		{
			cql_buf_reset(&s);
			envelopes(&s, version, true);
			write_seed("v4_envelopes_lz4", 0 | 4 | 0x70, s.data, s.len);
			continue;
		}

		/* v5: unframed READY, then CRC frames (the handshake switch) */
		cql_buf_reset(&s);
		{
			uint8_t		ready[9] = {0x85, 0, 0, 0, CQL_OP_READY, 0, 0, 0, 0};

			cql_buf_put(&s, ready, 9);
		}
		cql_buf_reset(&f);
		envelopes(&f, 5, false);
		cql_frames_encode(&s, CQL_FRAME_CRC, f.data, f.len);
		write_seed("v5_handshake_then_crc", 0 | vbit | 0x30, s.data, s.len);

		/* v5 frames, both formats, packed */
		for (int fmt = 0; fmt < 2; fmt++)
		{
			cql_buf_reset(&s);
			cql_frames_encode(&s, fmt ? CQL_FRAME_LZ4 : CQL_FRAME_CRC, f.data, f.len);
			snprintf(name, sizeof(name), "v5_frames_%s", fmt ? "lz4" : "crc");
			write_seed(name, (uint8_t) ((fmt ? 2 : 1) | vbit), s.data, s.len);
			snprintf(name, sizeof(name), "v5_frames_%s_chunk7", fmt ? "lz4" : "crc");
			write_seed(name, (uint8_t) ((fmt ? 2 : 1) | vbit | 0x50), s.data, s.len);

			/* one frame per envelope */
			cql_buf_reset(&s);
			for (int i = 0; i < nbodies; i++)
			{
				cql_buf		one;

				cql_buf_init(&one, A);
				cql_buf_reset(&one);
				{
					cql_envelope_header h = {5, true, bodies[i].flags, (int16_t) i, bodies[i].opcode,
					(uint32_t) bodies[i].b.len};
					uint8_t		raw[9];

					cql_envelope_header_encode(&h, raw);
					cql_buf_put(&one, raw, 9);
					cql_buf_put(&one, bodies[i].b.data, bodies[i].b.len);
				}
				cql_frame_encode(&s, fmt ? CQL_FRAME_LZ4 : CQL_FRAME_CRC, one.data, one.len, true);
				cql_buf_free(&one);
			}
			snprintf(name, sizeof(name), "v5_frames_%s_single", fmt ? "lz4" : "crc");
			write_seed(name, (uint8_t) ((fmt ? 2 : 1) | vbit), s.data, s.len);

			/* a message sliced into non-self-contained frames (5 + 40 + rest) */
			cql_buf_reset(&s);
			{
				body	   *rb = &bodies[nbodies - 4];	/* result_rows_types */
				cql_buf		one;
				cql_envelope_header h = {5, true, rb->flags, 3, rb->opcode, (uint32_t) rb->b.len};
				uint8_t		raw[9];

				cql_buf_init(&one, A);
				cql_envelope_header_encode(&h, raw);
				cql_buf_put(&one, raw, 9);
				cql_buf_put(&one, rb->b.data, rb->b.len);
				cql_frame_encode(&s, fmt ? CQL_FRAME_LZ4 : CQL_FRAME_CRC, one.data, 5, false);
				cql_frame_encode(&s, fmt ? CQL_FRAME_LZ4 : CQL_FRAME_CRC, one.data + 5, 40, false);
				cql_frame_encode(&s, fmt ? CQL_FRAME_LZ4 : CQL_FRAME_CRC, one.data + 45, one.len - 45, false);
				cql_frame_encode(&s, fmt ? CQL_FRAME_LZ4 : CQL_FRAME_CRC, f.data, 9 + bodies[0].b.len, true);
				cql_buf_free(&one);
			}
			snprintf(name, sizeof(name), "v5_frames_%s_sliced", fmt ? "lz4" : "crc");
			write_seed(name, (uint8_t) ((fmt ? 2 : 1) | vbit | 0x80), s.data, s.len);
		}
	}
	for (int i = 0; i < nbodies; i++)
		cql_buf_free(&bodies[i].b);
	cql_buf_free(&s);
	cql_buf_free(&f);
	printf("wrote %d seeds to %s\n", nfiles, outdir);
	return 0;
}

/*
 * test_values.c
 *		Value codecs: every CQL type in both directions (literal/JSON text
 *		-> bytes against worked encodings, bytes -> text), round trips,
 *		edge values, strict rejection of bad input, and hostile bytes.
 */
#include "cql_types.h"
#include "parse_type.h"
#include "rnd.h"
#include "tap.h"

#include <math.h>

static const cql_allocator *A = &cql_malloc_allocator;

/* buffer data, never NULL (memcmp of NULL is undefined even for 0 bytes) */
#define D(b) ((b).data ? (const void *) (b).data : (const void *) "")

/* A UDT addr {street text, "Zip" int, tags list<text>} built by hand. */
static cql_type *
udt_addr(void)
{
	cql_type   *t = cql_type_new(A, CQL_TYPE_UDT, 3);

	t->keyspace = cql_strdup(A, "ks");
	t->name = cql_strdup(A, "addr");
	t->field_names[0] = cql_strdup(A, "street");
	t->field_names[1] = cql_strdup(A, "Zip");
	t->field_names[2] = cql_strdup(A, "tags");
	t->sub[0] = T("text");
	t->sub[1] = T("int");
	t->sub[2] = T("list<text>");
	return t;
}

static char fmtbuf[4096];

/* Printable form of a text for TAP test names (no raw newlines). */
static const char *
show(const char *s)
{
	static char ring[8][256];
	static int	k = 0;
	char	   *o = ring[k++ % 8];
	size_t		n = 0;

	for (; *s && n < 240; s++)
	{
		if ((unsigned char) *s < 0x20)
			n += (size_t) snprintf(o + n, 256 - n, "\\x%02x", (unsigned char) *s);
		else
			o[n++] = *s;
	}
	o[n] = '\0';
	return o;
}

/* Format bytes; returns status and leaves text in fmtbuf. */
static cql_status
fmt(const cql_type *t, const uint8_t *p, int32_t n, cql_format_style style)
{
	cql_buf		b;
	cql_status	st;

	cql_buf_init(&b, A);
	st = cql_value_format(t, p, n, style, &b);
	snprintf(fmtbuf, sizeof(fmtbuf), "%.*s", (int) b.len, b.data ? (const char *) b.data : "");
	cql_buf_free(&b);
	return st;
}

/* Parse text; content into *out (caller frees). */
static cql_status
prs(const cql_type *t, const char *text, cql_format_style style, cql_buf *out, bool *isnull)
{
	cql_buf_init(out, A);
	return cql_value_parse(t, text, strlen(text), style, out, isnull);
}

/*
 * The central check.  lit_in (CQL literal) must encode to hex; the bytes
 * must format to lit_out (NULL: same as lit_in) and to json; both
 * formatted texts must parse back to the same bytes.
 */
static void
check_t(const cql_type *t, const char *tname, const char *lit_in, const char *hex,
		const char *lit_out, const char *json)
{
	unsigned char want[4096];
	size_t		wn = tap_unhex(hex, want, sizeof(want));
	cql_buf		b;
	bool		isnull = true;
	cql_status	st;

	if (!lit_out)
		lit_out = lit_in;
	st = prs(t, lit_in, CQL_FORMAT_LITERAL, &b, &isnull);
	ok(st == CQL_OK && !isnull, "%s: parse literal %s (st=%d)", tname, show(lit_in), st);
	is_mem(D(b), b.len, want, wn, "%s: %s encodes as %s", tname, show(lit_in), hex);
	cql_buf_free(&b);

	st = fmt(t, want, (int32_t) wn, CQL_FORMAT_LITERAL);
	ok(st == CQL_OK, "%s: format literal ok (st=%d)", tname, st);
	is_str(fmtbuf, lit_out, "%s: %s formats as literal %s", tname, hex, show(lit_out));
	st = prs(t, fmtbuf, CQL_FORMAT_LITERAL, &b, &isnull);
	ok(st == CQL_OK && b.len == wn && memcmp(D(b), want, wn) == 0,
	   "%s: literal %s round-trips", tname, show(fmtbuf));
	cql_buf_free(&b);

	st = fmt(t, want, (int32_t) wn, CQL_FORMAT_JSON);
	ok(st == CQL_OK, "%s: format json ok (st=%d)", tname, st);
	is_str(fmtbuf, json, "%s: %s formats as JSON %s", tname, hex, json);
	st = prs(t, fmtbuf, CQL_FORMAT_JSON, &b, &isnull);
	ok(st == CQL_OK && b.len == wn && memcmp(D(b), want, wn) == 0,
	   "%s: JSON %s round-trips (st=%d)", tname, show(fmtbuf), st);
	if (!(st == CQL_OK && b.len == wn && memcmp(D(b), want, wn) == 0))
		tap_hexdump("got", b.data, b.len);
	cql_buf_free(&b);
}

static void
check(const char *type, const char *lit_in, const char *hex, const char *lit_out,
	  const char *json)
{
	cql_type   *t = T(type);

	check_t(t, type, lit_in, hex, lit_out, json);
	cql_type_free(t, A);
}

/* Input text (either style) must encode to hex. */
static void
parses_to(const char *type, cql_format_style style, const char *text, const char *hex)
{
	cql_type   *t = T(type);
	unsigned char want[4096];
	size_t		wn = tap_unhex(hex, want, sizeof(want));
	cql_buf		b;
	bool		isnull;
	cql_status	st = prs(t, text, style, &b, &isnull);

	ok(st == CQL_OK && !isnull, "%s: %s %s parses (st=%d)", type,
	   style == CQL_FORMAT_JSON ? "JSON" : "literal", show(text), st);
	is_mem(D(b), b.len, want, wn, "%s: %s encodes as %s", type, show(text), hex);
	cql_buf_free(&b);
	cql_type_free(t, A);
}

static void
rejects_t(const cql_type *t, const char *tname, cql_format_style style, const char *text)
{
	cql_buf		b;
	bool		isnull;
	cql_status	st = prs(t, text, style, &b, &isnull);

	ok(st == CQL_ERR_TYPE && b.len == 0, "%s: %s %s is rejected (st=%d)", tname,
	   style == CQL_FORMAT_JSON ? "JSON" : "literal", show(text), st);
	cql_buf_free(&b);
}

static void
rejects(const char *type, cql_format_style style, const char *text)
{
	cql_type   *t = T(type);

	rejects_t(t, type, style, text);
	cql_type_free(t, A);
}

/* Bytes (hex) must format to text, or fail with want_st when text is NULL. */
static void
formats(const char *type, cql_format_style style, const char *hex, const char *text,
		cql_status want_st)
{
	cql_type   *t = T(type);
	unsigned char in[4096];
	size_t		n = tap_unhex(hex, in, sizeof(in));
	cql_status	st = fmt(t, in, (int32_t) n, style);

	if (text)
	{
		ok(st == CQL_OK, "%s: bytes %s format (st=%d)", type, hex, st);
		is_str(fmtbuf, text, "%s: bytes %s -> %s", type, hex, show(text));
	}
	else
		ok(st == want_st && fmtbuf[0] == '\0', "%s: bytes %s refused with %d (got %d, '%s')",
		   type, hex, want_st, st, show(fmtbuf));
	cql_type_free(t, A);
}

/* format -> parse must reproduce bytes, for both styles */
static bool
roundtrip_bytes(const cql_type *t, const uint8_t *p, int32_t n)
{
	for (int s = 0; s < 2; s++)
	{
		cql_format_style style = s ? CQL_FORMAT_JSON : CQL_FORMAT_LITERAL;
		cql_buf		b;
		bool		isnull;
		bool		good;

		if (fmt(t, p, n, style) != CQL_OK)
			return false;
		if (prs(t, fmtbuf, style, &b, &isnull) != CQL_OK)
		{
			printf("# no parse back: %s\n", fmtbuf);
			cql_buf_free(&b);
			return false;
		}
		good = b.len == (size_t) n && memcmp(D(b), p, (size_t) n) == 0;
		if (!good)
			printf("# mismatch for %s\n", fmtbuf);
		cql_buf_free(&b);
		if (!good)
			return false;
	}
	return true;
}

static void
test_integers(void)
{
	check("int", "42", "0000002a", NULL, "42");
	check("int", "-1", "ffffffff", NULL, "-1");
	check("int", "2147483647", "7fffffff", NULL, "2147483647");
	check("int", "-2147483648", "80000000", NULL, "-2147483648");
	check("int", "+7", "00000007", "7", "7");
	check("tinyint", "127", "7f", NULL, "127");
	check("tinyint", "-128", "80", NULL, "-128");
	check("smallint", "-2", "fffe", NULL, "-2");
	check("smallint", "32767", "7fff", NULL, "32767");
	check("bigint", "-9223372036854775808", "8000000000000000", NULL, "-9223372036854775808");
	check("bigint", "9223372036854775807", "7fffffffffffffff", NULL, "9223372036854775807");
	check("counter", "5", "0000000000000005", NULL, "5");
	parses_to("int", CQL_FORMAT_JSON, "\"12\"", "0000000c");
	parses_to("bigint", CQL_FORMAT_JSON, " -3 ", "fffffffffffffffd");
	rejects("tinyint", CQL_FORMAT_JSON, "300");
	rejects("tinyint", CQL_FORMAT_LITERAL, "128");
	rejects("tinyint", CQL_FORMAT_LITERAL, "-129");
	rejects("smallint", CQL_FORMAT_JSON, "32768");
	rejects("int", CQL_FORMAT_JSON, "\"abc\"");
	rejects("int", CQL_FORMAT_JSON, "abc");
	rejects("int", CQL_FORMAT_JSON, "1.5");
	rejects("int", CQL_FORMAT_JSON, "1e3");
	rejects("int", CQL_FORMAT_JSON, "true");
	rejects("int", CQL_FORMAT_JSON, "01");
	rejects("int", CQL_FORMAT_JSON, "2147483648");
	rejects("int", CQL_FORMAT_LITERAL, "'12'");
	rejects("int", CQL_FORMAT_LITERAL, "1 2");
	rejects("int", CQL_FORMAT_LITERAL, "");
	rejects("int", CQL_FORMAT_LITERAL, "-");
	rejects("bigint", CQL_FORMAT_LITERAL, "9223372036854775808");
	rejects("bigint", CQL_FORMAT_LITERAL, "-9223372036854775809");
	formats("int", CQL_FORMAT_LITERAL, "000000", NULL, CQL_ERR_TYPE);
	formats("int", CQL_FORMAT_LITERAL, "0000000000", NULL, CQL_ERR_TYPE);
	formats("bigint", CQL_FORMAT_LITERAL, "00000000000001", NULL, CQL_ERR_TYPE);
	formats("int", CQL_FORMAT_LITERAL, "", "null", CQL_OK);	/* "empty" int */
	{
		int32_t		v;
		int64_t		l;
		int16_t		sv;
		int8_t		tv;
		uint8_t		b8[8] = {0x80, 0, 0, 0, 0, 0, 0, 0};

		ok(cql_decode_int(b8, 4, &v) == CQL_OK && v == INT32_MIN, "decode int min");
		ok(cql_decode_bigint(b8, 8, &l) == CQL_OK && l == INT64_MIN, "decode bigint min");
		ok(cql_decode_smallint(b8, 2, &sv) == CQL_OK && sv == INT16_MIN, "decode smallint min");
		ok(cql_decode_tinyint(b8, 1, &tv) == CQL_OK && tv == INT8_MIN, "decode tinyint min");
		ok(cql_decode_int(b8, 0, &v) == CQL_ERR_TYPE, "decode int of 0 bytes refused");
		ok(cql_decode_bigint(b8, -1, &l) == CQL_ERR_TYPE, "decode bigint of null refused");
		ok(cql_decode_tinyint(b8, 2, &tv) == CQL_ERR_TYPE, "decode tinyint of 2 bytes refused");
	}
}

static void
test_varint_decimal(void)
{
	static const struct
	{
		const char *dec;
		const char *hex;
	}			vi[] = {
		{"0", "00"}, {"1", "01"}, {"127", "7f"}, {"128", "0080"}, {"129", "0081"},
		{"-1", "ff"}, {"-128", "80"}, {"-129", "ff7f"}, {"12345", "3039"},
		{"255", "00ff"}, {"256", "0100"}, {"-256", "ff00"}, {"-32768", "8000"},
		{"9223372036854775808", "008000000000000000"},
		{"-9223372036854775809", "ff7fffffffffffffff"},
		{"1234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890",
		"0241fc1742fe8d29593a6afe52b31741cfe5a7f8e67e477381be47851641ef7bf14baccff196ce3f0ad2"},
		{"-1234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890",
		"fdbe03e8bd0172d6a6c59501ad4ce8be301a58071981b88c7e41b87ae9be10840eb453300e6931c0f52e"},
		{NULL, NULL}
	};

	for (int i = 0; vi[i].dec; i++)
		check("varint", vi[i].dec, vi[i].hex, NULL, vi[i].dec);
	parses_to("varint", CQL_FORMAT_LITERAL, "-0", "00");
	parses_to("varint", CQL_FORMAT_LITERAL, "000123", "7b");
	parses_to("varint", CQL_FORMAT_JSON, "\"-129\"", "ff7f");
	rejects("varint", CQL_FORMAT_LITERAL, "1.5");
	rejects("varint", CQL_FORMAT_LITERAL, "12a");
	rejects("varint", CQL_FORMAT_JSON, "\"\"");
	/* non-minimal encodings still decode */
	formats("varint", CQL_FORMAT_LITERAL, "000001", "1", CQL_OK);
	formats("varint", CQL_FORMAT_LITERAL, "ffff80", "-128", CQL_OK);
	formats("varint", CQL_FORMAT_LITERAL, "", "null", CQL_OK);
	{
		cql_buf		b;

		cql_buf_init(&b, A);
		cql_encode_varint_i64(&b, INT64_MIN);
		is_mem(D(b), b.len, "\x80\0\0\0\0\0\0\0", 8, "varint_i64(INT64_MIN)");
		cql_buf_reset(&b);
		cql_encode_varint_i64(&b, 128);
		is_mem(D(b), b.len, "\x00\x80", 2, "varint_i64(128)");
		cql_buf_reset(&b);
		cql_encode_varint_i64(&b, -129);
		is_mem(D(b), b.len, "\xff\x7f", 2, "varint_i64(-129)");
		cql_buf_free(&b);
	}
	/* every power of two and its negation round-trips through text */
	{
		int			bad = 0;
		cql_type   *t = T("varint");

		for (int k = 0; k < 400; k++)
		{
			/* 2^k as minimal two's complement */
			uint8_t		v[64];
			int			nb = k / 8 + 1;

			memset(v, 0, sizeof(v));
			v[nb - 1 - k / 8] = (uint8_t) (1 << (k % 8));
			if (v[0] & 0x80)
			{
				memmove(v + 1, v, (size_t) nb);
				v[0] = 0;
				nb++;
			}
			if (!roundtrip_bytes(t, v, nb))
				bad++;
		}
		is_int(bad, 0, "2^k varints round-trip for k < 400");
		bad = 0;
		for (int k = 0; k < 300; k++)
		{
			uint8_t		v[48];
			int			nb = (int) (rnd() % 40) + 1;

			for (int i = 0; i < nb; i++)
				v[i] = (uint8_t) rnd();
			/* make minimal: drop redundant sign bytes */
			while (nb > 1 && ((v[0] == 0 && !(v[1] & 0x80)) || (v[0] == 0xff && (v[1] & 0x80))))
			{
				memmove(v, v + 1, (size_t) nb - 1);
				nb--;
			}
			if (!roundtrip_bytes(t, v, nb))
				bad++;
		}
		is_int(bad, 0, "random varints round-trip");
		cql_type_free(t, A);
	}
	/* huge varint is refused, not computed */
	{
		uint8_t    *big = calloc(1, CQL_MAX_VARINT_BYTES + 1);
		cql_buf		b;

		big[0] = 1;
		cql_buf_init(&b, A);
		ok(cql_varint_to_string(big, CQL_MAX_VARINT_BYTES + 1, &b) == CQL_ERR_TOO_LARGE,
		   "varint over CQL_MAX_VARINT_BYTES is TOO_LARGE");
		cql_buf_reset(&b);
		ok(cql_varint_to_string(big, CQL_MAX_VARINT_BYTES, &b) == CQL_OK && b.len > 39000,
		   "varint of CQL_MAX_VARINT_BYTES converts (%zu digits)", b.len);
		cql_buf_free(&b);
		free(big);
	}

	check("decimal", "123.45", "00000002 3039", NULL, "123.45");
	check("decimal", "-1.5", "00000001 f1", NULL, "-1.5");
	check("decimal", "1.50", "00000002 0096", NULL, "1.50");
	check("decimal", "0.001", "00000003 01", NULL, "0.001");
	check("decimal", "-0.001", "00000003 ff", NULL, "-0.001");
	check("decimal", "0", "00000000 00", NULL, "0");
	check("decimal", "123E+2", "fffffffe 7b", NULL, "123E+2");
	check("decimal", "1E+10", "fffffff6 01", NULL, "1E+10");
	check("decimal", "-5E+3", "fffffffd fb", NULL, "-5E+3");
	check("decimal", "12345678901234567890.123456789", "00000009 27e41b3246bec9b16e398115", NULL,
		  "12345678901234567890.123456789");
	parses_to("decimal", CQL_FORMAT_LITERAL, "1.5e3", "fffffffe 0f");
	parses_to("decimal", CQL_FORMAT_LITERAL, "1.5E-3", "00000004 0f");
	parses_to("decimal", CQL_FORMAT_LITERAL, "-.5", "00000001 fb");
	parses_to("decimal", CQL_FORMAT_JSON, "2", "00000000 02");
	parses_to("decimal", CQL_FORMAT_JSON, "\"2.50\"", "00000002 00fa");
	formats("decimal", CQL_FORMAT_LITERAL, "7fffffff 01", "1E-2147483647", CQL_OK);
	formats("decimal", CQL_FORMAT_LITERAL, "80000000 01", "1E+2147483648", CQL_OK);
	formats("decimal", CQL_FORMAT_LITERAL, "00000005 01", "0.00001", CQL_OK);
	formats("decimal", CQL_FORMAT_LITERAL, "00000002", NULL, CQL_ERR_TYPE);
	formats("decimal", CQL_FORMAT_LITERAL, "000002", NULL, CQL_ERR_TYPE);
	parses_to("decimal", CQL_FORMAT_LITERAL, "1E-2147483647", "7fffffff 01");
	parses_to("decimal", CQL_FORMAT_LITERAL, "1E+2147483648", "80000000 01");
	rejects("decimal", CQL_FORMAT_LITERAL, "1E+2147483649");
	rejects("decimal", CQL_FORMAT_LITERAL, "1E-2147483648");
	rejects("decimal", CQL_FORMAT_LITERAL, "NaN");
	rejects("decimal", CQL_FORMAT_LITERAL, "1.2.3");
	rejects("decimal", CQL_FORMAT_LITERAL, "1e");
	rejects("decimal", CQL_FORMAT_LITERAL, ".");
	rejects("decimal", CQL_FORMAT_JSON, "\"abc\"");
	rejects("decimal", CQL_FORMAT_JSON, ".5");
}

static void
test_floats(void)
{
	check("double", "1.5", "3ff8000000000000", NULL, "1.5");
	check("double", "0.1", "3fb999999999999a", NULL, "0.1");
	check("double", "100.0", "4059000000000000", NULL, "100.0");
	check("double", "-0.0", "8000000000000000", NULL, "-0.0");
	check("double", "0.0", "0000000000000000", NULL, "0.0");
	check("double", "NaN", "7ff8000000000000", NULL, "\"NaN\"");
	check("double", "Infinity", "7ff0000000000000", NULL, "\"Infinity\"");
	check("double", "-Infinity", "fff0000000000000", NULL, "\"-Infinity\"");
	check("double", "1e+300", "7e37e43c8800759c", NULL, "1e+300");
	check("double", "1e+17", "4376345785d8a000", NULL, "1e+17");
	check("double", "10000000000000000.0", "4341c37937e08000", NULL, "10000000000000000.0");
	check("double", "0.00001", "3ee4f8b588e368f1", NULL, "0.00001");
	check("double", "1e-06", "3eb0c6f7a0b5ed8d", NULL, "1e-06");
	check("double", "5e-324", "0000000000000001", NULL, "5e-324");
	check("double", "1.7976931348623157e+308", "7fefffffffffffff", NULL, "1.7976931348623157e+308");
	check("double", "0.30000000000000004", "3fd3333333333334", NULL, "0.30000000000000004");
	parses_to("double", CQL_FORMAT_LITERAL, "1", "3ff0000000000000");
	parses_to("double", CQL_FORMAT_LITERAL, "nan", "7ff8000000000000");
	parses_to("double", CQL_FORMAT_LITERAL, "-infinity", "fff0000000000000");
	parses_to("double", CQL_FORMAT_JSON, "2", "4000000000000000");
	parses_to("double", CQL_FORMAT_JSON, "\"2.5\"", "4004000000000000");
	parses_to("double", CQL_FORMAT_JSON, "-1E2", "c059000000000000");
	rejects("double", CQL_FORMAT_LITERAL, "'1.5'");
	rejects("double", CQL_FORMAT_LITERAL, "1e999");
	rejects("double", CQL_FORMAT_LITERAL, "abc");
	rejects("double", CQL_FORMAT_LITERAL, "-NaN");
	rejects("double", CQL_FORMAT_JSON, "NaN");
	rejects("double", CQL_FORMAT_JSON, "true");
	rejects("double", CQL_FORMAT_JSON, "\"x\"");
	rejects("double", CQL_FORMAT_JSON, "1.");

	check("float", "1.5", "3fc00000", NULL, "1.5");
	check("float", "0.1", "3dcccccd", NULL, "0.1");
	check("float", "3.4028235e+38", "7f7fffff", NULL, "3.4028235e+38");
	check("float", "1e-45", "00000001", NULL, "1e-45");
	check("float", "-0.0", "80000000", NULL, "-0.0");
	check("float", "NaN", "7fc00000", NULL, "\"NaN\"");
	check("float", "-Infinity", "ff800000", NULL, "\"-Infinity\"");
	check("float", "16777216.0", "4b800000", NULL, "16777216.0");
	rejects("float", CQL_FORMAT_LITERAL, "1e39");
	rejects("float", CQL_FORMAT_JSON, "3.5e38");
	formats("float", CQL_FORMAT_LITERAL, "7fc00001", "NaN", CQL_OK);
	formats("double", CQL_FORMAT_LITERAL, "000000", NULL, CQL_ERR_TYPE);

	/* random bit patterns round-trip bit-exactly (NaNs excluded) */
	{
		cql_type   *td = T("double"),
				   *tf = T("float");
		int			badd = 0,
					badf = 0;

		for (int i = 0; i < 3000; i++)
		{
			uint64_t	bits = rnd();
			uint32_t	fb = (uint32_t) rnd();
			uint8_t		v[8];
			double		d;
			float		f;

			memcpy(&d, &bits, 8);
			memcpy(&f, &fb, 4);
			if (!isnan(d))
			{
				for (int k = 0; k < 8; k++)
					v[k] = (uint8_t) (bits >> (56 - 8 * k));
				if (!roundtrip_bytes(td, v, 8))
					badd++;
			}
			if (!isnan(f))
			{
				for (int k = 0; k < 4; k++)
					v[k] = (uint8_t) (fb >> (24 - 8 * k));
				if (!roundtrip_bytes(tf, v, 4))
					badf++;
			}
		}
		is_int(badd, 0, "3000 random doubles round-trip bit-exactly");
		is_int(badf, 0, "3000 random floats round-trip bit-exactly");
		cql_type_free(td, A);
		cql_type_free(tf, A);
	}
}

static void
test_text_blob_bool(void)
{
	check("text", "'hello'", "68656c6c6f", NULL, "\"hello\"");
	check("text", "'it''s'", "69742773", NULL, "\"it's\"");
	check("text", "''", "", NULL, "\"\"");
	check("text", "'caf\xc3\xa9 \xf0\x9f\x98\x80'", "636166c3a920f09f9880", NULL,
		  "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
	check("text", "'a\"b\\c\nd\te\x01'", "6122625c630a640965 01", NULL,
		  "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
	check("varchar", "'x'", "78", NULL, "\"x\"");
	check("ascii", "'abc'", "616263", NULL, "\"abc\"");
	parses_to("text", CQL_FORMAT_LITERAL, "$$it's$$", "69742773");
	parses_to("text", CQL_FORMAT_JSON, "\"\\u00e9\\ud83d\\ude00\\/\"", "c3a9f09f98802f");
	parses_to("text", CQL_FORMAT_LITERAL, "  'x'  ", "78");
	rejects("text", CQL_FORMAT_LITERAL, "hello");
	rejects("text", CQL_FORMAT_LITERAL, "'unterminated");
	rejects("text", CQL_FORMAT_LITERAL, "'a' 'b'");
	rejects("text", CQL_FORMAT_LITERAL, "'\xff'");
	rejects("text", CQL_FORMAT_LITERAL, "'\xc0\x80'");
	rejects("text", CQL_FORMAT_LITERAL, "'\xed\xa0\x80'");
	rejects("text", CQL_FORMAT_JSON, "\"\\ud800\"");
	rejects("text", CQL_FORMAT_JSON, "\"\\udc00\"");
	rejects("text", CQL_FORMAT_JSON, "\"\\x\"");
	rejects("text", CQL_FORMAT_JSON, "\"a\nb\"");
	rejects("text", CQL_FORMAT_JSON, "\"abc");
	rejects("text", CQL_FORMAT_JSON, "'abc'");
	rejects("text", CQL_FORMAT_JSON, "12");
	rejects("ascii", CQL_FORMAT_LITERAL, "'caf\xc3\xa9'");
	formats("text", CQL_FORMAT_LITERAL, "ff", NULL, CQL_ERR_TYPE);
	formats("ascii", CQL_FORMAT_JSON, "80", NULL, CQL_ERR_TYPE);

	check("blob", "0xcafe", "cafe", NULL, "\"0xcafe\"");
	check("blob", "0x", "", NULL, "\"0x\"");
	check("blob", "0x00ff10", "00ff10", NULL, "\"0x00ff10\"");
	parses_to("blob", CQL_FORMAT_LITERAL, "0XCAFE", "cafe");
	rejects("blob", CQL_FORMAT_LITERAL, "0xabc");
	rejects("blob", CQL_FORMAT_LITERAL, "0xzz");
	rejects("blob", CQL_FORMAT_LITERAL, "'0xab'");
	rejects("blob", CQL_FORMAT_LITERAL, "cafe");
	rejects("blob", CQL_FORMAT_JSON, "\"cafe\"");
	rejects("blob", CQL_FORMAT_JSON, "0xcafe");

	check("boolean", "true", "01", NULL, "true");
	check("boolean", "false", "00", NULL, "false");
	parses_to("boolean", CQL_FORMAT_LITERAL, "TRUE", "01");
	parses_to("boolean", CQL_FORMAT_JSON, "\"false\"", "00");
	formats("boolean", CQL_FORMAT_LITERAL, "02", "true", CQL_OK);
	formats("boolean", CQL_FORMAT_LITERAL, "0101", NULL, CQL_ERR_TYPE);
	rejects("boolean", CQL_FORMAT_LITERAL, "1");
	rejects("boolean", CQL_FORMAT_LITERAL, "'true'");
	rejects("boolean", CQL_FORMAT_JSON, "1");
	rejects("boolean", CQL_FORMAT_JSON, "\"yes\"");
	rejects("boolean", CQL_FORMAT_JSON, "True");
}

static void
test_uuid_inet(void)
{
	check("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000",
		  NULL, "\"123e4567-e89b-12d3-a456-426614174000\"");
	check("timeuuid", "c9a8e7f0-8c1d-11ee-b9d1-0242ac120002", "c9a8e7f08c1d11eeb9d10242ac120002",
		  NULL, "\"c9a8e7f0-8c1d-11ee-b9d1-0242ac120002\"");
	parses_to("uuid", CQL_FORMAT_LITERAL, "123E4567-E89B-12D3-A456-426614174000",
			  "123e4567e89b12d3a456426614174000");
	rejects("timeuuid", CQL_FORMAT_LITERAL, "123e4567-e89b-42d3-a456-426614174000");
	rejects("uuid", CQL_FORMAT_LITERAL, "123e4567-e89b-12d3-a456-42661417400");
	rejects("uuid", CQL_FORMAT_LITERAL, "123e4567e89b-12d3-a456-4266141740000");
	rejects("uuid", CQL_FORMAT_LITERAL, "'123e4567-e89b-12d3-a456-426614174000'");
	rejects("uuid", CQL_FORMAT_JSON, "123");
	rejects("uuid", CQL_FORMAT_JSON, "\"123e4567-e89b-12d3-a456-42661417400g\"");
	formats("uuid", CQL_FORMAT_LITERAL, "00112233445566778899aabbccddee", NULL, CQL_ERR_TYPE);

	check("inet", "'192.168.1.10'", "c0a8010a", NULL, "\"192.168.1.10\"");
	check("inet", "'::1'", "00000000000000000000000000000001", NULL, "\"::1\"");
	check("inet", "'2001:db8::ff00:42:8329'", "20010db8000000000000ff0000428329", NULL,
		  "\"2001:db8::ff00:42:8329\"");
	parses_to("inet", CQL_FORMAT_LITERAL, "'2001:0DB8:0000:0000:0000:ff00:0042:8329'",
			  "20010db8000000000000ff0000428329");
	rejects("inet", CQL_FORMAT_LITERAL, "'256.1.1.1'");
	rejects("inet", CQL_FORMAT_LITERAL, "'1.2.3'");
	rejects("inet", CQL_FORMAT_LITERAL, "'example.com'");
	rejects("inet", CQL_FORMAT_LITERAL, "192.168.1.1");
	rejects("inet", CQL_FORMAT_JSON, "\"\"");
	formats("inet", CQL_FORMAT_LITERAL, "c0a80101ff", NULL, CQL_ERR_TYPE);
}

static void
test_datetime(void)
{
	check("date", "'2024-01-01'", "80004d0b", NULL, "\"2024-01-01\"");
	check("date", "'1969-12-31'", "7fffffff", NULL, "\"1969-12-31\"");
	check("date", "'1970-01-01'", "80000000", NULL, "\"1970-01-01\"");
	check("date", "'1900-02-28'", "7fff9c5b", NULL, "\"1900-02-28\"");
	check("date", "'2000-02-29'", "80002b08", NULL, "\"2000-02-29\"");
	check("date", "'0000-01-01'", "7ff50558", NULL, "\"0000-01-01\"");
	check("date", "'9999-12-31'", "802cc0a0", NULL, "\"9999-12-31\"");
	/* outside 0000..9999: the raw wire value, as Cassandra does */
	check("date", "'0'", "00000000", NULL, "\"0\"");
	check("date", "'4294967295'", "ffffffff", NULL, "\"4294967295\"");
	parses_to("date", CQL_FORMAT_LITERAL, "'2147483648'", "80000000");
	parses_to("date", CQL_FORMAT_LITERAL, "'-0001-12-31'", "7ff50557");
	rejects("date", CQL_FORMAT_LITERAL, "'2023-02-29'");
	rejects("date", CQL_FORMAT_LITERAL, "'2024-13-01'");
	rejects("date", CQL_FORMAT_LITERAL, "'2024-1-01'");
	rejects("date", CQL_FORMAT_LITERAL, "'2024-01-01x'");
	rejects("date", CQL_FORMAT_LITERAL, "'4294967296'");
	rejects("date", CQL_FORMAT_LITERAL, "'99999999-01-01'");
	rejects("date", CQL_FORMAT_LITERAL, "2024-01-01");
	rejects("date", CQL_FORMAT_JSON, "19723");
	{
		int64_t		d;
		uint8_t		b[4] = {0x80, 0x00, 0x4d, 0x0b};

		ok(cql_decode_date(b, 4, &d) == CQL_OK && d == 19723, "decode date 2024-01-01 = 19723");
		ok(cql_decode_date(b, 3, &d) == CQL_ERR_TYPE, "decode date of 3 bytes refused");
	}

	check("time", "'12:34:56.789000000'", "000029327b048f40", NULL, "\"12:34:56.789000000\"");
	check("time", "'00:00:00.000000000'", "0000000000000000", NULL, "\"00:00:00.000000000\"");
	check("time", "'23:59:59.999999999'", "00004e94914effff", NULL, "\"23:59:59.999999999\"");
	parses_to("time", CQL_FORMAT_LITERAL, "'12:34:56.789'", "000029327b048f40");
	parses_to("time", CQL_FORMAT_LITERAL, "'12:34'", "0000292542213000");
	parses_to("time", CQL_FORMAT_LITERAL, "45296789000000", "000029327b048f40");
	parses_to("time", CQL_FORMAT_JSON, "45296789000000", "000029327b048f40");
	rejects("time", CQL_FORMAT_LITERAL, "'24:00:00'");
	rejects("time", CQL_FORMAT_LITERAL, "'12:60:00'");
	rejects("time", CQL_FORMAT_LITERAL, "'12:00:00.1234567890'");
	rejects("time", CQL_FORMAT_LITERAL, "86400000000000");
	rejects("time", CQL_FORMAT_LITERAL, "-1");
	formats("time", CQL_FORMAT_LITERAL, "00004e94914f0000", NULL, CQL_ERR_TYPE);
	formats("time", CQL_FORMAT_LITERAL, "ffffffffffffffff", NULL, CQL_ERR_TYPE);

	check("timestamp", "'2024-01-01 00:00:00.000Z'", "0000018cc251f400", NULL,
		  "\"2024-01-01 00:00:00.000Z\"");
	check("timestamp", "'1969-12-31 23:59:59.999Z'", "ffffffffffffffff", NULL,
		  "\"1969-12-31 23:59:59.999Z\"");
	check("timestamp", "'1970-01-01 00:00:00.000Z'", "0000000000000000", NULL,
		  "\"1970-01-01 00:00:00.000Z\"");
	check("timestamp", "'1900-01-01 12:00:00.500Z'", "fffffdfdb0950bf4", NULL,
		  "\"1900-01-01 12:00:00.500Z\"");
	/* beyond year 9999: milliseconds as a string */
	check("timestamp", "'9223372036854775807'", "7fffffffffffffff", NULL, "\"9223372036854775807\"");
	check("timestamp", "'-9223372036854775808'", "8000000000000000", NULL, "\"-9223372036854775808\"");
	parses_to("timestamp", CQL_FORMAT_LITERAL, "'2024-01-01T00:00:00Z'", "0000018cc251f400");
	parses_to("timestamp", CQL_FORMAT_LITERAL, "'2024-01-01'", "0000018cc251f400");
	parses_to("timestamp", CQL_FORMAT_LITERAL, "'2024-01-01 01:00:00+01:00'", "0000018cc251f400");
	parses_to("timestamp", CQL_FORMAT_LITERAL, "'2023-12-31 19:00-0500'", "0000018cc251f400");
	parses_to("timestamp", CQL_FORMAT_LITERAL, "'2024-01-01 00:00:00.000 +0000'", "0000018cc251f400");
	parses_to("timestamp", CQL_FORMAT_LITERAL, "1704067200000", "0000018cc251f400");
	parses_to("timestamp", CQL_FORMAT_JSON, "1704067200000", "0000018cc251f400");
	parses_to("timestamp", CQL_FORMAT_JSON, "\"2024-01-01T00:00:00.000000Z\"", "0000018cc251f400");
	rejects("timestamp", CQL_FORMAT_LITERAL, "'2024-01-01 00:00:00.0001Z'");
	rejects("timestamp", CQL_FORMAT_LITERAL, "'2024-01-01 25:00'");
	rejects("timestamp", CQL_FORMAT_LITERAL, "'2024-01-01 00:00 PST'");
	rejects("timestamp", CQL_FORMAT_LITERAL, "'yesterday'");
	rejects("timestamp", CQL_FORMAT_LITERAL, "'999999999-01-01'");
	rejects("timestamp", CQL_FORMAT_JSON, "1.5");
	rejects("timestamp", CQL_FORMAT_JSON, "\"2024-01-01Z0\"");

	check("duration", "1mo2d3ns", "020406", NULL, "\"1mo2d3ns\"");
	check("duration", "-1mo", "010000", NULL, "\"-1mo\"");
	check("duration", "1h", "0000fc068c61714000", NULL, "\"1h\"");
	check("duration", "0s", "000000", NULL, "\"0s\"");
	check("duration", "1y2mo25d5h6m7s8ms9us10ns", "1c 32 fc2168cdf9d664", NULL,
		  "\"1y2mo25d5h6m7s8ms9us10ns\"");
	parses_to("duration", CQL_FORMAT_LITERAL, "1y2mo3w4d5h6m7s8ms9us10ns", "1c 32 fc2168cdf9d664");
	parses_to("duration", CQL_FORMAT_LITERAL, "'1h'", "0000fc068c61714000");
	parses_to("duration", CQL_FORMAT_LITERAL, "60m", "0000fc068c61714000");
	parses_to("duration", CQL_FORMAT_LITERAL, "1H", "0000fc068c61714000");
	parses_to("duration", CQL_FORMAT_LITERAL, "3600000000\xc2\xb5s", "0000fc068c61714000");
	parses_to("duration", CQL_FORMAT_LITERAL, "PT1H", "0000fc068c61714000");
	parses_to("duration", CQL_FORMAT_LITERAL, "P1Y2M", "1c0000");
	parses_to("duration", CQL_FORMAT_LITERAL, "P2W", "001c00");
	parses_to("duration", CQL_FORMAT_LITERAL, "-P1D", "000100");
	parses_to("duration", CQL_FORMAT_JSON, "\"-2d\"", "000300");
	rejects("duration", CQL_FORMAT_LITERAL, "1x");
	rejects("duration", CQL_FORMAT_LITERAL, "h");
	rejects("duration", CQL_FORMAT_LITERAL, "1h-2m");
	rejects("duration", CQL_FORMAT_LITERAL, "P");
	rejects("duration", CQL_FORMAT_LITERAL, "PT");
	rejects("duration", CQL_FORMAT_LITERAL, "P1H");
	rejects("duration", CQL_FORMAT_LITERAL, "PT1D");
	rejects("duration", CQL_FORMAT_LITERAL, "P1D1Y");
	rejects("duration", CQL_FORMAT_LITERAL, "2147483648mo");
	rejects("duration", CQL_FORMAT_LITERAL, "178956971y");
	rejects("duration", CQL_FORMAT_LITERAL, "9223372036854775808ns");
	rejects("duration", CQL_FORMAT_LITERAL, "99999999999999999999ns");
	rejects("duration", CQL_FORMAT_JSON, "1");
	/* like Cassandra, magnitudes are limited to INT32_MAX/INT64_MAX both ways */
	rejects("duration", CQL_FORMAT_LITERAL, "-2147483648mo");
	rejects("duration", CQL_FORMAT_LITERAL, "-9223372036854775808ns");
	parses_to("duration", CQL_FORMAT_LITERAL, "-2147483647mo", "f0fffffffd 00 00");
	parses_to("duration", CQL_FORMAT_LITERAL, "-9223372036854775807ns", "00 00 fffffffffffffffffd");
	formats("duration", CQL_FORMAT_LITERAL, "f0ffffffff0000", "-178956970y8mo", CQL_OK);
	formats("duration", CQL_FORMAT_LITERAL, "0000ffffffffffffffffff", "-2562047h47m16s854ms775us808ns", CQL_OK);
	/* mixed signs, bad vints, months beyond int32: refused */
	formats("duration", CQL_FORMAT_LITERAL, "020300", NULL, CQL_ERR_TYPE);
	formats("duration", CQL_FORMAT_LITERAL, "0204", NULL, CQL_ERR_TYPE);
	formats("duration", CQL_FORMAT_LITERAL, "02040600", NULL, CQL_ERR_TYPE);
	formats("duration", CQL_FORMAT_LITERAL, "f1000000000000", NULL, CQL_ERR_TYPE);
	formats("duration", CQL_FORMAT_LITERAL, "ff", NULL, CQL_ERR_TYPE);
	{
		cql_duration d = {1, -1, 0};
		cql_buf		b;

		cql_buf_init(&b, A);
		ok(cql_encode_duration(&b, &d) == CQL_ERR_TYPE && b.len == 0, "encode mixed-sign duration refused");
		cql_buf_free(&b);
	}

	/* random timestamps, dates, times round-trip */
	{
		cql_type   *ts = T("timestamp"),
				   *dt = T("date"),
				   *tm = T("time"),
				   *du = T("duration");
		int			bad = 0;

		for (int i = 0; i < 2000; i++)
		{
			uint8_t		v[32];
			uint64_t	r = rnd();
			int64_t		ms = (int64_t) (r % UINT64_C(400000000000000)) - INT64_C(200000000000000);
			cql_buf		b;
			cql_duration d;

			if (i % 10 == 0)
				ms = (int64_t) r;	/* any value, mostly outside 0000..9999 */
			for (int k = 0; k < 8; k++)
				v[k] = (uint8_t) ((uint64_t) ms >> (56 - 8 * k));
			if (!roundtrip_bytes(ts, v, 8))
				bad++;
			for (int k = 0; k < 4; k++)
				v[k] = (uint8_t) (r >> (24 - 8 * k));
			if (!roundtrip_bytes(dt, v, 4))
				bad++;
			ms = (int64_t) (r % UINT64_C(86400000000000));
			for (int k = 0; k < 8; k++)
				v[k] = (uint8_t) ((uint64_t) ms >> (56 - 8 * k));
			if (!roundtrip_bytes(tm, v, 8))
				bad++;
			d.months = (int32_t) (rnd() % 3000);
			d.days = (int32_t) (rnd() % 100000);
			d.nanoseconds = (int64_t) (rnd() >> 2);
			if (i % 2)
			{
				d.months = -d.months;
				d.days = -d.days;
				d.nanoseconds = -d.nanoseconds;
			}
			cql_buf_init(&b, A);
			cql_encode_duration(&b, &d);
			if (!roundtrip_bytes(du, b.data, (int32_t) b.len))
				bad++;
			cql_buf_free(&b);
		}
		is_int(bad, 0, "random timestamps/dates/times/durations round-trip");
		cql_type_free(ts, A);
		cql_type_free(dt, A);
		cql_type_free(tm, A);
		cql_type_free(du, A);
	}
}

static void
test_collections(void)
{
	check("list<int>", "[1, 2]", "00000002 00000004 00000001 00000004 00000002", NULL, "[1, 2]");
	check("list<int>", "[]", "00000000", NULL, "[]");
	check("set<text>", "{'a', 'b'}", "00000002 00000001 61 00000001 62", NULL, "[\"a\", \"b\"]");
	check("set<int>", "{}", "00000000", NULL, "[]");
	check("map<text, int>", "{'a': 1}", "00000001 00000001 61 00000004 00000001", NULL, "{\"a\": 1}");
	check("map<text, int>", "{}", "00000000", NULL, "{}");
	check("map<int, text>", "{1: 'a', 2: 'b'}",
		  "00000002 00000004 00000001 00000001 61 00000004 00000002 00000001 62", NULL,
		  "[[1, \"a\"], [2, \"b\"]]");
	check("map<int, text>", "{}", "00000000", NULL, "[]");
	check("map<text, frozen<list<int>>>", "{'k': [7]}",
		  "00000001 00000001 6b 0000000c 00000001 00000004 00000007", NULL, "{\"k\": [7]}");
	check("list<frozen<map<int, boolean>>>", "[{1: true}, {}]",
		  "00000002 00000011 00000001 00000004 00000001 00000001 01 00000004 00000000", NULL,
		  "[[[1, true]], []]");
	check("list<frozen<set<uuid>>>", "[{123e4567-e89b-12d3-a456-426614174000}]",
		  "00000001 00000018 00000001 00000010 123e4567e89b12d3a456426614174000", NULL,
		  "[[\"123e4567-e89b-12d3-a456-426614174000\"]]");
	check("map<timestamp, duration>", "{'2024-01-01 00:00:00.000Z': 1h}",
		  "00000001 00000008 0000018cc251f400 00000009 0000fc068c61714000", NULL,
		  "[[\"2024-01-01 00:00:00.000Z\", \"1h\"]]");
	/* JSON alternatives */
	parses_to("map<int, text>", CQL_FORMAT_JSON, "{\"1\": \"a\"}",
			  "00000001 00000004 00000001 00000001 61");
	parses_to("map<text, int>", CQL_FORMAT_JSON, "[[\"a\", 1]]",
			  "00000001 00000001 61 00000004 00000001");
	parses_to("list<int>", CQL_FORMAT_JSON, " [ 1 , 2 ] ",
			  "00000002 00000004 00000001 00000004 00000002");
	parses_to("map<text, int>", CQL_FORMAT_JSON, "{\"a\\\"b\": 1}",
			  "00000001 00000003 612262 00000004 00000001");
	/* nulls inside collections are refused, as Cassandra does */
	rejects("list<int>", CQL_FORMAT_JSON, "[1, null]");
	rejects("list<int>", CQL_FORMAT_LITERAL, "[1, null]");
	rejects("set<int>", CQL_FORMAT_JSON, "[null]");
	rejects("map<text, int>", CQL_FORMAT_JSON, "{\"a\": null}");
	rejects("map<int, int>", CQL_FORMAT_LITERAL, "{null: 1}");
	rejects("map<int, int>", CQL_FORMAT_JSON, "[[1]]");
	rejects("map<int, int>", CQL_FORMAT_JSON, "[[1, 2, 3]]");
	rejects("map<int, int>", CQL_FORMAT_JSON, "{\"x\": 1}");
	rejects("list<int>", CQL_FORMAT_JSON, "[1, 2");
	rejects("list<int>", CQL_FORMAT_JSON, "[1 2]");
	rejects("list<int>", CQL_FORMAT_JSON, "[1,]");
	rejects("list<int>", CQL_FORMAT_JSON, "[1] x");
	rejects("list<int>", CQL_FORMAT_JSON, "{1}");
	rejects("list<int>", CQL_FORMAT_JSON, "[\"a\"]");
	rejects("set<int>", CQL_FORMAT_LITERAL, "[1]");
	rejects("map<text, int>", CQL_FORMAT_LITERAL, "{'a', 1}");
	rejects("map<text, int>", CQL_FORMAT_JSON, "{a: 1}");
	rejects("list<tinyint>", CQL_FORMAT_JSON, "[1, 300]");
	{
		cql_type   *t = T("list<int>");
		cql_buf		b;
		bool		isnull = false;

		ok(prs(t, "null", CQL_FORMAT_JSON, &b, &isnull) == CQL_OK && isnull && b.len == 0,
		   "JSON null is a null value");
		cql_buf_free(&b);
		ok(prs(t, "NULL", CQL_FORMAT_LITERAL, &b, &isnull) == CQL_OK && isnull && b.len == 0,
		   "literal NULL is a null value");
		cql_buf_free(&b);
		ok(fmt(t, NULL, -1, CQL_FORMAT_LITERAL) == CQL_OK && strcmp(fmtbuf, "null") == 0,
		   "null formats as null");
		cql_type_free(t, A);
	}

	/* hostile collection bytes */
	formats("list<int>", CQL_FORMAT_LITERAL, "ffffffff", NULL, CQL_ERR_MALFORMED);
	formats("list<int>", CQL_FORMAT_LITERAL, "7fffffff 00000004 00000001", NULL, CQL_ERR_MALFORMED);
	formats("list<int>", CQL_FORMAT_LITERAL, "00000001 00000008 00000001", NULL, CQL_ERR_MALFORMED);
	formats("list<int>", CQL_FORMAT_LITERAL, "00000001 00000004 00000001 00", NULL, CQL_ERR_MALFORMED);
	formats("list<int>", CQL_FORMAT_LITERAL, "000000", NULL, CQL_ERR_MALFORMED);
	formats("list<int>", CQL_FORMAT_LITERAL, "00000001 00000003 000001", NULL, CQL_ERR_TYPE);
	formats("map<int, int>", CQL_FORMAT_LITERAL, "00000001 00000004 00000001", NULL, CQL_ERR_MALFORMED);
	formats("map<int, int>", CQL_FORMAT_LITERAL, "40000000 00000004 00000001 00000004 00000001", NULL,
			CQL_ERR_MALFORMED);
	formats("list<int>", CQL_FORMAT_LITERAL, "", "[]", CQL_OK);
	formats("list<int>", CQL_FORMAT_LITERAL, "00000001 ffffffff", "[null]", CQL_OK);
	{
		cql_type   *t = T("list<int>");
		uint8_t		b[] = {0, 0, 0, 2, 0, 0, 0, 1, 9, 0, 0, 0, 1, 8};
		cql_elem   *el = NULL;
		int32_t		cnt = -1;

		ok(cql_split_value(t, b, sizeof(b), A, &el, &cnt) == CQL_OK && cnt == 2 &&
		   el[0].n == 1 && el[0].p[0] == 9 && el[1].n == 1 && el[1].p[0] == 8,
		   "split list gives element slices");
		free(el);
		ok(cql_split_value(t, b, 10, A, &el, &cnt) == CQL_ERR_MALFORMED && el == NULL,
		   "split of truncated list fails and allocates nothing");
		cql_type_free(t, A);
	}
}

static void
test_tuple_udt_vector(void)
{
	cql_type   *u = udt_addr();

	check("tuple<int, text>", "(1, 'a')", "00000004 00000001 00000001 61", NULL, "[1, \"a\"]");
	check("tuple<int, text>", "(null, 'a')", "ffffffff 00000001 61", NULL, "[null, \"a\"]");
	check("frozen<tuple<int, tuple<boolean, text>>>", "(1, (true, null))",
		  "00000004 00000001 00000009 00000001 01 ffffffff", NULL, "[1, [true, null]]");
	rejects("tuple<int, text>", CQL_FORMAT_LITERAL, "(1)");
	rejects("tuple<int, text>", CQL_FORMAT_LITERAL, "(1, 'a', 2)");
	rejects("tuple<int, text>", CQL_FORMAT_JSON, "[1]");
	rejects("tuple<int, text>", CQL_FORMAT_JSON, "[1, \"a\", null]");
	rejects("tuple<int, text>", CQL_FORMAT_JSON, "{\"a\": 1}");
	/* trailing missing tuple elements decode as null */
	formats("tuple<int, text>", CQL_FORMAT_LITERAL, "00000004 00000001", "(1, null)", CQL_OK);
	formats("tuple<int, text>", CQL_FORMAT_LITERAL, "00000004 00000001 00000001 61 00", NULL,
			CQL_ERR_MALFORMED);
	formats("tuple<int, text>", CQL_FORMAT_LITERAL, "00000004 000000", NULL, CQL_ERR_MALFORMED);

	check_t(u, "udt", "{street: 'Main', \"Zip\": 5, tags: ['a']}",
			"00000004 4d61696e 00000004 00000005 00000009 00000001 00000001 61",
			NULL, "{\"street\": \"Main\", \"Zip\": 5, \"tags\": [\"a\"]}");
	check_t(u, "udt", "{street: null, \"Zip\": null, tags: null}",
			"ffffffff ffffffff ffffffff", NULL,
			"{\"street\": null, \"Zip\": null, \"tags\": null}");
	/* fields in any order; missing ones null; unquoted names fold */
	{
		cql_buf		b;
		bool		isnull;
		unsigned char want[64];
		size_t		wn = tap_unhex("00000001 78 ffffffff ffffffff", want, sizeof(want));

		ok(prs(u, "{STREET: 'x'}", CQL_FORMAT_LITERAL, &b, &isnull) == CQL_OK, "UDT literal with one field");
		is_mem(D(b), b.len, want, wn, "missing UDT fields are null");
		cql_buf_free(&b);
		wn = tap_unhex("00000001 78 00000004 00000002 ffffffff", want, sizeof(want));
		ok(prs(u, "{\"Zip\": 2, \"street\": \"x\"}", CQL_FORMAT_JSON, &b, &isnull) == CQL_OK,
		   "UDT JSON fields out of order");
		is_mem(D(b), b.len, want, wn, "UDT fields written in declared order");
		cql_buf_free(&b);
	}
	rejects_t(u, "udt", CQL_FORMAT_JSON, "{\"zip\": 2}");
	{
		/* Cassandra's JSON quotes case-sensitive field names */
		cql_buf		b;
		bool		isnull;
		unsigned char want[64];
		size_t		wn = tap_unhex("ffffffff 00000004 00000002 ffffffff", want, sizeof(want));

		ok(prs(u, "{\"\\\"Zip\\\"\": 2}", CQL_FORMAT_JSON, &b, &isnull) == CQL_OK,
		   "UDT JSON accepts Cassandra's quoted field name form");
		is_mem(D(b), b.len, want, wn, "quoted JSON field name maps to the field");
		cql_buf_free(&b);
	}
	rejects_t(u, "udt", CQL_FORMAT_JSON, "{\"\\\"zip\\\"\": 2}");
	rejects_t(u, "udt", CQL_FORMAT_LITERAL, "{zip: 2}");
	rejects_t(u, "udt", CQL_FORMAT_JSON, "{\"nope\": 2}");
	rejects_t(u, "udt", CQL_FORMAT_JSON, "{\"street\": \"a\", \"street\": \"b\"}");
	rejects_t(u, "udt", CQL_FORMAT_JSON, "{\"Zip\": \"x\"}");
	rejects_t(u, "udt", CQL_FORMAT_JSON, "{\"tags\": [null]}");
	rejects_t(u, "udt", CQL_FORMAT_JSON, "[\"a\", 1]");
	rejects_t(u, "udt", CQL_FORMAT_JSON, "{\"street\" \"a\"}");
	/* UDT with trailing missing fields (type grew after the value was written) */
	{
		unsigned char in[64];
		size_t		n = tap_unhex("00000004 4d61696e", in, sizeof(in));

		ok(fmt(u, in, (int32_t) n, CQL_FORMAT_LITERAL) == CQL_OK &&
		   strcmp(fmtbuf, "{street: 'Main', \"Zip\": null, tags: null}") == 0,
		   "UDT trailing missing fields format as null: %s", fmtbuf);
		ok(fmt(u, in, (int32_t) n, CQL_FORMAT_JSON) == CQL_OK &&
		   strcmp(fmtbuf, "{\"street\": \"Main\", \"Zip\": null, \"tags\": null}") == 0,
		   "UDT trailing missing fields as JSON nulls: %s", fmtbuf);
		ok(fmt(u, in, 0, CQL_FORMAT_LITERAL) == CQL_OK &&
		   strcmp(fmtbuf, "{street: null, \"Zip\": null, tags: null}") == 0,
		   "empty UDT value: all fields null");
		n = tap_unhex("00000004 4d61696e 00000004 00000005 0000000d 00000001 00000001 61 ffffffff", in, sizeof(in));
		ok(fmt(u, in, (int32_t) n, CQL_FORMAT_LITERAL) == CQL_ERR_MALFORMED,
		   "UDT value with more fields than the type is malformed");
	}
	/* map with UDT values, list of tuples */
	{
		cql_type   *m = cql_type_new(A, CQL_TYPE_MAP, 2);

		m->sub[0] = T("text");
		m->sub[1] = cql_type_copy(u, A);
		check_t(m, "map<text, addr>", "{'home': {street: 'x', \"Zip\": 1, tags: []}}",
				"00000001 00000004 686f6d65 00000015 00000001 78 00000004 00000001 00000004 00000000",
				NULL, "{\"home\": {\"street\": \"x\", \"Zip\": 1, \"tags\": []}}");
		cql_type_free(m, A);
	}
	check("list<frozen<tuple<int, text>>>", "[(1, 'a'), (2, null)]",
		  "00000002 0000000d 00000004 00000001 00000001 61 0000000c 00000004 00000002 ffffffff",
		  NULL, "[[1, \"a\"], [2, null]]");

	check("vector<float, 3>", "[1.0, 2.0, 3.0]", "3f800000 40000000 40400000", NULL,
		  "[1.0, 2.0, 3.0]");
	check("vector<text, 2>", "['a', 'bc']", "01 61 02 6263", NULL, "[\"a\", \"bc\"]");
	check("vector<bigint, 1>", "[5]", "0000000000000005", NULL, "[5]");
	check("vector<smallint, 2>", "[1, -1]", "02 0001 02 ffff", NULL, "[1, -1]");
	check("vector<vector<int, 2>, 2>", "[[1, 2], [3, 4]]",
		  "00000001 00000002 00000003 00000004", NULL, "[[1, 2], [3, 4]]");
	check("vector<frozen<list<int>>, 2>", "[[1], []]",
		  "0c 00000001 00000004 00000001 04 00000000", NULL, "[[1], []]");
	parses_to("vector<float, 2>", CQL_FORMAT_JSON, "[1, 2.5]", "3f800000 40200000");
	rejects("vector<float, 3>", CQL_FORMAT_LITERAL, "[1.0, 2.0]");
	rejects("vector<float, 3>", CQL_FORMAT_LITERAL, "[1.0, 2.0, 3.0, 4.0]");
	rejects("vector<float, 3>", CQL_FORMAT_JSON, "[1.0, null, 3.0]");
	rejects("vector<float, 3>", CQL_FORMAT_JSON, "[]");
	rejects("vector<float, 2>", CQL_FORMAT_JSON, "[1e39, 1]");
	formats("vector<float, 3>", CQL_FORMAT_LITERAL, "3f800000 40000000", NULL, CQL_ERR_MALFORMED);
	formats("vector<float, 3>", CQL_FORMAT_LITERAL, "3f800000 40000000 40400000 00", NULL, CQL_ERR_MALFORMED);
	formats("vector<float, 3>", CQL_FORMAT_LITERAL, "", "null", CQL_OK);
	formats("vector<text, 2>", CQL_FORMAT_LITERAL, "01 61", NULL, CQL_ERR_MALFORMED);
	formats("vector<text, 2>", CQL_FORMAT_LITERAL, "01 61 05 62", NULL, CQL_ERR_MALFORMED);
	formats("vector<text, 2>", CQL_FORMAT_LITERAL, "01 61 ff ffffffffffffffff 62", NULL, CQL_ERR_MALFORMED);
	formats("vector<text, 2>", CQL_FORMAT_LITERAL, "01 61 01 62 00", NULL, CQL_ERR_MALFORMED);
	formats("vector<text, 1000000>", CQL_FORMAT_LITERAL, "01 61", NULL, CQL_ERR_MALFORMED);
	{
		cql_type   *t = T("vector<text, 2>");
		cql_buf		b;

		cql_buf_init(&b, A);
		cql_encode_vector_element(&b, t->sub[0], "a", 1);
		cql_encode_vector_element(&b, t->sub[0], "bc", 2);
		is_mem(D(b), b.len, "\x01" "a\x02" "bc", 5, "encode_vector_element prefixes variable elements");
		cql_type_free(t, A);
		t = T("vector<int, 1>");
		cql_buf_reset(&b);
		cql_encode_vector_element(&b, t->sub[0], "\0\0\0\1", 4);
		is_mem(D(b), b.len, "\0\0\0\1", 4, "encode_vector_element leaves fixed elements bare");
		cql_buf_free(&b);
		cql_type_free(t, A);
	}
	cql_type_free(u, A);
}

static void
test_value_wrappers(void)
{
	cql_buf		b;
	size_t		m;

	cql_buf_init(&b, A);
	m = cql_value_begin(&b);
	cql_encode_int(&b, 42);
	cql_value_end(&b, m);
	cql_value_null(&b);
	cql_value_unset(&b);
	m = cql_value_begin(&b);
	cql_value_end(&b, m);
	is_mem(b.data, b.len, "\0\0\0\x04\0\0\0\x2a\xff\xff\xff\xff\xff\xff\xff\xfe\0\0\0\0", 20,
		   "[value] wrappers: length-patched, null, unset, empty");
	cql_buf_reset(&b);
	cql_encode_collection_begin(&b, 2);
	cql_encode_element(&b, "a", 1);
	cql_encode_element(&b, NULL, -1);
	is_mem(b.data, b.len, "\0\0\0\x02\0\0\0\x01" "a\xff\xff\xff\xff", 13,
		   "collection writer: count and [bytes] elements");
	cql_buf_free(&b);
}

/* CQL_FORMAT_TEXT: bare top-level strings, literals elsewhere. */
static void
text_style(const char *type, const char *text, const char *hex, const char *out)
{
	cql_type   *t = T(type);
	unsigned char want[256];
	size_t		wn = tap_unhex(hex, want, sizeof(want));
	cql_buf		b;
	bool		isnull = true;
	cql_status	st = prs(t, text, CQL_FORMAT_TEXT, &b, &isnull);

	ok(st == CQL_OK && !isnull, "%s: text-style %s parses (st=%d)", type, show(text), st);
	is_mem(D(b), b.len, want, wn, "%s: text-style %s encodes as %s", type, show(text), hex);
	cql_buf_free(&b);
	st = fmt(t, want, (int32_t) wn, CQL_FORMAT_TEXT);
	ok(st == CQL_OK, "%s: text-style format ok", type);
	is_str(fmtbuf, out, "%s: %s formats in text style as %s", type, hex, show(out));
	cql_type_free(t, A);
}

static void
test_text_style(void)
{
	text_style("text", "it's \"x\"", "69742773202278 22", "it's \"x\"");
	text_style("text", " null ", "206e756c6c20", " null ");
	text_style("text", "", "", "");
	text_style("ascii", "abc", "616263", "abc");
	text_style("inet", " 10.0.0.1 ", "0a000001", "10.0.0.1");
	text_style("date", "2024-01-01", "80004d0b", "2024-01-01");
	text_style("time", "12:34:56.789", "000029327b048f40", "12:34:56.789000000");
	text_style("timestamp", "2024-01-01T00:00:00Z", "0000018cc251f400", "2024-01-01 00:00:00.000Z");
	text_style("int", " 42 ", "0000002a", "42");
	text_style("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000",
			   "123e4567-e89b-12d3-a456-426614174000");
	text_style("blob", "0xcafe", "cafe", "0xcafe");
	text_style("duration", "1h", "0000fc068c61714000", "1h");
	text_style("list<text>", "['a', 'b''c']", "00000002 00000001 61 00000003 6227 63", "['a', 'b''c']");
	text_style("map<text, date>", "{'k': '2024-01-01'}", "00000001 00000001 6b 00000004 80004d0b",
			   "{'k': '2024-01-01'}");
	rejects("text", CQL_FORMAT_TEXT, "\xff");
	rejects("ascii", CQL_FORMAT_TEXT, "caf\xc3\xa9");
	rejects("date", CQL_FORMAT_TEXT, "'2024-01-01'");
	rejects("int", CQL_FORMAT_TEXT, "x");
	{
		cql_type   *t = T("int");
		cql_buf		b;
		bool		isnull = false;

		ok(prs(t, "null", CQL_FORMAT_TEXT, &b, &isnull) == CQL_OK && isnull,
		   "text style: null for a non-text type is null");
		cql_buf_free(&b);
		cql_type_free(t, A);
		t = T("text");
		ok(fmt(t, NULL, -1, CQL_FORMAT_TEXT) == CQL_OK && strcmp(fmtbuf, "null") == 0,
		   "text style: null value formats as null");
		ok(fmt(t, (const uint8_t *) "\xff", 1, CQL_FORMAT_TEXT) == CQL_ERR_TYPE && fmtbuf[0] == 0,
		   "text style: invalid UTF-8 refused");
		cql_type_free(t, A);
	}
}

/* Random bytes against complex types: never crash, never leak. */
static void
test_hostile_fuzz(void)
{
	const char *types[] = {
		"map<text, frozen<list<int>>>", "list<frozen<tuple<int, text, decimal>>>",
		"set<varint>", "vector<text, 3>", "vector<float, 2>", "tuple<duration, date, time>",
		"map<inet, frozen<set<timestamp>>>", "list<frozen<vector<smallint, 2>>>", NULL
	};
	int			okcount = 0,
				errcount = 0;

	for (int ti = 0; types[ti]; ti++)
	{
		cql_type   *t = T(types[ti]);

		for (int i = 0; i < 3000; i++)
		{
			uint8_t		b[64];
			int			n = (int) (rnd() % sizeof(b));
			cql_status	st;

			for (int k = 0; k < n; k++)
				b[k] = (uint8_t) rnd();
			/* bias towards small counts/lengths so that some parse */
			if (n >= 4 && (i % 2))
			{
				b[0] = b[1] = b[2] = 0;
				b[3] %= 4;
			}
			st = fmt(t, b, n, i % 3 ? CQL_FORMAT_LITERAL : CQL_FORMAT_JSON);
			if (st == CQL_OK)
				okcount++;
			else
				errcount++;
		}
		cql_type_free(t, A);
	}
	ok(okcount + errcount == 24000, "random bytes: %d formatted, %d refused, no crash",
	   okcount, errcount);

	/* random text against parsers */
	{
		const char *alphabet = "[]{}(),:'\"0123456789.-eEx null true abc\\u";
		int			n = 0;

		for (int ti = 0; types[ti]; ti++)
		{
			cql_type   *t = T(types[ti]);

			for (int i = 0; i < 2000; i++)
			{
				char		s[40];
				int			len = (int) (rnd() % (sizeof(s) - 1));
				cql_buf		b;
				bool		isnull;

				for (int k = 0; k < len; k++)
					s[k] = alphabet[rnd() % strlen(alphabet)];
				s[len] = '\0';
				prs(t, s, i % 2 ? CQL_FORMAT_JSON : CQL_FORMAT_LITERAL, &b, &isnull);
				cql_buf_free(&b);
				n++;
			}
			cql_type_free(t, A);
		}
		is_int(n, 16000, "random text parses without crashing");
	}
}

int
main(void)
{
	plan(1453);		/* every assertion runs on a passing build */
	test_integers();
	test_varint_decimal();
	test_floats();
	test_text_blob_bool();
	test_uuid_inet();
	test_datetime();
	test_collections();
	test_tuple_udt_vector();
	test_text_style();
	test_value_wrappers();
	test_hostile_fuzz();
	return done_testing();
}

/*
 * fuzz_values.c
 *		libFuzzer target for the cell decoders and type parsers: values as
 *		they arrive in result cells, rendered by cql_value_format (every
 *		scalar decoder, varint/decimal, duration, date/time, collections,
 *		tuples, UDTs, vectors) and split by cql_split_value; type strings
 *		(cql_type_parse, as in system_schema) and Java marshal class names
 *		(cql_type_parse_marshal); and cql_value_parse with a round trip.
 *
 * Input layout: byte 0 selects the operation (low 2 bits) and, for some,
 * a style or type; the rest is the operation's input:
 *	op 0: [option] (cql_type_read_option) then the value bytes of one cell
 *	op 1: a type string for cql_type_parse (UDT names starting with 'u'
 *		  resolve to a two-field UDT), formatted back and parsed again
 *	op 2: a marshal class name for cql_type_parse_marshal
 *	op 3: byte 1 picks a type from a fixed list, bits 2-3 of byte 0 the
 *		  style; the rest is text for cql_value_parse.  What parses must
 *		  format and parse back to identical bytes (aborts otherwise).
 *
 * Build and run: see tests/fuzz/README.md.
 */
#include "cql_types.h"
#include "cql_wire.h"

#include <stdlib.h>
#include <string.h>

static const cql_allocator *A = &cql_malloc_allocator;

static volatile unsigned sink;

/* Render a value in every style; split composites and render the parts. */
static void
render(const cql_type *t, const uint8_t *p, int32_t n, int depth)
{
	static const cql_format_style styles[3] = {
		CQL_FORMAT_LITERAL, CQL_FORMAT_JSON, CQL_FORMAT_TEXT
	};
	cql_buf		out;
	cql_elem   *elems = NULL;
	int32_t		count = 0;

	cql_buf_init(&out, A);
	for (int s = 0; s < 3; s++)
	{
		cql_buf_reset(&out);
		if (cql_value_format(t, p, n, styles[s], &out) == CQL_OK && out.len > 0)
			sink += out.data[0] + out.data[out.len - 1];
	}
	cql_buf_free(&out);

	if (depth > 4 || n < 0)
		return;
	if (cql_type_is_composite(t) && cql_split_value(t, p, n, A, &elems, &count) == CQL_OK)
	{
		for (int32_t i = 0; i < count; i++)
		{
			const cql_type *sub;

			if (t->id == CQL_TYPE_MAP)
				sub = t->sub[i & 1];
			else if (t->id == CQL_TYPE_TUPLE || t->id == CQL_TYPE_UDT)
				sub = i < t->nsub ? t->sub[i] : NULL;
			else
				sub = t->sub[0];
			if (sub && i < 64)
				render(sub, elems[i].p, elems[i].n, depth + 1);
		}
		cql_free(A, elems);
	}
}

/* Raw number/duration decoders on the same bytes, whatever the type. */
static void
raw_decoders(const uint8_t *p, int32_t n)
{
	cql_buf		out;
	cql_duration d;

	cql_buf_init(&out, A);
	if (cql_varint_to_string(p, n, &out) == CQL_OK)
		sink += (unsigned) out.len;
	cql_buf_reset(&out);
	if (cql_decimal_to_string(p, n, &out) == CQL_OK)
		sink += (unsigned) out.len;
	cql_buf_reset(&out);
	if (cql_decode_duration(p, n, &d) == CQL_OK &&
		cql_duration_format(&d, &out) == CQL_OK)
		sink += (unsigned) out.len;
	cql_buf_free(&out);
}

static cql_type *
resolve_udt(void *ctx, const char *keyspace, const char *name, const cql_allocator *a)
{
	cql_type   *t;

	if (name[0] != 'u')
		return NULL;
	t = cql_type_new(a, CQL_TYPE_UDT, 2);
	if (!t)
		return NULL;
	/* cql_type_format prints UDT names unqualified: keep one keyspace */
	t->keyspace = cql_strdup(a, "ks");
	t->name = cql_strdup(a, name);
	t->field_names[0] = cql_strdup(a, "a");
	t->field_names[1] = cql_strdup(a, "b");
	t->sub[0] = cql_type_new(a, CQL_TYPE_INT, 0);
	t->sub[1] = cql_type_new(a, CQL_TYPE_VARCHAR, 0);
	if (!t->keyspace || !t->name || !t->field_names[0] || !t->field_names[1] ||
		!t->sub[0] || !t->sub[1])
	{
		cql_type_free(t, a);
		return NULL;
	}
	return t;
}

/* Types for op 3, as schema strings. */
static const char *const value_types[] = {
	"int", "bigint", "smallint", "tinyint", "varint", "decimal", "float", "double",
	"boolean", "text", "ascii", "blob", "uuid", "timeuuid", "inet", "date", "time",
	"timestamp", "duration", "counter",
	"list<int>", "set<text>", "map<text, int>", "map<int, frozen<list<text>>>",
	"tuple<int, text, double>", "frozen<ua>", "vector<float, 3>", "vector<text, 2>",
	"list<frozen<tuple<decimal, varint>>>", "map<timestamp, frozen<set<inet>>>",
	"frozen<map<uuid, duration>>", "set<frozen<ub>>"
};

#define NTYPES ((int) (sizeof(value_types) / sizeof(value_types[0])))

static void
value_round_trip(const uint8_t *data, size_t size, int style_sel)
{
	static const cql_format_style styles[3] = {
		CQL_FORMAT_LITERAL, CQL_FORMAT_JSON, CQL_FORMAT_TEXT
	};
	cql_format_style style = styles[style_sel % 3];
	cql_type   *t = NULL;
	cql_buf		content,
				text,
				again;
	bool		is_null = false;

	if (size < 1)
		return;
	if (cql_type_parse(value_types[data[0] % NTYPES], "ks", resolve_udt, NULL, A, &t) != CQL_OK)
		abort();				/* the fixed list must parse */
	cql_buf_init(&content, A);
	cql_buf_init(&text, A);
	cql_buf_init(&again, A);
	if (cql_value_parse(t, (const char *) data + 1, size - 1, style, &content, &is_null) == CQL_OK &&
		!is_null && !content.failed)
	{
		const uint8_t *cp = content.data ? content.data : (const uint8_t *) "";
		cql_status	st;
		bool		null2 = false;

		st = cql_value_format(t, cp, (int32_t) content.len, style, &text);
		if (st == CQL_OK)
		{
			st = cql_value_parse(t, text.data ? (const char *) text.data : "", text.len,
								 style, &again, &null2);
			/* a zero-length value of a type with no empty form prints as null */
			if (st != CQL_OK ||
				(!null2 && (again.len != content.len ||
							(content.len && memcmp(again.data, content.data, content.len) != 0))) ||
				(null2 && content.len != 0))
				abort();
		}
		else if (st != CQL_ERR_TOO_LARGE)
			abort();			/* what we parsed, we must be able to print */
	}
	cql_buf_free(&content);
	cql_buf_free(&text);
	cql_buf_free(&again);
	cql_type_free(t, A);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t		ctl;

	if (size < 1)
		return 0;
	ctl = data[0];
	data++;
	size--;

	switch (ctl & 3)
	{
		case 0:
			{
				cql_reader	r;
				cql_type   *t = NULL;

				cql_reader_init(&r, data, size);
				if (cql_type_read_option(&r, A, &t) == CQL_OK)
				{
					size_t		off = size - cql_reader_remaining(&r);
					int32_t		n = (int32_t) (size - off);

					/* bit 2: the cell is null */
					render(t, data + off, (ctl & 4) ? -1 : n, 0);
					raw_decoders(data + off, n);
					cql_type_free(t, A);
				}
				break;
			}
		case 1:
			{
				char	   *s = malloc(size + 1);
				cql_type   *t = NULL;

				if (!s)
					return 0;
				memcpy(s, data, size);
				s[size] = '\0';
				if (cql_type_parse(s, "ks", resolve_udt, NULL, A, &t) == CQL_OK)
				{
					cql_buf		out;
					cql_type   *t2 = NULL;

					cql_buf_init(&out, A);
					cql_status	st = cql_type_format(t, &out);

					cql_buf_u8(&out, 0);
					if (st == CQL_OK && cql_buf_status(&out) == CQL_OK &&
						cql_type_parse((const char *) out.data, "ks", resolve_udt, NULL, A, &t2) == CQL_OK)
					{
						if (!cql_type_equal(t, t2))
							abort();	/* format/parse must round-trip */
						cql_type_free(t2, A);
					}
					cql_buf_free(&out);
					cql_type_free(t, A);
				}
				free(s);
				break;
			}
		case 2:
			{
				cql_type   *t = NULL;

				if (cql_type_parse_marshal((const char *) data, size, A, &t) == CQL_OK)
				{
					cql_buf		out;

					cql_buf_init(&out, A);
					if (cql_type_format(t, &out) == CQL_OK)
						sink += (unsigned) out.len;
					cql_buf_free(&out);
					cql_type_free(t, A);
				}
				break;
			}
		case 3:
			value_round_trip(data, size, (ctl >> 2) & 3);
			break;
	}
	return 0;
}

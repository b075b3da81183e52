/*
 * test_types.c
 *		Type descriptors: [option] parsing (including hostile inputs),
 *		Java marshal class names, CQL type strings, formatting, copy and
 *		equality.
 */
#include "cql_types.h"
#include "cql_wire.h"
#include "tap.h"
#include "counting_alloc.h"

static const cql_allocator *A = &cql_malloc_allocator;

/* Parse an [option] from hex; returns status, *out set on success. */
static cql_status
opt_from_hex(const char *hex, cql_type **out, size_t *left)
{
	unsigned char buf[4096];
	size_t		n = tap_unhex(hex, buf, sizeof(buf));
	cql_reader	r;
	cql_status	st;

	cql_reader_init(&r, buf, n);
	st = cql_type_read_option(&r, A, out);
	if (left)
		*left = cql_reader_remaining(&r);
	return st;
}

/* Format a type into a static string for comparisons. */
static const char *
fmt(const cql_type *t)
{
	static char s[1024];
	cql_buf		b;

	cql_buf_init(&b, A);
	if (cql_type_format(t, &b) != CQL_OK)
	{
		cql_buf_free(&b);
		return "(error)";
	}
	snprintf(s, sizeof(s), "%.*s", (int) b.len, (const char *) b.data);
	cql_buf_free(&b);
	return s;
}

static void
check_option(const char *hex, const char *want)
{
	cql_type   *t = NULL;
	size_t		left = 99;
	cql_status	st = opt_from_hex(hex, &t, &left);

	ok(st == CQL_OK && left == 0, "option %s parses (st=%d)", want, st);
	if (t)
	{
		is_str(fmt(t), want, "option formats as %s", want);
		/* copy and equality */
		{
			cql_type   *c = cql_type_copy(t, A);

			ok(c && cql_type_equal(t, c), "copy of %s is equal", want);
			cql_type_free(c, A);
		}
	}
	cql_type_free(t, A);
}

static void
check_marshal(const char *cls, const char *want)
{
	cql_type   *t = NULL;
	cql_status	st = cql_type_parse_marshal(cls, strlen(cls), A, &t);

	ok(st == CQL_OK, "marshal %s parses", cls);
	if (t)
		is_str(fmt(t), want, "marshal %s -> %s", cls, want);
	cql_type_free(t, A);
}

/* A resolver that knows one UDT: ks.address {street text, zip int} */
static cql_type *
resolver(void *ctx, const char *ks, const char *name, const cql_allocator *a)
{
	cql_type   *t;

	(*(int *) ctx)++;
	if (strcmp(name, "address") != 0 && strcmp(name, "MyType") != 0)
		return NULL;
	if (!ks || strcmp(ks, "ks") != 0)
		return NULL;
	t = cql_type_new(a, CQL_TYPE_UDT, 2);
	t->keyspace = cql_strdup(a, ks);
	t->name = cql_strdup(a, name);
	t->field_names[0] = cql_strdup(a, "street");
	t->field_names[1] = cql_strdup(a, "zip");
	t->sub[0] = cql_type_new(a, CQL_TYPE_VARCHAR, 0);
	t->sub[1] = cql_type_new(a, CQL_TYPE_INT, 0);
	return t;
}

static void
check_parse(const char *text, const char *want)
{
	cql_type   *t = NULL;
	int			calls = 0;
	cql_status	st = cql_type_parse(text, "ks", resolver, &calls, A, &t);

	ok(st == CQL_OK, "type string '%s' parses (st=%d)", text, st);
	if (t)
	{
		is_str(fmt(t), want, "type string '%s' formats as %s", text, want);
		/* formatting re-parses to an equal type */
		{
			cql_type   *t2 = NULL;
			char		again[1024];

			snprintf(again, sizeof(again), "%s", fmt(t));
			ok(cql_type_parse(again, "ks", resolver, &calls, A, &t2) == CQL_OK &&
			   cql_type_equal(t, t2) && t->frozen == t2->frozen,
			   "'%s' re-parses to an equal type", again);
			cql_type_free(t2, A);
		}
	}
	cql_type_free(t, A);
}

static void
check_parse_fails(const char *text, cql_status want)
{
	cql_type   *t = NULL;
	int			calls = 0;
	cql_status	st = cql_type_parse(text, "ks", resolver, &calls, A, &t);

	ok(st == want && t == NULL, "type string '%s' is refused with %d (got %d)", text, want, st);
	cql_type_free(t, A);
}

/*
 * Type trees the server describes must not cost memory out of proportion
 * to their bytes beyond a fixed ceiling: a tuple of 30,000 ints is 60 kB
 * of option but 30,000 type nodes; column specs of a whole result share
 * one budget of CQL_MAX_RESULT_TYPE_NODES.
 */
static void
test_type_budget(void)
{
	count_stats cs;
	cql_allocator ca = counting_allocator(&cs);
	cql_buf		b;
	cql_reader	r;
	cql_type   *t = NULL;
	cql_result	res;

	cql_buf_init(&b, A);
	cql_buf_u16(&b, CQL_TYPE_TUPLE);
	cql_buf_u16(&b, 30000);
	for (int i = 0; i < 30000; i++)
		cql_buf_u16(&b, CQL_TYPE_INT);
	cql_reader_init(&r, b.data, b.len);
	is_int(cql_type_read_option(&r, &ca, &t), CQL_ERR_TOO_LARGE,
		   "tuple of 30000 ints (60 kB) refused");
	ok(cs.peak < 64 * 1024, "... before building it (peak %zu bytes)", cs.peak);
	cql_type_free(t, &ca);
	t = NULL;

	/* a UDT with many fields likewise */
	cql_buf_reset(&b);
	cql_buf_u16(&b, CQL_TYPE_UDT);
	cql_buf_string(&b, "ks");
	cql_buf_string(&b, "u");
	cql_buf_u16(&b, 20000);
	for (int i = 0; i < 20000; i++)
	{
		cql_buf_string(&b, "f");
		cql_buf_u16(&b, CQL_TYPE_INT);
	}
	cql_reader_init(&r, b.data, b.len);
	ca = counting_allocator(&cs);
	is_int(cql_type_read_option(&r, &ca, &t), CQL_ERR_TOO_LARGE, "UDT of 20000 fields refused");
	ok(cs.peak < 64 * 1024, "... before building it (peak %zu bytes)", cs.peak);
	cql_type_free(t, &ca);
	t = NULL;

	/* reasonable trees still parse */
	cql_buf_reset(&b);
	cql_buf_u16(&b, CQL_TYPE_TUPLE);
	cql_buf_u16(&b, 1000);
	for (int i = 0; i < 1000; i++)
		cql_buf_u16(&b, CQL_TYPE_INT);
	cql_reader_init(&r, b.data, b.len);
	ok(cql_type_read_option(&r, A, &t) == CQL_OK && t && t->nsub == 1000,
	   "tuple of 1000 ints parses");
	cql_type_free(t, A);

	/* many columns of tuples: one budget for the whole result */
	cql_buf_reset(&b);
	cql_buf_i32(&b, CQL_RESULT_ROWS);
	cql_buf_i32(&b, CQL_ROWS_GLOBAL_TABLES_SPEC);
	cql_buf_i32(&b, 100);
	cql_buf_string(&b, "k");
	cql_buf_string(&b, "t");
	for (int c = 0; c < 100; c++)
	{
		cql_buf_string(&b, "c");
		cql_buf_u16(&b, CQL_TYPE_TUPLE);
		cql_buf_u16(&b, 2000);
		for (int i = 0; i < 2000; i++)
			cql_buf_u16(&b, CQL_TYPE_INT);
	}
	cql_buf_i32(&b, 0);
	ca = counting_allocator(&cs);
	is_int(cql_decode_result(&res, 4, 0, b.data, b.len, &ca, NULL, 0), CQL_ERR_TOO_LARGE,
		   "100 columns of 2000-int tuples (400 kB) refused");
	ok(cs.peak < 16 * 1024 * 1024, "... peak %zu bytes for %zu bytes of input", cs.peak, b.len);
	is_int(cs.cur, 0, "... nothing leaked");
	cql_buf_free(&b);
}

int
main(void)
{
	plan(279);		/* every assertion runs on a passing build */
	test_type_budget();

	/* ---- native options ---- */
	check_option("0001", "ascii");
	check_option("0002", "bigint");
	check_option("0003", "blob");
	check_option("0004", "boolean");
	check_option("0005", "counter");
	check_option("0006", "decimal");
	check_option("0007", "double");
	check_option("0008", "float");
	check_option("0009", "int");
	check_option("000b", "timestamp");
	check_option("000c", "uuid");
	check_option("000d", "text");
	check_option("000a", "text");
	check_option("000e", "varint");
	check_option("000f", "timeuuid");
	check_option("0010", "inet");
	check_option("0011", "date");
	check_option("0012", "time");
	check_option("0013", "smallint");
	check_option("0014", "tinyint");
	check_option("0015", "duration");

	/* ---- collections ---- */
	check_option("0020 0009", "list<int>");
	check_option("0022 000d", "set<text>");
	check_option("0021 000d 0020 0009", "map<text, list<int>>");
	check_option("0031 0002 0009 000d", "frozen<tuple<int, text>>");
	/* UDT ks.addr {street text, "Zip" int} */
	{
		cql_type   *t = NULL;
		size_t		left;
		cql_status	st = opt_from_hex("0030 0002 6b73 0004 61646472 0002"
									  " 0006 737472656574 000d"
									  " 0003 5a6970 0009", &t, &left);

		ok(st == CQL_OK && left == 0, "UDT option parses");
		ok(t && t->id == CQL_TYPE_UDT && t->nsub == 2, "UDT has two fields");
		if (t && t->nsub == 2)
		{
			is_str(t->keyspace, "ks", "UDT keyspace");
			is_str(t->name, "addr", "UDT name");
			is_str(t->field_names[0], "street", "UDT field 0 name");
			is_str(t->field_names[1], "Zip", "UDT field 1 name keeps case");
			is_int(t->sub[0]->id, CQL_TYPE_VARCHAR, "UDT field 0 type");
			is_int(t->sub[1]->id, CQL_TYPE_INT, "UDT field 1 type");
			is_str(fmt(t), "addr", "UDT formats as its name");
		}
		cql_type_free(t, A);
	}

	/* ---- custom types on the wire ---- */
	{
		const char *vec = "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3)";
		cql_buf		b;
		cql_reader	r;
		cql_type   *t = NULL;

		cql_buf_init(&b, A);
		cql_buf_u16(&b, 0);
		cql_buf_string(&b, vec);
		cql_reader_init(&r, b.data, b.len);
		ok(cql_type_read_option(&r, A, &t) == CQL_OK, "custom VectorType option parses");
		ok(t && t->id == CQL_TYPE_VECTOR && t->dimension == 3 && t->nsub == 1 &&
		   t->sub[0]->id == CQL_TYPE_FLOAT, "custom VectorType is vector<float, 3>");
		is_int(cql_type_fixed_size(t), 12, "vector<float, 3> has fixed size 12");
		cql_type_free(t, A);

		cql_buf_reset(&b);
		cql_buf_u16(&b, 0);
		cql_buf_string(&b, "org.apache.cassandra.db.marshal.DurationType");
		cql_reader_init(&r, b.data, b.len);
		ok(cql_type_read_option(&r, A, &t) == CQL_OK && t && t->id == CQL_TYPE_DURATION,
		   "v4 custom DurationType becomes duration");
		cql_type_free(t, A);

		cql_buf_reset(&b);
		cql_buf_u16(&b, 0);
		cql_buf_string(&b, "com.example.Strange(a=>b)");
		cql_reader_init(&r, b.data, b.len);
		ok(cql_type_read_option(&r, A, &t) == CQL_OK && t && t->id == CQL_TYPE_CUSTOM &&
		   strcmp(t->name, "com.example.Strange(a=>b)") == 0,
		   "unknown custom class keeps its name");
		is_str(fmt(t), "'com.example.Strange(a=>b)'", "custom type formats quoted");
		cql_type_free(t, A);
		cql_buf_free(&b);
	}

	/* ---- marshal class names ---- */
	check_marshal("org.apache.cassandra.db.marshal.Int32Type", "int");
	check_marshal("UTF8Type", "text");
	check_marshal("org.apache.cassandra.db.marshal.DateType", "timestamp");
	check_marshal("org.apache.cassandra.db.marshal.SimpleDateType", "date");
	check_marshal("org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.TimeUUIDType)", "timeuuid");
	check_marshal("org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.Int32Type)", "list<int>");
	check_marshal("org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.Int32Type))", "frozen<list<int>>");
	check_marshal("org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.LongType)", "map<text, bigint>");
	check_marshal("org.apache.cassandra.db.marshal.TupleType(org.apache.cassandra.db.marshal.Int32Type,org.apache.cassandra.db.marshal.UTF8Type)", "frozen<tuple<int, text>>");
	check_marshal("org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.UTF8Type, 2)", "vector<text, 2>");
	check_marshal("VectorType(VectorType(FloatType,2),2)", "vector<vector<float, 2>, 2>");
	check_marshal("org.apache.cassandra.db.marshal.SetType(org.apache.cassandra.db.marshal.InetAddressType)", "set<inet>");
	{
		const char *udt = "org.apache.cassandra.db.marshal.UserType(ks,61646472,"
			"737472656574:org.apache.cassandra.db.marshal.UTF8Type,"
			"7a6970:org.apache.cassandra.db.marshal.Int32Type)";
		cql_type   *t = NULL;

		ok(cql_type_parse_marshal(udt, strlen(udt), A, &t) == CQL_OK, "marshal UserType parses");
		ok(t && t->id == CQL_TYPE_UDT && t->nsub == 2 && strcmp(t->keyspace, "ks") == 0 &&
		   strcmp(t->name, "addr") == 0 && strcmp(t->field_names[0], "street") == 0 &&
		   strcmp(t->field_names[1], "zip") == 0 && t->sub[0]->id == CQL_TYPE_VARCHAR &&
		   t->sub[1]->id == CQL_TYPE_INT, "marshal UserType decodes hex names and field types");
		ok(t && !t->frozen, "bare marshal UserType is not frozen (multi-cell)");
		cql_type_free(t, A);
		t = NULL;
		{
			char		fz[512];

			snprintf(fz, sizeof(fz), "org.apache.cassandra.db.marshal.FrozenType(%s)", udt);
			ok(cql_type_parse_marshal(fz, strlen(fz), A, &t) == CQL_OK && t &&
			   t->id == CQL_TYPE_UDT && t->frozen, "FrozenType(UserType) is a frozen UDT");
			is_str(fmt(t), "frozen<addr>", "frozen marshal UDT formats as frozen<addr>");
			cql_type_free(t, A);
		}
	}
	/* a UDT named like a native type or a type keyword is quoted (fuzz_values) */
	{
		const char *names[] = {"uuid", "int", "map", "frozen"};

		for (int i = 0; i < 4; i++)
		{
			char		m[256];
			char		want[32];
			cql_type   *t = NULL;

			snprintf(m, sizeof(m), "UserType(ks,");
			for (const char *c = names[i]; *c; c++)
				snprintf(m + strlen(m), sizeof(m) - strlen(m), "%02x", (unsigned char) *c);
			snprintf(m + strlen(m), sizeof(m) - strlen(m), ",61:Int32Type)");
			snprintf(want, sizeof(want), "\"%s\"", names[i]);
			ok(cql_type_parse_marshal(m, strlen(m), A, &t) == CQL_OK && t, "UDT %s parses", names[i]);
			is_str(t ? fmt(t) : "", want, "UDT %s formats quoted", names[i]);
			cql_type_free(t, A);
		}
	}
	/* large field counts (beyond any fixed-size scratch array) */
	{
		char	   *m = malloc(40000);
		size_t		n = 0;
		cql_type   *t = NULL;

		n += (size_t) sprintf(m + n, "UserType(ks,61");
		for (int i = 0; i < 300; i++)
			n += (size_t) sprintf(m + n, ",66%02x%02x:Int32Type", 0x41 + i / 26, 0x61 + i % 26);
		n += (size_t) sprintf(m + n, ")");
		ok(cql_type_parse_marshal(m, n, A, &t) == CQL_OK && t && t->nsub == 300 &&
		   t->field_names[299][0] == 'f' && t->sub[299]->id == CQL_TYPE_INT,
		   "marshal UserType with 300 fields");
		cql_type_free(t, A);
		t = NULL;
		n = (size_t) sprintf(m, "tuple<int");
		for (int i = 1; i < 1000; i++)
			n += (size_t) sprintf(m + n, ", text");
		sprintf(m + n, ">");
		ok(cql_type_parse(m, NULL, NULL, NULL, A, &t) == CQL_OK && t && t->nsub == 1000 &&
		   t->sub[999]->id == CQL_TYPE_VARCHAR, "tuple type string with 1000 elements");
		cql_type_free(t, A);
		free(m);
	}
	/* malformed marshal strings */
	{
		const char *bad[] = {
			"ListType(", "ListType(Int32Type", "MapType(Int32Type)", "VectorType(FloatType, 0)",
			"VectorType(FloatType, -1)", "VectorType(FloatType, x)", "VectorType(FloatType)",
			"UserType(ks,6g,)", "UserType(ks,61,6a:)", "Int32Type junk", "", "(", "Foo(((",
			"UserType(ks,61,00:Int32Type)", "SetType(Int32Type,Int32Type)", NULL
		};

		for (int i = 0; bad[i]; i++)
		{
			cql_type   *t = NULL;
			cql_status	st = cql_type_parse_marshal(bad[i], strlen(bad[i]), A, &t);

			ok(st != CQL_OK && t == NULL, "marshal '%s' is refused (st=%d)", bad[i], st);
		}
	}
	/* deep marshal nesting is refused, not a stack overflow */
	{
		char		deep[20000];
		size_t		n = 0;
		cql_type   *t = NULL;

		for (int i = 0; i < 1000; i++)
			n += (size_t) sprintf(deep + n, "ListType(");
		n += (size_t) sprintf(deep + n, "Int32Type");
		for (int i = 0; i < 1000; i++)
			deep[n++] = ')';
		ok(cql_type_parse_marshal(deep, n, A, &t) == CQL_ERR_TOO_LARGE && !t,
		   "1000-deep marshal nesting is TOO_LARGE");
	}

	/* ---- hostile [option]s ---- */
	{
		cql_type   *t = NULL;

		ok(opt_from_hex("00", &t, NULL) == CQL_ERR_TRUNCATED && !t, "1-byte option truncated");
		ok(opt_from_hex("0020", &t, NULL) == CQL_ERR_TRUNCATED && !t, "list without element type truncated");
		ok(opt_from_hex("0021 0009", &t, NULL) == CQL_ERR_TRUNCATED && !t, "map without value type truncated");
		ok(opt_from_hex("0099", &t, NULL) == CQL_ERR_UNSUPPORTED && !t, "unknown id unsupported");
		ok(opt_from_hex("0020 0099", &t, NULL) == CQL_ERR_UNSUPPORTED && !t, "unknown nested id unsupported");
		ok(opt_from_hex("0031 ffff 0009", &t, NULL) == CQL_ERR_TRUNCATED && !t, "tuple with 65535 elements and 2 bytes refused");
		ok(opt_from_hex("0030 0002 6b73 0001 61 ffff 0001 61 0009", &t, NULL) == CQL_ERR_TRUNCATED && !t,
		   "UDT with 65535 fields and few bytes refused");
		ok(opt_from_hex("0030 0002 6b73 0001 61 0002 0001 61 0009 0001 62", &t, NULL) == CQL_ERR_TRUNCATED && !t,
		   "UDT with truncated second field refused");
		ok(opt_from_hex("0000 0010 4c697374547970652849", &t, NULL) != CQL_OK && !t,
		   "custom class string longer than input refused");
		ok(opt_from_hex("0000 0009 4c69737454797065 28", &t, NULL) == CQL_ERR_MALFORMED && !t,
		   "custom ListType( unterminated is malformed");
	}
	{
		/* 40 nested lists: over CQL_MAX_TYPE_DEPTH */
		cql_buf		b;
		cql_reader	r;
		cql_type   *t = NULL;

		cql_buf_init(&b, A);
		for (int i = 0; i < 40; i++)
			cql_buf_u16(&b, 0x20);
		cql_buf_u16(&b, 9);
		cql_reader_init(&r, b.data, b.len);
		ok(cql_type_read_option(&r, A, &t) == CQL_ERR_TOO_LARGE && !t, "40-deep list nesting refused");
		cql_buf_reset(&b);
		for (int i = 0; i < 31; i++)
			cql_buf_u16(&b, 0x20);
		cql_buf_u16(&b, 9);
		cql_reader_init(&r, b.data, b.len);
		ok(cql_type_read_option(&r, A, &t) == CQL_OK && t, "31-deep list nesting accepted");
		cql_type_free(t, A);
		cql_buf_free(&b);
	}
	/* every truncation of a complex option fails cleanly */
	{
		unsigned char buf[256];
		size_t		n = tap_unhex("0021 000d 0031 0002 0009 0030 0002 6b73 0001 61 0001 0001 66 0020 0009", buf, sizeof(buf));
		int			bad = 0;
		cql_type   *t = NULL;
		cql_reader	r;

		cql_reader_init(&r, buf, n);
		ok(cql_type_read_option(&r, A, &t) == CQL_OK && cql_reader_remaining(&r) == 0,
		   "complex option parses");
		is_str(fmt(t), "map<text, frozen<tuple<int, a>>>", "complex option formats");
		cql_type_free(t, A);
		for (size_t cut = 0; cut < n; cut++)
		{
			t = NULL;
			cql_reader_init(&r, buf, cut);
			if (cql_type_read_option(&r, A, &t) == CQL_OK || t)
				bad++;
		}
		is_int(bad, 0, "every truncation of the complex option fails");
	}

	/* ---- CQL type strings ---- */
	check_parse("int", "int");
	check_parse("INT", "int");
	check_parse("Text", "text");
	check_parse("varchar", "text");
	check_parse("timeuuid", "timeuuid");
	check_parse("duration", "duration");
	check_parse("list<int>", "list<int>");
	check_parse("frozen<list<int>>", "frozen<list<int>>");
	check_parse("map<text, frozen<list<int>>>", "map<text, frozen<list<int>>>");
	check_parse("map<text,frozen<list<int>>>", "map<text, frozen<list<int>>>");
	check_parse("frozen<tuple<int, text>>", "frozen<tuple<int, text>>");
	check_parse("tuple<int, text, list<int>>", "frozen<tuple<int, text, list<int>>>");
	check_parse("vector<float, 3>", "vector<float, 3>");
	check_parse("vector<text,2>", "vector<text, 2>");
	check_parse("frozen<address>", "frozen<address>");
	check_parse("address", "address");
	check_parse("ks.address", "address");
	check_parse("\"MyType\"", "\"MyType\"");
	check_parse("set<frozen<address>>", "set<frozen<address>>");
	check_parse("  list< int >  ", "list<int>");
	check_parse("'org.apache.cassandra.db.marshal.BytesType'", "blob");
	{
		cql_type   *t = NULL;
		int			calls = 0;

		ok(cql_type_parse("frozen<address>", "ks", resolver, &calls, A, &t) == CQL_OK &&
		   t->frozen && t->id == CQL_TYPE_UDT && calls == 1, "frozen UDT resolves once and is frozen");
		cql_type_free(t, A);
		ok(cql_type_parse("address", "ks", NULL, NULL, A, &t) == CQL_ERR_UNSUPPORTED && !t,
		   "UDT without resolver is unsupported");
	}
	check_parse_fails("unknowntype", CQL_ERR_UNSUPPORTED);
	check_parse_fails("other.address", CQL_ERR_UNSUPPORTED);
	check_parse_fails("list<int", CQL_ERR_MALFORMED);
	check_parse_fails("list<>", CQL_ERR_MALFORMED);
	check_parse_fails("list<int, int>", CQL_ERR_MALFORMED);
	check_parse_fails("map<int>", CQL_ERR_MALFORMED);
	check_parse_fails("vector<float>", CQL_ERR_MALFORMED);
	check_parse_fails("vector<float, 0>", CQL_ERR_MALFORMED);
	check_parse_fails("vector<float, 99999999999>", CQL_ERR_MALFORMED);
	check_parse_fails("int int", CQL_ERR_MALFORMED);
	check_parse_fails("", CQL_ERR_MALFORMED);
	check_parse_fails("\"unterminated", CQL_ERR_MALFORMED);
	check_parse_fails("\"\"", CQL_ERR_MALFORMED);
	{
		char		deep[1000];
		size_t		n = 0;

		for (int i = 0; i < 100; i++)
			n += (size_t) sprintf(deep + n, "list<");
		n += (size_t) sprintf(deep + n, "int");
		for (int i = 0; i < 100; i++)
			deep[n++] = '>';
		deep[n] = 0;
		check_parse_fails(deep, CQL_ERR_TOO_LARGE);
	}

	/* ---- equality ---- */
	{
		cql_type   *x = NULL,
				   *y = NULL;

		cql_type_parse("map<text, int>", NULL, NULL, NULL, A, &x);
		cql_type_parse("frozen<map<text, int>>", NULL, NULL, NULL, A, &y);
		ok(cql_type_equal(x, y), "equality ignores frozen");
		cql_type_free(y, A);
		cql_type_parse("map<text, bigint>", NULL, NULL, NULL, A, &y);
		ok(!cql_type_equal(x, y), "map<text,int> != map<text,bigint>");
		cql_type_free(y, A);
		cql_type_free(x, A);
		cql_type_parse("vector<float, 3>", NULL, NULL, NULL, A, &x);
		cql_type_parse("vector<float, 4>", NULL, NULL, NULL, A, &y);
		ok(!cql_type_equal(x, y), "vector dimensions differ");
		cql_type_free(y, A);
		cql_type_free(x, A);
	}

	/* ---- names and fixed sizes ---- */
	is_str(cql_type_name(CQL_TYPE_VARCHAR), "text", "varchar is named text");
	is_str(cql_type_name(CQL_TYPE_TIMESTAMP), "timestamp", "timestamp name");
	ok(cql_type_name(CQL_TYPE_LIST) == NULL, "list has no native name");
	{
		struct
		{
			const char *t;
			int			sz;
		}			fs[] = {
			{"boolean", 1}, {"int", 4}, {"float", 4}, {"bigint", 8}, {"double", 8},
			{"timestamp", 8}, {"uuid", 16}, {"timeuuid", 16}, {"smallint", -1},
			{"tinyint", -1}, {"date", -1}, {"time", -1}, {"counter", -1}, {"text", -1},
			{"vector<bigint, 2>", 16}, {"vector<text, 2>", -1}, {"list<int>", -1},
			{NULL, 0}
		};

		for (int i = 0; fs[i].t; i++)
		{
			cql_type   *t = NULL;

			cql_type_parse(fs[i].t, NULL, NULL, NULL, A, &t);
			is_int(cql_type_fixed_size(t), fs[i].sz, "fixed size of %s", fs[i].t);
			cql_type_free(t, A);
		}
	}
	ok(!cql_ident_needs_quotes("abc_1"), "abc_1 needs no quotes");
	ok(cql_ident_needs_quotes("Abc"), "Abc needs quotes");
	ok(cql_ident_needs_quotes("1a"), "1a needs quotes");
	ok(cql_ident_needs_quotes("a b"), "'a b' needs quotes");
	ok(cql_ident_needs_quotes("select"), "reserved word select needs quotes");
	ok(cql_ident_needs_quotes("token"), "reserved word token needs quotes");
	ok(!cql_ident_needs_quotes("ttl"), "non-reserved keyword ttl needs no quotes");
	ok(cql_ident_needs_quotes(""), "empty identifier needs quotes");
	{
		cql_buf		b;

		cql_buf_init(&b, A);
		cql_format_ident(&b, "My\"T");
		is_mem(b.data, b.len, "\"My\"\"T\"", 7, "identifier quoting doubles quotes");
		cql_buf_free(&b);
	}

	return done_testing();
}

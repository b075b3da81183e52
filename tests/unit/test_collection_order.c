/*
 * test_collection_order.c
 *		Sets and maps are encoded in Cassandra's order without duplicates,
 *		at any depth (cql_collection_order.c, called by the parser).
 *
 * The orders below were read from Cassandra 5.0.9: each list of literals
 * was written as one frozen<set<T>> literal (Cassandra sorts and
 * de-duplicates those) and the stored order read back; the expected index
 * lists are that order.  Then: maps (the last value of a repeated key
 * wins), the nested values of tests/integration/crosscheck_writes.py, a
 * randomized check against independent reference orders, and allocation
 * failures.
 */
#include "cql_types.h"
#include "cql_values_int.h"
#include "failing_alloc.h"
#include "parse_type.h"
#include "rnd.h"
#include "tap.h"

static const cql_allocator *A = &cql_malloc_allocator;


/* Encode text of type ts in style st; returns status, bytes in *out. */
static cql_status
enc(const char *ts, const char *text, cql_format_style st, cql_buf *out)
{
	cql_type   *t = T(ts);
	bool		isnull = false;
	cql_status	s;

	cql_buf_reset(out);
	s = cql_value_parse(t, text, strlen(text), st, out, &isnull);
	cql_type_free(t, A);
	return s;
}

static bool
same(const cql_buf *a, const cql_buf *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

typedef struct order_case
{
	const char *type;
	const char *lits[16];
	int			order[16];		/* Cassandra's stored order, -1 ends */
} order_case;

#define END -1

static const order_case cases[] = {
	{"text", {"'b'", "'a'", "'é'", "'Z'", "''", "'ab'", "'a'"},
	{4, 3, 1, 5, 0, 2, END}},
	{"int", {"5", "-1", "0", "2147483647", "-2147483648", "256", "-256", "5"},
	{4, 6, 1, 2, 0, 5, 3, END}},
	{"bigint", {"5", "-1", "0", "9223372036854775807", "-9223372036854775808", "4294967296", "-4294967296"},
	{4, 6, 1, 2, 0, 5, 3, END}},
	{"smallint", {"5", "-1", "0", "32767", "-32768", "256", "-256"},
	{4, 6, 1, 2, 0, 5, 3, END}},
	{"tinyint", {"5", "-1", "0", "127", "-128"}, {4, 1, 2, 0, 3, END}},
	{"varint", {"5", "-1", "0", "127", "128", "-128", "-129", "255", "256", "18446744073709551616",
	"-18446744073709551616", "-18446744073709551617", "-32768", "32767", "32768"},
	{11, 10, 12, 6, 5, 1, 2, 0, 3, 4, 7, 8, 13, 14, 9, END}},

	/*
	 * Equal decimals of different scales (0 and 0.0): Cassandra keeps one
	 * of them, which one depends on its hashing; the first is kept here.
	 */
	{"decimal", {"1.5", "-1.5", "0.15", "15e-2", "1e10", "-0.001", "0", "0.0", "100", "1e2",
	"-100.5", "99.99", "12345678901234567890.5", "-12345678901234567890.5"},
	{13, 10, 1, 5, 6, 2, 0, 11, 8, 4, 12, END}},
	{"double", {"1.5", "-2", "NaN", "-Infinity", "Infinity", "-0.0", "0.0", "1e300", "-1e-300", "4.9e-324"},
	{3, 1, 8, 5, 6, 9, 0, 7, 4, 2, END}},
	{"float", {"1.5", "-2", "NaN", "-Infinity", "Infinity", "-0.0", "0.0", "3e38", "-1e-38"},
	{3, 1, 8, 5, 6, 0, 7, 4, 2, END}},
	{"boolean", {"true", "false", "true"}, {1, 0, END}},
	{"blob", {"0xff", "0x00", "0x", "0x0000", "0x7f", "0x80", "0xff00"},
	{2, 1, 3, 4, 5, 0, 6, END}},
	{"inet", {"'10.0.0.1'", "'::1'", "'255.255.255.255'", "'1.2.3.4'", "'fe80::1'", "'0.0.0.0'"},
	{5, 1, 3, 0, 4, 2, END}},
	{"date", {"'2024-01-01'", "'1969-12-31'", "'1970-01-01'", "'-5877641-06-23'", "'9999-12-31'",
	"'0001-01-01'", "'-0001-01-01'"},
	{3, 6, 5, 1, 2, 0, 4, END}},
	{"timestamp", {"'2024-01-01 00:00:00+0000'", "'1969-12-31 23:59:59.999+0000'", "0", "-1", "1",
	"-62135596800000"},
	{5, 1, 2, 4, 0, END}},
	{"time", {"'12:00:00'", "'00:00:00'", "'23:59:59.999999999'", "'00:00:00.000000001'"},
	{1, 3, 0, 2, END}},
	{"uuid", {"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-4fff-bfff-ffffffffffff",
		"5bcb5e6c-5e9a-4f0b-a1f1-2b8e1c7c9d10", "5bcb5e6c-5e9a-4f0b-81f1-2b8e1c7c9d10",
		"50554d6e-29bb-11e5-b345-feff819cdc9f", "50554d6e-29bb-11e5-7345-feff819cdc9f",
		"60554d6e-29bb-11e5-b345-feff819cdc9f", "40554d6e-29bc-11e5-b345-feff819cdc9f",
		"40554d6e-29bb-12e5-b345-feff819cdc9f", "a0000000-0000-3000-8000-000000000000",
		"10000000-0000-5000-8000-000000000000", "10000000-0000-7000-8000-000000000000",
	"f0000000-0000-4000-0000-000000000000", "00000000-0000-4000-8000-000000000000"},
	{0, 5, 4, 6, 7, 8, 9, 13, 3, 2, 12, 1, 10, 11, END}},
	{"timeuuid", {"50554d6e-29bb-11e5-b345-feff819cdc9f", "50554d6e-29bb-11e5-7345-feff819cdc9f",
		"50554d6e-29bb-11e5-8345-feff819cdc9f", "50554d6e-29bb-11e5-b345-7eff819cdc9f",
		"50554d6e-29bb-11e5-b345-feff819cdc9e", "60554d6e-29bb-11e5-b345-feff819cdc9f",
		"40554d6e-29bc-11e5-b345-feff819cdc9f", "40554d6e-29bb-12e5-b345-feff819cdc9f",
		"ffffffff-ffff-1fff-0000-000000000000", "00000000-0000-1000-0000-000000000000",
	"00000000-0000-1000-ff00-000000000000"},
	{10, 9, 2, 4, 0, 3, 1, 5, 6, 7, 8, END}},
	{"frozen<tuple<int, text>>", {"(1, 'b')", "(1, 'a')", "(null, 'z')", "(0, null)", "(1, null)",
	"(-1, 'a')", "(null, null)"},
	{6, 2, 5, 3, 4, 1, 0, END}},
	{"frozen<list<int>>", {"[1, 2]", "[1]", "[]", "[0, 5]", "[1, 2, 3]", "[-1]"},
	{2, 5, 3, 1, 0, 4, END}},
	{"frozen<set<int>>", {"{2, 1}", "{1}", "{}", "{0, 5}", "{3, 1, 2}", "{-1}"},
	{2, 5, 3, 1, 0, 4, END}},
	{"frozen<map<int, text>>", {"{1: 'b'}", "{1: 'a'}", "{}", "{0: 'z', 5: 'a'}", "{1: 'a', 2: 'b'}",
	"{-1: 'x'}"},
	{2, 5, 3, 1, 4, 0, END}},
};

/*
 * Each case as one set literal: the encoding must be the elements, each
 * encoded alone, in Cassandra's order, duplicates dropped.
 */
static void
test_cassandra_orders(void)
{
	cql_buf		got,
				want,
				el;

	cql_buf_init(&got, A);
	cql_buf_init(&want, A);
	cql_buf_init(&el, A);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		const order_case *oc = &cases[c];
		char		settype[128],
					text[2048];
		size_t		tl = 0;
		int			n = 0,
					bad = 0;

		snprintf(settype, sizeof(settype), "frozen<set<%s>>", oc->type);
		tl += (size_t) snprintf(text + tl, sizeof(text) - tl, "{");
		for (int i = 0; i < 16 && oc->lits[i]; i++)
			tl += (size_t) snprintf(text + tl, sizeof(text) - tl, "%s%s", i ? ", " : "", oc->lits[i]);
		snprintf(text + tl, sizeof(text) - tl, "}");
		if (enc(settype, text, CQL_FORMAT_LITERAL, &got) != CQL_OK)
		{
			ok(0, "set<%s> of %s parses", oc->type, text);
			continue;
		}
		while (oc->order[n] != END)
			n++;
		cql_buf_reset(&want);
		cql_buf_i32(&want, n);
		for (int i = 0; i < n; i++)
		{
			if (enc(oc->type, oc->lits[oc->order[i]], CQL_FORMAT_LITERAL, &el) != CQL_OK)
				bad++;
			cql_buf_bytes(&want, el.data, (int32_t) el.len);
		}
		ok(!bad && same(&got, &want), "set<%s>: Cassandra 5.0's order, without duplicates", oc->type);
		if (!same(&got, &want))
		{
			tap_hexdump("got", got.data, got.len);
			tap_hexdump("want", want.data, want.len);
		}
	}
	cql_buf_free(&got);
	cql_buf_free(&want);
	cql_buf_free(&el);
}

/* Expect text of type ts (style st) to encode as the text 'canon' does. */
static void
is_canonical(const char *ts, const char *text, cql_format_style st, const char *canon,
			 const char *name)
{
	cql_buf		a,
				b;
	cql_status	s1,
				s2;

	cql_buf_init(&a, A);
	cql_buf_init(&b, A);
	s1 = enc(ts, text, st, &a);
	s2 = enc(ts, canon, CQL_FORMAT_LITERAL, &b);
	ok(s1 == CQL_OK && s2 == CQL_OK && same(&a, &b), "%s", name);
	if (!same(&a, &b))
	{
		tap_hexdump("got", a.data, a.len);
		tap_hexdump("want", b.data, b.len);
	}
	cql_buf_free(&a);
	cql_buf_free(&b);
}

/* A hand-encoded set must not be canonicalized twice by accident. */
static void
test_maps_and_nesting(void)
{
	cql_buf		b;
	const char *udt = "frozen<tuple<text, int, frozen<set<text>>>>";

	/* maps: sorted by key, a repeated key keeps its last value */
	is_canonical("map<text, int>", "{'x': 1, 'a': 3, 'x': 2}", CQL_FORMAT_LITERAL,
				 "{'a': 3, 'x': 2}", "map literal: sorted by key, the last value of a repeated key");
	is_canonical("map<text, int>", "{\"bb\": 1, \"a\": 2, \"c\": 3, \"a\": 4}", CQL_FORMAT_JSON,
				 "{'a': 4, 'bb': 1, 'c': 3}", "JSON object map: same rules");
	is_canonical("map<int, int>", "{\"5\": 1, \"-1\": 2}", CQL_FORMAT_JSON,
				 "{-1: 2, 5: 1}", "JSON object map with int keys: numeric order, not text order");
	is_canonical("map<int, text>", "[[3, \"c\"], [1, \"a\"], [3, \"d\"]]", CQL_FORMAT_JSON,
				 "{1: 'a', 3: 'd'}", "JSON pairs map: same rules");
	is_canonical("set<int>", "[3, 1, 3, 2, 1]", CQL_FORMAT_JSON, "{1, 2, 3}",
				 "JSON set: sorted, duplicates dropped");
	is_canonical("list<int>", "[3, 1, 3]", CQL_FORMAT_JSON, "[3, 1, 3]",
				 "a list keeps its order and duplicates");

	/* the values tests/integration/crosscheck_writes.py writes */
	{
		cql_type   *t = cql_type_new(A, CQL_TYPE_UDT, 3);
		cql_buf		x,
					y;
		bool		isnull;
		const char *in = "{\"tags\": [\"work\", \"home\"]}";
		const char *in2 = "{\"tags\": [\"a\", \"a\"]}";
		const char *canon = "{tags: {'home', 'work'}}";
		const char *canon2 = "{tags: {'a'}}";

		t->field_names[0] = cql_strdup(A, "street");
		t->field_names[1] = cql_strdup(A, "zip");
		t->field_names[2] = cql_strdup(A, "tags");
		t->sub[0] = T("text");
		t->sub[1] = T("int");
		t->sub[2] = T("frozen<set<text>>");
		cql_buf_init(&x, A);
		cql_buf_init(&y, A);
		ok(cql_value_parse(t, in, strlen(in), CQL_FORMAT_JSON, &x, &isnull) == CQL_OK &&
		   cql_value_parse(t, canon, strlen(canon), CQL_FORMAT_LITERAL, &y, &isnull) == CQL_OK &&
		   same(&x, &y), "UDT field set<text> [\"work\", \"home\"] is sent as {'home', 'work'}");
		cql_buf_reset(&x);
		cql_buf_reset(&y);
		ok(cql_value_parse(t, in2, strlen(in2), CQL_FORMAT_JSON, &x, &isnull) == CQL_OK &&
		   cql_value_parse(t, canon2, strlen(canon2), CQL_FORMAT_LITERAL, &y, &isnull) == CQL_OK &&
		   same(&x, &y), "UDT field set<text> [\"a\", \"a\"] is sent as {'a'}");
		cql_buf_free(&x);
		cql_buf_free(&y);
		cql_type_free(t, A);
	}
	is_canonical("frozen<tuple<int, frozen<map<int, int>>, frozen<map<text, int>>>>",
				 "[1, {\"5\": 1, \"-1\": 2}, {\"bb\": 1, \"a\": 2, \"c\": 3}]", CQL_FORMAT_JSON,
				 "(1, {-1: 2, 5: 1}, {'a': 2, 'bb': 1, 'c': 3})",
				 "maps inside a tuple: key order of the key type");
	is_canonical(udt, "('s', 1, {'b', 'a', 'b'})", CQL_FORMAT_LITERAL, "('s', 1, {'a', 'b'})",
				 "a set in a tuple from a CQL literal");
	is_canonical("list<frozen<set<int>>>", "[[2, 1, 2], [], [9, -9]]", CQL_FORMAT_JSON,
				 "[{1, 2}, {}, {-9, 9}]", "sets inside a list: each canonical, the list's order kept");
	is_canonical("set<frozen<set<int>>>", "[[2, 1], [1, 2], [1], []]", CQL_FORMAT_JSON,
				 "{{}, {1}, {1, 2}}",
				 "a set of sets: inner sets canonical first, so [2, 1] and [1, 2] are one element");
	is_canonical("map<frozen<set<int>>, int>", "[[[2, 1], 1], [[1, 2], 2]]", CQL_FORMAT_JSON,
				 "{{1, 2}: 2}", "a map keyed by sets: equal keys after canonicalizing, the last value");

	/* an encoded value that is already canonical comes back identical */
	cql_buf_init(&b, A);
	{
		cql_type   *t = T("set<int>");
		cql_buf		c;

		cql_buf_init(&c, A);
		enc("set<int>", "{3, 1, 2}", CQL_FORMAT_LITERAL, &b);
		cql_buf_put(&c, b.data, b.len);
		ok(cql_collection_canonicalize(t, &c, 0) == CQL_OK && same(&b, &c),
		   "canonicalizing a canonical set changes nothing");
		cql_buf_reset(&c);
		cql_buf_i32(&c, 2);
		cql_buf_i32(&c, 4);
		ok(cql_collection_canonicalize(t, &c, 0) == CQL_ERR_MALFORMED,
		   "a truncated set is CQL_ERR_MALFORMED");
		cql_buf_free(&c);
		cql_type_free(t, A);
	}
	cql_buf_free(&b);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/*
 * Random sets of bigint, varint and decimal (values chosen to collide
 * often) against a reference: the sorted distinct integers, decimals
 * compared as exact rationals.  Also the comparator is antisymmetric.
 */
static void
test_random(void)
{
	int			bad_sets = 0,
				bad_varint = 0,
				bad_decimal = 0,
				bad_sym = 0,
				bad_maps = 0;
	cql_type   *dec = T("decimal");

	for (int round = 0; round < 300; round++)
	{
		int64_t		v[40],
					ref[40];
		int			n = (int) (rnd() % 40);
		int			nd = 0;
		char		text[2048];
		size_t		tl = 0;
		const char *type = (round % 2) ? "set<bigint>" : "set<varint>";
		cql_buf		got,
					want;

		for (int i = 0; i < n; i++)
		{
			/* small values (many duplicates) and a few huge ones */
			v[i] = (rnd() % 4 == 0) ? (int64_t) rnd() : (int64_t) (rnd() % 21) - 10;
			tl += (size_t) snprintf(text + tl, sizeof(text) - tl, "%s%lld", i ? ", " : "[",
									(long long) v[i]);
		}
		snprintf(text + tl, sizeof(text) - tl, "%s", n ? "]" : "[]");
		memcpy(ref, v, sizeof(int64_t) * (size_t) n);
		qsort(ref, (size_t) n, sizeof(int64_t), cmp_i64);
		for (int i = 0; i < n; i++)
			if (nd == 0 || ref[nd - 1] != ref[i])
				ref[nd++] = ref[i];
		tl = 0;
		for (int i = 0; i < nd; i++)
			tl += (size_t) snprintf(text + 1024 + tl, 1024 - tl, "%s%lld", i ? ", " : "",
									(long long) ref[i]);
		{
			char		canon[1100];

			snprintf(canon, sizeof(canon), "{%.*s}", (int) tl, text + 1024);
			cql_buf_init(&got, A);
			cql_buf_init(&want, A);
			if (enc(type, text, CQL_FORMAT_JSON, &got) != CQL_OK ||
				enc(type, canon, CQL_FORMAT_LITERAL, &want) != CQL_OK || !same(&got, &want))
				bad_sets++;
			cql_buf_free(&got);
			cql_buf_free(&want);
		}

		/* a map of the same keys: the last value of each key wins */
		{
			char		mtext[2048],
						mcanon[2048];
			size_t		ml = 0,
						mc = 0;

			ml += (size_t) snprintf(mtext + ml, sizeof(mtext) - ml, "[");
			for (int i = 0; i < n; i++)
				ml += (size_t) snprintf(mtext + ml, sizeof(mtext) - ml, "%s[%lld, %d]",
										i ? ", " : "", (long long) v[i], i);
			snprintf(mtext + ml, sizeof(mtext) - ml, "]");
			mc += (size_t) snprintf(mcanon + mc, sizeof(mcanon) - mc, "{");
			for (int k = 0; k < nd; k++)
			{
				int			last = -1;

				for (int i = 0; i < n; i++)
					if (v[i] == ref[k])
						last = i;
				mc += (size_t) snprintf(mcanon + mc, sizeof(mcanon) - mc, "%s%lld: %d",
										k ? ", " : "", (long long) ref[k], last);
			}
			snprintf(mcanon + mc, sizeof(mcanon) - mc, "}");
			cql_buf_init(&got, A);
			cql_buf_init(&want, A);
			if (enc("map<bigint, int>", mtext, CQL_FORMAT_JSON, &got) != CQL_OK ||
				enc("map<bigint, int>", mcanon, CQL_FORMAT_LITERAL, &want) != CQL_OK ||
				!same(&got, &want))
				bad_maps++;
			cql_buf_free(&got);
			cql_buf_free(&want);
		}
	}

	/* varint and decimal comparators against exact references */
	for (int i = 0; i < 3000; i++)
	{
		int64_t		x = (int64_t) (rnd() % 2001) - 1000,
					y = (int64_t) (rnd() % 2001) - 1000;
		int			sx = (int) (rnd() % 5),
					sy = (int) (rnd() % 5);
		char		tx[64],
					ty[64];
		cql_buf		bx,
					by;
		cql_status	st;
		int			c,
					c2,
					want;
		__int128	lx,
					ly;

		if (i % 3 == 0)
		{
			/* varints that need many bytes, with their exact order */
			x = (int64_t) rnd();
			y = (rnd() % 2) ? x + (int64_t) (rnd() % 3) - 1 : (int64_t) rnd();
		}
		cql_buf_init(&bx, A);
		cql_buf_init(&by, A);
		snprintf(tx, sizeof(tx), "%lld", (long long) x);
		snprintf(ty, sizeof(ty), "%lld", (long long) y);
		enc("varint", tx, CQL_FORMAT_LITERAL, &bx);
		enc("varint", ty, CQL_FORMAT_LITERAL, &by);
		{
			cql_type   *vt = T("varint");

			c = cql_value_compare(vt, bx.data, bx.len, by.data, by.len, A, &st);
			c2 = cql_value_compare(vt, by.data, by.len, bx.data, bx.len, A, &st);
			cql_type_free(vt, A);
		}
		want = (x > y) - (x < y);
		if ((c > 0) - (c < 0) != want)
			bad_varint++;
		if ((c > 0) - (c < 0) != -((c2 > 0) - (c2 < 0)))
			bad_sym++;

		/* decimals x * 10^-sx (small x): compare x*10^sy with y*10^sx */
		x = (int64_t) (rnd() % 2001) - 1000;
		y = (int64_t) (rnd() % 2001) - 1000;
		if (rnd() % 3 == 0)
			y = x * 10;			/* equal values at another scale */
		snprintf(tx, sizeof(tx), "%lldE-%d", (long long) x, sx);
		snprintf(ty, sizeof(ty), "%lldE-%d", (long long) y, sy);
		enc("decimal", tx, CQL_FORMAT_LITERAL, &bx);
		enc("decimal", ty, CQL_FORMAT_LITERAL, &by);
		c = cql_value_compare(dec, bx.data, bx.len, by.data, by.len, A, &st);
		c2 = cql_value_compare(dec, by.data, by.len, bx.data, bx.len, A, &st);
		lx = (__int128) x;
		ly = (__int128) y;
		for (int k = 0; k < sy; k++)
			lx *= 10;
		for (int k = 0; k < sx; k++)
			ly *= 10;
		want = (lx > ly) - (lx < ly);
		if (st != CQL_OK || (c > 0) - (c < 0) != want)
		{
			if (bad_decimal++ < 3)
				printf("# decimal %s vs %s: got %d want %d\n", tx, ty, c, want);
		}
		if ((c > 0) - (c < 0) != -((c2 > 0) - (c2 < 0)))
			bad_sym++;
		cql_buf_free(&bx);
		cql_buf_free(&by);
	}
	cql_type_free(dec, A);
	is_int(bad_sets, 0, "300 random JSON sets of bigint/varint equal their sorted distinct values");
	is_int(bad_maps, 0, "300 random JSON maps: sorted keys, the last value of each key");
	is_int(bad_varint, 0, "varint order is numeric order (3000 random pairs)");
	is_int(bad_decimal, 0, "decimal order is numeric order across scales (3000 random pairs)");
	is_int(bad_sym, 0, "the comparator is antisymmetric");
}

/* Every allocation failure is CQL_ERR_NOMEM, leaks nothing (LSan). */
static void
test_nomem(void)
{
	cql_type   *t = T("frozen<tuple<frozen<set<decimal>>, frozen<map<text, int>>>>");
	const char *text = "[[1.5, 0.15, 1.50, -3E+2], {\"b\": 1, \"a\": 2}]";
	int			bad = 0,
				okays = 0;

	for (long k = 0; k < 200; k++)
	{
		cql_buf		b;
		bool		isnull;
		cql_status	st;

		cql_buf_init(&b, &failing_allocator);
		fail_countdown = k;
		st = cql_value_parse(t, text, strlen(text), CQL_FORMAT_JSON, &b, &isnull);
		fail_countdown = -1;
		if (st == CQL_OK)
			okays++;
		else if (st != CQL_ERR_NOMEM)
			bad++;
		cql_buf_free(&b);
	}
	ok(bad == 0 && okays > 0, "allocation failures while sorting are CQL_ERR_NOMEM (%d ok)", okays);
	cql_type_free(t, A);
}

int
main(void)
{
	plan(42);
	test_cassandra_orders();
	test_maps_and_nesting();
	test_random();
	test_nomem();
	return done_testing();
}

/*-------------------------------------------------------------------------
 *
 * cql_types.h
 *		CQL data types: type descriptors (from the wire, from CQL type
 *		strings, from Java marshal class names) and value codecs.
 *
 * Values on the wire are [bytes]; this module converts between those bytes
 * and C representations, and renders/parses them as CQL literals (the form
 * cqlsh prints) and as JSON.  Nothing here does I/O.
 *
 * IDENTIFICATION
 *		src/cql/cql_types.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_TYPES_H
#define CQL_TYPES_H

#include "cql_core.h"

/* Option ids of the native protocol, plus CQL_TYPE_VECTOR (no wire id). */
typedef enum cql_type_id
{
	CQL_TYPE_CUSTOM = 0x0000,
	CQL_TYPE_ASCII = 0x0001,
	CQL_TYPE_BIGINT = 0x0002,
	CQL_TYPE_BLOB = 0x0003,
	CQL_TYPE_BOOLEAN = 0x0004,
	CQL_TYPE_COUNTER = 0x0005,
	CQL_TYPE_DECIMAL = 0x0006,
	CQL_TYPE_DOUBLE = 0x0007,
	CQL_TYPE_FLOAT = 0x0008,
	CQL_TYPE_INT = 0x0009,
	CQL_TYPE_TIMESTAMP = 0x000B,
	CQL_TYPE_UUID = 0x000C,
	CQL_TYPE_VARCHAR = 0x000D,	/* = text */
	CQL_TYPE_VARINT = 0x000E,
	CQL_TYPE_TIMEUUID = 0x000F,
	CQL_TYPE_INET = 0x0010,
	CQL_TYPE_DATE = 0x0011,
	CQL_TYPE_TIME = 0x0012,
	CQL_TYPE_SMALLINT = 0x0013,
	CQL_TYPE_TINYINT = 0x0014,
	CQL_TYPE_DURATION = 0x0015,
	CQL_TYPE_LIST = 0x0020,
	CQL_TYPE_MAP = 0x0021,
	CQL_TYPE_SET = 0x0022,
	CQL_TYPE_UDT = 0x0030,
	CQL_TYPE_TUPLE = 0x0031,
	CQL_TYPE_VECTOR = 0x1000	/* from VectorType custom class / vector<t,n> */
} cql_type_id;

/*
 * A type descriptor tree.  One allocation per node; free with
 * cql_type_free().  Subtypes:
 *	list/set/vector: sub[0] = element
 *	map: sub[0] = key, sub[1] = value
 *	tuple: sub[0..nsub-1]
 *	UDT: sub[i] is the type of field field_names[i]
 */
typedef struct cql_type
{
	cql_type_id id;
	bool		frozen;			/* only known from schema strings */
	int			nsub;
	struct cql_type **sub;
	char	  **field_names;	/* UDT only, nsub entries */
	char	   *keyspace;		/* UDT only */
	char	   *name;			/* UDT name, or custom class name */
	int			dimension;		/* vector only */
} cql_type;

/*
 * Parse an [option] from a RESULT/PREPARED metadata block.  Custom types
 * (0x0000) go through cql_type_parse_marshal, so VectorType becomes
 * CQL_TYPE_VECTOR and DurationType (v4) CQL_TYPE_DURATION.  Errors:
 * CQL_ERR_TRUNCATED (short input, or a field count that the remaining
 * bytes cannot hold), CQL_ERR_TOO_LARGE (nesting beyond
 * CQL_MAX_TYPE_DEPTH), CQL_ERR_UNSUPPORTED (unknown type id),
 * CQL_ERR_MALFORMED (bad custom class string), CQL_ERR_NOMEM.
 */
extern cql_status cql_type_read_option(cql_reader *r, const cql_allocator *a,
									   cql_type **out);

/*
 * Memory ceilings for type trees described by the server (two bytes of
 * [option] can describe a ~100-byte node): one tree may hold at most
 * CQL_MAX_TYPE_NODES nodes (cql_type_read_option refuses more with
 * CQL_ERR_TOO_LARGE before allocating a tuple's or UDT's fields), and all
 * column specs of one metadata block share CQL_MAX_RESULT_TYPE_NODES.
 * cql_type_read_option_budget is cql_type_read_option drawing from the
 * caller's *budget (decremented by the nodes used, also on failure).
 */
#define CQL_MAX_TYPE_NODES			4096
#define CQL_MAX_RESULT_TYPE_NODES	65536
extern cql_status cql_type_read_option_budget(cql_reader *r, const cql_allocator *a,
											  cql_type **out, int *budget);

/*
 * Parse a CQL type string as found in system_schema.columns.type, e.g.
 * "map<text, frozen<list<int>>>", "vector<float, 3>", "frozen<address>".
 * UDT names are resolved through 'resolve_udt' (may be NULL: then a bare
 * identifier that is not a native type is an error).  The resolver returns a
 * freshly allocated cql_type or NULL when the UDT is unknown.
 */
typedef cql_type *(*cql_udt_resolver) (void *ctx, const char *keyspace,
									   const char *name,
									   const cql_allocator *a);
extern cql_status cql_type_parse(const char *text, const char *keyspace,
								 cql_udt_resolver resolve_udt, void *ctx,
								 const cql_allocator *a, cql_type **out);

/*
 * Parse a Java marshal class name as sent in custom types, e.g.
 * "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3)".
 * Unknown classes give a CQL_TYPE_CUSTOM node keeping the class name.
 */
extern cql_status cql_type_parse_marshal(const char *text, size_t len,
										 const cql_allocator *a,
										 cql_type **out);

/*
 * cql_type_new allocates a zeroed node with room for nsub sub-types (and,
 * for CQL_TYPE_UDT, nsub field names); NULL on allocation failure or
 * nsub outside 0..65535.  cql_type_free frees a whole tree (NULL is fine).
 * cql_type_equal compares structure, UDT/custom names, field names and
 * vector dimensions; it ignores the frozen flag (the wire never tells it)
 * and compares UDT keyspaces only when both are known.
 *
 * Frozen flags: set by "frozen<...>" in type strings and FrozenType(...)
 * in marshal names; tuples and vectors are always marked frozen; types read
 * from [option]s are otherwise not frozen.
 */
extern cql_type *cql_type_new(const cql_allocator *a, cql_type_id id, int nsub);
extern cql_type *cql_type_copy(const cql_type *t, const cql_allocator *a);
extern void cql_type_free(cql_type *t, const cql_allocator *a);
extern bool cql_type_equal(const cql_type *x, const cql_type *y);

/*
 * cql_type_is_composite: values made of elements (list, set, map, tuple,
 * UDT, vector), which cql_split_value splits.
 * cql_type_has_empty_form: a zero-length value is a value of the type (text,
 * ascii, blob, custom, collections, tuples, UDTs); for any other type it is
 * Cassandra's legacy "empty" value, which reads as null.
 */
extern bool cql_type_is_composite(const cql_type *t);
extern bool cql_type_has_empty_form(const cql_type *t);
/* cql_text_valid: n bytes are a valid ascii (all below 0x80) or text (UTF-8) value of t */
extern bool cql_text_valid(const cql_type *t, const uint8_t *p, int32_t n);

/*
 * Render as a CQL type string the way system_schema spells it: "list<int>",
 * "map<text, frozen<list<int>>>", "frozen<tuple<int, text>>",
 * "vector<float, 3>", "frozen<address>" (UDT name quoted when needed, no
 * keyspace), custom types as a quoted class name.
 */
extern cql_status cql_type_format(const cql_type *t, cql_buf *out);

/*
 * CQL identifiers: does this name need double quotes (anything but
 * [a-z_][a-z0-9_]*, and reserved keywords such as select/token/order),
 * and append it quoted if so ("" doubles a quote).
 */
extern bool cql_ident_needs_quotes(const char *s);
extern void cql_format_ident(cql_buf *out, const char *s);

/* Name of a native type ("int", "text"); NULL for composite/custom ids. */
extern const char *cql_type_name(cql_type_id id);

/*
 * Is the encoded value of this type of fixed size?  Returns it or -1.
 * This is Cassandra's notion (AbstractType.valueLengthIfFixed), which
 * decides the vector element layout: boolean 1, int/float 4, bigint/
 * double/timestamp 8, uuid/timeuuid 16, vector of fixed elements
 * dimension * size; everything else, including smallint, tinyint, date,
 * time and counter, is -1 (so vector<smallint, n> elements carry lengths).
 */
extern int	cql_type_fixed_size(const cql_type *t);

/* ---------------------------------------------------------------------
 * Scalar decoders: 'p','n' is the content of a non-null [bytes].
 * They return CQL_ERR_TYPE when n is wrong for the type (n == 0 is the
 * legal "empty" value for many types: callers decide, these reject it).
 * ---------------------------------------------------------------------
 */
extern cql_status cql_decode_boolean(const uint8_t *p, int32_t n, bool *v);
extern cql_status cql_decode_tinyint(const uint8_t *p, int32_t n, int8_t *v);
extern cql_status cql_decode_smallint(const uint8_t *p, int32_t n, int16_t *v);
extern cql_status cql_decode_int(const uint8_t *p, int32_t n, int32_t *v);
extern cql_status cql_decode_bigint(const uint8_t *p, int32_t n, int64_t *v);	/* bigint, counter, timestamp(ms), time(ns) */
/* tinyint, smallint, int, bigint or counter (by id) widened to int64 */
extern cql_status cql_decode_integer(cql_type_id id, const uint8_t *p, int32_t n,
									 int64_t *v);
extern cql_status cql_decode_float(const uint8_t *p, int32_t n, float *v);
extern cql_status cql_decode_double(const uint8_t *p, int32_t n, double *v);
/* date: days relative to 1970-01-01 (wire value minus 2^31) */
extern cql_status cql_decode_date(const uint8_t *p, int32_t n, int64_t *days);
extern cql_status cql_decode_uuid(const uint8_t *p, int32_t n, uint8_t out[16]);
/* inet: *family = 4 or 6, addr gets 4 or 16 bytes */
extern cql_status cql_decode_inet(const uint8_t *p, int32_t n, int *family, uint8_t addr[16]);
typedef struct cql_duration
{
	int32_t		months;
	int32_t		days;
	int64_t		nanoseconds;
} cql_duration;
extern cql_status cql_decode_duration(const uint8_t *p, int32_t n, cql_duration *v);

/* ---------------------------------------------------------------------
 * Scalar encoders: append the CONTENT of the value (no [bytes] length).
 * Use cql_value_begin/cql_value_end to wrap content into a [value]:
 *		size_t m = cql_value_begin(b); cql_encode_int(b, 42); cql_value_end(b, m);
 * ---------------------------------------------------------------------
 */
extern size_t cql_value_begin(cql_buf *b);	/* writes a placeholder [int] */
extern void cql_value_end(cql_buf *b, size_t mark);	/* patches the length */
extern void cql_value_null(cql_buf *b);	/* [value] -1 */
extern void cql_value_unset(cql_buf *b);	/* [value] -2 (v4+) */
extern void cql_encode_boolean(cql_buf *b, bool v);
extern void cql_encode_tinyint(cql_buf *b, int8_t v);
extern void cql_encode_smallint(cql_buf *b, int16_t v);
extern void cql_encode_int(cql_buf *b, int32_t v);
extern void cql_encode_bigint(cql_buf *b, int64_t v);
/*
 * tinyint, smallint, int, bigint or counter (by id): cql_integer_range
 * gives the values the type holds; cql_encode_integer writes v (which must
 * be in that range) in the type's width.
 */
extern void cql_integer_range(cql_type_id id, int64_t *min, int64_t *max);
extern void cql_encode_integer(cql_buf *b, cql_type_id id, int64_t v);
extern void cql_encode_float(cql_buf *b, float v);
extern void cql_encode_double(cql_buf *b, double v);
extern void cql_encode_date(cql_buf *b, int64_t days);	/* days since epoch */
extern void cql_encode_uuid(cql_buf *b, const uint8_t v[16]);
extern cql_status cql_encode_inet(cql_buf *b, int family, const uint8_t *addr);
extern cql_status cql_encode_duration(cql_buf *b, const cql_duration *v);	/* checks signs */

/*
 * Arbitrary precision: varint is minimal big-endian two's complement;
 * decimal is [int scale][varint unscaled].  Decimal strings keep the scale
 * exactly: plain notation ("-123.45", "1.50", "0.001") when 0 <= scale <=
 * 10000, otherwise "<unscaled>E<-scale>" ("123E+2" is unscaled 123, scale
 * -2).  Input: [+-]digits[.digits][(e|E)[+-]digits], also ".5".  The
 * to_string functions accept non-minimal varints; from_string always
 * writes the minimal form.
 */
#define CQL_MAX_VARINT_BYTES	16384	/* longer varints: CQL_ERR_TOO_LARGE */
#define CQL_MAX_NUMERIC_DIGITS	40000	/* longer digit strings: TOO_LARGE */
extern cql_status cql_varint_to_string(const uint8_t *p, int32_t n, cql_buf *out);
extern cql_status cql_varint_from_string(const char *s, size_t len, cql_buf *content);
extern cql_status cql_decimal_to_string(const uint8_t *p, int32_t n, cql_buf *out);
extern cql_status cql_decimal_from_string(const char *s, size_t len, cql_buf *content);
extern void cql_encode_varint_i64(cql_buf *b, int64_t v);

/* Textual forms of scalars used by both literal and JSON formatting. */
extern void cql_uuid_to_string(const uint8_t v[16], char out[37]);
extern cql_status cql_uuid_from_string(const char *s, size_t len, uint8_t out[16]);
extern cql_status cql_inet_to_string(int family, const uint8_t *addr, char out[46]);
extern cql_status cql_inet_from_string(const char *s, size_t len, int *family, uint8_t addr[16]);

/*
 * Date/time text forms (UTC, proleptic Gregorian):
 *	date: "YYYY-MM-DD" for years 0000..9999, otherwise the raw unsigned
 *		  wire value (days + 2^31) in decimal, which is what Cassandra
 *		  accepts for a date given as a string of digits.  Parse accepts
 *		  "[+-]YYYY-MM-DD" (4+ year digits) and digit strings (raw wire value).
 *	time: "HH:MM:SS.nnnnnnnnn" (always 9 fraction digits).  Parse accepts
 *		  "HH:MM", "HH:MM:SS", "HH:MM:SS.f" (1..9 digits) and digit strings
 *		  (nanoseconds since midnight).
 *	timestamp: "YYYY-MM-DD HH:MM:SS.mmmZ" for years 0000..9999, otherwise
 *		  the signed millisecond count in decimal.  Parse accepts
 *		  "YYYY-MM-DD", optionally followed by ' ' or 'T' and "HH:MM[:SS[.f]]"
 *		  (sub-millisecond digits must be zero), optionally followed by an
 *		  optional space and "Z" or "+HH[:MM]"/"+HHMM"/"-..." (no zone means
 *		  UTC), or a signed digit string (milliseconds).
 *	duration: see cql_duration_format; parse also accepts weeks ("2w"),
 *		  "µs", upper case units and ISO 8601 "P1Y2M3W4DT5H6M7S" forms.
 */
extern cql_status cql_date_format(int64_t days, cql_buf *out);
extern cql_status cql_date_parse(const char *s, size_t len, int64_t *days);
extern cql_status cql_time_format(int64_t ns, cql_buf *out);
extern cql_status cql_time_parse(const char *s, size_t len, int64_t *ns);
extern cql_status cql_timestamp_format(int64_t ms, cql_buf *out);
extern cql_status cql_timestamp_parse(const char *s, size_t len, int64_t *ms);
/* "[-]1y2mo3d4h5m6s7ms8us9ns" (zero components omitted; zero is "0s") */
extern cql_status cql_duration_format(const cql_duration *v, cql_buf *out);
extern cql_status cql_duration_parse(const char *s, size_t len, cql_duration *out);

/*
 * Shortest text that reads back (strtod/strtof) to the identical value:
 * plain notation for decimal exponents -5..16 ("1.5", "100.0", "0.00001";
 * integral values get ".0"), otherwise "d.ddde+XX" ("1e+17", "1e-06",
 * "3.4028235e+38").  NaN, Infinity, -Infinity spelled like that.
 */
extern void cql_double_format(double v, cql_buf *out);
extern void cql_float_format(float v, cql_buf *out);

/* ---------------------------------------------------------------------
 * Collections, tuples, UDTs and vectors: iterate over elements without
 * copying.  Each element is a [bytes] slice (n == -1 for null).
 * ---------------------------------------------------------------------
 */
typedef struct cql_elem
{
	const uint8_t *p;
	int32_t		n;
} cql_elem;

/*
 * Split a composite value into elements.  For list/set: count elements;
 * map: 2*count (key, value, key, value...); tuple/UDT: nsub slices (UDT
 * trailing missing fields are reported as null); vector: dimension slices.
 * On success *elems is an allocation of *count entries pointing into p
 * (free it with cql_free).  n == 0 gives *count = 0 for list/set/map/vector
 * and all-null fields for tuple/UDT.  Structural damage (negative or
 * impossible counts, lengths past the end, trailing bytes, a fixed-size
 * vector of the wrong length) is CQL_ERR_MALFORMED; nothing is allocated
 * before a count has been checked against the bytes that remain.
 */
extern cql_status cql_split_value(const cql_type *t, const uint8_t *p, int32_t n,
								  const cql_allocator *a,
								  cql_elem **elems, int32_t *count);

/* Writers for composite values: begin, write elements, end. */
extern void cql_encode_collection_begin(cql_buf *b, int32_t count);	/* list/set/map: [int] count */
extern void cql_encode_element(cql_buf *b, const void *p, int32_t n);	/* [bytes] element */
/* vector of fixed-size elements: raw concatenation; variable: uvint length + bytes */
extern void cql_encode_vector_element(cql_buf *b, const cql_type *elem_type,
									  const void *p, int32_t n);

/* ---------------------------------------------------------------------
 * Generic rendering and parsing.
 * ---------------------------------------------------------------------
 */
typedef enum cql_format_style
{
	CQL_FORMAT_LITERAL,			/* CQL literal as cqlsh prints: 'text', 1.5,
								 * {1, 2}, {'a': 1}, (1, 'x'), {f: 1} */
	CQL_FORMAT_JSON,			/* JSON: strings quoted, maps as objects when
								 * the key is text-like, else [[k,v],...] */
	CQL_FORMAT_TEXT				/* like LITERAL, but a top-level ascii/text,
								 * inet, date, time or timestamp is its bare
								 * text (no quotes, no escaping): the form for
								 * mapping any CQL value to a PG text column */
} cql_format_style;

/*
 * Render one value of type t ('n' == -1 means null) and append the text to
 * 'out'.  On error nothing is appended.  The exact forms, which parse back
 * with cql_value_parse to the identical bytes (NaN payloads, non-minimal
 * varints and non-1 boolean bytes aside), are:
 *
 *	type			CQL_FORMAT_LITERAL				CQL_FORMAT_JSON
 *	null			null							null
 *	ascii/text		'it''s' (quotes doubled)		"it's" (JSON escapes; \u00XX
 *													for other controls; UTF-8 raw)
 *	blob/custom		0xcafe (lower case; 0x empty)	"0xcafe"
 *	boolean			true / false					true / false
 *	tinyint..bigint, counter   -42					-42
 *	varint			-123456789012345678901234		same, as a JSON number
 *	decimal			123.45, 1.50, 0.001, 123E+2		same, as a JSON number
 *					(plain notation, scale kept, when 0 <= scale <= 10000;
 *					else <unscaled>E<-scale>, e.g. 1E-20000, 5E+3)
 *	float/double	shortest round-trip digits: 1.5, 100.0, 0.1, 1e+17,
 *					1e-06, -0.0 (plain for decimal exponents -5..16, else
 *					d.ddde+XX); NaN, Infinity, -Infinity
 *													same numbers; "NaN",
 *													"Infinity", "-Infinity"
 *	uuid/timeuuid	123e4567-e89b-12d3-a456-426614174000 (bare, lower case)
 *													"123e4567-..."
 *	inet			'192.168.1.10', '2001:db8::1'	"192.168.1.10"
 *	date			'2024-01-01' (raw wire value '4294967295' outside
 *					years 0000..9999)				"2024-01-01"
 *	time			'12:34:56.789000000'			"12:34:56.789000000"
 *	timestamp		'2024-01-01 00:00:00.000Z' (UTC; outside years
 *					0000..9999 the millisecond count: '-9223372036854775808')
 *													"2024-01-01 00:00:00.000Z"
 *	duration		1y2mo3d4h5m6s7ms8us9ns (bare; -1mo; 0s)
 *													"1y2mo3d4h5m6s7ms8us9ns"
 *	list			[1, 2]							[1, 2]
 *	set				{1, 2}							[1, 2]
 *	map				{'a': 1, 'b': 2}				{"a": 1} when the key type is
 *													ascii/text/varchar, else
 *													[[1, "a"], [2, "b"]]
 *	tuple			(1, 'a', null)					[1, "a", null]
 *	UDT				{street: 'x', "Zip": 5}			{"street": "x", "Zip": 5}
 *					(names quoted when not [a-z_][a-z0-9_]*; trailing fields
 *					missing from the value print as null)
 *	vector			[1.0, 2.0]						[1.0, 2.0]
 *
 * CQL_FORMAT_TEXT is CQL_FORMAT_LITERAL except at the top level, where
 * ascii/text values are their raw text and inet/date/time/timestamp values
 * their text without quotes (hello, 192.168.1.10, 2024-01-01,
 * 2024-01-01 00:00:00.000Z); elements inside composites stay literals.
 *
 * Separators are always ", " and ": ".  A zero-length value of a type that
 * has no empty form (Cassandra's "empty" int, uuid, timestamp, vector...)
 * renders as null.  Errors: CQL_ERR_TYPE for a scalar of the wrong length or
 * invalid content (bad UTF-8/ASCII, time out of range, mixed-sign
 * duration), CQL_ERR_MALFORMED for damaged composites, CQL_ERR_TOO_LARGE
 * for varints over CQL_MAX_VARINT_BYTES.
 */
extern cql_status cql_value_format(const cql_type *t, const uint8_t *p, int32_t n,
								   cql_format_style style, cql_buf *out);

/*
 * Parse a CQL literal or a JSON text into the CONTENT bytes of a value of
 * type t (appended to 'content'; nothing is appended on error).  *is_null
 * is set, and nothing appended, for a top-level null (any case in CQL,
 * "null" in JSON).  Leading/trailing white space is allowed, anything else
 * after the value is an error.  All failures to fit the type are
 * CQL_ERR_TYPE, except CQL_ERR_TOO_LARGE for numbers of more than
 * CQL_MAX_NUMERIC_DIGITS digits and collections of more than
 * CQL_MAX_COLLECTION_ELEMS elements, and CQL_ERR_NOMEM.
 *
 * CQL_FORMAT_TEXT: for a top-level ascii/text the whole input is the value
 * (never null, no trimming); for inet/date/time/timestamp the input minus
 * surrounding white space is parsed like the inside of a quoted literal;
 * everything else is parsed as CQL_FORMAT_LITERAL.
 *
 * Accepted forms are everything cql_value_format produces, plus:
 *	CQL literals: $$text$$; 0X hex; TRUE/False; +7; nan/-infinity (any case);
 *		integer literals for float/double/decimal; 1.5e3 decimals;
 *		bare integers for timestamp (ms) and time (ns); quoted durations and
 *		ISO 8601 durations (P1Y2M3DT4H, P2W); weeks/µs/upper-case units;
 *		the date/time/timestamp variants listed at cql_timestamp_parse etc.;
 *		UDT fields in any order, missing ones null, unquoted names
 *		case-folded, quoted names exact.
 *	JSON: numbers given as strings ("12", "1.5", "NaN") for numeric types;
 *		"true"/"false" strings for boolean; integers (ms, ns) for
 *		timestamp and time; maps as an object whose keys are the string
 *		form of any scalar key type ({"1": "a"} for map<int, text>), or as
 *		[[k, v], ...] for any key type; UDT objects with field names
 *		matched exactly, in any order, missing ones null.
 *
 * Refused (CQL_ERR_TYPE): values out of range (300 for tinyint), wrong
 * token kinds ('12' for int in CQL, "abc" for int, 1.5 for int, true for
 * int), null elements in list/set/map/vector (Cassandra rejects them; null
 * is fine in tuple and UDT fields), wrong tuple arity or vector dimension,
 * unknown or repeated UDT fields, invalid UTF-8 or lone surrogates, a
 * version other than 1 in a timeuuid, sub-millisecond timestamps, floats
 * beyond the type's range, and malformed JSON (raw control characters in
 * strings, trailing commas, leading zeros).
 */
extern cql_status cql_value_parse(const cql_type *t, const char *text, size_t len,
								  cql_format_style style, cql_buf *content,
								  bool *is_null);

#endif							/* CQL_TYPES_H */

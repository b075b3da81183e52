/*-------------------------------------------------------------------------
 *
 * test_bridge_json.c
 *	  Unit tests of cqlbridge's JSON reader (src/bridge/cli/common/json.c),
 *	  which reads DIR/verify.json and DIR/diff.json back for report.html:
 *	  the reports as verify and diff write them, escapes (\u with surrogate
 *	  pairs, a lone surrogate, \u0000), numbers, and damaged texts (cut
 *	  short, trailing text, bad escapes, control characters, nesting too
 *	  deep), each an error with its byte offset, never a crash.  Built with
 *	  ASan+UBSan like the other unit tests.
 *
 * IDENTIFICATION
 *	  tests/unit/test_bridge_json.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "tap.h"
#include "common/common.h"

/* the program leaves its allocations to exit: no leak report (see test_draft_normalize.c) */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* the error of a text that must not parse ("" when it parsed) */
static const char *
error_of(const char *text)
{
	char	   *err = NULL;

	return bridge_json_parse(text, &err) ? "" : err;
}

int
main(void)
{
	char	   *err = NULL;
	BridgeJson *v;
	const BridgeJson *t;
	char		deep[200];

	plan(21);

	v = bridge_json_parse("{\"tables\": [\n  {\"table\": \"ks.hotels\", \"missing\": 0, \"extra\": 1,"
						  " \"examples\": [{\"kind\": \"extra\", \"key\": {\"id\": \"<b>Tom & \\\"Jerry\\\"</b>\"}, \"columns\": null}]}\n],"
						  " \"differences\": 1, \"equal\": false, \"repair\": true, \"finished_at\": \"2026-11-26T09:15:24Z\"}\n", &err);
	ok(v != NULL, "a diff report parses");
	t = bridge_json_get(v, "tables");
	ok(t && t->type == BRIDGE_JSON_ARRAY && t->n == 1, "its tables are an array of one");
	is_str(bridge_json_str(t->items[0], "table"), "ks.hotels", "a string member");
	ok(bridge_json_num(t->items[0], "extra", -1) == 1 && bridge_json_num(t->items[0], "nothing", -1) == -1,
	   "a number member, and the default of an absent one");
	is_str(bridge_json_str(bridge_json_get(bridge_json_get(t->items[0], "examples")->items[0], "key"), "id"),
		   "<b>Tom & \"Jerry\"</b>", "an escaped quote inside a nested object");
	ok(bridge_json_get(bridge_json_get(t->items[0], "examples")->items[0], "columns")->type == BRIDGE_JSON_NULL,
	   "null");
	ok(bridge_json_get(v, "repair")->type == BRIDGE_JSON_BOOL && bridge_json_get(v, "repair")->boolean &&
	   !bridge_json_get(v, "equal")->boolean, "true and false");
	ok(bridge_json_str(v, "tables") == NULL && bridge_json_get(t, "x") == NULL,
	   "a member of another type, or of an array, is absent");

	v = bridge_json_parse("[\"a\\u00e9\\ud83d\\ude00\\n\\t\\/\", \"\\ud800x\", \"a\\u0000b\", -1.5e2, 0, {}, []]", &err);
	ok(v && v->n == 7, "an array of seven values");
	is_str(v->items[0]->str, "a\xc3\xa9\xf0\x9f\x98\x80\n\t/", "\\u escapes as UTF-8, a surrogate pair as one code point");
	is_str(v->items[1]->str, "\xef\xbf\xbdx", "a lone surrogate becomes U+FFFD");
	is_str(v->items[2]->str, "a\xef\xbf\xbd" "b", "\\u0000 becomes U+FFFD (a C string holds no NUL)");
	ok(v->items[3]->number == -150 && v->items[4]->number == 0, "numbers");
	ok(v->items[5]->type == BRIDGE_JSON_OBJECT && v->items[5]->n == 0 &&
	   v->items[6]->type == BRIDGE_JSON_ARRAY && v->items[6]->n == 0, "empty object and array");

	is_str(error_of("{\"command\": \"verify\", \"queries\": [\n"), "unexpected end at byte 35",
		   "a report cut short: an error with its offset");
	is_str(error_of("{} x"), "text after the value at byte 3", "text after the value");
	is_str(error_of("[\"a\\qb\"]"), "bad escape in a string at byte 4", "a bad escape");
	is_str(error_of("[\"a\nb\"]"), "control character in a string at byte 3", "a raw newline in a string");
	is_str(error_of("{\"a\" 1}"), "expected ':' at byte 5", "a member without ':'");
	is_str(error_of(""), "unexpected end at byte 0", "an empty file");
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	is_str(error_of(deep), "nesting too deep at byte 64", "nesting deeper than 64 is refused, not a stack overflow");
	return tap_failed != 0;
}

/*-------------------------------------------------------------------------
 *
 * test_draft_normalize.c
 *	  Unit tests of "cqlbridge workload"'s statement texts
 *	  (src/bridge/cli/draft/normalize.c), without a server: the text forms
 *	  pg_stat_statements writes on PostgreSQL 15 (one parameter per IN
 *	  value) and 18 (squashed lists), comments, quoted identifiers that look
 *	  like SQL, renumbering, jsonb_build_object keys, write targets and the
 *	  :'name' substitution.  Built with ASan+UBSan like the other unit tests:
 *	  the texts come from other roles' statements.
 *
 * IDENTIFICATION
 *	  tests/unit/test_draft_normalize.c
 *
 *-------------------------------------------------------------------------
 */
#include "tap.h"
#include "draft/draft.h"

/*
 * The cqlbridge program is a short-lived process that, like the rest of
 * src/bridge/cli, leaves its allocations to exit: no leak report here
 * (ASan and UBSan still check every access).
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* normalize q; *in_list and *keys out */
static char *
norm(const char *q, bool *in_list, int *keys)
{
	bool		il;
	int			k;
	char	   *r = draft_normalize(q, &il, &k);

	if (in_list)
		*in_list = il;
	if (keys)
		*keys = k;
	return r;
}

int
main(void)
{
	bool		il;
	int			keys;
	char	   *pn[2] = {"hotel_id", "day"};
	char	   *pt[2] = {"text", "date"};

	plan(28);

	/* IN lists: 15's one parameter per value, 18's squashed list */
	is_str(norm("SELECT h.id FROM s.h h WHERE h.id IN ($1, $2, $3) AND h.x = $4", &il, NULL),
		   "SELECT h.id FROM s.h h WHERE h.id = ANY($1) AND h.x = $2", "15: IN ($1, $2, $3) -> = ANY($1), later parameters renumbered");
	ok(il, "15: the IN list is reported");
	is_str(norm("SELECT h.id FROM s.h h WHERE h.id IN ($1 /*, ... */) AND h.x = $2", &il, NULL),
		   "SELECT h.id FROM s.h h WHERE h.id = ANY($1) AND h.x = $2", "18: IN ($1 /*, ... */) -> = ANY($1)");
	is_str(draft_merge_key(norm("SELECT 1 FROM s.h WHERE a IN ($1,$2)", NULL, NULL)),
		   draft_merge_key(norm("SELECT 1 FROM s.h WHERE a in (\n  $1, $2, $3, $4 )", NULL, NULL)),
		   "lists of different lengths and layouts: one merge key");
	is_str(norm("SELECT 1 FROM s.h WHERE a NOT IN ($1, $2)", NULL, NULL),
		   "SELECT 1 FROM s.h WHERE a <> ALL($1)", "NOT IN -> <> ALL");
	is_str(norm("SELECT 1 FROM s.h WHERE a IN (SELECT b FROM s.t WHERE c = $1)", &il, NULL),
		   "SELECT 1 FROM s.h WHERE a IN (SELECT b FROM s.t WHERE c = $1)", "IN (subquery) is left alone");
	ok(!il, "... and is no IN list");
	is_str(norm("SELECT 1 FROM s.h WHERE a IN ($1, b)", NULL, NULL),
		   "SELECT 1 FROM s.h WHERE a IN ($1, b)", "IN with a column is left alone");
	is_str(norm("SELECT \"x IN ($1, $2)\" FROM s.h WHERE \"pin\" = $3", NULL, NULL),
		   "SELECT \"x IN ($1, $2)\" FROM s.h WHERE \"pin\" = $1", "a quoted identifier is never rewritten or renumbered");
	is_str(norm("SELECT 1 FROM s.h WHERE login IN ($1, $2)", NULL, NULL),
		   "SELECT 1 FROM s.h WHERE login = ANY($1)", "IN as a word only");
	is_str(norm("SELECT 1 FROM s.h WHERE join_in($1)", NULL, NULL),
		   "SELECT 1 FROM s.h WHERE join_in($1)", "no IN inside a name");

	/* numbering, comments, layout */
	is_str(norm("SELECT jsonb_build_object($2, t.b) AS j FROM s.t WHERE t.a = $1 LIMIT $3", &il, &keys),
		   "SELECT jsonb_build_object('b', t.b) AS j FROM s.t WHERE t.a = $1 LIMIT $2",
		   "a jsonb_build_object key gets its column's name back; the rest renumbered");
	is_int(keys, 1, "one key restored");
	is_str(norm("SELECT jsonb_build_object($1, a.street, $2, a.city) FROM s.a a WHERE a.id = $3", NULL, &keys),
		   "SELECT jsonb_build_object('street', a.street, 'city', a.city) FROM s.a a WHERE a.id = $1",
		   "several keys");
	is_str(norm("SELECT jsonb_build_object($1, a.x || a.y) FROM s.a a", NULL, &keys),
		   "SELECT jsonb_build_object($1, a.x || a.y) FROM s.a a", "a key of an expression is not guessed");
	is_str(norm("SELECT a -- note $9\n\n  FROM s.t /* c1 /* nested */ c2 */ WHERE b = $7;  ", NULL, NULL),
		   "SELECT a\n  FROM s.t  WHERE b = $1", "comments (nested too), blank lines, the final ; out");
	is_str(norm("SELECT 'it''s -- not a comment' FROM s.t", NULL, NULL),
		   "SELECT 'it''s -- not a comment' FROM s.t", "a literal is copied as it is");
	is_str(norm("SELECT $1", NULL, NULL), "SELECT $1", "a parameter at the end");
	is_str(norm("SELECT \"unterminated", NULL, NULL), "SELECT \"unterminated", "an unterminated quote does not overrun");
	is_str(draft_merge_key("  SELECT\ta\n FROM  s.t  "), "SELECT a FROM s.t", "merge key: white space collapsed");

	/* relations */
	ok(draft_mentions_schema("SELECT 1 FROM hotel_rel.hotel h", "hotel_rel"), "a qualified relation of the schema");
	ok(!draft_mentions_schema("SELECT 'hotel_rel.hotel' FROM other.t", "hotel_rel"), "not in a literal, not another schema");
	ok(draft_mentions_schema("SELECT 1 FROM \"Hotel Rel\".\"X\"", "Hotel Rel"), "a quoted schema");
	is_str(draft_write_target("UPDATE ONLY \"S\".\"T\" SET a = $1", "UPDATE"), "S.T", "UPDATE ONLY, quoted");
	is_str(draft_write_target("INSERT INTO hotel_rel.reservation (a) VALUES ($1)", "INSERT"),
		   "hotel_rel.reservation", "INSERT INTO");
	is_str(draft_write_target("DELETE FROM reservation WHERE a = $1", "DELETE"), NULL, "an unqualified target: none");

	/* substitution */
	is_str(draft_substitute("WHERE h.id = $1 AND d >= $2 AND e < $2::date", pn, pt, 2),
		   "WHERE h.id = :'hotel_id' AND d >= :'day'::date AND e < :'day'::date",
		   ":'name', cast when not text, no second cast");
	is_str(draft_ident("Hotel \"Main\" 2"), "hotel_main_2", "identifiers for names");
	return tap_failed != 0;
}

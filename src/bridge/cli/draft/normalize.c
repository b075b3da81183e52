/*-------------------------------------------------------------------------
 *
 * normalize.c
 *	  Statement texts of pg_stat_statements, made into workload SQL:
 *	  comments and blank lines out, IN lists of parameters as = ANY (so
 *	  lists of different lengths become one statement), the keys of
 *	  jsonb_build_object restored, parameters renumbered in order of use,
 *	  and :'name' parameters in place of $k.
 *
 * The texts are the server's normalized ones: every constant is a $k
 * already, so the only quoted tokens left are identifiers ("...") and the
 * rare literal pg_stat_statements kept; both are copied untouched.
 *
 * layer: command
 *
 * IDENTIFICATION
 *	  src/bridge/cli/draft/normalize.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "draft/draft.h"

/*
 * quoted_end
 *		When s[i] opens a quoted token ('...' or "..."), the index after
 *		it (a doubled quote stays inside); else i.
 */
static size_t
quoted_end(const char *s, size_t i)
{
	char		q = s[i];

	if (q != '\'' && q != '"')
		return i;
	for (i++; s[i]; i++)
		if (s[i] == q)
		{
			if (s[i + 1] == q)
				i++;
			else
				return i + 1;
		}
	return i;
}

/*
 * copy_quoted
 *		When s[*i] opens a quoted token, append it to sb whole, move *i past
 *		it and return true: every pass below copies quoted tokens untouched.
 */
static bool
copy_quoted(StrBuf *sb, const char *s, size_t *i)
{
	size_t		e = quoted_end(s, *i);

	if (e == *i)
		return false;
	for (; *i < e; (*i)++)
		sb_appendc(sb, s[*i]);
	return true;
}

/* an identifier character (PostgreSQL's: letters, digits, _, $, non-ASCII) */
static bool
is_ident_char(char c)
{
	return isalnum((unsigned char) c) || c == '_' || c == '$' || (unsigned char) c >= 0x80;
}

/*
 * word_at
 *		Whether the keyword kw (upper case) starts at s + i as a whole word.
 */
static bool
word_at(const char *s, size_t i, const char *kw)
{
	size_t		n = strlen(kw);

	if (i > 0 && is_ident_char(s[i - 1]))
		return false;
	if (strncasecmp(s + i, kw, n) != 0)
		return false;
	return !is_ident_char(s[i + n]);
}

/* "$digits" at s + i (not inside a word): its number, and its end in *end */
static int
param_at(const char *s, size_t i, size_t *end)
{
	size_t		j = i + 1;
	int			n = 0;

	if (s[i] != '$' || !isdigit((unsigned char) s[j]) || (i > 0 && is_ident_char(s[i - 1])))
		return 0;
	while (isdigit((unsigned char) s[j]))
		n = n * 10 + (s[j++] - '0');
	if (is_ident_char(s[j]))
		return 0;
	*end = j;
	return n;
}

/*
 * strip_comments
 *		The text without comments, blank lines, trailing blanks and a final
 *		";" (the block format forbids comment lines and blank lines inside
 *		a statement, and ends a statement at the first line ending in ";").
 */
static char *
strip_comments(const char *q)
{
	StrBuf		sb;
	StrBuf		out;
	size_t		i = 0;

	sb_init(&sb);
	while (q[i])
	{
		if (copy_quoted(&sb, q, &i))
			continue;
		if (q[i] == '-' && q[i + 1] == '-')
		{
			while (q[i] && q[i] != '\n')
				i++;
			continue;
		}
		if (q[i] == '/' && q[i + 1] == '*')
		{
			int			depth = 0;

			do
			{
				if (q[i] == '/' && q[i + 1] == '*')
				{
					depth++;
					i += 2;
				}
				else if (q[i] == '*' && q[i + 1] == '/')
				{
					depth--;
					i += 2;
				}
				else
					i++;
			} while (q[i] && depth > 0);
			continue;
		}
		sb_appendc(&sb, q[i] == '\t' || q[i] == '\r' ? ' ' : q[i]);
		i++;
	}

	/* lines: trailing blanks and blank lines out */
	sb_init(&out);
	for (char *line = sb.data, *next; line && *line; line = next)
	{
		char	   *nl = strchr(line, '\n');
		size_t		len = nl ? (size_t) (nl - line) : strlen(line);

		next = nl ? nl + 1 : NULL;
		while (len > 0 && line[len - 1] == ' ')
			len--;
		if (len == 0)
			continue;
		if (out.len)
			sb_appendc(&out, '\n');
		for (size_t k = 0; k < len; k++)
			sb_appendc(&out, line[k]);
	}
	sb_free(&sb);
	if (out.data == NULL)
		sb_append(&out, "");
	while (out.len > 0 && (out.data[out.len - 1] == ';' || out.data[out.len - 1] == ' '))
		out.data[--out.len] = '\0';
	return out.data;
}

/*
 * restore_object_keys
 *		pg_stat_statements replaces the keys of jsonb_build_object('street',
 *		a.street, ...) by parameters too; a workload needs them (they name
 *		the fields of the UDT).  A key parameter followed by a plain column
 *		reference gets that column's name back as its key (the convention
 *		of the workload files); *n counts them, for the description.
 */
static char *
restore_object_keys(const char *s, int *n)
{
	StrBuf		sb;
	size_t		i = 0;

	sb_init(&sb);
	*n = 0;
	while (s[i])
	{
		if (copy_quoted(&sb, s, &i))
			continue;
		if ((word_at(s, i, "JSONB_BUILD_OBJECT") || word_at(s, i, "JSON_BUILD_OBJECT")))
		{
			size_t		k = i;

			while (s[k] && s[k] != '(')
				sb_appendc(&sb, s[k++]);
			if (s[k] != '(')
			{
				i = k;
				continue;
			}
			sb_appendc(&sb, s[k++]);
			/* pairs "$p, alias.column" */
			for (;;)
			{
				size_t		pe;
				size_t		c;
				size_t		last;

				while (s[k] == ' ' || s[k] == '\n')
					sb_appendc(&sb, s[k++]);
				if (param_at(s, k, &pe) == 0)
					break;
				c = pe;
				while (s[c] == ' ' || s[c] == '\n')
					c++;
				if (s[c] != ',')
					break;
				c++;
				while (s[c] == ' ' || s[c] == '\n')
					c++;
				/* a column reference: ident(.ident)* of plain identifiers */
				last = c;
				{
					size_t		w = c;
					size_t		wstart = c;

					while (is_ident_char(s[w]) && s[w] != '$')
					{
						wstart = w;
						while (is_ident_char(s[w]) && s[w] != '$')
							w++;
						last = w;
						if (s[w] != '.')
							break;
						w++;
					}
					if (last == c)
						break;
					/* a plain column only: followed by "," or ")" */
					{
						size_t		a = last;

						while (s[a] == ' ' || s[a] == '\n')
							a++;
						if (s[a] != ',' && s[a] != ')')
							break;
					}
					{
						char	   *col = bridge_trim_copy(s + wstart, last - wstart);

						for (char *p = col; *p; p++)
							*p = (char) tolower((unsigned char) *p);
						sb_appendf(&sb, "'%s'", col);
						(*n)++;
						free(col);
					}
				}
				for (size_t t = pe; t < last; t++)
					sb_appendc(&sb, s[t]);
				k = last;
				while (s[k] == ' ' || s[k] == '\n')
					sb_appendc(&sb, s[k++]);
				if (s[k] != ',')
					break;
				sb_appendc(&sb, s[k++]);
			}
			i = k;
			continue;
		}
		sb_appendc(&sb, s[i++]);
	}
	return sb.data;
}

/*
 * rewrite_in_lists
 *		"x IN ($1, $2, $3)" (15: one parameter per value) and 18's squashed
 *		list (one parameter and a comment, stripped already) become
 *		"x = ANY($1)", "x NOT IN (...)" "x <> ALL($1)": a list of any length
 *		is then the same statement.
 */
static char *
rewrite_in_lists(const char *s, bool *in_list)
{
	StrBuf		sb;
	size_t		i = 0;

	sb_init(&sb);
	while (s[i])
	{
		if (copy_quoted(&sb, s, &i))
			continue;
		if (word_at(s, i, "IN"))
		{
			size_t		k = i + 2;
			size_t		pe;
			int			first = 0;
			bool		ok = false;

			while (s[k] == ' ' || s[k] == '\n')
				k++;
			if (s[k] == '(')
			{
				k++;
				for (;;)
				{
					int			pn;

					while (s[k] == ' ' || s[k] == '\n')
						k++;
					pn = param_at(s, k, &pe);
					if (pn == 0)
						break;
					if (first == 0)
						first = pn;
					k = pe;
					while (s[k] == ' ' || s[k] == '\n')
						k++;
					if (s[k] == ')')
					{
						ok = true;
						k++;
						break;
					}
					if (s[k] != ',')
						break;
					k++;
				}
			}
			if (ok)
			{
				bool		negated = false;

				/* "NOT IN": drop the NOT already copied */
				if (sb.len >= 4)
				{
					size_t		b = sb.len;

					while (b > 0 && (sb.data[b - 1] == ' ' || sb.data[b - 1] == '\n'))
						b--;
					if (b >= 3 && strncasecmp(sb.data + b - 3, "NOT", 3) == 0 &&
						(b == 3 || !is_ident_char(sb.data[b - 4])))
					{
						sb.len = b - 3;
						sb.data[sb.len] = '\0';
						negated = true;
					}
				}
				sb_appendf(&sb, "%s($%d)", negated ? "<> ALL" : "= ANY", first);
				*in_list = true;
				i = k;
				continue;
			}
		}
		sb_appendc(&sb, s[i++]);
	}
	return sb.data;
}

/*
 * renumber_params
 *		$k renumbered $1, $2, ... in order of first use: statements that
 *		differ only in the numbering (constants pg_stat_statements
 *		numbered in another order, parameters a list rewrite dropped)
 *		become the same text, and "-- params:" lists them in that order.
 */
static char *
renumber_params(const char *s)
{
	StrBuf		sb;
	size_t		i = 0;
	int		   *map = NULL;
	int			nmap = 0;
	int			next = 0;

	sb_init(&sb);
	while (s[i])
	{
		size_t		pe;
		int			pn;

		if (copy_quoted(&sb, s, &i))
			continue;
		pn = param_at(s, i, &pe);
		if (pn > 0 && pn < 65536)
		{
			if (pn >= nmap)
			{
				map = bridge_realloc(map, sizeof(int) * (pn + 1));
				if (!map)
					bridge_fatal("out of memory");
				memset(map + nmap, 0, sizeof(int) * (pn + 1 - nmap));
				nmap = pn + 1;
			}
			if (map[pn] == 0)
				map[pn] = ++next;
			sb_appendf(&sb, "$%d", map[pn]);
			i = pe;
			continue;
		}
		sb_appendc(&sb, s[i++]);
	}
	free(map);
	return sb.data;
}

/*
 * draft_normalize
 *		The workload form of a pg_stat_statements text (see the file
 *		header); *in_list when an IN list was rewritten, *nrestored the
 *		jsonb_build_object keys restored.
 */
char *
draft_normalize(const char *query, bool *in_list, int *nrestored)
{
	char	   *a = strip_comments(query);
	char	   *b = restore_object_keys(a, nrestored);
	char	   *c;
	char	   *d;

	*in_list = false;
	c = rewrite_in_lists(b, in_list);
	d = renumber_params(c);
	free(a);
	free(b);
	free(c);
	return d;
}

/*
 * draft_merge_key
 *		The text with every run of white space one space: statements that
 *		differ only in layout are one statement.
 */
char *
draft_merge_key(const char *text)
{
	StrBuf		sb;
	bool		space = false;

	sb_init(&sb);
	for (const char *p = text; *p; p++)
	{
		if (isspace((unsigned char) *p))
		{
			space = true;
			continue;
		}
		if (space && sb.len)
			sb_appendc(&sb, ' ');
		space = false;
		sb_appendc(&sb, *p);
	}
	if (sb.data == NULL)
		sb_append(&sb, "");
	return sb.data;
}

/*
 * draft_first_word
 *		The first keyword of a statement, upper case ("SELECT", "INSERT",
 *		...; "(" for a parenthesized one).
 */
char *
draft_first_word(const char *text)
{
	const char *p = text;
	const char *w;
	char	   *r;

	while (isspace((unsigned char) *p) || *p == '(')
		p++;
	w = p;
	while (isalpha((unsigned char) *p))
		p++;
	r = bridge_trim_copy(w, (size_t) (p - w));
	for (char *c = r; *c; c++)
		*c = (char) toupper((unsigned char) *c);
	return r;
}

/*
 * draft_ident
 *		A name as a plain workload identifier: lower case [a-z0-9_], other
 *		characters as "_" (allocated); "p" when nothing is left.
 */
char *
draft_ident(const char *s)
{
	StrBuf		sb;
	bool		us = false;

	sb_init(&sb);
	for (const char *p = s; *p; p++)
	{
		if (isalnum((unsigned char) *p) && (unsigned char) *p < 0x80)
		{
			sb_appendc(&sb, (char) tolower((unsigned char) *p));
			us = false;
		}
		else if (!us && sb.len)
		{
			sb_appendc(&sb, '_');
			us = true;
		}
	}
	while (sb.len > 0 && sb.data[sb.len - 1] == '_')
		sb.data[--sb.len] = '\0';
	if (sb.len == 0)
		sb_append(&sb, "p");
	return sb.data;
}

/*
 * name_at
 *		One SQL name at s + *i (plain, case-folded to lower case, or
 *		"quoted" with "" unescaped), *i moved past it; NULL if none.
 */
static char *
name_at(const char *s, size_t *i)
{
	StrBuf		sb;
	size_t		k = *i;

	sb_init(&sb);
	if (s[k] == '"')
	{
		for (k++; s[k]; k++)
		{
			if (s[k] == '"')
			{
				if (s[k + 1] != '"')
					break;
				k++;
			}
			sb_appendc(&sb, s[k]);
		}
		if (s[k] != '"')
			return NULL;
		k++;
	}
	else
	{
		while (is_ident_char(s[k]) && s[k] != '$')
			sb_appendc(&sb, (char) tolower((unsigned char) s[k++]));
		if (sb.len == 0)
			return NULL;
	}
	*i = k;
	return sb.data;
}

/*
 * draft_mentions_schema
 *		Does the text name a relation of schema, qualified ("schema.x" or
 *		"\"Schema\".x")?  The workload format requires qualified names, so
 *		a statement that relies on its search_path is not drafted.
 */
bool
draft_mentions_schema(const char *text, const char *schema)
{
	char	   *rel = draft_first_relation(text, schema);
	bool		found = rel != NULL;

	free(rel);
	return found;
}

/*
 * draft_first_relation
 *		The first relation of schema the text names qualified ("schema.x"):
 *		x unquoted (allocated), or NULL.
 */
char *
draft_first_relation(const char *text, const char *schema)
{
	size_t		i = 0;

	while (text[i])
	{
		if (text[i] == '\'')
		{
			i = quoted_end(text, i);
			continue;
		}
		if ((text[i] == '"' || is_ident_char(text[i])) && (i == 0 || !is_ident_char(text[i - 1])))
		{
			size_t		k = i;
			char	   *nm = name_at(text, &k);

			if (nm && text[k] == '.' && strcmp(nm, schema) == 0)
			{
				size_t		r = k + 1;
				char	   *rel = name_at(text, &r);

				free(nm);
				nm = NULL;
				if (rel)
					return rel;
			}
			free(nm);
			i = k > i ? k : i + 1;
			continue;
		}
		i++;
	}
	return NULL;
}

/*
 * draft_write_target
 *		The relation an INSERT INTO / UPDATE [ONLY] / DELETE FROM [ONLY]
 *		writes, as "schema.table" of the unquoted names (NULL when it is not
 *		schema-qualified or the text is of another shape).
 */
char *
draft_write_target(const char *text, const char *op)
{
	size_t		i = 0;
	char	   *sch;
	char	   *rel;

	while (isspace((unsigned char) text[i]))
		i++;
	if (!word_at(text, i, op))
		return NULL;
	i += strlen(op);
	while (isspace((unsigned char) text[i]))
		i++;
	if (strcmp(op, "INSERT") == 0 || strcmp(op, "DELETE") == 0)
	{
		const char *kw = strcmp(op, "INSERT") == 0 ? "INTO" : "FROM";

		if (!word_at(text, i, kw))
			return NULL;
		i += 4;
		while (isspace((unsigned char) text[i]))
			i++;
	}
	if (strcmp(op, "INSERT") != 0 && word_at(text, i, "ONLY"))
	{
		i += 4;
		while (isspace((unsigned char) text[i]))
			i++;
	}
	sch = name_at(text, &i);
	if (!sch || text[i] != '.')
		return NULL;
	i++;
	rel = name_at(text, &i);
	if (!rel)
		return NULL;
	{
		char	   *r = bridge_printf("%s.%s", sch, rel);

		free(sch);
		free(rel);
		return r;
	}
}

/*
 * draft_substitute
 *		$k replaced by :'name' of parameter k, with a cast to its type
 *		unless the type is text or the text casts it already (the workload
 *		format: "an explicit cast when the type is not text").
 */
char *
draft_substitute(const char *text, char **pnames, char **ptypes, int nparams)
{
	StrBuf		sb;
	size_t		i = 0;

	sb_init(&sb);
	while (text[i])
	{
		size_t		pe;
		int			pn;

		if (copy_quoted(&sb, text, &i))
			continue;
		pn = param_at(text, i, &pe);
		if (pn > 0 && pn <= nparams)
		{
			sb_appendf(&sb, ":'%s'", pnames[pn - 1]);
			if (strcmp(ptypes[pn - 1], "text") != 0 &&
				!(text[pe] == ':' && text[pe + 1] == ':'))
				sb_appendf(&sb, "::%s", ptypes[pn - 1]);
			i = pe;
			continue;
		}
		sb_appendc(&sb, text[i++]);
	}
	return sb.data;
}

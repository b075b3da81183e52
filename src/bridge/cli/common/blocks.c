/*-------------------------------------------------------------------------
 *
 * blocks.c
 *	  Reader of the block-format files: workload.sql and the generated
 *	  003_load.sql and 004_verify.sql.
 *
 * The format (docs/cqlbridge-design.md, section 2): metadata lines
 * "-- key: value", then statements; a statement ends at the first line
 * whose last character is ';'; blocks are separated by blank lines; the
 * comment-only paragraphs before the first block are the header.  In
 * 004_verify.sql a block holds several statements, each introduced by a
 * "-- word" line (sample, source, target).  Anything else is an error
 * naming the file and line: a damaged file must stop a command before it
 * changes anything.
 *
 * layer: common
 *
 * IDENTIFICATION
 *	  src/bridge/cli/common/blocks.c
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

/* ------------------------------------------------------------------------
 * Block-format reader
 * ------------------------------------------------------------------------
 */

typedef struct Line
{
	char	   *text;			/* without the newline and trailing blanks */
	int			lineno;
} Line;

/*
 * bridge_is_blank
 *		True when s holds nothing but white space (a line that separates
 *		blocks).
 */
bool
bridge_is_blank(const char *s)
{
	for (; *s; s++)
		if (!isspace((unsigned char) *s))
			return false;
	return true;
}

/*
 * is_comment
 *		A "--" comment line of a block file (metadata lines are comments too).
 */
static bool
is_comment(const char *s)
{
	return s[0] == '-' && s[1] == '-';
}

/*
 * bridge_trim_copy
 *		A copy (allocated) of the n bytes at s without leading and trailing
 *		white space.
 */
char *
bridge_trim_copy(const char *s, size_t n)
{
	while (n > 0 && isspace((unsigned char) *s))
	{
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char) s[n - 1]))
		n--;
	{
		char	   *p = bridge_malloc(n + 1);

		memcpy(p, s, n);
		p[n] = '\0';
		return p;
	}
}

/*
 * "-- key: value" with key made of letters, digits and '_'.  Returns true
 * and the parts (allocated) when the line is one.
 */
static bool
parse_meta(const char *line, char **key, char **value)
{
	const char *p;
	const char *k;

	if (!is_comment(line))
		return false;
	p = line + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	k = p;
	while (isalnum((unsigned char) *p) || *p == '_')
		p++;
	if (p == k || *p != ':')
		return false;
	if (p[1] != '\0' && p[1] != ' ' && p[1] != '\t')
		return false;
	*key = bridge_trim_copy(k, (size_t) (p - k));
	*value = bridge_trim_copy(p + 1, strlen(p + 1));
	return true;
}

/* "-- word" (a section heading of 004); returns the word or NULL */
static char *
parse_section(const char *line)
{
	const char *p;
	const char *w;

	if (!is_comment(line))
		return NULL;
	p = line + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	w = p;
	while (isalnum((unsigned char) *p) || *p == '_')
		p++;
	if (p == w || !bridge_is_blank(p))
		return NULL;
	return bridge_trim_copy(w, (size_t) (p - w));
}

/*
 * block_add_meta
 *		Append a "-- key: value" pair to a block (the block owns key and
 *		value).
 */
static void
block_add_meta(BridgeBlock *b, char *key, char *value)
{
	b->keys = bridge_realloc(b->keys, sizeof(char *) * (b->nmeta + 1));
	b->values = bridge_realloc(b->values, sizeof(char *) * (b->nmeta + 1));
	if (!b->keys || !b->values)
		bridge_fatal("out of memory");
	b->keys[b->nmeta] = key;
	b->values[b->nmeta] = value;
	b->nmeta++;
}

/*
 * block_add_section
 *		Append a named statement to a block (the block owns name and sql).
 */
static void
block_add_section(BridgeBlock *b, char *name, char *sql)
{
	b->section_names = bridge_realloc(b->section_names, sizeof(char *) * (b->nsections + 1));
	b->section_sql = bridge_realloc(b->section_sql, sizeof(char *) * (b->nsections + 1));
	if (!b->section_names || !b->section_sql)
		bridge_fatal("out of memory");
	b->section_names[b->nsections] = name;
	b->section_sql[b->nsections] = sql;
	b->nsections++;
}

/* Parse one paragraph (lines[0..n-1], no blank line) into a block. */
static void
parse_block(const char *path, Line *lines, int n, BridgeBlock *b)
{
	int			i = 0;
	char	   *key;
	char	   *value;

	memset(b, 0, sizeof(*b));
	b->line = lines[0].lineno;
	while (i < n && parse_meta(lines[i].text, &key, &value))
	{
		block_add_meta(b, key, value);
		i++;
	}
	if (b->nmeta == 0)
		bridge_fatal_hint("A block starts with metadata lines \"-- key: value\"; see docs/cqlbridge-design.md.",
						  "%s:%d: expected a metadata line \"-- key: value\", found \"%s\"",
						  path, lines[0].lineno, lines[0].text);

	while (i < n)
	{
		char	   *name;
		StrBuf		sql;
		int			start;
		bool		ended = false;

		name = parse_section(lines[i].text);
		if (name)
		{
			i++;
			if (i >= n)
				bridge_fatal("%s:%d: section \"-- %s\" has no statement",
							 path, lines[i - 1].lineno, name);
		}
		else if (is_comment(lines[i].text))
		{
			char	   *k2;
			char	   *v2;

			if (parse_meta(lines[i].text, &k2, &v2))
				bridge_fatal_hint("Metadata lines come first in a block, before any statement.",
								  "%s:%d: metadata line \"%s\" after a statement",
								  path, lines[i].lineno, lines[i].text);
			bridge_fatal("%s:%d: unexpected comment line \"%s\" between statements",
						 path, lines[i].lineno, lines[i].text);
		}
		else
		{
			if (b->nsections > 0)
				bridge_fatal_hint("Separate blocks by one blank line; name further statements of a block with a \"-- word\" line.",
								  "%s:%d: a second statement without a section line",
								  path, lines[i].lineno);
			name = bridge_strdup("");
		}
		for (int s = 0; s < b->nsections; s++)
			if (strcmp(b->section_names[s], name) == 0)
				bridge_fatal("%s:%d: section \"%s\" appears twice in the block starting at line %d",
							 path, lines[i].lineno, name, b->line);

		sb_init(&sql);
		start = i;
		while (i < n)
		{
			const char *t = lines[i].text;
			size_t		len = strlen(t);

			if (i > start)
				sb_append(&sql, "\n");
			i++;
			if (len > 0 && t[len - 1] == ';')
			{
				char	   *last = bridge_strdup(t);

				last[len - 1] = '\0';
				sb_append(&sql, last);
				free(last);
				ended = true;
				break;
			}
			sb_append(&sql, t);
		}
		if (!ended)
			bridge_fatal_hint("A statement ends at the first line whose last character is \";\".",
							  "%s:%d: statement starting here does not end with \";\"",
							  path, lines[start].lineno);
		block_add_section(b, name, sql.data);
	}
	if (b->nsections == 0)
		bridge_fatal("%s:%d: block without a statement", path, b->line);
}

/*
 * read_blocks
 *		The reader of bridge_read_blocks and bridge_read_workload_blocks;
 *		skip_comment_paragraphs: a comment-only paragraph after the header
 *		is skipped rather than an error.
 */
static BridgeBlockFile *
read_blocks(const char *path, bool skip_comment_paragraphs)
{
	char	   *text = bridge_read_file(path);
	BridgeBlockFile *f = bridge_malloc(sizeof(BridgeBlockFile));
	Line	   *lines = NULL;
	int			nlines = 0;
	int			cap = 0;
	StrBuf		header;
	int			i;
	bool		in_header = true;

	memset(f, 0, sizeof(*f));
	f->path = bridge_strdup(path);

	/* split into lines, dropping \r and trailing blanks */
	for (char *p = text, *next; *p; p = next)
	{
		char	   *nl = strchr(p, '\n');
		size_t		len = nl ? (size_t) (nl - p) : strlen(p);

		next = nl ? nl + 1 : p + len;
		while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (nlines == cap)
		{
			cap = cap ? cap * 2 : 256;
			lines = bridge_realloc(lines, sizeof(Line) * cap);
			if (!lines)
				bridge_fatal("out of memory");
		}
		lines[nlines].text = bridge_malloc(len + 1);
		memcpy(lines[nlines].text, p, len);
		lines[nlines].text[len] = '\0';
		lines[nlines].lineno = nlines + 1;
		nlines++;
	}

	sb_init(&header);
	i = 0;
	while (i < nlines)
	{
		int			start;
		bool		all_comments = true;

		while (i < nlines && bridge_is_blank(lines[i].text))
			i++;
		if (i >= nlines)
			break;
		start = i;
		while (i < nlines && !bridge_is_blank(lines[i].text))
		{
			if (!is_comment(lines[i].text))
				all_comments = false;
			i++;
		}

		/*
		 * Leading paragraphs of comment lines only are the header (they may
		 * contain lines that look like metadata, e.g. workload.sql's
		 * "-- CONVENTIONS:").  A comment-only paragraph later is an error: a
		 * block must have a statement.
		 */
		if (in_header && all_comments)
		{
			for (int j = start; j < i; j++)
			{
				sb_append(&header, lines[j].text);
				sb_append(&header, "\n");
			}
			continue;
		}
		if (all_comments && skip_comment_paragraphs)
			continue;

		in_header = false;
		f->blocks = bridge_realloc(f->blocks, sizeof(BridgeBlock) * (f->nblocks + 1));
		if (!f->blocks)
			bridge_fatal("out of memory");
		parse_block(path, lines + start, i - start, &f->blocks[f->nblocks]);
		f->nblocks++;
	}
	f->header = header.data;
	for (i = 0; i < nlines; i++)
		free(lines[i].text);
	free(lines);
	free(text);
	return f;
}

/*
 * bridge_read_blocks
 *		Read a block-format file (docs/cqlbridge-design.md, section 2): the
 *		header comment lines, then blocks separated by blank lines, each
 *		metadata lines and statements.  A malformed block is fatal with
 *		file:line; so is a comment-only paragraph after the first block
 *		(the generated files have none).
 */
BridgeBlockFile *
bridge_read_blocks(const char *path)
{
	return read_blocks(path, false);
}

/*
 * bridge_read_workload_blocks
 *		bridge_read_blocks for a workload file, where a paragraph of comment
 *		lines between blocks is a query commented out (the drafted
 *		workload writes those the mapping cannot serve so), skipped.
 */
BridgeBlockFile *
bridge_read_workload_blocks(const char *path)
{
	return read_blocks(path, true);
}

/*
 * bridge_block_get
 *		The value of the first "-- key:" line of a block, or NULL.
 */
const char *
bridge_block_get(const BridgeBlock *b, const char *key)
{
	for (int i = 0; i < b->nmeta; i++)
		if (strcmp(b->keys[i], key) == 0)
			return b->values[i];
	return NULL;
}

/*
 * bridge_block_sql
 *		The statement of a block's section ("" = the one right after the
 *		metadata), or NULL.
 */
const char *
bridge_block_sql(const BridgeBlock *b, const char *section)
{
	for (int i = 0; i < b->nsections; i++)
		if (strcmp(b->section_names[i], section) == 0)
			return b->section_sql[i];
	return NULL;
}

/*
 * bridge_block_require
 *		The value of a metadata key the block must have; fatal with
 *		file:line and a hint to plan again when it is missing or empty.
 */
const char *
bridge_block_require(const BridgeBlockFile *f, const BridgeBlock *b, const char *key)
{
	const char *v = bridge_block_get(b, key);

	if (v == NULL || v[0] == '\0')
		bridge_fatal_hint("Run \"cqlbridge plan\" again to regenerate the directory.",
						  "%s:%d: block has no \"-- %s:\" line", f->path, b->line, key);
	return v;
}

/*
 * bridge_header_get
 *		The value of a "-- key: value" line of a file's header text
 *		(allocated), or NULL.
 */
char *
bridge_header_get(const char *text, const char *key)
{
	const char *p = text;

	while (p && *p)
	{
		const char *nl = strchr(p, '\n');
		size_t		len = nl ? (size_t) (nl - p) : strlen(p);
		char	   *line = bridge_trim_copy(p, len);
		char	   *k;
		char	   *v;

		if (parse_meta(line, &k, &v))
		{
			bool		match = strcmp(k, key) == 0;

			free(k);
			free(line);
			if (match)
				return v;
			free(v);
		}
		else
			free(line);
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/*
 * bridge_split_list
 *		Split "a, b, c" at commas into trimmed, non-empty items (allocated);
 *		for lists without quoted names (bridge_split_idents handles those).
 */
char **
bridge_split_list(const char *list, int *n)
{
	char	  **items = NULL;
	const char *p = list;

	*n = 0;
	while (p && *p)
	{
		const char *comma = strchr(p, ',');
		size_t		len = comma ? (size_t) (comma - p) : strlen(p);
		char	   *item = bridge_trim_copy(p, len);

		if (item[0] != '\0')
		{
			items = bridge_realloc(items, sizeof(char *) * (*n + 1));
			if (!items)
				bridge_fatal("out of memory");
			items[(*n)++] = item;
		}
		else
			free(item);
		p = comma ? comma + 1 : NULL;
	}
	return items;
}

/*
 * table_matches
 *		Does the selection name the target "keyspace.table" (whole, or its
 *		table part)?
 */
static bool
table_matches(const char *sel, const char *target)
{
	const char *dot = strrchr(target, '.');

	return strcmp(sel, target) == 0 || (dot && strcmp(sel, dot + 1) == 0);
}

/*
 * bridge_select_tables
 *		--table: the blocks of f whose "-- table:" is selected, in file
 *		order; a selection that names no table of the file is fatal, with
 *		the names it has (a typo must not load or check nothing quietly).
 */
void
bridge_select_tables(BridgeBlockFile *f, const BridgeOptions *opts)
{
	int			kept = 0;

	if (opts->ntables == 0)
		return;
	for (int s = 0; s < opts->ntables; s++)
	{
		bool		found = false;
		StrBuf		names;

		for (int i = 0; i < f->nblocks; i++)
		{
			const char *t = bridge_block_get(&f->blocks[i], "table");

			if (t && table_matches(opts->tables[s], t))
				found = true;
		}
		if (found)
			continue;
		sb_init(&names);
		for (int i = 0; i < f->nblocks; i++)
		{
			const char *t = bridge_block_get(&f->blocks[i], "table");

			if (t && !strstr(names.data ? names.data : "", t))
				sb_appendf(&names, "%s%s", names.len ? ", " : "", t);
		}
		bridge_fatal_hint(bridge_printf("The tables of %s: %s.", f->path, names.data ? names.data : "none"),
						  "--table %s names no table of %s", opts->tables[s], f->path);
	}
	for (int i = 0; i < f->nblocks; i++)
	{
		const char *t = bridge_block_get(&f->blocks[i], "table");
		bool		keep = false;

		for (int s = 0; s < opts->ntables && t; s++)
			keep |= table_matches(opts->tables[s], t);
		if (keep)
			f->blocks[kept++] = f->blocks[i];
	}
	f->nblocks = kept;
}

/*
 * bridge_json_string
 *		s as a JSON string: quoted, with '"', '\\' and control characters
 *		escaped (names may hold anything but NUL).
 */
void
bridge_json_string(StrBuf *sb, const char *s)
{
	sb_appendc(sb, '"');
	for (const unsigned char *c = (const unsigned char *) (s ? s : ""); *c; c++)
	{
		if (*c == '"' || *c == '\\')
		{
			sb_appendc(sb, '\\');
			sb_appendc(sb, (char) *c);
		}
		else if (*c < 0x20)
			sb_appendf(sb, "\\u%04x", *c);
		else
			sb_appendc(sb, (char) *c);
	}
	sb_appendc(sb, '"');
}


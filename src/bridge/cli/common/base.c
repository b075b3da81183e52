/*-------------------------------------------------------------------------
 *
 * base.c
 *	  The lowest pieces of the cqlbridge program: error exits, allocation,
 *	  a growable string and file I/O.  Everything else of the program
 *	  builds on these; they call nothing of it.
 *
 * layer: common
 *
 * IDENTIFICATION
 *	  src/bridge/cli/common/base.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/common.h"

/* ------------------------------------------------------------------------
 * Errors and allocation
 * ------------------------------------------------------------------------
 */

/*
 * vfatal
 *		Print "cqlbridge: " + the message (and a "HINT:  ..." line when hint
 *		is given) to stderr, after what stdout holds, and exit with status 2;
 *		or, with a catcher set, hand them to it.
 */
BridgeCatch *bridge_catcher = NULL;

/*
 * bridge_throw
 *		Hand an error to the catcher set (bridge_catcher, which is cleared:
 *		an error while handling one ends the command).
 */
void
bridge_throw(char *message, char *hint)
{
	BridgeCatch *c = bridge_catcher;

	bridge_catcher = NULL;
	c->message = message;
	c->hint = hint;
	longjmp(c->jump, 1);
}

static __attribute__((noreturn)) void
vfatal(const char *hint, const char *fmt, va_list ap)
{
	if (bridge_catcher != NULL)
	{
		BridgeCatch *c = bridge_catcher;
		char	   *msg;

		/* an error while formatting it (out of memory) is not caught */
		bridge_catcher = NULL;
		msg = bridge_vprintf(fmt, ap);
		bridge_catcher = c;
		bridge_throw(msg, hint ? bridge_strdup(hint) : NULL);
	}
	fflush(stdout);
	fputs("cqlbridge: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	if (hint)
		fprintf(stderr, "HINT:  %s\n", hint);
	exit(BRIDGE_EXIT_ERROR);
}

/*
 * bridge_fatal
 *		Report an error the command cannot go on after and exit (status 1).
 */
void
bridge_fatal(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vfatal(NULL, fmt, ap);
}

/*
 * bridge_fatal_hint
 *		bridge_fatal with a second line saying what the user can do about it.
 */
void
bridge_fatal_hint(const char *hint, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vfatal(hint, fmt, ap);
}

/*
 * bridge_malloc
 *		malloc that exits on failure (and never returns NULL, not even for 0).
 */
void *
bridge_malloc(size_t size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
		bridge_fatal("out of memory (%zu bytes)", size);
	return p;
}

/*
 * bridge_realloc
 *		realloc that exits on failure.
 */
void *
bridge_realloc(void *ptr, size_t size)
{
	void	   *p = realloc(ptr, size ? size : 1);

	if (p == NULL)
		bridge_fatal("out of memory (%zu bytes)", size);
	return p;
}

/*
 * bridge_strdup
 *		A malloc'ed copy of s; exits when out of memory.
 */
char *
bridge_strdup(const char *s)
{
	size_t		n = strlen(s) + 1;
	char	   *p = bridge_malloc(n);

	memcpy(p, s, n);
	return p;
}

/*
 * bridge_vprintf
 *		The text of a printf format and its arguments, allocated to fit.
 */
char *
bridge_vprintf(const char *fmt, va_list ap)
{
	va_list		ap2;
	int			n;
	char	   *p;
	char		probe[1];

	if (fmt == NULL)			/* never, but sanitizer builds cannot tell */
		fmt = "";
	va_copy(ap2, ap);
	n = vsnprintf(probe, sizeof(probe), fmt, ap2);
	va_end(ap2);
	if (n < 0)
		bridge_fatal("could not format a message");
	p = bridge_malloc((size_t) n + 1);
	vsnprintf(p, (size_t) n + 1, fmt, ap);
	return p;
}

/*
 * bridge_printf
 *		bridge_vprintf with the arguments given inline (an allocated sprintf).
 */
char *
bridge_printf(const char *fmt,...)
{
	va_list		ap;
	char	   *p;

	va_start(ap, fmt);
	p = bridge_vprintf(fmt, ap);
	va_end(ap);
	return p;
}

/* ------------------------------------------------------------------------
 * Growable string
 * ------------------------------------------------------------------------
 */

/*
 * sb_init
 *		Start an empty growable string (data is always NUL-terminated).
 */
void
sb_init(StrBuf *sb)
{
	sb->cap = 256;
	sb->len = 0;
	sb->data = bridge_malloc(sb->cap);
	sb->data[0] = '\0';
}

/*
 * sb_reserve
 *		Make room for more bytes and the terminating NUL, doubling the buffer.
 */
static void
sb_reserve(StrBuf *sb, size_t more)
{
	if (sb->len + more + 1 <= sb->cap)
		return;
	while (sb->len + more + 1 > sb->cap)
		sb->cap *= 2;
	sb->data = bridge_realloc(sb->data, sb->cap);
}

/*
 * sb_append
 *		Append a string.
 */
void
sb_append(StrBuf *sb, const char *s)
{
	size_t		n = strlen(s);

	sb_reserve(sb, n);
	memcpy(sb->data + sb->len, s, n + 1);
	sb->len += n;
}

/*
 * sb_appendn
 *		Append n bytes of s (no NUL among them).
 */
void
sb_appendn(StrBuf *sb, const char *s, size_t n)
{
	sb_reserve(sb, n);
	memcpy(sb->data + sb->len, s, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
}

/*
 * sb_appendc
 *		Append one character.
 */
void
sb_appendc(StrBuf *sb, char c)
{
	sb_reserve(sb, 1);
	sb->data[sb->len++] = c;
	sb->data[sb->len] = '\0';
}

/*
 * sb_appendf
 *		Append the text of a printf format.
 */
void
sb_appendf(StrBuf *sb, const char *fmt,...)
{
	va_list		ap;
	int			n;

	/*
	 * Formatted into the free space directly, and once more after growing
	 * it when the text did not fit: the stream encodes every changed row
	 * through here, and a temporary string per call showed in its profile
	 * (malloc and a second vsnprintf per value).
	 */
	va_start(ap, fmt);
	n = vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		bridge_fatal("could not format a message");
	if ((size_t) n >= sb->cap - sb->len)
	{
		sb_reserve(sb, (size_t) n);
		va_start(ap, fmt);
		vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t) n;
}

/*
 * sb_free
 *		Release the buffer; the StrBuf may be initialized again.
 */
void
sb_free(StrBuf *sb)
{
	free(sb->data);
	sb->data = NULL;
	sb->len = sb->cap = 0;
}

/* ------------------------------------------------------------------------
 * Files
 * ------------------------------------------------------------------------
 */

/*
 * bridge_read_file
 *		The whole of a text file, NUL-terminated; exits when it cannot be read
 *		or holds a NUL byte (so that C string functions see all of it).
 */
char *
bridge_read_file(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	StrBuf		sb;
	char		buf[8192];
	size_t		n;

	if (f == NULL)
		bridge_fatal("could not open \"%s\": %s", path, strerror(errno));
	sb_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
	{
		sb_reserve(&sb, n);
		memcpy(sb.data + sb.len, buf, n);
		sb.len += n;
		sb.data[sb.len] = '\0';
	}
	if (ferror(f))
		bridge_fatal("could not read \"%s\": %s", path, strerror(errno));
	fclose(f);
	if (memchr(sb.data, '\0', sb.len) != NULL)
		bridge_fatal("\"%s\" is not a text file (it contains a NUL byte)", path);
	return sb.data;
}

/* mkdir -p of the directory part of path */
static void
make_parent_dirs(const char *path)
{
	char	   *copy = bridge_strdup(path);

	for (char *p = copy + 1; *p; p++)
	{
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0777) != 0 && errno != EEXIST)
			bridge_fatal("could not create directory \"%s\": %s", copy, strerror(errno));
		*p = '/';
	}
	free(copy);
}

/*
 * bridge_write_file
 *		Write a whole file: into a new temporary file of the same directory,
 *		then rename it over path, so a reader never sees half a file.
 *
 * The temporary file is created by mkstemp (O_CREAT | O_EXCL, a random
 * name): a symbolic link planted under a predictable name ("path.tmp")
 * cannot redirect the write to another file.  rename() replaces path
 * itself, never the target of a link at path.  The file gets the mode a
 * plain creation would (0666 minus the umask).
 */
void
bridge_write_file(const char *path, const char *contents)
{
	const char *slash = strrchr(path, '/');
	char	   *tmp;
	size_t		len = strlen(contents);
	size_t		done = 0;
	mode_t		mask;
	int			fd;

	make_parent_dirs(path);
	if (slash)
		tmp = bridge_printf("%.*s/.%s.XXXXXX", (int) (slash - path), path, slash + 1);
	else
		tmp = bridge_printf(".%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		bridge_fatal("could not create a temporary file for \"%s\": %s", path, strerror(errno));
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0)
	{
		unlink(tmp);
		bridge_fatal("could not set the mode of \"%s\": %s", tmp, strerror(errno));
	}
	while (done < len)
	{
		ssize_t		n = write(fd, contents + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
		{
			int			save = errno;

			close(fd);
			unlink(tmp);
			bridge_fatal("could not write \"%s\": %s", tmp, strerror(save));
		}
		done += (size_t) n;
	}
	if (close(fd) != 0)
	{
		unlink(tmp);
		bridge_fatal("could not write \"%s\": %s", tmp, strerror(errno));
	}
	if (rename(tmp, path) != 0)
	{
		int			save = errno;

		unlink(tmp);
		bridge_fatal("could not rename \"%s\" to \"%s\": %s", tmp, path, strerror(save));
	}
	free(tmp);
}

/* --json -: the descriptor of the real stdout, or -1 */
static int json_stdout_fd = -1;

/*
 * bridge_json_to_stdout
 *		--json -: stdout is the JSON report's alone, so it can be piped (to
 *		jq, say); everything else a command prints to stdout goes to stderr
 *		from now on.  Called once, before the command runs.
 */
void
bridge_json_to_stdout(void)
{
	fflush(stdout);
	json_stdout_fd = dup(STDOUT_FILENO);
	if (json_stdout_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		bridge_fatal("--json -: could not set up stdout: %s", strerror(errno));
}

/*
 * bridge_write_output
 *		The file of an option such as --json: "-" is the real stdout (see
 *		bridge_json_to_stdout), anything else a file written whole
 *		(bridge_write_file).
 */
void
bridge_write_output(const char *path, const char *contents)
{
	size_t		len = strlen(contents);
	size_t		done = 0;
	int			fd = json_stdout_fd >= 0 ? json_stdout_fd : STDOUT_FILENO;

	if (strcmp(path, "-") != 0)
	{
		bridge_write_file(path, contents);
		return;
	}
	fflush(stdout);
	while (done < len)
	{
		ssize_t		n = write(fd, contents + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			bridge_fatal("could not write to stdout: %s", strerror(errno));
		done += (size_t) n;
	}
}

/*
 * bridge_path
 *		dir + "/" + name (allocated), without doubling a trailing slash.
 */
char *
bridge_path(const char *dir, const char *name)
{
	size_t		n = strlen(dir);

	if (n > 0 && dir[n - 1] == '/')
		return bridge_printf("%s%s", dir, name);
	return bridge_printf("%s/%s", dir, name);
}

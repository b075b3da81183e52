/*
 * tap.h
 *		A minimal Test Anything Protocol emitter for the C test programs.
 *
 * Each test program prints one "ok N - name" / "not ok N - name" line per
 * assertion, so `prove` can run it and scripts/test.sh can count results.
 * Failures print a diagnostic with file and line.  A program whose count
 * of assertions is known up front calls plan(N) first: the plan "1..N" is
 * printed before the tests, so a runner that compares planned with ran
 * notices an assertion that went missing, and done_testing() fails when
 * the count differs.  Otherwise done_testing() prints "1..N" at the end.
 * An assertion that cannot be checked here is skip(): "ok N - name # SKIP
 * reason", counted as skipped by the runner, never as a pass.  A setup
 * step (setup_step()) is a TAP comment, counted apart from the tests.
 * Header-only on purpose: every test is one file.
 */
#ifndef CQL_TAP_H
#define CQL_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	tap_count = 0;
static int	tap_failed = 0;
static int	tap_planned = -1;	/* -1: no plan printed yet */
static int	tap_setup_failed = 0;

/* Print the plan first: exactly n assertions follow. */
static inline void
plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline int
tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list		ap;

	tap_count++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
	{
		tap_failed++;
		printf("#   Failed test at %s line %d.\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...) do { \
	long long tap_g_ = (long long) (got), tap_w_ = (long long) (want); \
	if (!tap_ok(tap_g_ == tap_w_, __FILE__, __LINE__, __VA_ARGS__)) \
		printf("#          got: %lld\n#     expected: %lld\n", tap_g_, tap_w_); \
} while (0)

#define is_str(got, want, ...) do { \
	const char *tap_g_ = (got), *tap_w_ = (want); \
	int tap_c_ = (tap_g_ && tap_w_) ? strcmp(tap_g_, tap_w_) == 0 : tap_g_ == tap_w_; \
	if (!tap_ok(tap_c_, __FILE__, __LINE__, __VA_ARGS__)) \
		printf("#          got: '%s'\n#     expected: '%s'\n", tap_g_ ? tap_g_ : "(null)", tap_w_ ? tap_w_ : "(null)"); \
} while (0)

static inline void
tap_hexdump(const char *label, const void *p, size_t n)
{
	const unsigned char *c = p;

	printf("#   %s (%zu bytes):", label, n);
	for (size_t i = 0; i < n && i < 64; i++)
		printf(" %02x", c[i]);
	printf(n > 64 ? " ...\n" : "\n");
}

#define is_mem(got, gotlen, want, wantlen, ...) do { \
	size_t tap_gl_ = (gotlen), tap_wl_ = (wantlen); \
	int tap_c_ = tap_gl_ == tap_wl_ && memcmp((got), (want), tap_gl_) == 0; \
	if (!tap_ok(tap_c_, __FILE__, __LINE__, __VA_ARGS__)) { \
		tap_hexdump("got", (got), tap_gl_); tap_hexdump("expected", (want), tap_wl_); } \
} while (0)

/*
 * A setup step (a keyspace or table made or dropped), not a test: the TAP
 * comment "# setup ok - name" or "# setup not ok - name", which
 * scripts/lib_tap.sh counts apart from the tests and the plan.  A failed
 * one makes done_testing() return 1.  Returns cond.
 */
static inline int
tap_setup_step(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list		ap;

	printf("# setup %s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
	{
		tap_setup_failed++;
		printf("#   Failed setup step at %s line %d.\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define setup_step(cond, ...) tap_setup_step(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* One assertion that is not checked in this run, and why (TAP SKIP). */
#define skip(name, reason) do { \
	tap_count++; \
	printf("ok %d - %s # SKIP %s\n", tap_count, (name), (reason)); \
	fflush(stdout); \
} while (0)

#define diag(...) do { printf("# "); printf(__VA_ARGS__); printf("\n"); } while (0)

#define skip_all(...) do { printf("1..0 # SKIP "); printf(__VA_ARGS__); printf("\n"); exit(0); } while (0)

/*
 * End of the program: print the plan unless plan() did, and return the
 * exit status (1 on a failed assertion, when the planned count was not
 * the count that ran, or when no assertion ran at all: then no plan is
 * printed, since "1..0" would read as a program that passed; a program
 * with nothing to check here says why with skip_all()).
 */
static inline int
done_testing(void)
{
	if (tap_planned < 0 && tap_count == 0)
	{
		printf("# no test ran (and no plan or skip_all() said why)\n");
		fflush(stdout);
		return 1;
	}
	if (tap_planned < 0)
		printf("1..%d\n", tap_count);
	else if (tap_count != tap_planned)
	{
		printf("# planned %d tests but ran %d\n", tap_planned, tap_count);
		return 1;
	}
	return (tap_failed || tap_setup_failed) ? 1 : 0;
}

/* Parse "0a0b..." into bytes; returns length.  For byte fixtures. */
static inline size_t
tap_unhex(const char *hex, unsigned char *out, size_t cap)
{
	size_t		n = 0;

	while (*hex && n < cap)
	{
		unsigned int v;

		while (*hex == ' ' || *hex == '\n' || *hex == '|')
			hex++;
		if (!hex[0] || !hex[1])
			break;
		if (sscanf(hex, "%2x", &v) != 1)
			break;
		out[n++] = (unsigned char) v;
		hex += 2;
	}
	return n;
}

#endif							/* CQL_TAP_H */

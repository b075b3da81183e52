/*-------------------------------------------------------------------------
 *
 * rnd.h
 *		rnd(): a xorshift generator for the unit tests' random inputs,
 *		seeded the same way every run so that a failure repeats.
 *
 * IDENTIFICATION
 *		tests/unit/rnd.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_TEST_RND_H
#define CQL_TEST_RND_H

#include <stdint.h>

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#endif							/* CQL_TEST_RND_H */

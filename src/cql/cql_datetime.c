/*-------------------------------------------------------------------------
 *
 * cql_datetime.c
 *		Text forms of date, time, timestamp and duration values.
 *
 * All calendar arithmetic is proleptic Gregorian in UTC (days_from_civil /
 * civil_from_days, after H. Hinnant's public-domain algorithms), so it works
 * for the whole range of the wire encodings and never consults the C
 * library's time zone machinery.
 *
 * layer: codec (byte-level, no I/O; below transport)
 *
 * IDENTIFICATION
 *		src/cql/cql_datetime.c
 *
 *-------------------------------------------------------------------------
 */
#include "cql_values_int.h"

#include <stdio.h>
#include <string.h>

#define NS_PER_DAY		INT64_C(86400000000000)
#define MS_PER_DAY		INT64_C(86400000)

/* Days since 1970-01-01 of a civil date (y, m 1..12, d 1..31). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era;
	int64_t		yoe,
				doy,
				doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t		era,
				doe,
				yoe,
				doy,
				mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int
days_in_month(int64_t y, int m)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool		leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return (m == 2 && leap) ? 29 : dm[m - 1];
}

static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* ---------------------------------------------------------------------
 * date
 * ---------------------------------------------------------------------
 */
cql_status
cql_date_format(int64_t days, cql_buf *out)
{
	char		s[32];
	int64_t		y;
	int			m,
				d;

	if (days < INT32_MIN || days > INT32_MAX)
		return CQL_ERR_INVALID_ARG;
	civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		snprintf(s, sizeof(s), "%lld", (long long) (days + ((int64_t) 1 << 31)));
	else
		snprintf(s, sizeof(s), "%04d-%02d-%02d", (int) y, m, d);
	cql_buf_str(out, s);
	return cql_buf_status(out);
}

/* Fixed-width unsigned digits [s, s+w). */
static bool
fixed_digits(const char *s, size_t len, size_t pos, int w, int *v)
{
	int			r = 0;

	if (pos + (size_t) w > len)
		return false;
	for (int i = 0; i < w; i++)
	{
		if (!cql_is_digit(s[pos + (size_t) i]))
			return false;
		r = r * 10 + (s[pos + (size_t) i] - '0');
	}
	*v = r;
	return true;
}

/*
 * "[+-]YYYY-MM-DD" (four or more year digits) at *pos; validates the
 * calendar and returns the day number.
 */
static bool
parse_ymd(const char *s, size_t len, size_t *pos, int64_t *days)
{
	size_t		p = *pos;
	bool		neg = false;
	int64_t		y = 0;
	int			ny = 0,
				m,
				d;

	if (p < len && (s[p] == '-' || s[p] == '+'))
	{
		neg = s[p] == '-';
		p++;
	}
	while (p < len && cql_is_digit(s[p]) && ny < 10)
	{
		y = y * 10 + (s[p] - '0');
		p++;
		ny++;
	}
	if (ny < 4 || p >= len || s[p] != '-')
		return false;
	p++;
	if (!fixed_digits(s, len, p, 2, &m) || m < 1 || m > 12)
		return false;
	p += 2;
	if (p >= len || s[p] != '-')
		return false;
	p++;
	if (!fixed_digits(s, len, p, 2, &d))
		return false;
	p += 2;
	if (neg)
		y = -y;
	if (d < 1 || d > days_in_month(y, m))
		return false;
	*days = days_from_civil(y, m, d);
	*pos = p;
	return true;
}

static bool
all_digits(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!cql_is_digit(s[i]))
			return false;
	return true;
}

cql_status
cql_date_parse(const char *s, size_t len, int64_t *days)
{
	size_t		pos = 0;
	int64_t		v;

	/* Cassandra's convention: a bare number is the raw unsigned wire value */
	if (all_digits(s, len))
	{
		if (len > 10 || cql_parse_int64(s, len, &v) != CQL_OK ||
			v > (int64_t) UINT32_MAX)
			return CQL_ERR_TYPE;
		*days = v - ((int64_t) 1 << 31);
		return CQL_OK;
	}
	if (!parse_ymd(s, len, &pos, &v) || pos != len)
		return CQL_ERR_TYPE;
	if (v < INT32_MIN || v > INT32_MAX)
		return CQL_ERR_TYPE;
	*days = v;
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * time
 * ---------------------------------------------------------------------
 */
cql_status
cql_time_format(int64_t ns, cql_buf *out)
{
	char		s[32];
	int64_t		sec;

	if (ns < 0 || ns >= NS_PER_DAY)
		return CQL_ERR_TYPE;
	sec = ns / 1000000000;
	snprintf(s, sizeof(s), "%02d:%02d:%02d.%09d",
			 (int) (sec / 3600), (int) (sec / 60 % 60), (int) (sec % 60),
			 (int) (ns % 1000000000));
	cql_buf_str(out, s);
	return cql_buf_status(out);
}

/* ".f{1,9}" at *pos -> nanoseconds; absent fraction gives 0. */
static bool
parse_fraction(const char *s, size_t len, size_t *pos, int64_t *ns)
{
	size_t		p = *pos;
	int64_t		v = 0;
	int			nd = 0;

	*ns = 0;
	if (p >= len || s[p] != '.')
		return true;
	p++;
	while (p < len && cql_is_digit(s[p]))
	{
		if (nd == 9)
			return false;
		v = v * 10 + (s[p] - '0');
		nd++;
		p++;
	}
	if (nd == 0)
		return false;
	for (; nd < 9; nd++)
		v *= 10;
	*ns = v;
	*pos = p;
	return true;
}

/* "HH:MM[:SS[.f]]" at *pos -> nanoseconds of the day. */
static bool
parse_hms(const char *s, size_t len, size_t *pos, int64_t *ns, bool need_seconds)
{
	size_t		p = *pos;
	int			h,
				mi,
				se = 0;
	int64_t		frac = 0;

	if (!fixed_digits(s, len, p, 2, &h) || h > 23)
		return false;
	p += 2;
	if (p >= len || s[p] != ':')
		return false;
	p++;
	if (!fixed_digits(s, len, p, 2, &mi) || mi > 59)
		return false;
	p += 2;
	if (p < len && s[p] == ':')
	{
		p++;
		if (!fixed_digits(s, len, p, 2, &se) || se > 59)
			return false;
		p += 2;
		if (!parse_fraction(s, len, &p, &frac))
			return false;
	}
	else if (need_seconds)
		return false;
	*ns = ((int64_t) h * 3600 + mi * 60 + se) * 1000000000 + frac;
	*pos = p;
	return true;
}

cql_status
cql_time_parse(const char *s, size_t len, int64_t *ns)
{
	size_t		pos = 0;
	int64_t		v;

	if (all_digits(s, len))
	{
		if (cql_parse_int64(s, len, &v) != CQL_OK || v >= NS_PER_DAY)
			return CQL_ERR_TYPE;
		*ns = v;
		return CQL_OK;
	}
	if (!parse_hms(s, len, &pos, &v, false) || pos != len)
		return CQL_ERR_TYPE;
	*ns = v;
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * timestamp
 * ---------------------------------------------------------------------
 */
cql_status
cql_timestamp_format(int64_t ms, cql_buf *out)
{
	char		s[48];
	int64_t		days = floor_div(ms, MS_PER_DAY);
	/* not ms - days * MS_PER_DAY: that overflows for INT64_MIN */
	int64_t		rem = ms % MS_PER_DAY;
	int64_t		y;
	int			m,
				d;

	if (rem < 0)
		rem += MS_PER_DAY;
	civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		snprintf(s, sizeof(s), "%lld", (long long) ms);
	else
		snprintf(s, sizeof(s), "%04d-%02d-%02d %02d:%02d:%02d.%03dZ",
				 (int) y, m, d, (int) (rem / 3600000), (int) (rem / 60000 % 60),
				 (int) (rem / 1000 % 60), (int) (rem % 1000));
	cql_buf_str(out, s);
	return cql_buf_status(out);
}

cql_status
cql_timestamp_parse(const char *s, size_t len, int64_t *ms)
{
	size_t		pos = 0;
	int64_t		days,
				tod = 0,
				offset_min = 0;
	int64_t		total;

	if (len > 0 && (all_digits(s, len) ||
					(s[0] == '-' && all_digits(s + 1, len - 1))))
		return cql_parse_int64(s, len, ms);

	if (!parse_ymd(s, len, &pos, &days))
		return CQL_ERR_TYPE;
	if (pos < len && (s[pos] == ' ' || s[pos] == 'T' || s[pos] == 't') &&
		pos + 1 < len && cql_is_digit(s[pos + 1]))
	{
		pos++;
		if (!parse_hms(s, len, &pos, &tod, false))
			return CQL_ERR_TYPE;
		/* sub-millisecond precision cannot be stored: refuse, don't round */
		if (tod % 1000000 != 0)
			return CQL_ERR_TYPE;
	}
	if (pos < len && s[pos] == ' ')
		pos++;
	if (pos < len)
	{
		if ((s[pos] == 'Z' || s[pos] == 'z') && pos + 1 == len)
			pos++;
		else if (s[pos] == '+' || s[pos] == '-')
		{
			int			sign = s[pos] == '-' ? -1 : 1;
			int			oh,
						om = 0;

			pos++;
			if (!fixed_digits(s, len, pos, 2, &oh) || oh > 18)
				return CQL_ERR_TYPE;
			pos += 2;
			if (pos < len && s[pos] == ':')
				pos++;
			if (pos < len)
			{
				if (!fixed_digits(s, len, pos, 2, &om) || om > 59)
					return CQL_ERR_TYPE;
				pos += 2;
			}
			offset_min = sign * (oh * 60 + om);
		}
		else
			return CQL_ERR_TYPE;
	}
	if (pos != len)
		return CQL_ERR_TYPE;
	if (__builtin_mul_overflow(days, MS_PER_DAY, &total) ||
		__builtin_add_overflow(total, tod / 1000000, &total) ||
		__builtin_sub_overflow(total, offset_min * 60000, &total))
		return CQL_ERR_TYPE;
	*ms = total;
	return CQL_OK;
}

/* ---------------------------------------------------------------------
 * duration
 *
 * Output: an optional '-', then the non-zero components in the order
 * y mo d h m s ms us ns (months split into years and months, nanoseconds
 * into h..ns); the zero duration is "0s".  This is Cassandra's own
 * Duration.toString() form and a valid unquoted CQL duration literal.
 * ---------------------------------------------------------------------
 */
static void
put_unit(cql_buf *out, uint64_t v, const char *unit)
{
	char		s[32];

	if (v == 0)
		return;
	snprintf(s, sizeof(s), "%llu%s", (unsigned long long) v, unit);
	cql_buf_str(out, s);
}

cql_status
cql_duration_format(const cql_duration *v, cql_buf *out)
{
	bool		neg = v->months < 0 || v->days < 0 || v->nanoseconds < 0;
	uint64_t	mo,
				d,
				ns;

	if (!((v->months >= 0 && v->days >= 0 && v->nanoseconds >= 0) ||
		  (v->months <= 0 && v->days <= 0 && v->nanoseconds <= 0)))
		return CQL_ERR_TYPE;
	/* magnitudes without overflow at INT_MIN */
	mo = neg ? (uint64_t) 0 - (uint64_t) (int64_t) v->months : (uint64_t) v->months;
	d = neg ? (uint64_t) 0 - (uint64_t) (int64_t) v->days : (uint64_t) v->days;
	ns = neg ? (uint64_t) 0 - (uint64_t) v->nanoseconds : (uint64_t) v->nanoseconds;
	if (mo == 0 && d == 0 && ns == 0)
	{
		cql_buf_str(out, "0s");
		return cql_buf_status(out);
	}
	if (neg)
		cql_buf_u8(out, '-');
	put_unit(out, mo / 12, "y");
	put_unit(out, mo % 12, "mo");
	put_unit(out, d, "d");
	put_unit(out, ns / UINT64_C(3600000000000), "h");
	put_unit(out, ns / UINT64_C(60000000000) % 60, "m");
	put_unit(out, ns / UINT64_C(1000000000) % 60, "s");
	put_unit(out, ns / UINT64_C(1000000) % 1000, "ms");
	put_unit(out, ns / UINT64_C(1000) % 1000, "us");
	put_unit(out, ns % 1000, "ns");
	return cql_buf_status(out);
}

typedef struct dur_acc
{
	uint64_t	months;
	uint64_t	days;
	uint64_t	nanos;
} dur_acc;

/* acc += n * mul, refusing overflow beyond 'limit'. */
static bool
add_scaled(uint64_t *acc, uint64_t n, uint64_t mul, uint64_t limit)
{
	if (n != 0 && mul > limit / n)
		return false;
	if (*acc > limit - n * mul)
		return false;
	*acc += n * mul;
	return true;
}

static bool
dur_add(dur_acc *a, uint64_t n, char unit, uint64_t mul, bool neg)
{
	/*
	 * Cassandra's parser limits the magnitude to INT32_MAX / INT64_MAX for
	 * negative durations too ("-2147483648mo" is refused), so do we.
	 */
	uint64_t	lim32 = UINT64_C(2147483647);
	uint64_t	lim64 = UINT64_C(9223372036854775807);

	(void) neg;

	switch (unit)
	{
		case 'M':
			return add_scaled(&a->months, n, mul, lim32);
		case 'D':
			return add_scaled(&a->days, n, mul, lim32);
		default:
			return add_scaled(&a->nanos, n, mul, lim64);
	}
}

static bool
read_uint(const char *s, size_t len, size_t *pos, uint64_t *v)
{
	size_t		p = *pos;
	uint64_t	r = 0;

	if (p >= len || !cql_is_digit(s[p]))
		return false;
	while (p < len && cql_is_digit(s[p]))
	{
		if (r > (UINT64_MAX - 9) / 10)
			return false;
		r = r * 10 + (uint64_t) (s[p] - '0');
		p++;
	}
	*pos = p;
	*v = r;
	return true;
}

/* ISO 8601 designator form after the 'P': nY nM nW nD T nH nM nS */
static bool
parse_iso_duration(const char *s, size_t len, size_t pos, dur_acc *a, bool neg)
{
	bool		in_time = false;
	bool		any = false;
	int			last = -1;		/* enforce designator order */

	while (pos < len)
	{
		uint64_t	n;
		char		u;
		int			rank;

		if (s[pos] == 'T' || s[pos] == 't')
		{
			if (in_time)
				return false;
			in_time = true;
			pos++;
			if (pos >= len)
				return false;
			continue;
		}
		if (!read_uint(s, len, &pos, &n) || pos >= len)
			return false;
		u = (char) (s[pos] & ~0x20);	/* upper case */
		pos++;
		if (!in_time)
		{
			switch (u)
			{
				case 'Y':
					rank = 0;
					if (!dur_add(a, n, 'M', 12, neg))
						return false;
					break;
				case 'M':
					rank = 1;
					if (!dur_add(a, n, 'M', 1, neg))
						return false;
					break;
				case 'W':
					rank = 2;
					if (!dur_add(a, n, 'D', 7, neg))
						return false;
					break;
				case 'D':
					rank = 3;
					if (!dur_add(a, n, 'D', 1, neg))
						return false;
					break;
				default:
					return false;
			}
		}
		else
		{
			switch (u)
			{
				case 'H':
					rank = 4;
					if (!dur_add(a, n, 'N', UINT64_C(3600000000000), neg))
						return false;
					break;
				case 'M':
					rank = 5;
					if (!dur_add(a, n, 'N', UINT64_C(60000000000), neg))
						return false;
					break;
				case 'S':
					rank = 6;
					if (!dur_add(a, n, 'N', UINT64_C(1000000000), neg))
						return false;
					break;
				default:
					return false;
			}
		}
		if (rank <= last)
			return false;
		last = rank;
		any = true;
	}
	return any;
}

cql_status
cql_duration_parse(const char *s, size_t len, cql_duration *out)
{
	size_t		pos = 0;
	bool		neg = false;
	dur_acc		a = {0, 0, 0};

	if (pos < len && (s[pos] == '-' || s[pos] == '+'))
	{
		neg = s[pos] == '-';
		pos++;
	}
	if (pos >= len)
		return CQL_ERR_TYPE;
	if (s[pos] == 'P' || s[pos] == 'p')
	{
		if (!parse_iso_duration(s, len, pos + 1, &a, neg))
			return CQL_ERR_TYPE;
	}
	else
	{
		while (pos < len)
		{
			uint64_t	n;
			char		u = 0;
			uint64_t	mul = 0;
			size_t		rest;

			if (!read_uint(s, len, &pos, &n) || pos >= len)
				return CQL_ERR_TYPE;
			rest = len - pos;
			if (rest >= 2 && cql_lower(s[pos]) == 'm' && cql_lower(s[pos + 1]) == 'o')
			{
				u = 'M';
				mul = 1;
				pos += 2;
			}
			else if (rest >= 2 && cql_lower(s[pos]) == 'm' && cql_lower(s[pos + 1]) == 's')
			{
				u = 'N';
				mul = 1000000;
				pos += 2;
			}
			else if (rest >= 2 && cql_lower(s[pos]) == 'u' && cql_lower(s[pos + 1]) == 's')
			{
				u = 'N';
				mul = 1000;
				pos += 2;
			}
			else if (rest >= 3 && (uint8_t) s[pos] == 0xC2 && (uint8_t) s[pos + 1] == 0xB5 &&
					 cql_lower(s[pos + 2]) == 's')
			{
				u = 'N';		/* "µs" */
				mul = 1000;
				pos += 3;
			}
			else if (rest >= 2 && cql_lower(s[pos]) == 'n' && cql_lower(s[pos + 1]) == 's')
			{
				u = 'N';
				mul = 1;
				pos += 2;
			}
			else
			{
				switch (cql_lower(s[pos]))
				{
					case 'y':
						u = 'M';
						mul = 12;
						break;
					case 'w':
						u = 'D';
						mul = 7;
						break;
					case 'd':
						u = 'D';
						mul = 1;
						break;
					case 'h':
						u = 'N';
						mul = UINT64_C(3600000000000);
						break;
					case 'm':
						u = 'N';
						mul = UINT64_C(60000000000);
						break;
					case 's':
						u = 'N';
						mul = UINT64_C(1000000000);
						break;
					default:
						return CQL_ERR_TYPE;
				}
				pos++;
			}
			if (!dur_add(&a, n, u, mul, neg))
				return CQL_ERR_TYPE;
		}
	}
	out->months = neg ? (int32_t) (0 - (int64_t) a.months) : (int32_t) a.months;
	out->days = neg ? (int32_t) (0 - (int64_t) a.days) : (int32_t) a.days;
	out->nanoseconds = neg ? (int64_t) (0 - a.nanos) : (int64_t) a.nanos;
	return CQL_OK;
}

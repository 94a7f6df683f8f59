/* format.c - the digit tables, fixed-point ratios, human sizes.  */
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "format.h"

const char fmt_dec_pairs[200] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* 0 ... 9999: each an 8-byte entry, its four digits with leading zeros,
   then at [7] how many of them it has without; the digits are one 4-byte
   copy started past the zeros (it runs into the entry's tail).  */
#define QUAD_LEN(a, b, c) ((a) != '0' ? 4 : (b) != '0' ? 3 : (c) != '0' ? 2 : 1)
#define QUAD(a, b, c, d) { a, b, c, d, 0, 0, 0, QUAD_LEN(a, b, c) }
#define QUAD1(a, b, c) QUAD(a, b, c, '0'), QUAD(a, b, c, '1'), \
	QUAD(a, b, c, '2'), QUAD(a, b, c, '3'), QUAD(a, b, c, '4'), \
	QUAD(a, b, c, '5'), QUAD(a, b, c, '6'), QUAD(a, b, c, '7'), \
	QUAD(a, b, c, '8'), QUAD(a, b, c, '9')
#define QUAD2(a, b) QUAD1(a, b, '0'), QUAD1(a, b, '1'), QUAD1(a, b, '2'), \
	QUAD1(a, b, '3'), QUAD1(a, b, '4'), QUAD1(a, b, '5'), \
	QUAD1(a, b, '6'), QUAD1(a, b, '7'), QUAD1(a, b, '8'), QUAD1(a, b, '9')
#define QUAD3(a) QUAD2(a, '0'), QUAD2(a, '1'), QUAD2(a, '2'), QUAD2(a, '3'), \
	QUAD2(a, '4'), QUAD2(a, '5'), QUAD2(a, '6'), QUAD2(a, '7'), \
	QUAD2(a, '8'), QUAD2(a, '9')
const char fmt_dec_quads[10000][8] = {
	QUAD3('0'), QUAD3('1'), QUAD3('2'), QUAD3('3'), QUAD3('4'),
	QUAD3('5'), QUAD3('6'), QUAD3('7'), QUAD3('8'), QUAD3('9'),
};

const uint64_t fmt_pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
	10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
	100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull,
	10000000000000000000ull,
};

size_t fmt_fixed(char *buf, size_t len, double v, int prec)
{
	int n = snprintf(buf, len, "%.*f", prec, v);
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

const char *hw_human(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	double v = (double)bytes;
	unsigned u = 0;
	while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

/* How many bytes of s (1 to 4) make one valid UTF-8 sequence, its lead
   byte >= 0x80; 0 when they do not (a stray continuation byte, an
   overlong form, a surrogate, past U+10FFFF, or cut short: RFC 3629).  */
static unsigned utf8_seq(const unsigned char *s)
{
	unsigned c = s[0], n;
	unsigned lo = 0x80, hi = 0xbf;  /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;
		hi = c == 0xed ? 0x9f : 0xbf;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;
	} else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (unsigned i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

unsigned fmt_utf8_len(const char *s, size_t avail)
{
	/* utf8_seq reads at most 4 bytes and stops at a byte that does not
	   continue the sequence (a NUL does not).  */
	if (avail >= 4)
		return utf8_seq((const unsigned char *)s);
	unsigned char tail[4] = { 0 };
	memcpy(tail, s, avail);
	unsigned n = utf8_seq(tail);
	return n <= avail ? n : 0;
}

/* format.h - number formatting for the renderers, straight into the
 * output buffer.
 *
 * The callers reserve room first (FMT_ROOM bytes for any number) and
 * write in place: no temporary buffer, no copy, no printf.  `chunks`
 * formats tens of millions of numbers, so the digit writers are inline:
 * decimal two digits per step, hex sixteen at a time (SSE2) or eight.
 */
#ifndef HW_FORMAT_H
#define HW_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* FMT_NO_SIMD: the portable word-at-a-time code on any machine (the
   emitter's test checks both).  */
#if defined(__SSE2__) && !defined(FMT_NO_SIMD)
#define FMT_SSE2 1
#include <emmintrin.h>
#endif

/* The longest a formatted 64-bit number can be: "-9223372036854775808"
   and "18446744073709551615" (20); 16 hex digits.  */
#define FMT_U64_MAX 20
/* What to reserve for one: fmt_hex() stores 16 bytes at a time.  */
#define FMT_ROOM 24

/* "00" "01" ... "99".  */
extern const char fmt_dec_pairs[200];
/* 0 ... 9999: "0024" and, at [7], 2 (format.c).  */
extern const char fmt_dec_quads[10000][8];
extern const uint64_t fmt_pow10[20];

/* How many bytes at s (avail of them readable, the first >= 0x80) make
   one valid UTF-8 sequence (2 to 4), or 0 when they make none.  */
unsigned fmt_utf8_len(const char *s, size_t avail);

/* Decimal digits of v (1 for 0).  */
static inline unsigned fmt_dec_len(uint64_t v)
{
	/* log10 from log2: bits * log10(2) (1233 / 4096) is the digit count
	   or one less; the power of ten decides.  v | 1 gives 0 its one
	   digit (no power of ten is odd).  */
	uint64_t w = v | 1;
	unsigned t = (64 - (unsigned)__builtin_clzll(w)) * 1233 >> 12;
	return t + (w >= fmt_pow10[t]);
}

/* v in decimal at p, its length n = fmt_dec_len(v) known; returns the
   end.  */
static inline char *fmt_dec_n(char *p, uint64_t v, unsigned n)
{
	char *end = p + n, *q = end;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		memcpy(q, fmt_dec_pairs + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(q - 2, fmt_dec_pairs + 2 * v, 2);
	else
		q[-1] = (char)('0' + v);
	return end;
}

/* v in decimal at p (fmt_dec_len(v) bytes; 4 are written when it has
   fewer, so never more than FMT_U64_MAX); returns the end.  */
static inline char *fmt_dec(char *p, uint64_t v)
{
	/* Most of what `chunks` writes (sizes, arenas) is below 10000: its
	   digits are one copy, from past the entry's leading zeros.  */
	if (v < 10000) {
		const char *q = fmt_dec_quads[v];
		unsigned n = (unsigned char)q[7];
		memcpy(p, q + 4 - n, 4);
		return p + n;
	}
	return fmt_dec_n(p, v, fmt_dec_len(v));
}

/* The magnitude of v, also for INT64_MIN.  */
static inline uint64_t fmt_magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static inline unsigned fmt_i64_len(int64_t v)
{
	return (v < 0) + fmt_dec_len(fmt_magnitude(v));
}

static inline char *fmt_i64(char *p, int64_t v)
{
	if (v < 0)
		*p++ = '-';
	return fmt_dec(p, fmt_magnitude(v));
}

/* Hex digits of v, no "0x" (1 for 0).  */
static inline unsigned fmt_hex_len(uint64_t v)
{
	return (67 - (unsigned)__builtin_clzll(v | 1)) / 4;
}

/* The 8 hex digits of x, most significant first, as the bytes of a
   little-endian word: each nibble spread to a byte, then made a digit
   without a branch ('a' - '0' - 10 = 39 is added past 9).  */
static inline uint64_t fmt_hex8(uint32_t x)
{
	uint64_t v = x;
	v = (v | v << 16) & 0x0000ffff0000ffffull;
	v = (v | v << 8) & 0x00ff00ff00ff00ffull;
	v = (v | v << 4) & 0x0f0f0f0f0f0f0f0full;
	uint64_t letter = ((v + 0x0606060606060606ull) >> 4) &
			  0x0101010101010101ull;
	v += 0x3030303030303030ull + letter * 39;
	return __builtin_bswap64(v);
}

/* The last n (1..16) hex digits of v at p; returns the end.  Writes 16
   bytes at p whatever n is: reserve them.  */
static inline char *fmt_hex_n(char *p, uint64_t v, unsigned n)
{
#ifdef FMT_SSE2
	/* The 16 nibbles, most significant first, one per byte of a
	   vector (each byte's high nibble, then its low one), made digits
	   at once: a third of the instructions of the word at a time
	   below (`chunks --json` writes two addresses a row).  The
	   leading digits are skipped by copying from further in.  */
	const __m128i nibble = _mm_set1_epi8(0x0f);
	__m128i x = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
	__m128i d = _mm_unpacklo_epi8(
		_mm_and_si128(_mm_srli_epi16(x, 4), nibble),
		_mm_and_si128(x, nibble));
	__m128i past9 = _mm_and_si128(_mm_cmpgt_epi8(d, _mm_set1_epi8(9)),
				      _mm_set1_epi8('a' - '0' - 10));
	char all[32];
	_mm_storeu_si128((__m128i *)all,
			 _mm_add_epi8(d, _mm_add_epi8(past9,
						      _mm_set1_epi8('0'))));
	_mm_storeu_si128((__m128i *)(all + 16), _mm_setzero_si128());
	memcpy(p, all + 16 - n, 16);
#else
	/* All 16 digits, the leading ones shifted out.  */
	__extension__ unsigned __int128 all =
		(unsigned __int128)fmt_hex8((uint32_t)v) << 64 |
		fmt_hex8((uint32_t)(v >> 32));
	all >>= 8 * (16 - n);
	memcpy(p, &all, 16);
#endif
	return p + n;
}

/* v in lower-case hex at p, zero-padded to `digits` (<= 16) digits;
   returns the end.  Writes 16 bytes at p: reserve them.  */
static inline char *fmt_hex(char *p, uint64_t v, unsigned digits)
{
	unsigned n = fmt_hex_len(v);
	return fmt_hex_n(p, v, n < digits ? digits : n);
}

/* v with `prec` decimals, as printf's "%.*f" writes it, into buf
   (>= 32 bytes); returns its length.  Ratios only: not for hot loops.  */
size_t fmt_fixed(char *buf, size_t len, double v, int prec);

#endif /* HW_FORMAT_H */

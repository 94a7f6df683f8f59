/* corefuzz - damage an ELF core in memory ranges, reproducibly.
 *
 *   corefuzz CORE SEED LO:HI [LO:HI...]
 *
 * Changes between 1 and 64 bytes of CORE in place, all of them inside the
 * given virtual address ranges [LO, HI) (numbers, 0x... for hex; only the
 * parts that some PT_LOAD holds in the file count).  The same SEED and
 * ranges always make the same changes (xorshift64*, as prng.c).  Each
 * change is one of
 *   byte   one random byte anywhere
 *   run    a run of 2..16 random bytes
 *   flip   one bit of the low byte of an aligned 8-byte word (chunk size
 *          flags, pointer alignment)
 *   word   an aligned 8-byte word set to an address inside the same range
 *          (a plausible but wrong pointer) or to a small number
 * and is printed as "MODE ADDR LEN" (ADDR in hex).  Exit 0, 1 when no
 * range is in the file or on I/O errors, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L
#define TOOL_NAME "corefuzz"
#include "coreelf.h"

#define MAX_RANGES 64

struct range {
	uint64_t lo, hi;    /* virtual addresses, [lo, hi) */
	uint64_t off;       /* file offset of lo */
};

static struct range ranges[MAX_RANGES];
static unsigned nranges;
static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* Uniform enough in [0, n), n > 0.  */
static uint64_t below(uint64_t n)
{
	return (next() >> 11) % n;
}

static int parse_u64(const char *s, char **end, uint64_t *out)
{
	if (!*s || *s == '-')
		return 0;
	errno = 0;
	*out = strtoull(s, end, 0);
	return !errno && *end != s;
}

/* Clip [lo, hi) to the file-backed parts of the PT_LOADs; may add up to
   one range per PT_LOAD it crosses.  */
static void add_range(const Elf64_Phdr *ph, unsigned n, uint64_t fsize,
		      uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < n; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD || p->p_offset >= fsize)
			continue;
		uint64_t fsz = p->p_filesz;
		if (fsz > fsize - p->p_offset)
			fsz = fsize - p->p_offset;
		uint64_t a = lo > p->p_vaddr ? lo : p->p_vaddr;
		uint64_t b = hi < p->p_vaddr + fsz ? hi : p->p_vaddr + fsz;
		if (a >= b || nranges == MAX_RANGES)
			continue;
		ranges[nranges].lo = a;
		ranges[nranges].hi = b;
		ranges[nranges].off = p->p_offset + (a - p->p_vaddr);
		nranges++;
	}
}

static void put(FILE *f, const char *path, const struct range *r,
		uint64_t addr, const unsigned char *bytes, size_t len)
{
	if (fseeko(f, (off_t)(r->off + (addr - r->lo)), SEEK_SET) ||
	    fwrite(bytes, 1, len, f) != len)
		die(path, "write error");
}

static int get(FILE *f, const struct range *r, uint64_t addr)
{
	if (fseeko(f, (off_t)(r->off + (addr - r->lo)), SEEK_SET))
		return 0;
	int c = getc(f);
	return c == EOF ? 0 : c;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: corefuzz CORE SEED LO:HI [LO:HI...]\n");
		return 2;
	}
	const char *path = argv[1];
	uint64_t seed;
	char *end;
	if (!parse_u64(argv[2], &end, &seed) || *end) {
		fprintf(stderr, "corefuzz: bad seed %s\n", argv[2]);
		return 2;
	}
	rng = seed * 0x9e3779b97f4a7c15ull + 0x1234567;
	if (!rng)
		rng = 1;

	FILE *f;
	Elf64_Ehdr eh;
	uint64_t fsize;
	Elf64_Phdr *ph = core_open(path, "r+b", &f, &eh, &fsize);

	for (int i = 3; i < argc; i++) {
		uint64_t lo, hi;
		if (!parse_u64(argv[i], &end, &lo) || *end != ':' ||
		    !parse_u64(end + 1, &end, &hi) || *end || hi <= lo) {
			fprintf(stderr, "corefuzz: bad range %s\n", argv[i]);
			return 2;
		}
		add_range(ph, eh.e_phnum, fsize, lo, hi);
	}
	free(ph);
	if (!nranges)
		die(path, "no range lies in the file");

	unsigned budget = 1 + (unsigned)below(64);
	while (budget) {
		const struct range *r = &ranges[below(nranges)];
		uint64_t span = r->hi - r->lo;
		unsigned char b[16];
		unsigned mode = (unsigned)below(4);
		if ((mode == 2 || mode == 3) && span < 8)
			mode = 0;
		if (mode == 3 && budget < 8)
			mode = 2;
		if (mode == 1 && budget < 2)
			mode = 0;
		if (mode == 0) {
			uint64_t a = r->lo + below(span);
			b[0] = (unsigned char)next();
			put(f, path, r, a, b, 1);
			printf("byte 0x%llx 1\n", (unsigned long long)a);
			budget--;
		} else if (mode == 1) {
			unsigned max = budget < 16 ? budget : 16;
			uint64_t len = 2 + below(max - 1);
			if (len > span)
				len = span;
			uint64_t a = r->lo + below(span - len + 1);
			for (unsigned k = 0; k < len; k++)
				b[k] = (unsigned char)next();
			put(f, path, r, a, b, (size_t)len);
			printf("run 0x%llx %llu\n", (unsigned long long)a,
			       (unsigned long long)len);
			budget -= (unsigned)len;
		} else if (mode == 2) {
			/* An aligned word inside the range (ranges from the
			   PT_LOADs are page aligned; clip otherwise).  */
			uint64_t a = ((r->lo + 7) & ~7ull) + 8 * below(span / 8);
			if (a >= r->hi)
				a = r->lo;
			b[0] = (unsigned char)(get(f, r, a) ^ (1u << below(8)));
			put(f, path, r, a, b, 1);
			printf("flip 0x%llx 1\n", (unsigned long long)a);
			budget--;
		} else {
			uint64_t a = ((r->lo + 7) & ~7ull) + 8 * below(span / 8);
			if (a + 8 > r->hi)
				a = r->lo;
			uint64_t v = below(2) ? r->lo + 16 * below(span / 16 + 1)
					      : below(0x10000);
			for (int k = 0; k < 8; k++)
				b[k] = (unsigned char)(v >> (8 * k));
			size_t len = a + 8 <= r->hi ? 8 : (size_t)(r->hi - a);
			put(f, path, r, a, b, len);
			printf("word 0x%llx %zu\n", (unsigned long long)a, len);
			budget -= len < budget ? (unsigned)len : budget;
		}
	}
	if (fclose(f))
		die(path, "write error");
	return 0;
}

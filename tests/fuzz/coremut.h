/* coremut.h - fuzz-core's structured mutations: change one field of an
 * ELF core's program headers or of one of its notes to a value chosen to
 * be hostile, in place.
 *
 * libFuzzer's own mutations are byte-level: they flip bits, insert
 * dictionary words and copy runs, anywhere in the head.  A p_memsz of
 * 2^40, a PT_LOAD aliasing another one's file data, a note whose descsz
 * runs past its segment, an NT_FILE that claims 2^40 entries: each needs
 * 8 (or 4) bytes set together at one exact offset that depends on the
 * input, which byte-level search hits rarely; none of the round-3 hangs
 * (a context scan over a p_memsz of 64 TiB, a .bss of 1 TiB) was found
 * by fuzz-core, all by hand.  Here the mutator reads the input as a core
 * and writes whole fields: the size never changes and nothing is added,
 * so an input stays within -max_len.
 *
 * What is generated stays bounded: at most the table's own entries turn
 * into aliasing PT_NOTEs (a few hundred), and e_phnum grows by at most
 * 8.  libdwfl has a known quadratic cost in aliased PT_NOTEs (100 000 of
 * them take minutes); that case is kept out of what this mutator makes
 * and out of the seeds, as it is libdwfl's and known.
 *
 * Header only: included by fuzz-core.c alone.
 */
#ifndef HW_FUZZ_COREMUT_H
#define HW_FUZZ_COREMUT_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The generator: xorshift64*, seeded by libFuzzer's seed so that a
   mutation can be replayed from it.  */
static uint64_t cm_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static size_t cm_below(uint64_t *s, size_t n)
{
	return n ? (size_t)(cm_next(s) % n) : 0;
}

/* Little-endian fields, whatever the host (the cores fuzzed are).  */
static uint64_t cm_get(const uint8_t *p, size_t len)
{
	uint64_t v = 0;
	for (size_t i = len; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void cm_put(uint8_t *p, size_t len, uint64_t v)
{
	for (size_t i = 0; i < len; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Where the program header table is, when the input is a 64-bit
   little-endian ELF whose table lies whole inside it.  */
struct cm_core {
	uint8_t *data;
	size_t size;
	uint64_t phoff;
	size_t phnum;
};

#define CM_PHENT 56u  /* sizeof (Elf64_Phdr) */

static bool cm_parse(uint8_t *data, size_t size, struct cm_core *c)
{
	if (size < 64 || memcmp(data, ELFMAG, SELFMAG) != 0 ||
	    data[EI_CLASS] != ELFCLASS64 || data[EI_DATA] != ELFDATA2LSB)
		return false;
	uint64_t phoff = cm_get(data + 32, 8);
	size_t ent = (size_t)cm_get(data + 54, 2);
	size_t num = (size_t)cm_get(data + 56, 2);
	if (ent != CM_PHENT || num == 0 || phoff > size ||
	    num > (size - phoff) / CM_PHENT)
		return false;
	c->data = data;
	c->size = size;
	c->phoff = phoff;
	c->phnum = num;
	return true;
}

static uint8_t *cm_phdr(const struct cm_core *c, size_t i)
{
	return c->data + c->phoff + i * CM_PHENT;
}

/* The fields changed, as offsets in an Elf64_Phdr.  */
static const size_t cm_fields[] = {
	offsetof(Elf64_Phdr, p_offset), offsetof(Elf64_Phdr, p_vaddr),
	offsetof(Elf64_Phdr, p_filesz), offsetof(Elf64_Phdr, p_memsz),
};

/* A value for field f of phdr i: what hurts a reader that believes it.  */
static uint64_t cm_phdr_value(const struct cm_core *c, size_t i, size_t f,
			      uint64_t *s)
{
	uint64_t cur = cm_get(cm_phdr(c, i) + f, 8);
	const uint8_t *other = cm_phdr(c, cm_below(s, c->phnum));
	switch (cm_below(s, 12)) {
	case 0: return 0;
	case 1: return 1ull << 40;          /* a TiB: round 3's .bss */
	case 2: return 1ull << 46;          /* 64 TiB: round 3's context scan */
	case 3: return UINT64_MAX - cm_below(s, 2) * 4095;
	case 4: return 1ull << 63;
	case 5: return cur + 4096;          /* off by a page, either way */
	case 6: return cur - 4096;
	case 7: return cm_get(other + f, 8); /* another segment's */
	/* another segment's other field: an offset as a size, an address as
	   an offset */
	case 8: return cm_get(other + cm_fields[cm_below(s, 4)], 8);
	case 9: return (uint64_t)c->size - cm_below(s, 2) * 4096; /* the file's end */
	case 10: return cur + (cm_next(s) & 0xfff); /* unaligned */
	default: return cur ^ (1ull << cm_below(s, 64));
	}
}

/* One change to the program header table.  */
static void cm_mutate_phdrs(const struct cm_core *c, uint64_t *s)
{
	size_t i = cm_below(s, c->phnum);
	uint8_t *ph = cm_phdr(c, i);
	const uint8_t *other = cm_phdr(c, cm_below(s, c->phnum));
	switch (cm_below(s, 8)) {
	case 0: case 1: case 2: case 3: {
		size_t f = cm_fields[cm_below(s, 4)];
		cm_put(ph + f, 8, cm_phdr_value(c, i, f, s));
		break;
	}
	case 4:
		/* overlapping another segment: its address, a page or a byte
		   further, with this one's own size */
		cm_put(ph + offsetof(Elf64_Phdr, p_vaddr), 8,
		       cm_get(other + offsetof(Elf64_Phdr, p_vaddr), 8) +
			       (cm_below(s, 2) ? 4096 : cm_below(s, 64)));
		break;
	case 5:
		/* aliasing another segment's file data (p_offset and
		   p_filesz), this one's address kept */
		memcpy(ph + offsetof(Elf64_Phdr, p_offset),
		       other + offsetof(Elf64_Phdr, p_offset), 8);
		memcpy(ph + offsetof(Elf64_Phdr, p_filesz),
		       other + offsetof(Elf64_Phdr, p_filesz), 8);
		break;
	case 6: {
		/* another type: a PT_LOAD turned note, a note turned PT_LOAD,
		   flags of none or all */
		static const uint32_t types[] = { PT_NULL, PT_LOAD, PT_NOTE,
						  PT_DYNAMIC, PT_TLS, 0x70000000 };
		if (cm_below(s, 2))
			cm_put(ph, 4, types[cm_below(s, sizeof types / sizeof *types)]);
		else
			cm_put(ph + 4, 4, cm_below(s, 8));
		break;
	}
	default: {
		/* e_phnum: fewer, or a few more (what follows the table read
		   as program headers), never PN_XNUM */
		size_t n = c->phnum;
		if (cm_below(s, 2))
			n = cm_below(s, n);
		else
			n += 1 + cm_below(s, 8);
		if (n >= PN_XNUM)
			n = PN_XNUM - 1;
		cm_put(c->data + 56, 2, n);
		break;
	}
	}
}

/* The notes of one PT_NOTE segment lying inside the input: where each
   starts (4-aligned, as a core's are); returns how many, at most max.  */
static size_t cm_notes(const struct cm_core *c, const uint8_t *ph,
		       size_t at[], size_t max)
{
	uint64_t off = cm_get(ph + offsetof(Elf64_Phdr, p_offset), 8);
	uint64_t len = cm_get(ph + offsetof(Elf64_Phdr, p_filesz), 8);
	if (off > c->size || len > c->size - off)
		return 0;
	size_t n = 0, p = (size_t)off, end = (size_t)(off + len);
	while (n < max && end - p >= 12) {
		uint64_t namesz = cm_get(c->data + p, 4);
		uint64_t descsz = cm_get(c->data + p + 4, 4);
		uint64_t next = 12 + ((namesz + 3) & ~3ull) + ((descsz + 3) & ~3ull);
		at[n++] = p;
		if (next > end - p)
			break;
		p += (size_t)next;
	}
	return n;
}

#define CM_NT_FILE 0x46494c45u /* "FILE" */

/* One change to an NT_FILE note's descriptor: its count, its page size,
   one entry's start, end or file offset.  */
static void cm_mutate_nt_file(uint8_t *desc, size_t len, uint64_t *s)
{
	if (len < 16)
		return;
	uint64_t count = cm_get(desc, 8);
	switch (cm_below(s, 4)) {
	case 0: {
		static const uint64_t counts[] = { 0, 1, 1ull << 40, UINT64_MAX,
						   1ull << 59 };
		uint64_t v = cm_below(s, 2) ? counts[cm_below(s, 5)]
					    : count + cm_below(s, 3) - 1;
		cm_put(desc, 8, v);
		break;
	}
	case 1: {
		static const uint64_t pages[] = { 0, 1, 3, 4096, 65536,
						  1ull << 63, UINT64_MAX };
		cm_put(desc + 8, 8, pages[cm_below(s, 7)]);
		break;
	}
	default: {
		/* an entry (start, end, offset in pages), within what the
		   descriptor holds */
		size_t n = count < (len - 16) / 24 ? (size_t)count : (len - 16) / 24;
		if (n == 0)
			return;
		uint8_t *e = desc + 16 + cm_below(s, n) * 24;
		uint64_t start = cm_get(e, 8), end = cm_get(e + 8, 8);
		switch (cm_below(s, 4)) {
		case 0: cm_put(e, 8, end); cm_put(e + 8, 8, start); break;
		case 1: cm_put(e + 8, 8, start); break;
		case 2: cm_put(e + 8, 8, start + (1ull << 40)); break;
		default: cm_put(e + 16, 8, UINT64_MAX >> cm_below(s, 64)); break;
		}
		break;
	}
	}
}

/* One change to one note of one PT_NOTE segment; false when the input
   has none.  */
static bool cm_mutate_notes(const struct cm_core *c, uint64_t *s)
{
	size_t segs[64], nsegs = 0;
	for (size_t i = 0; i < c->phnum && nsegs < 64; i++)
		if (cm_get(cm_phdr(c, i), 4) == PT_NOTE)
			segs[nsegs++] = i;
	if (!nsegs)
		return false;
	size_t seg = segs[cm_below(s, nsegs)];
	if (cm_below(s, 8) == 0) {
		/* an alias: another program header becomes a PT_NOTE over the
		   same bytes (libdwfl reads each; at most the table's own
		   entries, never the 100 000 that make it quadratic) */
		size_t to = cm_below(s, c->phnum);
		if (to != seg)
			memcpy(cm_phdr(c, to), cm_phdr(c, seg), CM_PHENT);
		return true;
	}
	size_t at[512];
	size_t n = cm_notes(c, cm_phdr(c, seg), at, 512);
	if (!n)
		return false;
	uint8_t *note = c->data + at[cm_below(s, n)];
	uint64_t namesz = cm_get(note, 4), descsz = cm_get(note + 4, 4);
	size_t room = c->size - (size_t)(note - c->data) - 12;
	switch (cm_below(s, 5)) {
	case 0: case 1: {
		/* namesz or descsz: none, one, all bits, past the segment, a
		   little off */
		size_t which = cm_below(s, 2) * 4;
		uint64_t cur = which ? descsz : namesz;
		static const uint64_t sizes[] = { 0, 1, 0xffffffff, 0x7fffffff,
						  0xfffffff0 };
		uint64_t v;
		switch (cm_below(s, 4)) {
		case 0: v = sizes[cm_below(s, 5)]; break;
		case 1: v = room + cm_below(s, 8); break;
		case 2: v = cur + 4; break;
		default: v = cur - 1 - cm_below(s, 4); break;
		}
		cm_put(note + which, 4, v);
		break;
	}
	case 2: {
		/* another type under the same name */
		static const uint32_t types[] = {
			NT_PRSTATUS, NT_PRFPREG, NT_PRPSINFO, NT_AUXV,
			NT_SIGINFO, CM_NT_FILE, 0x202 /* NT_X86_XSTATE */,
			0x400 /* NT_ARM_TLS */, 0x53494749, 0
		};
		cm_put(note + 8, 4, types[cm_below(s, sizeof types / sizeof *types)]);
		break;
	}
	default: {
		/* inside the descriptor: NT_FILE's table, else one word */
		uint64_t dpos = 12 + ((namesz + 3) & ~3ull);
		if (dpos > room + 12 || descsz > room + 12 - dpos)
			return false;
		uint8_t *desc = note + dpos;
		if (cm_get(note + 8, 4) == CM_NT_FILE) {
			cm_mutate_nt_file(desc, (size_t)descsz, s);
		} else if (descsz >= 8) {
			size_t w = cm_below(s, (size_t)descsz / 8) * 8;
			static const uint64_t words[] = { 0, 1ull << 40,
							  UINT64_MAX, 1ull << 63 };
			cm_put(desc + w, 8, words[cm_below(s, 4)]);
		}
		break;
	}
	}
	return true;
}

/* Mutate the core in data[0, size) in place; false when it is no ELF64
   core this can read (the caller falls back to libFuzzer's own).  */
static bool cm_mutate(uint8_t *data, size_t size, unsigned int seed)
{
	struct cm_core c;
	if (!cm_parse(data, size, &c))
		return false;
	uint64_t s = 0x9e3779b97f4a7c15ull ^ seed;
	if (!s)
		s = 1;
	/* one to three changes: two fields together make an alias */
	size_t rounds = 1 + cm_below(&s, 3);
	bool any = false;
	for (size_t r = 0; r < rounds; r++) {
		if (cm_below(&s, 2))
			cm_mutate_phdrs(&c, &s), any = true;
		else
			any |= cm_mutate_notes(&c, &s);
	}
	return any;
}

#endif /* HW_FUZZ_COREMUT_H */

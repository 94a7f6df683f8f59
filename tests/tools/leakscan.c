/* leakscan - check a leaks corpus core against its own truth, without
 * heapwalk: the truth is only right if the program really dropped every
 * pointer it says it dropped.
 *
 *   leakscan CORE TRUTH
 *
 * Every 8-byte value at every 4-byte offset of the core file (memory and
 * notes: registers too) that points into a block the truth calls lost
 * (definite, indirect, cycle) must lie in memory of a lost block or of a
 * freed one (stale data); a "possible" block must have no pointer to its
 * start outside those, and at least one pointer into it.  A block
 * "reachable" from a root must be pointed to somewhere; one held only
 * from a register (holder reg:NAME) by a value in the notes (the
 * threads' registers) and by no word of memory.  A value 16 bytes
 * before another block of the truth is that block's chunk header (glibc's
 * own form), not a pointer into the block before it, whose last bytes
 * the header overlaps.  Fit for ptmalloc cores, whose own metadata points
 * at free chunks only.
 * Prints "leakscan: N blocks, M problems"; exit 1 on a problem.
 */
#define _POSIX_C_SOURCE 200809L
#define TOOL_NAME "leakscan"
#include <stdbool.h>

#include "coreelf.h"
#include "leaktruth.h"

/* Is v the chunk header of a block of the truth (its address - 16)?  */
static bool header_of_block(unsigned long long v)
{
	for (size_t i = 0; i < nlblocks; i++)
		if (v + 16 == lblocks[i].addr)
			return true;
	return false;
}

static void die_truth(const char *what)
{
	fprintf(stderr, "leakscan: %s\n", what);
	exit(2);
}

static Elf64_Phdr *ph;
static unsigned nph;

/* The address a file offset holds (PT_LOAD data), or 0 (notes).  */
static unsigned long long vaddr_of(unsigned long long off)
{
	for (unsigned i = 0; i < nph; i++)
		if (ph[i].p_type == PT_LOAD && off >= ph[i].p_offset &&
		    off - ph[i].p_offset < ph[i].p_filesz)
			return ph[i].p_vaddr + (off - ph[i].p_offset);
	return 0;
}

/* Is addr inside a lost or freed block of the truth?  */
static bool in_tolerated(unsigned long long addr)
{
	for (size_t i = 0; i < nlblocks; i++) {
		const struct lblock *b = &lblocks[i];
		if ((lost_kind(b->kind) || !strcmp(b->kind, "freed")) &&
		    addr >= b->addr && addr - b->addr < b->size)
			return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: leakscan CORE TRUTH\n");
		return 2;
	}
	read_leak_truth(argv[2]);
	FILE *f;
	Elf64_Ehdr eh;
	uint64_t size;
	ph = core_open(argv[1], "rb", &f, &eh, &size);
	nph = eh.e_phnum;
	unsigned char *data = malloc(size ? size : 1);
	if (!data || fseeko(f, 0, SEEK_SET) || fread(data, 1, size, f) != size)
		die(argv[1], "cannot read the core");
	fclose(f);
	unsigned long long *starts = calloc(nlblocks, sizeof *starts);
	unsigned long long *inside = calloc(nlblocks, sizeof *inside);
	unsigned long long *in_notes = calloc(nlblocks, sizeof *in_notes);
	if (!starts || !inside || !in_notes)
		die(argv[1], "out of memory");
	unsigned long problems = 0;
	for (uint64_t off = 0; off + 8 <= size; off += 4) {
		unsigned long long v;
		memcpy(&v, data + off, 8);
		for (size_t i = 0; i < nlblocks; i++) {
			const struct lblock *b = &lblocks[i];
			if (v < b->addr || v - b->addr >= b->size ||
			    header_of_block(v))
				continue;
			unsigned long long at = vaddr_of(off);
			bool tolerated = at && (off & 7) == (at & 7) &&
					 in_tolerated(at);
			if (tolerated)
				continue;
			/* A value at an offset not 8-aligned in memory is no
			   pointer a scan would take; in notes it may be.  */
			if (at && (at & 7))
				continue;
			if (v == b->addr)
				starts[i]++;
			else
				inside[i]++;
			if (!at && v == b->addr)
				in_notes[i]++;
			if (at && !strncmp(b->holder, "reg:", 4) &&
			    problems++ < 20)
				printf("leakscan: block 0x%llx, held only from "
				       "%s, is pointed to from memory 0x%llx\n",
				       b->addr, b->holder + 4, at);
			if (lost_kind(b->kind) && problems++ < 20)
				printf("leakscan: %s block 0x%llx is pointed to "
				       "from %s 0x%llx (file offset %llu)\n",
				       b->kind, b->addr, at ? "memory" : "notes",
				       at, (unsigned long long)off);
		}
	}
	for (size_t i = 0; i < nlblocks; i++) {
		const struct lblock *b = &lblocks[i];
		if (!strcmp(b->kind, "possible") && (starts[i] || !inside[i])) {
			problems++;
			printf("leakscan: possible block 0x%llx: %llu pointers "
			       "to its start, %llu into it\n", b->addr,
			       starts[i], inside[i]);
		}
		if (!strcmp(b->kind, "reachable") && !starts[i]) {
			problems++;
			printf("leakscan: reachable block 0x%llx: no pointer to "
			       "it\n", b->addr);
		}
		if (!strncmp(b->holder, "reg:", 4) && !in_notes[i]) {
			problems++;
			printf("leakscan: block 0x%llx: no register holds it\n",
			       b->addr);
		}
	}
	printf("leakscan: %zu blocks, %lu problems\n", nlblocks, problems);
	free(data);
	free(starts);
	free(inside);
	free(in_notes);
	return problems ? 1 : 0;
}

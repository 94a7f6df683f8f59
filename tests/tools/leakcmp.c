/* leakcmp - compare `heapwalk CORE leaks --reachable --json` with the
 * truth a leaks corpus program recorded.
 *
 *   leakcmp TRUTH LEAKS.jsonl
 *
 * Every block of the truth must be reported with its kind: reachable,
 * possible, definite, indirect; of a "cycle", exactly one block
 * definite and the others indirect; a "freed" one not at all.  Any
 * other block heapwalk calls definite or indirect is a false leak (the
 * program's other blocks, stdio's and libc's, are all reachable), but
 * for each "libleak" of the truth: a block the allocator's library loses
 * itself, which must be listed definite exactly once.
 * Prints "leakcmp: N blocks, M mismatches"; exit 1 on a mismatch.
 */
#define CMP_NAME "leakcmp"
#include "cmp.h"
#include "leaktruth.h"

static void die_truth(const char *what)
{
	fatal("%s", what);
}

static struct lblock *find_block(unsigned long long addr)
{
	for (size_t i = 0; i < nlblocks; i++)
		if (lblocks[i].addr == addr)
			return &lblocks[i];
	return NULL;
}

/* The library's own lost block this line is, if any: its size is the
   recorded one (or up to 16 bytes more, what a size class rounds it
   to) and
   its "head" starts with the recorded word, little-endian.  */
static struct llibleak *find_libleak(const char *line, unsigned long long size)
{
	char head[80];
	if (!jstr(jget(line, "head"), head, sizeof head) || strlen(head) < 16)
		return NULL;
	unsigned long long word = 0;
	for (int i = 7; i >= 0; i--) {
		unsigned byte;
		if (sscanf(head + 2 * i, "%2x", &byte) != 1)
			return NULL;
		word = word << 8 | byte;
	}
	for (size_t i = 0; i < nllibleaks; i++)
		if (llibleaks[i].word == word && size >= llibleaks[i].size &&
		    size <= llibleaks[i].size + 16)
			return &llibleaks[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		fatal("usage: leakcmp TRUTH LEAKS.jsonl");
	read_leak_truth(argv[1]);
	size_t len;
	char *text = slurp(argv[2], &len);
	unsigned long lines = 0, others = 0;
	for (char *line = text, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			fatal("line %lu has no end", lines + 1);
		*nl = 0;
		lines++;
		unsigned long long addr, size;
		char kind[16];
		if (!jvalid(line) || !jhex(jget(line, "addr"), &addr) ||
		    !jnum(jget(line, "size"), &size) ||
		    !jstr(jget(line, "kind"), kind, sizeof kind))
			fatal("line %lu is not {addr, size, kind}: %s", lines,
			      line);
		struct lblock *b = find_block(addr);
		if (!b) {
			struct llibleak *l = NULL;
			if (!strcmp(kind, "definite"))
				l = find_libleak(line, size);
			if (l)
				l->seen++;
			else if (strcmp(kind, "definite") == 0 ||
				 strcmp(kind, "indirect") == 0)
				mismatch("0x%llx (%llu bytes): %s, but the "
					 "program holds it", addr, size, kind);
			others++;
			continue;
		}
		if (b->seen++)
			mismatch("0x%llx is listed twice", addr);
		snprintf(b->got, sizeof b->got, "%s", kind);
		if (size < b->size)
			mismatch("0x%llx: size %llu, but the program asked for "
				 "%llu", addr, size, b->size);
	}
	unsigned cycle_definite = 0, cycle_blocks = 0;
	for (size_t i = 0; i < nlblocks; i++) {
		const struct lblock *b = &lblocks[i];
		if (!strcmp(b->kind, "freed")) {
			if (b->seen)
				mismatch("0x%llx was freed, but is listed as %s",
					 b->addr, b->got);
			continue;
		}
		if (!b->seen) {
			mismatch("0x%llx (%s, held by %s) is not listed",
				 b->addr, b->kind, b->how);
			continue;
		}
		if (!strcmp(b->kind, "cycle")) {
			cycle_blocks++;
			cycle_definite += !strcmp(b->got, "definite");
			if (strcmp(b->got, "definite") && strcmp(b->got, "indirect"))
				mismatch("0x%llx (a lost cycle): %s", b->addr,
					 b->got);
		} else if (strcmp(b->kind, b->got))
			mismatch("0x%llx (held by %s): %s, not %s", b->addr,
				 b->how, b->got, b->kind);
	}
	for (size_t i = 0; i < nllibleaks; i++)
		if (llibleaks[i].seen != 1)
			mismatch("the library's lost %s (%llu bytes, first word "
				 "0x%llx) is listed definite %d times, not once",
				 llibleaks[i].name, llibleaks[i].size,
				 llibleaks[i].word, llibleaks[i].seen);
	if (cycle_blocks && cycle_definite != 1)
		mismatch("the lost cycle has %u definite blocks, not 1",
			 cycle_definite);
	free(text);
	char what[96];
	snprintf(what, sizeof what, "%zu blocks (%lu other blocks listed)",
		 nlblocks, others);
	return cmp_finish(what);
}

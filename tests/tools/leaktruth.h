/* leaktruth.h - the truth a leaks corpus program records (corpora/
 * ptmalloc/leaks1.c): "block 0xADDR SIZE KIND HOW [HOLDER]" and
 * "libleak 0xWORD SIZE NAME" lines.  Header only,
 * for leakscan.c and leakcmp.c; the tool defines die_truth().
 */
#ifndef HW_TOOLS_LEAKTRUTH_H
#define HW_TOOLS_LEAKTRUTH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lblock {
	unsigned long long addr, size;
	char kind[16], how[24];
	char holder[40];       /* what holds it (g_keep, 0xBLOCK+OFF, reg:r12,
				  ...), or "-" (absent in old
				  truth files: "") */
	int seen;              /* leakcmp: lines of heapwalk naming it */
	char got[16];          /* leakcmp: the kind heapwalk gave */
};

static struct lblock *lblocks;
static size_t nlblocks;

/* "libleak 0xWORD SIZE NAME": a block the allocator's library itself
   loses, which the program cannot know the address of; it is told by
   its first word (a vtable pointer).  */
struct llibleak {
	unsigned long long word, size;
	char name[40];
	int seen;              /* leakcmp: definite blocks matching it */
};

#define MAX_LIBLEAKS 8
static struct llibleak llibleaks[MAX_LIBLEAKS];
static size_t nllibleaks;

static void die_truth(const char *what);

static void read_leak_truth(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die_truth("cannot open the truth file");
	char line[256];
	size_t cap = 0;
	int ended = 0;
	while (fgets(line, sizeof line, f)) {
		struct lblock b = { 0 };
		if (!strcmp(line, "end\n")) {
			ended = 1;
			break;
		}
		if (!strncmp(line, "libleak ", 8)) {
			struct llibleak *l = &llibleaks[nllibleaks];
			if (nllibleaks == MAX_LIBLEAKS ||
			    sscanf(line, "libleak %llx %llu %39s", &l->word,
				   &l->size, l->name) != 3)
				die_truth("a libleak line does not parse");
			nllibleaks++;
			continue;
		}
		if (strncmp(line, "block ", 6))
			continue;
		if (sscanf(line, "block %llx %llu %15s %23s %39s", &b.addr,
			   &b.size, b.kind, b.how, b.holder) < 4)
			die_truth("a block line does not parse");
		if (nlblocks == cap) {
			cap = cap ? 2 * cap : 64;
			lblocks = realloc(lblocks, cap * sizeof *lblocks);
			if (!lblocks)
				die_truth("out of memory");
		}
		lblocks[nlblocks++] = b;
	}
	fclose(f);
	if (!ended || !nlblocks)
		die_truth("the truth is cut short (no \"end\")");
}

__attribute__((unused)) static int lost_kind(const char *k)
{
	return !strcmp(k, "definite") || !strcmp(k, "indirect") ||
	       !strcmp(k, "cycle");
}

#endif /* HW_TOOLS_LEAKTRUTH_H */

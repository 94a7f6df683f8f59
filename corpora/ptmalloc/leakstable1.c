/* leakstable1 - `leaks` on a heap whose reachable blocks hang off one
 * table of 700,000 pointers: more than a mark stack holds (2^19 entries
 * per thread), so marking must leave blocks behind and find them again
 * by sweeping the block map; among them a few lost blocks and chains,
 * known by construction.  Then abort() for a core.
 *
 *   gcc -O0 -g -o prog leakstable1.c && ./prog truth.txt
 *
 * Truth (argv[1]), in leaks1's format (corpora/ptmalloc/leaks1.c):
 *   prog leakstable1
 *   block 0xUSER SIZE KIND HOW HOLDER
 *     the table (reachable, global, g_table); every 10,000th entry's
 *     block (reachable, heap, 0xTABLE+OFFSET); each entry's second
 *     block, held only by its first (reachable, heap); the lost blocks
 *     (definite, none, -) and what they hold (indirect, leaked-block).
 *   table COUNT   (entries of the table)
 *   end
 * Blocks the truth does not list are the table's other entries: all
 * reachable, and leakcmp checks that nothing else is called lost.  The
 * program keeps no pointer to a lost block (addresses complemented,
 * frames scrubbed), as leaks1 does.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/out.h"

#define ENTRIES 700000
#define LOST 64

struct pair {
	struct pair *second;   /* the entry's second block, or NULL */
	char pad[16];
};

static struct pair **g_table;
static uintptr_t lost_hidden[LOST], chain_hidden[LOST];

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		die("malloc failed");
	memset(p, 0xa5, n);   /* no stray pointers */
	return p;
}

static __attribute__((noinline)) void scrub(void)
{
	char buf[64 << 10];
	explicit_bzero(buf, sizeof buf);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static __attribute__((noinline)) void make_table(void)
{
	g_table = xmalloc(ENTRIES * sizeof *g_table);
	for (size_t i = 0; i < ENTRIES; i++) {
		struct pair *p = xmalloc(sizeof *p);
		p->second = NULL;
		if (i % 7 == 0) {
			p->second = xmalloc(sizeof *p);
			p->second->second = NULL;
		}
		g_table[i] = p;
	}
}

/* Lost blocks between the table's (malloc reuses no freed space here:
   they come after the table's blocks in the heap), each holding one
   more block: definite, and indirect.  */
static __attribute__((noinline)) void make_lost(void)
{
	for (size_t i = 0; i < LOST; i++) {
		struct pair *p = xmalloc(sizeof *p);
		p->second = xmalloc(48);
		lost_hidden[i] = ~(uintptr_t)p;
		chain_hidden[i] = ~(uintptr_t)p->second;
	}
}

/* A truth line; addresses come complemented (~p) and are turned back
   only inside out_num(): a lost block's address left in an argument
   register (the fifth, which nothing after clobbers) would hold it.  */
static void block_line(uintptr_t addr_hidden, size_t size, const char *kind,
		       const char *how, uintptr_t holder_hidden, size_t off)
{
	out_str("block ");
	out_num(~addr_hidden, 16);
	out_str(" ");
	out_num(size, 10);
	out_str(" ");
	out_str(kind);
	out_str(" ");
	out_str(how);
	out_str(" ");
	if (holder_hidden) {
		out_num(~holder_hidden, 16);
		out_str("+");
		out_num(off, 10);
	} else {
		out_str(!strcmp(how, "global") ? "g_table" : "-");
	}
	out_str("\n");
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: prog TRUTH");
	out_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out_fd < 0)
		die("cannot open the truth file");
	make_table();
	make_lost();
	scrub();
	out_str("prog leakstable1\n");
	block_line(~(uintptr_t)g_table, ENTRIES * sizeof *g_table,
		   "reachable", "global", 0, 0);
	for (size_t i = 0; i < ENTRIES; i += 10000) {
		struct pair *p = g_table[i];
		block_line(~(uintptr_t)p, sizeof *p, "reachable", "heap",
			   ~(uintptr_t)g_table, i * sizeof *g_table);
		if (p->second)
			block_line(~(uintptr_t)p->second, sizeof *p,
				   "reachable", "heap", ~(uintptr_t)p, 0);
	}
	for (size_t i = 0; i < LOST; i++) {
		block_line(lost_hidden[i], sizeof(struct pair), "definite",
			   "none", 0, 0);
		block_line(chain_hidden[i], 48, "indirect", "leaked-block",
			   lost_hidden[i], 0);
	}
	out_str("table ");
	out_num(ENTRIES, 10);
	out_str("\nend\n");
	out_flush();
	scrub();
	abort();
}

/* orphans2 - a write after free breaks the list eleven 40-byte chunks
 * (chunk size 0x30) were freed into, at its head: glibc up to 2.41 puts
 * seven in the tcache and the last four in fastbin 1, whose head's fd is
 * overwritten with 0x4141414141414141; glibc 2.43 and later (sixteen
 * tcache slots, no fastbins) put all eleven in the tcache, whose head's
 * next is overwritten.  Either way the chunks beyond the head are
 * orphans: free, in their list still by what they hold (a tcache entry's
 * key; a fastbin entry's safe-linked fd leading through chunks of its
 * size to the list's end), reached by no list, and no leak.
 *
 *   gcc -O0 -g -pthread -o prog orphans2.c && ./prog truth.txt
 *
 * The truth (truth.h) is the heap as glibc left it after the frees.
 * Comment lines name the damage and the orphans:
 *
 *   # damage 0xADDR 0xVALUE   the word at ADDR (the head's link) now
 *                             holds VALUE
 *   # orphan 0xUSER           each chunk no list reaches after it
 */
#include "truth.h"

#define DAMAGE 0x4141414141414141ull
#define NFREED 11

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: orphans2 TRUTHFILE");
	truth_open(argv[1], "orphans2");
	int t = thread_register();
	void *p[NFREED];
	ta(t, 24);
	for (int i = 0; i < NFREED; i++) {
		p[i] = ta(t, 40);
		ta(t, 24);        /* apart: no fastbin chunk has a free
				     neighbour */
	}
	for (int i = 0; i < NFREED; i++)
		tf(t, p[i]);
	/* The broken list's head is the last chunk freed into it; the
	   orphans are the others in that list.  */
	int fill = TCACHE_FILL, first = FAST_MAX_CHUNK ? fill : 0;
	void *head = p[NFREED - 1];
	out_str("# damage ");
	out_num((uintptr_t)head, 16);
	out_str(" ");
	out_num(DAMAGE, 16);
	out_str("\n");
	for (int i = first; i < NFREED - 1; i++) {
		out_str("# orphan ");
		out_num((uintptr_t)p[i], 16);
		out_str("\n");
	}
	truth_threads_and_allocs();
	truth_mallinfo_end();
	*(volatile uint64_t *)head = DAMAGE;
	abort();
}

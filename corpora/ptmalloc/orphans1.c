/* orphans1 - a write after free breaks a tcache list, as a use-after-free
 * bug does: two 72-byte chunks (chunk size 0x50) are freed, A then B, so
 * that B heads tcache bin 3 and its next leads to A; then B's next is
 * overwritten with 0x4141414141414141 and the program aborts.  These are
 * the process's only tcache entries: B's key word (intact) is the only
 * one a list reaches, and A, which no list reaches any more, still holds
 * the key too.  A is an orphaned tcache entry: free, in the tcache, not a
 * leak.
 *
 *   gcc -O0 -g -pthread -o prog orphans1.c && ./prog truth.txt
 *
 * The truth (truth.h) is the heap as glibc left it after the two frees:
 * A and B in the tcache.  A comment line names the damage:
 *
 *   # damage 0xADDR 0xVALUE   the word at ADDR (B's next) now holds VALUE
 *   # orphan 0xUSER           a chunk no list reaches after the damage
 */
#include "truth.h"

#define DAMAGE 0x4141414141414141ull

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: orphans1 TRUTHFILE");
	truth_open(argv[1], "orphans1");
	int t = thread_register();
	ta(t, 24);
	void *a = ta(t, 72), *b = ta(t, 72);
	ta(t, 30);                             /* keeps them off top */
	tf(t, a);
	tf(t, b);
	out_str("# damage ");
	out_num((uintptr_t)b, 16);
	out_str(" ");
	out_num(DAMAGE, 16);
	out_str("\n# orphan ");
	out_num((uintptr_t)a, 16);
	out_str("\n");
	truth_threads_and_allocs();
	truth_mallinfo_end();
	*(volatile uint64_t *)b = DAMAGE;
	abort();
}

/* orphans3 - a write after free destroys the whole head of a tcache
 * list, key and all, as a use-after-free memset does: four 72-byte
 * chunks (chunk size 0x50) are freed, A1, A2, A3 then B, so that B heads
 * tcache bin 3 and its next leads to A3; then B's first 16 bytes (its
 * next and its key word) are overwritten with 0x41 bytes and the program
 * aborts.  These are the process's only tcache entries, so no list
 * reaches an entry that still holds glibc's tcache key: it can only be
 * learnt from A1, A2 and A3, which no list reaches any more and which
 * still hold it (the tcache's address up to glibc 2.33, glibc's random
 * tcache_key from 2.34).  They are orphaned tcache entries: free, in the
 * tcache, not leaks.
 *
 *   gcc -O0 -g -pthread -o prog orphans3.c && ./prog truth.txt
 *
 * The truth (truth.h) is the heap as glibc left it after the frees.
 * Comment lines name the damage and the orphans:
 *
 *   # damage 0xADDR 0xVALUE   the words at ADDR and ADDR+8 (B's next
 *                             and key) now hold VALUE
 *   # orphan 0xUSER           each chunk no list reaches after it
 */
#include "truth.h"

#define DAMAGE 0x4141414141414141ull
#define NORPHANS 3

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: orphans3 TRUTHFILE");
	truth_open(argv[1], "orphans3");
	int t = thread_register();
	void *a[NORPHANS];
	ta(t, 24);
	for (int i = 0; i < NORPHANS; i++)
		a[i] = ta(t, 72);
	void *b = ta(t, 72);
	ta(t, 30);                             /* keeps them off top */
	for (int i = 0; i < NORPHANS; i++)
		tf(t, a[i]);
	tf(t, b);
	out_str("# damage ");
	out_num((uintptr_t)b, 16);
	out_str(" ");
	out_num(DAMAGE, 16);
	out_str("\n");
	for (int i = 0; i < NORPHANS; i++) {
		out_str("# orphan ");
		out_num((uintptr_t)a[i], 16);
		out_str("\n");
	}
	truth_threads_and_allocs();
	truth_mallinfo_end();
	/* Both words, as a memset through a dangling pointer leaves them
	   (volatile: the compiler must not drop stores to freed memory).  */
	volatile uint64_t *w = b;
	w[0] = DAMAGE;
	w[1] = DAMAGE;
	abort();
}

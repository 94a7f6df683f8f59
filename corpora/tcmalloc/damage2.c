/* damage2 - damage1's use after free, in a program that kept no pointer
 * to what it freed: 64 blocks of 48 bytes are allocated and freed (the
 * thread cache's list of their class grows to hold them), then five are
 * allocated and freed again into that list and dropped, and the head of
 * the list, the last one freed, has its first word (the link to the next
 * free object) overwritten through a dangling pointer.  The four freed
 * before it are orphans: free (tcmalloc's thread cache counts them in its
 * list's length), but no list reaches them and nothing points at them,
 * so a walk reads them as in use and a reachability scan finds them
 * unreachable: they must never be called definite leaks.  So must the
 * rest of the 64, free in the list behind them or in the central lists.
 * Then abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog damage2.c -ltcmalloc_minimal
 *   ./prog truth.txt
 *
 * The five blocks are not among the records (the records' table would
 * point at them); the program keeps their addresses hidden (xor'ed with
 * HIDE) and writes them as text.  The truth (truth.h's format) has more
 * lines before "end":
 *   damage 0xADDR      the object whose link was overwritten
 *   orphan 0xADDR      each free object behind it, which no list reaches
 */
static void damage_truth(void);
#define TC_EXTRA_TRUTH damage_truth
#include "truth.h"

#define NFREED 5
#define NWARM 64
#define HIDE 0x5a5a5a5a5a5a5a5aull

static volatile uintptr_t hidden[NFREED], warm[NWARM];

static void out_hidden(const char *what, volatile uintptr_t *v, int i)
{
	volatile uintptr_t a = v[i] ^ HIDE;
	out_str(what);
	out_num(a, 16);
	out_str("\n");
	a = 0;
}

static void damage_truth(void)
{
	out_hidden("damage ", hidden, NFREED - 1);
	for (int i = 0; i < NFREED - 1; i++)
		out_hidden("orphan ", hidden, i);
	for (int i = 0; i < NWARM; i++)
		out_hidden("freed ", warm, i);
}

/* n blocks of 48 bytes allocated, then freed, their addresses hidden in
   keep[].  Not inlined: the pointers live in this frame only, which is
   gone (and written over by the calls after it) before the core is
   made.  */
static __attribute__((noinline)) void make_and_free(volatile uintptr_t *keep,
						    int n)
{
	void *volatile p[NWARM];
	for (int i = 0; i < n; i++) {
		p[i] = malloc(48);
		if (!p[i])
			die("malloc failed");
		keep[i] = (uintptr_t)p[i] ^ HIDE;
	}
	for (int i = 0; i < n; i++) {
		free(p[i]);
		p[i] = NULL;
	}
}

/* The use after free: the list's link is the object's first word.  */
static __attribute__((noinline)) void write_after_free(void)
{
	*(volatile uintptr_t *)(hidden[NFREED - 1] ^ HIDE) =
		0x4141414141414140u;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: damage2 TRUTHFILE");
	live_truth_open(argv[1]);
	int t = thread_register();
	(void)t;
	/* No build_heap: its records' table keeps the addresses of the
	   blocks it freed, which these five could reuse.  */
	tc_warmup();
	/* The thread cache's list of the class grows with use (its slow
	   start): 64 blocks through it make room for the five.  */
	make_and_free(warm, NWARM);
	make_and_free(hidden, NFREED);
	write_after_free();
	truth_write_and_abort("damage2", false);
}

/* damage1 - basic1's heap on gperftools tcmalloc, then a use after free:
 * five 48-byte blocks are freed into the thread cache and the last one
 * freed, the head of that cache's list, has its first word (the list's
 * link to the next free object) overwritten, as a program writing
 * through a dangling pointer does.  Then abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog damage1.c -ltcmalloc_minimal
 *   ./prog truth.txt
 *
 * The truth (truth.h's format) has one more line before "end":
 *   damage 0xADDR      the object whose link was overwritten
 * heapwalk must name that object in `check` and walk everything else.
 */
static void damage_truth(void);
#define TC_EXTRA_TRUTH damage_truth
#include "truth.h"

static uintptr_t damaged;

static void damage_truth(void)
{
	out_str("damage ");
	out_num(damaged, 16);
	out_str("\n");
}

int main(int argc, char **argv)
{
	static void *p[5];
	if (argc != 2)
		die("usage: damage1 TRUTHFILE");
	live_truth_open(argv[1]);
	int t = thread_register();
	tc_warmup();
	build_heap(t, 0);
	for (int i = 0; i < 5; i++)
		p[i] = ta(t, 48);
	for (int i = 0; i < 5; i++)
		tf(p[i]);
	/* The use after free: the list's link is the object's first word. */
	damaged = (uintptr_t)p[4];
	*(volatile uintptr_t *)p[4] = 0x4141414141414140u;
	truth_write_and_abort("damage1", false);
}

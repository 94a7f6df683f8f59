/* doublefree1 - one thread frees a chunk twice: glibc's tcache check
 * (2.29 and later) finds the chunk already in its tcache bin and aborts
 * from inside free() with "free(): double free detected in tcache 2";
 * the kernel writes the core.
 *
 *   gcc -O0 -g -pthread -o prog doublefree1.c && ./prog truth.txt
 *
 * The truth file (truth.h) describes the heap as it is when free() is
 * called the second time: the check aborts before it changes anything.
 * Comment lines (truthcmp skips them) say what the crash must show:
 *
 *   # crash signal 6
 *   # crash message free(): double free detected in tcache 2
 *   # crash frames free double_free main
 *        the functions the crashing thread's backtrace passes through,
 *        innermost first, in that order (others may come between)
 *   # crash freed_twice 0xUSER
 *        the pointer freed twice (a chunk now in the tcache)
 *
 * glibc also writes the message to stderr (make-core.sh keeps it in
 * OUTDIR/build.log), where tests read what glibc itself said.
 */
#include "truth.h"

/* A frame of its own between main and free, named in the truth.  */
__attribute__((noinline)) static void double_free(void *p)
{
	free(p);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: doublefree1 TRUTHFILE");
	truth_open(argv[1], "doublefree1");
	int t = thread_register();
	void *small[4], *mid[3];

	ta(t, 24);
	ta(t, 100);
	for (int i = 0; i < 4; i++)
		small[i] = ta(t, 40);          /* chunk 0x30 */
	for (int i = 0; i < 3; i++)
		mid[i] = ta(t, 200);           /* chunk 0xd0 */
	ta(t, 30);                             /* keeps them off top */

	/* Five chunks in two tcache bins; the victim in the middle of
	   its list, so that it is neither bin's head.  */
	tf(t, small[0]);
	tf(t, small[1]);
	tf(t, small[2]);
	tf(t, mid[0]);
	tf(t, mid[1]);
	void *victim = small[1];

	out_str("# crash signal 6\n");
	out_str("# crash message free(): double free detected in tcache 2\n");
	out_str("# crash frames free double_free main\n");
	out_str("# crash freed_twice ");
	out_num((uintptr_t)victim, 16);
	out_str("\n");
	truth_threads_and_allocs();
	truth_mallinfo_end();
	double_free(victim);
	die("glibc did not catch the double free");
}

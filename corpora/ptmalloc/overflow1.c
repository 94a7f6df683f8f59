/* overflow1 - one thread writes past the end of a block into the next
 * chunk's size field, then frees the block: glibc's free() checks the
 * next chunk's size and aborts with "free(): invalid next size
 * (normal)"; the kernel writes the core.
 *
 *   gcc -O0 -g -pthread -o prog overflow1.c && ./prog truth.txt
 *
 * The block is too large for a tcache (2000 bytes), so that free()
 * reaches _int_free()'s checks.  The truth file (truth.h) describes the
 * heap before the overflow; the next chunk's header is damaged after
 * it, so only the "# crash" lines are meant to be compared:
 *
 *   # crash signal 6
 *   # crash message free(): invalid next size (normal)
 *   # crash frames free overflow_and_free main
 *   # crash being_freed 0xUSER
 *        the block free() was given, whose overflow glibc caught
 *
 * glibc also writes the message to stderr (make-core.sh keeps it in
 * OUTDIR/build.log).
 */
#include "truth.h"

/* A frame of its own between main and free, named in the truth.  The
   bytes are written through a volatile pointer: the compiler must
   neither warn about nor drop the overflow.  */
__attribute__((noinline)) static void overflow_and_free(char *p,
							 size_t usable)
{
	volatile char *v = p;
	for (size_t i = 0; i < usable + 8; i++)
		v[i] = 'A';
	free(p);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: overflow1 TRUTHFILE");
	truth_open(argv[1], "overflow1");
	int t = thread_register();

	ta(t, 24);
	char *victim = ta(t, 2000);
	ta(t, 2000);                           /* the chunk overwritten */
	ta(t, 30);                             /* keeps them off top */

	out_str("# crash signal 6\n");
	out_str("# crash message free(): invalid next size (normal)\n");
	out_str("# crash frames free overflow_and_free main\n");
	out_str("# crash being_freed ");
	out_num((uintptr_t)victim, 16);
	out_str("\n");
	truth_threads_and_allocs();
	truth_mallinfo_end();
	/* Up to and over the next chunk's size field: the usable size is
	   the chunk's less its own size field.  */
	overflow_and_free(victim, chunk_size(victim) - 8);
	die("glibc did not catch the overflow");
}

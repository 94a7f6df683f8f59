/* leaks1 - a heap whose reachability is known by construction, for
 * `leaks`: blocks held by each kind of root, blocks held only through
 * interior pointers, blocks whose last pointer was dropped, blocks held
 * only by leaked blocks, a leaked cycle, blocks whose only pointer lies
 * in freed memory; then abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog leaks1.c && ./prog truth.txt
 *
 * Truth (argv[1]), one record per line:
 *   prog leaks1
 *   block 0xUSER SIZE KIND HOW
 *     SIZE: what the program asked malloc for.
 *     KIND: reachable | possible | definite | indirect | cycle | freed
 *       (Valgrind memcheck's categories; "cycle": a leaked cycle, one of
 *       whose blocks is definite and the others indirect, whichever the
 *       scan meets first; "freed": given back to malloc, so no block: it
 *       must not be reported at all)
 *     HOW: what holds it: global, stack (main's frame), thread-stack,
 *       tls (a __thread variable of the main thread), thread-tls, mmap (a
 *       page of the program's own anonymous mapping), heap (a reachable
 *       block; one of them is held only from the last word of a 3 MiB
 *       block), interior-global, interior-heap (a pointer 24 / 8 bytes
 *       into it), leaked-block (a definite or indirect block), cycle,
 *       freed-memory (a pointer left in a freed chunk's data), none
 *   end
 *
 * The program must not hold the leaked blocks itself: every address it
 * keeps for the truth is stored complemented (~p, never a pointer into
 * the heap), the blocks are made in functions whose frames are zeroed
 * afterwards (scrub()), and the truth is written without the heap (a
 * static buffer and write(2), corpora/common/out.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../common/out.h"

#define MAX_BLOCKS 64
#define HUGE (3u << 20)

struct block {
	uintptr_t hidden;   /* ~address */
	size_t size;
	const char *kind, *how;
};

static struct block blocks[MAX_BLOCKS];
static int nblocks;

/* The roots the program keeps on purpose.  */
struct node {
	struct node *next;
	char *inner;        /* an interior pointer */
	char pad[32];
};
static struct node *g_keep;
static void *g_big, *g_huge, *g_guard;
static char *g_interior;
static __thread void *tls_keep;
static void **g_page;   /* the program's own anonymous page */

static int ready_pipe[2], park_pipe[2];

static void note(const void *p, size_t size, const char *kind, const char *how)
{
	if (nblocks == MAX_BLOCKS)
		die("too many blocks");
	blocks[nblocks++] = (struct block){ ~(uintptr_t)p, size, kind, how };
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		die("malloc failed");
	/* Recognisable bytes, never a pointer: the scan must find only the
	   pointers stored on purpose.  */
	memset(p, 0xa5, n);
	return p;
}

/* Zero a big piece of the stack below the caller: the frames of the
   functions that held the leaked pointers, and of the truth writer.  */
static __attribute__((noinline)) void scrub(void)
{
	char buf[256 << 10];
	explicit_bzero(buf, sizeof buf);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static void *thread_main(void *arg)
{
	(void)arg;
	void *volatile held = xmalloc(208);
	note(held, 208, "reachable", "thread-stack");
	tls_keep = xmalloc(216);
	note(tls_keep, 216, "reachable", "thread-tls");
	char c = 1;
	if (write(ready_pipe[1], &c, 1) != 1)
		die("thread: write");
	/* Parked until the process dies: its stack and TLS are roots.  */
	while (read(park_pipe[0], &c, 1) != 0)
		;
	return (void *)held;
}

static __attribute__((noinline)) void make_reachable(void)
{
	g_keep = xmalloc(sizeof *g_keep);
	note(g_keep, sizeof *g_keep, "reachable", "global");
	g_keep->next = xmalloc(sizeof *g_keep);
	note(g_keep->next, sizeof *g_keep, "reachable", "heap");
	g_keep->next->next = xmalloc(sizeof *g_keep);
	note(g_keep->next->next, sizeof *g_keep, "reachable", "heap");
	g_keep->next->next->next = NULL;
	g_keep->next->inner = NULL;
	g_keep->next->next->inner = NULL;

	g_big = xmalloc(200000);   /* an mmapped chunk */
	note(g_big, 200000, "reachable", "global");

	/* Over 1 MiB, mapped on its own: the only pointer to a block sits
	   in its last word, so the whole of it must be scanned.  */
	g_huge = xmalloc(HUGE);
	note(g_huge, HUGE, "reachable", "global");
	void *tail = xmalloc(152);
	note(tail, 152, "reachable", "heap");
	memcpy((char *)g_huge + HUGE - sizeof tail, &tail, sizeof tail);

	tls_keep = xmalloc(120);
	note(tls_keep, 120, "reachable", "tls");

	g_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g_page == MAP_FAILED)
		die("mmap failed");
	g_page[0] = xmalloc(136);
	note(g_page[0], 136, "reachable", "mmap");

	/* Reached only through interior pointers: possible.  */
	char *p = xmalloc(64);
	note(p, 64, "possible", "interior-global");
	g_interior = p + 24;
	p = xmalloc(56);
	note(p, 56, "possible", "interior-heap");
	g_keep->inner = p + 8;
}

/* One block, its last pointer dropped.  */
static __attribute__((noinline)) void lose(size_t size)
{
	note(xmalloc(size), size, "definite", "none");
}

static __attribute__((noinline)) void make_leaks(void)
{
	for (int i = 0; i < 5; i++)
		lose(40);
	for (int i = 0; i < 3; i++)
		lose(1000);
	lose(300000);   /* an mmapped chunk */

	/* A leaked parent holding a chain: the chain is indirect.  */
	struct node *parent = xmalloc(96);
	note(parent, 96, "definite", "none");
	parent->next = xmalloc(128);
	note(parent->next, 128, "indirect", "leaked-block");
	parent->next->next = xmalloc(128);
	note(parent->next->next, 128, "indirect", "leaked-block");
	parent->next->next->next = NULL;

	/* A leaked cycle: nothing outside points into it.  */
	struct node *x = xmalloc(80), *y = xmalloc(80);
	x->next = y;
	y->next = x;
	note(x, 80, "cycle", "cycle");
	note(y, 80, "cycle", "cycle");

	/* Pointers left in freed chunks do not count.  A tcache chunk (its
	   first two words become the list link and key: the pointer sits
	   after them) and an unsorted one (too big for the tcache; a guard
	   keeps it from merging into top).  */
	void **f = xmalloc(64);
	void *z = xmalloc(48);
	note(z, 48, "definite", "freed-memory");
	f[2] = z;
	note(f, 64, "freed", "none");
	void **g = xmalloc(0x500);
	g_guard = xmalloc(24);
	note(g_guard, 24, "reachable", "global");
	void *z2 = xmalloc(48);
	note(z2, 48, "definite", "freed-memory");
	g[8] = z2;
	note(g, 0x500, "freed", "none");
	free(f);
	free(g);
}

static __attribute__((noinline)) void start_thread(void)
{
	pthread_t th;
	char c;
	if (pipe(ready_pipe) != 0 || pipe(park_pipe) != 0)
		die("pipe failed");
	if (pthread_create(&th, NULL, thread_main, NULL) != 0)
		die("pthread_create failed");
	if (read(ready_pipe[0], &c, 1) != 1)
		die("the thread did not start");
}

static __attribute__((noinline)) void write_truth(const char *path)
{
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out_fd < 0)
		die("cannot open the truth file");
	/* A freed chunk handed out again would make its record a lie.  */
	for (int i = 0; i < nblocks; i++)
		for (int j = 0; j < i; j++)
			if (blocks[i].hidden == blocks[j].hidden)
				die("two records of one address: a freed chunk "
				    "was reused");
	out_str("prog leaks1\n");
	for (int i = 0; i < nblocks; i++) {
		out_str("block ");
		out_num(~blocks[i].hidden, 16);
		out_str(" ");
		out_num(blocks[i].size, 10);
		out_str(" ");
		out_str(blocks[i].kind);
		out_str(" ");
		out_str(blocks[i].how);
		out_str("\n");
	}
	out_str("end\n");
	out_flush();
	close(out_fd);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: leaks1 TRUTHFILE");
	start_thread();
	/* Held by main's own frame until the end.  Allocated before the
	   frees: nothing may be carved out of a freed chunk afterwards, or
	   the pointer left in it would lie in a live block.  */
	void *volatile on_stack = xmalloc(88);
	note(on_stack, 88, "reachable", "stack");
	make_reachable();
	make_leaks();
	scrub();
	write_truth(argv[1]);
	scrub();
	abort();
}

/* grow1 - a heap that grows by a known amount between two cores of the
 * same process, for `diff BASE`.
 *
 *   gcc -O0 -g -pthread -o prog grow1.c && ./prog truth.txt
 *
 * 1. The base: the main thread and a second thread (in a thread arena of
 *    its own) allocate a known set of blocks.  The second thread only
 *    allocates before the base, so its tcache is empty in both cores (the
 *    base core has only the forking thread, so no thread pointer finds
 *    the second thread's tcache there).
 * 2. The base core: fork() a child that chdir()s into ./base and
 *    abort()s.  The child's memory is the parent's heap as it was, so
 *    with a relative core_pattern ("core", "core.%p") its core lands in
 *    base/; the parent waits for it and touches nothing meanwhile.
 * 3. The growth: both threads allocate N blocks of a few sizes (the main
 *    thread also three mmapped ones) and free some of the base's.
 * 4. The truth, then abort() for the second core (in the working
 *    directory, as make-core.sh expects).
 *
 * Truth (argv[1]), one record per line:
 *   prog grow1
 *   grow USABLE ARENA COUNT   blocks in use of usable size USABLE
 *        (malloc_usable_size) in ARENA gained (COUNT > 0) or lost (< 0)
 *        between the two cores: "main" (also mmapped chunks, which
 *        heapwalk counts there), the thread arena's malloc_state address
 *        (0x...), or on jemalloc the arena's index
 *   base-core yes|no          whether the child said it dumped a core
 *   end
 * Nothing is allocated between the two cores except what is recorded:
 * the truth is kept in static storage and written without stdio
 * (corpora/common/out.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/out.h"

#ifdef GROW1_JEMALLOC
#include <jemalloc/jemalloc.h>
#else
#include <malloc.h>
#endif

/* ---- the record of what changed --------------------------------------- */

#define MAX_KEYS 64

struct change {
	size_t usable;
	uintptr_t arena;   /* ptmalloc: 0 = main, else malloc_state; jemalloc:
			      the arena index */
	long count;
};

static struct change changes[MAX_KEYS];
static int nchanges;

/* The arena a block is counted in, as heapwalk numbers or names it.  */
static uintptr_t arena_of(void *p)
{
#ifdef GROW1_JEMALLOC
	unsigned a;
	size_t sz = sizeof a;
	if (mallctl("arenas.lookup", &a, &sz, &p, sizeof p) != 0)
		die("arenas.lookup failed");
	return a;
#else
	size_t word = ((const size_t *)p)[-1];
	/* Not in a thread arena's heap (main arena or mmapped): heapwalk
	   counts mmapped chunks in arena 0 too.  */
	if (!(word & 4) || (word & 2))
		return 0;
	uintptr_t heap = ((uintptr_t)p - 16) & ~(((uintptr_t)64 << 20) - 1);
	return *(const uintptr_t *)heap;   /* heap_info.ar_ptr */
#endif
}

static pthread_mutex_t changes_lock = PTHREAD_MUTEX_INITIALIZER;

static void record(size_t usable, uintptr_t arena, long d)
{
	pthread_mutex_lock(&changes_lock);
	int i;
	for (i = 0; i < nchanges; i++)
		if (changes[i].usable == usable && changes[i].arena == arena)
			break;
	if (i == nchanges) {
		if (nchanges == MAX_KEYS)
			die("too many sizes");
		changes[nchanges++] = (struct change){ usable, arena, 0 };
	}
	changes[i].count += d;
	pthread_mutex_unlock(&changes_lock);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		die("malloc failed");
	return p;
}

/* Growth: counted.  */
static void *grow(size_t n)
{
	void *p = xmalloc(n);
	record(malloc_usable_size(p), arena_of(p), +1);
	return p;
}

/* A base block given back: counted as a block lost.  */
static void shrink(void *p)
{
	record(malloc_usable_size(p), arena_of(p), -1);
	free(p);
}

/* ---- the program ------------------------------------------------------ */

static void *main_base[40 + 30 + 10 + 6];
static void *thread_base[20 + 10];
static void *kept[128];
static int nkept;

static int to_thread[2], from_thread[2];

static void wait_pipe(int fd)
{
	char c;
	while (read(fd, &c, 1) < 0)
		if (errno != EINTR)
			die("read failed");
}

static void post_pipe(int fd)
{
	if (write(fd, "x", 1) != 1)
		die("write failed");
}

static void keep(void *p)
{
	if (nkept == (int)(sizeof kept / sizeof kept[0]))
		die("too many kept blocks");
	kept[nkept++] = p;
}

/* jemalloc: the regions a thread's tcache took from a slab on a miss
   are free to heapwalk only while it finds that tcache, from the thread
   pointer: the base core has only the forking thread, so the second
   thread hands them back first.  (ptmalloc's tcache fills on free only.)  */
static void flush_tcache(void)
{
#ifdef GROW1_JEMALLOC
	if (mallctl("thread.tcache.flush", NULL, NULL, NULL, 0) != 0)
		die("thread.tcache.flush failed");
#endif
}

static void *second_thread(void *arg)
{
	(void)arg;
	int k = 0;
	for (int i = 0; i < 20; i++)
		thread_base[k++] = xmalloc(100);
	for (int i = 0; i < 10; i++)
		thread_base[k++] = xmalloc(3000);
	flush_tcache();
	post_pipe(from_thread[1]);      /* base done */
	wait_pipe(to_thread[0]);        /* grow now */
	for (int i = 0; i < 30; i++)
		keep(grow(100));
	for (int i = 0; i < 8; i++)
		keep(grow(3000));
	for (int i = 0; i < 5; i++)
		keep(grow(700));
	for (int i = 0; i < 5; i++)
		shrink(thread_base[i]);
	post_pipe(from_thread[1]);      /* growth done */
	wait_pipe(to_thread[0]);        /* never: the process aborts */
	return NULL;
}

/* The base core: a child with the heap as it is now.  */
static int base_core(void)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork failed");
	if (pid == 0) {
		if (chdir("base") != 0)
			_exit(3);
		signal(SIGABRT, SIG_DFL);
		abort();
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid failed");
	return WIFSIGNALED(st) && WCOREDUMP(st);
}

static void write_truth(const char *path, int have_base)
{
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0)
		die("cannot open the truth file");
	out_str("prog grow1\n");
	for (int i = 0; i < nchanges; i++) {
		const struct change *c = &changes[i];
		if (!c->count)
			continue;
		out_str("grow ");
		out_num(c->usable, 10);
		out_str(" ");
#ifdef GROW1_JEMALLOC
		out_num(c->arena, 10);
#else
		if (c->arena) {
			out_num(c->arena, 16);   /* "0x..." */
		} else {
			out_str("main");
		}
#endif
		out_str(c->count < 0 ? " -" : " ");
		out_num((unsigned long long)(c->count < 0 ? -c->count : c->count),
			10);
		out_str("\n");
	}
	out_str(have_base ? "base-core yes\n" : "base-core no\n");
	out_str("end\n");
	out_flush();
	close(out_fd);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: grow1 TRUTHFILE");
	if (mkdir("base", 0755) != 0 && errno != EEXIST)
		die("cannot make ./base");
	unlink("base/core");
	if (pipe(to_thread) != 0 || pipe(from_thread) != 0)
		die("pipe failed");
	/* jemalloc's mallctl sets itself up on first use: before the base.  */
	void *probe = xmalloc(8);
	arena_of(probe);

	/* The base.  */
	int k = 0;
	for (int i = 0; i < 40; i++)
		main_base[k++] = xmalloc(24);
	for (int i = 0; i < 30; i++)
		main_base[k++] = xmalloc(200);
	for (int i = 0; i < 10; i++)
		main_base[k++] = xmalloc(1000);
	for (int i = 0; i < 6; i++)
		main_base[k++] = xmalloc(5000);
	pthread_t th;
	if (pthread_create(&th, NULL, second_thread, NULL) != 0)
		die("pthread_create failed");
	wait_pipe(from_thread[0]);

	int have_base = base_core();

	/* The growth.  */
	for (int i = 0; i < 25; i++)
		keep(grow(24));
	for (int i = 0; i < 12; i++)
		keep(grow(500));
	for (int i = 0; i < 3; i++)
		keep(grow(200000));     /* mmapped */
	for (int i = 0; i < 10; i++)
		shrink(main_base[40 + 2 * i]);      /* 200 bytes */
	for (int i = 0; i < 4; i++)
		shrink(main_base[80 + i]);          /* 5000 bytes */
	post_pipe(to_thread[1]);
	wait_pipe(from_thread[0]);

	write_truth(argv[1], have_base);
	abort();
}

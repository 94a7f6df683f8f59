/* ngtruth1.c - a musl program that records the truth of its mallocng heap
 * for tests/t0481-musl-walk.sh, then stops for its core.
 *
 *   ngtruth1 THREADS MODE
 *     THREADS  1 or more: threads that allocate (the main thread one of
 *              them), each its own mix of sizes
 *     MODE     abort: write truth.txt, then abort (the test's gcore)
 *              overflow: the same, after writing one byte past the end
 *                     of a block in use (recorded: overflow 0xUSER)
 *              wait:  write truth.txt, print "ready", read stdin to its
 *                     end (the test's --pid), exit 0
 *
 * Each thread allocates blocks of sizes across mallocng's classes (1 byte
 * to past its mmap threshold), some by calloc, aligned_alloc (64 and
 * 4096) and realloc (grown and shrunk), frees every third, and hides
 * the pointer of every eleventh block it keeps (stored XOR a key, so no
 * word in memory points at it: a leak).  The threads meet at a barrier
 * after allocating (no freed slot is handed out again) and after
 * freeing, before main records, so every block is where the truth says.
 *
 * truth.txt, one record a line (written with write(2) from a static
 * buffer: the heap is not touched after the last free):
 *   prog ngtruth1 THREADS
 *   alloc 0xUSER REQ USABLE THREAD   in use; USABLE = malloc_usable_size
 *   lost 0xUSER REQ USABLE THREAD    in use, no pointer to it remains
 *   freed 0xUSER REQ THREAD          freed (its slot is free)
 *   ctx 0xADDR                       __malloc_context (static builds,
 *                                    -DNG_STATIC: the hidden symbol links)
 *   usage CLASS SLOTS                its usage_by_class, non-zero ones
 *   overflow 0xUSER                  the block written past
 *   end
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PER_THREAD 160
#define MAX_THREADS 16
#define HIDE_KEY 0x5a5a5a5a5a5a5a5aull

struct block {
	uintptr_t p;          /* the pointer, or it XOR HIDE_KEY when lost */
	size_t req, usable;
	int state;            /* 0 in use, 1 freed, 2 lost */
};

static struct block blocks[MAX_THREADS][PER_THREAD];
static pthread_barrier_t allocated, done;

/* The request of block i of thread t: small classes mostly, every 16th
   a mid-size one, every 40th one past the mmap threshold (131052).  */
static size_t request(int t, int i)
{
	if (i % 40 == 39)
		return 131052 + (size_t)(t * 4096 + i * 100);
	if (i % 16 == 15)
		return 3000 + (size_t)(t * 997 + i * 331) % 60000;
	return 1 + (size_t)(t * 37 + i * 53) % 1500;
}

static void *allocate(int t, int i, size_t *req)
{
	size_t n = request(t, i);
	void *p;
	*req = n;
	switch (i % 7) {
	case 1:
		return calloc(1, n);
	case 2:
		return aligned_alloc(64, (n + 63) & ~(size_t)63);
	case 3:
		if (n < 8192)
			return aligned_alloc(4096, 4096);
		return malloc(n);
	case 4:          /* grown: moved, or grown in place */
		p = malloc(n / 2 + 1);
		return p ? realloc(p, n) : NULL;
	case 5:          /* shrunk in place */
		p = malloc(n + 200);
		return p ? realloc(p, n) : NULL;
	default:
		return malloc(n);
	}
}

static void *thread_main(void *arg)
{
	int t = (int)(intptr_t)arg;
	for (int i = 0; i < PER_THREAD; i++) {
		struct block *b = &blocks[t][i];
		void *p = allocate(t, i, &b->req);
		if (!p)
			abort();
		if (i % 7 == 2)
			b->req = (b->req + 63) & ~(size_t)63;
		if (i % 7 == 3 && b->req < 8192)
			b->req = 4096;
		memset(p, 0x40 + t, b->req < 64 ? b->req : 64);
		b->p = (uintptr_t)p;
		b->usable = malloc_usable_size(p);
	}
	/* No thread frees before every thread has allocated: a slot freed
	   here is never handed out again before the core.  */
	pthread_barrier_wait(&allocated);
	for (int i = 0; i < PER_THREAD; i++) {
		struct block *b = &blocks[t][i];
		if (i % 3 == 0) {
			free((void *)b->p);
			b->state = 1;
		} else if (i % 11 == 0) {
			b->p ^= HIDE_KEY;
			b->state = 2;
		}
	}
	pthread_barrier_wait(&done);
	return NULL;
}

static char out[1 << 20];
static size_t outlen;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + outlen, sizeof out - outlen, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof out - outlen)
		outlen += (size_t)n;
}

#ifdef NG_STATIC
/* mallocng's context: hidden, so only a static link reaches it.  */
extern struct {
	uint64_t secret;
	int init_done;
	unsigned mmap_counter;
	void *free_meta_head, *avail_meta;
	size_t avail_meta_count, avail_meta_area_count, meta_alloc_shift;
	void *meta_area_head, *meta_area_tail;
	unsigned char *avail_meta_areas;
	void *active[48];
	size_t usage_by_class[48];
} __malloc_context;
#endif

static void record(int nthreads, const struct block *overflowed)
{
	put("prog ngtruth1 %d\n", nthreads);
	if (overflowed)
		put("overflow %#lx\n", (unsigned long)overflowed->p);
	for (int t = 0; t < nthreads; t++)
		for (int i = 0; i < PER_THREAD; i++) {
			const struct block *b = &blocks[t][i];
			if (b->state == 1)
				put("freed %#lx %zu %d\n", (unsigned long)b->p,
				    b->req, t);
			else
				put("%s %#lx %zu %zu %d\n",
				    b->state ? "lost" : "alloc",
				    (unsigned long)(b->state ? b->p ^ HIDE_KEY
							     : b->p),
				    b->req, b->usable, t);
		}
#ifdef NG_STATIC
	put("ctx %#lx\n", (unsigned long)(uintptr_t)&__malloc_context);
	for (int c = 0; c < 48; c++)
		if (__malloc_context.usage_by_class[c])
			put("usage %d %zu\n", c,
			    __malloc_context.usage_by_class[c]);
#endif
	put("end\n");
	int fd = open("truth.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, out, outlen) != (ssize_t)outlen || close(fd))
		abort();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	const char *mode = argc > 2 ? argv[2] : "abort";
	pthread_t tid[MAX_THREADS];
	if (n < 1 || n > MAX_THREADS)
		return 2;
	pthread_barrier_init(&allocated, NULL, (unsigned)n);
	pthread_barrier_init(&done, NULL, (unsigned)n);
	for (int t = 1; t < n; t++)
		if (pthread_create(&tid[t], NULL, thread_main,
				   (void *)(intptr_t)t))
			return 2;
	thread_main((void *)0);
	for (int t = 1; t < n; t++)
		pthread_join(tid[t], NULL);
	/* The damaged case: the byte after block 1 of thread 0 (calloc'd,
	   kept) is the slot's first spare byte or the next slot's check
	   byte, both 0 while nothing overflowed.  */
	const struct block *hit = NULL;
	if (!strcmp(mode, "overflow")) {
		hit = &blocks[0][1];
		((unsigned char *)hit->p)[hit->usable] = 0x41;
	}
	record(n, hit);
	if (!strcmp(mode, "wait")) {
		char buf[64];
		if (write(1, "ready\n", 6) != 6)
			return 2;
		while (read(0, buf, sizeof buf) > 0)
			;
		return 0;
	}
	abort();
}

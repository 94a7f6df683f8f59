/* busy16: a busy multi-threaded allocator workload for attach/detach
 * cycles (scripts/bench/live-cycles.sh).
 *
 * usage: busy16 [-t THREADS] [-s SLOTS] [-b BATCH] [-p PAUSE_US]
 *   THREADS threads (default 16) allocate and free without end: each
 *   keeps SLOTS (default 4096) slots, and each step picks a random slot,
 *   frees the block it holds or allocates a new one: mostly small
 *   (16..256 bytes), some medium (to 8 KiB), a few large (to 64 KiB) and
 *   about one in 200 above 128 KiB (mmapped by glibc's default
 *   threshold, jemalloc's large or huge extents).  Every block is filled
 *   with a canary derived from its address and size (the whole block up
 *   to 4 KiB, its first and last 2 KiB beyond), checked again before it
 *   is freed: a block whose contents changed prints "busy16: canary ..."
 *   on stderr and abort()s.  After every batch of BATCH steps (default
 *   16) a thread sleeps PAUSE_US microseconds (default 1000; 0: never),
 *   so that the machine stays usable (about one core's worth with the
 *   defaults; -p 0 keeps every core busy).
 *
 * It prints "ready" on stdout once every thread runs.  Each line on
 * stdin is answered with one line,
 *     ops TOTAL MIN
 *   TOTAL the steps of all threads so far, MIN those of the slowest
 *   thread: a thread that stopped (left stopped by a tracer, or stuck)
 *   shows as a MIN that no longer grows.  End of file on stdin: exit 0.
 *
 * Links against whatever malloc is there: glibc's, or jemalloc through
 * LD_PRELOAD (Debian's libjemalloc.so.2).
 *
 *   cc -std=c11 -O2 -pthread -Wall -Wextra -Werror -o busy16 busy16.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256
#define EDGE 2048 /* canary bytes checked at each end of a big block */

struct slot {
	unsigned char *p;
	size_t n;
};

struct worker {
	pthread_t th;
	unsigned idx;
	uint64_t rng;
	struct slot *slots;
	_Atomic unsigned long ops;
	char pad[64];
};

static struct worker W[MAX_THREADS];
static unsigned nthreads = 16, nslots = 4096;
static long pause_us = 1000;
static unsigned batch = 16;
static pthread_barrier_t started;

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static unsigned char canary(const unsigned char *base, size_t n, size_t i)
{
	uint64_t x = ((uint64_t)(uintptr_t)base ^ (n << 20)) + i;
	x *= 0x9e3779b97f4a7c15ull;
	return (unsigned char)(x >> 56);
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (n > 2 * EDGE && i == EDGE)
			i = n - EDGE;
		p[i] = canary(p, n, i);
	}
}

static void check(const struct worker *w, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (n > 2 * EDGE && i == EDGE)
			i = n - EDGE;
		if (p[i] != canary(p, n, i)) {
			char m[160];
			int len = snprintf(m, sizeof m,
					   "busy16: canary of %p (%zu bytes) changed "
					   "at +%zu (thread %u)\n",
					   (const void *)p, n, i, w->idx);
			if (write(2, m, (size_t)len) < 0)
				_exit(99);
			abort();
		}
	}
}

static size_t pick_size(uint64_t *rng)
{
	uint64_t r = rnd(rng);
	unsigned k = (unsigned)(r % 1000);
	r >>= 10;
	if (k < 700)
		return 16 + r % 241;
	if (k < 950)
		return 257 + r % (8192 - 257);
	if (k < 995)
		return 8193 + r % (65536 - 8193);
	return (128 << 10) + r % (896 << 10); /* 128 KiB .. 1 MiB */
}

static void *work(void *arg)
{
	struct worker *w = arg;
	w->slots = calloc(nslots, sizeof *w->slots);
	if (!w->slots) {
		fputs("busy16: out of memory\n", stderr);
		abort();
	}
	pthread_barrier_wait(&started);
	for (;;) {
		for (unsigned b = 0; b < batch; b++) {
			struct slot *s = &w->slots[rnd(&w->rng) % nslots];
			if (s->p) {
				check(w, s->p, s->n);
				free(s->p);
				s->p = NULL;
			} else {
				size_t n = pick_size(&w->rng);
				s->p = malloc(n);
				if (!s->p) {
					fputs("busy16: malloc failed\n", stderr);
					abort();
				}
				s->n = n;
				fill(s->p, n);
			}
			w->ops++;
		}
		if (pause_us > 0) {
			struct timespec ts = { pause_us / 1000000,
					       (pause_us % 1000000) * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void say(const char *s)
{
	size_t n = strlen(s), off = 0;
	while (off < n) {
		ssize_t r = write(1, s + off, n - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(3);
		off += (size_t)r;
	}
}

int main(int argc, char **argv)
{
	int opt;
	while ((opt = getopt(argc, argv, "t:s:b:p:")) != -1) {
		switch (opt) {
		case 't': nthreads = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': nslots = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': batch = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'p': pause_us = strtol(optarg, NULL, 10); break;
		default:
			fputs("usage: busy16 [-t THREADS] [-s SLOTS] [-b BATCH] "
			      "[-p PAUSE_US]\n", stderr);
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || nslots < 1 || batch < 1 ||
	    pause_us < 0) {
		fputs("busy16: THREADS 1..256, SLOTS >= 1, BATCH >= 1, "
		      "PAUSE_US >= 0\n", stderr);
		return 2;
	}
	pthread_barrier_init(&started, NULL, nthreads + 1);
	for (unsigned t = 0; t < nthreads; t++) {
		W[t].idx = t;
		W[t].rng = 0x9e3779b97f4a7c15ull * (t + 1);
		if (pthread_create(&W[t].th, NULL, work, &W[t]) != 0) {
			fputs("busy16: pthread_create failed\n", stderr);
			return 1;
		}
	}
	pthread_barrier_wait(&started);
	say("ready\n");
	for (;;) {
		char c;
		ssize_t r = read(0, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(0);
		if (c != '\n')
			continue;
		unsigned long total = 0, min = (unsigned long)-1;
		for (unsigned t = 0; t < nthreads; t++) {
			unsigned long o = W[t].ops;
			total += o;
			if (o < min)
				min = o;
		}
		char line[80];
		snprintf(line, sizeof line, "ops %lu %lu\n", total, min);
		say(line);
	}
}

/* livetarget - live processes for tests/t0520-live-safety.sh.
 *
 *   livetarget many THREADS PER_THREAD
 *       THREADS threads each allocate PER_THREAD small chunks (16..64
 *       bytes requested) and free about a tenth of them again, filling
 *       every block with a pattern derived from its addresses
 *       (corpora/common/live.h); then "ready" on stdout, and the threads
 *       park.  Each line on stdin is answered with one line: "OK" when
 *       every live block still holds its pattern, /proc/self/status says
 *       TracerPid 0 and no thread is stopped or traced (state t or T) and
 *       none is missing; else "FAIL <why>".  End of file on stdin: exit 0.
 *   livetarget churn
 *       "ready", then threads are created and joined without end (each
 *       mallocs and frees a little): the task list changes while a tracer
 *       attaches.  Exits at end of file on stdin.
 *   livetarget main-exit THREADS PER_THREAD
 *       the heap of "many"; then the main thread ends (pthread_exit) and
 *       a thread of its own, once /proc shows the main thread a zombie,
 *       says "ready" and answers as "many" does.  The process lives on
 *       while its /proc/PID entries (maps, mem, auxv, exe) show nothing.
 *   livetarget exit-after MS [THREADS PER_THREAD]
 *       mallocs a little (or builds the heap of "many"), says "ready" and
 *       exits MS milliseconds later.
 *
 * Any process may trace it (PR_SET_PTRACER_ANY); SIGUSR1 is blocked.  No allocation between
 * "ready" and the end of a check (live.h reads /proc with open/read into
 * static buffers); allocations come before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../corpora/common/out.h"
#include "../../corpora/common/live.h"

struct worker {
	pthread_t th;
	size_t n;
	uint64_t rng;
	void **p;
	size_t *len;
};

static struct worker W[64];
static unsigned nworkers;
static pthread_barrier_t built;

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void *build(void *arg)
{
	struct worker *w = arg;
	w->p = malloc(w->n * sizeof *w->p);
	w->len = malloc(w->n * sizeof *w->len);
	if (!w->p || !w->len)
		die("out of memory");
	for (size_t i = 0; i < w->n; i++) {
		size_t n = 16 + rnd(&w->rng) % 49;
		w->p[i] = malloc(n);
		if (!w->p[i])
			die("out of memory");
		w->len[i] = n;
		live_fill(w->p[i], n);
	}
	for (size_t k = 0; k < w->n / 10; k++) {
		size_t i = rnd(&w->rng) % w->n;
		free(w->p[i]);
		w->p[i] = NULL;
	}
	pthread_barrier_wait(&built);
	for (;;)
		pause();
	return NULL;
}

static int blocks_intact(void)
{
	for (unsigned t = 0; t < nworkers; t++)
		for (size_t i = 0; i < W[t].n; i++) {
			long off;
			if (!W[t].p[i])
				continue;
			off = live_bad(W[t].p[i], W[t].len[i]);
			if (off >= 0) {
				live_say_addr("a live chunk changed:",
					      (uintptr_t)W[t].p[i], off);
				return -1;
			}
		}
	return 0;
}

/* One line from stdin: 1, or 0 at end of file.  */
static int line(void)
{
	char c;
	for (;;) {
		ssize_t r = read(0, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		if (c == '\n')
			return 1;
	}
}

/* The heap of "many": THREADS threads, parked once it is built.  */
static void build_many(unsigned threads, size_t per_thread)
{
	if (threads < 1 || threads > 64 || per_thread < 1)
		die("usage: livetarget many THREADS(1..64) PER_THREAD");
	nworkers = threads;
	live_threads = (int)threads + 1;
	pthread_barrier_init(&built, NULL, threads + 1);
	for (unsigned t = 0; t < threads; t++) {
		W[t].n = per_thread;
		W[t].rng = 0x9e3779b97f4a7c15ull * (t + 1);
		if (pthread_create(&W[t].th, NULL, build, &W[t]))
			die("pthread_create failed");
	}
	pthread_barrier_wait(&built);
}

/* "ready", then each line on stdin answered (see "many").  */
static int serve(void)
{
	live_write("ready\n");
	while (line()) {
		const char *v, *text;
		int bad = blocks_intact() != 0;
		if (!bad) {
			text = live_read("/proc/self/status");
			v = text ? live_field(text, "TracerPid") : NULL;
			if (!v || strcmp(v, "0")) {
				live_say("traced: TracerPid ", v ? v : "missing");
				bad = 1;
			}
		}
		if (!bad)
			bad = live_check_threads() != 0;
		if (bad) {
			live_write("FAIL ");
			live_write(live_why);
			live_write("\n");
		} else {
			live_write("OK\n");
		}
	}
	return 0;
}

static int many(unsigned threads, size_t per_thread)
{
	build_many(threads, per_thread);
	return serve();
}

/* main-exit's server: waits for the state the test is about (a state
   polled, not a time), then serves; the process ends with it.  */
static void *serve_after_main(void *arg)
{
	static const struct timespec ms = { 0, 1000000 };
	(void)arg;
	for (;;) {
		const char *text = live_read("/proc/self/status");
		const char *v = text ? live_field(text, "State") : NULL;
		if (v && v[0] == 'Z')
			break;
		nanosleep(&ms, NULL);
	}
	exit(serve());
	return NULL;
}

/* "live N": the blocks the workers hold (the test's lower bound).  */
static void say_live_blocks(void)
{
	uint64_t n = 0;
	for (unsigned t = 0; t < nworkers; t++)
		for (size_t i = 0; i < W[t].n; i++)
			n += W[t].p[i] != NULL;
	/* (live_why is free: nothing has been checked yet.)  */
	live_why_len = 0;
	live_add("live ");
	live_add_num(n, 10);
	live_add("\n");
	live_write(live_why);
}

static int main_exit(unsigned threads, size_t per_thread)
{
	pthread_t server;
	build_many(threads, per_thread);
	/* The workers, the server and the main thread (a zombie, still
	   listed under /proc/self/task).  */
	live_threads = (int)threads + 2;
	say_live_blocks();
	if (pthread_create(&server, NULL, serve_after_main, NULL))
		die("pthread_create failed");
	pthread_exit(NULL);
}

static void *churner(void *arg)
{
	void *p = malloc(64 + (size_t)(uintptr_t)arg % 512);
	free(p);
	return NULL;
}

static void *stdin_watch(void *arg)
{
	(void)arg;
	while (line())
		;
	_exit(0);
	return NULL;
}

static int churn(void)
{
	pthread_t w;
	if (pthread_create(&w, NULL, stdin_watch, NULL))
		die("pthread_create failed");
	live_write("ready\n");
	for (uintptr_t i = 0;; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, churner, (void *)i) == 0)
			pthread_join(th, NULL);
	}
	return 0;
}

static int exit_after(long ms, unsigned threads, size_t per_thread)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	void *volatile p = malloc(100);
	free(p);
	if (threads)
		build_many(threads, per_thread);
	live_write("ready\n");
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	_exit(0);
}

int main(int argc, char **argv)
{
	live_on = 1;
	live_begin(); /* SIGUSR1 blocked, any tracer allowed */
	(void)out_num; /* out.h is here for die() */
	if (argc == 4 && !strcmp(argv[1], "many"))
		return many((unsigned)strtoul(argv[2], NULL, 10),
			    strtoull(argv[3], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "main-exit"))
		return main_exit((unsigned)strtoul(argv[2], NULL, 10),
				 strtoull(argv[3], NULL, 10));
	if (argc == 2 && !strcmp(argv[1], "churn"))
		return churn();
	if ((argc == 3 || argc == 5) && !strcmp(argv[1], "exit-after"))
		return exit_after(strtol(argv[2], NULL, 10),
				  argc == 5 ? (unsigned)strtoul(argv[3], NULL, 10) : 0,
				  argc == 5 ? strtoull(argv[4], NULL, 10) : 0);
	die("usage: livetarget many THREADS PER_THREAD | main-exit THREADS "
	    "PER_THREAD | churn | "
	    "exit-after MS [THREADS PER_THREAD]");
	return 2;
}

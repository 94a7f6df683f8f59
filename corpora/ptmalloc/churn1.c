/* churn1 - threads that malloc and free in a tight loop, for `heapwalk
 * --pid` stopping them anywhere, inside malloc() and free() too.
 *
 *   gcc -O2 -g -pthread -o prog churn1.c && ./prog
 *
 * Three threads (main only waits) each keep 256 slots and, forever,
 * free a random one and allocate it again with a random size from 1 to
 * 3000 bytes: tcache, fastbin, small and large chunks, in the main arena
 * and in two thread arenas.  Once every thread has started it writes
 * "ready\n" to stdout (tests/live-lib.sh's live_start waits for it) and
 * waits for a line on stdin; then the threads stop, free everything, and
 * it writes "OK\n" and exits 0.  Its truth is glibc's own: a heap that a
 * tracer had damaged would make a malloc() or free() abort, and "OK"
 * would never come.  No core: a test runs it live (--prog-only).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define THREADS 3
#define SLOTS 256

static atomic_int started;
static atomic_bool stop;

static void *churn(void *arg)
{
	unsigned seed = (unsigned)(size_t)arg;
	void *slot[SLOTS] = { 0 };
	atomic_fetch_add(&started, 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned i = (unsigned)rand_r(&seed) % SLOTS;
		free(slot[i]);
		size_t n = (size_t)rand_r(&seed) % 3000 + 1;
		slot[i] = malloc(n);
		if (!slot[i])
			abort();
		memset(slot[i], (int)i, n < 16 ? n : 16);
	}
	for (unsigned i = 0; i < SLOTS; i++)
		free(slot[i]);
	return NULL;
}

int main(void)
{
	/* Yama's ptrace_scope 1 lets only ancestors trace: the test's
	   heapwalk is this program's sibling.  */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	pthread_t t[THREADS - 1];
	for (int k = 0; k < THREADS - 1; k++)
		if (pthread_create(&t[k], NULL, churn, (void *)(size_t)(k + 1)))
			return 2;
	pthread_t self;
	if (pthread_create(&self, NULL, churn, (void *)(size_t)7))
		return 2;
	while (atomic_load(&started) < THREADS)
		sched_yield();
	printf("ready\n");
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof line, stdin))
		_exit(4);
	atomic_store(&stop, true);
	for (int k = 0; k < THREADS - 1; k++)
		pthread_join(t[k], NULL);
	pthread_join(self, NULL);
	printf("OK\n");
	fflush(stdout);
	return 0;
}

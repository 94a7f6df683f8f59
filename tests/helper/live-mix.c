/* live-mix - a live process for the --pid tests: five threads (four with
 * their own arenas) each make a fixed mix of small, large and mmapped
 * allocations and free a third of them, then the program says "ready" and
 * waits for a line on stdin.  Before reading, it blocks SIGUSR1, so a
 * SIGUSR1 sent meanwhile stays pending while heapwalk attaches.  After the
 * line it checks that the signal is still pending, that every kept block
 * still holds its pattern and that nothing traces it, and prints "OK" or
 * "FAIL: why".  Optional argument: allocations per thread (default 4000).
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 5

static int per_thread = 4000;
static void **blocks[NTHREADS];
static size_t *sizes[NTHREADS];
static pthread_barrier_t made, done;

static size_t size_of(unsigned *seed, int i)
{
	if (i % 97 == 0)
		return 200000;          /* mmapped */
	return (size_t)(rand_r(seed) % 2000) + 1;
}

static void *work(void *arg)
{
	long k = (long)arg;
	unsigned seed = (unsigned)k + 1;
	void **b = blocks[k];
	for (int i = 0; i < per_thread; i++) {
		sizes[k][i] = size_of(&seed, i);
		b[i] = malloc(sizes[k][i]);
		if (!b[i])
			abort();
		memset(b[i], (int)(k * 31 + i) & 0xff, sizes[k][i]);
	}
	for (int i = 0; i < per_thread; i += 3) {
		free(b[i]);
		b[i] = NULL;
	}
	pthread_barrier_wait(&made);
	pthread_barrier_wait(&done);   /* parked, alive */
	return NULL;
}

static const char *check_blocks(void)
{
	for (long k = 0; k < NTHREADS; k++)
		for (int i = 0; i < per_thread; i++) {
			const unsigned char *p = blocks[k][i];
			if (!p)
				continue;
			for (size_t j = 0; j < sizes[k][i]; j++)
				if (p[j] != ((k * 31 + i) & 0xff))
					return "a live block changed";
		}
	return NULL;
}

static const char *check_untraced(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return "cannot read /proc/self/status";
	const char *why = NULL;
	while (fgets(buf, sizeof buf, f))
		if (!strncmp(buf, "TracerPid:", 10) && atoi(buf + 10) != 0)
			why = "still traced";
	fclose(f);
	return why;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		per_thread = atoi(argv[1]);
	/* A fixed threshold: glibc would otherwise raise it when a thread
	   frees an mmapped block, and the mmapped count would depend on how
	   the threads interleave.  */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);   /* inherited by threads */
	pthread_barrier_init(&made, NULL, NTHREADS);
	pthread_barrier_init(&done, NULL, NTHREADS);
	for (int k = 0; k < NTHREADS; k++) {
		blocks[k] = calloc((size_t)per_thread, sizeof *blocks[k]);
		sizes[k] = calloc((size_t)per_thread, sizeof *sizes[k]);
	}
	pthread_t t[NTHREADS];
	for (long k = 1; k < NTHREADS; k++)
		pthread_create(&t[k], NULL, work, (void *)k);
	long k0 = 0;
	unsigned seed = 1;
	for (int i = 0; i < per_thread; i++) {
		sizes[k0][i] = size_of(&seed, i);
		blocks[k0][i] = malloc(sizes[k0][i]);
		memset(blocks[k0][i], i & 0xff, sizes[k0][i]);
	}
	for (int i = 0; i < per_thread; i += 3) {
		free(blocks[k0][i]);
		blocks[k0][i] = NULL;
	}
	pthread_barrier_wait(&made);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof line, stdin))
		return 2;
	const char *why = check_blocks();
	if (!why)
		why = check_untraced();
	sigset_t pending;
	sigpending(&pending);
	if (!why && strncmp(line, "signal", 6) == 0 &&
	    !sigismember(&pending, SIGUSR1))
		why = "the pending SIGUSR1 was lost";
	printf(why ? "FAIL: %s\n" : "OK\n", why);
	fflush(stdout);
	pthread_barrier_wait(&done);
	for (long k = 1; k < NTHREADS; k++)
		pthread_join(t[k], NULL);
	return why ? 1 : 0;
}

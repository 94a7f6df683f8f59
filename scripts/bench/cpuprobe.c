/* cpuprobe.c - how much CPU this machine gives right now: a fixed loop
 * timed in one thread, then in two at once.
 *
 * usage: cpuprobe [ROUNDS]      (default 3, at most 32)
 *
 * Prints one line:
 *   one_thread_s=0.411 two_threads_s=0.394 cpus=2.09 rounds=0.86/0.39,0.41/0.40
 * the best times of the loop alone and of two loops at once, cpus =
 * 2 * one / two from them (2.0: both CPUs run a loop at full speed, 1.0:
 * the two threads share one), and each round's two times.  On this
 * project's 2-CPU virtual machine both drift from minute to minute
 * (other guests on the host: one round's loop can take twice another's),
 * and a two-thread walk with them, while `cat` (one thread, copying)
 * hardly moves: the bench prints this line before and after its ratios,
 * so that a reader can tell a slow minute from a slow heapwalk.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LOOP 1000000000UL     /* ~0.3 s a loop here */

static void *spin(void *arg)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < LOOP; i++)
		x += i;
	return arg;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	double best_one = 0, best_two = 0;
	char list[512];
	size_t len = 0;
	if (rounds < 1)
		rounds = 1;
	if (rounds > 32)
		rounds = 32;
	for (int r = 0; r < rounds; r++) {
		double t0 = now();
		spin(NULL);
		double one = now() - t0;
		pthread_t a, b;
		t0 = now();
		if (pthread_create(&a, NULL, spin, NULL) ||
		    pthread_create(&b, NULL, spin, NULL)) {
			fprintf(stderr, "cpuprobe: cannot start threads\n");
			return 1;
		}
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		double two = now() - t0;
		len += (size_t)snprintf(list + len, sizeof list - len,
					"%s%.2f/%.2f", r ? "," : "", one, two);
		if (!r || one < best_one)
			best_one = one;
		if (!r || two < best_two)
			best_two = two;
	}
	printf("one_thread_s=%.3f two_threads_s=%.3f cpus=%.2f rounds=%s\n",
	       best_one, best_two,
	       best_two > 0 ? 2 * best_one / best_two : 0.0, list);
	return 0;
}

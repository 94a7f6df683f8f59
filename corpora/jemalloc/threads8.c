/* threads8 - main and 8 threads on Debian's jemalloc, all alive at
 * abort() time, on a mix of arenas.
 *
 *   gcc -O0 -g -pthread -o prog threads8.c -ljemalloc && ./prog truth.txt
 *
 * Thread IDX (1..8; main is 0) binds itself, before its first malloc:
 *   1, 2  automatic (jemalloc's own choice)
 *   3     mallctl "thread.arena" = 0 (main's arena)
 *   4     "thread.arena" = 3 % opt.narenas (an automatic arena)
 *   5     "thread.arena" = opt.narenas - 1 (an automatic arena)
 *   6, 7  each a new arena from "arenas.create"
 *   8     thread 6's manual arena
 * Round A (threads in order): bind, one malloc (which also sets up the
 * thread's tcache).  Then main makes every mallctl of the final read once
 * (je_warmup).  Round B (threads in order, then main): build_heap() with
 * the thread's index varying the counts (3, 6 and main also hold very
 * large allocations), then final_frees(), and park for good.  Main
 * finally reads jemalloc's statistics, writes the truth (format: truth.h)
 * and aborts.  Threads take turns, so the record needs no locking.
 */
#include "truth.h"

#define NTHREADS 8

static unsigned manual_arena;

static void *worker(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;

	/* Round A */
	turn_wait((int)idx);
	int t = thread_register();
	if (t != (int)idx)
		die("threads registered out of order");
	switch (idx) {
	case 3:
		thread_bind(0);
		break;
	case 4:
		thread_bind(3 % C.opt_narenas);
		break;
	case 5:
		thread_bind(C.opt_narenas - 1);
		break;
	case 6:
		manual_arena = arena_create();
		thread_bind(manual_arena);
		break;
	case 7:
		thread_bind(arena_create());
		break;
	case 8:
		thread_bind(manual_arena);
		break;
	default:
		break;
	}
	ja(t, 100 + idx);
	turn_pass((int)idx + 1);

	/* Round B */
	turn_wait(100 + (int)idx);
	build_heap(t, idx, 0);
	final_frees(t, idx);
	turn_pass(100 + (int)idx + 1);
	park_forever();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NTHREADS];

	if (argc != 2)
		die("usage: threads8 TRUTHFILE");
	live_truth_open(argv[1]);
	if (thread_register() != 0)
		die("main is not thread 0");
	je_config();
	void *first = ja(0, 9u << 20);
	for (unsigned i = 1; i <= NTHREADS; i++)
		if (pthread_create(&th[i - 1], NULL, worker, (void *)(uintptr_t)i))
			die("pthread_create failed");

	turn_pass(1);
	turn_wait(NTHREADS + 1);
	je_warmup(first);

	turn_pass(101);
	turn_wait(101 + NTHREADS);
	build_heap(0, 9, 0);
	final_frees(0, 9);
	truth_write_and_abort("threads8");
}

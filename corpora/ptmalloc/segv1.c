/* segv1 - a list on the heap whose second node's `next` was overwritten
 * with a pointer to unmapped memory; walking the list reads through it
 * and dies of SIGSEGV at a known address; the kernel writes the core.
 *
 *   gcc -O0 -g -pthread -o prog segv1.c && ./prog truth.txt
 *
 * The truth file (truth.h) describes the heap, unchanged by the crash.
 * Comment lines (truthcmp skips them) say what the crash must show:
 *
 *   # crash signal 11
 *   # crash addr 0xADDR        the faulting address (the bad node's
 *                              `value`, checked to be unmapped first)
 *   # crash frames sum_list main
 *        the functions the crashing thread's backtrace passes through,
 *        innermost first, in that order
 */
#include "truth.h"

#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

/* segv2.c defines SEGV_REPORTER: a crash reporter as servers install
   one (redis-server's): on SIGSEGV it writes a line, puts the default
   action back and sends itself the signal again, so the core's crashing
   thread is inside the handler (kill < reporter < the signal frame <
   sum_list < main) and the signal was sent by kill().  sigaction() is
   declared with _GNU_SOURCE (truth.h).  */
#ifndef SEGV_NAME
#define SEGV_NAME "segv1"
#endif

#ifdef SEGV_REPORTER
__attribute__((noinline)) static void crash_reporter(int sig)
{
	static const char line[] = "crash_reporter: caught SIGSEGV, "
				   "dumping core\n";
	if (write(2, line, sizeof line - 1) < 0) {
		/* nothing to do: the core matters, not the line */
	}
	/* SA_RESETHAND put the default action back; SA_NODEFER lets the
	   signal in now, inside the handler.  */
	kill(getpid(), sig);
}
#endif

struct node {
	struct node *next;
	long value;
};

/* Below any program, library or heap of a 64-bit Linux process (PIE
   and mmap bases are far above it; -no-pie executables start at
   0x400000 and their heap follows them).  */
#define BAD_NODE ((uintptr_t)0x10dead00)

__attribute__((noinline)) static long sum_list(const struct node *n)
{
	long sum = 0;
	for (; n; n = n->next)
		sum += n->value;
	return sum;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: " SEGV_NAME " TRUTHFILE");
	truth_open(argv[1], SEGV_NAME);
	int t = thread_register();
	struct node *n[4];
	unsigned char vec;

	for (int i = 0; i < 4; i++) {
		n[i] = ta(t, sizeof *n[i]);
		n[i]->next = NULL;
		n[i]->value = i;
	}
	for (int i = 0; i < 3; i++)
		n[i]->next = n[i + 1];
	tf(t, n[3]);
	/* The damage: a stray pointer where the next node was.  */
	n[1]->next = (struct node *)BAD_NODE;
	/* mincore() fails with ENOMEM on an unmapped page.  */
	if (mincore((void *)(BAD_NODE & ~(uintptr_t)4095), 4096, &vec) == 0)
		die("the bad pointer's page is mapped");

	out_str("# crash signal 11\n");
#ifdef SEGV_REPORTER
	/* Sent by kill(): no address.  As redis-server installs its
	   reporter.  */
	struct sigaction sa = { .sa_handler = crash_reporter,
				.sa_flags = SA_NODEFER | SA_RESETHAND };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0)
		die("sigaction");
	out_str("# crash frames kill crash_reporter sum_list main\n");
#else
	out_str("# crash addr ");
	out_num(BAD_NODE + offsetof(struct node, value), 16);
	out_str("\n");
	out_str("# crash frames sum_list main\n");
#endif
	truth_threads_and_allocs();
	truth_mallinfo_end();
	long sum = sum_list(n[0]);
	out_num((unsigned long long)sum, 10);
	die("the walk through the bad pointer did not fault");
}

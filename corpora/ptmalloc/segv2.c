/* segv2 - segv1 (the same heap, the same read through a stray pointer)
 * with a crash reporter as servers install one: its SIGSEGV handler
 * writes a line, restores the default action and sends the process the
 * signal again (redis-server's does so), so the kernel's core shows the
 * handler's frames above the signal frame, and a signal sent by kill().
 * For `triage`, whose signature must be segv1's: where the signal struck.
 *
 *   gcc -O0 -g -pthread -o prog segv2.c && ./prog truth.txt
 *
 * Truth as segv1's, without "# crash addr" (kill() gives none) and with
 * "# crash frames kill crash_reporter sum_list main".
 */
#define SEGV_NAME "segv2"
#define SEGV_REPORTER 1
#include "segv1.c"

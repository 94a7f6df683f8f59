/* tracer - a minimal ptrace tracer for the live-process tests.
 *
 *   tracer probe PID   PTRACE_SEIZE PID and let it go again (the tracer's
 *                      exit detaches it): exit 0 when this machine lets a
 *                      process trace a non-child, else one line naming the
 *                      error and exit 1
 *   tracer hold PID    PTRACE_SEIZE PID (it keeps running, but has a
 *                      tracer: /proc/PID/status TracerPid), say "held" on
 *                      stdout and hold it until end of file on stdin
 *
 * PTRACE_SEIZE sends no signal and stops nothing; the kernel detaches a
 * tracer's tracees when it exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char c;
	long pid;

	if (argc != 3 || (strcmp(argv[1], "probe") && strcmp(argv[1], "hold"))) {
		fprintf(stderr, "usage: tracer probe|hold PID\n");
		return 2;
	}
	pid = strtol(argv[2], NULL, 10);
	if (pid <= 0) {
		fprintf(stderr, "tracer: bad pid '%s'\n", argv[2]);
		return 2;
	}
	if (ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, NULL) != 0) {
		printf("PTRACE_SEIZE of pid %ld: %s\n", pid, strerror(errno));
		return 1;
	}
	if (!strcmp(argv[1], "probe"))
		return 0;
	printf("held\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

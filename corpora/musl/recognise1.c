/* recognise1.c - a musl program for tests/t0480-musl-recognised.sh:
 * heapwalk must name musl's allocator, never take it for glibc.
 *
 *   recognise1 alloc   allocate and free some blocks (mallocng's context
 *                      is set up), then abort: the test takes the core
 *   recognise1 idle    abort before the first allocation (free is linked
 *                      in, so a static build has mallocng, not set up)
 *   recognise1 wait    allocate, print "ready", then read stdin to its
 *                      end (the test's --pid) and exit 0
 *
 * Built with musl-gcc, static and dynamic.  Nothing is recorded: the
 * context's address comes from the static build's own symbol table.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[64];

static void build(void)
{
	for (int i = 0; i < 64; i++) {
		keep[i] = malloc((size_t)(16 + 40 * i));
		if (!keep[i])
			exit(2);
		memset(keep[i], i, 16);
	}
	for (int i = 0; i < 64; i += 3) {
		free(keep[i]);
		keep[i] = NULL;
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "idle"))
		abort();
	build();
	if (!strcmp(mode, "wait")) {
		char buf[64];
		puts("ready");
		fflush(stdout);
		while (read(0, buf, sizeof buf) > 0)
			;
		return 0;
	}
	if (!strcmp(mode, "alloc"))
		abort();
	return 2;
}

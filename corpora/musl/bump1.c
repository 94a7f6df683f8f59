/* bump1.c - a static musl program that allocates but never frees: musl
 * links its bump allocator (lite_malloc) instead of mallocng, which keeps
 * no record of its blocks.  tests/t0480-musl-recognised.sh: heapwalk says
 * so, and does not take the program for a static glibc.
 */
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char *p = malloc(100);
	if (!p)
		return 2;
	memset(p, 1, 100);
	abort();
}

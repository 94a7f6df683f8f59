/* leaks1 on jemalloc: the same program as corpora/ptmalloc/leaks1.c (its
 * comment says what it builds and records), linked with -ljemalloc.  The
 * blocks freed with a pointer left in them go to the thread's tcache;
 * the "mmapped" ones are large extents.
 */
#include "../ptmalloc/leaks1.c"

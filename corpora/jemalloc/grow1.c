/* grow1 on jemalloc: the same program as corpora/ptmalloc/grow1.c (its
 * comment says what it does and records), linked with -ljemalloc.  Arenas
 * are recorded by index (mallctl "arenas.lookup"); the second thread
 * flushes its tcache before the base core.
 */
#define GROW1_JEMALLOC 1
#include "../ptmalloc/grow1.c"

/* leaksprof1 - leaks1 (corpora/tcmalloc/leaks1.c: the program of
 * corpora/ptmalloc/leaks1.c on tcmalloc) under gperftools' heap profiler,
 * started before the first recorded block.  The profiler's table keeps
 * every block's address in its own memory (the address map's entries),
 * so a scan that took that memory for a root would find nothing lost;
 * the truth is leaks1's.  Linked with the full library (-ltcmalloc).
 */
#define LEAKS1_HEAP_PROFILER 1
#include "leaks1.c"

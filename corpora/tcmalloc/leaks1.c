/* leaks1 on gperftools tcmalloc: the same program as
 * corpora/ptmalloc/leaks1.c (its comment says what it builds and
 * records), linked with -ltcmalloc_minimal.  The blocks freed with a
 * pointer left in them go to the thread's cache; the "mmapped" ones are
 * large spans.
 */
#include "../ptmalloc/leaks1.c"

/* multiheap2 - multiheap1.c in its churn mode: the blocks glibc hands
 * back from its lists keep the stale link in their first word (see
 * multiheap1.c).
 */
#define MULTIHEAP_CHURN 1
#include "multiheap1.c"

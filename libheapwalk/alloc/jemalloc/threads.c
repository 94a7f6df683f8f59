/* threads.c - which arena each thread allocates from.
 *
 * A thread's tsd (jemalloc's thread-specific data, in its static TLS)
 * holds two arena_t pointers side by side: iarena (internal allocations)
 * then arena (the application's; what mallctl "thread.arena" reads).  The
 * tsd also holds the thread's tcache, which tcache.c found by its shape:
 * in 5.0-5.2 the pair sits a few hundred bytes before it, in 5.3 after
 * its cache bins.  So the pair of known arena addresses nearest to the
 * tcache is the binding.  The thread is the tcache's owner (the nearest
 * thread pointer); without thread pointers the binding is still found,
 * but not whose it is.
 */
#include "jemalloc.h"

#define WINDOW_BELOW 4096
#define WINDOW_ABOVE 8192

/* The arena index of address w, or -1.  */
static int arena_index(const struct je_state *j, uint64_t w)
{
	if (!w || (w & 63))
		return -1;
	for (unsigned a = 0; a < j->narena_slots; a++)
		if (j->arena_addr[a] == w)
			return (int)a;
	return -1;
}

/* The `arena` of the (iarena, arena) pair nearest to the tcache.  */
static int32_t binding_of(const struct je_state *j, const struct je_tcache *tc)
{
	uint64_t lo = tc->addr > WINDOW_BELOW ? tc->addr - WINDOW_BELOW : 0;
	uint64_t best = UINT64_MAX;
	int32_t arena = -1;
	for (uint64_t at = lo; at < tc->addr + WINDOW_ABOVE; at += 8) {
		uint64_t w[2];
		if (!hw_read(j->t, at, w, sizeof w))
			continue;
		int ia = arena_index(j, w[0]), a = ia < 0 ? -1 : arena_index(j, w[1]);
		if (a < 0)
			continue;
		uint64_t d = at > tc->addr ? at - tc->addr : tc->addr - at;
		if (d < best) {
			best = d;
			arena = a;
		}
	}
	return arena;
}

void je_find_bindings(struct je_state *j)
{
	if (!j->arenas_array)
		return;
	for (size_t i = 0; i < j->ntcaches; i++)
		j->tcaches[i].arena = binding_of(j, &j->tcaches[i]);
}

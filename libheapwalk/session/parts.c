/* parts.c - a job split into parts, run in threads.
 *
 * Every parallel walk has the same shape: part 0 in the caller's thread,
 * each other part in a thread of its own, and a part whose thread could
 * not be made run in the caller's thread afterwards, so that the work is
 * done whatever the system allows.  The parts are cut by weight
 * (hw_split_parts), each a run of the walk's units in order.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "session.h"

void hw_run_parts(void *jobs, size_t size, unsigned n, void *(*fn)(void *))
{
	pthread_t tids[HW_MAX_PARTS];
	bool started[HW_MAX_PARTS] = { false };
	char *job = jobs;
	for (unsigned k = 1; k < n; k++)
		started[k] = k < HW_MAX_PARTS &&
			     pthread_create(&tids[k], NULL, fn,
					    job + k * size) == 0;
	if (n > 0)
		fn(job);
	for (unsigned k = 1; k < n; k++) {
		if (started[k])
			pthread_join(tids[k], NULL);
		else
			fn(job + k * size);
	}
}

void hw_split_parts(size_t nunits, uint64_t (*weight)(const void *ctx,
						      size_t u),
		    const void *ctx, unsigned nparts, size_t bounds[])
{
	uint64_t total = 0, acc = 0;
	for (size_t u = 0; u < nunits; u++)
		total += weight(ctx, u);
	size_t u = 0;
	bounds[0] = 0;
	for (unsigned k = 0; k < nparts; k++) {
		uint64_t limit = total / nparts * (k + 1);
		while (u < nunits && (k == nparts - 1 || acc < limit))
			acc += weight(ctx, u++);
		bounds[k + 1] = u;
	}
}

size_t hw_cut_pieces(size_t nunits, uint64_t (*weight)(const void *ctx,
						       size_t u),
		     const void *ctx, uint64_t per_piece, size_t **starts)
{
	size_t n = 0, cap = 64;
	size_t *v = malloc(cap * sizeof *v);
	uint64_t acc = per_piece;
	*starts = NULL;
	for (size_t u = 0; u < nunits && v; u++) {
		if (acc >= per_piece) {
			if (n == cap) {
				size_t *w = realloc(v, 2 * cap * sizeof *w);
				if (!w) {
					free(v);
					return 0;
				}
				v = w;
				cap *= 2;
			}
			v[n++] = u;
			acc = 0;
		}
		acc += weight(ctx, u);
	}
	if (!v || !n) {
		free(v);
		return 0;
	}
	*starts = v;
	return n;
}

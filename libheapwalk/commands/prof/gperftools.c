/* gperftools.c - a profile as gperftools' MallocExtension::GetHeapSample
 * writes it: the legacy heap profile that pprof (Go's and gperftools'
 * perl one) reads.
 *
 *   heap profile: COUNT: BYTES [COUNT: BYTES] @ heap_v2/PERIOD
 *   COUNT: BYTES [COUNT: BYTES] @ PC PC ...       one line per entry
 *
 * or, from gperftools' heap profiler (every allocation, per stack: live
 * objects and bytes, and in the brackets all ever allocated), what its
 * GetHeapProfile and HEAPPROFILE's dumps write:
 *
 *   heap profile: LIVE: BYTES [ALLOCS: BYTES] @ heapprofile
 *   LIVE: BYTES [ALLOCS: BYTES] @ PC PC ...       one line per stack
 *
 *   MAPPED_LIBRARIES:
 *   /proc/self/maps
 *
 * tcmalloc writes one entry per sampled object (count 1, its request),
 * oldest first, and repeats the live figures in the brackets, where the
 * format has room for cumulative ones.  A profile that keeps per-stack
 * counters only (jemalloc's) is written one entry per stack, its live
 * counts, with the cumulative ones in the brackets when it kept them.
 * The counts are the sampled ones, as the allocator would write them:
 * pprof scales each entry by the period itself.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../emit/emit.h"
#include "prof.h"

/* "@" and 31 (tcmalloc) or 128 (jemalloc) pcs of 19 bytes.  */
#define LINE_MAX_LEN 4096

static size_t counts(char *buf, size_t len, uint64_t n, uint64_t b,
		     uint64_t an, uint64_t ab)
{
	int k = snprintf(buf, len, "%6" PRIu64 ": %8" PRIu64 " [%6" PRIu64
			 ": %8" PRIu64 "] @", n, b, an, ab);
	return k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
}

static void entry(struct hw_emitter *e, uint64_t n, uint64_t b, uint64_t an,
		  uint64_t ab, const struct hw_prof_site *site)
{
	char line[LINE_MAX_LEN];
	size_t at = counts(line, sizeof line, n, b, an, ab);
	for (unsigned k = 0; k < site->npcs && at + 24 < sizeof line; k++)
		at += (size_t)snprintf(line + at, sizeof line - at,
				       " 0x%" PRIx64, site->pcs[k]);
	line[at++] = '\n';
	em_verbatim(e, line, at);
}

void prof_write_gperftools(struct hw_session *s, const struct hw_profile *p,
			   struct hw_emitter *e)
{
	char line[LINE_MAX_LEN];
	em_verbatim_begin(e, "gperftools");
	const struct hw_prof_counts *t = &p->dump;
	size_t at = (size_t)snprintf(line, sizeof line, "heap profile: ");
	at += counts(line + at, sizeof line - at, t->curobjs, t->curbytes,
		     p->samples || !p->accum ? t->curobjs : t->accumobjs,
		     p->samples || !p->accum ? t->curbytes : t->accumbytes);
	if (p->all_allocations)
		at += (size_t)snprintf(line + at, sizeof line - at,
				       " heapprofile\n");
	else
		at += (size_t)snprintf(line + at, sizeof line - at,
				       " heap_v2/%" PRIu64 "\n", p->period);
	em_verbatim(e, line, at < sizeof line ? at : sizeof line - 1);
	if (p->samples) {
		for (size_t i = 0; i < p->nsamples && !em_failed(e); i++) {
			const struct hw_prof_sample *sm = &p->samples[i];
			entry(e, 1, sm->size, 1, sm->size, sm->site);
		}
	} else {
		for (size_t i = 0; i < p->nsites && !em_failed(e); i++) {
			const struct hw_prof_counts *c = &p->sites[i].dump;
			/* The heap profiler lists its stacks with nothing
			   live too.  */
			if (!c->curobjs && !(p->accum && c->accumobjs) &&
			    !p->all_allocations)
				continue;
			entry(e, c->curobjs, c->curbytes,
			      p->accum ? c->accumobjs : c->curobjs,
			      p->accum ? c->accumbytes : c->curbytes,
			      &p->sites[i]);
		}
	}
	static const char maps[] = "\nMAPPED_LIBRARIES:\n";
	em_verbatim(e, maps, sizeof maps - 1);
	prof_write_maps(s, e);
	em_verbatim_end(e);
}

/* prof.c - gperftools tcmalloc's sampled allocations as a heap profile.
 *
 * With TCMALLOC_SAMPLE_PARAMETER=N (the full library only: the minimal
 * one is built with NO_TCMALLOC_SAMPLES), tcmalloc samples about one
 * allocation every N bytes.  A sampled object gets a span of its own,
 * whatever its size: the span's `sample` bit is set, its `objects`
 * points at a StackTrace (the request, the depth, up to 31 return
 * addresses, innermost first) and the span is prepended to the circular
 * list Static::sampled_objects_ (a Span in the library's .bss).  Freeing
 * the object drops both.  MallocExtension::GetHeapSample lists the
 * samples from that list's far end, oldest first, one entry each.
 *
 * Every span is already known from the page map (spans.c): the sampled
 * ones are the in-use spans with the bit.  The list gives their order;
 * the list head is the node that is no sampled span but lies in the
 * library's data.  The period is FLAGS_tcmalloc_sample_parameter (a
 * dynamic symbol, even in Debian's stripped library), or else the
 * environment the process started with.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"

/* struct StackTrace: size, depth, stack[31].  */
#define TC_TRACE_WORDS (2 + TC_STACK_DEPTH)
#define SPAN_NEXT 16              /* Span::next */
#define SPAN_OBJECTS 32           /* Span::objects */
/* What gperftools' documentation suggests, when nothing says.  */
#define TC_DEFAULT_PERIOD 524288

static const char FLAG_PERIOD[] =
	"_ZN61FLAG__namespace_do_not_use_directly_use_DECLARE_int64_instead"
	"31FLAGS_tcmalloc_sample_parameterE";

void tc_prof_free(struct tc_prof *tp)
{
	if (!tp)
		return;
	free(tp->samples);
	free(tp->sites);
	free(tp->pcs);
	free(tp->npcs);
	free(tp->desc);
	free(tp->objs);
	free(tp->stacks);
	free(tp->meta);
	free(tp);
}

/* The sampling period: the flag, else the environment.  0 when
   sampling is off.  */
static void read_period(struct tc_state *tc, struct tc_prof *tp,
			size_t nsampled)
{
	struct hw_profile *p = &tp->p;
	uint64_t a, v;
	char env[32];
	if (tc->have_mod &&
	    hw_syms_lookup(tc->s->syms, &tc->mod, FLAG_PERIOD, &a, NULL,
			   NULL) &&
	    hw_read_u64(tc->t, a, &v)) {
		p->period = (int64_t)v > 0 ? v : 0;
		p->period_known = true;
		p->period_from = "FLAGS_tcmalloc_sample_parameter";
	} else if (hw_environ_get(tc->t, "TCMALLOC_SAMPLE_PARAMETER", env,
				  sizeof env)) {
		long long n = strtoll(env, NULL, 10);
		p->period = n > 0 ? (uint64_t)n : 0;
		p->period_known = true;
		p->period_from = "the environment's TCMALLOC_SAMPLE_PARAMETER";
	}
	if (!p->period && nsampled) {
		/* Objects were sampled: the period was not 0 when they
		   were.  */
		p->period = TC_DEFAULT_PERIOD;
		p->period_known = false;
		snprintf(tp->period_from, sizeof tp->period_from,
			 "assumed (%s)", p->period_from ? "the flag reads 0 "
			 "now" : "no symbol, no environment");
		p->period_from = tp->period_from;
	}
}

static int cmp_desc(const void *a, const void *b, void *arg)
{
	const uint64_t *d = arg;
	uint64_t x = d[*(const size_t *)a], y = d[*(const size_t *)b];
	return x < y ? -1 : x > y;
}

/* Index of the sample whose descriptor is desc (by_desc sorted by it),
   or -1.  */
static long find_desc(const struct tc_prof *tp, const size_t *by_desc,
		      size_t n, uint64_t desc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t d = tp->desc[by_desc[mid]];
		if (d == desc)
			return (long)by_desc[mid];
		if (d < desc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static bool in_data(const struct tc_state *tc, uint64_t a)
{
	for (size_t i = 0; i < tc->ndata; i++)
		if (a >= tc->data[i].start && a < tc->data[i].end)
			return true;
	return false;
}

/* order[]: the samples as GetHeapSample lists them (oldest first), from
   the sampled list; false when the list does not hold them all (then
   the page map's order is kept and the break is a finding).  */
static bool list_order(struct tc_state *tc, struct tc_prof *tp, size_t n,
		       size_t *order)
{
	size_t *by_desc = malloc(n * sizeof *by_desc);
	unsigned char *seen = calloc(n, 1);
	bool ok = false;
	if (!by_desc || !seen)
		goto out;
	for (size_t i = 0; i < n; i++)
		by_desc[i] = i;
	qsort_r(by_desc, n, sizeof *by_desc, cmp_desc, tp->desc);
	/* From the first sample forward to the head.  */
	uint64_t node = tp->desc[0], head = 0;
	for (size_t k = 0; k <= n && !head; k++) {
		uint64_t next;
		if (!hw_read_u64(tc->t, node + SPAN_NEXT, &next))
			break;
		if (find_desc(tp, by_desc, n, next) < 0) {
			if (in_data(tc, next))
				head = next;
			break;
		}
		node = next;
	}
	if (!head) {
		hw_finding(tc->s, node, "tcmalloc: the list of sampled spans "
			   "breaks at 0x%llx (no way back to its head): "
			   "samples are listed in address order",
			   (unsigned long long)node);
		goto out;
	}
	/* From the head: newest first; the heap sample is oldest first.  */
	size_t got = 0;
	node = head;
	for (;;) {
		uint64_t next;
		if (!hw_read_u64(tc->t, node + SPAN_NEXT, &next)) {
			hw_finding(tc->s, node, "tcmalloc: the list of sampled "
				   "spans breaks at 0x%llx",
				   (unsigned long long)node);
			goto out;
		}
		if (next == head)
			break;
		long i = find_desc(tp, by_desc, n, next);
		if (i < 0 || seen[i] || got == n) {
			hw_finding(tc->s, node, "tcmalloc: the list of sampled "
				   "spans leads from 0x%llx to 0x%llx, %s",
				   (unsigned long long)node,
				   (unsigned long long)next,
				   i < 0 ? "no sampled span" : "a second time");
			goto out;
		}
		seen[i] = 1;
		order[n - 1 - got++] = (size_t)i;
		node = next;
	}
	if (got != n) {
		hw_finding(tc->s, head, "tcmalloc: %zu sampled spans are not "
			   "on the list of sampled spans at 0x%llx", n - got,
			   (unsigned long long)head);
		goto out;
	}
	snprintf(tp->found, sizeof tp->found, "the sampled spans of the page "
		 "map, in the order of the list at 0x%llx",
		 (unsigned long long)head);
	ok = true;
out:
	free(by_desc);
	free(seen);
	return ok;
}

static int cmp_stack(const void *a, const void *b, void *arg)
{
	const struct tc_prof *tp = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (tp->npcs[x] != tp->npcs[y])
		return tp->npcs[x] < tp->npcs[y] ? -1 : 1;
	int c = memcmp(tp->pcs + x * TC_STACK_DEPTH,
		       tp->pcs + y * TC_STACK_DEPTH,
		       tp->npcs[x] * sizeof *tp->pcs);
	if (c)
		return c;
	return x < y ? -1 : x > y;   /* first sampled first */
}

static int obj_cmp(const void *a, const void *b)
{
	const struct tc_prof_obj *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void tc_prof_index_objs(struct tc_prof *tp, size_t n)
{
	qsort(tp->objs, n, sizeof *tp->objs, obj_cmp);
	tp->nobjs = n;
}

/* pprof's scaling of one sampled object of `size` bytes.  */
static double scale(uint64_t period, uint64_t size)
{
	if (period <= 1 || !size)
		return 1.0;
	return 1.0 / (1.0 - exp(-(double)size / (double)period));
}

static bool same_stack(const struct tc_prof *tp, size_t x, size_t y)
{
	return tp->npcs[x] == tp->npcs[y] &&
	       !memcmp(tp->pcs + x * TC_STACK_DEPTH,
		       tp->pcs + y * TC_STACK_DEPTH,
		       tp->npcs[x] * sizeof *tp->pcs);
}

/* Group the samples (already in their order) by stack into sites, the
   sites in the order of each stack's first sample.  */
static bool make_sites(struct tc_prof *tp, size_t n)
{
	struct hw_profile *p = &tp->p;
	size_t one = n ? n : 1;
	size_t *ix = malloc(one * sizeof *ix);
	size_t *group = malloc(one * sizeof *group);
	size_t *rank = malloc(one * sizeof *rank);
	double *est = calloc(2 * one, sizeof *est);
	tp->sites = calloc(one, sizeof *tp->sites);
	bool ok = ix && group && rank && est && tp->sites;
	if (!ok)
		goto out;
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof *ix, cmp_stack, tp);
	size_t ngroups = 0;
	for (size_t k = 0; k < n; k++) {
		if (!k || !same_stack(tp, ix[k - 1], ix[k]))
			rank[ngroups++] = SIZE_MAX;
		group[ix[k]] = ngroups - 1;
	}
	size_t ns = 0;
	for (size_t i = 0; i < n; i++) {
		size_t g = group[i];
		if (rank[g] == SIZE_MAX) {
			struct hw_prof_site *st = &tp->sites[ns];
			rank[g] = ns++;
			st->addr = tp->samples[i].addr;
			st->pcs = tp->pcs + i * TC_STACK_DEPTH;
			st->npcs = tp->npcs[i];
		}
		size_t r = rank[g];
		struct hw_prof_site *st = &tp->sites[r];
		uint64_t size = tp->samples[i].size;
		st->dump.curobjs++;
		st->dump.curbytes += size;
		double sc = scale(p->period, size);
		est[2 * r] += sc;
		est[2 * r + 1] += sc * (double)size;
		tp->samples[i].site = st;
	}
	for (size_t r = 0; r < ns; r++) {
		struct hw_prof_site *st = &tp->sites[r];
		/* No cumulative counters: what tcmalloc prints in their
		   place is the live ones again.  */
		st->dump.accumobjs = st->dump.curobjs;
		st->dump.accumbytes = st->dump.curbytes;
		st->est.curobjs = st->est.accumobjs = (uint64_t)llround(est[2 * r]);
		st->est.curbytes = st->est.accumbytes =
			(uint64_t)llround(est[2 * r + 1]);
		st->sampled_objs = st->dump.curobjs;
		st->sampled_bytes = st->dump.curbytes;
		p->dump.curobjs += st->dump.curobjs;
		p->dump.curbytes += st->dump.curbytes;
		p->est.curobjs += st->est.curobjs;
		p->est.curbytes += st->est.curbytes;
	}
	p->dump.accumobjs = p->dump.curobjs;
	p->dump.accumbytes = p->dump.curbytes;
	p->est.accumobjs = p->est.curobjs;
	p->est.accumbytes = p->est.curbytes;
	p->sampled_objs = p->dump.curobjs;
	p->sampled_bytes = p->dump.curbytes;
	p->sites = tp->sites;
	p->nsites = ns;
out:
	free(ix);
	free(group);
	free(rank);
	free(est);
	return ok;
}

/* The spans sampled and live, their records read, in the heap sample's
   order; the profile over them.  */
enum hw_status tc_read_profile(struct tc_state *tc, struct tc_prof **out,
			       const char **why)
{
	*out = NULL;
	*why = NULL;
	size_t n = 0;
	for (size_t i = 0; i < tc->nspans; i++)
		n += tc->spans[i].sample && !tc->spans[i].location;
	struct tc_prof *tp = calloc(1, sizeof *tp);
	if (!tp)
		return hw_error(tc->s, HW_BAD_TARGET, "out of memory");
	struct hw_profile *p = &tp->p;
	snprintf(tp->allocator, sizeof tp->allocator, "tcmalloc %s",
		 tc->version[0] ? tc->version : "(version unknown)");
	p->allocator = tp->allocator;
	p->native = HW_PROF_GPERFTOOLS;
	p->code_low = tc->have_mod ? tc->mod.low : 0;
	p->code_high = tc->have_mod ? tc->mod.high : 0;
	/* The heap profiler, when on, has every allocation: it wins over
	   the sampler's few.  */
	const char *how;
	uint64_t table = tc_find_heap_profile(tc, &how);
	if (table) {
		enum hw_status st = tc_read_heap_profile(tc, tp, table, how);
		if (st != HW_OK) {
			tc_prof_free(tp);
			return st;
		}
		*out = tp;
		return HW_OK;
	}
	read_period(tc, tp, n);
	if (!n && !p->period) {
		*why = tc->module[0] && strstr(tc->module, "minimal") ?
			"tcmalloc samples nothing: libtcmalloc_minimal is "
			"built without sampling (link -ltcmalloc and set "
			"TCMALLOC_SAMPLE_PARAMETER)" :
			"tcmalloc samples nothing: TCMALLOC_SAMPLE_PARAMETER "
			"was 0 or unset";
		tc_prof_free(tp);
		return HW_OK;
	}
	size_t one = n ? n : 1;
	tp->samples = calloc(one, sizeof *tp->samples);
	tp->pcs = calloc(one * TC_STACK_DEPTH, sizeof *tp->pcs);
	tp->npcs = calloc(one, sizeof *tp->npcs);
	tp->desc = calloc(one, sizeof *tp->desc);
	tp->objs = calloc(one, sizeof *tp->objs);
	size_t *order = calloc(one, sizeof *order);
	struct hw_prof_sample *raw = calloc(one, sizeof *raw);
	uint64_t *rawpcs = calloc(one * TC_STACK_DEPTH, sizeof *rawpcs);
	unsigned *rawn = calloc(one, sizeof *rawn);
	uint64_t *rawdesc = calloc(one, sizeof *rawdesc);
	enum hw_status st = HW_OK;
	if (!tp->samples || !tp->pcs || !tp->npcs || !tp->desc ||
	    !tp->objs || !order || !raw || !rawpcs || !rawn || !rawdesc) {
		st = hw_error(tc->s, HW_BAD_TARGET, "out of memory");
		goto out;
	}
	/* The records, in the page map's order.  */
	size_t k = 0;
	for (size_t i = 0; i < tc->nspans; i++) {
		const struct tc_span *sp = &tc->spans[i];
		if (!sp->sample || sp->location)
			continue;
		uint64_t obj, tr[TC_TRACE_WORDS];
		if (!hw_read_u64(tc->t, sp->desc + SPAN_OBJECTS, &obj) ||
		    !hw_read(tc->t, obj, tr, sizeof tr) ||
		    tr[1] > TC_STACK_DEPTH) {
			hw_finding(tc->s, sp->desc, "tcmalloc: the sampled span "
				   "at 0x%llx has no readable stack record "
				   "(0x%llx)", (unsigned long long)sp->addr,
				   (unsigned long long)obj);
			p->unreadable++;
			continue;
		}
		raw[k].addr = sp->addr;
		raw[k].size = tr[0];
		rawn[k] = (unsigned)tr[1];
		memcpy(rawpcs + k * TC_STACK_DEPTH, tr + 2, tr[1] * sizeof *tr);
		rawdesc[k] = sp->desc;
		k++;
	}
	n = k;
	/* list_order needs desc[] in the raw order.  */
	memcpy(tp->desc, rawdesc, n * sizeof *rawdesc);
	if (!n || !list_order(tc, tp, n, order)) {
		for (size_t i = 0; i < n; i++)
			order[i] = i;
		snprintf(tp->found, sizeof tp->found, "the sampled spans of "
			 "the page map");
	}
	for (size_t i = 0; i < n; i++) {
		size_t r = order[i];
		tp->samples[i] = raw[r];
		tp->npcs[i] = rawn[r];
		tp->desc[i] = rawdesc[r];
		memcpy(tp->pcs + i * TC_STACK_DEPTH, rawpcs + r * TC_STACK_DEPTH,
		       TC_STACK_DEPTH * sizeof *rawpcs);
	}
	if (!make_sites(tp, n)) {
		st = hw_error(tc->s, HW_BAD_TARGET, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		tp->objs[i] = (struct tc_prof_obj){ tp->samples[i].addr,
						    tp->samples[i].site };
	tc_prof_index_objs(tp, n);
	p->active = p->period > 0;
	p->found_by = tp->found;
	p->samples = tp->samples;
	p->nsamples = n;
out:
	free(order);
	free(raw);
	free(rawpcs);
	free(rawn);
	free(rawdesc);
	if (st != HW_OK) {
		tc_prof_free(tp);
		return st;
	}
	*out = tp;
	return HW_OK;
}

void tc_prof_internal(const struct tc_prof *tp, hw_range_fn *fn, void *cookie)
{
	for (size_t i = 0; tp && i < tp->nmeta; i++)
		fn(cookie, tp->meta[i].start, tp->meta[i].end);
}

const struct hw_profile *tc_prof_profile(const struct tc_prof *tp)
{
	return tp ? &tp->p : NULL;
}

/* The site of the block at addr, or NULL: the heap profiler's record
   of it, or its sample.  */
const struct hw_prof_site *tc_prof_site_of(const struct tc_prof *tp,
					   uint64_t addr)
{
	size_t lo = 0, hi = tp ? tp->nobjs : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tp->objs[mid].addr == addr)
			return tp->objs[mid].site;
		if (tp->objs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

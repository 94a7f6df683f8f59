/* roots.c - the roots of a conservative scan (roots.h).
 *
 * TLS needs no walk of its own: static TLS and the TCB sit at the top of
 * a thread's stack mapping (the main thread's in a mapping ld.so made),
 * and the DTV and dynamic TLS blocks are blocks reached from there.
 */
#include <stdlib.h>
#include <string.h>

#include "../arch/arch.h"
#include "../target/target.h"
#include "roots.h"

void hw_ranges_add(struct hw_ranges *rs, uint64_t start, uint64_t end)
{
	if (start >= end)
		return;
	if (rs->n && rs->v[rs->n - 1].end == start) {
		rs->v[rs->n - 1].end = end;
		return;
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 64;
		struct hw_range *v = realloc(rs->v, cap * sizeof *v);
		if (!v) {
			rs->oom = true;
			return;
		}
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n++] = (struct hw_range){ start, end };
}

void hw_ranges_take(struct hw_ranges *rs, struct hw_ranges *from)
{
	for (size_t i = 0; i < from->n; i++)
		hw_ranges_add(rs, from->v[i].start, from->v[i].end);
	rs->oom |= from->oom;
	hw_ranges_free(from);
}

static int range_cmp(const void *a, const void *b)
{
	const struct hw_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

void hw_ranges_normalize(struct hw_ranges *rs)
{
	if (!rs->n)
		return;
	qsort(rs->v, rs->n, sizeof *rs->v, range_cmp);
	size_t n = 1;
	for (size_t i = 1; i < rs->n; i++) {
		struct hw_range *last = &rs->v[n - 1];
		if (rs->v[i].start <= last->end) {
			if (rs->v[i].end > last->end)
				last->end = rs->v[i].end;
		} else
			rs->v[n++] = rs->v[i];
	}
	rs->n = n;
}

void hw_ranges_free(struct hw_ranges *rs)
{
	free(rs->v);
	memset(rs, 0, sizeof *rs);
}

/* The first range of rs that ends after addr (rs normalized).  */
static size_t first_after(const struct hw_ranges *rs, uint64_t addr)
{
	size_t lo = 0, hi = rs->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rs->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool hw_ranges_overlap(const struct hw_ranges *rs, uint64_t start,
		       uint64_t end)
{
	size_t i = first_after(rs, start);
	return i < rs->n && rs->v[i].start < end;
}

bool hw_ranges_has(const struct hw_ranges *rs, uint64_t addr)
{
	size_t i = first_after(rs, addr);
	return i < rs->n && rs->v[i].start <= addr;
}

/* [start, end) less the ranges of rs, each piece to fn as a root.  */
static void emit_pieces(const struct hw_ranges *rs, struct hw_root *root,
			uint64_t start, uint64_t end, hw_root_fn *fn,
			void *cookie)
{
	for (size_t i = first_after(rs, start); start < end; i++) {
		uint64_t stop = i < rs->n && rs->v[i].start < end
				? rs->v[i].start : end;
		if (stop > start) {
			root->start = start;
			root->end = stop;
			fn(cookie, root);
		}
		if (i >= rs->n || rs->v[i].start >= end)
			break;
		start = rs->v[i].end;
	}
}

/* Memory a program may keep pointers in: writable, or read-only and its
   own (mprotect()ed after it was filled); never code or mapped files'
   read-only pages.  */
static bool scannable(const struct hw_region *r)
{
	if (!(r->prot & HW_PROT_R) || (r->prot & HW_PROT_X))
		return false;
	return (r->prot & HW_PROT_W) || r->file < 0;
}

void hw_roots_each(struct hw_session *s, const struct hw_ranges *excluded,
		   hw_root_fn *fn, void *cookie)
{
	struct hw_target *t = s->target;
	const struct hw_arch *a = t->arch ? t->arch : s->arch;
	struct hw_ranges skip = { 0 };
	for (size_t i = 0; i < excluded->n; i++)
		hw_ranges_add(&skip, excluded->v[i].start, excluded->v[i].end);
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct hw_thread *th = &t->threads[i];
		for (uint32_t k = 0; k < th->nregs; k++) {
			struct hw_root root = {
				.kind = HW_ROOT_REGISTER, .thread = (int)i,
				.reg = (int)k, .value = th->regs[k] };
			fn(cookie, &root);
		}
		/* glibc's TCB holds &dtv[1] (dtv_t: 16 bytes), dtv[0]
		   being its length.  */
		uint64_t dtv;
		if (th->has_tp && a &&
		    hw_read_u64(t, th->tp + a->dtv_off, &dtv) && dtv > 16) {
			struct hw_root root = {
				.kind = HW_ROOT_DTV, .thread = (int)i,
				.reg = -1, .value = dtv - 16 };
			fn(cookie, &root);
		}
		/* A stack inside a block (a caller-provided stack) is
		   scanned with that block, if it is reached.  */
		const struct hw_region *r = hw_region_of(t, th->sp);
		if (!r || hw_ranges_has(excluded, th->sp))
			continue;
		uint64_t from = th->sp - (a ? a->red_zone : 0);
		if (from < r->start || from > th->sp)
			from = r->start;
		struct hw_root root = { .kind = HW_ROOT_STACK, .thread = (int)i,
					.reg = -1 };
		emit_pieces(excluded, &root, from & ~(uint64_t)7, r->end, fn,
			    cookie);
		/* The memory pass skips the whole mapping: below the stack
		   pointer is dead, above it was scanned here.  */
		hw_ranges_add(&skip, r->start, r->end);
	}
	hw_ranges_normalize(&skip);
	struct hw_root root = { .kind = HW_ROOT_MEMORY, .thread = -1,
				.reg = -1 };
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (scannable(r))
			emit_pieces(&skip, &root, r->start, r->end, fn, cookie);
	}
	hw_ranges_free(&skip);
}

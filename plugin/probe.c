/* probe.c - a memory map found by reading (see probe.h).  */
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define PAGE 4096u

/* The auxiliary vector's entries that point into the process.  */
static const uint64_t auxv_pointers[] = {
	3,   /* AT_PHDR: the executable */
	7,   /* AT_BASE: the dynamic loader */
	9,   /* AT_ENTRY */
	15,  /* AT_PLATFORM: the initial stack */
	25,  /* AT_RANDOM */
	31,  /* AT_EXECFN */
	33,  /* AT_SYSINFO_EHDR: the vDSO */
};

/* How far below a library's text its ELF header may be.  */
#define MAX_HEADER_DISTANCE (16u << 20)
#define MAX_PHNUM 128

struct prober {
	probe_fn *read;
	void *cookie;
	uint64_t top;          /* the end of the address space */
	size_t probes;
	uint64_t *cuts;        /* where loaded ELF objects start and end,
				  sorted */
	size_t ncuts;
	struct span { uint64_t start, end; } *objects;  /* loaded ELF objects */
	size_t nobjects;
};

static bool probe(struct prober *p, uint64_t addr)
{
	char byte;
	p->probes++;
	return p->read(p->cookie, addr, &byte, 1);
}

/* ---- where the loaded objects end -------------------------------------- */

static uint64_t get(const unsigned char *b, size_t n)
{
	uint64_t v = 0;
	for (size_t i = n; i-- > 0; )   /* little-endian targets only */
		v = v << 8 | b[i];
	return v;
}

/* The end (page-rounded) of the 64-bit ELF object whose header is at h,
   or 0 when there is none there.  */
static uint64_t object_end(struct prober *p, uint64_t h)
{
	unsigned char eh[64], ph[56];
	p->probes++;
	if (!p->read(p->cookie, h, eh, sizeof eh) ||
	    memcmp(eh, "\177ELF", 4) != 0 || eh[4] != 2 || eh[5] != 1)
		return 0;
	uint64_t phoff = get(eh + 32, 8);
	unsigned phentsize = (unsigned)get(eh + 54, 2);
	unsigned phnum = (unsigned)get(eh + 56, 2);
	if (phentsize != sizeof ph || phnum == 0 || phnum > MAX_PHNUM ||
	    phoff > MAX_HEADER_DISTANCE)
		return 0;
	uint64_t first = UINT64_MAX, last = 0;
	for (unsigned i = 0; i < phnum; i++) {
		p->probes++;
		if (!p->read(p->cookie, h + phoff + i * (uint64_t)sizeof ph, ph,
			     sizeof ph))
			return 0;
		if (get(ph, 4) != 1)   /* PT_LOAD */
			continue;
		uint64_t vaddr = get(ph + 16, 8), memsz = get(ph + 40, 8);
		if (vaddr + memsz < vaddr)
			return 0;
		if (vaddr < first)
			first = vaddr & ~(uint64_t)(PAGE - 1);
		if (vaddr + memsz > last)
			last = vaddr + memsz;
	}
	if (first == UINT64_MAX || last - first > p->top)
		return 0;
	uint64_t end = h + (last - first);
	return end < h ? 0 : (end + PAGE - 1) & ~(uint64_t)(PAGE - 1);
}

/* The ELF header at or below a (a's own page, then each page down):
   its address in *start, its object's end returned; 0 when none is
   found.  */
static uint64_t object_at(struct prober *p, uint64_t a, uint64_t *start)
{
	uint64_t h = a & ~(uint64_t)(PAGE - 1);
	for (uint64_t d = 0; d <= MAX_HEADER_DISTANCE && h >= PAGE;
	     d += PAGE, h -= PAGE) {
		unsigned char magic[4];
		p->probes++;
		if (!p->read(p->cookie, h, magic, sizeof magic))
			return 0;
		if (!memcmp(magic, "\177ELF", 4)) {
			*start = h;
			return object_end(p, h);
		}
	}
	return 0;
}

/* One more cut (0: none), each once, at most cap.  */
static void add_cut(struct prober *p, uint64_t cut, size_t cap)
{
	for (size_t i = 0; i < p->ncuts; i++)
		if (p->cuts[i] == cut)
			return;
	if (cut && p->ncuts < cap)
		p->cuts[p->ncuts++] = cut;
}

/* The object around a as two cuts: its start, so that it is a region
   of its own (the one its file names, where the library's data and
   version string are looked for), and its end.  */
static void add_object(struct prober *p, uint64_t a, size_t cap)
{
	uint64_t start = 0, end = object_at(p, a, &start);
	if (end) {
		add_cut(p, start, cap);
		add_cut(p, end, cap);
		for (size_t i = 0; i < p->nobjects; i++)
			if (p->objects[i].start == start)
				return;
		if (p->nobjects < cap / 2)
			p->objects[p->nobjects++] = (struct span){ start, end };
	}
}

static int by_address(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Where readability flips between lo and hi (which differ in it): the
   first page after lo that is as hi is.  */
static uint64_t flip(struct prober *p, uint64_t lo, uint64_t hi,
		     bool hi_readable)
{
	while (hi - lo > PAGE) {
		uint64_t mid = (lo + (hi - lo) / 2) & ~(uint64_t)(PAGE - 1);
		if (mid <= lo)
			mid = lo + PAGE;
		if (probe(p, mid) == hi_readable)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* The first readable page in (lo, hi]: lo is unreadable, hi readable.  */
static uint64_t first_readable(struct prober *p, uint64_t lo, uint64_t hi)
{
	return flip(p, lo, hi, true);
}

/* The end of the readable pages from lo: lo readable, hi unreadable.  */
static uint64_t readable_end(struct prober *p, uint64_t lo, uint64_t hi)
{
	return flip(p, lo, hi, false);
}

static bool add_region(struct gdb_view *v, uint64_t start, uint64_t end)
{
	if (end <= start)
		return true;
	struct hw_memory_region *r = gdb_view_new_region(v);
	if (!r)
		return false;
	r->start = start;
	r->end = end;
	r->prot = HW_MEM_R | HW_MEM_W;   /* unknown: assume data */
	return true;
}

/* A readable run, split where a loaded object starts or ends inside it;
   what follows an end starts at the first readable page after it.  */
static bool add_run(struct prober *p, struct gdb_view *v, uint64_t start,
		    uint64_t end)
{
	for (size_t i = 0; i < p->ncuts && start < end; i++) {
		uint64_t e = p->cuts[i];
		if (e <= start || e >= end)
			continue;
		if (!add_region(v, start, e))
			return false;
		start = e;
		/* The hole after it, if any, to the page.  */
		uint64_t next = e;
		while (next < end && next - e < PROBE_STEP && !probe(p, next))
			next += PAGE;
		start = next;
	}
	return add_region(v, start, end);
}

/* From a readable anchor a, with nothing below `floor` left to scan:
   go down until PROBE_MARGIN unreadable bytes in a row (or the floor),
   then sweep up, adding each readable run, until PROBE_MARGIN
   unreadable bytes in a row past the last readable one.  Returns where
   the sweep stopped (the next floor), 0 when out of memory.  */
static uint64_t sweep(struct prober *p, struct gdb_view *v, uint64_t a,
		      uint64_t floor)
{
	uint64_t low = a, pos = a, gap = 0;
	while (pos >= floor + PROBE_STEP && gap < PROBE_MARGIN) {
		pos -= PROBE_STEP;
		if (probe(p, pos)) {
			low = pos;
			gap = 0;
		} else {
			gap += PROBE_STEP;
		}
	}
	/* low is readable; the run it is in starts at or below it (the
	   floor, where the last sweep stopped, was not readable).  */
	uint64_t x = low - floor >= PROBE_STEP ? low - PROBE_STEP : floor;
	uint64_t start = x < low && !probe(p, x) ? first_readable(p, x, low)
						   : x;
	bool in_run = true;
	uint64_t last = low;   /* the last step position that was readable */
	for (pos = low + PROBE_STEP; pos < p->top; pos += PROBE_STEP) {
		bool ok = probe(p, pos);
		if (ok && !in_run)
			start = first_readable(p, pos - PROBE_STEP, pos);
		if (!ok && in_run &&
		    !add_run(p, v, start, readable_end(p, last, pos)))
			return 0;
		in_run = ok;
		if (ok)
			last = pos;
		else if (pos - last >= PROBE_MARGIN)
			break;
	}
	if (in_run && !add_run(p, v, start, pos < p->top ? pos : p->top))
		return 0;
	return pos;
}

/* The end of the region of v that holds a, or 0 when none does.  */
static uint64_t covered_to(const struct gdb_view *v, uint64_t a)
{
	for (size_t i = 0; i < v->nregions; i++)
		if (a >= v->regions[i].start && a < v->regions[i].end)
			return v->regions[i].end;
	return 0;
}

/* The sweep's steps can pass over a mapping smaller than a step: a
   library's data segment (4 pages of ld.so's, where the link_map lives)
   between the holes its 64 KiB alignment leaves.  Inside each loaded
   object, and one step past its end (the dynamic linker's first
   allocations follow its .bss), every page no region holds yet is read,
   and each readable run found is added, to the page.  */
static bool fill_objects(struct prober *p, struct gdb_view *v)
{
	for (size_t i = 0; i < p->nobjects; i++) {
		uint64_t end = p->objects[i].end + PROBE_STEP;
		if (end > p->top || end < p->objects[i].end)
			end = p->top;
		uint64_t a = p->objects[i].start;
		while (a < end) {
			uint64_t to = covered_to(v, a);
			if (to) {
				a = to;
				continue;
			}
			if (!probe(p, a)) {
				a += PAGE;
				continue;
			}
			uint64_t run = a;
			do
				a += PAGE;
			while (a < p->top && !covered_to(v, a) && probe(p, a));
			if (!add_run(p, v, run, a))
				return false;
		}
	}
	return true;
}

bool probe_map(struct gdb_view *v, const uint64_t *extra, size_t n_extra,
	       probe_fn *read, void *cookie, struct probe_stats *st)
{
	struct prober p = {
		.read = read,
		.cookie = cookie,
		.top = v->ptr_size == 4 ? 1ull << 32 : 1ull << 48,
	};
	size_t cap = v->nthreads + n_extra +
		     sizeof auxv_pointers / sizeof *auxv_pointers;
	uint64_t *anchors = malloc(cap * sizeof *anchors);
	size_t n = 0;
	if (!anchors)
		return false;
	for (size_t i = 0; i < v->nthreads; i++)
		anchors[n++] = v->threads[i].sp;
	for (size_t i = 0; i < n_extra; i++)
		anchors[n++] = extra[i];
	for (size_t i = 0; i + 16 <= v->auxv_len; i += 16) {
		uint64_t w[2];
		memcpy(w, v->auxv + i, sizeof w);
		for (size_t k = 0; k < sizeof auxv_pointers / sizeof *auxv_pointers; k++)
			if (w[0] == auxv_pointers[k] && w[1] && n < cap)
				anchors[n++] = w[1];
	}
	qsort(anchors, n, sizeof *anchors, by_address);
	/* The loaded objects: the executable (AT_PHDR), the loader
	   (AT_BASE) and gdb's shared libraries.  64-bit ELF only.  */
	size_t cap_cuts = 2 * (n_extra + 2);
	p.cuts = v->ptr_size == 4 ? NULL : malloc(cap_cuts * sizeof *p.cuts);
	p.objects = p.cuts ? malloc(cap_cuts / 2 * sizeof *p.objects) : NULL;
	if (!p.objects) {
		free(p.cuts);
		p.cuts = NULL;
	}
	for (size_t i = 0; p.cuts && i < n_extra; i++)
		add_object(&p, extra[i], cap_cuts);
	for (size_t i = 0; p.cuts && i + 16 <= v->auxv_len; i += 16) {
		uint64_t w[2];
		memcpy(w, v->auxv + i, sizeof w);
		if ((w[0] == 3 || w[0] == 7) && w[1])
			add_object(&p, w[1], cap_cuts);
	}
	if (p.cuts)
		qsort(p.cuts, p.ncuts, sizeof *p.cuts, by_address);
	uint64_t floor = 0;
	bool ok = true;
	if (st)
		st->anchors = n;
	for (size_t i = 0; i < n && ok; i++) {
		uint64_t a = anchors[i] & ~(uint64_t)(PAGE - 1);
		if (a < floor || a >= p.top || !probe(&p, a))
			continue;
		uint64_t next = sweep(&p, v, a, floor);
		ok = next != 0;
		floor = next;
	}
	if (ok)
		ok = fill_objects(&p, v);
	free(anchors);
	free(p.cuts);
	free(p.objects);
	if (st)
		st->probes = p.probes;
	return ok;
}

/* ---- the map of the last stop ------------------------------------------ */

bool probe_memo_take(const struct probe_memo *m, const char *ctx,
		     size_t len, struct gdb_view *v, bool *oom)
{
	*oom = false;
	if (!m->ctx || !ctx || m->ctx_len != len || memcmp(m->ctx, ctx, len))
		return false;
	for (size_t i = 0; i < m->nruns; i++)
		if (!add_region(v, m->runs[i].start, m->runs[i].end)) {
			*oom = true;
			return false;
		}
	return true;
}

void probe_memo_keep(struct probe_memo *m, const char *ctx, size_t len,
		     const struct gdb_view *v, size_t first, size_t probes)
{
	probe_memo_free(m);
	if (!ctx || first > v->nregions)
		return;
	size_t n = v->nregions - first;
	m->ctx = malloc(len ? len : 1);
	m->runs = malloc((n ? n : 1) * sizeof *m->runs);
	if (!m->ctx || !m->runs) {
		probe_memo_free(m);
		return;
	}
	memcpy(m->ctx, ctx, len);
	m->ctx_len = len;
	for (size_t i = 0; i < n; i++)
		m->runs[i] = (struct probe_run){ v->regions[first + i].start,
						 v->regions[first + i].end };
	m->nruns = n;
	m->probes = probes;
}

void probe_memo_free(struct probe_memo *m)
{
	free(m->ctx);
	free(m->runs);
	*m = (struct probe_memo){ 0 };
}

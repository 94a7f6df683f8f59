/* memory.c - bounds-checked reads over a target's regions.
 *
 * Every walker read goes through here, whatever the backend: a core's
 * bytes are in its mapping, a lazy region's come through the cache.
 * There is deliberately no "last region" cache: walkers read from several
 * threads, and a shared cache line written by both costs more than the
 * binary search it saves (hot loops take a pointer to a whole readable
 * run instead).
 */
#include <stdlib.h>
#include <string.h>

#include "../arch/arch.h"
#include "cache.h"
#include "target.h"

/* The readable bytes of r from addr on, in one piece; at least `want` of
   them are fetched from a slow backend if need be (a walk over a whole
   region asks for all of it at once, a pointer peek for a few bytes).  */
static uint64_t region_run(struct hw_target *t, const struct hw_region *r,
			   uint64_t addr, uint64_t want, const uint8_t **p)
{
	uint64_t off = addr - r->start;
	if (off < r->avail) {
		if (r->lazy)
			return hw_cache_run(t, (struct hw_region *)r, addr,
					    want, p);
		*p = r->data + off;
		return r->avail - off;
	}
	/* A file stands in for what the core did not dump (pages as the
	   file has them), never for what a cut core lost.  */
	if (r->backing && off >= r->dumped && off < r->backing_len) {
		*p = r->backing + off;
		return r->backing_len - off;
	}
	return 0;
}

uint64_t hw_region_held(const struct hw_region *r)
{
	uint64_t n = r->avail;     /* a lazy region's is all of it */
	if (r->backing && r->backing_len > n)
		n = r->backing_len;
	return n < r->end - r->start ? n : r->end - r->start;
}

const struct hw_region *hw_region_of(const struct hw_target *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nregions;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < t->regions[mid].start)
			hi = mid;
		else if (addr >= t->regions[mid].end)
			lo = mid + 1;
		else
			return &t->regions[mid];
	}
	return NULL;
}

uint64_t hw_next_readable(const struct hw_target *t, uint64_t at,
			  uint64_t hi)
{
	const struct hw_region *r = hw_region_of(t, at);
	uint64_t next;
	if (r && r->lazy) {
		/* A live process's region: a hole is one page.  */
		next = (at | 4095) + 1;
	} else if (r) {
		/* A core's region is readable from its start on (dumped
		   bytes, then the file's), but for what a cut core lost:
		   nothing from `at` means nothing up to the file's part, or
		   the region's end.  */
		uint64_t off = at - r->start;
		next = r->backing && off >= r->avail && off < r->dumped &&
		       r->dumped < r->backing_len ? r->start + r->dumped
						  : r->end;
	} else {
		size_t lo = 0, n = t->nregions;
		while (lo < n) {
			size_t mid = lo + (n - lo) / 2;
			if (t->regions[mid].start <= at)
				lo = mid + 1;
			else
				n = mid;
		}
		next = lo < t->nregions ? t->regions[lo].start : hi;
	}
	return next > at && next < hi ? next : hi;
}

uint64_t hw_readable_run(struct hw_target *t, uint64_t addr,
			 const uint8_t **p)
{
	const struct hw_region *r = hw_region_of(t, addr);
	return r ? region_run(t, r, addr, UINT64_MAX, p) : 0;
}

/* The region holding addr, *hint if it does (else found, and kept in
   *hint), or NULL.  */
static const struct hw_region *region_near(const struct hw_target *t,
					   const struct hw_region **hint,
					   uint64_t addr)
{
	const struct hw_region *r = *hint;
	if (!r || addr < r->start || addr >= r->end)
		*hint = r = hw_region_of(t, addr);
	return r;
}

uint64_t hw_readable_run_near(struct hw_target *t,
			      const struct hw_region **hint, uint64_t addr,
			      const uint8_t **p)
{
	const struct hw_region *r = region_near(t, hint, addr);
	return r ? region_run(t, r, addr, UINT64_MAX, p) : 0;
}

const uint8_t *hw_peek(struct hw_target *t, uint64_t addr, size_t len)
{
	const uint8_t *p = NULL;
	const struct hw_region *r = hw_region_of(t, addr);
	return r && region_run(t, r, addr, len, &p) >= len ? p : NULL;
}

const uint8_t *hw_peek_near(struct hw_target *t, const struct hw_region **hint,
			    uint64_t addr, size_t len)
{
	const struct hw_region *r = region_near(t, hint, addr);
	const uint8_t *p = NULL;
	return r && region_run(t, r, addr, len, &p) >= len ? p : NULL;
}

bool hw_read(struct hw_target *t, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	while (len > 0) {
		const uint8_t *p = NULL;
		const struct hw_region *r = hw_region_of(t, addr);
		uint64_t run = r ? region_run(t, r, addr, len, &p) : 0;
		if (run == 0)
			return false;
		size_t n = run < len ? (size_t)run : len;
		memcpy(out, p, n);
		out += n;
		len -= n;
		if (addr + n < addr)
			return len == 0;
		addr += n;
	}
	return true;
}

bool hw_read_u64(struct hw_target *t, uint64_t addr, uint64_t *v)
{
	const uint8_t *p = hw_peek(t, addr, 8);
	if (p) {
		memcpy(v, p, 8);
		return true;
	}
	return hw_read(t, addr, v, 8);
}

bool hw_read_u32(struct hw_target *t, uint64_t addr, uint32_t *v)
{
	return hw_read(t, addr, v, 4);
}

void hw_thread_set_regs(struct hw_thread *th, const struct hw_arch *a,
			const uint64_t *regs, size_t n)
{
	if (n > a->nregs)
		n = a->nregs;
	if (n > HW_MAX_REGS)
		n = HW_MAX_REGS;
	th->nregs = (uint32_t)n;
	memmove(th->regs, regs, n * 8);
	if ((unsigned)a->sp_reg < th->nregs)
		th->sp = th->regs[a->sp_reg];
	if ((unsigned)a->pc_reg < th->nregs)
		th->pc = th->regs[a->pc_reg];
	if (a->tp_reg >= 0 && (unsigned)a->tp_reg < th->nregs) {
		th->tp = th->regs[a->tp_reg];
		th->has_tp = true;
	}
}

bool hw_auxv_get(const struct hw_target *t, uint64_t type, uint64_t *val)
{
	for (size_t off = 0; off + 16 <= t->auxv_len; off += 16) {
		uint64_t k, v;
		memcpy(&k, t->auxv + off, 8);
		memcpy(&v, t->auxv + off + 8, 8);
		if (k == 0)
			break;
		if (k == type) {
			*val = v;
			return true;
		}
	}
	return false;
}

const struct hw_arch *hw_elf_arch_at(struct hw_target *t, uint64_t addr)
{
	uint8_t eh[20];
	uint16_t machine;
	if (!hw_read(t, addr, eh, sizeof eh) || memcmp(eh, "\177ELF", 4) != 0)
		return NULL;
	memcpy(&machine, eh + 18, 2);   /* e_machine; little-endian only */
	return hw_arch_by_machine(machine);
}

static int cmp_tid(const void *a, const void *b)
{
	const struct hw_thread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

void hw_target_order_threads(struct hw_target *t)
{
	if (t->nthreads > 2)
		qsort(t->threads + 1, t->nthreads - 1, sizeof *t->threads,
		      cmp_tid);
}

void hw_target_close(struct hw_target *t)
{
	if (!t)
		return;
	/* Before the regions it reads go.  */
	hw_target_prefault_end(t);
	/* The cache's blocks live in the regions the backend frees.  */
	hw_cache_free(t->cache, t->regions, t->nregions);
	t->cache = NULL;
	if (t->ops)
		t->ops->close(t);
}

const char *hw_target_noun(const struct hw_target *t)
{
	return t->is_process || t->live ? "process" : "core";
}

bool hw_kernel_mapping(const char *name)
{
	return name && (strcmp(name, "[vvar]") == 0 ||
			strcmp(name, "[vvar_vclock]") == 0 ||
			strcmp(name, "[vsyscall]") == 0);
}

const char *hw_target_no_tp(const struct hw_target *t)
{
	if (t->is_process && t->debugger)   /* a core says what it lacks */
		return "the debugger gave no thread pointer register "
		       "(fs_base, tpidr)";
	if (t->is_process)
		return "the process's thread pointers could not be read";
	return strcmp(t->arch->name, "aarch64") == 0
	       ? "the core has no thread pointers (no NT_ARM_TLS: a "
		 "qemu-user core?)"
	       : "the core has no thread pointers";
}

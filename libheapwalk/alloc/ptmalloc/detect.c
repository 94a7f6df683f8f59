/* detect.c - find libc, its version, main_arena, mp_ and the arena ring.
 *
 * With libc's debug info, main_arena and mp_ are symbols and the layouts
 * come from DWARF.  Without it, main_arena is the one place in libc's data
 * where (nearly) every bin of a malloc_state is an empty, self-linked list
 * (fd == bk == the bin's own address - 16), and mp_ is recognised by its
 * tcache defaults (64, 1032, 7) next to sbrk_base.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../sym/sym.h"
#include "ptmalloc.h"

static bool is_libc_path(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strncmp(base, "libc.so", 7) == 0 ||
	       strncmp(base, "libc-2.", 7) == 0;
}

/* Is t->files[i] the first mapping of a libc copy?  A process may hold
   several: qemu-user maps its guest's libc beside its own.  */
bool pm_libc_copy_at(const struct hw_target *t, size_t i)
{
	return is_libc_path(t->files[i].path) && t->files[i].offset == 0;
}

size_t pm_count_libcs(struct hw_session *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->target->nfiles; i++)
		n += pm_libc_copy_at(s->target, i);
	return n ? n : 1;
}

/* Index in t->files of the nth libc copy's first mapping (or, with no
   offset-0 mapping named, of libc's first mapping), or -1.  */
static int find_libc_file(const struct hw_target *t, size_t nth)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (pm_libc_copy_at(t, i) && nth-- == 0)
			return (int)i;
	for (size_t i = 0; i < t->nfiles && nth == 0; i++)
		if (is_libc_path(t->files[i].path))
			return (int)i;
	return -1;
}

/* libdwfl's module for this libc copy: the one at its address, and only
   with a single libc the first one named like libc.  */
static bool find_libc_module(struct pm_state *p, int libc,
			     struct hw_module *mod)
{
	struct hw_syms *sy = p->s->syms;
	if (!sy)
		return false;
	if (libc >= 0 && hw_syms_module_at(sy, p->t->files[libc].start, mod) &&
	    ((mod->name && is_libc_path(mod->name)) ||
	     (mod->file && is_libc_path(mod->file))))
		return true;
	if (pm_count_libcs(p->s) > 1)
		return false;
	return hw_syms_find_module(sy, "libc.so", mod) ||
	       hw_syms_find_module(sy, "libc-2.", mod);
}

static bool same_file(const struct hw_target *t, int32_t f, int libc)
{
	return f >= 0 && strcmp(t->files[f].path, t->files[libc].path) == 0;
}

/* "GNU C Library (...) stable release version 2.36." (also "release
   version" for development snapshots) in libc's read-only data.  */
static void find_version(struct pm_state *p, int libc)
{
	static const char needle[] = "release version 2.";
	struct hw_target *t = p->t;
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (!same_file(t, r->file, libc))
			continue;
		/* A region may be read in several runs: what the core holds
		   (on aarch64, only the ELF header page of libc's one
		   read-only segment) and then the file on disk.  */
		const uint8_t *data = NULL, *hit = NULL;
		uint64_t len = 0;
		for (uint64_t a = r->start; a < r->end && !hit; a += len) {
			len = hw_readable_run(t, a, &data);
			if (!len)
				break;
			hit = memmem(data, len, needle, sizeof needle - 1);
		}
		if (!hit)
			continue;
		const char *v = (const char *)hit + sizeof needle - 3;
		size_t left = len - (size_t)(hit - data) - (sizeof needle - 3);
		size_t n = 0;
		while (n < left && n < sizeof p->version - 1 &&
		       ((v[n] >= '0' && v[n] <= '9') || v[n] == '.'))
			n++;
		while (n > 0 && v[n - 1] == '.')
			n--;
		memcpy(p->version, v, n);
		p->version[n] = '\0';
		return;
	}
}

/* Is region i libc's writable data, or the anonymous .bss tail that
   directly follows it?  That is where main_arena and mp_ live.  */
static bool libc_data_region(const struct hw_target *t, size_t i, int libc)
{
	const struct hw_region *r = &t->regions[i];
	bool ours = same_file(t, r->file, libc) ||
		    (r->file < 0 && i > 0 &&
		     same_file(t, t->regions[i - 1].file, libc));
	return ours && (r->prot & HW_PROT_W);
}

static bool readable_rw(struct hw_target *t, uint64_t addr)
{
	const struct hw_region *r = hw_region_of(t, addr);
	return r && (r->prot & HW_PROT_W);
}

static bool is_thread_arena(struct pm_state *p, uint64_t m)
{
	uint64_t heap = m & ~(p->l.heap_max - 1), ar;
	return hw_read_u64(p->t, heap, &ar) && ar == m &&
	       m - heap == p->l.hi_sizeof;
}

/* Does m look like a malloc_state?  Every bin empty or pointing at
   writable memory, sane header words, and a ring of arenas back to m.
   top is not asked for: a damaged top must be reported, not make the
   arena unfindable.  */
static bool plausible_arena(struct pm_state *p, uint64_t m)
{
	uint64_t v[2];
	for (int i = 1; i < PM_NBINS - 1; i++) {
		uint64_t b = pm_bin_at(p, m, i);
		if (!hw_read(p->t, b + 16, v, sizeof v))
			return false;
		if (v[0] == b && v[1] == b)
			continue;
		if (!readable_rw(p->t, v[0]) || !readable_rw(p->t, v[1]))
			return false;
	}
	/* A window shifted by one bin also looks like empty bins; the
	   header words and the arena ring tell them apart.  */
	uint32_t mutex, flags;
	uint64_t sys, max_sys;
	if (!hw_read_u32(p->t, m + (uint64_t)p->l.ms_mutex, &mutex) ||
	    !hw_read_u32(p->t, m + (uint64_t)p->l.ms_flags, &flags) ||
	    !hw_read_u64(p->t, m + (uint64_t)p->l.ms_system_mem, &sys) ||
	    !hw_read_u64(p->t, m + (uint64_t)p->l.ms_max_system_mem, &max_sys))
		return false;
	if (mutex > 2 || flags > 7 || sys > max_sys)
		return false;
	uint64_t a = m;
	for (int n = 0; n < PM_MAX_ARENAS; n++) {
		if (!hw_read_u64(p->t, a + (uint64_t)p->l.ms_next, &a) ||
		    !readable_rw(p->t, a))
			return false;
		if (a == m)
			return true;
	}
	return false;
}

static uint64_t scan_main_arena_as(struct pm_state *p, int libc)
{
	struct hw_target *t = p->t;
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (!libc_data_region(t, i, libc))
			continue;
		const uint8_t *data;
		uint64_t len = hw_readable_run(t, r->start, &data);
		for (uint64_t off = 0; off + 16 <= len; off += 8) {
			uint64_t a = r->start + off, w[2];
			memcpy(w, data + off, 16);
			if (w[0] != a - 16 || w[1] != a - 16)
				continue;
			/* a is bin i's fd; the first self-linked bin is
			   usually the unsorted one, but any may be.  */
			for (int bin = 1; bin < PM_NBINS - 1; bin++) {
				uint64_t back = pm_bin_at(p, 0, bin) + 16;
				if (back > a)
					break;
				uint64_t m = a - back;
				if (plausible_arena(p, m) &&
				    !is_thread_arena(p, m))
					return m;
			}
		}
	}
	return 0;
}

/* Try the version's malloc_state layout first, then the other eras: the
   one whose reading holds together (bins, header words, arena ring) is
   the one this libc uses.  */
static uint64_t scan_main_arena(struct pm_state *p, int libc)
{
	enum pm_ms_era first = p->l.ms_era;
	enum pm_ms_era order[3] = { first };
	size_t n = 1;
	for (int e = PM_MS_227; e >= PM_MS_217; e--)
		if ((enum pm_ms_era)e != first)
			order[n++] = (enum pm_ms_era)e;
	for (size_t i = 0; i < n; i++) {
		pm_layout_ms(&p->l, order[i]);
		uint64_t m = scan_main_arena_as(p, libc);
		if (m) {
			pm_era_ms(p);
			return m;
		}
	}
	pm_layout_ms(&p->l, first);
	return 0;
}

static uint64_t scan_mp(struct pm_state *p, int libc)
{
	struct hw_target *t = p->t;
	if (p->l.mp_tcache_bins < 0)
		return 0;
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (!libc_data_region(t, i, libc))
			continue;
		const uint8_t *data;
		uint64_t len = hw_readable_run(t, r->start, &data);
		for (uint64_t off = 8; off + 24 <= len; off += 8) {
			uint64_t w[3];
			memcpy(w, data + off, 24);
			if (w[0] != 64 || w[1] != 1032 || w[2] != 7)
				continue;
			/* sbrk_base itself is not asked to be sane: the heap
			   walk reports it when it is not.  */
			uint64_t mp = pm_era_mp(p, r->start + off - 8);
			if (mp)
				return mp;
		}
	}
	return 0;
}

/* Replace built-in offsets by DWARF ones where the debug info has them.  */
static void layout_from_dwarf(struct pm_state *p, struct hw_module *m)
{
	struct pm_layout *l = &p->l;
	static const char *const ms[] = {
		"mutex", "flags", "have_fastchunks", "fastbinsY", "top",
		"last_remainder", "bins", "binmap", "next", "next_free",
		"attached_threads", "system_mem", "max_system_mem",
	};
	int64_t off[13];
	uint64_t size;
	if (!hw_syms_struct_layout(p->s->syms, m, p->main_arena,
				   "malloc_state", ms, 13, off, &size))
		return;
	l->ms_mutex = off[0]; l->ms_flags = off[1];
	l->ms_have_fastchunks = off[2]; l->ms_fastbins = off[3];
	l->ms_top = off[4]; l->ms_last_remainder = off[5];
	l->ms_bins = off[6]; l->ms_binmap = off[7]; l->ms_next = off[8];
	l->ms_next_free = off[9]; l->ms_attached_threads = off[10];
	l->ms_system_mem = off[11]; l->ms_max_system_mem = off[12];
	l->ms_sizeof = size;
	l->source = "DWARF";

	static const char *const mp[] = {
		"trim_threshold", "mmap_threshold", "n_mmaps", "mmapped_mem",
		"sbrk_base", "tcache_bins", "tcache_max_bytes", "tcache_count",
	};
	if (hw_syms_struct_layout(p->s->syms, m, p->main_arena, "malloc_par",
				  mp, 8, off, &size)) {
		l->mp_trim_threshold = off[0]; l->mp_mmap_threshold = off[1];
		l->mp_n_mmaps = off[2]; l->mp_mmapped_mem = off[3];
		l->mp_sbrk_base = off[4]; l->mp_tcache_bins = off[5];
		l->mp_tcache_max_bytes = off[6]; l->mp_tcache_count = off[7];
		l->mp_sizeof = size;
		l->has_tcache = off[5] >= 0;
	}
	static const char *const hi[] = { "ar_ptr", "prev", "size" };
	if (hw_syms_struct_layout(p->s->syms, m, p->main_arena, "heap_info",
				  hi, 3, off, &size)) {
		l->hi_ar_ptr = off[0]; l->hi_prev = off[1]; l->hi_size = off[2];
		l->hi_sizeof = size;
	}
	static const char *const tc[] = { "counts", "entries" };
	if (hw_syms_struct_layout(p->s->syms, m, p->main_arena,
				  "tcache_perthread_struct", tc, 2, off,
				  &size) && off[0] >= 0 && off[1] > off[0]) {
		l->tc_counts = off[0]; l->tc_entries = off[1];
		l->tc_count_width = (unsigned)((off[1] - off[0]) /
					       PM_TCACHE_MAX_BINS);
		l->tc_sizeof = size;
	}
}

static enum hw_status read_arenas(struct pm_state *p)
{
	size_t cap = 8;
	p->arenas = calloc(cap, sizeof *p->arenas);
	if (!p->arenas)
		return hw_error(p->s, HW_NO_ALLOCATOR, "out of memory");
	uint64_t a = p->main_arena;
	do {
		if (p->narenas == PM_MAX_ARENAS) {
			hw_finding(p->s, a, "arena ring longer than %d arenas",
				   PM_MAX_ARENAS);
			break;
		}
		for (size_t i = 0; i < p->narenas; i++)
			if (p->arenas[i].addr == a) {
				hw_finding(p->s, a, "arena ring loops back "
					   "to an arena other than main_arena");
				return HW_OK;
			}
		if (p->narenas == cap) {
			struct pm_arena *n = realloc(p->arenas,
						     2 * cap * sizeof *n);
			if (!n)
				return hw_error(p->s, HW_NO_ALLOCATOR,
						"out of memory");
			p->arenas = n;
			memset(n + cap, 0, cap * sizeof *n);
			cap *= 2;
		}
		struct pm_arena *ar = &p->arenas[p->narenas];
		uint32_t w;
		uint64_t next;
		if (!hw_read_u64(p->t, a + (uint64_t)p->l.ms_top, &ar->top) ||
		    !hw_read_u64(p->t, a + (uint64_t)p->l.ms_next, &next) ||
		    !hw_read_u64(p->t, a + (uint64_t)p->l.ms_system_mem,
				 &ar->system_mem)) {
			hw_finding(p->s, a, "arena is not readable in the "
				   "core; the arena ring ends here");
			break;
		}
		hw_read_u64(p->t, a + (uint64_t)p->l.ms_max_system_mem,
			    &ar->max_system_mem);
		if (p->l.ms_attached_threads >= 0)
			hw_read_u64(p->t, a + (uint64_t)p->l.ms_attached_threads,
				    &ar->attached_threads);
		if (hw_read_u32(p->t, a + (uint64_t)p->l.ms_mutex, &w))
			ar->mutex = w;
		if (hw_read_u32(p->t, a + (uint64_t)p->l.ms_flags, &w))
			ar->flags = w;
		ar->addr = a;
		if (ar->mutex != 0)
			hw_note(p->s, a, "arena is locked (mutex %u): a "
				   "thread was inside malloc, its lists may be "
				   "half updated", ar->mutex);
		p->narenas++;
		a = next;
	} while (a != p->main_arena);
	return HW_OK;
}

enum hw_status pm_find_roots(struct pm_state *p)
{
	struct hw_session *s = p->s;
	struct hw_target *t = p->t;
	int libc = find_libc_file(t, s->opening);
	struct hw_module mod;
	bool have_mod = find_libc_module(p, libc, &mod);
	if (libc < 0 && !have_mod && t->nfiles == 0)
		return hw_error(s, HW_NO_ALLOCATOR,
				"'%s': the core names no mapped files (no "
				"NT_FILE: a qemu-user core?) and the link_map "
				"could not be read without the executable; "
				"give --exe FILE or --sysroot DIR",
				t->path ? t->path : "target");
	if (libc < 0 && !have_mod)
		return hw_error(s, HW_NO_ALLOCATOR,
				"'%s': no glibc (libc.so) mapped in the target",
				t->path ? t->path : "target");
	s->alloc_present = true;
	if (libc >= 0)
		p->libc_base = t->files[libc].start;
	else
		p->libc_base = mod.low;
	pm_instance_arch(p, libc >= 0 ? t->files[libc].path : mod.name);
	if (libc >= 0)
		find_version(p, libc);
	pm_era_init(&p->era);
	int major = 0, minor = 0;
	p->how_version = "libc's version string";
	if (sscanf(p->version, "%d.%d", &major, &minor) != 2 ||
	    !pm_layout_builtin(&p->l, major, minor)) {
		/* Unknown: start from the newest layout; DWARF or the data
		   have to confirm it.  */
		pm_layout_builtin(&p->l, 2, 41);
		p->l.ver_major = p->l.ver_minor = 0;
		if (!p->version[0]) {
			snprintf(p->version, sizeof p->version, "unknown");
			p->how_version = "no version string: libc's read-only "
					 "data is neither in the core nor in a "
					 "matching file on disk";
		} else {
			p->how_version = "libc's version string, outside "
					 "2.17-2.41";
		}
	}

	uint64_t size;
	if (have_mod && hw_syms_lookup(s->syms, &mod, "main_arena",
				       &p->main_arena, &size, NULL)) {
		p->how_arena = "symbol main_arena";
		layout_from_dwarf(p, &mod);
	} else if (libc >= 0 && (p->main_arena = scan_main_arena(p, libc))) {
		p->how_arena = "scan of libc data for self-linked bins";
	} else {
		return hw_error(s, HW_NO_ALLOCATOR,
				"'%s': glibc %s found, but not its main_arena "
				"(no libc debug info, and no arena pattern in "
				"libc's data)", t->path ? t->path : "target",
				p->version);
	}
	if (have_mod && hw_syms_lookup(s->syms, &mod, "mp_", &p->mp, &size,
				       NULL))
		p->how_mp = "symbol mp_";
	else if (libc >= 0 && (p->mp = scan_mp(p, libc)))
		p->how_mp = "scan of libc data for tcache defaults";
	else
		p->how_mp = "not found";

	if (p->mp) {
		uint32_t n = 0;
		hw_read_u64(t, p->mp + (uint64_t)p->l.mp_sbrk_base,
			    &p->sbrk_base);
		if (hw_read_u32(t, p->mp + (uint64_t)p->l.mp_n_mmaps, &n))
			p->n_mmaps = n;
		hw_read_u64(t, p->mp + (uint64_t)p->l.mp_mmapped_mem,
			    &p->mmapped_mem);
		if (p->l.has_tcache) {
			hw_read_u64(t, p->mp + (uint64_t)p->l.mp_tcache_bins,
				    &p->tcache_bins);
			hw_read_u64(t, p->mp + (uint64_t)p->l.mp_tcache_count,
				    &p->tcache_count);
			if (p->tcache_bins > PM_TCACHE_MAX_BINS)
				p->tcache_bins = PM_TCACHE_MAX_BINS;
		}
	}
	if (!hw_auxv_get(t, 6 /* AT_PAGESZ */, &p->pagesize) ||
	    p->pagesize < 4096 || (p->pagesize & (p->pagesize - 1)))
		p->pagesize = 4096;
	enum hw_status st = read_arenas(p);
	if (st == HW_OK)
		pm_era_heap_info(p, strcmp(p->l.source, "DWARF") != 0);
	return st;
}

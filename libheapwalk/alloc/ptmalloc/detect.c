/* detect.c - find libc, its version, main_arena, mp_ and the arena ring.
 *
 * "libc" here is whatever holds glibc's malloc: a mapped libc.so, or, in a
 * statically linked program (common on devices), the executable itself.
 * With libc's debug info, main_arena and mp_ are symbols and the layouts
 * come from DWARF.  Without it, main_arena is the one place in libc's data
 * where (nearly) every bin of a malloc_state is an empty, self-linked list
 * (fd == bk == the bin's own address - 16), and mp_ is recognised by its
 * tcache defaults (64, 1032, 7) next to sbrk_base.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../sym/sym.h"
#include "../libc.h"
#include "ptmalloc.h"

static bool is_libc_path(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* (musl's libc is a libc.so too.)  */
	return (strncmp(base, "libc.so", 7) == 0 ||
		strncmp(base, "libc-2.", 7) == 0) && !hw_libc_is_musl_path(path);
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

/* Does the NUL-terminated string that `hit` lies in (data[0] being a
   string start or not) begin with "GNU C Library"?  In an executable,
   "release version 2." alone could be anybody's text; glibc's banner
   (csu/version.c) is "GNU C Library (<distro>) stable release version
   2.NN.", with a distribution string of a few dozen bytes.  */
static bool in_glibc_banner(const uint8_t *data, const uint8_t *hit)
{
	static const char banner[] = "GNU C Library";
	const uint8_t *start = hit;
	while (start > data && start[-1] != '\0' && hit - start < 256)
		start--;
	return (size_t)(hit - start) >= sizeof banner - 1 &&
	       memcmp(start, banner, sizeof banner - 1) == 0;
}

#define VERSION_NEEDLE "release version 2."

/* The first VERSION_NEEDLE in data[0, len); with `banner_only`, the first
   one inside glibc's banner.  */
static const uint8_t *version_needle(const uint8_t *data, uint64_t len,
				     bool banner_only)
{
	const uint8_t *from = data, *end = data + len, *hit;
	while ((hit = memmem(from, (size_t)(end - from), VERSION_NEEDLE,
			     sizeof VERSION_NEEDLE - 1)) != NULL) {
		if (!banner_only || in_glibc_banner(data, hit))
			return hit;
		from = hit + 1;
	}
	return NULL;
}

/* "GNU C Library (...) stable release version 2.36." (also "release
   version" for development snapshots) in libc's read-only data.  With
   `banner_only`, only in that banner (for an executable, where glibc is
   one part among others).  */
static void find_version(struct pm_state *p, int libc, bool banner_only)
{
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
			hit = version_needle(data, len, banner_only);
		}
		if (!hit)
			continue;
		const size_t skip = sizeof VERSION_NEEDLE - 3;   /* to "2." */
		const char *v = (const char *)hit + skip;
		size_t left = len - (size_t)(hit - data) - skip;
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

bool pm_libc_data_words(struct pm_state *p, pm_word_fn *fn, void *cookie)
{
	struct hw_target *t = p->t;
	for (size_t i = 0; p->libc_file >= 0 && i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		const uint8_t *data;
		if (!libc_data_region(t, i, p->libc_file))
			continue;
		uint64_t len = hw_readable_run(t, r->start, &data), w;
		for (uint64_t off = 0; off + 8 <= len; off += 8) {
			memcpy(&w, data + off, 8);
			if (!fn(cookie, r->start + off, w))
				return false;
		}
	}
	return true;
}

struct word_hunt {
	uint64_t value, at;
};

static bool hunt_word(void *cookie, uint64_t at, uint64_t value)
{
	struct word_hunt *h = cookie;
	if (value != h->value)
		return true;
	h->at = at;
	return false;
}

bool pm_libc_data_holds(struct pm_state *p, uint64_t value, uint64_t *at)
{
	uint64_t addr, size, w;
	if (p->have_libc_mod &&
	    hw_syms_lookup(p->s->syms, &p->libc_mod, "tcache_key", &addr,
			   &size, NULL) &&
	    hw_read_u64(p->t, addr, &w) && w == value) {
		*at = addr;
		return true;
	}
	struct word_hunt h = { value, 0 };
	if (pm_libc_data_words(p, hunt_word, &h))
		return false;
	*at = h.at;
	return true;
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

/* Try the current malloc_state layout (the version's guess) first, then
   the other eras, newest first: the first under which find(p, arg) finds
   a main_arena that holds together (bins, header words, arena ring) is
   the one this libc uses, and its era is observed.  0, the layout as it
   was, when none does.  */
static uint64_t first_era(struct pm_state *p,
			  uint64_t (*find)(struct pm_state *, uint64_t),
			  uint64_t arg)
{
	enum pm_ms_era first = p->l.ms_era;
	enum pm_ms_era order[4] = { first };
	size_t n = 1;
	for (int e = PM_MS_243; e >= PM_MS_217; e--)
		if ((enum pm_ms_era)e != first)
			order[n++] = (enum pm_ms_era)e;
	for (size_t i = 0; i < n; i++) {
		pm_layout_ms(&p->l, order[i]);
		uint64_t m = find(p, arg);
		if (m) {
			pm_era_ms(p);
			return m;
		}
	}
	pm_layout_ms(&p->l, first);
	return 0;
}

static uint64_t scan_in(struct pm_state *p, uint64_t libc)
{
	return scan_main_arena_as(p, (int)libc);
}

/* main_arena's address when, under the current layout, it holds
   together there, else 0.  */
static uint64_t arena_at(struct pm_state *p, uint64_t m)
{
	return plausible_arena(p, m) ? m : 0;
}

static uint64_t scan_main_arena(struct pm_state *p, int libc)
{
	return first_era(p, scan_in, (uint64_t)libc);
}

/* main_arena is at m (a symbol), but neither DWARF nor a version says
   its layout: the era under which it holds together, as the scan
   finds it.  */
static void era_of_arena(struct pm_state *p, uint64_t m)
{
	(void)first_era(p, arena_at, m);
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
			/* tcache_bins (2.42+: tcache_small_bins), max_bytes
			   (0x408; 0x411 from late 2.42 on) and count (7;
			   16 from 2.43 on), as glibc sets them unless a
			   tunable changed them.  */
			if (w[0] != 64 || (w[1] != 1032 && w[1] != 1041) ||
			    (w[2] != 7 && w[2] != 16))
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
void pm_layout_from_dwarf(struct pm_state *p, const struct hw_module *m)
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

	/* 2.42 renamed tcache_bins tcache_small_bins.  */
	static const char *const mp[] = {
		"trim_threshold", "mmap_threshold", "n_mmaps", "mmapped_mem",
		"sbrk_base", "tcache_bins", "tcache_max_bytes", "tcache_count",
		"tcache_small_bins",
		/* `mp` only */
		"top_pad", "arena_test", "arena_max", "thp_mode",
		"thp_pagesize", "hp_pagesize", "hp_flags", "n_mmaps_max",
		"max_n_mmaps", "no_dyn_threshold", "max_mmapped_mem",
		"max_total_mem", "tcache_unsorted_limit",
	};
	int64_t mpo[sizeof mp / sizeof *mp];
	if (hw_syms_struct_layout(p->s->syms, m, p->main_arena, "malloc_par",
				  mp, sizeof mp / sizeof *mp, mpo, &size)) {
		l->mp_trim_threshold = mpo[0]; l->mp_mmap_threshold = mpo[1];
		l->mp_n_mmaps = mpo[2]; l->mp_mmapped_mem = mpo[3];
		l->mp_sbrk_base = mpo[4];
		l->mp_tcache_bins = mpo[5] >= 0 ? mpo[5] : mpo[8];
		l->mp_tcache_max_bytes = mpo[6]; l->mp_tcache_count = mpo[7];
		l->mp_sizeof = size;
		l->has_tcache = l->mp_tcache_bins >= 0;
		l->mp_top_pad = mpo[9]; l->mp_arena_test = mpo[10];
		l->mp_arena_max = mpo[11]; l->mp_thp_mode = mpo[12];
		l->mp_thp_pagesize = mpo[13]; l->mp_hp_pagesize = mpo[14];
		l->mp_hp_flags = mpo[15]; l->mp_n_mmaps_max = mpo[16];
		l->mp_max_n_mmaps = mpo[17]; l->mp_no_dyn_threshold = mpo[18];
		l->mp_max_mmapped_mem = mpo[19]; l->mp_max_total_mem = mpo[20];
		l->mp_tcache_unsorted_limit = mpo[21];
	}
	static const char *const hi[] = { "ar_ptr", "prev", "size" };
	if (hw_syms_struct_layout(p->s->syms, m, p->main_arena, "heap_info",
				  hi, 3, off, &size)) {
		l->hi_ar_ptr = off[0]; l->hi_prev = off[1]; l->hi_size = off[2];
		l->hi_sizeof = size;
	}
	/* 2.42 counts free slots (num_slots) in 76 bins.  */
	static const char *const tc[] = { "counts", "entries", "num_slots" };
	if (hw_syms_struct_layout(p->s->syms, m, p->main_arena,
				  "tcache_perthread_struct", tc, 3, off,
				  &size)) {
		bool slots = off[0] < 0 && off[2] >= 0;
		int64_t counts = slots ? off[2] : off[0];
		/* entries[] ends the struct: its length is the bins'.  */
		uint64_t nbins = off[1] > counts && (uint64_t)off[1] < size
				 ? (size - (uint64_t)off[1]) / 8 : 0;
		if (counts >= 0 && nbins && nbins <= PM_TCACHE_MAX_BINS &&
		    (off[1] - counts) % (int64_t)nbins == 0) {
			l->tc_counts = counts;
			l->tc_entries = off[1];
			l->tc_nbins = (unsigned)nbins;
			l->tc_slots = slots;
			l->tc_count_width = (unsigned)((off[1] - counts) /
						       (int64_t)nbins);
			l->tc_sizeof = size;
		}
	}
}

/* main_arena before the first malloc: only .next (itself) and
   attached_threads are set, statically; malloc_init_state links the
   bins to themselves and sets top on the first call.  */
static bool arena_untouched(struct pm_state *p, const struct pm_arena *ar)
{
	uint64_t link[2];
	return ar->top == 0 && ar->system_mem == 0 &&
	       hw_read(p->t, pm_bin_at(p, ar->addr, 1) + 16, link,
		       sizeof link) &&
	       link[0] == 0 && link[1] == 0;
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
			/* Its heaps cannot be found: every total misses
			   them (a core cut short before libc's data).  */
			hw_partial(p->s, a, "%s is not readable in the %s%s: "
				   "its heaps are not walked, and the arena "
				   "ring ends here", a == p->main_arena ?
				   "main_arena" : "arena", hw_target_noun(p->t),
				   p->t->truncated ? " (cut short)" : "");
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
		ar->uninit = a == p->main_arena && arena_untouched(p, ar);
		if (ar->uninit)
			hw_note(p->s, a, "main_arena is as the program was "
				"loaded (no top chunk, no bin initialised): "
				"malloc has not been called yet");
		if (ar->mutex != 0)
			hw_note(p->s, a, "arena is locked (mutex %u): a "
				   "thread was inside malloc, its lists may be "
				   "half updated", ar->mutex);
		p->narenas++;
		a = next;
	} while (a != p->main_arena);
	return HW_OK;
}

/* Where glibc's malloc is: a mapped libc.so, or the executable it was
   linked into statically.  */
struct glibc_home {
	int file;              /* its first mapping in t->files, or -1 */
	bool have_mod;         /* mod is its libdwfl module: symbols */
	struct hw_module mod;
	bool in_exe;           /* statically linked into the executable */
	const char *evidence;  /* why the executable holds glibc; NULL when
				  only a main_arena in its data can tell */
};

/* The executable's first mapping in t->files, or -1.  */
static int find_exe_file(const struct hw_target *t)
{
	for (size_t i = 0; t->exe && i < t->nfiles; i++)
		if (strcmp(t->files[i].path, t->exe) == 0)
			return (int)i;
	return -1;
}

/* The module libdwfl reported at addr.  By address, not by name: the
   file the user gave with --exe (a stripped copy, say) need not be named
   like the one that ran.  */
static bool module_at(const struct hw_syms *syms, uint64_t addr,
		      struct hw_module *m)
{
	size_t n = hw_syms_nmodules(syms);
	for (size_t i = 0; i < n; i++) {
		if (!hw_syms_module(syms, i, m))
			continue;
		if (m->low > addr)
			break;   /* modules are in address order */
		if (addr < m->high)
			return true;
	}
	return false;
}

/* Does the executable's symbol table (a static link keeps it unless the
   file was stripped) have a symbol only glibc's malloc defines?  */
static const char *glibc_symbol_evidence(const struct hw_syms *syms,
					 const struct hw_module *m)
{
	static const struct { const char *name, *says; } sym[] = {
		{ "main_arena", "symbol main_arena in the executable" },
		{ "__libc_malloc", "symbol __libc_malloc in the executable" },
		{ "malloc_trim", "symbol malloc_trim in the executable" },
	};
	uint64_t addr, size;
	/* A static musl has a __libc_malloc too (alloc/libc.c).  */
	if (hw_libc_has_musl_symbols(syms, m))
		return NULL;
	for (size_t i = 0; i < sizeof sym / sizeof sym[0]; i++)
		if (hw_syms_lookup(syms, m, sym[i].name, &addr, &size, NULL))
			return sym[i].says;
	return NULL;
}

/* Is the file libdwfl took for the executable's module the one the user
   named with --exe (or was none named)?  libdwfl 0.188 opens the path
   NT_FILE recorded and keeps it when its build-id agrees; --exe is used
   only when that gave no file.  For a dynamic program --exe matters for
   the link_map alone, but a static one's malloc symbols would come from
   the file that ran even when the user named a stripped copy.  What the
   user names is what is read.  */
static bool module_is_named_exe(const struct hw_session *s,
				const struct hw_module *m)
{
	struct stat a, b;
	if (!s->exe)
		return true;
	return m->file && stat(m->file, &a) == 0 && stat(s->exe, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Neither the target nor the dynamic linker's list named a file, so
   no libc can be found: say why, as the target would.  */
static enum hw_status no_files_error(struct hw_session *s,
				     const struct hw_target *t)
{
	const char *why = t->files_note[0] ? t->files_note : NULL;
	if (t->debugger && why)
		return hw_error(s, HW_NO_ALLOCATOR,
				"%s gave no mapped files (no memory map with "
				"file names) and the dynamic linker's link_map "
				"could not be read: %s", t->debugger, why);
	if (t->debugger)
		return hw_error(s, HW_NO_ALLOCATOR,
				"%s gave no mapped files (no memory map with "
				"file names) and the dynamic linker's link_map "
				"could not be read %s%s", t->debugger,
				t->exe ? "through the executable " :
				"(gdb has no executable: load it with `file "
				"PROG`)", t->exe ? t->exe : "");
	if (t->is_process)
		return hw_error(s, HW_NO_ALLOCATOR,
				"%s: its memory map names no files (a process "
				"caught in the middle of an exec, or one that "
				"is exiting: try again) and the dynamic "
				"linker's link_map could not be read%s%s",
				t->path ? t->path : "the process",
				why ? ": " : "", why ? why : "");
	return hw_error(s, HW_NO_ALLOCATOR,
			"'%s': the core names no mapped files (no NT_FILE: a "
			"qemu-user core?) and the dynamic linker's link_map "
			"could not be read: %s",
			t->path ? t->path : "target",
			why ? why : "give --exe FILE (the program) or "
				    "--sysroot DIR (the device's files)");
}

static enum hw_status find_glibc_home(struct pm_state *p,
				      struct glibc_home *h)
{
	struct hw_session *s = p->s;
	struct hw_target *t = p->t;
	memset(h, 0, sizeof *h);
	h->file = find_libc_file(t, s->opening);
	h->have_mod = find_libc_module(p, h->file, &h->mod);
	if (h->file >= 0 || h->have_mod)
		return HW_OK;
	if (t->nfiles == 0)
		return no_files_error(s, t);
	/* No libc.so: a statically linked program carries glibc's malloc,
	   main_arena and mp_ included, in its own .data and .bss.  */
	h->file = find_exe_file(t);
	if (h->file < 0)
		return hw_error(s, HW_NO_ALLOCATOR,
				"'%s': no glibc (libc.so) mapped in the target",
				t->path ? t->path : "target");
	h->in_exe = true;
	h->have_mod = s->syms &&
		      module_at(s->syms, t->files[h->file].start, &h->mod) &&
		      module_is_named_exe(s, &h->mod);
	if (h->have_mod)
		h->evidence = glibc_symbol_evidence(s->syms, &h->mod);
	/* The banner is linked in with gnu_get_libc_version (csu/version.c);
	   a program that never calls it may have no version at all.  */
	find_version(p, h->file, true);
	if (!h->evidence && p->version[0])
		h->evidence = "glibc's version string in the executable";
	return HW_OK;
}

/* The first guess at the layouts, from the version string.  */
static void layout_from_version(struct pm_state *p, const struct glibc_home *h)
{
	int major = 0, minor = 0;
	p->how_version = h->in_exe ? "the executable's glibc version string "
				     "(static glibc)"
				   : "libc's version string";
	if (sscanf(p->version, "%d.%d", &major, &minor) == 2 &&
	    pm_layout_builtin(&p->l, major, minor))
		return;
	/* Unknown: start from the newest layout; DWARF or the data have to
	   confirm it.  */
	pm_layout_builtin(&p->l, 2, PM_NEWEST_MINOR);
	p->l.ver_major = p->l.ver_minor = 0;
	if (p->version[0])
		p->how_version = h->in_exe ? "the executable's glibc version "
					     "string, outside the known "
					     "2.17-2." PM_NEWEST_STR
					   : "libc's version string, outside "
					     "the known 2.17-2." PM_NEWEST_STR;
	else if (h->in_exe)
		p->how_version = "no version string: the executable has no "
				 "glibc banner (gnu_get_libc_version not "
				 "linked in), or its read-only data is "
				 "neither in the target nor in a matching "
				 "file on disk";
	else
		p->how_version = "no version string: libc's read-only data is "
				 "neither in the target nor in a matching "
				 "file on disk";
	if (!p->version[0])
		snprintf(p->version, sizeof p->version, "unknown");
}

static enum hw_status find_main_arena(struct pm_state *p,
				      const struct glibc_home *h)
{
	struct hw_session *s = p->s;
	const char *core = p->t->path ? p->t->path : "target";
	uint64_t size;
	if (h->have_mod && hw_syms_lookup(s->syms, &h->mod, "main_arena",
					  &p->main_arena, &size, NULL)) {
		p->how_arena = h->in_exe ? "symbol main_arena in the "
					   "executable (static glibc)"
					 : "symbol main_arena";
		/* A known version's built-in layout will do until the
		   instance is walked (ptmalloc.c's pm_settle).  */
		if (p->l.ver_major && !p->dwarf_now)
			p->dwarf_later = true;
		else
			pm_layout_from_dwarf(p, &h->mod);
		if (strcmp(p->l.source, "DWARF") != 0 && !p->l.ver_major)
			era_of_arena(p, p->main_arena);
		return HW_OK;
	}
	if (h->file >= 0 && (p->main_arena = scan_main_arena(p, h->file))) {
		p->how_arena = h->in_exe ? "scan of the executable's data for "
					   "self-linked bins (static glibc)"
					 : "scan of libc data for self-linked "
					   "bins";
		return HW_OK;
	}
	if (h->in_exe && !h->evidence)
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': no glibc: no "
				"libc.so mapped, and the executable shows no "
				"sign of a static glibc (no glibc symbol, "
				"version string or main_arena)", core);
	if (h->in_exe)
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': static glibc %s "
				"found (%s), but not its main_arena (no symbol, "
				"and no arena pattern in the executable's "
				"data)", core, p->version, h->evidence);
	return hw_error(s, HW_NO_ALLOCATOR, "'%s': glibc %s found, but not "
			"its main_arena (no libc debug info, and no arena "
			"pattern in libc's data)", core, p->version);
}

static void find_mp(struct pm_state *p, const struct glibc_home *h)
{
	uint64_t size;
	if (h->have_mod && hw_syms_lookup(p->s->syms, &h->mod, "mp_", &p->mp,
					  &size, NULL)) {
		p->how_mp = h->in_exe ? "symbol mp_ in the executable "
					"(static glibc)"
				      : "symbol mp_";
		/* No DWARF and no version: the data tells the layout.  */
		if (strcmp(p->l.source, "DWARF") != 0 && !p->l.ver_major &&
		    p->l.mp_tcache_bins >= 0)
			(void)pm_era_mp_at(p, p->mp);
	}
	else if (h->file >= 0 && (p->mp = scan_mp(p, h->file)))
		p->how_mp = h->in_exe ? "scan of the executable's data for "
					"tcache defaults (static glibc)"
				      : "scan of libc data for tcache defaults";
	else
		p->how_mp = "not found";
}

enum hw_status pm_find_roots(struct pm_state *p)
{
	struct hw_session *s = p->s;
	struct hw_target *t = p->t;
	struct glibc_home h;
	enum hw_status st = find_glibc_home(p, &h);
	if (st != HW_OK)
		return st;
	/* An executable that shows nothing of glibc yet is only a
	   candidate until a main_arena turns up in its data.  */
	s->alloc_present = !h.in_exe || h.evidence;
	p->libc_base = h.file >= 0 ? t->files[h.file].start : h.mod.low;
	p->libc_mod = h.mod;
	p->have_libc_mod = h.have_mod;
	p->libc_file = h.file;
	pm_instance_arch(p, h.file >= 0 ? t->files[h.file].path : h.mod.name);
	if (h.file >= 0 && !h.in_exe)
		find_version(p, h.file, false);
	pm_era_init(&p->era);
	layout_from_version(p, &h);
	st = find_main_arena(p, &h);
	if (st != HW_OK)
		return st;
	s->alloc_present = true;
	find_mp(p, &h);

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
	st = read_arenas(p);
	if (st == HW_OK)
		pm_era_heap_info(p, strcmp(p->l.source, "DWARF") != 0);
	return st;
}

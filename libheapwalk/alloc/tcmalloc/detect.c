/* detect.c - find gperftools tcmalloc in the target: its library, its
 * version, and its roots (the size map, the central free lists, the page
 * heap and the list of thread caches).
 *
 * Debian's libraries are stripped and keep the size map, the central
 * lists and the page heap hidden; each is recognised by its shape in the
 * library's writable memory and accepted only when every cross-check
 * holds:
 *   size map      class_to_size_ begins 0, 8, 16, 32, ..., 128 (int32),
 *                 ascends to 262144 (kMaxSize), and class_array_ is its
 *                 inverse;
 *   central lists 1216-byte entries whose size_class_ is their index;
 *   page heap     its free_ lists: 128 pairs of Span sentinels, each
 *                 empty (linked to itself) or linked to spans of its
 *                 length that link back;
 *   thread caches the exported ThreadCache::thread_heaps_, or a pointer
 *                 to a cache whose 128 lists know the class sizes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../module.h"
#include "tcmalloc.h"

/* Offsets that every 2.6-2.16 build shares (tcmalloc.md).  */
#define SIZEMAP_CLASS_TO_SIZE 0xa7c
#define SIZEMAP_CLASS_TO_PAGES 0xc80
#define SIZEMAP_MOVE 0x87c
#define SIZEMAP_CLASS_ARRAY_LEN 2169
#define CENTRAL_CLASS 0x08
#define CENTRAL_EMPTY 0x10
#define CENTRAL_NONEMPTY 0x40
#define SPAN_BYTES 0x30
#define FREE_PAIR 0x60
#define MAX_SIZE 262144u
/* The central lists were at sizemap - 0x26000 in every Debian build.  */
#define CENTRAL_BEFORE_SIZEMAP 0x26000

/* "gperftools 2.10" in [data, data + len): the version into the state
   cookie is (a search of alloc/module.h: the target's copy of the
   library, or its file on disk, as a kernel core leaves unmodified file
   pages out).  */
static bool version_in(void *cookie, const uint8_t *data, size_t len)
{
	struct tc_state *tc = cookie;
	static const char tag[] = "gperftools ";
	const uint8_t *p = data, *end = data + len;
	while (p < end) {
		p = memmem(p, (size_t)(end - p), tag, sizeof tag - 1);
		if (!p)
			return false;
		const uint8_t *v = p + sizeof tag - 1;
		int major = 0, minor = 0, n = 0;
		while (v < end && *v >= '0' && *v <= '9' && n < 3)
			major = major * 10 + (*v++ - '0'), n++;
		if (n && v + 1 < end && *v == '.' && v[1] >= '0' && v[1] <= '9') {
			v++;
			n = 0;
			while (v < end && *v >= '0' && *v <= '9' && n < 3)
				minor = minor * 10 + (*v++ - '0'), n++;
			/* A patch level: "gperftools 2.8.1".  */
			int patch = -1;
			if (v + 1 < end && *v == '.' && v[1] >= '0' && v[1] <= '9') {
				v++;
				patch = 0;
				n = 0;
				while (v < end && *v >= '0' && *v <= '9' && n < 3)
					patch = patch * 10 + (*v++ - '0'), n++;
			}
			if (v < end && *v == '\0' && major == 2) {
				tc->major = major;
				tc->minor = minor;
				if (patch >= 0)
					snprintf(tc->version, sizeof tc->version,
						 "%d.%d.%d", major, minor, patch);
				else
					snprintf(tc->version, sizeof tc->version,
						 "%d.%d", major, minor);
				return true;
			}
		}
		p++;
	}
	return false;
}

enum hw_status tc_find_module(struct tc_state *tc)
{
	struct hw_session *s = tc->s;
	struct hw_target *t = tc->t;
	const char *path = NULL;
	uint64_t lo = 0, hi = 0;
	for (size_t i = 0; i < t->nfiles && !path; i++)
		if (strncmp(hw_base_name(t->files[i].path), "libtcmalloc", 11) == 0)
			path = t->files[i].path;
	tc->how_module = "mapped file named libtcmalloc*";
	if (!path && t->exe && hw_file_range(t, t->exe, &lo, &hi)) {
		/* Linked in (libtcmalloc_minimal.a): its version string is
		   in the executable, in the core or in the file.  */
		struct hw_module m;
		bool have = s->syms && hw_syms_find_module(s->syms,
						hw_base_name(t->exe), &m);
		if (hw_module_search(t, lo, hi, version_in, tc) ||
		    (have && m.file &&
		     hw_file_search(m.file, (uint64_t)1 << 30, version_in, tc))) {
			path = t->exe;
			tc->how_module = "gperftools version string in the "
					 "executable";
		}
	}
	if (!path)
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': no tcmalloc in the "
				"target", t->path ? t->path : "target");
	s->alloc_present = true;
	hw_file_range(t, path, &lo, &hi);
	snprintf(tc->module, sizeof tc->module, "%s", path);
	tc->have_mod = s->syms && hw_syms_find_module(s->syms, hw_base_name(path),
						      &tc->mod);
	tc->ndata = hw_module_data(t, lo, hi, tc->data, TC_MAX_RANGES);
	if (!hw_module_search(t, lo, hi, version_in, tc) && tc->have_mod &&
	    tc->mod.file)
		hw_file_search(tc->mod.file, (uint64_t)1 << 30, version_in, tc);
	if (!tc->version[0])
		snprintf(tc->version, sizeof tc->version, "2.x");
	if (tc->major == 2 && tc->minor < 6)
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': gperftools %s is not "
				"supported yet (2.6 and later are)", tc->module,
				tc->version);
	if (!tc->ndata)
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': tcmalloc found, but "
				"none of its data is in the %s", tc->module,
				hw_target_noun(t));
	return HW_OK;
}

/* ---- the size map ------------------------------------------------------ */

static bool read_u64(struct tc_state *tc, uint64_t a, uint64_t *v)
{
	return hw_read_u64(tc->t, a, v);
}

/* The class of usable size s as SizeMap::SizeClass() picks it.  */
static unsigned class_index(uint32_t s)
{
	return s <= 1024 ? (s + 7) >> 3 : (s + 127 + (120 << 7)) >> 7;
}

/* Is a SizeMap at addr, with its count of classes at +n_off?  Fills the
   class tables when it is.  */
static bool sizemap_at(struct tc_state *tc, uint64_t addr, uint64_t n_off)
{
	uint64_t n;
	if (!read_u64(tc, addr + n_off, &n) || n < 8 || n > TC_MAX_CLASSES)
		return false;
	int32_t size[TC_MAX_CLASSES], move[TC_MAX_CLASSES];
	uint64_t pages[TC_MAX_CLASSES];
	uint8_t array[SIZEMAP_CLASS_ARRAY_LEN];
	if (!hw_read(tc->t, addr + SIZEMAP_CLASS_TO_SIZE, size, sizeof size) ||
	    !hw_read(tc->t, addr + SIZEMAP_CLASS_TO_PAGES, pages, sizeof pages) ||
	    !hw_read(tc->t, addr + SIZEMAP_MOVE, move, sizeof move) ||
	    !hw_read(tc->t, addr, array, sizeof array))
		return false;
	if (size[0] != 0 || pages[0] != 0 || (uint32_t)size[n - 1] != MAX_SIZE)
		return false;
	for (uint64_t i = 1; i < TC_MAX_CLASSES; i++) {
		if (i >= n) {
			if (size[i] || pages[i])
				return false;
			continue;
		}
		if (size[i] <= size[i - 1] || pages[i] < 1 || pages[i] > 256 ||
		    move[i] < 2 || move[i] > 32768)
			return false;
	}
	/* class_array_ is class_to_size_'s inverse.  */
	for (uint32_t s = 8; s <= MAX_SIZE; s += s < 1024 ? 8 : 128) {
		unsigned c = array[class_index(s)];
		if (c < 1 || c >= n || (uint32_t)size[c] < s ||
		    (uint32_t)size[c - 1] >= s)
			return false;
	}
	tc->nclasses = (unsigned)n;
	for (unsigned i = 0; i < n; i++) {
		tc->class_size[i] = (uint32_t)size[i];
		tc->class_pages[i] = (uint32_t)pages[i];
		tc->class_move[i] = (uint32_t)move[i];
	}
	return true;
}

/* The class_to_size_ table's first ten entries: 0, 8, 16, 32, ..., 128
   as little-endian int32.  */
static const uint8_t size_signature[40] = {
	0, 0, 0, 0, 8, 0, 0, 0, 16, 0, 0, 0, 32, 0, 0, 0, 48, 0, 0, 0,
	64, 0, 0, 0, 80, 0, 0, 0, 96, 0, 0, 0, 112, 0, 0, 0, 128, 0, 0, 0,
};

static bool find_sizemap(struct tc_state *tc)
{
	for (size_t i = 0; i < tc->ndata; i++) {
		uint64_t at = tc->data[i].start;
		while (at < tc->data[i].end) {
			const uint8_t *d;
			uint64_t len = hw_readable_run(tc->t, at, &d);
			if (!len) {
				at = hw_next_readable(tc->t, at, tc->data[i].end);
				continue;
			}
			if (len > tc->data[i].end - at)
				len = tc->data[i].end - at;
			const uint8_t *p = d, *end = d + len;
			while ((p = memmem(p, (size_t)(end - p), size_signature,
					   sizeof size_signature))) {
				uint64_t hit = at + (uint64_t)(p - d);
				uint64_t map = hit - SIZEMAP_CLASS_TO_SIZE;
				/* 2.6-2.10 count at 0x1080; 2.11 on put
				   min_span_size_in_pages_ there, the count
				   after it.  */
				if (sizemap_at(tc, map, 0x1080)) {
					tc->lay.sizemap_n = 0x1080;
				} else if (sizemap_at(tc, map, 0x1088)) {
					tc->lay.sizemap_n = 0x1088;
				} else {
					p++;
					continue;
				}
				tc->sizemap = map;
				tc->how_sizemap = "its class-size table, found by "
						  "its values";
				return true;
			}
			at += len;
		}
	}
	return false;
}

/* ---- the central free lists -------------------------------------------- */

/* Does the Span sentinel at addr either link to itself, or to spans whose
   own links lead back?  `check` (when not NULL) vets each linked span.  */
static bool sentinel_ok(struct tc_state *tc, uint64_t addr,
			bool (*check)(struct tc_state *, uint64_t span,
				      unsigned arg),
			unsigned arg)
{
	uint64_t w[4];
	if (!hw_read(tc->t, addr, w, sizeof w) || w[0] || w[1] || !w[2] ||
	    !w[3])
		return false;
	if (w[2] == addr && w[3] == addr)
		return true;
	uint64_t back;
	if (!read_u64(tc, w[2] + 0x18, &back) || back != addr)
		return false;
	if (!read_u64(tc, w[3] + 0x10, &back) || back != addr)
		return false;
	return !check || (check(tc, w[2], arg) && check(tc, w[3], arg));
}

static bool span_of_class(struct tc_state *tc, uint64_t span, unsigned cls)
{
	uint32_t bits;
	return hw_read_u32(tc->t, span + 0x28, &bits) &&
	       ((bits >> 16) & 0xff) == cls && ((bits >> 24) & 3) == 0;
}

static bool central_at(struct tc_state *tc, uint64_t addr)
{
	for (unsigned i = 0; i < tc->nclasses; i++) {
		uint64_t e = addr + (uint64_t)i * TC_CENTRAL_STRIDE, cls;
		uint32_t slots[3];
		if (!read_u64(tc, e + CENTRAL_CLASS, &cls) || cls != i ||
		    !hw_read(tc->t, e + 0x480, slots, sizeof slots) ||
		    slots[0] > slots[2] || slots[2] > 64)
			return false;
		if (!sentinel_ok(tc, e + CENTRAL_EMPTY, span_of_class, i) ||
		    !sentinel_ok(tc, e + CENTRAL_NONEMPTY, span_of_class, i))
			return false;
	}
	return true;
}

static bool find_central(struct tc_state *tc)
{
	if (tc->sizemap > CENTRAL_BEFORE_SIZEMAP &&
	    central_at(tc, tc->sizemap - CENTRAL_BEFORE_SIZEMAP)) {
		tc->central = tc->sizemap - CENTRAL_BEFORE_SIZEMAP;
		tc->how_central = "beside the size map, checked";
		return true;
	}
	for (size_t i = 0; i < tc->ndata; i++)
		for (uint64_t a = tc->data[i].start;
		     a + (uint64_t)tc->nclasses * TC_CENTRAL_STRIDE <= tc->data[i].end;
		     a += 8) {
			uint64_t v[2];
			/* Entry 0: class 0, its empty list linked to itself.  */
			if (!hw_read(tc->t, a + 8, v, sizeof v) || v[0] != 0 ||
			    v[1] != 0)
				continue;
			if (!read_u64(tc, a + CENTRAL_EMPTY + 0x10, &v[0]) ||
			    v[0] != a + CENTRAL_EMPTY)
				continue;
			if (central_at(tc, a)) {
				tc->central = a;
				tc->how_central = "found by its shape";
				return true;
			}
		}
	return false;
}

/* ---- the page heap ----------------------------------------------------- */

static bool span_free_of(struct tc_state *tc, uint64_t span, unsigned arg)
{
	uint64_t len;
	uint32_t bits;
	return read_u64(tc, span + 8, &len) && len == (arg >> 2) &&
	       hw_read_u32(tc->t, span + 0x28, &bits) &&
	       ((bits >> 24) & 3) == (arg & 3);
}

/* Damaged sentinels the page heap may have and still be recognised: the
   rest of its 256 vouch for it.  */
#define FREE_LISTS_DAMAGE 8

/* How many of the 128 pairs of free-list sentinels at addr are not as
   tcmalloc keeps them; with `report`, each is a finding.  */
static unsigned free_lists_bad(struct tc_state *tc, uint64_t addr, bool report)
{
	unsigned bad = 0;
	for (unsigned k = 0; k < TC_MAX_PAGES && bad <= FREE_LISTS_DAMAGE; k++)
		for (unsigned r = 0; r < 2; r++) {
			uint64_t s = addr + (uint64_t)k * FREE_PAIR + r * SPAN_BYTES;
			if (sentinel_ok(tc, s, span_free_of, (k + 1) << 2 | (r + 1)))
				continue;
			bad++;
			if (report)
				hw_finding(tc->s, s, "tcmalloc: the page heap's "
					   "list of %s free spans of %u pages is "
					   "damaged: its spans are walked from the "
					   "page map only", r ? "returned" : "normal",
					   k + 1);
		}
	return bad;
}

/* Is the code pointer (PageHeap's pagemap allocator) in the library?  */
static bool in_module_code(struct tc_state *tc, uint64_t pc)
{
	const struct hw_region *r = hw_region_of(tc->t, pc);
	if (r && (r->prot & HW_PROT_X))
		return true;
	/* A core may leave code out: then it is enough that it is in the
	   module's mapped range.  */
	return tc->have_mod && pc >= tc->mod.low && pc < tc->mod.high;
}

static bool find_pageheap(struct tc_state *tc)
{
	tc->lay.heap_to_free = tc->lay.sizemap_n == 0x1080 ? 0x180068
							   : 0x180078;
	for (size_t i = 0; i < tc->ndata; i++)
		for (uint64_t a = tc->data[i].start + tc->lay.heap_to_free;
		     a + TC_MAX_PAGES * FREE_PAIR + 0x58 <= tc->data[i].end;
		     a += 8) {
			uint64_t alloc;
			if (!read_u64(tc, a - 0x68, &alloc) || !alloc ||
			    !in_module_code(tc, alloc))
				continue;
			if (free_lists_bad(tc, a, false) > FREE_LISTS_DAMAGE)
				continue;
			free_lists_bad(tc, a, true);
			tc->free_lists = a;
			tc->pageheap = a - tc->lay.heap_to_free;
			tc->root = a - 0x100068;
			tc->stats = a + TC_MAX_PAGES * FREE_PAIR;
			tc->how_heap = "its free lists, found by their shape";
			return true;
		}
	return false;
}

/* ---- thread caches ----------------------------------------------------- */

/* Is a ThreadCache at addr: its lists know the class sizes?  */
static bool cache_at(struct tc_state *tc, uint64_t addr)
{
	if (!addr || addr & 7)
		return false;
	for (unsigned c = 1; c < tc->nclasses; c++) {
		uint32_t size;
		if (!hw_read_u32(tc->t, addr + 32 * (uint64_t)c + 0x18, &size) ||
		    size != tc->class_size[c])
			return false;
	}
	return true;
}

static bool find_thread_heaps(struct tc_state *tc)
{
	uint64_t a;
	/* 2.16 dropped tid_ and moved next_/prev_ up.  */
	bool v216 = tc->major == 2 && tc->minor >= 16;
	tc->lay.cache_next = v216 ? 0x1020 : 0x1030;
	tc->lay.cache_prev = v216 ? 0x1028 : 0x1038;
	tc->lay.cache_tid = v216 ? -1 : 0x1020;
	if (tc->have_mod &&
	    hw_syms_lookup(tc->s->syms, &tc->mod,
			   "_ZN8tcmalloc11ThreadCache13thread_heaps_E", &a, NULL,
			   NULL)) {
		tc->thread_heaps = a;
		tc->how_caches = "symbol ThreadCache::thread_heaps_";
		return true;
	}
	for (size_t i = 0; i < tc->ndata; i++)
		for (a = tc->data[i].start; a + 8 <= tc->data[i].end; a += 8) {
			uint64_t head, prev;
			if (!read_u64(tc, a, &head) || !head || head & 63 ||
			    !read_u64(tc, head + tc->lay.cache_prev, &prev) ||
			    prev || !cache_at(tc, head))
				continue;
			tc->thread_heaps = a;
			tc->how_caches = "a pointer to a thread cache, found by "
					 "its shape";
			return true;
		}
	return false;
}

enum hw_status tc_find_roots(struct tc_state *tc)
{
	struct hw_session *s = tc->s;
	if (!find_sizemap(tc))
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': tcmalloc %s found, "
				"but not its size classes: not initialised yet "
				"(no malloc ran), or a build of unknown layout",
				tc->module, tc->version);
	if (!find_central(tc))
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': tcmalloc %s: its "
				"central free lists were not found", tc->module,
				tc->version);
	if (!find_pageheap(tc))
		return hw_error(s, HW_NO_ALLOCATOR, "'%s': tcmalloc %s: its page "
				"heap was not found", tc->module, tc->version);
	if (!find_thread_heaps(tc))
		tc->how_caches = "not found (no thread cache made yet?)";
	uint64_t st[4];
	if (hw_read(tc->t, tc->stats, st, sizeof st)) {
		tc->system_bytes = st[0];
		tc->free_bytes = st[1];
		tc->unmapped_bytes = st[2];
		tc->committed_bytes = st[3];
	}
	return HW_OK;
}

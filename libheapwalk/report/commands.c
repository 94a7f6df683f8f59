/* commands.c - THE command table, shared by the CLI and the gdb plugin.
 *
 * Each command emits its report once, as records (emit.h); the emitter's
 * renderer makes text or JSON of them.  Reports that are the same for
 * every allocator (summary, chunks, sizes, chunk, check, frag) are written
 * here against the walker interface; arenas and bins, and summary's
 * allocator-specific part, are the walker's own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../target/cache.h"
#include "../target/target.h"
#include "../arch/arch.h"
#include "../analysis/maps.h"
#include "../analysis/reach.h"
#include "../sym/sym.h"
#include "commands.h"
#include "crash.h"
#include "emit.h"

static const char *const where_names[HW_WHERE_COUNT] = {
	[HW_WHERE_HEAP] = "heap",         [HW_WHERE_MMAPPED] = "mmapped",
	[HW_WHERE_TCACHE] = "tcache",     [HW_WHERE_FASTBIN] = "fastbin",
	[HW_WHERE_UNSORTED] = "unsorted", [HW_WHERE_SMALLBIN] = "smallbin",
	[HW_WHERE_LARGEBIN] = "largebin", [HW_WHERE_TOP] = "top",
	[HW_WHERE_UNBINNED] = "unbinned", [HW_WHERE_SLAB] = "slab",
	[HW_WHERE_LARGE] = "large",       [HW_WHERE_SLAB_FREE] = "slab-free",
	[HW_WHERE_DIRTY] = "dirty",       [HW_WHERE_MUZZY] = "muzzy",
	[HW_WHERE_RETAINED] = "retained",
};

const char *hw_where_name(enum hw_where w)
{
	return (unsigned)w < HW_WHERE_COUNT ? where_names[w] : "?";
}

/* ---- per-size-class totals (sizes, summary) ---------------------------- */

struct size_class {
	uint64_t size, used, used_bytes, free, free_bytes, cached, cached_bytes;
};

/* Usable sizes below this are counted in a direct array (most chunks),
   the rest in an open-addressing table.  */
#define SMALL_SIZES 8192

struct size_table {
	struct size_class *small;  /* [SMALL_SIZES], indexed by size */
	struct size_class *slots;  /* open addressing on size; size 0 = empty */
	size_t cap, n;
	bool oom;
};

/* The class of `size` in the open-addressing table, made if new.  */
static struct size_class *hashed_slot(struct size_table *t, uint64_t size)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct size_class *s = calloc(cap, sizeof *s);
		if (!s) {
			t->oom = true;
			return NULL;
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->slots[i].size)
				continue;
			size_t j = (t->slots[i].size * 0x9e3779b97f4a7c15ull) >> 40 & (cap - 1);
			while (s[j].size)
				j = (j + 1) & (cap - 1);
			s[j] = t->slots[i];
		}
		free(t->slots);
		t->slots = s;
		t->cap = cap;
	}
	/* size 0 marks an empty slot; a 0-byte class is stored as ~0.  */
	uint64_t key = size ? size : ~(uint64_t)0;
	size_t j = (key * 0x9e3779b97f4a7c15ull) >> 40 & (t->cap - 1);
	while (t->slots[j].size && t->slots[j].size != key)
		j = (j + 1) & (t->cap - 1);
	if (!t->slots[j].size) {
		t->slots[j].size = key;
		t->n++;
	}
	return &t->slots[j];
}

static struct size_class *size_slot(struct size_table *t, uint64_t size)
{
	if (size < SMALL_SIZES && t->small)
		return &t->small[size];
	return hashed_slot(t, size);
}

static void class_add(struct size_class *a, const struct size_class *b)
{
	a->used += b->used;
	a->used_bytes += b->used_bytes;
	a->free += b->free;
	a->free_bytes += b->free_bytes;
	a->cached += b->cached;
	a->cached_bytes += b->cached_bytes;
}

struct totals {
	struct size_table sizes;
	uint64_t used, used_bytes, free, free_bytes, overhead, largest_free;
	uint64_t top_bytes;
	/* summary --leaks: blocks and bytes by mark (enum bm_mark).  */
	const struct hw_reach *reach;
	uint64_t marked[4], marked_bytes[4];
	/* summary: the allocator's ranges, for its writable-memory line.  */
	struct hw_maps_acc maps;
	/* sizes and diff: each arena's blocks at index arena + 1 (jemalloc's
	   arena -1, blocks cached in no arena, first); grown as arenas are
	   met.  Free with free().  */
	struct arena_count *arenas;
	size_t narenas;
};

struct arena_count {
	uint64_t used, used_bytes, free, free_bytes;
};

/* Arena indexes past this are a walker's bug, not arenas: counted in
   the totals and the classes, not per arena.  */
#define MAX_ARENA_SLOTS 65536

/* Room for slot i (< MAX_ARENA_SLOTS); false when out of memory.  */
static bool arenas_room(struct totals *t, uint64_t i)
{
	if (i < t->narenas)
		return true;
	size_t n = t->narenas ? 2 * t->narenas : 8;
	while (n <= i)
		n *= 2;
	struct arena_count *a = realloc(t->arenas, n * sizeof *a);
	if (!a) {
		t->sizes.oom = true;
		return false;
	}
	memset(a + t->narenas, 0, (n - t->narenas) * sizeof *a);
	t->arenas = a;
	t->narenas = n;
	return true;
}

static void arena_add(struct totals *t, const struct hw_chunk *c)
{
	uint64_t i = (uint64_t)((int64_t)c->arena + 1);
	if (i >= MAX_ARENA_SLOTS || !arenas_room(t, i))
		return;
	struct arena_count *a = &t->arenas[i];
	if (c->used) {
		a->used++;
		a->used_bytes += c->size;
	} else {
		a->free++;
		a->free_bytes += c->size;
	}
}

static bool add_total(void *cookie, const struct hw_chunk *c)
{
	struct totals *t = cookie;
	hw_maps_acc_chunk(&t->maps, c);
	/* Unused jemalloc extents are page reserves, not free blocks (as in
	   frag); the allocator's own summary lines show them.  */
	if (c->where == HW_WHERE_DIRTY || c->where == HW_WHERE_MUZZY ||
	    c->where == HW_WHERE_RETAINED)
		return true;
	struct size_class *sc = size_slot(&t->sizes, c->size);
	if (c->used) {
		t->used++;
		t->used_bytes += c->size;
		enum bm_mark mark;
		if (t->reach && hw_reach_mark(t->reach, c->addr, &mark)) {
			t->marked[mark]++;
			t->marked_bytes[mark] += c->size;
		}
		if (sc) {
			sc->used++;
			sc->used_bytes += c->size;
		}
	} else {
		t->free++;
		t->free_bytes += c->size;
		if (c->where == HW_WHERE_TOP)
			t->top_bytes += c->size;
		if (c->size > t->largest_free)
			t->largest_free = c->size;
		if (sc) {
			sc->free++;
			sc->free_bytes += c->size;
			if (c->where == HW_WHERE_TCACHE) {
				sc->cached++;
				sc->cached_bytes += c->size;
			}
		}
	}
	t->overhead += c->chunk_size - c->size;
	arena_add(t, c);
	return !t->sizes.oom;
}

static int class_cmp(const void *a, const void *b)
{
	const struct size_class *x = a, *y = b;
	uint64_t sx = x->size == ~(uint64_t)0 ? 0 : x->size;
	uint64_t sy = y->size == ~(uint64_t)0 ? 0 : y->size;
	return sx < sy ? -1 : sx > sy;
}

/* At most this many walk threads for the totals (each has its own
   tables, merged at the end).  */
#define GATHER_MAX_THREADS 16
/* Add u's counts into t (both still in their walk form).  */
static void merge_totals(struct totals *t, struct totals *u)
{
	t->used += u->used;
	t->used_bytes += u->used_bytes;
	t->free += u->free;
	t->free_bytes += u->free_bytes;
	t->overhead += u->overhead;
	t->top_bytes += u->top_bytes;
	for (int k = 0; k < 4; k++) {
		t->marked[k] += u->marked[k];
		t->marked_bytes[k] += u->marked_bytes[k];
	}
	if (u->largest_free > t->largest_free)
		t->largest_free = u->largest_free;
	t->sizes.oom |= u->sizes.oom;
	for (size_t i = 0; i < SMALL_SIZES && t->sizes.small && u->sizes.small; i++)
		class_add(&t->sizes.small[i], &u->sizes.small[i]);
	for (size_t i = 0; i < u->sizes.cap && !t->sizes.oom; i++) {
		const struct size_class *b = &u->sizes.slots[i];
		if (!b->size)
			continue;
		struct size_class *a = size_slot(&t->sizes,
				b->size == ~(uint64_t)0 ? 0 : b->size);
		if (!a)
			break;
		class_add(a, b);
	}
	free(u->sizes.small);
	free(u->sizes.slots);
	hw_maps_acc_take(&t->maps, &u->maps);
	for (size_t i = 0; i < u->narenas; i++) {
		const struct arena_count *b = &u->arenas[i];
		if (!b->used && !b->free)
			continue;
		if (!arenas_room(t, i))
			break;
		struct arena_count *a = &t->arenas[i];
		a->used += b->used;
		a->used_bytes += b->used_bytes;
		a->free += b->free;
		a->free_bytes += b->free_bytes;
	}
	free(u->arenas);
}

/* Walk everything once (in threads when the walker can); the classes end
   up sorted and packed.  */
static enum hw_status gather(struct hw_session *s, struct totals *t,
			     const struct hw_reach *reach)
{
	/* The session's policy: one thread inside gdb, the cores otherwise;
	   only a walker that can split its work uses more than one.  */
	unsigned nthreads = s->alloc->chunks_parallel ? hw_threads(s) : 1;
	if (nthreads > GATHER_MAX_THREADS)
		nthreads = GATHER_MAX_THREADS;
	struct totals extra[GATHER_MAX_THREADS - 1];
	void *cookies[GATHER_MAX_THREADS] = { t };
	memset(t, 0, sizeof *t);
	memset(extra, 0, sizeof extra);
	t->reach = reach;
	for (unsigned k = 0; k + 1 < GATHER_MAX_THREADS; k++)
		extra[k].reach = reach;
	t->sizes.small = calloc(SMALL_SIZES, sizeof *t->sizes.small);
	bool oom = !t->sizes.small;
	for (unsigned k = 1; k < nthreads; k++) {
		extra[k - 1].sizes.small = calloc(SMALL_SIZES,
						  sizeof *t->sizes.small);
		oom |= !extra[k - 1].sizes.small;
		cookies[k] = &extra[k - 1];
	}
	if (oom)
		t->sizes.oom = true;
	else if (nthreads > 1)
		s->alloc->chunks_parallel(s->alloc_state, nthreads, add_total,
					  cookies);
	else
		s->alloc->chunks(s->alloc_state, add_total, t);
	for (unsigned k = 1; k < nthreads; k++)
		merge_totals(t, &extra[k - 1]);
	/* Move the small classes that occurred into the table.  */
	for (size_t i = 0; i < SMALL_SIZES && t->sizes.small && !t->sizes.oom; i++) {
		struct size_class *sc = &t->sizes.small[i];
		if (!sc->used && !sc->free)
			continue;
		struct size_class *d = hashed_slot(&t->sizes, i);
		if (d)
			class_add(d, sc);
	}
	free(t->sizes.small);
	t->sizes.small = NULL;
	if (t->sizes.oom) {
		free(t->sizes.slots);
		hw_maps_acc_free(&t->maps);
		free(t->arenas);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	size_t n = 0;
	for (size_t i = 0; i < t->sizes.cap; i++)
		if (t->sizes.slots[i].size) {
			t->sizes.slots[n] = t->sizes.slots[i];
			if (t->sizes.slots[n].size == ~(uint64_t)0)
				t->sizes.slots[n].size = 0;
			n++;
		}
	if (t->sizes.slots)
		qsort(t->sizes.slots, n, sizeof *t->sizes.slots, class_cmp);
	t->sizes.n = n;
	return HW_OK;
}

/* ---- commands ---------------------------------------------------------- */

struct cmd_ctx {
	struct hw_session *s;
	struct hw_emitter *e;
	int argc;
	char *const *argv;
};

/* A command that takes at most `max` words after its name.  */
static enum hw_status check_nargs(struct cmd_ctx *c, int max, const char *what)
{
	if (c->argc - 1 <= max)
		return HW_OK;
	return hw_error(c->s, HW_USAGE, "%s: unexpected argument '%s'%s%s",
			c->argv[0], c->argv[max + 1], what ? " (" : "",
			what ? what : "");
}

/* "1 chunk", "2 chunks": the noun's plural is its singular + "s".  */
static const char *plural(uint64_t n, const char *noun, char *buf, size_t len)
{
	snprintf(buf, len, "%llu %s%s", (unsigned long long)n, noun,
		 n == 1 ? "" : "s");
	return buf;
}

/* A count of blocks: "1 chunk", "2 chunks", or with the allocator's
   own noun ("12 regions/extents").  */
static const char *blocks(uint64_t n, const char *noun, char *buf, size_t len)
{
	if (!noun)
		return plural(n, "chunk", buf, len);
	snprintf(buf, len, "%llu %s", (unsigned long long)n, noun);
	return buf;
}

/* ---- partial walks ----------------------------------------------------- */

static const struct em_field F_PARTIAL = {
	.key = "partial", .only = EM_JSON_ONLY };
static const struct em_field F_PARTIAL_REASON = {
	.key = "partial_reason", .only = EM_JSON_ONLY };
static const struct em_field F_PARTIAL_ADDR = {
	.key = "partial_addr", .only = EM_JSON_ONLY };
static const struct em_field F_PARTIAL_PLACES = {
	.key = "partial_places", .only = EM_JSON_ONLY };

/* A target read lazily (a debugger's memory, --no-stop) fills its cache
   during the walk: past the budget, blocks were not read, which no
   walker saw as damage.  Said as a partial walk unless it was already.  */
static bool over_budget(const struct hw_session *s, char *why, size_t len)
{
	if (s->budget_said || !s->target || !s->target->cache ||
	    !hw_cache_over_budget(s->target->cache))
		return false;
	snprintf(why, len, "the target's memory is more than the cache may "
		 "hold (%llu MiB): what lies past it was not read",
		 (unsigned long long)(s->policy.cache_max >> 20));
	return true;
}

void hw_emit_partial_members(const struct hw_session *s, struct hw_emitter *e)
{
	char why[160];
	if (!s->partial.places && over_budget(s, why, sizeof why)) {
		em_kv(e, &F_PARTIAL, ev_bool(true));
		em_kv(e, &F_PARTIAL_REASON, ev_str(why));
		em_kv(e, &F_PARTIAL_ADDR, ev_addr(0));
		em_kv(e, &F_PARTIAL_PLACES, ev_u64(1));
		return;
	}
	em_kv(e, &F_PARTIAL, ev_bool(s->partial.places > 0));
	if (!s->partial.places)
		return;
	em_kv(e, &F_PARTIAL_REASON, ev_str(s->partial.why));
	em_kv(e, &F_PARTIAL_ADDR, ev_addr(s->partial.addr));
	em_kv(e, &F_PARTIAL_PLACES, ev_u64(s->partial.places));
}

void hw_emit_partial_line(const struct hw_session *s, struct hw_emitter *e)
{
	char why[160];
	if (over_budget(s, why, sizeof why))
		em_notef(e, "%-24s totals are partial: %s", "partial:", why);
	if (s->partial.places)
		em_notef(e, "%-24s totals are partial, first at 0x%llx: "
			 "%s%s", "partial:",
			 (unsigned long long)s->partial.addr, s->partial.why,
			 s->partial.places > 1 ? " (and elsewhere: see 'heapwalk "
			 "check')" : "");
}

void hw_emit_partial(const struct hw_session *s, struct hw_emitter *e)
{
	hw_emit_partial_members(s, e);
	hw_emit_partial_line(s, e);
}
/* What this target cannot tell, and what that costs the analysis: said
   once in the summary rather than guessed around silently.  */
static size_t target_limits(const struct hw_session *s, const char *out[],
			    size_t max, char *missing, size_t missing_len)
{
	const struct hw_target *t = s->target;
	size_t n = 0, nmissing = 0, used = 0;
	bool any_tp = false;
	for (size_t i = 0; i < t->nthreads; i++)
		any_tp |= t->threads[i].has_tp;
	/* Name the missing files (each once: a file has several mappings).
	   Only the first four names are printed, so only they are compared
	   with: a core naming 100,000 files costs 4 comparisons a file.  */
	const char *named[4];
	for (size_t i = 0; i < t->nfiles && nmissing < 5; i++) {
		const struct hw_mapped_file *f = &t->files[i];
		bool seen = false;
		if (!f->absent && !f->unavailable)
			continue;
		for (size_t j = 0; j < nmissing && j < 4 && !seen; j++)
			seen = strcmp(named[j], f->path) == 0;
		if (seen)
			continue;
		if (nmissing < 4)
			named[nmissing] = f->path;
		if (nmissing++ == 0)
			used = (size_t)snprintf(missing, missing_len,
						"missing or different files "
						"(see --sysroot; what the core "
						"does not hold of them is "
						"unknown): %s", f->path);
		else if (nmissing <= 4 && used < missing_len)
			used += (size_t)snprintf(missing + used,
						 missing_len - used, ", %s",
						 f->path);
		else if (nmissing == 5 && used < missing_len)
			used += (size_t)snprintf(missing + used,
						 missing_len - used, ", ...");
	}
	/* A process (through a debugger) has a memory map, not NT_FILE.  */
	if (!t->files_from && n < max)
		out[n++] = t->is_process
			   ? "no file names in the memory map and no readable "
			     "link_map: mapped files unknown"
			   : "no NT_FILE and no readable link_map: mapped files "
			     "unknown (give --exe or --sysroot)";
	else if (strcmp(t->files_from, "executable") == 0 && n < max)
		out[n++] = t->is_process
			   ? "no file names in the memory map and no link_map "
			     "(a static program?): the executable's mappings "
			     "taken from its program headers"
			   : "no NT_FILE and no link_map (a static program?): "
			     "the executable's mappings taken from its "
			     "program headers";
	else if (strcmp(t->files_from, "link_map") == 0 && n < max)
		out[n++] = t->is_process
			   ? "no file names in the memory map: mapped files "
			     "taken from the dynamic linker's link_map"
			   : "no NT_FILE: mapped files taken from the dynamic "
			     "linker's link_map";
	if (t->files_note[0] && n < max)
		out[n++] = t->files_note;
	if (hw_syms_exe_note(s->syms) && n < max)
		out[n++] = hw_syms_exe_note(s->syms);
	if (nmissing > 0 && n < max)
		out[n++] = missing;
	if (s->arch != t->arch && n < max)
		out[n++] = "the walked heap is an emulated guest's (its libc is "
			   "not of the core's architecture): the core's threads "
			   "and thread pointers are the emulator's, so per-"
			   "thread caches cannot be given their threads, and "
			   "the page size is the emulator's";
	else if (!any_tp && n < max)
		out[n++] = strcmp(t->arch->name, "aarch64") == 0 &&
			   !t->is_process
			   ? "no NT_ARM_TLS: thread pointers unknown, so "
			     "per-thread caches cannot be given their threads"
			   : t->debugger && t->is_process
			   ? "no thread pointer register from the debugger "
			     "(fs_base, tpidr): per-thread caches cannot be "
			     "given their threads"
			   : "no thread pointers: per-thread caches cannot be "
			     "given their threads";
	if (!t->auxv_len && n < max)
		out[n++] = t->is_process
			   ? "no auxiliary vector: page size assumed 4 KiB"
			   : "no NT_AUXV: page size assumed 4 KiB";
	if (t->limit[0] && n < max)
		out[n++] = t->limit;
	return n;
}

/* How a live process was read: JSON's "live" object; text has its line
   under the target's.  Nothing for a core.  */
static const struct em_section S_LIVE = {
	.key = "live", .only = EM_JSON_ONLY };
static const struct em_field F_LIVE_PID = { .key = "pid" };
static const struct em_field F_LIVE_STOPPED = {
	.key = "stopped_ms", .json_prec = 3 };
static const struct em_field F_LIVE_SNAPSHOT = { .key = "snapshot_bytes" };
static const struct em_field F_LIVE_NO_STOP = { .key = "no_stop" };
static const struct em_field F_LIVE_UNSTOPPABLE = {
	.key = "unstoppable_threads" };

static void summary_live_json(const struct hw_session *s,
			      struct hw_emitter *e)
{
	const struct hw_live *l = s->target->live;
	if (!l)
		return;
	em_section_begin(e, &S_LIVE);
	em_kv(e, &F_LIVE_PID, ev_i64(l->pid));
	em_kv(e, &F_LIVE_STOPPED, ev_dbl(l->stopped_ms));
	em_kv(e, &F_LIVE_SNAPSHOT, ev_u64(l->snapshot_bytes));
	em_kv(e, &F_LIVE_NO_STOP, ev_bool(l->no_stop));
	em_kv(e, &F_LIVE_UNSTOPPABLE, ev_u64(l->unstoppable));
	em_section_end(e);
}

static void summary_live_text(const struct hw_session *s,
			      struct hw_emitter *e)
{
	const struct hw_live *l = s->target->live;
	char b[32];
	if (l->no_stop)
		em_notef(e, "%-24s pid %d, read while it ran (--no-stop): the "
			 "view may be torn; each thread was stopped alone for "
			 "its registers, at most %.3f ms", "live:", l->pid,
			 l->stopped_ms);
	else
		em_notef(e, "%-24s pid %d, stopped %.3f ms while %s of its "
			 "writable memory were copied, then let go", "live:",
			 l->pid, l->stopped_ms,
			 hw_human(b, sizeof b, l->snapshot_bytes));
}

/* ---- summary ----------------------------------------------------------- */

/* summary's lines: labels padded to 24 columns.  Where the two forms
   order their members differently, a member appears twice, once for each
   form (EM_TEXT_ONLY / EM_JSON_ONLY).  */
static const struct em_section SUMMARY_LAYOUT = { .label_width = 24 };

static const struct em_field F_ALLOCATOR = {
	.key = "allocator", .label = "allocator:" };
static const struct em_field F_VERSION = { .key = "version" };
static const struct em_field F_ARCH = {
	.key = "arch", .join = " (", .post = ")" };

/* Every allocator instance found, the walked one marked; --allocator N
   picks another.  Text: "1: ptmalloc 2.36 (x86_64) /lib/libc.so.6, holds
   1.7 MiB [walked]".  */
static const struct em_section S_INSTANCES = {
	.key = "instances", .title = "instances:", .flags = EM_S_LIST };
static const struct em_field F_INST_INDEX = { .key = "index", .post = ":" };
static const struct em_field F_INST_ALLOCATOR = { .key = "allocator" };
static const struct em_field F_INST_MODULE = { .key = "module" };
static const struct em_field F_INST_HELD = {
	.key = "held", .join = ", holds ", .form = EM_T_HUMAN };
static const struct em_field F_INST_SELECTED = {
	.key = "selected", .join = "", .yes = " [walked]", .no = "" };

static void summary_instances(const struct hw_session *s, struct hw_emitter *e)
{
	em_section_begin(e, &S_INSTANCES);
	for (size_t i = 0; i < s->ninstances; i++) {
		const struct hw_instance *in = &s->instances[i];
		em_item_begin(e);
		em_kv(e, &F_INST_INDEX, ev_u64(i + 1));
		em_kv(e, &F_INST_ALLOCATOR, ev_str(in->ops->name));
		em_kv(e, &F_VERSION, ev_str(in->version));
		em_kv(e, &F_ARCH, ev_str(in->arch->name));
		em_kv(e, &F_INST_MODULE, ev_text(ev_str(in->module),
						 in->module[0] ? NULL : "(no file)"));
		em_kv(e, &F_INST_HELD, ev_u64(in->held));
		em_kv(e, &F_INST_SELECTED, ev_bool(i == s->selected));
		em_item_end(e);
	}
	em_section_end(e);
}

/* "target: /abs/core (core of /path/prog)", and whether it is cut (JSON
   says "truncated" further down).  */
static const struct em_field F_TARGET = {
	.label = "target:", .only = EM_TEXT_ONLY };
static const struct em_field F_TARGET_PACKED = {
	.join = " (", .post = ")", .only = EM_TEXT_ONLY };
static const struct em_field F_TARGET_EXE = {
	.join = " (core of ", .post = ")", .only = EM_TEXT_ONLY };
static const struct em_field F_TARGET_PROCESS_EXE = {
	.join = " (", .post = ")", .only = EM_TEXT_ONLY };
static const struct em_field F_TARGET_CUT = {
	.join = "", .yes = " (truncated: some memory is missing)", .no = "",
	.only = EM_TEXT_ONLY };

static void summary_target(const struct hw_session *s, struct hw_emitter *e)
{
	const struct hw_target *t = s->target;
	if (t->live) {
		char pid[32];
		snprintf(pid, sizeof pid, "pid %d", t->live->pid);
		em_kv(e, &F_TARGET, ev_str(pid));
		em_kv(e, &F_TARGET_PROCESS_EXE, ev_str(t->exe ? t->exe : "?"));
		summary_live_text(s, e);
		return;
	}
	if (t->is_process) {   /* a debugger's live process */
		em_kv(e, &F_TARGET, ev_str(t->path));
		em_kv(e, &F_TARGET_PROCESS_EXE, ev_str(t->exe ? t->exe : "?"));
		return;
	}
	const char *path = s->core_path ? s->core_path : t->path;
	char *abs = path ? realpath(path, NULL) : NULL;
	const char *exe = s->exe ? s->exe : t->exe;
	em_kv(e, &F_TARGET, ev_str(abs ? abs : path ? path : "?"));
	if (t->packed) {   /* "(zstd, unpacked 1.2 GiB)" */
		char size[32], packed[64];
		snprintf(packed, sizeof packed, "%s, unpacked %s", t->packed,
			 hw_human(size, sizeof size, t->unpacked));
		em_kv(e, &F_TARGET_PACKED, ev_str(packed));
	}
	em_kv(e, &F_TARGET_EXE, exe ? ev_str(exe) : ev_absent());
	em_kv(e, &F_TARGET_CUT, ev_bool(t->truncated));
	free(abs);
}

/* What the core lacks: text near the top, JSON's "target_limits" near
   the end.  */
static const struct em_section S_CORE_LACKS = {
	.title = "core lacks:", .flags = EM_S_LIST, .only = EM_TEXT_ONLY };
static const struct em_section S_PROCESS_LACKS = {
	.title = "target lacks:", .flags = EM_S_LIST, .only = EM_TEXT_ONLY };
static const struct em_section S_TARGET_LIMITS = {
	.key = "target_limits", .flags = EM_S_LIST, .only = EM_JSON_ONLY };
static const struct em_field F_ELEMENT = { 0 };

static void emit_strings(struct hw_emitter *e, const struct em_section *list,
			 const char *const *v, size_t n)
{
	em_section_begin(e, list);
	for (size_t i = 0; i < n; i++)
		em_kv(e, &F_ELEMENT, ev_str(v[i]));
	em_section_end(e);
}

static const struct em_field F_THREADS_TEXT = {
	.label = "threads:", .only = EM_TEXT_ONLY };
static const struct em_field F_ARENAS = { .key = "arenas", .label = "arenas:" };
static const struct em_field F_THREADS_JSON = {
	.key = "threads", .only = EM_JSON_ONLY };

/* "in use:   12 chunks   1.5 MiB", JSON "used":{"count":12,"bytes":N}.  */
static const struct em_section S_USED = {
	.key = "used", .title = "in use:", .flags = EM_S_LINE };
static const struct em_section S_FREE = {
	.key = "free", .title = "free:", .flags = EM_S_LINE };
static const struct em_field F_BLOCK_COUNT = { .key = "count", .width = 19 };
static const struct em_field F_BLOCK_BYTES = {
	.key = "bytes", .width = 12, .form = EM_T_HUMAN };
/* The end of a line that text alone has ("  (partial)").  */
static const struct em_field F_TEXT_TAIL = { .join = "", .only = EM_TEXT_ONLY };
static const struct em_field F_OVERHEAD = {
	.key = "overhead", .label = "overhead:", .width = 32,
	.form = EM_T_HUMAN };
static const struct em_field F_LARGEST_FREE = {
	.key = "largest_free", .only = EM_JSON_ONLY };
/* summary --leaks: what `leaks` counts (definite and indirect are the
   leaks; possible apart); null without --leaks, not zero.  */
static const struct em_field F_LEAKS = { .key = "leaks", .only = EM_JSON_ONLY };
static const struct em_field F_LEAKS_TEXT = {
	.label = "leaks:", .width = 32, .form = EM_T_HUMAN,
	.only = EM_TEXT_ONLY };
static const struct em_field F_COUNT = { .key = "count" };
static const struct em_field F_BYTES = { .key = "bytes" };
static const struct em_section S_LEAK_KIND[] = {
	{ .key = "definite", .only = EM_JSON_ONLY },
	{ .key = "indirect", .only = EM_JSON_ONLY },
	{ .key = "possible", .only = EM_JSON_ONLY },
};

static void summary_leaks(const struct totals *t, struct hw_emitter *e,
			  const char *noun)
{
	if (!t->reach) {
		em_kv(e, &F_LEAKS, ev_null());
		return;
	}
	static const struct em_section S_LEAKS = {
		.key = "leaks", .only = EM_JSON_ONLY };
	const unsigned kinds[3] = { BM_UNREACHED, BM_INDIRECT, BM_POSSIBLE };
	uint64_t n = t->marked[BM_UNREACHED] + t->marked[BM_INDIRECT];
	uint64_t bytes = t->marked_bytes[BM_UNREACHED] +
			 t->marked_bytes[BM_INDIRECT];
	em_section_begin(e, &S_LEAKS);
	em_kv(e, &F_COUNT, ev_u64(n));
	em_kv(e, &F_BYTES, ev_u64(bytes));
	for (int k = 0; k < 3; k++) {
		em_section_begin(e, &S_LEAK_KIND[k]);
		em_kv(e, &F_COUNT, ev_u64(t->marked[kinds[k]]));
		em_kv(e, &F_BYTES, ev_u64(t->marked_bytes[kinds[k]]));
		em_section_end(e);
	}
	em_section_end(e);
	char tail[160], h[32];
	uint64_t np = t->marked[BM_POSSIBLE];
	snprintf(tail, sizeof tail, "  in %llu %s%s (%llu definite, %llu "
		 "indirect); possibly lost %s in %llu %s%s",
		 (unsigned long long)n, noun, n == 1 ? "" : "s",
		 (unsigned long long)t->marked[BM_UNREACHED],
		 (unsigned long long)t->marked[BM_INDIRECT],
		 hw_human(h, sizeof h, t->marked_bytes[BM_POSSIBLE]),
		 (unsigned long long)np, noun, np == 1 ? "" : "s");
	em_kv(e, &F_LEAKS_TEXT, ev_u64(bytes));
	em_kv(e, &F_TEXT_TAIL, ev_str(tail));
}
static const struct em_field F_FINDINGS = {
	.key = "findings", .label = "findings:" };
static const struct em_field F_FINDINGS_HINT = {
	.join = "", .yes = " (see 'heapwalk check')", .no = "",
	.only = EM_TEXT_ONLY };
static const struct em_field F_TRUNCATED = {
	.key = "truncated", .only = EM_JSON_ONLY };

/* The exact sizes holding the most memory in use (text: `sizes` has
   them all, by class or --exact, for both forms).  */
static const struct em_field TOP_COLS[] = {
	{ .label = "size", .join = "  ", .width = 10 },
	{ .label = "count", .width = 10 },
	{ .label = "bytes", .width = 12, .form = EM_T_HUMAN },
};
static const struct em_table TOP_TABLE = {
	.title = "top sizes in use:", .cols = TOP_COLS, .ncols = 3,
	.only = EM_TEXT_ONLY };

static void summary_top_classes(const struct totals *t, struct hw_emitter *e)
{
	struct size_class top[10];
	size_t ntop = 0;
	for (size_t i = 0; i < t->sizes.n; i++) {
		struct size_class sc = t->sizes.slots[i];
		size_t j = ntop < 10 ? ntop++ : 10;
		while (j > 0 && top[j - 1].used_bytes < sc.used_bytes) {
			if (j < 10)
				top[j] = top[j - 1];
			j--;
		}
		if (j < 10)
			top[j] = sc;
	}
	em_table_begin(e, &TOP_TABLE);
	for (size_t i = 0; i < ntop && top[i].used; i++) {
		const struct em_val row[] = { ev_u64(top[i].size),
					      ev_u64(top[i].used),
					      ev_u64(top[i].used_bytes) };
		em_row(e, row);
	}
	em_table_end(e);
}

static enum hw_status cmd_summary(struct cmd_ctx *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	struct totals t;
	const struct hw_reach *reach = NULL;
	for (int i = 1; i < c->argc; i++)
		if (strcmp(c->argv[i], "--leaks") != 0)
			return hw_error(s, HW_USAGE, "summary: unknown argument "
					"'%s' (--leaks adds the leak totals)",
					c->argv[i]);
	if (c->argc > 1 && !(reach = hw_reach_get(s)))
		return HW_BAD_TARGET;
	enum hw_status st = gather(s, &t, reach);
	if (st != HW_OK)
		return st;
	const char *limits[8];
	char missing[512];
	size_t nlimits = target_limits(s, limits, 8, missing, sizeof missing);
	/* ptmalloc counts chunks; jemalloc names its blocks itself.  */
	const char *noun = s->alloc->block_noun;
	const char *part = s->partial.places ? "  (partial)" : "";
	char a[32], b[32], n1[48], n2[48], free_tail[160];
	/* ptmalloc's top; jemalloc keeps unused pages as extents instead.
	   Top is summed over the arenas, so it may exceed the largest
	   single free chunk: the line says so.  */
	bool has_top = strcmp(s->alloc->name, "ptmalloc") == 0;
	snprintf(free_tail, sizeof free_tail, "  (%s%s%slargest %s %s)%s",
		 has_top ? "of which the arenas' top chunks " : "",
		 has_top ? hw_human(a, sizeof a, t.top_bytes) : "",
		 has_top ? "; " : "", noun ? "block" : "chunk",
		 hw_human(b, sizeof b, t.largest_free), part);

	em_doc_begin(e);
	em_section_begin(e, &SUMMARY_LAYOUT);
	em_kv(e, &F_ALLOCATOR, ev_str(s->alloc->name));
	em_kv(e, &F_VERSION, ev_str(s->alloc->version(s->alloc_state)));
	em_kv(e, &F_ARCH, ev_str(s->arch->name));
	summary_instances(s, e);
	summary_target(s, e);
	emit_strings(e, s->target->live || s->target->is_process
			    ? &S_PROCESS_LACKS : &S_CORE_LACKS,
		     limits, nlimits);
	if (!hw_emit_death(s, e)) {
		em_section_end(e);
		em_doc_end(e);
		free(t.sizes.slots);
		free(t.arenas);
		hw_maps_acc_free(&t.maps);
		return HW_BAD_TARGET;
	}
	em_kv(e, &F_THREADS_TEXT, ev_u64(s->target->nthreads));
	em_kv(e, &F_ARENAS, ev_u64(s->alloc->narenas(s->alloc_state)));
	em_kv(e, &F_THREADS_JSON, ev_u64(s->target->nthreads));
	summary_live_json(s, e);

	em_section_begin(e, &S_USED);
	em_kv(e, &F_BLOCK_COUNT, ev_text(ev_u64(t.used),
					 blocks(t.used, noun, n1, sizeof n1)));
	em_kv(e, &F_BLOCK_BYTES, ev_u64(t.used_bytes));
	em_kv(e, &F_TEXT_TAIL, ev_str(part));
	em_section_end(e);
	em_section_begin(e, &S_FREE);
	em_kv(e, &F_BLOCK_COUNT, ev_text(ev_u64(t.free),
					 blocks(t.free, noun, n2, sizeof n2)));
	em_kv(e, &F_BLOCK_BYTES, ev_u64(t.free_bytes));
	em_kv(e, &F_TEXT_TAIL, ev_str(free_tail));
	em_section_end(e);
	em_kv(e, &F_OVERHEAD, ev_u64(t.overhead));
	em_kv(e, &F_TEXT_TAIL, ev_str(part));
	em_kv(e, &F_LARGEST_FREE, ev_u64(t.largest_free));
	hw_emit_maps_line(s, e, &t.maps);
	summary_leaks(&t, e, noun ? "block" : "chunk");
	hw_emit_partial_line(s, e);
	em_kv(e, &F_FINDINGS, ev_u64(s->findings_total));
	em_kv(e, &F_FINDINGS_HINT, ev_bool(s->findings_total > 0));
	em_kv(e, &F_TRUNCATED, ev_bool(s->target->truncated));
	hw_emit_partial_members(s, e);
	emit_strings(e, &S_TARGET_LIMITS, limits, nlimits);
	s->alloc->summary(s->alloc_state, e);
	summary_top_classes(&t, e);
	em_section_end(e);
	em_doc_end(e);
	free(t.sizes.slots);
	free(t.arenas);
	return HW_OK;
}

/* One row of `sizes`: the usable sizes [min, c.size] and their counts;
   an exact row has min == c.size.  */
struct size_row {
	uint64_t min;
	struct size_class c;
};

/* The rows of `sizes`: the exact sizes (ascending) folded into the
   allocator's size classes, or left as they are.  Classes ascend with
   the size, so the sizes of one class are neighbours.  NULL when out of
   memory.  */
static struct size_row *size_rows(struct hw_session *s,
				  const struct size_table *t, bool exact,
				  size_t *nrows)
{
	struct size_row *rows = calloc(t->n ? t->n : 1, sizeof *rows);
	if (!rows)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct size_class *sc = &t->slots[i];
		uint64_t min = sc->size, size = sc->size;
		if (!exact && s->alloc->size_class)
			size = s->alloc->size_class(s->alloc_state, sc->size,
						    &min);
		if (n > 0 && rows[n - 1].c.size == size) {
			class_add(&rows[n - 1].c, sc);
			continue;
		}
		rows[n].min = min;
		rows[n].c = *sc;
		rows[n].c.size = size;
		n++;
	}
	*nrows = n;
	return rows;
}

/* sizes: one row per class, the allocator's classes ("min-size", bytes
   in human units) or every exact size (bytes in full).  */
static const struct em_field CLASS_COLS[] = {
	{ .key = "size", .label = "size (class)", .width = 23 },
	{ .key = "min", .only = EM_JSON_ONLY },
	{ .key = "used", .label = "used", .width = 10 },
	{ .key = "used_bytes", .label = "used bytes", .width = 12,
	  .form = EM_T_HUMAN },
	{ .key = "free", .label = "free", .width = 10 },
	{ .key = "free_bytes", .label = "free bytes", .width = 12,
	  .form = EM_T_HUMAN },
	{ .key = "cached", .only = EM_JSON_ONLY },
	{ .key = "cached_bytes", .only = EM_JSON_ONLY },
};
static const struct em_field EXACT_COLS[] = {
	{ .key = "size", .label = "size", .width = 12 },
	{ .key = "min", .only = EM_JSON_ONLY },
	{ .key = "used", .label = "used", .width = 10 },
	{ .key = "used_bytes", .label = "used bytes", .width = 14 },
	{ .key = "free", .label = "free", .width = 10 },
	{ .key = "free_bytes", .label = "free bytes", .width = 14 },
	{ .key = "cached", .only = EM_JSON_ONLY },
	{ .key = "cached_bytes", .only = EM_JSON_ONLY },
};
static const struct em_table CLASS_TABLE = {
	.key = "classes", .cols = CLASS_COLS, .ncols = 8 };
static const struct em_table EXACT_TABLE = {
	.key = "classes", .cols = EXACT_COLS, .ncols = 8 };

/* A row's values; `size` names the row in text ("total", "17-24").  */
static void size_row_vals(struct em_val *v, struct em_val size, uint64_t min,
			  bool with_min, const struct size_class *c)
{
	v[0] = size;
	v[1] = with_min ? ev_u64(min) : ev_absent();
	v[2] = ev_u64(c->used);
	v[3] = ev_u64(c->used_bytes);
	v[4] = ev_u64(c->free);
	v[5] = ev_u64(c->free_bytes);
	v[6] = ev_u64(c->cached);
	v[7] = ev_u64(c->cached_bytes);
}

/* sizes --json: the allocator and each arena's totals, what `diff`
   needs of a saved base (text has them in `arenas`).  */
static const struct em_field F_SIZES_ALLOCATOR = {
	.key = "allocator", .only = EM_JSON_ONLY };
static const struct em_field ARENA_TOTAL_COLS[] = {
	{ .key = "arena" }, { .key = "addr" }, { .key = "used" },
	{ .key = "used_bytes" }, { .key = "free" }, { .key = "free_bytes" },
};
static const struct em_table ARENA_TOTAL_TABLE = {
	.key = "arenas", .cols = ARENA_TOTAL_COLS, .ncols = 6,
	.only = EM_JSON_ONLY };

/* The arena of slot i (index + 1) and its address where the walker
   knows it.  */
static uint64_t slot_arena_addr(struct hw_session *s, size_t i)
{
	if (!i || !s->alloc->arena_addr)
		return 0;
	return s->alloc->arena_addr(s->alloc_state, (int32_t)(i - 1));
}

static void emit_arena_totals(struct hw_session *s, struct hw_emitter *e,
			      const struct totals *t)
{
	em_kv(e, &F_SIZES_ALLOCATOR, ev_str(s->alloc->name));
	em_table_begin(e, &ARENA_TOTAL_TABLE);
	for (size_t i = 0; i < t->narenas; i++) {
		const struct arena_count *a = &t->arenas[i];
		if (!a->used && !a->free)
			continue;
		uint64_t addr = slot_arena_addr(s, i);
		const struct em_val v[] = {
			ev_i64((int64_t)i - 1),
			addr ? ev_addr(addr) : ev_absent(),
			ev_u64(a->used), ev_u64(a->used_bytes),
			ev_u64(a->free), ev_u64(a->free_bytes),
		};
		em_row(e, v);
	}
	em_table_end(e);
}

static enum hw_status cmd_sizes(struct cmd_ctx *c)
{
	struct hw_emitter *e = c->e;
	bool exact = false, by_type = false;
	for (int i = 1; i < c->argc; i++) {
		if (strcmp(c->argv[i], "--by=type") == 0) {
			by_type = true;
			continue;
		}
		if (strcmp(c->argv[i], "--exact") != 0)
			return hw_error(c->s, HW_USAGE, "sizes: unknown "
					"argument '%s' (--exact, --by=type)",
					c->argv[i]);
		exact = true;
	}
	if (by_type && exact)
		return hw_error(c->s, HW_USAGE, "sizes: --by=type and --exact "
				"do not go together");
	if (by_type)
		return hw_report_sizes_by_type(c->s, e);
	struct totals t;
	enum hw_status st = gather(c->s, &t, NULL);
	if (st != HW_OK)
		return st;
	hw_maps_acc_free(&t.maps);
	size_t n;
	struct size_row *rows = size_rows(c->s, &t.sizes, exact, &n);
	free(t.sizes.slots);
	if (!rows) {
		free(t.arenas);
		return hw_error(c->s, HW_BAD_TARGET, "out of memory");
	}
	struct em_val v[8];
	em_doc_begin(e);
	em_table_begin(e, exact ? &EXACT_TABLE : &CLASS_TABLE);
	for (size_t i = 0; i < n; i++) {
		const struct size_row *r = &rows[i];
		char label[48];
		struct em_val size = ev_u64(r->c.size);
		if (r->min != r->c.size && !exact) {
			snprintf(label, sizeof label, "%llu-%llu",
				 (unsigned long long)r->min,
				 (unsigned long long)r->c.size);
			size = ev_text(size, label);
		}
		size_row_vals(v, size, r->min, !exact, &r->c);
		em_row(e, v);
	}
	/* The total is the text table's last line; JSON readers add up.  */
	struct size_class total = { .used = t.used, .used_bytes = t.used_bytes,
				    .free = t.free, .free_bytes = t.free_bytes };
	size_row_vals(v, ev_text(ev_absent(), "total"), 0, false, &total);
	em_row_as(e, NULL, v, EM_TEXT_ONLY);
	em_table_end(e);
	emit_arena_totals(c->s, e, &t);
	free(t.arenas);
	hw_emit_partial(c->s, e);
	em_doc_end(e);
	free(rows);
	return HW_OK;
}

void hw_size_profile_free(struct hw_size_profile *p)
{
	free(p->classes);
	free(p->arenas);
	memset(p, 0, sizeof *p);
}

enum hw_status hw_size_profile(struct hw_session *s, struct hw_size_profile *p)
{
	memset(p, 0, sizeof *p);
	struct totals t;
	enum hw_status st = gather(s, &t, NULL);
	if (st != HW_OK)
		return st;
	hw_maps_acc_free(&t.maps);
	size_t n = 0, na = 0;
	struct size_row *rows = size_rows(s, &t.sizes, false, &n);
	free(t.sizes.slots);
	for (size_t i = 0; i < t.narenas; i++)
		na += t.arenas[i].used || t.arenas[i].free;
	p->classes = calloc(n ? n : 1, sizeof *p->classes);
	p->arenas = calloc(na ? na : 1, sizeof *p->arenas);
	if (!rows || !p->classes || !p->arenas) {
		free(rows);
		free(t.arenas);
		hw_size_profile_free(p);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		p->classes[i] = (struct hw_class_total){
			.min = rows[i].min, .max = rows[i].c.size,
			.used = rows[i].c.used, .used_bytes = rows[i].c.used_bytes,
			.free = rows[i].c.free, .free_bytes = rows[i].c.free_bytes };
	p->nclasses = n;
	for (size_t i = 0; i < t.narenas; i++) {
		const struct arena_count *a = &t.arenas[i];
		if (!a->used && !a->free)
			continue;
		p->arenas[p->narenas++] = (struct hw_arena_total){
			.arena = (int32_t)i - 1, .addr = slot_arena_addr(s, i),
			.used = a->used, .used_bytes = a->used_bytes,
			.free = a->free, .free_bytes = a->free_bytes };
	}
	p->used = t.used;
	p->used_bytes = t.used_bytes;
	p->free = t.free;
	p->free_bytes = t.free_bytes;
	free(rows);
	free(t.arenas);
	return HW_OK;
}

/* ---- chunks ------------------------------------------------------------ */

/* A block as `chunks` and `chunk ADDR` show it: the first column is chunk
   ADDR's (which of the three blocks the row is), `chunks` starts at the
   second.  ptmalloc blocks are chunks (header address and size);
   jemalloc's name their extent and size index in JSON, and show the
   block's own start and size in text.  */
static const struct em_field BLOCK_COLS[] = {
	{ .width = -6, .only = EM_TEXT_ONLY },
	{ .key = "addr", .label = "address", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "size", .label = "size", .width = 12 },
	{ .key = "state", .label = "state", .join = "  ", .width = -5 },
	{ .key = "where", .label = "where", .width = -9 },
	{ .key = "arena", .label = "arena", .width = 5 },
	{ .key = "extent", .only = EM_JSON_ONLY },
	{ .key = "szind", .only = EM_JSON_ONLY },
	{ .key = "chunk", .label = "chunk", .join = "  ", .width = -18,
	  .form = EM_T_HEX0, .digits = 16 },
	{ .key = "chunk_size", .label = "chunk size", .width = 10 },
	{ .key = "orphaned", .only = EM_JSON_ONLY },
};
#define NBLOCK_COLS (sizeof BLOCK_COLS / sizeof BLOCK_COLS[0] - 1)

static void block_vals(struct em_val *v, const struct hw_chunk *ch)
{
	bool extent = ch->extent != 0;
	uint8_t chunk_only = extent ? EM_TEXT_ONLY : EM_BOTH;
	v[0] = ev_addr(ch->addr);
	v[1] = ev_u64(ch->size);
	v[2] = ev_str(ch->used ? "used" : "free");
	v[3] = ev_str(hw_where_name((enum hw_where)ch->where));
	v[4] = ev_i64(ch->arena);
	v[5] = extent ? ev_addr(ch->extent) : ev_absent();
	v[6] = extent ? ev_u64(ch->szind) : ev_absent();
	v[7] = (struct em_val){ .kind = EM_K_ADDR, .only = chunk_only,
				.u = ch->chunk };
	v[8] = (struct em_val){ .kind = EM_K_U64, .only = chunk_only,
				.u = ch->chunk_size };
	/* Free in a list that no longer reaches it (damage): only then.  */
	v[9] = ch->orphan ? ev_bool(true) : ev_absent();
}

struct chunks_walk {
	struct hw_emitter *e;
	int filter;     /* 0 all, 1 used, 2 free */
};

static bool print_chunk(void *cookie, const struct hw_chunk *ch)
{
	struct chunks_walk *w = cookie;
	if ((w->filter == 1 && !ch->used) || (w->filter == 2 && ch->used))
		return true;
	struct em_val v[NBLOCK_COLS];
	block_vals(v, ch);
	em_row(w->e, v);
	return !em_failed(w->e);
}

static enum hw_status cmd_chunks(struct cmd_ctx *c)
{
	struct chunks_walk w = { c->e, 0 };
	for (int i = 1; i < c->argc; i++) {
		int f = !strcmp(c->argv[i], "--used") ? 1
			: !strcmp(c->argv[i], "--free") ? 2 : 0;
		if (!f)
			return hw_error(c->s, HW_USAGE, "chunks: unknown "
					"argument '%s' (--used or --free)",
					c->argv[i]);
		if (w.filter && w.filter != f)
			return hw_error(c->s, HW_USAGE, "chunks: --used and "
					"--free exclude each other (give "
					"neither for every chunk)");
		w.filter = f;
	}
	/* The last two headers name what holds the block: ptmalloc's
	   chunk, jemalloc's extent (a slab of regions, or a large one).  */
	struct em_field cols[NBLOCK_COLS];
	memcpy(cols, BLOCK_COLS + 1, sizeof cols);
	if (c->s->alloc->block_noun) {
		cols[7].label = "extent";
		cols[8].label = "extent size";
	}
	const struct em_table table = { .cols = cols, .ncols = NBLOCK_COLS,
					.flags = EM_TB_LINES };
	em_table_begin(c->e, &table);
	hw_walk_chunks_piped(c->s, print_chunk, &w);
	em_table_end(c->e);
	/* JSON Lines has no place for a trailer; summary --json says it.  */
	if (!em_failed(c->e) && c->s->partial.places)
		em_notef(c->e, "(partial, first at 0x%llx: %s)",
			 (unsigned long long)c->s->partial.addr,
			 c->s->partial.why);
	return HW_OK;
}

static enum hw_status cmd_arenas(struct cmd_ctx *c)
{
	enum hw_status st = check_nargs(c, 0, NULL);
	if (st != HW_OK)
		return st;
	return c->s->alloc->arenas(c->s->alloc_state, c->e);
}

static enum hw_status cmd_bins(struct cmd_ctx *c)
{
	enum hw_status st = check_nargs(c, 1, "one KIND at most");
	if (st != HW_OK)
		return st;
	return c->s->alloc->bins(c->s->alloc_state, c->e,
				 c->argc > 1 ? c->argv[1] : NULL);
}

/* ---- chunk ADDR -------------------------------------------------------- */

struct lookup {
	uint64_t addr;
	struct hw_chunk prev, hit, next;
	int state;      /* 0 searching, 1 hit (want next), 2 done */
	bool have_prev, have_next;
};

/* Two blocks are neighbours only when one ends where the other starts:
   the walk goes on to the next heap, or to an mmapped chunk, after a
   heap's last chunk (or after damage that cut the heap short).  */
static bool adjacent(const struct hw_chunk *a, const struct hw_chunk *b)
{
	return a->chunk + a->chunk_size == b->chunk &&
	       a->where != HW_WHERE_MMAPPED && b->where != HW_WHERE_MMAPPED;
}

static bool lookup_chunk(void *cookie, const struct hw_chunk *ch)
{
	struct lookup *l = cookie;
	if (l->state == 1) {
		l->have_next = adjacent(&l->hit, ch);
		if (l->have_next)
			l->next = *ch;
		l->state = 2;
		return false;
	}
	if (l->addr >= ch->chunk && l->addr - ch->chunk < ch->chunk_size) {
		l->hit = *ch;
		l->have_prev = l->have_prev && adjacent(&l->prev, ch);
		l->state = 1;
		return true;
	}
	l->prev = *ch;
	l->have_prev = true;
	return true;
}

/* The block and its neighbours: JSON names them (chunk, prev, next; null
   for none), text lists them in address order under a header (cmd_chunk's
   table, BLOCK_COLS with the allocator's names).  */
static const struct em_field F_QUERY = { .key = "query", .only = EM_JSON_ONLY };

/* The same with the text's name of the row (jemalloc's "region").  */
static void lookup_row_as(struct hw_emitter *e, const char *key,
			  const char *label, const struct hw_chunk *ch,
			  bool have, enum em_only only)
{
	if (!have) {
		const struct em_field none = { .key = key, .only = EM_JSON_ONLY };
		em_kv(e, &none, ev_null());
		return;
	}
	struct em_val v[NBLOCK_COLS + 1];
	v[0] = ev_str(label);
	block_vals(v + 1, ch);
	em_row_as(e, key, v, only);
}

static void lookup_row(struct hw_emitter *e, const char *key,
		       const struct hw_chunk *ch, bool have, enum em_only only)
{
	lookup_row_as(e, key, key, ch, have, only);
}


/* An address as people paste it from gdb, /proc/PID/maps or heapwalk's
   own output: hexadecimal, with or without 0x; never decimal or octal.  */
static bool parse_address(const char *a, uint64_t *out)
{
	if (a[0] == '0' && (a[1] == 'x' || a[1] == 'X'))
		a += 2;
	if (!*a || strlen(a) > 16)
		return false;
	uint64_t v = 0;
	for (; *a; a++) {
		int d = *a >= '0' && *a <= '9' ? *a - '0'
			: *a >= 'a' && *a <= 'f' ? *a - 'a' + 10
			: *a >= 'A' && *a <= 'F' ? *a - 'A' + 10 : -1;
		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return true;
}

static enum hw_status cmd_chunk(struct cmd_ctx *c)
{
	if (c->argc != 2)
		return hw_error(c->s, HW_USAGE, "chunk: expected one address");
	struct lookup l = { 0 };
	if (!parse_address(c->argv[1], &l.addr))
		return hw_error(c->s, HW_USAGE, "chunk: '%s' is not an address "
				"(hexadecimal, with or without 0x)", c->argv[1]);
	if (c->s->alloc->chunks_around)
		c->s->alloc->chunks_around(c->s->alloc_state, l.addr,
					   lookup_chunk, &l);
	else
		c->s->alloc->chunks(c->s->alloc_state, lookup_chunk, &l);
	struct hw_emitter *e = c->e;
	bool found = l.state != 0;
	em_doc_begin(e);
	em_kv(e, &F_QUERY, ev_addr(l.addr));
	if (!found) {
		em_notef(e, "0x%llx is not inside any heap chunk",
			 (unsigned long long)l.addr);
		lookup_row(e, "chunk", NULL, false, EM_BOTH);
		lookup_row(e, "prev", NULL, false, EM_BOTH);
		lookup_row(e, "next", NULL, false, EM_BOTH);
		em_doc_end(e);
		return HW_OK;
	}
	/* ptmalloc's blocks are chunks; jemalloc's are slab regions and
	   extents, and their container is the extent.  */
	bool je = c->s->alloc->block_noun != NULL;
	const char *unit = !je ? "chunk"
			   : l.hit.where == HW_WHERE_SLAB ||
			     l.hit.where == HW_WHERE_SLAB_FREE ||
			     l.hit.where == HW_WHERE_TCACHE ? "region" : "extent";
	if (l.addr < l.hit.addr)
		em_notef(e, "0x%llx is in the header of the %s %s at user "
			 "address 0x%llx", (unsigned long long)l.addr,
			 l.hit.used ? "used" : "free", unit,
			 (unsigned long long)l.hit.addr);
	else
		em_notef(e, "0x%llx is %llu bytes into the %s %s at %s0x%llx",
			 (unsigned long long)l.addr,
			 (unsigned long long)(l.addr - l.hit.addr),
			 l.hit.used ? "used" : "free", unit,
			 je ? "" : "user address ",
			 (unsigned long long)l.hit.addr);
	/* JSON puts the block first, text between its neighbours.  */
	struct em_field cols[NBLOCK_COLS + 1];
	memcpy(cols, BLOCK_COLS, sizeof cols);
	if (je) {
		cols[8].label = "extent";
		cols[9].label = "extent size";
	}
	const struct em_table lookup_table = {
		.cols = cols, .ncols = NBLOCK_COLS + 1 };
	em_table_begin(e, &lookup_table);
	lookup_row(e, "chunk", &l.hit, true, EM_JSON_ONLY);
	lookup_row(e, "prev", &l.prev, l.have_prev, EM_BOTH);
	lookup_row_as(e, "chunk", unit, &l.hit, true, EM_TEXT_ONLY);
	lookup_row(e, "next", &l.next, l.have_next, EM_BOTH);
	em_table_end(e);
	if (l.hit.where == HW_WHERE_MMAPPED)
		em_note(e, "(an mmapped chunk is a mapping of its own: it has "
			"no neighbouring chunks)");
	else if (!l.have_prev || !l.have_next)
		em_notef(e, "(no %s%s%s: %s)", l.have_prev ? "" : "previous",
			 !l.have_prev && !l.have_next ? " or " : "",
			 l.have_next ? "" : "next",
			 c->s->partial.places ? "the walk of this heap stopped "
			 "at damage; see 'heapwalk check'" : je ? "the block "
			 "is at the edge of its extent's range" : "the chunk "
			 "is at the edge of its heap");
	em_doc_end(e);
	return HW_OK;
}

/* ---- check ------------------------------------------------------------- */

static bool count_only(void *cookie, const struct hw_chunk *ch)
{
	(void)ch;
	(*(uint64_t *)cookie)++;
	return true;
}

static int finding_cmp(const void *a, const void *b)
{
	const struct hw_finding *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Each finding on a line: "0x...: [note: ]problem".  */
static const struct em_field FINDING_COLS[] = {
	{ .key = "addr", .form = EM_T_HEX0, .digits = 16, .post = ":" },
	{ .key = "problem", .join = "" },
	{ .key = "severity", .join = " " },
};
static const uint8_t FINDING_TEXT_ORDER[] = { 0, 2, 1 };
static const struct em_table FINDINGS_TABLE = {
	.key = "findings", .cols = FINDING_COLS, .ncols = 3,
	.text_order = FINDING_TEXT_ORDER, .ntext = 3,
	.flags = EM_TB_NO_HEADER };
/* "N chunks checked, N problems found".  */
static const struct em_field F_CHECKED = {
	.key = "chunks", .noun = "chunk", .post = " checked" };
static const struct em_field F_CORRUPTIONS = {
	.key = "corruptions", .join = ", ", .noun = "problem",
	.post = " found" };

static enum hw_status cmd_check(struct cmd_ctx *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	uint64_t n = 0;
	enum hw_status st = check_nargs(c, 0, NULL);
	if (st != HW_OK)
		return st;
	s->alloc->chunks(s->alloc_state, count_only, &n);
	if (s->alloc->check)
		s->alloc->check(s->alloc_state);
	em_doc_begin(e);
	/* Before the findings are sorted: glibc's own abort is one.  */
	if (!hw_emit_death(s, e)) {
		em_doc_end(e);
		return HW_BAD_TARGET;
	}
	if (s->nfindings)
		qsort(s->findings, s->nfindings, sizeof *s->findings,
		      finding_cmp);
	em_table_begin(e, &FINDINGS_TABLE);
	for (size_t i = 0; i < s->nfindings; i++) {
		const struct hw_finding *f = &s->findings[i];
		const struct em_val v[] = {
			ev_addr(f->addr), ev_str(f->problem),
			f->note ? ev_text(ev_str("note"), "note: ") : ev_absent(),
		};
		em_row(e, v);
	}
	em_table_end(e);
	if (s->nfindings < s->findings_total)
		em_notef(e, "(%llu more findings not kept)",
			 (unsigned long long)(s->findings_total - s->nfindings));
	em_kv(e, &F_CHECKED, ev_u64(n));
	em_kv(e, &F_CORRUPTIONS, ev_u64(s->findings_total));
	/* Text lists the findings; the walk's partial mark is in JSON.  */
	hw_emit_partial_members(s, e);
	em_doc_end(e);
	return s->findings_total ? HW_CORRUPT : HW_OK;
}

static enum hw_status cmd_frag(struct cmd_ctx *c)
{
	enum hw_status st = check_nargs(c, 0, NULL);
	return st != HW_OK ? st : hw_report_frag(c->s, c->e);
}

static enum hw_status cmd_maps(struct cmd_ctx *c)
{
	return hw_report_maps(c->s, c->e, c->argc, c->argv);
}

static enum hw_status cmd_map(struct cmd_ctx *c)
{
	return hw_report_map(c->s, c->e, c->argc, c->argv);
}

static enum hw_status cmd_diff(struct cmd_ctx *c)
{
	return hw_report_diff(c->s, c->e, c->argc, c->argv);
}

static enum hw_status cmd_prof(struct cmd_ctx *c)
{
	return hw_report_prof(c->s, c->e, c->argc, c->argv);
}

static enum hw_status cmd_leaks(struct cmd_ctx *c)
{
	return hw_report_leaks(c->s, c->e, c->argc, c->argv);
}

/* refs ADDR, why ADDR: one address, as `chunk` takes it.  */
static enum hw_status cmd_refs_why(struct cmd_ctx *c, bool why)
{
	const char *name = why ? "why" : "refs";
	uint64_t addr;
	if (c->argc != 2)
		return hw_error(c->s, HW_USAGE, "%s: expected one address", name);
	if (!parse_address(c->argv[1], &addr))
		return hw_error(c->s, HW_USAGE, "%s: '%s' is not an address "
				"(hexadecimal, with or without 0x)", name,
				c->argv[1]);
	return why ? hw_report_why(c->s, c->e, addr)
		   : hw_report_refs(c->s, c->e, addr);
}

static enum hw_status cmd_refs(struct cmd_ctx *c)
{
	return cmd_refs_why(c, false);
}

static enum hw_status cmd_why(struct cmd_ctx *c)
{
	return cmd_refs_why(c, true);
}

/* ---- the table --------------------------------------------------------- */

/* A command's option as help shows it: its spelling (with its
   argument) and what it does.  */
struct command_opt {
	const char *spelling;
	const char *help;
};

struct command {
	const char *name;
	enum hw_status (*run)(struct cmd_ctx *c);
	const char *args;         /* operands and options, as in a usage
				     line ("" when none) */
	const char *summary;      /* what it does, one line */
	const struct command_opt *opts;   /* ends with { NULL } */
	const char *example;      /* one command line, after "heapwalk " */
	unsigned needs;           /* HW_NEED_* */
};

#define NEED_WALK (HW_NEED_LISTS | HW_NEED_CHUNKS)

static const struct command_opt no_opts[] = { { NULL, NULL } };
static const struct command_opt summary_opts[] = {
	{ "--leaks", "count the leaks too (runs leaks' reachability scan)" },
	{ NULL, NULL } };
static const struct command_opt bins_opts[] = {
	{ "KIND", "one kind of list: ptmalloc tcache, fast, unsorted, small, "
		  "large; jemalloc small, large, tcache" },
	{ NULL, NULL } };
static const struct command_opt chunks_opts[] = {
	{ "--used", "only the chunks in use" },
	{ "--free", "only the free chunks" },
	{ NULL, NULL } };
static const struct command_opt sizes_opts[] = {
	{ "--exact", "one row per exact chunk size instead of per size "
		     "class" },
	{ "--by=type", "per C++ class, named by the vtable each block "
		       "starts with" },
	{ NULL, NULL } };
static const struct command_opt addr_opts[] = {
	{ "ADDR", "an address anywhere in the block (hexadecimal, with or "
		  "without 0x, as gdb prints it)" },
	{ NULL, NULL } };
static const struct command_opt leaks_opts[] = {
	{ "--reachable", "list the still reachable blocks too" },
	{ NULL, NULL } };
static const struct command_opt diff_opts[] = {
	{ "BASE", "an earlier core of the same program, or a file saved from "
		  "sizes --json, sizes --by=type --json or leaks --json" },
	{ "--leaks", "the leaks that are new since BASE" },
	{ NULL, NULL } };
static const struct command_opt maps_opts[] = {
	{ "--mappings", "one row per mapping instead of per kind" },
	{ NULL, NULL } };
static const struct command_opt map_opts[] = {
	{ "-o FILE", "write the SVG to FILE (default: standard output)" },
	{ NULL, NULL } };
static const struct command_opt prof_opts[] = {
	{ "--format=FORMAT", "text (sites ranked, the default), heap_v2 (the "
			     "file prof.dump writes, for jeprof), collapsed "
			     "(flame graphs), pprof (gzipped profile.proto)" },
	{ "--collapsed", "the same as --format=collapsed" },
	{ "-o FILE", "write to FILE; without --format the file is heap_v2" },
	{ "--top=N", "only the first N sites" },
	{ "--objects", "rank by objects instead of bytes" },
	{ "--lines", "name source lines, not just functions" },
	{ "--base OLD", "what grew since OLD (a core or a heap_v2 file)" },
	{ "--recent", "the last sampled allocations and their frees "
		      "(jemalloc 5.3's prof_recent)" },
	{ NULL, NULL } };

static const struct command commands[] = {
	{ "summary", cmd_summary, "[--leaks]", "allocator, arenas, totals in "
	  "use / free / overhead", summary_opts, "core summary --leaks",
	  NEED_WALK },
	{ "arenas", cmd_arenas, "", "each arena with its heaps and totals",
	  no_opts, "core arenas", NEED_WALK },
	{ "bins", cmd_bins, "[KIND]", "free lists (ptmalloc: tcache fast "
	  "unsorted small large; jemalloc: small large tcache)", bins_opts,
	  "core bins tcache", HW_NEED_LISTS },
	{ "chunks", cmd_chunks, "[--used|--free]", "every chunk", chunks_opts,
	  "core chunks --free --json", NEED_WALK },
	{ "sizes", cmd_sizes, "[--exact|--by=type]", "per size class (or C++ "
	  "class): count and bytes in use and free", sizes_opts,
	  "core sizes --by=type", NEED_WALK },
	{ "chunk", cmd_chunk, "ADDR", "the chunk containing ADDR and its "
	  "neighbours", addr_opts, "core chunk 0x55d4c2a1b2c0",
	  HW_NEED_AROUND },
	{ "check", cmd_check, "", "heap consistency: every problem with its "
	  "address", no_opts, "core check", NEED_WALK },
	{ "frag", cmd_frag, "", "free memory and fragmentation per arena",
	  no_opts, "core frag", NEED_WALK },
	{ "leaks", cmd_leaks, "[--reachable]", "blocks in use that nothing "
	  "reachable points to", leaks_opts, "--pid 1234 leaks", NEED_WALK },
	{ "refs", cmd_refs, "ADDR", "every root and block that points into "
	  "the block holding ADDR", addr_opts, "core refs 0x55d4c2a1b2c0",
	  NEED_WALK },
	{ "why", cmd_why, "ADDR", "the shortest chain of pointers from a root "
	  "to the block holding ADDR", addr_opts, "core why 0x55d4c2a1b2c0",
	  NEED_WALK },
	{ "diff", cmd_diff, "BASE [--leaks]", "what grew since BASE (a core "
	  "of the same program, or its saved sizes, sizes --by=type, leaks "
	  "--json), per size class, arena, C++ class; new leaks", diff_opts,
	  "core.2 diff core.1", NEED_WALK },
	{ "maps", cmd_maps, "[--mappings]", "the writable memory by what "
	  "holds it: heap, stacks, module data, other mappings", maps_opts,
	  "core maps", NEED_WALK },
	{ "map", cmd_map, "[-o FILE]", "a picture of the heap (SVG): each "
	  "arena's heaps or extents in address order, coloured by state",
	  map_opts, "core map -o heap.svg", NEED_WALK },
	{ "prof", cmd_prof, "[--format=FORMAT] [-o FILE] [--top=N] "
	  "[--objects] [--lines] [--base OLD] [--recent]", "jemalloc's heap "
	  "profile (prof:true) from the target: allocation sites ranked, the "
	  "file prof.dump writes, or pprof's; --base: what grew; --recent: "
	  "the last sampled allocations and their frees", prof_opts,
	  "core prof --top=20", HW_NEED_PROFILE },
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

const char *hw_command_name(size_t i)
{
	return i < NCOMMANDS ? commands[i].name : NULL;
}

const char *hw_command_help(size_t i)
{
	return i < NCOMMANDS ? commands[i].summary : NULL;
}

const char *hw_command_usage(size_t i)
{
	return i < NCOMMANDS ? commands[i].args : NULL;
}

const char *hw_command_option(size_t i, size_t k, const char **help)
{
	if (i >= NCOMMANDS)
		return NULL;
	const struct command_opt *o = commands[i].opts;
	for (size_t n = 0; n < k; n++)
		if (!o[n].spelling)
			return NULL;
	if (help)
		*help = o[k].help;
	return o[k].spelling;
}

const char *hw_command_example(size_t i)
{
	return i < NCOMMANDS ? commands[i].example : NULL;
}

unsigned hw_command_needs(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return commands[i].needs;
	return 0;
}

enum hw_status hw_session_run(hw_session *s, int argc, char *const argv[],
			      const struct hw_output *out)
{
	const char *name = argc > 0 ? argv[0] : "summary";
	const struct command *cmd = NULL;
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			cmd = &commands[i];
	if (!cmd)
		return hw_error(s, HW_USAGE, "unknown command '%s'", name);
	if (!s->alloc)
		return hw_error(s, HW_NO_ALLOCATOR, "no allocator was found");
	struct hw_emitter *e = em_open(out);
	if (!e)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	char *const dflt[] = { (char *)"summary", NULL };
	struct cmd_ctx c = { s, e, argc > 0 ? argc : 1, argc > 0 ? argv : dflt };
	enum hw_status st = cmd->run(&c);
	if (!em_close(e) && st == HW_OK)
		st = hw_error(s, HW_BAD_TARGET, "write error on output");
	if (atomic_load(&s->oom) || hw_cache_oom(s->target->cache))
		st = hw_error(s, HW_BAD_TARGET, "out of memory: the walk could "
			      "not keep track of the heap; what was printed is "
			      "incomplete");
	return st;
}

/* commands.c - THE command table, shared by the CLI and the gdb plugin.
 *
 * Each command renders one report through the emitter, in text or JSON.
 * Reports that are the same for every allocator (summary, chunks, sizes,
 * chunk, check, frag) are written here against the walker interface;
 * arenas and bins are the walker's own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../target/target.h"
#include "../arch/arch.h"
#include "commands.h"
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
};

static bool add_total(void *cookie, const struct hw_chunk *c)
{
	struct totals *t = cookie;
	/* Unused jemalloc extents are page reserves, not free blocks (as in
	   frag); the allocator's own summary lines show them.  */
	if (c->where == HW_WHERE_DIRTY || c->where == HW_WHERE_MUZZY ||
	    c->where == HW_WHERE_RETAINED)
		return true;
	struct size_class *sc = size_slot(&t->sizes, c->size);
	if (c->used) {
		t->used++;
		t->used_bytes += c->size;
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
	return !t->sizes.oom;
}

static int class_cmp(const void *a, const void *b)
{
	const struct size_class *x = a, *y = b;
	uint64_t sx = x->size == ~(uint64_t)0 ? 0 : x->size;
	uint64_t sy = y->size == ~(uint64_t)0 ? 0 : y->size;
	return sx < sy ? -1 : sx > sy;
}

#define GATHER_THREADS 2

/* Add u's counts into t (both still in their walk form).  */
static void merge_totals(struct totals *t, struct totals *u)
{
	t->used += u->used;
	t->used_bytes += u->used_bytes;
	t->free += u->free;
	t->free_bytes += u->free_bytes;
	t->overhead += u->overhead;
	t->top_bytes += u->top_bytes;
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
}

/* Walk everything once (in threads when the walker can); the classes end
   up sorted and packed.  */
static enum hw_status gather(struct hw_session *s, struct totals *t)
{
	struct totals extra[GATHER_THREADS - 1];
	void *cookies[GATHER_THREADS] = { t };
	memset(t, 0, sizeof *t);
	memset(extra, 0, sizeof extra);
	t->sizes.small = calloc(SMALL_SIZES, sizeof *t->sizes.small);
	bool oom = !t->sizes.small;
	for (unsigned k = 1; k < GATHER_THREADS; k++) {
		extra[k - 1].sizes.small = calloc(SMALL_SIZES,
						  sizeof *t->sizes.small);
		oom |= !extra[k - 1].sizes.small;
		cookies[k] = &extra[k - 1];
	}
	if (oom)
		t->sizes.oom = true;
	else if (s->alloc->chunks_parallel)
		s->alloc->chunks_parallel(s->alloc_state, GATHER_THREADS,
					  add_total, cookies);
	else
		s->alloc->chunks(s->alloc_state, add_total, t);
	for (unsigned k = 1; k < GATHER_THREADS; k++)
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

/* Totals that the walk could not complete are said to be partial, with
   the first reason, in text and JSON.  */
void hw_emit_partial(const struct hw_session *s, struct hw_emitter *e)
{
	if (e->json) {
		em_bool(e, "partial", s->partial.places > 0);
		if (s->partial.places) {
			em_str(e, "partial_reason", s->partial.why);
			em_hex(e, "partial_addr", s->partial.addr);
			em_u64(e, "partial_places", s->partial.places);
		}
		return;
	}
	if (s->partial.places)
		em_printf(e, "%-24s totals are partial: the walk stopped at "
			  "0x%llx: %s%s\n", "partial:",
			  (unsigned long long)s->partial.addr, s->partial.why,
			  s->partial.places > 1 ? " (and elsewhere: see 'heapwalk "
			  "check')" : "");
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
	/* Name the missing files (each once: a file has several mappings).  */
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct hw_mapped_file *f = &t->files[i];
		bool seen = false;
		if (!f->absent && !f->unavailable)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = (t->files[j].absent || t->files[j].unavailable) &&
			       strcmp(t->files[j].path, f->path) == 0;
		if (seen)
			continue;
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
	if (!t->files_from && n < max)
		out[n++] = "no NT_FILE and no readable link_map: mapped files "
			   "unknown (give --exe or --sysroot)";
	else if (strcmp(t->files_from, "link_map") == 0 && n < max)
		out[n++] = "no NT_FILE: mapped files taken from the dynamic "
			   "linker's link_map";
	if (nmissing > 0 && n < max)
		out[n++] = missing;
	if (s->arch != t->arch && n < max)
		out[n++] = "the walked heap is an emulated guest's (its libc is "
			   "not of the core's architecture): the core's threads "
			   "and thread pointers are the emulator's, so per-"
			   "thread caches cannot be given their threads, and "
			   "the page size is the emulator's";
	else if (!any_tp && n < max)
		out[n++] = strcmp(t->arch->name, "aarch64") == 0
			   ? "no NT_ARM_TLS: thread pointers unknown, so "
			     "per-thread caches cannot be given their threads"
			   : "no thread pointers: per-thread caches cannot be "
			     "given their threads";
	if (!t->auxv_len && n < max)
		out[n++] = "no NT_AUXV: page size assumed 4 KiB";
	if (t->limit[0] && n < max)
		out[n++] = t->limit;
	return n;
}

/* How a live process was read: "live": {...} in JSON, a "live:" line in
   text.  Nothing for a core.  */
static void emit_live(const struct hw_session *s, struct hw_emitter *e)
{
	const struct hw_live *l = s->target->live;
	if (!l)
		return;
	if (e->json) {
		em_obj_begin(e, "live");
		em_i64(e, "pid", l->pid);
		em_fixed(e, "stopped_ms", l->stopped_ms, 3);
		em_u64(e, "snapshot_bytes", l->snapshot_bytes);
		em_bool(e, "no_stop", l->no_stop);
		em_u64(e, "unstoppable_threads", l->unstoppable);
		em_obj_end(e);
		return;
	}
	char b[32];
	if (l->no_stop)
		em_printf(e, "%-24s pid %d, read while it ran (--no-stop): the "
			  "view may be torn; each thread was stopped alone for "
			  "its registers, at most %.3f ms\n", "live:", l->pid,
			  l->stopped_ms);
	else
		em_printf(e, "%-24s pid %d, stopped %.3f ms while %s of its "
			  "writable memory were copied, then let go\n", "live:",
			  l->pid, l->stopped_ms,
			  hw_human(b, sizeof b, l->snapshot_bytes));
}

/* "target: /abs/core (core of /path/prog)", and whether it is cut.  */
static void emit_target_line(const struct hw_session *s, struct hw_emitter *e)
{
	if (s->target->live) {
		em_printf(e, "%-24s pid %d (%s)\n", "target:",
			  s->target->live->pid,
			  s->target->exe ? s->target->exe : "?");
		emit_live(s, e);
		return;
	}
	char *abs = s->core_path ? realpath(s->core_path, NULL) : NULL;
	const char *name = abs ? abs : s->core_path ? s->core_path : "?";
	const char *exe = s->exe ? s->exe : s->target->exe;
	em_printf(e, "%-24s %s", "target:", name);
	if (exe)
		em_printf(e, " (core of %s)", exe);
	if (s->target->truncated)
		em_printf(e, " (truncated: some memory is missing)");
	em_printf(e, "\n");
	free(abs);
}

/* Every allocator instance found (summary's "instances"), the walked one
   marked; --allocator N picks another.  */
static void summary_instances(const struct hw_session *s, struct hw_emitter *e)
{
	char held[32];
	if (e->json)
		em_arr_begin(e, "instances");
	for (size_t i = 0; i < s->ninstances; i++) {
		const struct hw_instance *in = &s->instances[i];
		if (!e->json) {
			em_printf(e, "%-24s %zu: %s %s (%s) %s, holds %s%s\n",
				  i ? "" : "instances:", i + 1, in->ops->name,
				  in->version, in->arch->name,
				  in->module[0] ? in->module : "(no file)",
				  hw_human(held, sizeof held, in->held),
				  i == s->selected ? " [walked]" : "");
			continue;
		}
		em_obj_begin(e, NULL);
		em_u64(e, "index", i + 1);
		em_str(e, "allocator", in->ops->name);
		em_str(e, "version", in->version);
		em_str(e, "arch", in->arch->name);
		em_str(e, "module", in->module);
		em_u64(e, "held", in->held);
		em_bool(e, "selected", i == s->selected);
		em_obj_end(e);
	}
	if (e->json)
		em_arr_end(e);
}

static enum hw_status cmd_summary(struct cmd_ctx *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	struct totals t;
	enum hw_status st = check_nargs(c, 0, NULL);
	if (st == HW_OK)
		st = gather(s, &t);
	if (st != HW_OK)
		return st;
	const char *ver = s->alloc->version(s->alloc_state);
	if (e->json) {
		em_obj_begin(e, NULL);
		em_str(e, "allocator", s->alloc->name);
		em_str(e, "version", ver);
		em_str(e, "arch", s->arch->name);
		summary_instances(s, e);
		em_u64(e, "arenas", s->alloc->narenas(s->alloc_state));
		em_u64(e, "threads", s->target->nthreads);
		emit_live(s, e);
		em_obj_begin(e, "used");
		em_u64(e, "count", t.used);
		em_u64(e, "bytes", t.used_bytes);
		em_obj_end(e);
		em_obj_begin(e, "free");
		em_u64(e, "count", t.free);
		em_u64(e, "bytes", t.free_bytes);
		em_obj_end(e);
		em_u64(e, "overhead", t.overhead);
		em_u64(e, "largest_free", t.largest_free);
		/* Leak analysis does not exist yet: null, not zero.  */
		em_null(e, "leaks");
		em_u64(e, "findings", s->findings_total);
		em_bool(e, "truncated", s->target->truncated);
		hw_emit_partial(s, e);
		const char *limits[8];
		char missing[512];
		size_t nlimits = target_limits(s, limits, 8, missing,
					       sizeof missing);
		em_arr_begin(e, "target_limits");
		for (size_t i = 0; i < nlimits; i++)
			em_str(e, NULL, limits[i]);
		em_arr_end(e);
		s->alloc->summary(s->alloc_state, e);
		em_obj_end(e);
		em_jsonl_end(e);
		free(t.sizes.slots);
		return HW_OK;
	}
	char a[32], b[32], d[32], n1[48], n2[48];
	em_printf(e, "%-24s %s %s (%s)\n", "allocator:", s->alloc->name, ver,
		  s->arch->name);
	summary_instances(s, e);
	emit_target_line(s, e);
	const char *limits[8];
	char missing[512];
	size_t nlimits = target_limits(s, limits, 8, missing, sizeof missing);
	for (size_t i = 0; i < nlimits; i++)
		em_printf(e, "%-24s %s\n", i ? "" : s->target->live ?
			  "target lacks:" : "core lacks:", limits[i]);
	em_printf(e, "%-24s %zu\n", "threads:", s->target->nthreads);
	em_printf(e, "%-24s %zu\n", "arenas:", s->alloc->narenas(s->alloc_state));
	const char *part = s->partial.places ? "  (partial)" : "";
	/* ptmalloc counts chunks; jemalloc names its blocks itself.  */
	const char *noun = s->alloc->block_noun;
	em_printf(e, "%-24s %19s %12s%s\n", "in use:",
		  blocks(t.used, noun, n1, sizeof n1),
		  hw_human(a, sizeof a, t.used_bytes), part);
	/* ptmalloc's top; jemalloc keeps unused pages as extents instead.
	   Top is summed over the arenas, so it may exceed the largest
	   single free chunk: the label says so.  */
	bool has_top = strcmp(s->alloc->name, "ptmalloc") == 0;
	em_printf(e, "%-24s %19s %12s  (%s%s%slargest %s %s)%s\n",
		  "free:", blocks(t.free, noun, n2, sizeof n2),
		  hw_human(b, sizeof b, t.free_bytes),
		  has_top ? "of which the arenas' top chunks " : "",
		  has_top ? hw_human(a, sizeof a, t.top_bytes) : "",
		  has_top ? "; " : "", noun ? "block" : "chunk",
		  hw_human(d, sizeof d, t.largest_free), part);
	em_printf(e, "%-24s %19s %12s%s\n", "overhead:", "",
		  hw_human(a, sizeof a, t.overhead), part);
	hw_emit_partial(s, e);
	em_printf(e, "%-24s %llu%s\n", "findings:",
		  (unsigned long long)s->findings_total,
		  s->findings_total ? " (see 'heapwalk check')" : "");
	s->alloc->summary(s->alloc_state, e);
	/* The size classes holding the most memory in use.  */
	struct size_class top[10];
	size_t ntop = 0;
	for (size_t i = 0; i < t.sizes.n; i++) {
		struct size_class sc = t.sizes.slots[i];
		size_t j = ntop < 10 ? ntop++ : 10;
		while (j > 0 && top[j - 1].used_bytes < sc.used_bytes) {
			if (j < 10)
				top[j] = top[j - 1];
			j--;
		}
		if (j < 10)
			top[j] = sc;
	}
	em_printf(e, "top size classes in use:\n  %10s %10s %12s\n", "size",
		  "count", "bytes");
	for (size_t i = 0; i < ntop && top[i].used; i++)
		em_printf(e, "  %10llu %10llu %12s\n",
			  (unsigned long long)top[i].size,
			  (unsigned long long)top[i].used,
			  hw_human(a, sizeof a, top[i].used_bytes));
	free(t.sizes.slots);
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

static void size_row_json(struct hw_emitter *e, const struct size_row *r,
			  bool exact)
{
	em_obj_begin(e, NULL);
	em_u64(e, "size", r->c.size);
	if (!exact)
		em_u64(e, "min", r->min);
	em_u64(e, "used", r->c.used);
	em_u64(e, "used_bytes", r->c.used_bytes);
	em_u64(e, "free", r->c.free);
	em_u64(e, "free_bytes", r->c.free_bytes);
	em_u64(e, "cached", r->c.cached);
	em_u64(e, "cached_bytes", r->c.cached_bytes);
	em_obj_end(e);
}

/* A class as "min-size" (just "size" when it holds one size), its bytes
   in human units.  */
static void size_row_text(struct hw_emitter *e, const char *label,
			  const struct size_class *c)
{
	char ub[32], fb[32];
	em_printf(e, "%23s %10llu %12s %10llu %12s\n", label,
		  (unsigned long long)c->used,
		  hw_human(ub, sizeof ub, c->used_bytes),
		  (unsigned long long)c->free,
		  hw_human(fb, sizeof fb, c->free_bytes));
}

/* Today's exact rows: every byte count in full.  */
static void exact_row_text(struct hw_emitter *e, const char *label,
			   const struct size_class *c)
{
	em_printf(e, "%12s %10llu %14llu %10llu %14llu\n", label,
		  (unsigned long long)c->used,
		  (unsigned long long)c->used_bytes,
		  (unsigned long long)c->free,
		  (unsigned long long)c->free_bytes);
}

static enum hw_status cmd_sizes(struct cmd_ctx *c)
{
	struct hw_emitter *e = c->e;
	bool exact = false;
	for (int i = 1; i < c->argc; i++) {
		if (strcmp(c->argv[i], "--exact") != 0)
			return hw_error(c->s, HW_USAGE, "sizes: unknown "
					"argument '%s' (--exact)", c->argv[i]);
		exact = true;
	}
	struct totals t;
	enum hw_status st = gather(c->s, &t);
	if (st != HW_OK)
		return st;
	size_t n;
	struct size_row *rows = size_rows(c->s, &t.sizes, exact, &n);
	free(t.sizes.slots);
	if (!rows)
		return hw_error(c->s, HW_BAD_TARGET, "out of memory");
	if (e->json) {
		em_obj_begin(e, NULL);
		em_arr_begin(e, "classes");
		for (size_t i = 0; i < n; i++)
			size_row_json(e, &rows[i], exact);
		em_arr_end(e);
		hw_emit_partial(c->s, e);
		em_obj_end(e);
		em_jsonl_end(e);
		free(rows);
		return HW_OK;
	}
	if (exact)
		em_printf(e, "%12s %10s %14s %10s %14s\n", "size", "used",
			  "used bytes", "free", "free bytes");
	else
		em_printf(e, "%23s %10s %12s %10s %12s\n", "size (class)",
			  "used", "used bytes", "free", "free bytes");
	for (size_t i = 0; i < n; i++) {
		char label[48];
		if (rows[i].min == rows[i].c.size || exact)
			snprintf(label, sizeof label, "%llu",
				 (unsigned long long)rows[i].c.size);
		else
			snprintf(label, sizeof label, "%llu-%llu",
				 (unsigned long long)rows[i].min,
				 (unsigned long long)rows[i].c.size);
		(exact ? exact_row_text : size_row_text)(e, label, &rows[i].c);
	}
	struct size_class total = { .used = t.used, .used_bytes = t.used_bytes,
				    .free = t.free, .free_bytes = t.free_bytes };
	(exact ? exact_row_text : size_row_text)(e, "total", &total);
	hw_emit_partial(c->s, e);
	free(rows);
	return HW_OK;
}

struct chunks_walk {
	struct hw_emitter *e;
	int filter;     /* 0 all, 1 used, 2 free */
};

static void chunk_json(struct hw_emitter *e, const struct hw_chunk *ch)
{
	/* Hand-rolled: this is the hot loop for millions of chunks.  */
	EM_LIT(e, "{\"addr\":\"");
	em_hexnum(e, ch->addr);
	EM_LIT(e, "\",\"size\":");
	em_dec(e, ch->size);
	if (ch->used)
		EM_LIT(e, ",\"state\":\"used\",\"where\":\"");
	else
		EM_LIT(e, ",\"state\":\"free\",\"where\":\"");
	em_str_raw(e, hw_where_name((enum hw_where)ch->where));
	EM_LIT(e, "\",\"arena\":");
	em_dec(e, (uint64_t)(ch->arena < 0 ? 0 : ch->arena));
	if (ch->extent) {
		EM_LIT(e, ",\"extent\":\"");
		em_hexnum(e, ch->extent);
		EM_LIT(e, "\",\"szind\":");
		em_dec(e, ch->szind);
		EM_LIT(e, "}");
		return;
	}
	EM_LIT(e, ",\"chunk\":\"");
	em_hexnum(e, ch->chunk);
	EM_LIT(e, "\",\"chunk_size\":");
	em_dec(e, ch->chunk_size);
	EM_LIT(e, "}");
}

static void chunk_text(struct hw_emitter *e, const struct hw_chunk *ch)
{
	em_printf(e, "0x%016llx %12llu  %-5s %-9s %5d  0x%016llx %10llu\n",
		  (unsigned long long)ch->addr, (unsigned long long)ch->size,
		  ch->used ? "used" : "free",
		  hw_where_name((enum hw_where)ch->where), ch->arena,
		  (unsigned long long)ch->chunk,
		  (unsigned long long)ch->chunk_size);
}

static bool print_chunk(void *cookie, const struct hw_chunk *ch)
{
	struct chunks_walk *w = cookie;
	if ((w->filter == 1 && !ch->used) || (w->filter == 2 && ch->used))
		return true;
	if (w->e->json) {
		chunk_json(w->e, ch);
		em_raw(w->e, "\n", 1);
	} else {
		chunk_text(w->e, ch);
	}
	return !w->e->failed;
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
	const char *noun = c->s->alloc->block_noun;
	if (!c->e->json)
		em_printf(c->e, "%-18s %12s  %-5s %-9s %5s  %-18s %10s\n",
			  "address", "size", "state", "where", "arena",
			  noun ? noun : "chunk", noun ? "bytes" : "chunk size");
	c->s->alloc->chunks(c->s->alloc_state, print_chunk, &w);
	/* JSON Lines has no place for a trailer; summary --json says it.  */
	if (!c->e->json && !c->e->failed && c->s->partial.places)
		em_printf(c->e, "(partial: the walk stopped at 0x%llx: %s)\n",
			  (unsigned long long)c->s->partial.addr,
			  c->s->partial.why);
	return HW_OK;
}

static enum hw_status cmd_arenas(struct cmd_ctx *c)
{
	enum hw_status st = check_nargs(c, 0, NULL);
	if (st != HW_OK)
		return st;
	c->s->alloc->arenas(c->s->alloc_state, c->e);
	return HW_OK;
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

static void lookup_emit(struct hw_emitter *e, const char *key,
			const struct hw_chunk *ch, bool have)
{
	if (e->json) {
		if (!have) {
			em_null(e, key);
			return;
		}
		em_obj_begin(e, key);
		em_hex(e, "addr", ch->addr);
		em_u64(e, "size", ch->size);
		em_str(e, "state", ch->used ? "used" : "free");
		em_str(e, "where", hw_where_name((enum hw_where)ch->where));
		em_i64(e, "arena", ch->arena);
		em_hex(e, "chunk", ch->chunk);
		em_u64(e, "chunk_size", ch->chunk_size);
		em_obj_end(e);
		return;
	}
	if (have) {
		em_printf(e, "%-6s ", key);
		chunk_text(e, ch);
	}
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
	if (e->json) {
		em_obj_begin(e, NULL);
		em_hex(e, "query", l.addr);
		lookup_emit(e, "chunk", &l.hit, found);
		lookup_emit(e, "prev", &l.prev, found && l.have_prev);
		lookup_emit(e, "next", &l.next, found && l.have_next);
		em_obj_end(e);
		em_jsonl_end(e);
		return HW_OK;
	}
	if (!found) {
		em_printf(e, "0x%llx is not inside any heap chunk\n",
			  (unsigned long long)l.addr);
		return HW_OK;
	}
	if (l.addr < l.hit.addr)
		em_printf(e, "0x%llx is in the header of the %s chunk at user "
			  "address 0x%llx\n", (unsigned long long)l.addr,
			  l.hit.used ? "used" : "free",
			  (unsigned long long)l.hit.addr);
	else
		em_printf(e, "0x%llx is %llu bytes into the %s chunk at user "
			  "address 0x%llx\n", (unsigned long long)l.addr,
			  (unsigned long long)(l.addr - l.hit.addr),
			  l.hit.used ? "used" : "free",
			  (unsigned long long)l.hit.addr);
	em_printf(e, "%-6s %-18s %12s  %-5s %-9s %5s  %-18s %10s\n", "",
		  "address", "size", "state", "where", "arena", "chunk",
		  "chunk size");
	lookup_emit(e, "prev", &l.prev, l.have_prev);
	lookup_emit(e, "chunk", &l.hit, true);
	lookup_emit(e, "next", &l.next, l.have_next);
	if (l.hit.where == HW_WHERE_MMAPPED)
		em_printf(e, "(an mmapped chunk is a mapping of its own: it has "
			  "no neighbouring chunks)\n");
	else if (!l.have_prev || !l.have_next)
		em_printf(e, "(no %s%s%s: %s)\n", l.have_prev ? "" : "previous",
			  !l.have_prev && !l.have_next ? " or " : "",
			  l.have_next ? "" : "next",
			  c->s->partial.places ? "the walk of this heap stopped "
			  "at damage; see 'heapwalk check'" : "the chunk is "
			  "at the edge of its heap or extent");
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
	if (s->nfindings)
		qsort(s->findings, s->nfindings, sizeof *s->findings,
		      finding_cmp);
	if (e->json) {
		em_obj_begin(e, NULL);
		em_arr_begin(e, "findings");
	}
	for (size_t i = 0; i < s->nfindings; i++) {
		const struct hw_finding *f = &s->findings[i];
		if (e->json) {
			em_obj_begin(e, NULL);
			em_hex(e, "addr", f->addr);
			em_str(e, "problem", f->problem);
			if (f->note)
				em_str(e, "severity", "note");
			em_obj_end(e);
		} else {
			em_printf(e, "0x%016llx: %s%s\n",
				  (unsigned long long)f->addr,
				  f->note ? "note: " : "", f->problem);
		}
	}
	if (e->json) {
		em_arr_end(e);
		em_u64(e, "chunks", n);
		em_u64(e, "corruptions", s->findings_total);
		hw_emit_partial(s, e);
		em_obj_end(e);
		em_jsonl_end(e);
	} else {
		if (s->nfindings < s->findings_total)
			em_printf(e, "(%llu more findings not kept)\n",
				  (unsigned long long)(s->findings_total -
						       s->nfindings));
		char a[48], b[48];
		em_printf(e, "%s checked, %s found\n",
			  plural(n, "chunk", a, sizeof a),
			  plural(s->findings_total, "problem", b, sizeof b));
	}
	return s->findings_total ? HW_CORRUPT : HW_OK;
}

static enum hw_status cmd_frag(struct cmd_ctx *c)
{
	enum hw_status st = check_nargs(c, 0, NULL);
	return st != HW_OK ? st : hw_report_frag(c->s, c->e);
}

/* ---- the table --------------------------------------------------------- */

struct command {
	const char *name;
	enum hw_status (*run)(struct cmd_ctx *c);
	const char *help;
};

static const struct command commands[] = {
	{ "summary", cmd_summary, "allocator, arenas, totals in use / free / overhead" },
	{ "arenas", cmd_arenas, "each arena with its heaps and totals" },
	{ "bins", cmd_bins, "[KIND]: free lists (ptmalloc: tcache fast unsorted "
	  "small large; jemalloc: small large tcache)" },
	{ "chunks", cmd_chunks, "every chunk [--used|--free]" },
	{ "sizes", cmd_sizes, "per size class: count and bytes in use and free" },
	{ "chunk", cmd_chunk, "ADDR: the chunk containing ADDR and its neighbours" },
	{ "check", cmd_check, "heap consistency: every problem with its address" },
	{ "frag", cmd_frag, "free memory and fragmentation per arena" },
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

const char *hw_command_name(size_t i)
{
	return i < NCOMMANDS ? commands[i].name : NULL;
}

const char *hw_command_help(size_t i)
{
	return i < NCOMMANDS ? commands[i].help : NULL;
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
	/* The emitter's buffer is big; keep it off the caller's stack.  */
	struct hw_emitter *e = malloc(sizeof *e);
	if (!e)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	em_init(e, out);
	char *const dflt[] = { (char *)"summary", NULL };
	struct cmd_ctx c = { s, e, argc > 0 ? argc : 1, argc > 0 ? argv : dflt };
	enum hw_status st = cmd->run(&c);
	if (!em_flush(e) && st == HW_OK)
		st = hw_error(s, HW_BAD_TARGET, "write error on output");
	if (atomic_load(&s->oom))
		st = hw_error(s, HW_BAD_TARGET, "out of memory: the walk could "
			      "not keep track of the heap; what was printed is "
			      "incomplete");
	free(e);
	return st;
}

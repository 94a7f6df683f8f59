/* maps.c - the writable memory broken down by what holds it (maps.h).
 *
 * Two sorted lists are merged: the allocator's ranges (from the chunk
 * walk and the walker's `internal` hook) and the target's writable
 * mappings.  The bytes of a mapping the allocator's ranges cover are
 * theirs; the rest is named by the mapping itself: a thread's stack, a
 * module's data (or the anonymous .bss right after it), a file, or
 * anonymous memory.  Everything is linear after two sorts.
 */
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../sym/sym.h"
#include "../target/target.h"
#include "maps.h"

static const char *const kind_names[HW_MEM_KINDS] = {
	[HW_MEM_HEAP] = "heap",         [HW_MEM_MMAPPED] = "mmapped",
	[HW_MEM_UNUSED] = "unused",     [HW_MEM_METADATA] = "metadata",
	[HW_MEM_STACK] = "stack",       [HW_MEM_MODULE] = "module",
	[HW_MEM_ANON] = "anon",         [HW_MEM_FILE] = "file",
};

const char *hw_mem_kind_name(enum hw_mem_kind k)
{
	return (unsigned)k < HW_MEM_KINDS ? kind_names[k] : "?";
}

/* ---- the allocator's ranges --------------------------------------------- */

static int range_cmp(const void *a, const void *b)
{
	const struct hw_maps_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static bool continues(const struct hw_maps_range *last, uint64_t start,
		      enum hw_mem_kind kind, int32_t id)
{
	/* A block with no arena of its own (a jemalloc region in a thread
	   cache) continues its neighbour's range.  */
	return last->end == start && last->kind == kind &&
	       (last->id == id || (kind == HW_MEM_HEAP && id < 0));
}

/* Sort and merge what continues: a walk that delivers blocks out of
   address order still needs no more ranges than the heap has runs.  */
static void acc_compact(struct hw_maps_acc *acc)
{
	qsort(acc->v, acc->n, sizeof *acc->v, range_cmp);
	size_t n = 0;
	for (size_t i = 0; i < acc->n; i++) {
		const struct hw_maps_range *r = &acc->v[i];
		if (n && continues(&acc->v[n - 1], r->start, r->kind, r->id))
			acc->v[n - 1].end = r->end;
		else
			acc->v[n++] = *r;
	}
	acc->n = n;
}

static void acc_add(struct hw_maps_acc *acc, uint64_t start, uint64_t end,
		    enum hw_mem_kind kind, int32_t id)
{
	if (start >= end)
		return;
	if (acc->n && continues(&acc->v[acc->n - 1], start, kind, id)) {
		acc->v[acc->n - 1].end = end;
		return;
	}
	if (acc->n == acc->cap) {
		/* Full: compact first (once it is large), and grow unless
		   that freed more than half.  */
		bool grow = true;
		if (acc->cap >= 65536) {
			acc_compact(acc);
			grow = acc->n > acc->cap / 2;
		}
		size_t cap = acc->cap ? 2 * acc->cap : 256;
		struct hw_maps_range *v = grow ? realloc(acc->v, cap * sizeof *v)
					       : acc->v;
		if (!v) {
			acc->oom = true;
			return;
		}
		acc->v = v;
		if (grow)
			acc->cap = cap;
	}
	acc->v[acc->n++] = (struct hw_maps_range){
		.start = start, .end = end, .id = id, .kind = (uint8_t)kind };
}

void hw_maps_acc_block(struct hw_maps_acc *acc, const struct hw_chunk *c)
{
	enum hw_mem_kind kind = hw_maps_block_kind(c);
	/* Only the heap is told apart by arena.  */
	int32_t id = kind == HW_MEM_HEAP ? c->arena : -1;
	uint64_t end = c->chunk + c->chunk_size;
	if (c->chunk_size && end > c->chunk)
		acc_add(acc, c->chunk, end, kind, id);
}

void hw_maps_acc_take(struct hw_maps_acc *acc, struct hw_maps_acc *from)
{
	for (size_t i = 0; i < from->n; i++)
		acc_add(acc, from->v[i].start, from->v[i].end, from->v[i].kind,
			from->v[i].id);
	acc->oom |= from->oom;
	hw_maps_acc_free(from);
}

void hw_maps_acc_free(struct hw_maps_acc *acc)
{
	free(acc->v);
	memset(acc, 0, sizeof *acc);
}

static void add_internal(void *cookie, uint64_t start, uint64_t end)
{
	acc_add(cookie, start, end, HW_MEM_METADATA, -1);
}

/* Sorted, and without overlaps: a range that overlaps an earlier one
   keeps only what sticks out past it.  (Metadata kept inside a block, a
   jemalloc tcache stack in a region, is counted as the block.)  */
static void acc_normalize(struct hw_maps_acc *acc)
{
	if (!acc->n)
		return;
	qsort(acc->v, acc->n, sizeof *acc->v, range_cmp);
	size_t n = 0;
	for (size_t i = 0; i < acc->n; i++) {
		struct hw_maps_range r = acc->v[i];
		if (n && r.start < acc->v[n - 1].end) {
			if (r.end <= acc->v[n - 1].end)
				continue;
			r.start = acc->v[n - 1].end;
		}
		acc->v[n++] = r;
	}
	acc->n = n;
}

/* ---- rows --------------------------------------------------------------- */

struct rows {
	struct hw_maps_row *v;
	size_t n, cap;
	bool oom;
};

/* A share of one mapping for the row of (kind, id); rows_merge() sums
   the shares of each key afterwards.  */
static void row_add(struct rows *rs, enum hw_mem_kind kind, int32_t id,
		    uint64_t bytes, size_t mapping)
{
	if (!bytes)
		return;
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 64;
		struct hw_maps_row *v = realloc(rs->v, cap * sizeof *v);
		if (!v) {
			rs->oom = true;
			return;
		}
		rs->v = v;
		rs->cap = cap;
	}
	/* `mappings` holds the mapping's index until the rows are merged.  */
	rs->v[rs->n++] = (struct hw_maps_row){
		.kind = (uint8_t)kind, .id = id, .bytes = bytes,
		.mappings = mapping };
}

static int row_key_cmp(const void *a, const void *b)
{
	const struct hw_maps_row *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->mappings < y->mappings ? -1 : x->mappings > y->mappings;
}

static int row_bytes_cmp(const void *a, const void *b)
{
	const struct hw_maps_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return row_key_cmp(a, b);
}

/* Merge the rows of one key; count the distinct mappings in each.  */
static void rows_merge(struct rows *rs)
{
	if (!rs->n)
		return;
	qsort(rs->v, rs->n, sizeof *rs->v, row_key_cmp);
	size_t n = 0;
	uint64_t last_map = 0;
	for (size_t i = 0; i < rs->n; i++) {
		struct hw_maps_row r = rs->v[i];
		uint64_t map = r.mappings;
		if (n && rs->v[n - 1].kind == r.kind && rs->v[n - 1].id == r.id) {
			rs->v[n - 1].bytes += r.bytes;
			rs->v[n - 1].mappings += map != last_map;
		} else {
			r.mappings = 1;
			rs->v[n++] = r;
		}
		last_map = map;
	}
	rs->n = n;
	qsort(rs->v, rs->n, sizeof *rs->v, row_bytes_cmp);
}

/* ---- files: one id per path --------------------------------------------- */

struct file_ids {
	int32_t *canon;      /* [nfiles]: the first file with the same path */
	bool *code;          /* [nfiles], by canonical id: a loaded module
				(libdwfl reported one there, or some mapping
				of the path is executable) */
};

static int file_idx_cmp(const void *a, const void *b, void *arg)
{
	const struct hw_target *t = arg;
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	const char *px = t->files[x].path ? t->files[x].path : "";
	const char *py = t->files[y].path ? t->files[y].path : "";
	int c = strcmp(px, py);
	return c ? c : (x < y ? -1 : x > y);
}

static bool file_ids_make(const struct hw_session *s, struct file_ids *f)
{
	const struct hw_target *t = s->target;
	size_t n = t->nfiles;
	f->canon = calloc(n ? n : 1, sizeof *f->canon);
	f->code = calloc(n ? n : 1, sizeof *f->code);
	int32_t *order = calloc(n ? n : 1, sizeof *order);
	if (!f->canon || !f->code || !order) {
		free(order);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (int32_t)i;
	qsort_r(order, n, sizeof *order, file_idx_cmp, (void *)t);
	for (size_t i = 0; i < n; i++) {
		int32_t k = order[i];
		const char *prev = i ? t->files[order[i - 1]].path : NULL;
		if (prev && t->files[k].path && !strcmp(prev, t->files[k].path))
			f->canon[k] = f->canon[order[i - 1]];
		else
			f->canon[k] = k;
	}
	free(order);
	/* A core gdb wrote has no segments for code, and qemu-user maps a
	   guest's code without PROT_EXEC: a file is a module when libdwfl
	   reported one at its address too.  */
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (r->file >= 0 && (size_t)r->file < n &&
		    ((r->prot & HW_PROT_X) || hw_syms_covers(s->syms, r->start)))
			f->code[f->canon[r->file]] = true;
	}
	return true;
}

static void file_ids_free(struct file_ids *f)
{
	free(f->canon);
	free(f->code);
}

/* ---- the breakdown ------------------------------------------------------ */

/* What a writable mapping's bytes are when no allocator range covers
   them.  */
static enum hw_mem_kind mapping_kind(const struct hw_target *t, size_t i,
				     const int32_t *stack_of,
				     const struct file_ids *f, bool has_alloc,
				     int32_t *id)
{
	const struct hw_region *r = &t->regions[i];
	*id = -1;
	if (stack_of[i] >= 0) {
		*id = stack_of[i];
		return HW_MEM_STACK;
	}
	int32_t file = r->file;
	if (file < 0 && i > 0 && !has_alloc) {
		/* A module's .bss: anonymous, right after its data.  */
		const struct hw_region *prev = &t->regions[i - 1];
		if (prev->end == r->start && prev->file >= 0 &&
		    (prev->prot & HW_PROT_W))
			file = prev->file;
	}
	if (file >= 0 && (size_t)file < t->nfiles) {
		*id = f->canon[file];
		return f->code[*id] ? HW_MEM_MODULE : HW_MEM_FILE;
	}
	return HW_MEM_ANON;
}

bool hw_maps_build(struct hw_session *s, struct hw_maps_acc *acc,
		   struct hw_maps *out)
{
	struct hw_target *t = s->target;
	memset(out, 0, sizeof *out);
	if (s->alloc && s->alloc->internal)
		s->alloc->internal(s->alloc_state, add_internal, acc);
	acc_normalize(acc);
	struct rows rs = { 0 };
	struct file_ids f = { 0 };
	int32_t *stack_of = malloc((t->nregions ? t->nregions : 1) *
				   sizeof *stack_of);
	out->maps = calloc(t->nregions ? t->nregions : 1, sizeof *out->maps);
	bool ok = !acc->oom && stack_of && out->maps && file_ids_make(s, &f);
	if (!ok)
		goto done;
	for (size_t i = 0; i < t->nregions; i++)
		stack_of[i] = -1;
	for (size_t k = t->nthreads; k-- > 0;) {
		/* The first thread wins a mapping that several share.  */
		const struct hw_region *r = hw_region_of(t, t->threads[k].sp);
		if (r)
			stack_of[r - t->regions] = (int32_t)k;
	}
	size_t j = 0;   /* the first allocator range that may overlap */
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (!(r->prot & HW_PROT_W))
			continue;
		while (j < acc->n && acc->v[j].end <= r->start)
			j++;
		uint64_t covered = 0, best = 0;
		struct hw_maps_mapping *m = &out->maps[out->nmaps++];
		*m = (struct hw_maps_mapping){ .start = r->start, .end = r->end,
					       .prot = r->prot, .id = -1 };
		for (size_t k = j; k < acc->n && acc->v[k].start < r->end; k++) {
			uint64_t lo = acc->v[k].start > r->start
				      ? acc->v[k].start : r->start;
			uint64_t hi = acc->v[k].end < r->end ? acc->v[k].end
							     : r->end;
			if (hi <= lo)
				continue;
			row_add(&rs, acc->v[k].kind, acc->v[k].id, hi - lo, i);
			covered += hi - lo;
			if (hi - lo > best) {
				best = hi - lo;
				m->kind = acc->v[k].kind;
				m->id = acc->v[k].id;
			}
		}
		m->allocator = covered;
		uint64_t size = r->end - r->start;
		out->writable += size;
		out->allocator += covered;
		if (covered < size) {
			int32_t id;
			enum hw_mem_kind kind = mapping_kind(t, i, stack_of, &f,
							     covered > 0, &id);
			row_add(&rs, kind, id, size - covered, i);
			if (size - covered > best) {
				m->kind = (uint8_t)kind;
				m->id = id;
			}
		}
	}
	rows_merge(&rs);
	ok = !rs.oom;
done:
	file_ids_free(&f);
	free(stack_of);
	hw_maps_acc_free(acc);
	if (!ok) {
		free(rs.v);
		hw_maps_free(out);
		return false;
	}
	out->rows = rs.v;
	out->nrows = rs.n;
	return true;
}

void hw_maps_free(struct hw_maps *m)
{
	free(m->rows);
	free(m->maps);
	memset(m, 0, sizeof *m);
}

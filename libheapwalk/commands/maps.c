/* maps.c - the maps command: the process's writable memory by what
 * holds it (analysis/maps.h).  summary has one line of it.
 *
 * Text: the totals, then one line per holder, the most bytes first;
 * with --mappings every writable mapping too.  JSON: one document with
 * the same rows ("rows") and, with --mappings, "mappings".
 */
#include <stdio.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../analysis/maps.h"
#include "../emit/emit.h"
#include "../target/target.h"
#include "command.h"

/* A holder's name as a person reads it.  */
static const char *row_name(const struct hw_session *s, enum hw_mem_kind kind,
			    int32_t id, char *buf, size_t len)
{
	const struct hw_target *t = s->target;
	static const struct hw_maps_nouns none = {
		.in_use = "malloc heap", .main_arena = "malloc heap, main arena",
		.mmapped = "mmapped chunks", .unused = "unused memory" };
	const struct hw_maps_nouns *n = s->alloc && s->alloc->maps_nouns
					? s->alloc->maps_nouns : &none;
	switch (kind) {
	case HW_MEM_HEAP:
		if (id < 0 || n->one_heap)
			snprintf(buf, len, "%s", n->in_use);
		else if (id == 0 && n->main_arena)
			snprintf(buf, len, "%s", n->main_arena);
		else
			snprintf(buf, len, "%s, arena %d", n->in_use, (int)id);
		return buf;
	case HW_MEM_MMAPPED:
		return n->mmapped;
	case HW_MEM_UNUSED:
		return n->unused;
	case HW_MEM_METADATA:
		return "allocator metadata";
	case HW_MEM_STACK:
		if (id >= 0 && (size_t)id < t->nthreads) {
			snprintf(buf, len, "stack of thread %d (tid %d)",
				 (int)id + 1, t->threads[id].tid);
			return buf;
		}
		return "stack";
	case HW_MEM_MODULE:
	case HW_MEM_FILE:
		if (id >= 0 && (size_t)id < t->nfiles && t->files[id].path) {
			const char *p = t->files[id].path;
			const char *base = strrchr(p, '/');
			if (kind == HW_MEM_MODULE)
				snprintf(buf, len, "data of %s",
					 base ? base + 1 : p);
			else
				snprintf(buf, len, "file %s", p);
			return buf;
		}
		return kind == HW_MEM_MODULE ? "module data" : "file";
	case HW_MEM_ANON:
		return "anonymous memory";
	default:
		return "?";
	}
}

static const struct em_section S_WRITABLE = {
	.key = "writable", .title = "writable memory:", .flags = EM_S_LINE };
static const struct em_field F_BYTES = {
	.key = "bytes", .width = 11, .form = EM_T_HUMAN };
static const struct em_field F_MAPPINGS = {
	.key = "mappings", .join = " in ", .noun = "mapping" };
static const struct em_field F_ALLOC = {
	.key = "allocator", .label = "the allocator's:", .width = 11,
	.form = EM_T_HUMAN };
static const struct em_field F_SHARE = {
	.join = "  ", .pre = "(", .post = " of it)", .form = EM_T_PCT,
	.prec = 1, .only = EM_TEXT_ONLY };
static const struct em_section LAYOUT = { .label_width = 16 };

static const struct em_field ROW_COLS[] = {
	{ .key = "bytes", .label = "bytes", .width = 11, .form = EM_T_HUMAN },
	{ .label = "share", .width = 7, .form = EM_T_PCT, .prec = 1,
	  .only = EM_TEXT_ONLY },
	{ .key = "mappings", .label = "mappings", .width = 9 },
	{ .key = "kind", .only = EM_JSON_ONLY },
	{ .key = "id", .only = EM_JSON_ONLY },
	{ .key = "name", .label = "what", .join = "  " },
};
static const struct em_table ROWS = {
	.key = "rows", .cols = ROW_COLS, .ncols = 6 };

static const struct em_field MAP_COLS[] = {
	{ .key = "start", .label = "start", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "end", .label = "end", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "perms", .label = "perm", .width = -4 },
	{ .key = "bytes", .label = "size", .width = 10, .form = EM_T_HUMAN },
	{ .key = "allocator", .label = "allocator", .width = 10,
	  .form = EM_T_HUMAN },
	{ .key = "kind", .label = "mostly", .join = "  ", .width = -8 },
	{ .key = "name", .label = "" },
};
static const struct em_table MAPS = {
	.key = "mappings", .title = "", .cols = MAP_COLS, .ncols = 7 };

static bool walk_one(void *cookie, const struct hw_chunk *c)
{
	struct hw_maps_acc *acc = cookie;
	hw_maps_acc_chunk(acc, c);
	return !acc->oom;
}

/* A block's state does not change its range.  */
static bool restate_nothing(void *cookie, const struct hw_chunk *c)
{
	(void)cookie;
	(void)c;
	return true;
}

#define MAPS_MAX_THREADS 16

/* Walk every block for the allocator's ranges, then break down.  Only
   where the blocks are matters, not their states: a walker that can
   walk for states alone, in threads, does (ptmalloc then reads no bin
   list).  */
static bool maps_of(struct hw_session *s, struct hw_maps *m)
{
	struct hw_maps_acc acc[MAPS_MAX_THREADS] = { { 0 } };
	void *cookies[MAPS_MAX_THREADS];
	unsigned n = hw_threads(s);
	if (n > MAPS_MAX_THREADS)
		n = MAPS_MAX_THREADS;
	for (unsigned k = 0; k < n; k++)
		cookies[k] = &acc[k];
	if (s->alloc->states_parallel)
		hw_walk_states_parallel(s, n, walk_one, cookies,
					restate_nothing);
	else
		hw_walk_blocks(s, walk_one, &acc[0]);
	for (unsigned k = 1; k < n; k++)
		hw_maps_acc_take(&acc[0], &acc[k]);
	return hw_maps_build(s, &acc[0], m);
}

static enum hw_status maps_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	int argc = c->argc;
	char *const *argv = c->argv;
	bool all = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--mappings") != 0)
			return hw_error(s, HW_USAGE, "maps: unknown argument "
					"'%s' (--mappings lists every writable "
					"mapping too)", argv[i]);
		all = true;
	}
	struct hw_maps m;
	if (!maps_of(s, &m))
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	double total = m.writable ? (double)m.writable : 1.0;
	em_doc_begin(e);
	em_section_begin(e, &LAYOUT);
	em_section_begin(e, &S_WRITABLE);
	em_kv(e, &F_BYTES, ev_u64(m.writable));
	em_kv(e, &F_MAPPINGS, ev_u64(m.nmaps));
	em_section_end(e);
	em_kv(e, &F_ALLOC, ev_u64(m.allocator));
	em_kv(e, &F_SHARE, ev_dbl((double)m.allocator / total));
	em_section_end(e);
	em_note(e, "");
	em_table_begin(e, &ROWS);
	for (size_t i = 0; i < m.nrows && !em_failed(e); i++) {
		const struct hw_maps_row *r = &m.rows[i];
		char name[300];
		const struct em_val v[] = {
			ev_u64(r->bytes), ev_dbl((double)r->bytes / total),
			ev_u64(r->mappings),
			ev_str(hw_mem_kind_name(r->kind)),
			ev_i64(r->id),
			ev_str(row_name(s, r->kind, r->id, name, sizeof name)),
		};
		em_row(e, v);
	}
	em_table_end(e);
	if (all) {
		em_table_begin(e, &MAPS);
		for (size_t i = 0; i < m.nmaps && !em_failed(e); i++) {
			const struct hw_maps_mapping *p = &m.maps[i];
			char perms[4] = {
				p->prot & HW_PROT_R ? 'r' : '-',
				p->prot & HW_PROT_W ? 'w' : '-',
				p->prot & HW_PROT_X ? 'x' : '-', '\0' };
			char name[300];
			const struct em_val v[] = {
				ev_addr(p->start), ev_addr(p->end),
				ev_str(perms), ev_u64(p->end - p->start),
				ev_u64(p->allocator),
				ev_str(hw_mem_kind_name(p->kind)),
				ev_str(row_name(s, p->kind, p->id, name,
						sizeof name)),
			};
			em_row(e, v);
		}
		em_table_end(e);
	}
	em_doc_end(e);
	hw_maps_free(&m);
	return HW_OK;
}

static const struct hw_command_opt maps_opts[] = {
	{ "--mappings", "one row per mapping instead of per kind" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_maps = {
	.name = "maps", .run = maps_run, .args = "[--mappings]",
	.summary = "the writable memory by what holds it: heap, stacks, "
		   "module data, other mappings",
	.opts = maps_opts, .example = "core maps", .needs = HW_NEED_WALK,
};

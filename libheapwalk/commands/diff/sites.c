/* sites.c - `diff`'s allocation sites: when both snapshots hold the
 * allocator's heap profile (jemalloc's prof:true), what grew per stack,
 * as `prof --base` ranks it per function: "+40 MiB cache_insert <-
 * handle_request".  Stacks are matched by their frames' names, so two
 * runs of the program compare.  Only a core base has a profile; saved
 * JSON has none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../alloc/alloc.h"
#include "../../emit/emit.h"
#include "../../report/stacks.h"
#include "diff.h"

/* Rows text shows; JSON has them all.  */
#define TEXT_ROWS 20
#define NAME_FRAMES 3

static int site_key_cmp(const void *a, const void *b)
{
	const struct diff_site *x = a, *y = b;
	return strcmp(x->key, y->key);
}

void diff_sites_free(struct diff_site *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].key);
	free(v);
}

enum hw_status diff_site_profile(struct hw_session *s, struct diff_site **out,
				 size_t *n, bool *have)
{
	*out = NULL;
	*n = 0;
	*have = false;
	if (!s->alloc->profile)
		return HW_OK;
	const struct hw_profile *p = NULL;
	const char *why = NULL;
	enum hw_status st = s->alloc->profile(s->alloc_state, &p, &why);
	if (st != HW_OK || !p)
		return st;
	struct prof_stacks stacks;
	struct diff_site *v = calloc(p->nsites + 1, sizeof *v);
	struct prof_frame_ref *fr = malloc(PROF_MAX_FRAMES * sizeof *fr);
	if (!v || !fr || !prof_stacks_build(s, p, &stacks)) {
		free(v);
		free(fr);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	size_t k = 0;
	for (size_t i = 0; i < p->nsites; i++) {
		char *key = prof_stack_key(&stacks, &p->sites[i], fr);
		if (!key) {
			prof_stacks_free(&stacks);
			free(fr);
			diff_sites_free(v, k);
			return hw_error(s, HW_BAD_TARGET, "out of memory");
		}
		v[k++] = (struct diff_site){ key, p->sites[i].est.curobjs,
					     p->sites[i].est.curbytes };
	}
	prof_stacks_free(&stacks);
	free(fr);
	/* Stacks that differ only in frames the names drop (addresses in
	   one function) are one.  */
	qsort(v, k, sizeof *v, site_key_cmp);
	size_t u = 0;
	for (size_t i = 0; i < k; i++) {
		if (u && !strcmp(v[u - 1].key, v[i].key)) {
			v[u - 1].objs += v[i].objs;
			v[u - 1].bytes += v[i].bytes;
			free(v[i].key);
		} else
			v[u++] = v[i];
	}
	*out = v;
	*n = u;
	*have = true;
	return HW_OK;
}

struct srow {
	const char *key;
	uint64_t b_objs, b_bytes, a_objs, a_bytes;
};

static int srow_cmp(const void *a, const void *b)
{
	const struct srow *x = a, *y = b;
	int c = diff_growth_cmp(x->b_bytes, x->a_bytes, y->b_bytes, y->a_bytes);
	return c ? c : strcmp(x->key, y->key);
}

static const struct em_field SITE_DIFF_COLS[] = {
	{ .key = "site", .label = "allocated at", .join = "  " },
	{ .key = "objects_delta", .label = "+/- objects", .width = 11 },
	{ .key = "bytes_delta", .label = "+/- bytes", .width = 12 },
	{ .key = "objects_before", .label = "objects before", .width = 14 },
	{ .key = "objects_after", .label = "after", .width = 10 },
	{ .key = "bytes_before", .label = "bytes before", .width = 13,
	  .form = EM_T_HUMAN },
	{ .key = "bytes_after", .label = "after", .width = 11,
	  .form = EM_T_HUMAN },
	{ .key = "stack", .only = EM_JSON_ONLY },
};
static const uint8_t SITE_DIFF_TEXT_ORDER[] = { 1, 2, 3, 4, 5, 6, 0 };
static const struct em_table SITE_DIFF_TABLE = {
	.key = "sites", .cols = SITE_DIFF_COLS, .ncols = 8,
	.text_order = SITE_DIFF_TEXT_ORDER, .ntext = 7 };
static const struct em_field F_UNCHANGED_SITES = {
	.key = "unchanged_sites", .only = EM_JSON_ONLY };

enum hw_status diff_emit_sites(struct hw_session *s, struct hw_emitter *e,
			       const struct diff_base *b)
{
	struct diff_site *after;
	size_t na;
	bool have;
	enum hw_status st = diff_site_profile(s, &after, &na, &have);
	if (st != HW_OK || !have)
		return st;
	struct srow *rows = calloc(b->nsites + na + 1, sizeof *rows);
	if (!rows) {
		diff_sites_free(after, na);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	/* Both lists are sorted by key: merge.  */
	size_t n = 0, i = 0, j = 0;
	while (i < b->nsites || j < na) {
		int c = i == b->nsites ? 1 : j == na ? -1 :
			strcmp(b->sites[i].key, after[j].key);
		struct srow *r = &rows[n++];
		if (c <= 0) {
			r->key = b->sites[i].key;
			r->b_objs = b->sites[i].objs;
			r->b_bytes = b->sites[i].bytes;
			i++;
		}
		if (c >= 0) {
			r->key = after[j].key;
			r->a_objs = after[j].objs;
			r->a_bytes = after[j].bytes;
			j++;
		}
	}
	size_t k = 0;
	for (size_t x = 0; x < n; x++)
		if (rows[x].b_objs != rows[x].a_objs ||
		    rows[x].b_bytes != rows[x].a_bytes)
			rows[k++] = rows[x];
	if (k)
		qsort(rows, k, sizeof *rows, srow_cmp);
	em_note(e, "");
	struct em_table table = SITE_DIFF_TABLE;
	diff_table_begin(e, &table, k);
	for (size_t x = 0; x < k && !em_failed(e); x++) {
		const struct srow *r = &rows[x];
		char name[512], objs[24], bytes[40];
		int64_t dobj = diff_delta(r->b_objs, r->a_objs);
		int64_t db = diff_delta(r->b_bytes, r->a_bytes);
		/* Past TEXT_ROWS, JSON only.  */
		enum em_only only = x < TEXT_ROWS ? EM_BOTH : EM_JSON_ONLY;
		char stack[4096];
		snprintf(stack, sizeof stack, "%s", r->key);
		for (char *c = stack; *c; c++)
			if (*c == PROF_KEY_SEP)
				*c = c[1] ? ';' : '\0';
		struct em_val v[] = {
			ev_only(ev_str(prof_key_name(r->key, NAME_FRAMES, name,
						     sizeof name)), only),
			ev_only(ev_text(ev_i64(dobj), diff_signed_count(
				objs, sizeof objs, dobj)), only),
			ev_only(ev_text(ev_i64(db), diff_signed_human(
				bytes, sizeof bytes, db)), only),
			ev_only(ev_u64(r->b_objs), only),
			ev_only(ev_u64(r->a_objs), only),
			ev_only(ev_u64(r->b_bytes), only),
			ev_only(ev_u64(r->a_bytes), only),
			ev_str(stack),
		};
		em_row(e, v);
	}
	diff_table_end(e, &F_UNCHANGED_SITES, k, n - k, "allocation site",
		       "allocation sites", "(no allocation site changed)");
	if (k > TEXT_ROWS)
		em_notef(e, "(%zu more allocation sites changed: --json lists "
			 "them all)", k - TEXT_ROWS);
	free(rows);
	diff_sites_free(after, na);
	return HW_OK;
}

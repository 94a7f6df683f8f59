/* leaks.c - `diff --leaks`: the leaks NEW has that BASE had not.
 *
 * Both sides run the leaks scan (analysis/reach.h); a saved `leaks
 * --json` stands for a base core.  Only definite and indirect leaks
 * count.  A leak is old when BASE has a leak of the same usable size,
 * class and first 16 bytes (its "head"; fewer for a smaller block):
 * content, not the address, which a freed and reallocated block shares
 * with a different one.  A word of the head that points into the process
 * is matched by what it points into (diff_head_key): two runs of one
 * program place the heap and the libraries elsewhere (ASLR), and a list
 * node's first word, a C++ object's vtable pointer, would otherwise make
 * every old leak look new.  Matching is by count: NEW's leaks of one key
 * beyond the number BASE has are new, the lowest addresses taken as the
 * old ones.  The kind is not part of the key: an old definite leak turns
 * indirect when a new leak points to it.  A saved `leaks --json` without
 * heads (an older heapwalk) is matched by size and class only.
 *
 * The new leaks are shown as `leaks` shows its loss records: per kind,
 * size and class, the most bytes first, with the first block's address
 * and head.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analysis/reach.h"
#include "../../arch/arch.h"
#include "../../analysis/vtype.h"
#include "../../emit/emit.h"
#include "../../report/loss.h"
#include "../../report/pipe.h"
#include "../../target/target.h"
#include "diff.h"

struct collect {
	struct hw_session *s;
	const struct hw_reach *r;
	struct diff_names *names;
	struct diff_leaks *l;
	bool oom;
};

static bool collect_one(void *cookie, const struct hw_chunk *c)
{
	struct collect *w = cookie;
	enum bm_mark mark;
	/* (A block that may be free is no leak to compare: leaks calls it
	   unknown.)  */
	if (!c->used || c->maybe_free ||
	    !hw_reach_mark(w->r, c->addr, &mark) ||
	    (mark != BM_UNREACHED && mark != BM_INDIRECT))
		return true;
	if (!diff_leaks_grow(w->l)) {
		w->oom = true;
		return false;
	}
	struct diff_leak *k = &w->l->v[w->l->n++];
	memset(k, 0, sizeof *k);
	k->addr = c->addr;
	k->size = c->size;
	k->kind = (uint8_t)mark;
	k->type = diff_name(w->names, hw_vtype_of(w->s, c->addr, c->size),
			    &w->oom);
	size_t n = c->size < DIFF_HEAD ? (size_t)c->size : DIFF_HEAD;
	if (n && hw_read(w->s->target, c->addr, k->head, n))
		k->nhead = (uint8_t)n;
	diff_head_key(w->s->target, k);
	return !w->oom;
}

/* A file's mapping: its name's FNV-1a hash and the file offset, marked
   0xf1 in the top byte; anonymous memory (heap, stacks, mmaps): one
   value.  */
#define ANON_POINTER 0xa0a0a0a0a0a0a0a0ull
#define USER_ADDR_MAX (1ull << 48)

static uint64_t name_hash(const char *path)
{
	const char *base = strrchr(path, '/');
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *c = base ? base + 1 : path; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	return h;
}

static uint64_t word_key(struct hw_target *t, uint64_t v)
{
	if (!t)
		return v >= 0x10000 && v < USER_ADDR_MAX && !(v & 7)
		       ? ANON_POINTER : v;
	uint64_t a = v & t->arch->ptr_mask;
	const struct hw_region *r = a >= 0x1000 ? hw_region_of(t, a) : NULL;
	if (!r)
		return v;
	const struct hw_mapped_file *f =
		r->file >= 0 && (size_t)r->file < t->nfiles ?
		&t->files[r->file] : NULL;
	if (!f || !f->path || a < f->start)
		return ANON_POINTER;
	uint64_t off = f->offset + (a - f->start);
	return 0xf1ull << 56 |
	       ((name_hash(f->path) << 32 ^ off) & 0x00ffffffffffffffull);
}

void diff_head_key(struct hw_target *t, struct diff_leak *k)
{
	memcpy(k->key, k->head, sizeof k->key);
	for (size_t i = 0; i + 8 <= k->nhead; i += 8) {
		uint64_t v;
		memcpy(&v, k->head + i, 8);
		v = word_key(t, v);
		memcpy(k->key + i, &v, 8);
	}
}

enum hw_status diff_collect_leaks(struct hw_session *s, struct diff_names *names,
				  struct diff_leaks *l)
{
	struct collect w = { .s = s, .names = names, .l = l };
	w.r = hw_reach_get(s);
	if (!w.r)
		return HW_BAD_TARGET;
	if (!w.r->all_reachable)
		hw_walk_chunks_piped(s, collect_one, &w);
	if (w.oom || s->oom)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	return HW_OK;
}

/* ---- matching ---------------------------------------------------------- */

static int key_cmp(const struct diff_leak *x, const struct diff_leak *y)
{
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->type != y->type)
		return (uintptr_t)x->type < (uintptr_t)y->type ? -1 : 1;
	if (x->nhead != y->nhead)
		return x->nhead < y->nhead ? -1 : 1;
	return memcmp(x->key, y->key, x->nhead);
}

/* By key, then by address (the lowest of a key are the old ones).  */
static int leak_cmp(const void *a, const void *b)
{
	const struct diff_leak *x = a, *y = b;
	int c = key_cmp(x, y);
	if (c)
		return c;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Keep in a (sorted) only its leaks beyond those of b of the same key;
   returns how many are kept.  */
static size_t only_new(struct diff_leak *a, size_t na,
		       const struct diff_leak *b, size_t nb)
{
	size_t i = 0, k = 0, kept = 0;
	while (k < na) {
		size_t end = k + 1;
		while (end < na && !key_cmp(&a[k], &a[end]))
			end++;
		while (i < nb && key_cmp(&b[i], &a[k]) < 0)
			i++;
		size_t old = 0;
		while (i < nb && !key_cmp(&b[i], &a[k])) {
			old++;
			i++;
		}
		for (size_t j = k + old; j < end; j++)
			a[kept++] = a[j];
		k = end;
	}
	return kept;
}

/* ---- records ----------------------------------------------------------- */

struct nrec {
	uint64_t size, count;
	const char *type;
	uint8_t kind;
	const struct diff_leak *first;
};

static int group_cmp(const void *a, const void *b)
{
	const struct diff_leak *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->type != y->type)
		return (uintptr_t)x->type < (uintptr_t)y->type ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* As `leaks` orders its loss records.  */
static int nrec_cmp(const void *a, const void *b)
{
	const struct nrec *x = a, *y = b;
	return hw_loss_order(
		&(struct hw_loss_key){ x->size, x->count, x->kind, x->type },
		&(struct hw_loss_key){ y->size, y->count, y->kind, y->type });
}

static const char *kind_name(unsigned kind)
{
	return kind == BM_INDIRECT ? "indirect" : "definite";
}

static const struct em_field NEW_LEAK_COLS[] = {
	{ .key = "bytes", .label = "bytes", .width = 12 },
	{ .key = "count", .label = "blocks", .width = 8 },
	{ .key = "size", .label = "size", .width = 10 },
	{ .key = "kind", .label = "kind", .join = "  ", .width = -9 },
	{ .key = "first", .label = "first at", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "head", .only = EM_JSON_ONLY },
	{ .label = "its first bytes", .join = "  ", .only = EM_TEXT_ONLY },
	{ .key = "type", .label = "type", .join = "  ", .none = "-" },
};
static const struct em_table NEW_LEAKS = {
	.key = "new_leaks", .cols = NEW_LEAK_COLS, .ncols = 8 };

static const struct em_field F_MATCHED_BY = {
	.key = "leaks_matched_by", .only = EM_JSON_ONLY };
static const struct em_field F_LEAKS_BEFORE = {
	.key = "leaks_before", .only = EM_JSON_ONLY };
static const struct em_field F_LEAKS_AFTER = {
	.key = "leaks_after", .only = EM_JSON_ONLY };
static const struct em_field F_NEW[4] = {
	{ .key = "new_definite", .only = EM_JSON_ONLY },
	{ .key = "new_definite_bytes", .only = EM_JSON_ONLY },
	{ .key = "new_indirect", .only = EM_JSON_ONLY },
	{ .key = "new_indirect_bytes", .only = EM_JSON_ONLY },
};

/* A head in hex (JSON's "head") and as `leaks` shows first bytes.  */
static void head_text(const struct diff_leak *k, char *out, size_t len,
		      char *hex, size_t hexlen)
{
	size_t h = 0;
	hex[0] = '\0';
	for (size_t i = 0; i < k->nhead && h + 2 < hexlen; i++)
		h += (size_t)snprintf(hex + h, hexlen - h, "%02x", k->head[i]);
	hw_first_bytes_text(k->head, k->nhead, out, len);
}

static void emit_records(struct hw_emitter *e, struct diff_leak *v, size_t n,
			 struct nrec *recs)
{
	size_t nr = 0;
	if (n)
		qsort(v, n, sizeof *v, group_cmp);
	for (size_t i = 0; i < n; i++) {
		struct nrec *r = nr ? &recs[nr - 1] : NULL;
		if (!r || r->kind != v[i].kind || r->size != v[i].size ||
		    r->type != v[i].type) {
			r = &recs[nr++];
			*r = (struct nrec){ v[i].size, 0, v[i].type, v[i].kind,
					    &v[i] };
		}
		r->count++;
	}
	if (nr)
		qsort(recs, nr, sizeof *recs, nrec_cmp);
	struct em_table t = NEW_LEAKS;
	struct em_field cols[8];
	memcpy(cols, NEW_LEAK_COLS, sizeof cols);
	bool typed = false;
	for (size_t i = 0; i < nr; i++)
		typed |= recs[i].type != NULL;
	if (!typed)
		cols[7].only = EM_JSON_ONLY;
	t.cols = cols;
	diff_table_begin(e, &t, nr);
	for (size_t i = 0; i < nr && !em_failed(e); i++) {
		const struct nrec *r = &recs[i];
		char text[96], hex[2 * DIFF_HEAD + 1];
		head_text(r->first, text, sizeof text, hex, sizeof hex);
		const struct em_val row[] = {
			ev_u64(r->size * r->count), ev_u64(r->count),
			ev_u64(r->size), ev_str(kind_name(r->kind)),
			ev_addr(r->first->addr),
			r->first->nhead ? ev_str(hex) : ev_absent(),
			ev_str(text),
			r->type ? ev_str(r->type) : ev_absent(),
		};
		em_row(e, row);
	}
	em_table_end(e);
}

enum hw_status diff_emit_leaks(struct hw_session *s, struct hw_emitter *e,
			       struct diff_base *b)
{
	struct diff_leaks a = { 0 };
	enum hw_status st = diff_collect_leaks(s, &b->names, &a);
	if (st != HW_OK) {
		free(a.v);
		return st;
	}
	size_t after = a.n, before = b->leaks.n;
	/* A base without heads: size and class only, on both sides.  A
	   saved base's keys were made by the form of its words alone: so
	   are this side's then.  */
	if (!b->leak_heads)
		for (size_t i = 0; i < a.n; i++)
			a.v[i].nhead = 0;
	else if (b->leak_keys_by_form)
		for (size_t i = 0; i < a.n; i++)
			diff_head_key(NULL, &a.v[i]);
	if (a.n)
		qsort(a.v, a.n, sizeof *a.v, leak_cmp);
	if (b->leaks.n)
		qsort(b->leaks.v, b->leaks.n, sizeof *b->leaks.v, leak_cmp);
	size_t n = only_new(a.v, a.n, b->leaks.v, b->leaks.n);
	struct nrec *recs = calloc(n + 1, sizeof *recs);
	if (!recs) {
		free(a.v);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	uint64_t cnt[2] = { 0, 0 }, bytes[2] = { 0, 0 };
	for (size_t i = 0; i < n; i++) {
		int k = a.v[i].kind == BM_INDIRECT;
		cnt[k]++;
		bytes[k] += a.v[i].size;
	}
	const char *noun = s->alloc->block_noun ? "block" : "chunk";
	char h1[32], h2[32];
	em_note(e, "");
	em_notef(e, "%-9s %" PRIu64 " definite %s%s  %s, %" PRIu64 " indirect "
		 "%s%s  %s", "new leaks:", cnt[0], noun, cnt[0] == 1 ? "" : "s",
		 hw_human(h1, sizeof h1, bytes[0]), cnt[1], noun,
		 cnt[1] == 1 ? "" : "s", hw_human(h2, sizeof h2, bytes[1]));
	em_notef(e, "%-9s %zu leaked %ss before, %zu after; matched by size, "
		 "class%s", "", before, noun, after, b->leak_heads
		 ? " and first 16 bytes (pointers by what they point into)"
		 : " only (the saved leaks have no \"head\")");
	em_kv(e, &F_MATCHED_BY, ev_str(b->leak_heads ? "content" : "size-type"));
	em_kv(e, &F_LEAKS_BEFORE, ev_u64(before));
	em_kv(e, &F_LEAKS_AFTER, ev_u64(after));
	em_kv(e, &F_NEW[0], ev_u64(cnt[0]));
	em_kv(e, &F_NEW[1], ev_u64(bytes[0]));
	em_kv(e, &F_NEW[2], ev_u64(cnt[1]));
	em_kv(e, &F_NEW[3], ev_u64(bytes[1]));
	if (n)
		em_note(e, "");
	emit_records(e, a.v, n, recs);
	free(recs);
	free(a.v);
	return HW_OK;
}

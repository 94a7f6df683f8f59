/* chunk.c - the chunk command (chunk ADDR): the block holding an
 * address, where in it the address is, and its neighbours in the heap.
 */
#include <stdio.h>
#include <string.h>

#include "../emit/emit.h"
#include "../report/args.h"
#include "../report/blockrow.h"
#include "command.h"

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
   table, hw_block_cols with the allocator's names).  */
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
	struct em_val v[HW_NBLOCK_COLS + 1];
	v[0] = ev_str(label);
	hw_block_vals(v + 1, ch);
	em_row_as(e, key, v, only);
}

static void lookup_row(struct hw_emitter *e, const char *key,
		       const struct hw_chunk *ch, bool have, enum em_only only)
{
	lookup_row_as(e, key, key, ch, have, only);
}

static enum hw_status chunk_run(const struct hw_cmd *c)
{
	struct lookup l = { 0 };
	enum hw_status st = hw_args_address(c->s, c->argc, c->argv, &l.addr);
	if (st != HW_OK)
		return st;
	hw_walk_around(c->s, l.addr, lookup_chunk, &l);
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
	   extents, and their container is the extent; tcmalloc's are
	   objects and spans.  */
	const char *container = c->s->alloc->container;
	bool small = l.hit.where == HW_WHERE_SLAB ||
		     l.hit.where == HW_WHERE_SLAB_FREE ||
		     l.hit.where == HW_WHERE_TCACHE ||
		     l.hit.where == HW_WHERE_SPAN ||
		     l.hit.where == HW_WHERE_CENTRAL ||
		     l.hit.where == HW_WHERE_TRANSFER;
	const char *unit = !container ? "chunk"
			   : small ? c->s->alloc->small_noun : container;
	char size_label[32];
	snprintf(size_label, sizeof size_label, "%s size",
		 container ? container : "chunk");
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
			 container ? "" : "user address ",
			 (unsigned long long)l.hit.addr);
	/* JSON puts the block first, text between its neighbours.  */
	struct em_field cols[HW_NBLOCK_COLS + 1];
	memcpy(cols, hw_block_cols, sizeof cols);
	if (container) {
		cols[8].label = container;
		cols[9].label = size_label;
	}
	const struct em_table lookup_table = {
		.cols = cols, .ncols = HW_NBLOCK_COLS + 1 };
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
		em_notef(e, "(no %s%s%s: %s%s%s)", l.have_prev ? "" : "previous",
			 !l.have_prev && !l.have_next ? " or " : "",
			 l.have_next ? "" : "next",
			 c->s->partial.places ? "the walk of this heap stopped "
			 "at damage; see 'heapwalk check'" : container ? "the "
			 "block is at the edge of its " : "the chunk is at the "
			 "edge of its heap", container ? container : "",
			 container ? "'s range" : "");
	em_doc_end(e);
	return HW_OK;
}

static const struct hw_command_opt chunk_opts[] = {
	HW_OPT_ADDR, { NULL, NULL } };

const struct hw_command hw_cmd_chunk = {
	.name = "chunk", .run = chunk_run, .args = "ADDR",
	.summary = "the chunk containing ADDR and its neighbours",
	.opts = chunk_opts, .example = "core chunk 0x55d4c2a1b2c0",
	.needs = HW_NEED_AROUND,
};

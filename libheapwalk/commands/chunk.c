/* chunk.c - the chunk command (chunk ADDR): the block holding an
 * address, where in it the address is, its neighbours in the heap, the
 * fields the allocator keeps for it (hw_allocator_ops.anatomy: ptmalloc's
 * header and links, decoded and checked), and with --bytes its first
 * bytes.
 */
#include <stdio.h>
#include <string.h>

#include "../emit/emit.h"
#include "../report/args.h"
#include "../report/blockrow.h"
#include "../report/bytes.h"
#include "command.h"

struct lookup {
	uint64_t addr;
	struct hw_chunk prev, hit, next;
	int state;      /* 0 searching, 1 hit (want next), 2 done */
	bool have_prev, have_next;
};

/* A block mapped on its own (an mmapped chunk) has no neighbours.  */
static bool mapped_alone(const struct hw_chunk *c)
{
	return hw_place(c->where)->flags & HW_PLACE_MMAPPED;
}

/* Two blocks are neighbours only when one ends where the other starts:
   the walk goes on to the next heap, or to an mmapped chunk, after a
   heap's last chunk (or after damage that cut the heap short).  */
static bool adjacent(const struct hw_chunk *a, const struct hw_chunk *b)
{
	return a->chunk + a->chunk_size == b->chunk && !mapped_alone(a) &&
	       !mapped_alone(b);
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
	if (hw_block_holds(ch, l->addr)) {
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

/* --bytes: the block's first bytes, 16 a line as hexdump -C shows them;
   JSON has them as one hex string (as leaks' "head").  */
#define MAX_DUMP 4096
static const struct em_field F_BYTES = { .key = "bytes", .only = EM_JSON_ONLY };
static const struct em_field DUMP_COLS[] = {
	{ .label = "", .form = EM_T_HEX0, .digits = 16 },
	{ .label = "", .join = "  " },
};
static const struct em_table DUMP = {
	.title = "bytes:", .cols = DUMP_COLS, .ncols = 2,
	.flags = EM_TB_NO_HEADER, .only = EM_TEXT_ONLY };

static void dump_bytes(struct hw_session *s, struct hw_emitter *e,
		       const struct hw_chunk *ch, uint64_t want)
{
	struct hw_bytes by;
	hw_bytes_read(s->target, ch->addr,
		      (size_t)(want < ch->size ? want : ch->size), &by);
	if (!by.have) {
		em_kv(e, &F_BYTES, ev_null());
		em_notef(e, "bytes: %s", by.oom ? "(out of memory)"
						: "(not in the target)");
	} else {
		em_kv(e, &F_BYTES, ev_str(by.hex));
		em_table_begin(e, &DUMP);
		hw_bytes_rows(e, &by);
		em_table_end(e);
	}
	hw_bytes_free(&by);
}

/* chunk ADDR [--bytes N]: the address, and how many bytes to show.  */
static enum hw_status parse(struct hw_session *s, int argc,
			    char *const argv[], uint64_t *addr,
			    uint64_t *nbytes)
{
	char *rest[2] = { argv[0], NULL };
	int nrest = 1;
	*nbytes = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = hw_args_value(argc, argv, &i, "--bytes");
		if (v) {
			if (!hw_args_size(v, nbytes) || !*nbytes ||
			    *nbytes > MAX_DUMP)
				return hw_error(s, HW_USAGE, "chunk --bytes: "
						"'%s' is not a count from 1 to "
						"%d", v, MAX_DUMP);
		} else if (nrest < 2) {
			rest[nrest++] = argv[i];
		} else {
			return hw_error(s, HW_USAGE, "chunk: unexpected "
					"argument '%s' (ADDR [--bytes N])", a);
		}
	}
	return hw_args_address(s, nrest, rest, addr);
}

static enum hw_status chunk_run(const struct hw_cmd *c)
{
	struct lookup l = { 0 };
	uint64_t nbytes;
	enum hw_status st = parse(c->s, c->argc, c->argv, &l.addr, &nbytes);
	if (st != HW_OK)
		return st;
	hw_walk_around(c->s, l.addr, 1, 1, lookup_chunk, &l);
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
	bool small = hw_place(l.hit.where)->flags & HW_PLACE_SLOT;
	const char *unit = !container ? "chunk"
			   : small ? c->s->alloc->small_noun : container;
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
	char size_label[32];
	cols[0] = hw_block_cols[0];
	hw_block_cols_for(c->s->alloc, cols + 1, size_label,
			  sizeof size_label);
	const struct em_table lookup_table = {
		.cols = cols, .ncols = HW_NBLOCK_COLS + 1 };
	em_table_begin(e, &lookup_table);
	lookup_row(e, "chunk", &l.hit, true, EM_JSON_ONLY);
	lookup_row(e, "prev", &l.prev, l.have_prev, EM_BOTH);
	lookup_row_as(e, "chunk", unit, &l.hit, true, EM_TEXT_ONLY);
	lookup_row(e, "next", &l.next, l.have_next, EM_BOTH);
	em_table_end(e);
	const char *bound = c->s->alloc->neighbourhood;
	if (mapped_alone(&l.hit))
		em_note(e, "(an mmapped chunk is a mapping of its own: it has "
			"no neighbouring chunks)");
	else if (!l.have_prev || !l.have_next)
		em_notef(e, "(no %s%s%s: %s%s%s)", l.have_prev ? "" : "previous",
			 !l.have_prev && !l.have_next ? " or " : "",
			 l.have_next ? "" : "next",
			 c->s->partial.places ? "the walk of this heap stopped "
			 "at damage; see 'heapwalk check'" : container ? "the "
			 "block is at the edge of its " : "the chunk is at the "
			 "edge of its heap", bound ? bound : container ? container : "",
			 bound ? "" : container ? "'s range" : "");
	if (c->s->alloc->anatomy)
		c->s->alloc->anatomy(c->s->alloc_state, &l.hit, e);
	if (nbytes)
		dump_bytes(c->s, e, &l.hit, nbytes);
	em_doc_end(e);
	return HW_OK;
}

static const struct hw_command_opt chunk_opts[] = {
	HW_OPT_ADDR,
	{ "--bytes N", "its first N bytes too (at most 4096), as hexdump -C "
		       "shows them" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_chunk = {
	.name = "chunk", .run = chunk_run, .args = "ADDR [--bytes N]",
	.summary = "the chunk containing ADDR, its neighbours and its fields",
	.opts = chunk_opts, .example = "core chunk 0x55d4c2a1b2c0 --bytes 64",
	.needs = HW_NEED_AROUND,
};

/* refs.c - the refs and why commands (refs ADDR, why ADDR): who holds a
 * block, and the shortest chain from a root to it (analysis/refs.h finds
 * them; this file names each place for people).
 *
 * A place is a block (its address, usable size, the pointer's offset in
 * it and its own reachability), a register, a thread's DTV, a word of a
 * thread's stack (with the function whose frame it is: the thread is
 * unwound by libdwfl, as eu-stack does, and the slot lies between a
 * frame's stack pointer and its caller's; where the unwind gives nothing,
 * a heuristic: the nearest word below it that points into code is taken
 * as the return address of the frame below, which is in that function),
 * a word of a thread's static TLS or TCB, a module's data (symbol +
 * offset), or other memory (its mapping).
 *
 * JSON: one document, as `chunk ADDR`: the block asked about, then the
 * referrers ("refs") or the chain ("chain"), one object per place.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../analysis/refs.h"
#include "../arch/arch.h"
#include "../emit/emit.h"
#include "../report/args.h"
#include "../report/partial.h"
#include "../sym/sym.h"
#include "../target/target.h"
#include "command.h"

#define REFS_MAX 10000          /* referrers listed; the rest counted */
#define FRAME_WORDS 65536       /* stack words looked at below a slot */
#define TCB_SPAN 0xa00          /* glibc's struct pthread, with room */
#define DTV_MAX 1024            /* DTV entries read */
#define UNWIND_FRAMES 1024      /* frames unwound per thread */
#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

static const char *const kind_names[] = {
	[BM_UNREACHED] = "definite", [BM_REACHABLE] = "reachable",
	[BM_POSSIBLE] = "possible", [BM_INDIRECT] = "indirect",
};

/* ---- block sizes ------------------------------------------------------- */

/* The usable sizes of a few blocks, from one walk of the allocator; the
   map's extent where the walk does not give one.  */
struct sizes {
	uint64_t *addr, *size;
	size_t n, cap;
};

static void sizes_want(struct sizes *z, uint64_t addr)
{
	if (z->n == z->cap) {
		size_t cap = z->cap ? 2 * z->cap : 64;
		uint64_t *a = realloc(z->addr, cap * sizeof *a);
		if (a)
			z->addr = a;
		uint64_t *s = a ? realloc(z->size, cap * sizeof *s) : NULL;
		if (!s)
			return;
		z->size = s;
		z->cap = cap;
	}
	z->addr[z->n] = addr;
	z->size[z->n++] = UINT64_MAX;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static bool sizes_one(void *cookie, const struct hw_chunk *c)
{
	struct sizes *z = cookie;
	if (!c->used)
		return true;
	const uint64_t *p = bsearch(&c->addr, z->addr, z->n, sizeof *z->addr,
				    u64_cmp);
	if (p)
		z->size[p - z->addr] = c->size;
	return true;
}

static void sizes_fill(struct hw_session *s, struct sizes *z)
{
	if (!z->n)
		return;
	qsort(z->addr, z->n, sizeof *z->addr, u64_cmp);
	size_t n = 1;
	for (size_t i = 1; i < z->n; i++)
		if (z->addr[i] != z->addr[n - 1])
			z->addr[n++] = z->addr[i];
	z->n = n;
	/* Only blocks in use and their sizes: the walk that spares the
	   free lists, in threads (each block is one slot of z->size).  */
	if (s->alloc->states_parallel) {
		unsigned nparts = hw_threads(s);
		void *cookies[16];
		if (nparts > 16)
			nparts = 16;
		for (unsigned k = 0; k < nparts; k++)
			cookies[k] = z;
		hw_walk_states_parallel(s, nparts, sizes_one,
					  cookies, NULL);
		return;
	}
	hw_walk_blocks(s, sizes_one, z);
}

static uint64_t size_of(const struct sizes *z, uint64_t addr, uint64_t extent)
{
	const uint64_t *p = z->n ? bsearch(&addr, z->addr, z->n,
					   sizeof *z->addr, u64_cmp) : NULL;
	return p && z->size[p - z->addr] != UINT64_MAX ? z->size[p - z->addr]
						       : extent;
}

static void sizes_free(struct sizes *z)
{
	free(z->addr);
	free(z->size);
}

/* ---- naming places ------------------------------------------------------- */

struct namer {
	struct hw_session *s;
	const struct hw_reach *r;
	const struct hw_arch *a;
	struct sizes sizes;
	struct tls_window {
		uint64_t lo, hi;
	} *tls;                 /* per thread, made on first use */
	bool tls_made;
	struct unwound {
		struct hw_frame *v;
		size_t n;
		bool made;
	} *frames;              /* per thread, unwound on first use */
};

/* Where thread i's static TLS and TCB are, roughly: from the lowest
   static TLS block its DTV names to the highest, and the TCB (struct
   pthread) beside the thread pointer: above it on x86_64 (TLS below the
   thread pointer), below it on aarch64 (TLS above).  The last block's
   size is not known: TCB_SPAN is taken past it.  A heuristic.  */
static void tls_make(struct namer *nm)
{
	struct hw_target *t = nm->s->target;
	nm->tls_made = true;
	nm->tls = calloc(t->nthreads ? t->nthreads : 1, sizeof *nm->tls);
	if (!nm->tls || !nm->a)
		return;
	/* aarch64: TLS variant I, the blocks above the thread pointer.  */
	bool tls_above = nm->a->e_machine == EM_AARCH64;
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct hw_thread *th = &t->threads[i];
		if (!th->has_tp)
			continue;
		const struct hw_region *rg = hw_region_of(t, th->tp);
		if (!rg)
			continue;
		uint64_t lo = th->tp, hi = th->tp, dtv, len;
		if (hw_read_u64(t, th->tp + nm->a->dtv_off, &dtv) &&
		    hw_read_u64(t, dtv - 16, &len)) {
			for (uint64_t k = 1; k <= len && k <= DTV_MAX; k++) {
				uint64_t v;
				if (!hw_read_u64(t, dtv + 16 * k, &v) ||
				    v < rg->start || v >= rg->end)
					continue;
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
		}
		if (tls_above)
			lo = lo - rg->start > TCB_SPAN ? lo - TCB_SPAN : rg->start;
		hi = rg->end - hi > TCB_SPAN ? hi + TCB_SPAN : rg->end;
		nm->tls[i] = (struct tls_window){ lo, hi };
	}
}

static int tls_thread(struct namer *nm, uint64_t slot)
{
	if (!nm->tls_made)
		tls_make(nm);
	for (size_t i = 0; nm->tls && i < nm->s->target->nthreads; i++)
		if (slot >= nm->tls[i].lo && slot < nm->tls[i].hi)
			return (int)i;
	return -1;
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	return b ? b + 1 : path ? path : "?";
}

/* What a place is, in words and in fields.  */
struct place {
	const char *kind;       /* block register dtv stack tls data memory */
	char where[512];
	int thread;             /* -1: none */
	const char *reg;
	uint64_t holder_size;
	uint64_t sp_offset;
	bool has_sp;
	char function[320];
	const char *module, *symbol;
	uint64_t sym_offset;
	bool has_sym;
	char mapping[80];
};

/* The name of the function holding code address v (a return address:
   the byte before it is symbolised, as a call may be a function's last
   instruction); false when v is not in code.  */
static bool code_name(struct namer *nm, uint64_t v, bool ret, struct place *p)
{
	const struct hw_region *rg = hw_region_of(nm->s->target, v);
	if (!rg || !(rg->prot & HW_PROT_X) || !nm->s->syms)
		return false;
	struct hw_symbol_at sa = { 0 };
	if (hw_syms_symbol_at(nm->s->syms, ret ? v - 1 : v, &sa))
		hw_syms_demangle(sa.name, p->function, sizeof p->function);
	else if (sa.module)
		snprintf(p->function, sizeof p->function, "%s+0x%" PRIx64,
			 base_name(sa.module), v - rg->start);
	else
		return false;
	return true;
}

/* Whether the code before v ends in a call (x86_64: e8 rel32, or ff /2
   in its 2- to 7-byte forms), as before a return address; true when the
   bytes are not in the target (no way to tell).  Keeps a stale function
   pointer in a frame from passing for a return address.  */
static bool after_call(struct hw_target *t, uint64_t v)
{
	uint8_t b[7];
	if (v < sizeof b || !hw_read(t, v - sizeof b, b, sizeof b))
		return true;
	if (b[2] == 0xe8)
		return true;
	for (unsigned k = 2; k <= 7; k++)
		if (b[7 - k] == 0xff && ((b[8 - k] >> 3) & 7) == 2)
			return true;
	return false;
}

static bool read_word(void *cookie, uint64_t addr, uint64_t *v)
{
	return hw_read_u64(cookie, addr, v);
}

/* Thread i's frames, unwound by libdwfl on first use.  */
static const struct unwound *frames_of(struct namer *nm, size_t i)
{
	struct hw_target *t = nm->s->target;
	if (!nm->frames) {
		nm->frames = calloc(t->nthreads ? t->nthreads : 1,
				    sizeof *nm->frames);
		if (!nm->frames)
			return NULL;
	}
	struct unwound *u = &nm->frames[i];
	if (u->made)
		return u;
	u->made = true;
	const struct hw_thread *th = &t->threads[i];
	if (!nm->a || !nm->s->syms || !th->nregs ||
	    !(u->v = calloc(UNWIND_FRAMES, sizeof *u->v)))
		return u;
	struct hw_unwind_thread req = {
		.tid = th->tid, .machine = nm->a->e_machine, .regs = th->regs,
		.nregs = th->nregs, .read = read_word, .cookie = t };
	u->n = hw_syms_unwind(nm->s->syms, &req, u->v, UNWIND_FRAMES);
	return u;
}

/* The function whose frame holds slot, from the unwound frames: frame k
   owns [its sp, frame k+1's sp).  False when the unwind gave too little
   to say.  */
static bool unwound_frame_of(struct namer *nm, size_t i, uint64_t slot,
			     struct place *p)
{
	const struct unwound *u = frames_of(nm, i);
	if (!u || u->n < 2)
		return false;
	for (size_t k = 0; k + 1 < u->n; k++) {
		if (!u->v[k].sp || !u->v[k + 1].sp)
			return false;
		if (slot >= u->v[k].sp && slot < u->v[k + 1].sp) {
			struct hw_symbol_at sa = { 0 };
			uint64_t pc = u->v[k].pc - !u->v[k].activation;
			const struct hw_region *rg =
				hw_region_of(nm->s->target, pc);
			if (hw_syms_symbol_at(nm->s->syms, pc, &sa))
				hw_syms_demangle(sa.name, p->function,
						 sizeof p->function);
			else if (sa.module && rg)
				snprintf(p->function, sizeof p->function,
					 "%s+0x%" PRIx64, base_name(sa.module),
					 u->v[k].pc - rg->start);
			else
				snprintf(p->function, sizeof p->function,
					 "0x%" PRIx64, u->v[k].pc);
			return true;
		}
	}
	return false;
}

/* The function of the stack frame holding slot.  x86_64: the nearest
   word below it (down to the stack pointer) that points into code, taken
   as the return address the frame below pushed, which is into the
   function owning the slot (if the code before it is a call).  aarch64
   keeps its frame records (x29, x30) at the bottom of each frame, where
   that word would name the caller: the chain of records from x29 is
   followed instead, a slot above the k-th record belonging to the
   function the record below it returns into (the innermost: the one at
   pc).  */
static void frame_of(struct namer *nm, const struct hw_thread *th,
		     uint64_t slot, struct place *p)
{
	struct hw_target *t = nm->s->target;
	uint64_t mask = nm->r->ptr_mask;
	if (nm->a && nm->a->e_machine == EM_AARCH64 && th->nregs > 29) {
		const struct hw_region *rg = hw_region_of(t, th->sp);
		uint64_t fp = th->regs[29] & mask, owner = th->pc & mask;
		bool ret = false;
		for (unsigned k = 0; rg && k < FRAME_WORDS; k++) {
			uint64_t next, lr;
			if (fp < th->sp || fp >= rg->end - 16 || (fp & 7) ||
			    slot < fp || !hw_read_u64(t, fp, &next) ||
			    !hw_read_u64(t, fp + 8, &lr))
				break;
			next &= mask;
			if (slot < next || next <= fp)
				break;
			owner = lr & mask;
			ret = true;
			fp = next;
		}
		code_name(nm, owner, ret, p);
		return;
	}
	uint64_t n = 0;
	for (uint64_t a = slot; a >= th->sp + 8 && n < FRAME_WORDS; n++) {
		a -= 8;
		uint64_t v;
		if (!hw_read_u64(t, a, &v))
			break;
		v &= mask;
		const struct hw_region *rg = hw_region_of(t, v);
		if (rg && (rg->prot & HW_PROT_X) && after_call(t, v) &&
		    code_name(nm, v, true, p))
			return;
	}
}

static void name_memory(struct namer *nm, const struct hw_ref *ref,
			struct place *p)
{
	struct hw_target *t = nm->s->target;
	int tls = tls_thread(nm, ref->slot);
	if (tls >= 0) {
		p->kind = "tls";
		p->thread = tls;
		snprintf(p->where, sizeof p->where, "TLS of thread %d (tid %d)",
			 tls + 1, t->threads[tls].tid);
		return;
	}
	if (ref->kind == HW_REF_STACK && ref->thread >= 0) {
		const struct hw_thread *th = &t->threads[ref->thread];
		p->kind = "stack";
		p->thread = ref->thread;
		p->has_sp = true;
		p->sp_offset = ref->slot - th->sp;
		if (!unwound_frame_of(nm, (size_t)ref->thread, ref->slot, p))
			frame_of(nm, th, ref->slot, p);
		snprintf(p->where, sizeof p->where,
			 "thread %d (tid %d) stack sp+0x%" PRIx64 ", frame of %s",
			 ref->thread + 1, th->tid, p->sp_offset,
			 p->function[0] ? p->function : "an unknown function");
		return;
	}
	struct hw_symbol_at sa = { 0 };
	bool sym = nm->s->syms && hw_syms_symbol_at(nm->s->syms, ref->slot, &sa);
	if (sym) {
		p->kind = "data";
		p->module = base_name(sa.module);
		p->symbol = sa.name;
		p->sym_offset = sa.offset;
		p->has_sym = true;
		snprintf(p->where, sizeof p->where, "%s+%s+0x%" PRIx64,
			 p->module, sa.name, sa.offset);
		return;
	}
	const struct hw_region *rg = hw_region_of(t, ref->slot);
	struct hw_module m;
	if (nm->s->syms && hw_syms_module_at(nm->s->syms, ref->slot, &m)) {
		p->kind = "data";
		p->module = base_name(m.name);
		p->sym_offset = ref->slot - m.low;
		snprintf(p->where, sizeof p->where, "%s+0x%" PRIx64, p->module,
			 p->sym_offset);
		return;
	}
	p->kind = "memory";
	if (rg)
		snprintf(p->mapping, sizeof p->mapping,
			 "0x%" PRIx64 "-0x%" PRIx64 " %c%c%c", rg->start,
			 rg->end, rg->prot & HW_PROT_R ? 'r' : '-',
			 rg->prot & HW_PROT_W ? 'w' : '-',
			 rg->prot & HW_PROT_X ? 'x' : '-');
	snprintf(p->where, sizeof p->where, "memory at 0x%" PRIx64
		 " (mapping %s%s%s)", ref->slot, p->mapping,
		 rg && rg->file >= 0 && (size_t)rg->file < t->nfiles ? " " : "",
		 rg && rg->file >= 0 && (size_t)rg->file < t->nfiles
		 ? base_name(t->files[rg->file].path) : "");
}

static void name_place(struct namer *nm, const struct hw_ref *ref,
		       struct place *p)
{
	struct hw_target *t = nm->s->target;
	memset(p, 0, sizeof *p);
	p->thread = -1;
	int tid = ref->thread >= 0 && (size_t)ref->thread < t->nthreads
		  ? t->threads[ref->thread].tid : 0;
	switch (ref->kind) {
	case HW_REF_BLOCK: {
		enum bm_mark mark = BM_REACHABLE;
		hw_reach_mark(nm->r, ref->holder, &mark);
		p->kind = "block";
		p->holder_size = size_of(&nm->sizes, ref->holder,
					 ref->holder_end - ref->holder);
		snprintf(p->where, sizeof p->where, "block 0x%" PRIx64
			 " (%" PRIu64 " bytes, %s) +0x%" PRIx64, ref->holder,
			 p->holder_size, kind_names[mark],
			 ref->slot - ref->holder);
		return;
	}
	case HW_REF_REGISTER:
		p->kind = "register";
		p->thread = ref->thread;
		p->reg = nm->a && nm->a->reg_names && ref->reg >= 0 &&
			 (unsigned)ref->reg < nm->a->nregs
			 ? nm->a->reg_names[ref->reg] : "?";
		snprintf(p->where, sizeof p->where,
			 "thread %d (tid %d) register %s", ref->thread + 1, tid,
			 p->reg);
		return;
	case HW_REF_DTV:
		p->kind = "dtv";
		p->thread = ref->thread;
		snprintf(p->where, sizeof p->where,
			 "TLS/DTV of thread %d (tid %d)", ref->thread + 1, tid);
		return;
	case HW_REF_STACK:
	case HW_REF_MEMORY:
		name_memory(nm, ref, p);
		return;
	}
}

/* ---- the rows ------------------------------------------------------------ */

static const struct em_field REF_COLS[] = {
	{ .key = "kind", .only = EM_JSON_ONLY },
	{ .key = "at", .label = "at", .form = EM_T_HEX0, .digits = 16,
	  .width = -18, .none = "-" },
	{ .key = "points_to", .label = "points to", .width = -11 },
	{ .key = "target_offset", .only = EM_JSON_ONLY },
	{ .key = "where", .label = "held by", .join = "  " },
	{ .key = "thread", .only = EM_JSON_ONLY },
	{ .key = "tid", .only = EM_JSON_ONLY },
	{ .key = "register", .only = EM_JSON_ONLY },
	{ .key = "block", .only = EM_JSON_ONLY },
	{ .key = "size", .only = EM_JSON_ONLY },
	{ .key = "offset", .only = EM_JSON_ONLY },
	{ .key = "block_kind", .only = EM_JSON_ONLY },
	{ .key = "sp_offset", .only = EM_JSON_ONLY },
	{ .key = "function", .only = EM_JSON_ONLY },
	{ .key = "module", .only = EM_JSON_ONLY },
	{ .key = "symbol", .only = EM_JSON_ONLY },
	{ .key = "symbol_offset", .only = EM_JSON_ONLY },
	{ .key = "mapping", .only = EM_JSON_ONLY },
	/* why: the block the pointer leads to.  */
	{ .key = "to", .label = "to", .join = "  ", .pre = "-> " },
	{ .key = "to_size", .only = EM_JSON_ONLY },
};
#define NREF_COLS (sizeof REF_COLS / sizeof REF_COLS[0])
#define NREF_COLS_REFS (NREF_COLS - 2)

static const struct em_table REFS_TABLE = {
	.key = "refs", .cols = REF_COLS, .ncols = NREF_COLS_REFS };
/* No referrers: JSON's empty list, and no header in text.  */
static const struct em_table REFS_NONE = {
	.key = "refs", .cols = REF_COLS, .ncols = NREF_COLS_REFS,
	.only = EM_JSON_ONLY };
static const struct em_table CHAIN_TABLE = {
	.key = "chain", .cols = REF_COLS, .ncols = NREF_COLS };

/* One row: the place ref, whose pointer leads into [to, to_end).  */
static void ref_row(struct hw_emitter *e, struct namer *nm,
		    const struct hw_ref *ref, uint64_t to, uint64_t to_end,
		    bool chain)
{
	struct place p;
	name_place(nm, ref, &p);
	struct hw_target *t = nm->s->target;
	bool th = p.thread >= 0 && (size_t)p.thread < t->nthreads;
	bool start = ref->value == to;
	char hit[40];
	snprintf(hit, sizeof hit, "+0x%" PRIx64, ref->value - to);
	enum bm_mark mark = BM_REACHABLE;
	bool block = ref->kind == HW_REF_BLOCK;
	if (block)
		hw_reach_mark(nm->r, ref->holder, &mark);
	char tosize[48] = "";
	uint64_t tsize = size_of(&nm->sizes, to, to_end - to);
	snprintf(tosize, sizeof tosize, "0x%" PRIx64 " (%" PRIu64 " bytes)",
		 to, tsize);
	const struct em_val v[NREF_COLS] = {
		ev_str(p.kind),
		ref->kind == HW_REF_REGISTER || ref->kind == HW_REF_DTV
		? ev_null() : ev_addr(ref->slot),
		start ? ev_str("start") : ev_text(ev_str("interior"), hit),
		ev_u64(ref->value - to),
		ev_str(p.where),
		th ? ev_u64((uint64_t)p.thread + 1) : ev_absent(),
		th ? ev_i64(t->threads[p.thread].tid) : ev_absent(),
		p.reg ? ev_str(p.reg) : ev_absent(),
		block ? ev_addr(ref->holder) : ev_absent(),
		block ? ev_u64(p.holder_size) : ev_absent(),
		block ? ev_u64(ref->slot - ref->holder) : ev_absent(),
		block ? ev_str(kind_names[mark]) : ev_absent(),
		p.has_sp ? ev_u64(p.sp_offset) : ev_absent(),
		p.has_sp ? (p.function[0] ? ev_str(p.function) : ev_null())
			 : ev_absent(),
		p.module ? ev_str(p.module) : ev_absent(),
		p.symbol ? ev_str(p.symbol) : ev_absent(),
		p.module ? ev_u64(p.sym_offset) : ev_absent(),
		p.mapping[0] ? ev_str(p.mapping) : ev_absent(),
		chain ? ev_text(ev_addr(to), tosize) : ev_absent(),
		chain ? ev_u64(tsize) : ev_absent(),
	};
	em_row(e, v);
}

/* ---- the block asked about ------------------------------------------------ */

static const struct em_field F_QUERY = { .key = "query", .only = EM_JSON_ONLY };
static const struct em_section S_BLOCK = { .key = "block",
					   .only = EM_JSON_ONLY };
static const struct em_field F_ADDR = { .key = "addr" };
static const struct em_field F_SIZE = { .key = "size" };
static const struct em_field F_KIND = { .key = "kind" };
static const struct em_field F_NO_BLOCK = { .key = "block",
					    .only = EM_JSON_ONLY };

struct target_block {
	uint64_t query, addr, end, size;
	enum bm_mark mark;
};

/* Resolve the block in use holding the query; false when none does.  */
static bool resolve(const struct hw_reach *r, uint64_t query,
		    struct target_block *tb)
{
	struct bm_ref ref;
	bool exact;
	if (!bm_find(&r->map, query & r->ptr_mask, &ref, &exact))
		return false;
	tb->query = query;
	tb->addr = ref.addr;
	tb->end = bm_block_end(&r->map, &ref);
	tb->mark = bm_mark_of(&ref);
	return true;
}

static void emit_block(struct hw_emitter *e, struct namer *nm,
		       struct target_block *tb)
{
	tb->size = size_of(&nm->sizes, tb->addr, tb->end - tb->addr);
	em_kv(e, &F_QUERY, ev_addr(tb->query));
	em_section_begin(e, &S_BLOCK);
	em_kv(e, &F_ADDR, ev_addr(tb->addr));
	em_kv(e, &F_SIZE, ev_u64(tb->size));
	em_kv(e, &F_KIND, ev_str(kind_names[tb->mark]));
	em_section_end(e);
	if (tb->query == tb->addr)
		em_notef(e, "0x%" PRIx64 ": the block in use at 0x%" PRIx64
			 " (%" PRIu64 " bytes, %s)", tb->query, tb->addr,
			 tb->size, kind_names[tb->mark]);
	else
		em_notef(e, "0x%" PRIx64 " is %" PRIu64 " bytes into the block "
			 "in use at 0x%" PRIx64 " (%" PRIu64 " bytes, %s)",
			 tb->query, tb->query - tb->addr, tb->addr, tb->size,
			 kind_names[tb->mark]);
}

/* ---- refs ------------------------------------------------------------------ */

struct collect {
	struct hw_ref *v;
	size_t n, cap;
	uint64_t total;
	bool oom;
};

static bool collect_one(void *cookie, const struct hw_ref *ref)
{
	struct collect *c = cookie;
	c->total++;
	if (c->n >= REFS_MAX)
		return true;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct hw_ref *v = realloc(c->v, cap * sizeof *v);
		if (!v) {
			c->oom = true;
			return false;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = *ref;
	return true;
}

static const struct em_field F_COUNT = {
	.key = "count", .noun = "referrer" };
static const struct em_field F_SHOWN = { .key = "shown", .only = EM_JSON_ONLY };

/* The referrers of tb, as a table with their count.  */
static void emit_refs(struct hw_emitter *e, struct namer *nm,
		      const struct target_block *tb, const struct collect *c)
{
	em_kv(e, &F_COUNT, ev_u64(c->total));
	em_kv(e, &F_SHOWN, ev_u64(c->n));
	em_table_begin(e, c->n ? &REFS_TABLE : &REFS_NONE);
	for (size_t i = 0; i < c->n && !em_failed(e); i++)
		ref_row(e, nm, &c->v[i], tb->addr, tb->end, false);
	em_table_end(e);
	if (c->total > c->n)
		em_notef(e, "(%" PRIu64 " more not listed)", c->total - c->n);
}

static void collect_refs(struct hw_session *s, struct namer *nm,
			 const struct target_block *tb, struct collect *c)
{
	hw_refs_each(s, nm->r, tb->addr, tb->end, collect_one, c);
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].kind == HW_REF_BLOCK)
			sizes_want(&nm->sizes, c->v[i].holder);
}

static void namer_free(struct namer *nm)
{
	sizes_free(&nm->sizes);
	free(nm->tls);
	for (size_t i = 0; nm->frames && i < nm->s->target->nthreads; i++)
		free(nm->frames[i].v);
	free(nm->frames);
}

/* The leaks scan and the queried block, for `refs` and `why`.  An
   address in no block in use is an answer, not an error (as for `chunk`):
   the report says so, *answered is set, status 0.  On failure or answer
   nm is freed already.  */
static enum hw_status setup(struct hw_session *s, struct hw_emitter *e,
			    struct namer *nm, uint64_t query,
			    struct target_block *tb, bool *answered)
{
	memset(nm, 0, sizeof *nm);
	*answered = false;
	nm->s = s;
	nm->a = s->arch ? s->arch : s->target->arch;
	nm->r = hw_reach_get(s);
	if (!nm->r) {
		namer_free(nm);
		return HW_BAD_TARGET;
	}
	if (!resolve(nm->r, query, tb)) {
		namer_free(nm);
		em_doc_begin(e);
		em_kv(e, &F_QUERY, ev_addr(query));
		em_kv(e, &F_NO_BLOCK, ev_null());
		em_notef(e, "0x%" PRIx64 " is in no block in use: nothing "
			 "holds it (the command chunk 0x%" PRIx64 " says "
			 "what is there)", query, query);
		em_doc_end(e);
		*answered = true;
		return HW_OK;
	}
	sizes_want(&nm->sizes, tb->addr);
	return HW_OK;
}

static enum hw_status out_of_memory(struct hw_session *s, struct namer *nm,
				    struct collect *c)
{
	free(c->v);
	namer_free(nm);
	return hw_error(s, HW_BAD_TARGET, "out of memory");
}

/* The report's document, opened with the queried block ...  */
static void doc_begin(struct hw_session *s, struct hw_emitter *e,
		      struct namer *nm, struct target_block *tb)
{
	sizes_fill(s, &nm->sizes);
	em_doc_begin(e);
	emit_block(e, nm, tb);
}

/* ... and closed with what the answer may lack.  */
static void doc_end(struct hw_session *s, struct hw_emitter *e,
		    const struct namer *nm)
{
	if (nm->r->unreadable)
		em_note(e, "(some memory to scan is not in the target: a "
			"pointer it held is not seen)");
	hw_emit_partial(s, e);
	em_doc_end(e);
}

static enum hw_status report_refs(struct hw_session *s, struct hw_emitter *e,
				  uint64_t query)
{
	struct namer nm;
	struct target_block tb;
	bool answered;
	enum hw_status st = setup(s, e, &nm, query, &tb, &answered);
	if (st != HW_OK || answered)
		return st;
	struct collect c = { 0 };
	collect_refs(s, &nm, &tb, &c);
	if (c.oom)
		return out_of_memory(s, &nm, &c);
	doc_begin(s, e, &nm, &tb);
	emit_refs(e, &nm, &tb, &c);
	doc_end(s, e, &nm);
	free(c.v);
	namer_free(&nm);
	return HW_OK;
}

/* ---- why -------------------------------------------------------------------- */

static const struct em_field F_INTERIOR = {
	.key = "interior", .only = EM_JSON_ONLY };
static const struct em_field F_LOST = { .key = "lost", .only = EM_JSON_ONLY };

static enum hw_status report_why(struct hw_session *s, struct hw_emitter *e,
				 uint64_t query)
{
	struct namer nm;
	struct target_block tb;
	bool answered;
	enum hw_status st = setup(s, e, &nm, query, &tb, &answered);
	if (st != HW_OK || answered)
		return st;
	bool lost = tb.mark == BM_UNREACHED || tb.mark == BM_INDIRECT;
	struct hw_why_step *steps = NULL;
	size_t n = 0;
	bool interior = false;
	struct collect c = { 0 };
	if (lost) {
		collect_refs(s, &nm, &tb, &c);
	} else {
		st = hw_why_chain(s, nm.r, tb.addr, &steps, &n, &interior);
		if (st != HW_OK) {
			namer_free(&nm);
			return st;
		}
		for (size_t i = 0; i < n; i++) {
			sizes_want(&nm.sizes, steps[i].to);
			if (steps[i].ref.kind == HW_REF_BLOCK)
				sizes_want(&nm.sizes, steps[i].ref.holder);
		}
	}
	if (c.oom)
		return out_of_memory(s, &nm, &c);
	doc_begin(s, e, &nm, &tb);
	em_kv(e, &F_LOST, ev_bool(lost));
	if (lost) {
		em_notef(e, "it is lost (%s): no chain of pointers from a root "
			 "reaches it", kind_names[tb.mark]);
		if (tb.mark == BM_INDIRECT)
			em_note(e, "the lost blocks that point to it:");
		else if (c.total)
			em_note(e, "only lost blocks point into it (a lost "
				"cycle: it is the block at its lowest "
				"address):");
		else
			em_note(e, "nothing points into it: its last pointer "
				"was dropped");
		emit_refs(e, &nm, &tb, &c);
	} else if (!n) {
		em_note(e, hw_refs_internal(nm.r, tb.addr, tb.end)
			? "it is the allocator's own block (reachable by "
			  "definition): no chain from a root reaches it"
			: "no chain from a root reaches it, although the scan "
			  "of `leaks` found one");
	} else {
		em_kv(e, &F_INTERIOR, ev_bool(interior));
		em_notef(e, "reachable by a chain of %zu pointer%s from a "
			 "root%s:", n, n == 1 ? "" : "s",
			 interior ? " (no chain of start pointers reaches it; "
			 "this one goes through an interior pointer)" : "");
		em_table_begin(e, &CHAIN_TABLE);
		for (size_t i = 0; i < n && !em_failed(e); i++)
			ref_row(e, &nm, &steps[i].ref, steps[i].to,
				steps[i].to_end, true);
		em_table_end(e);
	}
	doc_end(s, e, &nm);
	free(steps);
	free(c.v);
	namer_free(&nm);
	return HW_OK;
}

/* ---- the commands ------------------------------------------------------ */

static enum hw_status refs_run(const struct hw_cmd *c)
{
	uint64_t addr;
	enum hw_status st = hw_args_address(c->s, c->argc, c->argv, &addr);
	return st != HW_OK ? st : report_refs(c->s, c->e, addr);
}

static enum hw_status why_run(const struct hw_cmd *c)
{
	uint64_t addr;
	enum hw_status st = hw_args_address(c->s, c->argc, c->argv, &addr);
	return st != HW_OK ? st : report_why(c->s, c->e, addr);
}

static const struct hw_command_opt addr_opts[] = {
	HW_OPT_ADDR, { NULL, NULL } };

const struct hw_command hw_cmd_refs = {
	.name = "refs", .run = refs_run, .args = "ADDR",
	.summary = "every root and block that points into the block holding "
		   "ADDR",
	.opts = addr_opts, .example = "core refs 0x55d4c2a1b2c0",
	.needs = HW_NEED_WALK,
};

const struct hw_command hw_cmd_why = {
	.name = "why", .run = why_run, .args = "ADDR",
	.summary = "the shortest chain of pointers from a root to the block "
		   "holding ADDR",
	.opts = addr_opts, .example = "core why 0x55d4c2a1b2c0",
	.needs = HW_NEED_WALK,
};

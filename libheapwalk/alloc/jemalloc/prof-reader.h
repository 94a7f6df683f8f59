/* prof-reader.h - what prof.c, prof-read.c, prof-find.c and prof-conf.c
 * share: jemalloc's prof structures as laid out per version, the records
 * read so far, and the bounded readers over them.  Internal to
 * alloc/jemalloc.
 */
#ifndef HW_JE_PROF_READER_H
#define HW_JE_PROF_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "jemalloc.h"
#include "prof.h"

/* A backtrace is at most PROF_BT_MAX (128) frames; a thread name of ours
   at most this long.  */
/* A backtrace is at most PROF_BT_MAX (128) frames; a thread name of ours
   at most this long.  */
#define BT_MAX 128
#define NAME_MAX_LEN 256
#define TREE_DEPTH 128            /* rb-tree depth bound (2 log2 n) */
#define MAX_NODES (1u << 24)      /* nodes of all trees together */
#define LG_MAX_CELLS 26           /* bt2gctx cells we are willing to read */
#define MAX_CELLS_READ (1ull << 27)  /* cells of every table tried */
#define LG_TINY_MIN 3             /* SC_LG_TINY_MIN: shifted counts */


struct layout {
	unsigned ncnt;                /* words of prof_cnt_t: 4 or 8 */
	unsigned tctx_cnts, tctx_gctx, tctx_uid, tctx_link, tctx_state,
		tctx_size;
	unsigned gctx_bt;             /* bt {vec, len}; vec[] follows */
	unsigned tdata_link, tdata_name, tdata_attached, tdata_expired,
		tdata_size;
	bool name_inline;             /* 5.3.1: char thread_name[16] */
	unsigned edata_tctx;          /* e_prof_tctx in the extent */
	unsigned edata_recent;        /* 5.3: e_prof_recent_alloc; 0: none */
};

/* The layout of j's version (prof-read.c).  */
bool jp_pick_layout(const struct je_state *j, struct layout *l);

/* ---- what was read ---------------------------------------------------- */

enum tctx_state { TCTX_INIT, TCTX_NOMINAL, TCTX_DUMPING, TCTX_PURGATORY };

struct tctx {
	uint64_t addr, tdata, uid, discrim, tctx_uid;
	uint64_t cnt[8];              /* as the version lays them out */
	uint32_t state;
};

struct gctx {
	uint64_t addr;
	unsigned npcs;
	uint64_t pcs[BT_MAX];
	size_t first, n;              /* its tctxs in rd.tctxs, tree order */
};

struct tdata {
	uint64_t addr, uid, discrim;
	bool expired;
	size_t hdr;                   /* its line in the header */
	char name[NAME_MAX_LEN];
	bool has_name;
};

struct reader {
	struct je_state *j;
	struct layout l;
	struct gctx *gctxs;
	size_t ngctxs, gcap;
	struct tctx *tctxs;
	size_t ntctxs, tcap;
	struct tdata *tdatas;
	size_t ntdatas, dcap;
	size_t nodes;                 /* tree nodes visited, all trees */
	uint64_t cells;               /* ckh cells looked at, all tries */
	bool oom;
};

/* ---- prof-read.c: reading records -------------------------------------- */

/* Room for `need` elements of `each` bytes in *p (capacity *cap, grown
   by doubling); false with *oom set when memory ran out.  jp_grow: room
   for one more after n.  */
bool jp_reserve(void **p, size_t *cap, size_t need, size_t each, bool *oom);
bool jp_grow(void **p, size_t *cap, size_t n, size_t each, bool *oom);
bool jp_rd64(struct reader *r, uint64_t a, uint64_t *v);
/* A gctx is a heap object whose bt.vec points at its own vector.  */
bool jp_gctx_ok(struct reader *r, uint64_t g, unsigned *len);
int jp_u64_cmp(const void *a, const void *b);
/* In-order walk of a jemalloc rb-tree (rb.h, RB_COMPACT: node = {left,
   right | red}) rooted at root, whose nodes keep their link at link_off;
   fn gets each node's address.  Bounded in depth and in nodes.  */
typedef bool node_fn(struct reader *r, uint64_t node, void *cookie);
bool jp_walk_tree(struct reader *r, uint64_t root, unsigned link_off,
		  node_fn *fn, void *cookie);
/* A gctx and the tctxs of its tree, into r.  */
bool jp_add_gctx(struct reader *r, uint64_t g, unsigned len);
/* node_fn: a tdata, into r.  */
bool jp_take_tdata(struct reader *r, uint64_t a, void *cookie);
/* A thread's name from its prof_tdata_t, into buf (>= 17 bytes).  */
bool jp_thread_name(struct reader *r, uint64_t tdata, char *buf, size_t len);

/* ---- prof-recent.c: 5.3's recent allocations ------------------------- */

/* The records into jp->p.recent.  False only when out of memory; a list
   not found or broken is said in jp->p (recent_why, recent_broken).  */
bool jp_read_recent(struct reader *r, struct je_prof *jp);

/* ---- prof-find.c: the statics, found from the data ----------------------- */

/* Is `at` bt2gctx's ckh_t, holding `want` (0: any)?  */
bool jp_ckh_at(struct reader *r, uint64_t at, uint64_t want,
	       uint64_t *tab_out, unsigned *lg_out);
struct ckh_probe {
	struct reader *r;
	uint64_t want;
	uint64_t tab;
	unsigned lg_cells;
};
je_match_fn jp_ckh_match;
struct root_probe {
	struct reader *r;
	const uint64_t *want;         /* sorted tdata addresses to reach */
	size_t nwant;
};
je_match_fn jp_tdatas_match;
/* The gctxs the live sampled extents lead to, sorted, unique (malloc'd). */
void jp_gctxs_from_extents(struct reader *r, uint64_t **out, size_t *n);

/* ---- prof-conf.c: the options ------------------------------------------ */

/* A double as a count, as jemalloc casts one.  */
uint64_t jp_to_u64(double d);
/* opt.prof and the options that shape the profile, into p (accum, unbias,
   active, the sampling period and where it came from); *have_opt: opt.prof
   was read (symbols), *opt_prof its value.  */
void jp_read_options(struct je_state *j, struct hw_profile *p,
		     bool *have_opt, bool *opt_prof);
/* A static of jemalloc's by its exact name (needs .symtab).  */
bool jp_read_static(struct je_state *j, const char *name, uint64_t *a);

#endif /* HW_JE_PROF_READER_H */

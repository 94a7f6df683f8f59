/* diff.h - the parts of the diff command (commands/diff/): reading a
 * saved base (json.c), comparing it with the session's heap per size
 * class and arena (diff.c), per C++ class (types.c), by allocation site
 * (sites.c) and by the leaks of both (leaks.c), each saying its changes
 * alike (growth.c).
 */
#ifndef HW_COMMANDS_DIFF_H
#define HW_COMMANDS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../analysis/strset.h"
#include "../../report/sizeprofile.h"
#include "../../report/typetotals.h"
#include "../command.h"

/* A leak head: the first bytes of a leaked block, what matches it
   across snapshots together with its size and class.  */
#define DIFF_HEAD 16

/* Type names of one diff, each once: blocks are matched by pointer.  */
struct diff_names {
	struct hw_strset set;
};

/* The blocks of one class in use (name NULL: of no known type).  */
struct diff_type {
	const char *name;       /* in the base's diff_names */
	uint64_t count, bytes;
};

/* One definite or indirect leak.  */
struct diff_leak {
	uint64_t addr, size;
	const char *type;       /* in diff_names, or NULL */
	uint8_t kind;           /* enum bm_mark: BM_UNREACHED, BM_INDIRECT */
	uint8_t nhead;          /* bytes of head known (<= DIFF_HEAD) */
	uint8_t head[DIFF_HEAD];
	uint8_t key[DIFF_HEAD]; /* head as matched: pointers as what they
				   point into (diff_head_key) */
};

/* key from k->head: each aligned word that points into the target
   (t: its regions say where; NULL, for a saved base: any 8-byte-aligned
   word of a user-space address's form) stands for what it points to --
   a file's mapping as its name and file offset, anonymous memory as one
   value -- so that a block holding pointers matches across runs that
   placed the heap, the stacks and the libraries elsewhere (ASLR).  */
void diff_head_key(struct hw_target *t, struct diff_leak *k);

struct diff_leaks {
	struct diff_leak *v;
	size_t n, cap;
};

/* One stack of the allocator's heap profile: its frames' names
   (prof_stack_key) and the estimated live objects and bytes.  */
struct diff_site {
	char *key;
	uint64_t objs, bytes;
};

/* A base as `diff` compares it: from another core, or from saved
   `sizes --json`, `sizes --by=type --json` and `leaks --json` output.  */
struct diff_base {
	struct hw_size_profile p;
	/* Rows p's classes and arenas have room for: with the arrays, not
	   with one file's parse, as several files (or several members of
	   one) may add to them.  */
	size_t classes_cap, arenas_cap;
	char allocator[32];     /* "ptmalloc", "jemalloc"; "" if not said */
	bool partial;           /* its walk did not cover its whole heap */
	bool has_sizes;         /* p is known (a core or a sizes --json) */
	bool has_arenas;        /* per-arena totals known (old JSON: no) */
	bool exact;             /* rows are exact sizes (sizes --exact) */
	bool has_types;         /* types is known */
	struct diff_type *types;
	size_t ntypes, types_cap;
	bool has_leaks;         /* leaks is known */
	bool leak_heads;        /* the leaks carry their heads */
	bool leak_keys_by_form; /* their keys were made without the target's
				   regions (a saved leaks --json): the other
				   side's must be made alike */
	struct diff_leaks leaks;
	struct diff_names names;
	bool has_sites;         /* a heap profile (a core base only) */
	struct diff_site *sites;          /* sorted by key */
	size_t nsites;
};

void diff_base_free(struct diff_base *b);

/* sites.c: the session's heap profile as sites sorted by key
   (*have false, no error, when it has none), and the report's section
   of what grew per allocation site when the base has sites too.  */
enum hw_status diff_site_profile(struct hw_session *s, struct diff_site **out,
				 size_t *n, bool *have);
void diff_sites_free(struct diff_site *v, size_t n);
enum hw_status diff_emit_sites(struct hw_session *s, struct hw_emitter *e,
			       const struct diff_base *b);

/* The one copy of name in n (NULL: NULL, or out of memory: *oom).  */
const char *diff_name(struct diff_names *n, const char *name, bool *oom);
void diff_names_free(struct diff_names *n);

/* Room for one more leak; false when out of memory.  */
bool diff_leaks_grow(struct diff_leaks *l);

/* Parse saved JSON (len bytes at text, not necessarily NUL-terminated)
   into b, adding to what b already has: a `sizes --json` document, a
   `sizes --by=type --json` document, or `leaks --json` lines (no line:
   no leaks).  *what is set to "sizes-json", "types-json" or
   "leaks-json".  false with a reason in why when it is none of them.  */
bool diff_parse_json(const char *text, size_t len, struct diff_base *b,
		     const char **what, char *why, size_t whylen);

/* growth.c, for every section of the report.  after - before, and it in
   text: "+3", "-1", "0"; "+1.5 MiB", "-64 KiB", "0" (in buf, or a
   constant).  */
int64_t diff_delta(uint64_t before, uint64_t after);
/* For qsort: the greater growth from before to after first (-1), 0 when
   x and y grew alike.  */
int diff_growth_cmp(uint64_t x_before, uint64_t x_after, uint64_t y_before,
		    uint64_t y_after);
const char *diff_signed_count(char *buf, size_t len, int64_t d);
const char *diff_signed_human(char *buf, size_t len, int64_t d);

/* The em_field columns of a row's change in use, in the tables of diff.c
   and types.c: the change of the count and of the bytes, then the
   count before and after, the bytes before and after.  */
#define DIFF_USED_COLS \
	{ .key = "used_delta", .label = "+/- used", .width = 10 }, \
	{ .key = "used_bytes_delta", .label = "+/- bytes", .width = 12 }, \
	{ .key = "used_before", .label = "used before", .width = 12 }, \
	{ .key = "used_after", .label = "after", .width = 10 }, \
	{ .key = "used_bytes_before", .label = "bytes before", .width = 13, \
	  .form = EM_T_HUMAN }, \
	{ .key = "used_bytes_after", .label = "after", .width = 11, \
	  .form = EM_T_HUMAN }

/* Begin the table t (the caller's copy: the emitter uses it until the
   table ends) of the n rows that changed: text has no header over none,
   JSON keeps its [].  diff_table_end() then says how many were left out
   unchanged, in JSON as `unchanged` and in text "(N <one or many>
   unchanged, not shown)", or `none` (unless NULL) when no row changed.  */
struct em_table;
struct em_field;
void diff_table_begin(struct hw_emitter *e, struct em_table *t, size_t n);
void diff_table_end(struct hw_emitter *e, const struct em_field *unchanged,
		    size_t n, size_t left_out, const char *one,
		    const char *many, const char *none);

/* types.c: the blocks of s in use per class into types (names in
   `names`); and the per-class section of the report.  */
enum hw_status diff_type_profile(struct hw_session *s, struct diff_names *names,
				 struct diff_type **types, size_t *n);
enum hw_status diff_emit_types(struct hw_session *s, struct hw_emitter *e,
			       struct diff_base *b);

/* leaks.c: the definite and indirect leaks of s into l (names in
   `names`); and the new-leaks section of the report.  */
enum hw_status diff_collect_leaks(struct hw_session *s, struct diff_names *names,
				  struct diff_leaks *l);
enum hw_status diff_emit_leaks(struct hw_session *s, struct hw_emitter *e,
			       struct diff_base *b);

#endif /* HW_COMMANDS_DIFF_H */

/* anatomy.c - one chunk's own fields, as `chunk ADDR` shows them: the
 * header (prev_size, the size field and its A, M, P bits), and for a
 * free chunk its links decoded and checked -- a tcache entry's next and
 * key, a fastbin entry's fd (safe-linking undone, 2.32+), a binned
 * chunk's fd and bk (does the chunk each points to point back?) and a
 * large bin's fd_nextsize and bk_nextsize.
 *
 * The fields are read afresh from the target (a handful of words), and
 * every pointer is checked before it is followed: the chunk may be the
 * damaged one the user is looking at.
 */
#include <stdio.h>

#include "../../emit/emit.h"
#include "ptmalloc.h"

static const struct em_section S_FIELDS = {
	.key = "fields", .title = "fields:", .indent = 2, .label_width = 13 };
static const struct em_field F_PREV_SIZE = {
	.key = "prev_size", .label = "prev_size:", .form = EM_T_HEX };
static const struct em_field F_PREV_SIZE_WHY = {
	.join = "  ", .only = EM_TEXT_ONLY };
static const struct em_field F_SIZE_FIELD = {
	.key = "size_field", .label = "size:", .form = EM_T_HEX };
static const struct em_field F_FLAGS = { .join = "  = ", .only = EM_TEXT_ONLY };
static const struct em_field F_PREV_INUSE = {
	.key = "prev_inuse", .only = EM_JSON_ONLY };
static const struct em_field F_IS_MMAPPED = {
	.key = "is_mmapped", .only = EM_JSON_ONLY };
static const struct em_field F_NON_MAIN = {
	.key = "non_main_arena", .only = EM_JSON_ONLY };

/* A link: where it points once decoded, what was stored, and what that
   is.  */
struct link_fields {
	struct em_field value, stored, says, ok;
};
#define LINK_FIELDS(nm, lbl)                                              \
	{ .value = { .key = nm, .label = lbl, .form = EM_T_HEX },         \
	  .stored = { .key = nm "_stored", .join = " (stored ",           \
		      .post = ", safe-linked)", .form = EM_T_HEX },       \
	  .says = { .join = "  ", .only = EM_TEXT_ONLY },                 \
	  .ok = { .key = nm "_ok", .only = EM_JSON_ONLY } }
static const struct link_fields L_NEXT = LINK_FIELDS("next", "next:");
static const struct link_fields L_FD = LINK_FIELDS("fd", "fd:");
static const struct link_fields L_BK = LINK_FIELDS("bk", "bk:");
static const struct link_fields L_FD_NEXTSIZE =
	LINK_FIELDS("fd_nextsize", "fd_nextsize:");
static const struct link_fields L_BK_NEXTSIZE =
	LINK_FIELDS("bk_nextsize", "bk_nextsize:");
static const struct em_field F_KEY = {
	.key = "key", .label = "key:", .form = EM_T_HEX };
static const struct em_field F_KEY_SAYS = { .join = "  ", .only = EM_TEXT_ONLY };
static const struct em_field F_KEY_OK = { .key = "key_ok", .only = EM_JSON_ONLY };

static void link_kv(struct hw_emitter *e, const struct link_fields *f,
		    uint64_t value, uint64_t stored, bool safe, bool ok,
		    const char *says)
{
	em_kv(e, &f->value, ev_addr(value));
	em_kv(e, &f->stored, safe ? ev_addr(stored) : ev_absent());
	em_kv(e, &f->says, ev_str(says));
	em_kv(e, &f->ok, ev_bool(ok));
}

/* A tcache or fastbin link, decoded: 0 ends the list; otherwise it must
   lead to a chunk of the same size, `into` bytes into it (a tcache's to
   its user address: 16; a fastbin's to its header: 0).  */
static void single_link(struct pm_state *p, struct hw_emitter *e,
			const struct link_fields *f, uint64_t field,
			uint64_t chunk_size, uint64_t into)
{
	uint64_t stored;
	if (!hw_read_u64(p->t, field, &stored)) {
		link_kv(e, f, 0, 0, false, false, "(not in the core)");
		return;
	}
	uint64_t v = pm_reveal(p, field, stored);
	uint64_t size;
	const char *says;
	bool ok;
	if (!v) {
		ok = true;
		says = "the end of the list";
	} else if (v & 15) {
		ok = false;
		says = "NOT a chunk: misaligned (damaged, or not a list entry)";
	} else if (!hw_read_u64(p->t, v - into + 8, &size)) {
		ok = false;
		says = "NOT a chunk: not in the core";
	} else if ((size & ~(uint64_t)PM_SIZE_BITS) != chunk_size) {
		ok = false;
		says = "NOT a chunk of this size (damaged, or not a list entry)";
	} else {
		ok = true;
		says = "a chunk of this size";
	}
	link_kv(e, f, v, stored, p->l.safe_linking, ok, says);
}

/* A bin's link (fd at +0x10, bk at +0x18 of a chunk or of a bin's
   header in the arena): the chunk it points to must point back.  */
static void double_link(struct pm_state *p, struct hw_emitter *e,
			const struct link_fields *f, uint64_t chunk,
			uint64_t field, uint64_t back_off)
{
	uint64_t v, back;
	if (!hw_read_u64(p->t, field, &v)) {
		link_kv(e, f, 0, 0, false, false, "(not in the core)");
		return;
	}
	bool arena = false;
	for (size_t i = 0; i < p->narenas && !arena; i++)
		arena = v >= p->arenas[i].addr &&
			v - p->arenas[i].addr < p->l.ms_sizeof;
	bool ok = !(v & 7) && hw_read_u64(p->t, v + back_off, &back) &&
		  back == chunk;
	char says[96];
	snprintf(says, sizeof says, "%s%s", arena ? "a bin's head in its "
		 "arena; " : "", ok ? "points back" :
		 "does NOT point back (damaged list)");
	link_kv(e, f, v, 0, false, ok, says);
}

void pm_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e)
{
	struct pm_state *p = state;
	uint64_t prev_size = 0, field = 0;
	bool have = hw_read_u64(p->t, c->chunk, &prev_size) &&
		    hw_read_u64(p->t, c->chunk + 8, &field);
	em_section_begin(e, &S_FIELDS);
	if (!have) {
		em_kv(e, &F_PREV_SIZE, ev_null());
		em_kv(e, &F_PREV_SIZE_WHY, ev_str("(the header is not in the "
						  "core)"));
		em_section_end(e);
		return;
	}
	bool mmapped = c->where == HW_WHERE_MMAPPED ||
		       (field & PM_IS_MMAPPED);
	bool prev_inuse = field & PM_PREV_INUSE;
	em_kv(e, &F_PREV_SIZE, ev_u64(prev_size));
	em_kv(e, &F_PREV_SIZE_WHY, ev_str(
		mmapped ? "(an mmapped chunk's: the bytes before it in its "
			  "mapping)"
		: prev_inuse ? "(the chunk before is in use: its data)"
		: "(the chunk before is free: its size)"));
	char flags[128];
	snprintf(flags, sizeof flags, "chunk size 0x%llx%s%s%s",
		 (unsigned long long)(field & ~(uint64_t)PM_SIZE_BITS),
		 field & PM_NON_MAIN_ARENA ? " | NON_MAIN_ARENA" : "",
		 field & PM_IS_MMAPPED ? " | IS_MMAPPED" : "",
		 prev_inuse ? " | PREV_INUSE" : "");
	em_kv(e, &F_SIZE_FIELD, ev_u64(field));
	em_kv(e, &F_FLAGS, ev_str(flags));
	em_kv(e, &F_PREV_INUSE, ev_bool(prev_inuse));
	em_kv(e, &F_IS_MMAPPED, ev_bool((field & PM_IS_MMAPPED) != 0));
	em_kv(e, &F_NON_MAIN, ev_bool((field & PM_NON_MAIN_ARENA) != 0));
	uint64_t user = c->chunk + PM_HDR;
	switch (c->where) {
	case HW_WHERE_TCACHE: {
		single_link(p, e, &L_NEXT, user, c->chunk_size, PM_HDR);
		uint64_t key;
		if (p->tcache_key_mode == PM_KEY_NONE ||
		    !hw_read_u64(p->t, user + 8, &key))
			break;
		bool ok = false;
		if (p->tcache_key_mode == PM_KEY_RANDOM)
			ok = key == p->tcache_key;
		for (size_t i = 0; i < p->ntcaches && !ok &&
				   p->tcache_key_mode == PM_KEY_SELF; i++)
			ok = key == p->tcaches[i].addr;
		em_kv(e, &F_KEY, ev_addr(key));
		em_kv(e, &F_KEY_SAYS, ev_str(
			ok ? p->tcache_key_mode == PM_KEY_RANDOM
			     ? "glibc's tcache_key: a tcache entry"
			     : "a tcache's address: a tcache entry"
			   : "NOT the tcache key (damaged)"));
		em_kv(e, &F_KEY_OK, ev_bool(ok));
		break;
	}
	case HW_WHERE_FASTBIN:
		single_link(p, e, &L_FD, user, c->chunk_size, 0);
		break;
	case HW_WHERE_UNSORTED:
	case HW_WHERE_SMALLBIN:
	case HW_WHERE_LARGEBIN:
		double_link(p, e, &L_FD, c->chunk, user, 0x18);
		double_link(p, e, &L_BK, c->chunk, user + 8, 0x10);
		if (c->where != HW_WHERE_LARGEBIN)
			break;
		/* Only the first chunk of each size in a large bin links to
		   the other sizes; the rest hold zeros there.  */
		uint64_t fdn;
		if (hw_read_u64(p->t, user + 16, &fdn) && fdn) {
			double_link(p, e, &L_FD_NEXTSIZE, c->chunk, user + 16,
				    0x28);
			double_link(p, e, &L_BK_NEXTSIZE, c->chunk, user + 24,
				    0x20);
		}
		break;
	default:
		break;
	}
	em_section_end(e);
}

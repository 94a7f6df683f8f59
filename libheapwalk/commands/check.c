/* check.c - the check command: every problem the walk found, each with
 * its address, sorted by address, and glibc's own abort when malloc
 * killed the process.  Exits HW_CORRUPT when there is any.
 */
#include <stdlib.h>

#include "../alloc/alloc.h"
#include "../analysis/inflight.h"
#include "../emit/emit.h"
#include "../report/args.h"
#include "../report/crash.h"
#include "../report/partial.h"
#include "command.h"

static bool count_only(void *cookie, const struct hw_chunk *ch)
{
	(void)ch;
	(*(uint64_t *)cookie)++;
	return true;
}

static int finding_cmp(const void *a, const void *b)
{
	const struct hw_finding *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Each finding on a line: "0x...: [note: ]problem".  */
static const struct em_field FINDING_COLS[] = {
	{ .key = "addr", .form = EM_T_HEX0, .digits = 16, .post = ":" },
	{ .key = "problem", .join = "" },
	{ .key = "severity", .join = " " },
};
static const uint8_t FINDING_TEXT_ORDER[] = { 0, 2, 1 };
static const struct em_table FINDINGS_TABLE = {
	.key = "findings", .cols = FINDING_COLS, .ncols = 3,
	.text_order = FINDING_TEXT_ORDER, .ntext = 3,
	.flags = EM_TB_NO_HEADER };
/* "N chunks checked, N problems found".  */
static const struct em_field F_CHECKED = {
	.key = "chunks", .noun = "chunk", .post = " checked" };
static const struct em_field F_CORRUPTIONS = {
	.key = "corruptions", .join = ", ", .noun = "problem",
	.post = " found" };

static enum hw_status check_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	uint64_t n = 0;
	enum hw_status st = hw_args_at_most(s, c->argc, c->argv, 0, NULL);
	if (st != HW_OK)
		return st;
	hw_walk_blocks(s, count_only, &n);
	if (s->alloc->check)
		s->alloc->check(s->alloc_state);
	/* A live process stopped inside malloc or free: what that call had
	   half done is said, not counted as corruption.  */
	hw_inflight_settle(s);
	em_doc_begin(e);
	/* Before the findings are sorted: glibc's own abort is one.  */
	if (!hw_emit_death(s, e)) {
		em_doc_end(e);
		return HW_BAD_TARGET;
	}
	if (s->nfindings)
		qsort(s->findings, s->nfindings, sizeof *s->findings,
		      finding_cmp);
	em_table_begin(e, &FINDINGS_TABLE);
	for (size_t i = 0; i < s->nfindings; i++) {
		const struct hw_finding *f = &s->findings[i];
		const struct em_val v[] = {
			ev_addr(f->addr), ev_str(f->problem),
			f->note ? ev_text(ev_str("note"), "note: ") : ev_absent(),
		};
		em_row(e, v);
	}
	em_table_end(e);
	if (s->nfindings < s->findings_total)
		em_notef(e, "(%llu more findings not kept)",
			 (unsigned long long)(s->findings_total - s->nfindings));
	em_kv(e, &F_CHECKED, ev_u64(n));
	em_kv(e, &F_CORRUPTIONS, ev_u64(s->findings_total));
	/* Text lists the findings; the walk's partial mark is in JSON.  */
	hw_emit_partial_members(s, e);
	em_doc_end(e);
	return s->findings_total ? HW_CORRUPT : HW_OK;
}

const struct hw_command hw_cmd_check = {
	.name = "check", .run = check_run, .args = "",
	.summary = "heap consistency: every problem with its address",
	.example = "core check", .needs = HW_NEED_WALK,
};

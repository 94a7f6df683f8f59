/* arenas.c - the arenas command: each arena with its heaps (ptmalloc)
 * or extents (jemalloc) and totals, as the walker reports them.
 */
#include "../alloc/alloc.h"
#include "../report/args.h"
#include "command.h"

static enum hw_status arenas_run(const struct hw_cmd *c)
{
	enum hw_status st = hw_args_at_most(c->s, c->argc, c->argv, 0, NULL);
	if (st != HW_OK)
		return st;
	return c->s->alloc->arenas(c->s->alloc_state, c->e);
}

const struct hw_command hw_cmd_arenas = {
	.name = "arenas", .run = arenas_run, .args = "",
	.summary = "each arena with its heaps and totals",
	.example = "core arenas", .needs = HW_NEED_WALK,
};

/* mp.c - the mp command: the allocator's parameters and counters, as the
 * walker reports them (ptmalloc: glibc's malloc_par, mp_; jemalloc and
 * tcmalloc: their build's parameters as the heap shows them).
 */
#include "../alloc/alloc.h"
#include "../report/args.h"
#include "command.h"

static enum hw_status mp_run(const struct hw_cmd *c)
{
	enum hw_status st = hw_args_at_most(c->s, c->argc, c->argv, 0, NULL);
	if (st != HW_OK)
		return st;
	if (!c->s->alloc->params)
		return hw_error(c->s, HW_USAGE, "mp: not shown for %s yet",
				c->s->alloc->name);
	return c->s->alloc->params(c->s->alloc_state, c->e);
}

const struct hw_command hw_cmd_mp = {
	.name = "mp", .run = mp_run, .args = "",
	.summary = "the allocator's parameters and counters (ptmalloc: mp_, "
		   "malloc_par: tunables, mmap counters, tcache limits; "
		   "jemalloc: page, quantum, classes; tcmalloc: its size map)",
	.example = "core mp",
};

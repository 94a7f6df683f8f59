/* arena.c - the arena command (arena N): one arena's own fields, as the
 * walker reports them (ptmalloc: malloc_state, its threads and heaps;
 * jemalloc: what its extents, tcaches and arena_t say).
 */
#include "../alloc/alloc.h"
#include "../report/args.h"
#include "command.h"

static enum hw_status arena_run(const struct hw_cmd *c)
{
	uint64_t n;
	if (c->argc != 2 || !hw_args_size(c->argv[1], &n))
		return hw_error(c->s, HW_USAGE, "arena: expected an arena's "
				"number (N, as arenas lists them)");
	if (!c->s->alloc->arena)
		return hw_error(c->s, HW_USAGE, "arena: not shown for %s yet "
				"(arenas lists every arena)", c->s->alloc->name);
	return c->s->alloc->arena(c->s->alloc_state, c->e, (size_t)n);
}

static const struct hw_command_opt arena_opts[] = {
	{ "N", "the arena's number, as arenas lists them (0: main_arena)" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_arena = {
	.name = "arena", .run = arena_run, .args = "N",
	.summary = "one arena's own fields (ptmalloc: malloc_state: top, "
		   "last_remainder, flags, next, attached threads, heaps; "
		   "jemalloc: nthreads, threads, base, extents by state)",
	.opts = arena_opts, .example = "core arena 1",
};

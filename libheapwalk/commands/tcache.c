/* tcache.c - the tcache command (tcache [TID]): each thread's cache as
 * the allocator keeps it, bin by bin (ptmalloc: tcache_perthread_struct;
 * jemalloc: the thread's cache bins).
 */
#include "../alloc/alloc.h"
#include "../report/args.h"
#include "command.h"

static enum hw_status tcache_run(const struct hw_cmd *c)
{
	uint64_t tid = 0;
	if (c->argc > 2 || (c->argc == 2 && (!hw_args_size(c->argv[1], &tid) ||
					      tid > INT32_MAX)))
		return hw_error(c->s, HW_USAGE, "tcache: expected a thread's "
				"id (TID) or nothing (every thread's)");
	if (!c->s->alloc->tcaches)
		return hw_error(c->s, HW_USAGE, "tcache: not shown for %s yet "
				"(bins tcache gives the totals)",
				c->s->alloc->name);
	return c->s->alloc->tcaches(c->s->alloc_state, c->e,
				    c->argc == 2 ? (int64_t)tid : -1);
}

static const struct hw_command_opt tcache_opts[] = {
	{ "TID", "only this thread's tcache (its id, as summary lists them)" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_tcache = {
	.name = "tcache", .run = tcache_run, .args = "[TID]",
	.summary = "each thread's tcache (ptmalloc's tcache struct, "
		   "jemalloc's cache bins, tcmalloc's thread caches): where it "
		   "is, and per bin its count and head",
	.opts = tcache_opts, .example = "core tcache",
	.needs = HW_NEED_LISTS,
};

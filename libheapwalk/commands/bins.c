/* bins.c - the bins command: the free lists, all or one KIND, as the
 * walker reports them.
 */
#include "../alloc/alloc.h"
#include "../report/args.h"
#include "command.h"

static enum hw_status bins_run(const struct hw_cmd *c)
{
	enum hw_status st = hw_args_at_most(c->s, c->argc, c->argv, 1,
					    "one KIND at most");
	if (st != HW_OK)
		return st;
	return c->s->alloc->bins(c->s->alloc_state, c->e,
				 c->argc > 1 ? c->argv[1] : NULL);
}

static const struct hw_command_opt bins_opts[] = {
	{ "KIND", "one kind of list: ptmalloc tcache, fast, unsorted, small, "
		  "large; jemalloc small, large, tcache; tcmalloc classes" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_bins = {
	.name = "bins", .run = bins_run, .args = "[KIND]",
	.summary = "free lists (ptmalloc: tcache fast unsorted small large; "
		   "jemalloc: small large tcache; tcmalloc: classes)",
	.opts = bins_opts, .example = "core bins tcache",
	.needs = HW_NEED_LISTS,
};

/* bins.c - the bins command: the free lists, all or one KIND, as the
 * walker reports them; with --list each list's entries in its own order.
 */
#include <string.h>

#include "../alloc/alloc.h"
#include "command.h"

static enum hw_status bins_run(const struct hw_cmd *c)
{
	const char *kind = NULL;
	bool list = false;
	for (int i = 1; i < c->argc; i++) {
		const char *a = c->argv[i];
		if (!strcmp(a, "--list") || !strcmp(a, "-v"))
			list = true;
		else if (a[0] == '-' || kind)
			return hw_error(c->s, HW_USAGE, "bins: unexpected "
					"argument '%s' (%s)", a,
					hw_cmd_bins.args);
		else
			kind = a;
	}
	if (!list)
		return c->s->alloc->bins(c->s->alloc_state, c->e, kind);
	if (!c->s->alloc->bins_list)
		return hw_error(c->s, HW_USAGE, "bins --list: the lists' "
				"entries are not shown for %s yet (bins gives "
				"their totals)", c->s->alloc->name);
	return c->s->alloc->bins_list(c->s->alloc_state, c->e, kind);
}

static const struct hw_command_opt bins_opts[] = {
	{ "KIND", "one kind of list: ptmalloc tcache, fast, unsorted, small, "
		  "large; jemalloc small, large, tcache; tcmalloc classes" },
	{ "--list, -v", "ptmalloc: each list's entries in its order (user "
			"addresses, links decoded) and how it ends: at its "
			"end, or where it breaks" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_bins = {
	.name = "bins", .run = bins_run, .args = "[KIND] [--list]",
	.summary = "free lists (ptmalloc: tcache fast unsorted small large; "
		   "jemalloc: small large tcache; tcmalloc: classes)",
	.opts = bins_opts, .example = "core bins tcache --list",
	.needs = HW_NEED_LISTS,
};

/* triage.c - the triage command: the target's triage record
 * (report/triage.c), one line.  The command line's `heapwalk triage
 * CORE...` runs it once per core, each in a process of its own
 * (cli/triage.c), through hw_triage(); inside gdb, `heap triage` gives
 * the record of what gdb debugs.  It runs on a target with no allocator
 * heapwalk knows too: the record then says how the process died.
 */
#include "../emit/emit.h"
#include "../report/triage.h"
#include "../target/target.h"
#include "command.h"

static enum hw_status triage_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_triage_opts o;
	enum hw_status st = hw_triage_args(s, c->argc, c->argv, &o);
	if (st != HW_OK)
		return st;
	if (!o.core)
		o.core = s->target->path ? s->target->path : "";
	return hw_triage_emit(s, &o, c->e);
}

static const struct hw_command_opt triage_opts[] = {
	{ "-j N", "cores analysed at once, each in a process of its own "
	  "(default: one per CPU; the command line's form)" },
	{ "--timeout SECS", "give up on a core after SECS seconds: its "
	  "record is an error (default: no limit)" },
	{ "--no-leaks", "skip the reachability scan: \"leaks\" is null "
	  "(the scan is most of a record's time)" },
	{ "--top N", "size classes in \"top_classes\" (default 5)" },
	{ "CORE... | -", "the cores; - reads their paths from standard input, "
	  "one per line" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_triage = {
	.name = "triage", .run = triage_run,
	.args = "[-j N] [--timeout SECS] [--no-leaks] [--top N] CORE... | -",
	.summary = "one record per core, in parallel: identity, allocator, "
		   "totals, leaks, damage, death, a signature to group by",
	.opts = triage_opts, .example = "--json triage -j 4 /var/lib/"
		"systemd/coredump/core.*",
	.needs = HW_NEED_WALK, .without_allocator = true,
};

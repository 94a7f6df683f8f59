/* table.c - the command table, and running a command.
 *
 * Each command is defined in its own file (command.h says what one is);
 * this table names them once, in the order help lists them.  The CLI,
 * the gdb plugin, help, the man pages' test and bash completion (through
 * --help) all read it through the hw_command_*() calls.
 */
#include <stddef.h>
#include <string.h>

#include "../emit/emit.h"
#include "../target/cache.h"
#include "../target/target.h"
#include "command.h"

static const struct hw_command *const commands[] = {
	&hw_cmd_summary,
	&hw_cmd_arenas,
	&hw_cmd_arena,
	&hw_cmd_mp,
	&hw_cmd_tcache,
	&hw_cmd_bins,
	&hw_cmd_chunks,
	&hw_cmd_sizes,
	&hw_cmd_chunk,
	&hw_cmd_view,
	&hw_cmd_check,
	&hw_cmd_frag,
	&hw_cmd_leaks,
	&hw_cmd_refs,
	&hw_cmd_why,
	&hw_cmd_diff,
	&hw_cmd_maps,
	&hw_cmd_map,
	&hw_cmd_prof,
	&hw_cmd_triage,
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const struct hw_command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

const char *hw_command_name(size_t i)
{
	return i < NCOMMANDS ? commands[i]->name : NULL;
}

const char *hw_command_help(size_t i)
{
	return i < NCOMMANDS ? commands[i]->summary : NULL;
}

const char *hw_command_usage(size_t i)
{
	return i < NCOMMANDS ? commands[i]->args : NULL;
}

const char *hw_command_option(size_t i, size_t k, const char **help)
{
	if (i >= NCOMMANDS)
		return NULL;
	const struct hw_command_opt *o = commands[i]->opts;
	if (!o)
		return NULL;
	for (size_t n = 0; n < k; n++)
		if (!o[n].spelling)
			return NULL;
	if (help)
		*help = o[k].help;
	return o[k].spelling;
}

const char *hw_command_example(size_t i)
{
	return i < NCOMMANDS ? commands[i]->example : NULL;
}

unsigned hw_command_needs(const char *name)
{
	const struct hw_command *cmd = find(name);
	return cmd ? cmd->needs : 0;
}

enum hw_status hw_command_run(hw_session *s, int argc, char *const argv[],
			      const struct hw_output *given)
{
	struct hw_output o;
	if (!em_output_of(given, &o))
		return hw_error(s, HW_USAGE, "hw_session_run: struct "
				"hw_output without its size, its write "
				"function or a known form");
	const struct hw_output *out = &o;
	const char *name = argc > 0 ? argv[0] : "summary";
	const struct hw_command *cmd = find(name);
	if (!cmd)
		return hw_error(s, HW_USAGE, "unknown command '%s'", name);
	if (!s->target)
		return hw_error(s, HW_BAD_TARGET, "no target: the session did "
				"not open");
	if (!s->alloc && !cmd->without_allocator)
		return hw_error(s, HW_NO_ALLOCATOR, "no allocator was found");
	struct hw_emitter *e = em_open(out);
	if (!e)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	char *const dflt[] = { (char *)"summary", NULL };
	const struct hw_cmd c = { s, e, argc > 0 ? argc : 1,
				  argc > 0 ? argv : dflt, out->terminal };
	enum hw_status st = cmd->run(&c);
	if (!em_close(e) && st == HW_OK)
		st = hw_error(s, HW_BAD_TARGET, "write error on output");
	if (atomic_load(&s->oom) || hw_cache_oom(s->target->cache))
		st = hw_error(s, HW_BAD_TARGET, "out of memory: the walk could "
			      "not keep track of the heap; what was printed is "
			      "incomplete");
	return st;
}

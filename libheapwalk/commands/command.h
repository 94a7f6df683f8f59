/* command.h - what a command is.
 *
 * Each command is one file under commands/ (a family of files shares a
 * folder: diff/, prof/, map/) that defines one struct hw_command: its
 * entry point, the words it takes and how help shows it.  table.c lists
 * them in the order help shows them, and everything that names commands
 * reads that table: the CLI and its help, the gdb plugin's `heap`
 * commands, the bash completion (through --help), the man pages' test
 * and the public hw_command_*() calls.  A new command is its file and
 * one line in the table.
 *
 * A command emits its report through the emitter (emit/emit.h) and
 * builds on the helpers commands share (the headers in report/); it
 * calls no other command (tests/t0025-layers.sh).
 */
#ifndef HW_COMMANDS_COMMAND_H
#define HW_COMMANDS_COMMAND_H

#include "../session/session.h"

struct hw_emitter;

/* What a command runs with: the session, the emitter its report goes
   to, its words (argv[0] is the command's name), and whether a person
   reads it on a terminal.  */
struct hw_cmd {
	struct hw_session *s;
	struct hw_emitter *e;
	int argc;
	char *const *argv;
	bool terminal;           /* the report goes to a terminal
				    (hw_output.terminal) */
};

/* An option or operand as help shows it: its spelling (with its
   argument) and what it does.  */
struct hw_command_opt {
	const char *spelling;
	const char *help;
};

struct hw_command {
	const char *name;
	enum hw_status (*run)(const struct hw_cmd *c);
	const char *args;         /* operands and options, as in a usage
				     line ("" when none) */
	const char *summary;      /* what it does, one line */
	const struct hw_command_opt *opts;   /* ends with { NULL }; NULL:
						none */
	const char *example;      /* one command line, after "heapwalk " */
	unsigned needs;           /* HW_NEED_*: what opening must read */
	bool without_allocator;   /* runs on a target with no allocator
				     heapwalk knows (triage) */
};

/* The operand of chunk, refs and why, as help shows it.  */
#define HW_OPT_ADDR { "ADDR", "an address anywhere in the block " \
	"(hexadecimal, with or without 0x, as gdb prints it)" }

/* What a command over every block needs read.  */
#define HW_NEED_WALK (HW_NEED_LISTS | HW_NEED_CHUNKS)

/* The commands, one per file (table.c orders them).  */
extern const struct hw_command hw_cmd_summary, hw_cmd_arenas, hw_cmd_arena,
	hw_cmd_mp, hw_cmd_tcache, hw_cmd_bins,
	hw_cmd_chunks, hw_cmd_sizes, hw_cmd_chunk, hw_cmd_check, hw_cmd_frag,
	hw_cmd_leaks, hw_cmd_refs, hw_cmd_why, hw_cmd_diff, hw_cmd_maps,
	hw_cmd_map, hw_cmd_prof, hw_cmd_view, hw_cmd_triage;

#endif /* HW_COMMANDS_COMMAND_H */

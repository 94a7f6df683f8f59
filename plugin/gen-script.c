/* gen-script.c - print the `heap` command definitions of heapwalk.gdb.
 *
 * One gdb user command per command of the library's table, with its help
 * text from that table, so the plugin offers exactly the tool's commands
 * and `help heap bins` says what `heapwalk --help` says.  gdb user
 * commands cannot pass "all arguments" on, hence one branch per count.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "heapwalk.h"

#define MAX_ARGS 8

static const char OPTIONS[] = "[--json] [--allocator A] [-o FILE]";

/* `heap NAME WORDS`: the words go to the plugin as they are, one
   branch per count.  An address that is a gdb expression (`heap chunk
   p->buf`) is evaluated by gdb when the plugin asks (reask.h), where
   the tool's usage puts it.  `heap` itself passes its words on: the
   plugin runs summary when none is a command.  */
static void branches(const char *cmd)
{
	for (int n = 0; n <= MAX_ARGS; n++) {
		printf("  if $argc == %d\n", n);
		printf("    heapwalk-go \"%s", cmd);
		for (int i = 0; i < n; i++)
			printf("%s$arg%d", i || cmd[0] ? " " : "", i);
		printf("\"\n");
		printf("  end\n");
	}
}

/* gdb's help for `heap NAME` (NULL: `heap` itself): its summary as the
   first line, then the usage, the tool's own.  */
static void document(const char *name, const char *args, const char *text)
{
	printf("document heap%s%s\n%s.\nUsage: heap%s%s %s%s%s\n"
	       "Same as the command-line tool's `heapwalk TARGET %s`, on what "
	       "gdb debugs%s.\nend\n", name ? " " : "", name ? name : "",
	       text, name ? " " : "", name ? name : "", OPTIONS,
	       args[0] ? " " : "", args, name ? name : "summary",
	       strstr(args, "ADDR") ? "; ADDR is any gdb expression written "
	       "without spaces" : "");
}

int main(void)
{
	/* Status 2 (a usage error) first: an ADDR expression gdb cannot
	   evaluate (reask.h) ends the command before the plugin sets the
	   real one, and must not leave the last command's.  */
	printf("\n# The commands, from the library's command table.\n"
	       "define heap\n  dont-repeat\n  set $_heapwalk_status = 2\n");
	branches("");
	printf("end\n");
	document(NULL, "", "allocator, arenas, totals in use / free / "
		 "overhead; `heap COMMAND` runs another heapwalk command");
	printf("define-prefix heap\n");
	for (size_t i = 0; hw_command_name(i); i++) {
		const char *name = hw_command_name(i);
		const char *args = hw_command_usage(i);
		printf("\ndefine heap %s\n  dont-repeat\n"
		       "  set $_heapwalk_status = 2\n", name);
		branches(name);
		printf("end\n");
		document(name, args, hw_command_help(i));
	}
	return 0;
}

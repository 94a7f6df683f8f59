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

/* A command whose help starts with ADDR takes a gdb expression last.
   `heap` itself passes its words on: the plugin runs summary when none
   is a command.  */
static void branches(const char *cmd, bool addr)
{
	for (int n = 0; n <= MAX_ARGS; n++) {
		printf("  if $argc == %d\n", n);
		if (addr && n > 0) {
			printf("    eval \"heapwalk-go \\\"%s", cmd);
			for (int i = 0; i < n - 1; i++)
				printf(" $arg%d", i);
			printf(" %%#lx\\\"\", (unsigned long)($arg%d)\n", n - 1);
		} else {
			printf("    heapwalk-go \"%s", cmd);
			for (int i = 0; i < n; i++)
				printf("%s$arg%d", i || cmd[0] ? " " : "", i);
			printf("\"\n");
		}
		printf("  end\n");
	}
}

/* gdb's help for `heap NAME` (NULL: `heap` itself): its summary as the
   first line, then the usage.  An ADDR is a gdb expression and must come
   last (branches()): the usage says so by putting it after the
   options.  */
static void document(const char *name, const char *args, const char *text)
{
	bool addr = !strncmp(args, "ADDR", 4);
	const char *rest = addr ? args + 4 : args;
	while (*rest == ' ')
		rest++;
	printf("document heap%s%s\n%s.\nUsage: heap%s%s %s%s%s%s\n"
	       "Same as the command-line tool's `heapwalk TARGET %s`, on what "
	       "gdb debugs.\nend\n", name ? " " : "", name ? name : "",
	       text, name ? " " : "", name ? name : "", OPTIONS,
	       rest[0] ? " " : "", rest, addr ? " ADDR" : "",
	       name ? name : "summary");
}

int main(void)
{
	/* Status 2 (a usage error) first: an ADDR expression gdb cannot
	   evaluate ends the command before heapwalk-go sets the real one,
	   and must not leave the last command's.  */
	printf("\n# The commands, from the library's command table.\n"
	       "define heap\n  dont-repeat\n  set $_heapwalk_status = 2\n");
	branches("", false);
	printf("end\n");
	document(NULL, "", "allocator, arenas, totals in use / free / "
		 "overhead; `heap COMMAND` runs another heapwalk command");
	printf("define-prefix heap\n");
	for (size_t i = 0; hw_command_name(i); i++) {
		const char *name = hw_command_name(i);
		const char *args = hw_command_usage(i);
		printf("\ndefine heap %s\n  dont-repeat\n"
		       "  set $_heapwalk_status = 2\n", name);
		branches(name, strncmp(args, "ADDR", 4) == 0);
		printf("end\n");
		document(name, args, hw_command_help(i));
	}
	return 0;
}

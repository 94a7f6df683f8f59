/* gen-script.c - print the `heap` command definitions of heapwalk.gdb.
 *
 * One gdb user command per command of the library's table, with its help
 * text from that table, so the plugin offers exactly the tool's commands
 * and `help heap bins` says what `heapwalk --help` says.  gdb user
 * commands cannot pass "all arguments" on, hence one branch per count.
 */
#include <ctype.h>
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

/* "ADDR: the chunk ..." -> usage "ADDR", text "The chunk ...".  */
static void document(const char *name, const char *help)
{
	const char *colon = strstr(help, ": ");
	const char *text = help;
	int usage_len = 0;
	if (colon && (help[0] == '[' || isupper((unsigned char)help[0]))) {
		usage_len = (int)(colon - help);
		text = colon + 2;
	}
	/* ADDR is a gdb expression and must come last (branches()): the
	   usage says so by putting it after the options.  */
	bool addr = usage_len >= 4 && !strncmp(help, "ADDR", 4);
	const char *rest = addr ? help + 4 : help;
	int rest_len = addr ? usage_len - 4 : usage_len;
	while (rest_len > 0 && *rest == ' ') {
		rest++;
		rest_len--;
	}
	printf("document heap%s%s\n%c%s.\nUsage: heap%s%s %s%s%.*s%s\n"
	       "Same as the command-line tool's `heapwalk TARGET %s`, on what "
	       "gdb debugs.\nend\n", name ? " " : "", name ? name : "",
	       toupper((unsigned char)text[0]), text + 1, name ? " " : "",
	       name ? name : "", OPTIONS, rest_len ? " " : "", rest_len, rest,
	       addr ? " ADDR" : "", name ? name : "summary");
}

int main(void)
{
	printf("\n# The commands, from the library's command table.\n"
	       "define heap\n  dont-repeat\n");
	branches("", false);
	printf("end\n");
	document(NULL, "allocator, arenas, totals in use / free / overhead; "
		 "`heap COMMAND` runs another heapwalk command");
	printf("define-prefix heap\n");
	for (size_t i = 0; hw_command_name(i); i++) {
		const char *name = hw_command_name(i);
		const char *help = hw_command_help(i);
		printf("\ndefine heap %s\n  dont-repeat\n", name);
		branches(name, strncmp(help, "ADDR", 4) == 0);
		printf("end\n");
		document(name, help);
	}
	return 0;
}

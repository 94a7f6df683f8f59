/* reask.c - have gdb evaluate an address option's expression (reask.h).
 *
 * The answer, sourced by heapwalk-go in place of a report:
 *
 *   set $_heapwalk_status = 2
 *   eval "dump binary value /proc/self/fd/873/cmd \"chunks --around 0x%lx 3\"", (unsigned long)($rsp)
 *   set $_heapwalk_again = 1
 *
 * gdb formats the value into the command file and heapwalk-go's loop
 * runs it (as 0x..., even 0: a word this asks about again would loop), its own answer setting the status; an expression gdb cannot
 * evaluate stops at the eval with gdb's message, the status left at 2.
 */
#include <string.h>

#include "heapwalk.h"
#include "reask.h"

/* Options whose value is an address.  */
static const char *const ADDR_OPTIONS[] = { "--around" };

/* The plugin's own options that take a value (reader.c's
   take_option()): their values are no operand.  (-o is the plugin's
   only for a command without an -o of its own; either way its value is
   a file.)  */
static const char *const PLUGIN_VALUED[] = { "--allocator", "-o",
					     "--debug-dir" };

static bool is_hex(const char *w)
{
	if (w[0] == '0' && (w[1] == 'x' || w[1] == 'X'))
		w += 2;
	if (!*w)
		return false;
	for (; *w; w++)
		if (!strchr("0123456789abcdefABCDEF", *w))
			return false;
	return true;
}

static long command_index(const char *name)
{
	for (size_t i = 0; hw_command_name(i); i++)
		if (!strcmp(hw_command_name(i), name))
			return (long)i;
	return -1;
}

/* Does option word w take the next word as its value, for command
   cmd (-1: none yet)?  The command's own from its table ("--bytes N"),
   else the plugin's.  */
static bool takes_value(long cmd, const char *w)
{
	size_t len = strlen(w);
	const char *opt;
	if (cmd >= 0)
		for (size_t k = 0; (opt = hw_command_option((size_t)cmd, k,
							     NULL)); k++)
			if (!strncmp(opt, w, len) && opt[len] == ' ')
				return true;
	for (size_t k = 0; k < sizeof PLUGIN_VALUED / sizeof *PLUGIN_VALUED;
	     k++)
		if (!strcmp(w, PLUGIN_VALUED[k]))
			return true;
	return false;
}

int reask_expr_at(char *const words[], int n)
{
	for (int i = 0; i + 1 < n; i++)
		for (size_t k = 0; k < sizeof ADDR_OPTIONS / sizeof *ADDR_OPTIONS;
		     k++)
			if (!strcmp(words[i], ADDR_OPTIONS[k]) &&
			    !is_hex(words[i + 1]))
				return i + 1;
	/* The operand of a command whose usage starts with ADDR (chunk,
	   view, refs, why): the first word after the command's name that
	   is neither an option nor an option's value, as the tool reads
	   it.  */
	long cmd = -1;
	for (int i = 0; i < n; i++) {
		if (words[i][0] == '-') {
			if (takes_value(cmd, words[i]))
				i++;
			continue;
		}
		if (cmd < 0) {
			cmd = command_index(words[i]);
			if (cmd < 0 || strncmp(hw_command_usage((size_t)cmd),
					       "ADDR", 4) != 0)
				return -1;
			continue;
		}
		/* A gdb expression: what gdb would read as hexadecimal goes
		   as it is, anything else (1234 included) gdb evaluates.  */
		return words[i][0] == '0' && (words[i][1] == 'x' ||
					      words[i][1] == 'X') &&
		       is_hex(words[i]) ? -1 : i;
	}
	return -1;
}

bool reask_write(FILE *out, int channel_fd, char *const words[], int n,
		 int at)
{
	for (int i = 0; i < n; i++)
		if (strpbrk(words[i], "\"\\%\n"))
			return false;
	fprintf(out, "set $_heapwalk_status = 2\neval \"dump binary value "
		"/proc/self/fd/%d/cmd \\\"", channel_fd);
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? " " : "", i == at ? "0x%lx" : words[i]);
	fprintf(out, "\\\"\", (unsigned long)(%s)\nset $_heapwalk_again = 1\n",
		words[at]);
	return true;
}

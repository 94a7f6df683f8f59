/* reask.c - have gdb evaluate an address option's expression (reask.h).
 *
 * The answer, sourced by heapwalk-go in place of a report:
 *
 *   set $_heapwalk_status = 2
 *   eval "dump binary value /proc/self/fd/873/cmd \"chunks --around %#lx 3\"", (unsigned long)($rsp)
 *   set $_heapwalk_again = 1
 *
 * gdb formats the value into the command file and heapwalk-go's loop
 * runs it, its own answer setting the status; an expression gdb cannot
 * evaluate stops at the eval with gdb's message, the status left at 2.
 */
#include <string.h>

#include "reask.h"

/* Options whose value is an address.  */
static const char *const ADDR_OPTIONS[] = { "--around" };

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

int reask_expr_at(char *const words[], int n)
{
	for (int i = 0; i + 1 < n; i++)
		for (size_t k = 0; k < sizeof ADDR_OPTIONS / sizeof *ADDR_OPTIONS;
		     k++)
			if (!strcmp(words[i], ADDR_OPTIONS[k]) &&
			    !is_hex(words[i + 1]))
				return i + 1;
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
		fprintf(out, "%s%s", i ? " " : "", i == at ? "%#lx" : words[i]);
	fprintf(out, "\\\"\", (unsigned long)(%s)\nset $_heapwalk_again = 1\n",
		words[at]);
	return true;
}

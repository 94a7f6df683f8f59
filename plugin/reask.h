/* reask.h - an address the plugin cannot read itself: a gdb expression
 * where the command takes an address (`heap chunk p->buf --bytes 16`,
 * `heap chunks --around $rsp 3`).  gdb's user commands pass their words
 * on as they are; the plugin answers with gdb lines that evaluate the
 * expression and run the command again with its value, so an address
 * sits where the tool's usage puts it.
 */
#ifndef HW_PLUGIN_REASK_H
#define HW_PLUGIN_REASK_H

#include <stdbool.h>
#include <stdio.h>

/* The index of the word to evaluate in words[0..n): the value of an
   address option (--around), or the ADDR operand of chunk, view, refs
   and why, that is no hexadecimal number; -1 when there is none.  */
int reask_expr_at(char *const words[], int n);

/* Write to out the lines that evaluate words[at] and have heapwalk-go
   run the command words again with its value in its place (written to
   the command file in the directory gdb reaches as
   /proc/self/fd/CHANNEL_FD/) (the status stays 2, a usage
   error, when gdb cannot evaluate it).  False when a word cannot go
   into a gdb string as it is ('"', '\\', '%'): nothing is written.  */
bool reask_write(FILE *out, int channel_fd, char *const words[], int n,
		 int at);

#endif /* HW_PLUGIN_REASK_H */

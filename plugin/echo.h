/* echo.h - output as a gdb command file of `echo` commands.
 *
 * The plugin cannot print through gdb itself; it writes its report as a
 * file that the script then `source`s, so every line goes through gdb's
 * own output: the pager, `set logging`, `pipe`, MI console records.  Each
 * line becomes one `echo` command.  Whatever the report holds (the target
 * chooses file names and symbol names), nothing in it can become a
 * command of its own: backslashes, control bytes and non-ASCII bytes are
 * escaped, and so is a leading space (echo would drop it).
 */
#ifndef HW_PLUGIN_ECHO_H
#define HW_PLUGIN_ECHO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct echo_file {
	FILE *f;
	bool raw;          /* -o FILE: the report as is, no echo commands */
	bool mid_line;     /* an echo command is open */
	bool failed;
};

/* An hw_write_fn: append data to the file (cookie: struct echo_file).  */
bool echo_write(void *cookie, const char *data, size_t len);

/* Close the last line; false if anything failed to be written.  */
bool echo_finish(struct echo_file *e);

#endif /* HW_PLUGIN_ECHO_H */

/* echo.c - the report as gdb `echo` commands.  */
#include "echo.h"

bool echo_write(void *cookie, const char *data, size_t len)
{
	struct echo_file *e = cookie;
	if (e->failed)
		return false;
	if (e->raw) {
		e->failed = fwrite(data, 1, len, e->f) != len;
		return !e->failed;
	}
	FILE *f = e->f;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)data[i];
		if (!e->mid_line) {
			fputs("echo ", f);
			e->mid_line = true;
			if (c == ' ') {
				fputs("\\040", f);
				continue;
			}
		}
		if (c == '\n') {
			fputs("\\n\n", f);
			e->mid_line = false;
		} else if (c == '\\') {
			fputs("\\\\", f);
		} else if (c < 0x20 || c >= 0x7f) {
			fprintf(f, "\\%03o", c);
		} else {
			putc(c, f);
		}
	}
	e->failed = ferror(f) != 0;
	return !e->failed;
}

bool echo_finish(struct echo_file *e)
{
	if (!e->raw && e->mid_line) {
		putc('\n', e->f);
		e->mid_line = false;
	}
	return !e->failed && !ferror(e->f);
}

/* miconsole - what a gdb/MI front end shows in its console: reads gdb's
 * MI output on stdin and prints the text of its console-stream records
 * (~"..."), C escapes decoded, everything else dropped.  The MI test
 * (t0640) compares that text with the tool's report.
 *
 *   gdb -i=mi ... | miconsole > console.txt
 *
 * Exit 0; 1 when a ~ record is malformed (unterminated string, unknown
 * escape): that is a finding, since a front end would show garbage. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int octal(int c)
{
	return c >= '0' && c <= '7';
}

/* Decode the C string starting after the opening quote at s; write it
 * to stdout.  Returns 0, or -1 when it is malformed. */
static int decode(const char *s)
{
	while (*s && *s != '"') {
		int c = (unsigned char)*s++;

		if (c != '\\') {
			putchar(c);
			continue;
		}
		c = (unsigned char)*s++;
		switch (c) {
		case 'n': putchar('\n'); break;
		case 't': putchar('\t'); break;
		case 'r': putchar('\r'); break;
		case 'e': putchar('\033'); break;
		case 'a': putchar('\a'); break;
		case 'b': putchar('\b'); break;
		case 'f': putchar('\f'); break;
		case 'v': putchar('\v'); break;
		case '"': case '\\': case '\'': putchar(c); break;
		default:
			if (!octal(c))
				return -1;
			{
				int v = c - '0', i;

				for (i = 0; i < 2 && octal(*s); i++)
					v = v * 8 + (*s++ - '0');
				putchar(v);
			}
		}
	}
	return *s == '"' && s[1] == '\0' ? 0 : -1;
}

int main(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int bad = 0;

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		size_t n = (size_t)len;

		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (strncmp(line, "~\"", 2) != 0)
			continue;
		if (decode(line + 2) != 0) {
			fprintf(stderr, "miconsole: malformed record: %.80s\n", line);
			bad = 1;
		}
	}
	free(line);
	return bad;
}

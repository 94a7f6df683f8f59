/* environ.c - the environment a process started with, read back from
 * the top of its main thread's stack.
 *
 * The kernel copies the argument and environment strings to the top of
 * the initial stack, the executable's name (AT_EXECFN) last: so the
 * "NAME=value" strings end just below that name.  A process may have
 * changed its environment since (setenv copies to the heap), and a
 * program may have written over the strings; what is read here is what
 * the process started with, as far as the target still holds it.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"

/* How far below AT_EXECFN the strings are looked for: argument and
   environment strings of a usual process fit many times over.  */
#define ENV_SPAN (64u << 10)

bool hw_environ_get(struct hw_target *t, const char *name, char *out,
		    size_t len)
{
	uint64_t execfn;
	if (!len || !hw_auxv_get(t, AT_EXECFN, &execfn) || !execfn)
		return false;
	/* Copied, not peeked: a live target's pages are not in one place.  */
	char *env = malloc(ENV_SPAN);
	if (!env)
		return false;
	uint64_t lo = execfn > ENV_SPAN ? execfn - ENV_SPAN : 0;
	/* The stack's top page is mapped; pages below it may not be (a
	   short environment): start at the first that is.  */
	while (lo < execfn && !hw_read(t, lo, env, execfn - lo))
		lo += 4096 - (lo & 4095);
	size_t n = lo < execfn ? (size_t)(execfn - lo) : 0;
	size_t nl = strlen(name);
	bool found = false;
	/* The first one, as getenv() takes it.  */
	for (size_t i = 0; i + nl < n && !found; i++) {
		if ((i && env[i - 1] != '\0') || memcmp(env + i, name, nl) ||
		    env[i + nl] != '=')
			continue;
		const char *v = env + i + nl + 1;
		size_t m = strnlen(v, n - i - nl - 1);
		if (m >= len)
			m = len - 1;
		memcpy(out, v, m);
		out[m] = '\0';
		found = true;
	}
	free(env);
	return found;
}

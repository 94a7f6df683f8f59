/* glibcver.h - the running glibc's version, without malloc, for the
 * corpus programs whose plans depend on it (truth.h's model, multiheap1's
 * malloc_state offsets).  Needs die() (out.h) included first.
 */
#ifndef CORPUS_GLIBCVER_H
#define CORPUS_GLIBCVER_H

#include <gnu/libc-version.h>

/* The running glibc's minor version (2.NN).  */
static int glibc_minor(void)
{
	const char *v = gnu_get_libc_version();
	int minor = 0;
	if (v[0] != '2' || v[1] != '.')
		die("not a glibc 2.x");
	for (v += 2; *v >= '0' && *v <= '9'; v++)
		minor = minor * 10 + (*v - '0');
	return minor;
}

#endif

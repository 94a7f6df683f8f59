/* libc.c - which C library a module is (libc.h).
 *
 * musl's libc.so is a "libc.so" too, and a static musl program has a
 * __libc_malloc as a static glibc one does: glibc's detection would take
 * either for a glibc whose arena it cannot find.  These are the facts
 * that tell musl apart, kept beside the walkers rather than in one of
 * them, so that ptmalloc and mallocng each ask here, not each other.
 */
#include <string.h>

#include "../sym/sym.h"
#include "libc.h"
#include "module.h"

bool hw_libc_is_musl_path(const char *path)
{
	const char *base = hw_base_name(path);
	return !strncmp(base, "ld-musl-", 8) || !strncmp(base, "libc.musl-", 10) ||
	       strstr(path, "-linux-musl/") != NULL;
}

bool hw_libc_has_musl_symbols(const struct hw_syms *syms,
			      const struct hw_module *m)
{
	/* mallocng's context; the bump allocator a static program that
	   never frees gets instead; the name musl 1.2.2+ gives its malloc
	   behind the public one; oldmalloc's chunk binning.  */
	static const char *const names[] = {
		"__malloc_context", "__simple_malloc", "__libc_malloc_impl",
		"__bin_chunk",
	};
	uint64_t addr, size;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (hw_syms_lookup(syms, m, names[i], &addr, &size, NULL))
			return true;
	return false;
}

/* linkmap.h - mapped files from the dynamic linker's list.  */
#ifndef HW_LINKMAP_H
#define HW_LINKMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "target.h"

/* Fill t->files from r_debug's link_map chain when the core has no
   NT_FILE.  `exe` (may be NULL: AT_EXECFN is used) and the libraries are
   opened under `sysroot` first.  The path strings are returned in
   *paths (npaths of them, each malloc'd) for the caller to free.  False
   only when out of memory; finding nothing is not an error.  */
bool hw_link_map_files(struct hw_target *t, const char *exe,
		       const char *sysroot, char ***paths, size_t *npaths);

#endif /* HW_LINKMAP_H */

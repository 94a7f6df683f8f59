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

/* Each name in the target's link_map chain, found as libdwfl's
   dwfl_link_map_report finds them: the executable's program headers in
   the target's memory at AT_PHDR, its PT_DYNAMIC's DT_DEBUG, r_debug's
   r_map.  visit(arg, addr, name) for each non-empty name that can be
   read (addr: where it is in the target).  At most LM_MAX_OBJECTS.  */
void hw_link_map_names(struct hw_target *t,
		       void (*visit)(void *arg, uint64_t addr,
				     const char *name),
		       void *arg);

#endif /* HW_LINKMAP_H */

/* sym-private.h - what the files of libheapwalk/sym share; not installed,
 * not included outside this directory.
 */
#ifndef HW_SYM_PRIVATE_H
#define HW_SYM_PRIVATE_H

#include <elfutils/libdwfl.h>

#include "sym/sym.h"

/* Upper bounds on work done on behalf of possibly hostile input.  */
#define HW_SYM_MAX_MODULES 65536
#define HW_SYM_MAX_UNITS (1u << 22)  /* compile units walked in one search */
#define HW_SYM_MAX_DIES (1u << 26)   /* DIEs looked at in one search */
#define HW_SYM_MAX_TYPE_HOPS 32      /* typedef / qualifier chain length */

struct hw_syms {
	/* libdwfl keeps a pointer to this; it lives as long as the Dwfl.
	   cb.debuginfo_path points at debuginfo_path below.  */
	Dwfl_Callbacks cb;
	char *debuginfo_path;
	char *sysroot;      /* without trailing '/', NULL when not set */
	char *exe;          /* opts->exe, copied */
	bool no_debuginfo;

	Dwfl *dwfl;
	Dwfl_Module **mods;
	size_t nmods;
};

#endif /* HW_SYM_PRIVATE_H */

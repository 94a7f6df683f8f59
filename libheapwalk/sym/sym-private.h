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

	/* The unwinder (unwind.c): libdwfl's thread state, attached on
	   first use with callbacks that read the request below.  */
	Elf *core;                      /* the core (its machine), or NULL */
	bool unwind_attached, unwind_failed;
	const struct hw_unwind_thread *unwind_req;
};

/* The module holding addr (modules.c): libdwfl's, or the module whose
   loaded segments reach past the extent libdwfl gave it (a live
   process's .bss tail, see there); NULL when none.  */
Dwfl_Module *hw_syms_addrmodule(const struct hw_syms *s, uint64_t addr);

#endif /* HW_SYM_PRIVATE_H */

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
	char *proc_exe;     /* a live process's executable, as its maps
			       name it (hw_syms_open_pid with an exe) */
	char exe_note[8448]; /* why exe was not used, or "": two paths
				(PATH_MAX each) and the words around them */
	bool no_debuginfo;

	Dwfl *dwfl;
	Dwfl_Module **mods;
	size_t nmods;

	/* The unwinder (unwind.c): libdwfl's thread state, attached on
	   first use with callbacks that read the request below.  */
	Elf *core;                      /* the core (its machine), or NULL */
	bool unwind_attached, unwind_failed;
	const struct hw_unwind_thread *unwind_req;

	/* Names made here for callers (source.c), kept until close.  */
	struct hw_strpool *strings;
	/* source.c's indexes, per module ([nmods], made on first use;
	   srccache.c).  */
	struct hw_srcmod **srcmods;
	size_t mod_last;    /* hw_syms_mod_index's last answer */
	/* Modules whose DWARF a look-up read (libdwfl reads all of it at
	   once: inflating libc's takes tens of ms), [nmods], made on first
	   use; how many.  */
	bool *dwarf_was_read;
	size_t ndwarf_read;
	/* layoutcache.c: the directory (NULL: no cache), each module's
	   cache as loaded ([nlcaches], made on first use), and how many
	   layouts it answered.  */
	char *layout_cache;
	struct hw_layout_cache *lcaches;
	size_t nlcaches;
	size_t nlayouts_cached;
	/* cachetrust.c's verdict on layout_cache, asked on first use (0:
	   not yet, 1 trusted, -1 not: why in layout_cache_refused); how
	   many answers were found wrong (hw_syms_layout_cache_distrust). */
	int layout_cache_trust;
	char layout_cache_refused[4352]; /* a path and words */
	size_t nlayouts_wrong;
};

/* mod's index in s->mods (nmods when it is not there); asked once per
   look-up, so the last answer is tried first.  */
size_t hw_syms_mod_index(struct hw_syms *s, Dwfl_Module *mod);

/* mod's DWARF was read: count it once (hw_syms_dwarf_modules).  */
void hw_syms_dwarf_read(struct hw_syms *s, Dwfl_Module *mod);

/* layoutcache.c: the answer DWARF gave to a struct layout request
   (types.c's hw_syms_struct_layout) in an earlier run, kept on disk per
   debug file: true with *found, offsets and *size set when there is one;
   put keeps one.  near is the request's address in the file.  */
bool hw_layout_cache_get(struct hw_syms *s, Dwfl_Module *mod, uint64_t near,
			 const char *tag, const char *const *members,
			 size_t nmembers, bool *found, int64_t *offsets,
			 uint64_t *size);
void hw_layout_cache_put(struct hw_syms *s, Dwfl_Module *mod, uint64_t near,
			 const char *tag, const char *const *members,
			 size_t nmembers, bool found, const int64_t *offsets,
			 uint64_t size);
void hw_layout_cache_free(struct hw_syms *s);

/* cachetrust.c: may dir be used as the layout cache (made where missing,
   0700)?  Is a file in it, as fstat saw it, one to read?  False with why
   set (n bytes) when not.  */
bool hw_cache_dir_trusted(const char *dir, char *why, size_t n);
struct stat;
bool hw_cache_file_trusted(const struct stat *st, char *why, size_t n);

/* strpool.c: s's copy of the len bytes at text (made on first use),
   valid until hw_syms_close; NULL when out of memory.  */
const char *hw_strpool_add(struct hw_syms *s, const char *text, size_t len);
void hw_strpool_free(struct hw_strpool *p);

/* srccache.c: the symbol table's name for addr in mod, chosen as
   dwfl_module_addrinfo chooses, from an index made once per module.  */
const char *hw_srccache_symbol(struct hw_syms *s, Dwfl_Module *mod,
			       uint64_t addr);
/* The subprogram DIE of the unit cudie (at its top level or in its
   namespaces) whose ranges hold pc (an address in the module's DWARF),
   from an index made once per unit.  */
bool hw_srccache_unit_function(struct hw_syms *s, Dwfl_Module *mod,
			       Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *out);
void hw_srccache_free(struct hw_syms *s);

/* The module holding addr (modules.c): libdwfl's, or the module whose
   loaded segments reach past the extent libdwfl gave it (a live
   process's .bss tail, see there); NULL when none.  */
Dwfl_Module *hw_syms_addrmodule(const struct hw_syms *s, uint64_t addr);

#endif /* HW_SYM_PRIVATE_H */

/* sym.h - modules, symbols and type layouts of the target, through libdwfl.
 *
 * libdwfl does the real work: it reports the modules of a core (NT_FILE and
 * the dynamic linker's link_map), finds their files and separate debug info
 * (build-id under the debug directories, .gnu_debuglink, debuginfod when
 * DEBUGINFOD_URLS is set) and reads their symbol tables.  This layer only
 * adds what heapwalk needs on top: a sysroot prefix for cross analysis,
 * "find the module that looks like libc", local-symbol lookup by name, and
 * struct member offsets read from DWARF.
 */
#ifndef HW_SYM_H
#define HW_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

struct hw_syms;

struct hw_syms_opts {
	const char *exe;               /* executable, NULL = let libdwfl find it */
	const char *sysroot;           /* NULL or prefix for absolute file names */
	const char *const *debug_dirs; /* extra debug dirs, searched first */
	size_t n_debug_dirs;
	bool no_debuginfo;             /* never load separate debug info */
	/* A directory where struct layouts read from a separate debug
	   file are kept for later runs (layoutcache.c); NULL: none.  */
	const char *layout_cache;
	/* Files mapped in the target that the core's notes may not name
	   (qemu-user cores have no NT_FILE; the target rebuilt them from the
	   dynamic linker's link_map): reported to libdwfl when no module
	   covers their load address yet.  */
	const struct hw_syms_file *files;
	size_t nfiles;
};

struct hw_syms_file {
	const char *path;              /* as the target names it */
	uint64_t base;                 /* address of its offset-0 mapping */
};
/* Debug directories are roots like /usr/lib/debug: .build-id/xx/yyyy.debug
   and .gnu_debuglink names are looked for under them.  Order: debug_dirs
   (relative names made absolute; a name with ':' is refused), then
   SYSROOT/usr/lib/debug, /usr/lib/debug, then the main file's directory
   and its .debug/.  debuginfod is asked last, by libdwfl itself, when
   DEBUGINFOD_URLS is set (it also asks for missing executables and
   libraries by build-id).

   no_debuginfo: the find_debuginfo callback finds nothing, so symbols come
   from the main file only (.symtab if it has one, else .dynsym and
   .gnu_debugdata) and DWARF only when the main file has it.  On Debian,
   libc.so.6 has only .dynsym: main_arena, mp_, tcache are then not found.

   sysroot: libdwfl 0.188 has no sysroot of its own.  While reporting the
   core it opens the recorded host paths itself and keeps a file only when
   its build-id equals the one in the core's memory (when the core has
   one).  For the modules left without a file, SYSROOT + path is tried
   (absolute symbolic links resolved inside SYSROOT) and taken when its
   build-id agrees, then the .build-id links under the debug dirs, then
   debuginfod.  `exe` is used as given, never prefixed.  */

/* Report the modules of the core `core` (an ELF_K_ELF handle of an ET_CORE
   file, owned by the caller, which must outlive the hw_syms).  Returns NULL
   and writes a one-line reason into err when libdwfl cannot start at all;
   a core with no findable modules is not an error (nmodules() is then 0). */
struct hw_syms *hw_syms_open_core(Elf *core, const struct hw_syms_opts *opts,
				  char *err, size_t errlen);
/* Why opts->exe was not used for a live process (its build-id is not
   the running file's, ...), or NULL.  */
const char *hw_syms_exe_note(const struct hw_syms *s);

/* The same for live process `pid`: libdwfl reports its modules from
   /proc/PID/maps (dwfl_linux_proc_report).  sysroot and exe do not apply
   (the process's own files are what ran).  */
struct hw_syms *hw_syms_open_pid(int pid, const struct hw_syms_opts *opts,
				 char *err, size_t errlen);
/* The same from opts->files alone (each reported as an ELF file loaded
   at its offset-0 mapping, found under the sysroot first): a target a
   front end describes, such as gdb's.  */
struct hw_syms *hw_syms_open_files(const struct hw_syms_opts *opts,
				   char *err, size_t errlen);
void hw_syms_close(struct hw_syms *s);

/* What is known about one module.  Strings stay valid until close.
   `name` is what libdwfl reported: the basename from the dynamic linker's
   link_map when libdwfl could open the file while reporting (libc.so.6),
   else the NT_FILE path (/usr/lib/x86_64-linux-gnu/libfoo.so), or a
   soname / "[exe]"-style placeholder.  `bias` is 0 when no file was
   found.  */
struct hw_module {
	const char *name;       /* as reported (usually the mapped path) */
	const char *file;       /* main ELF file found on disk, or NULL */
	const char *debug_file; /* separate debug file, or NULL (known
				   once hw_syms_module_dwarf looked) */
	uint64_t low, high;     /* address range in the target */
	uint64_t bias;          /* load bias */
	const uint8_t *build_id;
	int build_id_len;       /* 0 when unknown */
	bool has_dwarf;         /* DWARF found (main or separate file):
				   set by hw_syms_module_dwarf */
	void *handle;           /* the Dwfl_Module, for the calls below */
};

/* Modules are numbered 0..n-1 in address order.  hw_syms_module (and
   hw_syms_find_module, for the module it returns) makes libdwfl find the
   module's file (and, for its symbols, the separate debug file's symbol
   table: that may ask debuginfod), not its DWARF.  */
size_t hw_syms_nmodules(const struct hw_syms *s);
/* How many modules' DWARF was read for look-ups so far (struct layouts,
   source lines): what `--stats` shows, and tests check that a command
   reads none it does not need.  */
size_t hw_syms_dwarf_modules(const struct hw_syms *s);
/* How many struct layouts came from the layout cache instead of DWARF
   (hw_syms_opts.layout_cache).  */
size_t hw_syms_layouts_cached(const struct hw_syms *s);
bool hw_syms_module(const struct hw_syms *s, size_t i, struct hw_module *m);

/* Load m's DWARF (main or separate file), setting has_dwarf and
   debug_file: slow (libc's compressed DWARF: ~45 ms); whether it has
   any.  The type and source-line lookups do this themselves.  */
bool hw_syms_module_dwarf(struct hw_module *m);

/* Whether m has a full symbol table: its separate debug file's (looked
   for as a symbol lookup would, debuginfod last: m->debug_file is set)
   or its main file's own .symtab.  */
bool hw_syms_module_symtab(struct hw_module *m);

/* The first module whose file name's last component starts with `prefix`
   (e.g. "libc.so", "libc-2.", "libjemalloc.so").  Reported names are
   tried first, then the names (and real paths) of files already found.  */
bool hw_syms_find_module(const struct hw_syms *s, const char *prefix,
			 struct hw_module *m);

/* The module whose address range holds addr (e.g. one copy of libc among
   several: an emulator's and its guest's).  */
bool hw_syms_module_at(const struct hw_syms *s, uint64_t addr,
		       struct hw_module *m);

/* One thread to unwind: its general registers as the kernel's
   NT_PRSTATUS has them (elf_gregset_t order) and a reader of the
   target's memory.  */
struct hw_unwind_thread {
	int tid;
	uint16_t machine;              /* EM_X86_64 or EM_AARCH64 */
	const uint64_t *regs;
	uint32_t nregs;
	bool (*read)(void *cookie, uint64_t addr, uint64_t *value);
	void *cookie;
};

/* A frame of a thread's stack, the innermost first: its pc and its
   stack pointer (the frame's words lie from sp up to the next frame's
   sp).  `activation`: pc is where the thread stopped (frame 0 or a
   signal frame), not a return address (whose function is that of
   pc - 1).  */
struct hw_frame {
	uint64_t pc, sp;
	bool activation;
};

/* Unwind th through libdwfl (CFI from .eh_frame / .debug_frame, frame
   pointers otherwise, as eu-stack does) into at most max frames;
   returns how many.  0 when it cannot (no registers, an architecture
   libdwfl's backend lacks).  */
size_t hw_syms_unwind(struct hw_syms *s, const struct hw_unwind_thread *th,
		      struct hw_frame *out, size_t max);

/* A symbol's name as people read it: a C++ mangled name ("_Z...")
   demangled by the C++ runtime into buf, anything else copied.
   Returns buf.  */
const char *hw_syms_demangle(const char *name, char *buf, size_t len);
/* Any mangling the C++ runtime knows, a bare type's too ("6Circle" ->
   "Circle"): malloc'd, or NULL when it is none (or too long).  */
char *hw_syms_demangle_any(const char *mangled);

/* Is a symbol's name one of names (NULL-terminated; an entry ending in
   '*' takes a prefix: "je_*")?  A symbol version ("malloc@@GLIBC_2.2.5")
   and a compiler's clone suffix ("_int_free.constprop.0", ".isra.0",
   ".part.0", ".cold") are not part of the name.  */
bool hw_syms_name_in(const char *const *names, const char *name);

/* Whether some module's address range holds addr (cheap: no file or
   debug info is looked for).  */
bool hw_syms_covers(const struct hw_syms *s, uint64_t addr);

/* Address (already relocated) and size of the symbol `name` in module m,
   local symbols included (from .symtab of the file or of its debug file).
   For STT_TLS symbols the value is the offset in the module's TLS block and
   *is_tls is set.  is_tls may be NULL.  Undefined symbols are skipped; an
   exact name wins over "name@VERSION".  Among several locals of the same
   name (statics of different files) the first in the table is taken.  */
bool hw_syms_lookup(const struct hw_syms *s, const struct hw_module *m,
		    const char *name, uint64_t *addr, uint64_t *size,
		    bool *is_tls);

/* Like hw_syms_lookup, for the first symbol whose name ends in `suffix`
   at a word boundary ("je_arenas" finds je_arenas and _rjem_je_arenas, not
   xje_arenas); its full name (without @VERSION) goes to name.  For
   allocators built with a symbol prefix.  */
bool hw_syms_lookup_suffix(const struct hw_syms *s, const struct hw_module *m,
			   const char *suffix, char *name, size_t namelen,
			   uint64_t *addr, uint64_t *size);

/* Offsets of `members` of `struct tag` (or typedef `tag`) from the DWARF of
   module m.  `near_addr`, when not 0, is an address in the compile unit
   that defines the type (e.g. &main_arena for malloc.c's types), which makes
   the search cheap; with 0 every CU is searched.  A code address (e.g. of
   malloc) is found through .debug_aranges; a data address (&main_arena)
   through a local function of the same file in .symtab, then
   .debug_aranges (both ~0.5 ms per type in libc); failing that, the CUs
   are walked for the top-level variable at that address.  With 0 the
   first CU defining the type is taken (~7 ms per type in libc, -O2).
   Types are looked for among a CU's top-level DIEs (and dwz partial units
   it imports); typedefs and qualifiers are followed to the struct.
   offsets[i] is set to -1 for a member that is not there.  Returns false
   when the type is not found (no DWARF, or no such type).  A member name
   may be dotted ("mutex.__data") is not supported; plain names only.  */
bool hw_syms_struct_layout(struct hw_syms *s, const struct hw_module *m,
			   uint64_t near_addr, const char *tag,
			   const char *const *members, size_t nmembers,
			   int64_t *offsets, uint64_t *sizeof_out);

/* The answers hw_syms_struct_layout gave for m from the layout cache
   (hw_syms_opts.layout_cache) are not to be believed (they disagree
   with what else is known): forget them, so that the next requests read
   m's DWARF, whose answers replace them in the cache.  */
void hw_syms_layout_cache_forget(struct hw_syms *s, const struct hw_module *m);

/* Why the layout cache was not used (cachetrust.c: a directory another
   user could write, ...), or NULL when it was, or was not asked for.  */
const char *hw_syms_layout_cache_refused(const struct hw_syms *s);

/* The symbol covering addr (any module), as a backtrace names it:
   name + offset, and the module's reported name.  Strings stay valid
   until close.  False when no module holds addr or no symbol covers
   it (out->module is then still set when a module does).  */
struct hw_symbol_at {
	const char *name;       /* e.g. "_ZTV6Circle"; NULL: none */
	uint64_t offset;        /* addr - the symbol's address */
	uint64_t size;          /* the symbol's st_size */
	const char *module;     /* the module's reported name */
};
bool hw_syms_symbol_at(const struct hw_syms *s, uint64_t addr,
		       struct hw_symbol_at *out);

/* One frame of what the code at a pc is: the function, and the source
   line when DWARF has it.  A pc inside inlined code gives several: the
   inlined function innermost first, then each function it was inlined
   into, ending with the real (out-of-line) function; each outer frame's
   line is the call site (DW_AT_call_file/line of the inlined subroutine
   inside it).  Strings stay valid until hw_syms_close; equal strings are
   equal pointers.  */
struct hw_source_frame {
	const char *function;   /* demangled, no @VERSION; NULL: unknown */
	const char *file;       /* as DWARF gives it (usually a full path);
				   NULL: unknown */
	unsigned line, column;  /* 0: unknown */
	bool inlined;           /* not the outermost (real) function */
	const char *module;     /* the module's reported name */
	uint64_t module_offset; /* pc - the module's low address */
};

/* The frames of pc (source.c), at most max.  return_address: pc is a
   return address (a backtrace's caller frame), so pc - 1, the call
   instruction, is looked up, as debuggers do.  Returns how many frames
   were written: 0 when no module holds pc; else at least one, with the
   module and, when a symbol table has it, the function.  Functions and
   lines come from DWARF where the module has it for pc, else the
   function from the symbol table and no line.  With more inline levels
   than max, the innermost max - 1 and the real function are kept.
   Cost (libc with libc6-dbg, x86_64): the module's first pc loads its
   DWARF (~20-50 ms); then ~10 us a pc in compile units already read,
   20-50 us when most pcs meet a unit for the first time (its line table
   is decoded); symbol tables alone: under 1 us a pc (an index sorted by
   address is made once per module).  Ask once per distinct pc.  */
size_t hw_syms_source_at(struct hw_syms *s, uint64_t pc, bool return_address,
			 struct hw_source_frame *out, size_t max);

#endif /* HW_SYM_H */

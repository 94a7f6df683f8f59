/* core.h - open an ELF core file as a target.  */
#ifndef HW_CORE_H
#define HW_CORE_H

#include <gelf.h>

#include "../heapwalk.h"
#include "target.h"

/* What opening a core takes from the session that asks for it (the
   target layer knows no session).  Zero-filled: the defaults.  */
struct hw_core_open_opts {
	const char *exe;         /* the executable, needed only for cores
				    without NT_FILE; NULL: none */
	const char *sysroot;     /* prefixes the paths of mapped files read
				    from disk; NULL: none */
	unsigned threads;        /* threads that may share work (dropping
				    the mapping at the end); 0: one */
	uint64_t store_max;      /* bytes of an unpacked core kept in
				    memory; 0: unpack.c's default */
	uint64_t unpack_max;     /* the most a compressed core may unpack
				    to; 0: by its size (unpack.c) */
	/* The front end's progress of the unpacking (hw_open_opts's);
	   NULL: none.  */
	void (*progress)(void *cookie, const char *phase, uint64_t done,
			 uint64_t total);
	void *progress_cookie;
};

/* Open `path`, plain or compressed (compressed.h: unpacked first, with
   progress reported to o->progress).  On success *out is the target and
   *elf_out its libelf handle (owned by the target, for libdwfl).  On
   failure err holds one line naming the file and what is wrong with
   it.  */
enum hw_status hw_core_open(const char *path,
			    const struct hw_core_open_opts *o,
			    struct hw_target **out, Elf **elf_out, char *err,
			    size_t errlen);

#endif /* HW_CORE_H */

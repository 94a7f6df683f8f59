/* core.h - open an ELF core file as a target.  */
#ifndef HW_CORE_H
#define HW_CORE_H

#include <gelf.h>

#include "../heapwalk.h"
#include "target.h"

struct hw_session;

/* Open `path`, plain or compressed (compressed.h: unpacked first, with
   progress reported to s's front end; s may be NULL).  On success *out
   is the target and *elf_out its libelf handle (owned by the target, for
   libdwfl).  On failure err holds one line naming the file and what is
   wrong with it.  `sysroot` (may be NULL) prefixes the paths of mapped
   files read from disk; `exe` (may be NULL) is the executable, needed
   only for cores without NT_FILE.  */
enum hw_status hw_core_open(const char *path, const char *exe,
			    const char *sysroot, const struct hw_session *s,
			    struct hw_target **out, Elf **elf_out, char *err,
			    size_t errlen);

#endif /* HW_CORE_H */

/* module.h - what a walker asks of the file its allocator lives in (a
 * shared library, or the executable): its name, the addresses it is
 * mapped at, its writable memory (.data and the .bss after it), and a
 * search of its bytes, in the target or on disk (alloc/module.c).
 */
#ifndef HW_ALLOC_MODULE_H
#define HW_ALLOC_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../target/target.h"

struct hw_addr_range {
	uint64_t start, end;
};

/* The last component of path.  */
const char *hw_base_name(const char *path);

/* The addresses [*lo, *hi) the file named path is mapped at (NT_FILE,
   /proc/PID/maps); false when it is not mapped.  */
bool hw_file_range(const struct hw_target *t, const char *path, uint64_t *lo,
		   uint64_t *hi);

/* The writable regions in [lo, hi), each joined with the anonymous
   region that continues it (.bss past the file's last page), adjacent
   ones merged, each as far as the target holds it (hw_region_held): at
   most max ranges into out, how many returned.  */
size_t hw_module_data(const struct hw_target *t, uint64_t lo, uint64_t hi,
		      struct hw_addr_range *out, size_t max);

/* fn over the readable bytes of every region in [lo, hi) that is not
   code, until it returns true (then true).  */
bool hw_module_search(struct hw_target *t, uint64_t lo, uint64_t hi,
		      bool (*fn)(void *cookie, const uint8_t *data, size_t len),
		      void *cookie);

/* fn over the whole file at path (a regular file of fewer than max_bytes
   bytes, mapped read-only): its result, or false when it cannot be
   read.  For what a core leaves out of a module (a kernel core dumps no
   unmodified file page, qemu-user's no read-only one).  */
bool hw_file_search(const char *path, uint64_t max_bytes,
		    bool (*fn)(void *cookie, const uint8_t *data, size_t len),
		    void *cookie);

#endif /* HW_ALLOC_MODULE_H */

/* unpack.h - a compressed core, unpacked into memory that maps like the
 * file it came from.
 */
#ifndef HW_UNPACK_H
#define HW_UNPACK_H

#include <stddef.h>
#include <stdint.h>

#include "../heapwalk.h"

struct hw_compression;
struct hw_core_open_opts;

/* Unpack the file open at `fd` (named `path` by the user; compressed
   with c, whose decode is not NULL) into a file that no name reaches: a
   memfd, or where memfd_create() is not available an unlinked file in
   $TMPDIR (default /tmp).  Pages that unpack to zeros are not stored,
   and long runs of them are mapped from the zero page (unpack-holes.h),
   so they cost neither memory nor disk, even when read.  On success *map
   is that file's private, writable mapping, *size bytes long (NULL when
   it is empty; unmap with munmap(*map, *size); the file itself goes away
   with it); on failure err holds one line naming path and what went
   wrong (HW_BAD_TARGET).  Progress goes to o->progress; o's store_max
   and unpack_max bound the memory and the size (core.h).  */
enum hw_status hw_unpack(const struct hw_compression *c, int fd,
			 const char *path, const struct hw_core_open_opts *o,
			 uint8_t **map, uint64_t *size, char *err,
			 size_t errlen);

#endif /* HW_UNPACK_H */

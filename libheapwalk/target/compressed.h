/* compressed.h - is this file a compressed core?  */
#ifndef HW_COMPRESSED_H
#define HW_COMPRESSED_H

#include <stddef.h>

/* The compression whose magic `head` (len bytes) starts with, e.g.
   "zstd", and in *unpack the command that undoes it; NULL if none.  */
const char *hw_compression_of(const void *head, size_t len,
			      const char **unpack);

#endif /* HW_COMPRESSED_H */

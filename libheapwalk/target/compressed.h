/* compressed.h - is this file a compressed core, and how is it unpacked?  */
#ifndef HW_COMPRESSED_H
#define HW_COMPRESSED_H

#include <stdbool.h>
#include <stddef.h>

struct hw_unpack;
struct hw_unpack_io;

/* A compression a core may come in.  */
struct hw_compression {
	const char *name;     /* "zstd" */
	const char *unpack;   /* the command that undoes it: "zstd -d" */
	/* Decode the whole stream (every frame or member of it) through u
	   (unpack-codec.h); false when it is corrupt or cut short, with the
	   reason recorded in u.  NULL: heapwalk does not read this
	   compression itself, the user must run `unpack` first.  */
	bool (*decode)(struct hw_unpack *u, struct hw_unpack_io *io);
};

/* The compression whose magic `head` (len bytes) starts with; NULL if
   none.  */
const struct hw_compression *hw_compression_of(const void *head, size_t len);

/* The compression of the file open at fd, looking past the skippable
   frames zstd and lz4 files may start with; NULL if none.  */
const struct hw_compression *hw_compression_at(int fd);

#endif /* HW_COMPRESSED_H */

/* unpack-codec.h - what a decoder of a compressed core sees.
 *
 * unpack.c reads the compressed file and stores what comes out of it; a
 * decoder (unpack-zstd.c, unpack-xz.c, unpack-gzip.c, unpack-lz4.c) only
 * turns one into the other, through two windows: the compressed bytes not
 * yet used, and the room left for decoded ones.  It loops: refill the
 * input when it is used up, make room when the output is full, decode,
 * and say how far both moved.  A decoder's only state is its library's
 * context, made and freed within the call.
 */
#ifndef HW_UNPACK_CODEC_H
#define HW_UNPACK_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hw_unpack;

struct hw_unpack_io {
	const uint8_t *in;   /* compressed bytes not used yet */
	size_t in_len;
	uint8_t *out;        /* room for decoded bytes */
	size_t out_len;
};

/* Refill io->in once it is used up (in_len 0); false at the end of the
   file, or when reading failed (recorded: the decoder then reports the
   stream as cut short, and the read error is what the user sees).  */
bool hw_unpack_read(struct hw_unpack *u);

/* Store the decoded bytes and give io->out room again, once it is full
   (out_len 0); false when they cannot be stored (recorded).  */
bool hw_unpack_flush(struct hw_unpack *u);

/* Move the windows past `used` input bytes and `made` output bytes.  */
static inline void hw_unpack_moved(struct hw_unpack_io *io, size_t used,
				   size_t made)
{
	io->in += used;
	io->in_len -= used;
	io->out += made;
	io->out_len -= made;
}

/* The top of every decoder's loop: room for output (false when the
   decoded bytes could not be stored: stop), and input unless the file
   has ended (*eof then set).  */
static inline bool hw_unpack_refill(struct hw_unpack *u,
				    struct hw_unpack_io *io, bool *eof)
{
	if (!io->out_len && !hw_unpack_flush(u))
		return false;
	if (!io->in_len && !*eof)
		*eof = !hw_unpack_read(u);
	return true;
}

/* A frame's header says it holds `more` bytes: false (recorded) when
   they would take the core past what it may unpack to, so that a frame
   claiming terabytes is refused before a byte of it is decoded.  */
bool hw_unpack_promised(struct hw_unpack *u, uint64_t more);

/* Record why decoding failed ("truncated", the library's message): the
   first reason recorded is the one reported.  Returns false.  */
bool hw_unpack_fail(struct hw_unpack *u, const char *why);

/* The decoders, for compressed.c's table.  Each decodes every frame,
   stream or member the file holds one after the other.  */
bool hw_decode_zstd(struct hw_unpack *u, struct hw_unpack_io *io);
bool hw_decode_xz(struct hw_unpack *u, struct hw_unpack_io *io);
bool hw_decode_gzip(struct hw_unpack *u, struct hw_unpack_io *io);
bool hw_decode_lz4(struct hw_unpack *u, struct hw_unpack_io *io);
bool hw_decode_lz4_legacy(struct hw_unpack *u, struct hw_unpack_io *io);

/* The message of a stream that ends where more was due.  */
#define HW_UNPACK_TRUNCATED "truncated (the compressed data ends early)"
/* The message of a decoder that neither took input nor gave output.  */
#define HW_UNPACK_STALLED "corrupt (decoding makes no progress)"

#endif /* HW_UNPACK_CODEC_H */

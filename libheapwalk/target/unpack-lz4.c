/* unpack-lz4.c - decode an lz4 frame file (older systemd-coredump),
 * frame after frame.
 *
 * LZ4F_decompress() stops exactly at the end of a frame and returns 0;
 * called again, it starts the next one, so concatenated frames need
 * nothing special.  The content checksum, when the frame has one, is
 * verified by liblz4.
 */
#include <lz4frame.h>

#include "unpack-codec.h"

bool hw_decode_lz4(struct hw_unpack *u, struct hw_unpack_io *io)
{
	LZ4F_dctx *z;
	if (LZ4F_isError(LZ4F_createDecompressionContext(&z, LZ4F_VERSION)))
		return hw_unpack_fail(u, "out of memory");
	size_t hint = 0;   /* 0: a frame ended (or none began) */
	bool eof = false, ok = true;
	for (;;) {
		if (!hw_unpack_refill(u, io, &eof)) {
			ok = false;
			break;
		}
		size_t used = io->in_len, made = io->out_len;
		size_t r = LZ4F_decompress(z, io->out, &made, io->in, &used,
					   NULL);
		if (LZ4F_isError(r)) {
			ok = hw_unpack_fail(u, LZ4F_getErrorName(r));
			break;
		}
		hw_unpack_moved(io, used, made);
		if (!used && !made) {
			/* At the end of the file, nothing more is pending
			   (and r is what a next frame's header would need).  */
			if (!eof)
				ok = hw_unpack_fail(u, HW_UNPACK_STALLED);
			break;
		}
		hint = r;
	}
	if (ok && hint != 0)
		ok = hw_unpack_fail(u, HW_UNPACK_TRUNCATED);
	LZ4F_freeDecompressionContext(z);
	return ok;
}

/* unpack-zstd.c - decode a zstd file (systemd-coredump's default).
 *
 * The streaming decoder runs frame after frame by itself: a file of
 * several frames (`cat a.zst b.zst`, or zstd's own multi-frame output)
 * needs nothing special.  Its window is capped at libzstd's default
 * (128 MiB), which is what `zstd -d` accepts without --memory: a frame
 * that asks for more is refused with libzstd's own message, instead of
 * letting a hostile header claim gigabytes; and a frame whose header
 * says it holds more than the core may unpack to is refused before it is
 * decoded.
 */
#include <zstd.h>

#include "unpack-codec.h"

bool hw_decode_zstd(struct hw_unpack *u, struct hw_unpack_io *io)
{
	ZSTD_DCtx *z = ZSTD_createDCtx();
	if (!z)
		return hw_unpack_fail(u, "out of memory");
	size_t left = 0;   /* 0: a frame ended and all of it was given out */
	bool eof = false, ok = true;
	for (;;) {
		if (!hw_unpack_refill(u, io, &eof)) {
			ok = false;
			break;
		}
		ZSTD_inBuffer in = { io->in, io->in_len, 0 };
		ZSTD_outBuffer out = { io->out, io->out_len, 0 };
		/* A frame about to begin may say how much it holds.  (Its
		   header is whole in the input more often than not; when
		   it is not, the bound on what is stored still holds.)  */
		if (left == 0 && in.size) {
			unsigned long long fcs =
				ZSTD_getFrameContentSize(in.src, in.size);
			if (fcs != ZSTD_CONTENTSIZE_UNKNOWN &&
			    fcs != ZSTD_CONTENTSIZE_ERROR &&
			    !hw_unpack_promised(u, fcs)) {
				ok = false;
				break;
			}
		}
		size_t r = ZSTD_decompressStream(z, &out, &in);
		if (ZSTD_isError(r)) {
			ok = hw_unpack_fail(u, ZSTD_getErrorName(r));
			break;
		}
		hw_unpack_moved(io, in.pos, out.pos);
		if (!in.pos && !out.pos) {
			/* At the end of the file, nothing more is pending.
			   (This call's r is what a next frame's header would
			   need, not news of the last one.)  */
			if (!eof)
				ok = hw_unpack_fail(u, HW_UNPACK_STALLED);
			break;
		}
		left = r;
	}
	if (ok && left != 0)
		ok = hw_unpack_fail(u, HW_UNPACK_TRUNCATED);
	ZSTD_freeDCtx(z);
	return ok;
}

/* unpack-xz.c - decode an xz file (older systemd-coredump), every
 * stream of it.
 *
 * LZMA_CONCATENATED reads `cat a.xz b.xz` (and stream padding) as xz
 * does, and reports the end only when told the input is finished.  The
 * integrity check each stream carries (CRC or SHA-256) is verified.  The
 * memory limit bounds what a hostile header's dictionary size can make
 * liblzma allocate; xz's own presets need at most 65 MiB.
 */
#include <lzma.h>

#include "unpack-codec.h"

#define XZ_MEMLIMIT (1024ull << 20)

static const char *lzma_why(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR:
		return "out of memory";
	case LZMA_MEMLIMIT_ERROR:
		return "needs more than 1 GiB of memory to unpack "
		       "(a dictionary larger than xz's presets use)";
	case LZMA_FORMAT_ERROR:
		return "not in the .xz format";
	case LZMA_OPTIONS_ERROR:
		return "unsupported compression options";
	case LZMA_DATA_ERROR:
		return "corrupt data";
	case LZMA_BUF_ERROR:
		return HW_UNPACK_TRUNCATED;
	default:
		return "liblzma failed";
	}
}

bool hw_decode_xz(struct hw_unpack *u, struct hw_unpack_io *io)
{
	lzma_stream z = LZMA_STREAM_INIT;
	lzma_ret ret = lzma_stream_decoder(&z, XZ_MEMLIMIT, LZMA_CONCATENATED);
	if (ret != LZMA_OK)
		return hw_unpack_fail(u, lzma_why(ret));
	bool eof = false, ok = true;
	int idle = 0;   /* calls in a row that moved nothing */
	for (;;) {
		if (!hw_unpack_refill(u, io, &eof)) {
			ok = false;
			break;
		}
		z.next_in = io->in;
		z.avail_in = io->in_len;
		z.next_out = io->out;
		z.avail_out = io->out_len;
		ret = lzma_code(&z, eof ? LZMA_FINISH : LZMA_RUN);
		size_t used = io->in_len - z.avail_in;
		size_t made = io->out_len - z.avail_out;
		hw_unpack_moved(io, used, made);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK) {
			ok = hw_unpack_fail(u, lzma_why(ret));
			break;
		}
		/* At the end of the file, liblzma says LZMA_BUF_ERROR on
		   the second call in a row that cannot move: the bound
		   only guards against one that would not.  */
		idle = used || made ? 0 : idle + 1;
		if (idle && (!eof || idle > 2)) {
			ok = hw_unpack_fail(u, eof ? HW_UNPACK_TRUNCATED
					       : HW_UNPACK_STALLED);
			break;
		}
	}
	lzma_end(&z);
	return ok;
}

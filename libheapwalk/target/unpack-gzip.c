/* unpack-gzip.c - decode a gzip file, member after member.
 *
 * `cat a.gz b.gz` is a valid gzip file that gunzip unpacks to both
 * contents, and pigz and `split` followed by cat make such files: after
 * each member ends, the inflater is reset and reads the next one.
 * Anything after the last member that is not another member is an error
 * (gzip calls it "trailing garbage"), never silently ignored.
 */
#include <zlib.h>

#include "unpack-codec.h"

/* Why inflate() failed, in zlib's words when it has some.  */
static const char *inflate_why(const z_stream *z, int ret)
{
	if (ret == Z_MEM_ERROR)
		return "out of memory";
	return z->msg ? z->msg : "corrupt data";
}

bool hw_decode_gzip(struct hw_unpack *u, struct hw_unpack_io *io)
{
	z_stream z = { 0 };
	/* 16 + MAX_WBITS: gzip framing only (header, CRC-32 and length
	   checked), with the largest window.  */
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return hw_unpack_fail(u, "out of memory");
	bool eof = false, ok = true, member_ended = false;
	for (;;) {
		if (!hw_unpack_refill(u, io, &eof)) {
			ok = false;
			break;
		}
		if (member_ended) {
			if (!io->in_len)
				break;          /* the last member */
			inflateReset(&z);
			member_ended = false;
		}
		z.next_in = (Bytef *)io->in;
		z.avail_in = (uInt)io->in_len;
		z.next_out = io->out;
		z.avail_out = (uInt)io->out_len;
		int ret = inflate(&z, Z_NO_FLUSH);
		size_t used = io->in_len - z.avail_in;
		size_t made = io->out_len - z.avail_out;
		hw_unpack_moved(io, used, made);
		if (ret == Z_STREAM_END) {
			member_ended = true;
			continue;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			ok = hw_unpack_fail(u, inflate_why(&z, ret));
			break;
		}
		if (!used && !made) {
			ok = hw_unpack_fail(u, eof ? HW_UNPACK_TRUNCATED
					       : HW_UNPACK_STALLED);
			break;
		}
	}
	inflateEnd(&z);
	return ok;
}

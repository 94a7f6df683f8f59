/* unpack-lz4legacy.c - decode lz4's legacy format (`lz4 -l`, and what
 * lz4 tools wrote before the frame format).
 *
 * After the magic 0x184C2102 come blocks, each a 32-bit little-endian
 * compressed size and that many bytes of one LZ4 block that decodes to
 * at most 8 MiB (every block but the last to exactly 8 MiB).  There is
 * no end mark: the file ends after a block, or another stream's magic
 * follows (`cat a.lz4 b.lz4`).  Skippable frames (magic 0x184D2A5?, a
 * 32-bit length, that many bytes) may come before or between streams.  liblz4's frame decoder does not read
 * this format, so the blocks are gathered here and handed to
 * LZ4_decompress_safe one at a time, which never writes past the room
 * it is given nor reads past the block.
 */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "unpack-codec.h"

#define LEGACY_MAGIC 0x184C2102u
#define LEGACY_BLOCK (8u << 20)          /* decoded bytes per block */

struct legacy {
	uint8_t *block;                   /* one compressed block */
	uint8_t *plain;                   /* its decoded bytes */
	size_t want, have;                /* of the block being gathered */
	uint8_t word[4];                  /* a size or magic being read */
	size_t nword;
	size_t out_at, out_len;           /* decoded bytes not given out */
	uint32_t skip;                    /* of a skippable frame, left */
	bool skip_len;                    /* the next word is its length */
};

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* Give out what the last block decoded to, as room allows.  */
static void give(struct legacy *l, struct hw_unpack_io *io)
{
	size_t n = l->out_len < io->out_len ? l->out_len : io->out_len;
	memcpy(io->out, l->plain + l->out_at, n);
	hw_unpack_moved(io, 0, n);
	l->out_at += n;
	l->out_len -= n;
}

bool hw_decode_lz4_legacy(struct hw_unpack *u, struct hw_unpack_io *io)
{
	struct legacy l = { 0 };
	size_t bound = (size_t)LZ4_compressBound((int)LEGACY_BLOCK);
	l.block = malloc(bound);
	l.plain = malloc(LEGACY_BLOCK);
	bool ok = l.block && l.plain, eof = false, started = false;
	if (!ok)
		hw_unpack_fail(u, "out of memory");
	while (ok) {
		if (!hw_unpack_refill(u, io, &eof)) {
			ok = false;
			break;
		}
		if (l.out_len) {
			give(&l, io);
			continue;
		}
		if (!io->in_len) {
			/* The end: only after a whole block (or a magic and
			   no block, an empty stream).  */
			if (l.nword || l.want || l.skip || l.skip_len)
				ok = hw_unpack_fail(u, HW_UNPACK_TRUNCATED);
			break;
		}
		if (l.skip) {
			size_t n = l.skip < io->in_len ? l.skip : io->in_len;
			hw_unpack_moved(io, n, 0);
			l.skip -= (uint32_t)n;
			continue;
		}
		if (!l.want) {
			/* A block's size, or (first, or after a stream)
			   the magic.  */
			size_t n = 4 - l.nword < io->in_len ? 4 - l.nword
							    : io->in_len;
			memcpy(l.word + l.nword, io->in, n);
			hw_unpack_moved(io, n, 0);
			l.nword += n;
			if (l.nword < 4)
				continue;
			l.nword = 0;
			uint32_t v = le32(l.word);
			if (l.skip_len) {
				l.skip_len = false;
				l.skip = v;
				continue;
			}
			if ((v & 0xfffffff0u) == 0x184D2A50u) {
				l.skip_len = true;
				continue;
			}
			if (v == LEGACY_MAGIC) {
				started = true;
				continue;
			}
			if (!started || v == 0 || v > bound) {
				ok = hw_unpack_fail(u, "corrupt (a legacy lz4 "
						    "block size out of range)");
				break;
			}
			l.want = v;
			l.have = 0;
			continue;
		}
		size_t n = l.want - l.have < io->in_len ? l.want - l.have
							: io->in_len;
		memcpy(l.block + l.have, io->in, n);
		hw_unpack_moved(io, n, 0);
		l.have += n;
		if (l.have < l.want)
			continue;
		int made = LZ4_decompress_safe((const char *)l.block,
					       (char *)l.plain, (int)l.want,
					       (int)LEGACY_BLOCK);
		if (made < 0) {
			ok = hw_unpack_fail(u, "corrupt (a legacy lz4 block "
					    "does not decode)");
			break;
		}
		l.want = 0;
		l.out_at = 0;
		l.out_len = (size_t)made;
	}
	free(l.block);
	free(l.plain);
	return ok;
}

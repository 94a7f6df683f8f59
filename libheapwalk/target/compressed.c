/* compressed.c - recognise a compressed core by its magic bytes.
 *
 * systemd-coredump stores cores compressed (zstd by default, xz or lz4 on
 * older systems), and people move cores around gzipped: those four are
 * unpacked on the fly (unpack.h).  bzip2 is rare for cores and slow to
 * unpack; for it the user is told the command that undoes it.
 */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compressed.h"
#include "unpack-codec.h"

struct magic {
	struct hw_compression c;
	size_t len;
	unsigned char bytes[6];
};

static const struct magic magics[] = {
	{ { "zstd", "zstd -d", hw_decode_zstd }, 4, { 0x28, 0xb5, 0x2f, 0xfd } },
	{ { "xz", "xz -d", hw_decode_xz }, 6, { 0xfd, '7', 'z', 'X', 'Z', 0x00 } },
	{ { "lz4", "lz4 -d", hw_decode_lz4 }, 4, { 0x04, 0x22, 0x4d, 0x18 } },
	/* lz4's legacy format (lz4 -l, and old lz4 tools' only one).  */
	{ { "lz4", "lz4 -d", hw_decode_lz4_legacy }, 4,
	  { 0x02, 0x21, 0x4c, 0x18 } },
	{ { "gzip", "gzip -d", hw_decode_gzip }, 2, { 0x1f, 0x8b } },
	{ { "bzip2", "bzip2 -d", NULL }, 3, { 'B', 'Z', 'h' } },
};

const struct hw_compression *hw_compression_of(const void *head, size_t len)
{
	for (size_t i = 0; i < sizeof magics / sizeof *magics; i++) {
		const struct magic *m = &magics[i];
		if (len >= m->len && memcmp(head, m->bytes, m->len) == 0)
			return &m->c;
	}
	return NULL;
}

/* zstd's and lz4's skippable frames: magic 0x184D2A50-5F (little-endian),
   a 32-bit length, that many bytes of anything.  Either format's file
   may start with them (metadata a tool put first); their decoders step
   over them, but the magic that tells the format comes after.  */
static bool skippable(const unsigned char *h)
{
	return (h[0] & 0xf0) == 0x50 && h[1] == 0x2a && h[2] == 0x4d &&
	       h[3] == 0x18;
}

/* At most this many skippable frames are stepped over to find the
   format: a file of nothing else is no core.  */
#define MAX_SKIPPABLE 64

const struct hw_compression *hw_compression_at(int fd)
{
	unsigned char head[8];
	struct stat st;
	if (fstat(fd, &st) != 0)
		return NULL;
	uint64_t size = (uint64_t)st.st_size, at = 0;
	for (unsigned n = 0; n <= MAX_SKIPPABLE; n++) {
		if (at > size || size - at < sizeof head ||
		    pread(fd, head, sizeof head, (off_t)at) !=
			    (ssize_t)sizeof head)
			return NULL;
		if (!skippable(head))
			return hw_compression_of(head, sizeof head);
		uint32_t len = (uint32_t)head[4] | (uint32_t)head[5] << 8 |
			       (uint32_t)head[6] << 16 | (uint32_t)head[7] << 24;
		at += sizeof head + len;
	}
	return NULL;
}

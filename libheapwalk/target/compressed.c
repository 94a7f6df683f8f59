/* compressed.c - recognise a compressed core by its magic bytes.
 *
 * systemd-coredump stores cores compressed (zstd by default, xz or lz4 on
 * older systems), and people move cores around gzipped: those four are
 * unpacked on the fly (unpack.h).  bzip2 is rare for cores and slow to
 * unpack; for it the user is told the command that undoes it.
 */
#include <string.h>

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

/* compressed.c - recognise a compressed core by its magic bytes.
 *
 * systemd-coredump stores cores compressed (zstd by default, xz or lz4 on
 * older systems), and people move cores around gzipped.  heapwalk reads
 * only uncompressed cores for now, so the least it owes the user is the
 * name of the compression and the command that undoes it.
 */
#include <string.h>

#include "compressed.h"

struct magic {
	const char *name, *unpack;
	size_t len;
	unsigned char bytes[6];
};

static const struct magic magics[] = {
	{ "zstd", "zstd -d", 4, { 0x28, 0xb5, 0x2f, 0xfd } },
	{ "xz", "xz -d", 6, { 0xfd, '7', 'z', 'X', 'Z', 0x00 } },
	{ "lz4", "lz4 -d", 4, { 0x04, 0x22, 0x4d, 0x18 } },
	{ "gzip", "gzip -d", 2, { 0x1f, 0x8b } },
	{ "bzip2", "bzip2 -d", 3, { 'B', 'Z', 'h' } },
};

const char *hw_compression_of(const void *head, size_t len,
			      const char **unpack)
{
	for (size_t i = 0; i < sizeof magics / sizeof *magics; i++) {
		const struct magic *m = &magics[i];
		if (len >= m->len && memcmp(head, m->bytes, m->len) == 0) {
			*unpack = m->unpack;
			return m->name;
		}
	}
	return NULL;
}

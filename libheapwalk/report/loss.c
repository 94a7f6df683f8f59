/* loss.c - loss records as `leaks` and `diff --leaks` show them alike:
 * their order, and a block's first bytes.
 */
#include <string.h>

#include "loss.h"

/* A byte's two hex digits by one lookup: `leaks --json` writes them for
   each of millions of blocks, where snprintf's "%02x" was most of its
   time.  Byte b's are HEX_PAIRS[2 * b] and HEX_PAIRS[2 * b + 1].  */
static const char HEX_PAIRS[2 * 256 + 1] =
	"000102030405060708090a0b0c0d0e0f"
	"101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f"
	"303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f"
	"505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f"
	"707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f"
	"909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
	"b0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecf"
	"d0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeef"
	"f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

static inline void hex_byte(uint8_t b, char *out)
{
	memcpy(out, &HEX_PAIRS[2 * b], 2);
}

void hw_hex_bytes(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		hex_byte(b[i], out + 2 * i);
	out[2 * n] = '\0';
}

int hw_loss_order(const struct hw_loss_key *x, const struct hw_loss_key *y)
{
	uint64_t bx = x->size * x->count, by = y->size * y->count;
	if (bx != by)
		return bx > by ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->type != y->type)
		return !x->type ? 1 : !y->type ? -1 : strcmp(x->type, y->type);
	return 0;
}

void hw_first_bytes_text(const uint8_t *b, size_t n, char *out, size_t len)
{
	size_t at = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && at + 4 < len; i++) {
		hex_byte(b[i], out + at);
		out[at + 2] = ' ';
		at += 3;
	}
	out[at] = '\0';
	if (!n || at + n + 4 >= len)
		return;
	out[at++] = '|';
	for (size_t i = 0; i < n; i++)
		out[at++] = b[i] >= 0x20 && b[i] < 0x7f ? (char)b[i] : '.';
	out[at++] = '|';
	out[at] = '\0';
}

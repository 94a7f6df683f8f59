/* loss.c - loss records as `leaks` and `diff --leaks` show them alike:
 * their order, and a block's first bytes.
 */
#include <stdio.h>
#include <string.h>

#include "loss.h"

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
	for (size_t i = 0; i < n && at + 4 < len; i++)
		at += (size_t)snprintf(out + at, len - at, "%02x ", b[i]);
	if (!n || at + n + 4 >= len)
		return;
	out[at++] = '|';
	for (size_t i = 0; i < n; i++)
		out[at++] = b[i] >= 0x20 && b[i] < 0x7f ? (char)b[i] : '.';
	out[at++] = '|';
	out[at] = '\0';
}

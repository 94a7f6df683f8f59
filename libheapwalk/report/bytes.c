/* bytes.c - a stretch of the target's bytes, read once, for JSON (hex)
 * and text (hexdump -C lines): `chunk --bytes` and `view` alike.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../emit/emit.h"
#include "../target/target.h"
#include "bytes.h"
#include "loss.h"

void hw_bytes_read(struct hw_target *t, uint64_t from, size_t n,
		   struct hw_bytes *by)
{
	*by = (struct hw_bytes){ .from = from, .n = n };
	by->b = malloc(n ? n : 1);
	by->hex = malloc(2 * n + 1);
	by->oom = !by->b || !by->hex;
	by->have = !by->oom && hw_read(t, from, by->b, n);
	for (size_t i = 0; by->have && i < n; i++)
		snprintf(by->hex + 2 * i, 3, "%02x", by->b[i]);
	if (by->have)
		by->hex[2 * n] = '\0';
}

void hw_bytes_rows(struct hw_emitter *e, const struct hw_bytes *by)
{
	for (size_t at = 0; at < by->n && !em_failed(e); at += 16) {
		char text[96];
		if (by->have)
			hw_first_bytes_text(by->b + at,
					    by->n - at < 16 ? by->n - at : 16,
					    text, sizeof text);
		else
			snprintf(text, sizeof text, "(not in the target)");
		const struct em_val v[] = { ev_addr(by->from + at),
					    ev_str(text) };
		em_row(e, v);
	}
}

void hw_bytes_free(struct hw_bytes *by)
{
	free(by->b);
	free(by->hex);
	by->b = NULL;
	by->hex = NULL;
}

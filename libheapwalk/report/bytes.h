/* bytes.h - a stretch of the target's bytes as `chunk --bytes` and `view`
 * show them: read once, in hex for JSON, 16 a line as hexdump -C for
 * text (report/bytes.c).
 */
#ifndef HW_REPORT_BYTES_H
#define HW_REPORT_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hw_emitter;
struct hw_target;

struct hw_bytes {
	uint64_t from;
	size_t n;
	uint8_t *b;        /* the n bytes, when have */
	char *hex;         /* them in hex, NUL-ended, when have */
	bool have;         /* false: not in the target, or out of memory */
	bool oom;
};

/* Read n bytes of t at from into *by (free with hw_bytes_free).  */
void hw_bytes_read(struct hw_target *t, uint64_t from, size_t n,
		   struct hw_bytes *by);
/* The rows of a table the caller opened, 16 bytes a line: the address,
   then the bytes and their text ("(not in the target)" when not had).  */
void hw_bytes_rows(struct hw_emitter *e, const struct hw_bytes *by);
void hw_bytes_free(struct hw_bytes *by);

#endif /* HW_REPORT_BYTES_H */

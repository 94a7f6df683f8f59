/* emit.h - one writer for both output forms: aligned text and JSON.
 *
 * All output goes through the caller's write callback, buffered.  The
 * JSON half is a streaming writer that places commas and tracks nesting;
 * the text half is printf plus helpers for human sizes.  A report checks
 * e->json and writes the form asked for; JSON Lines reports (chunks) end
 * each object with em_jsonl_end().
 */
#ifndef HW_EMIT_H
#define HW_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../heapwalk.h"

#define EM_BUF 65536
#define EM_DEPTH 32

struct hw_emitter {
	struct hw_output out;
	bool json;
	bool failed;       /* the sink refused; stop producing */
	int depth;
	bool need_comma[EM_DEPTH];
	size_t len;
	char buf[EM_BUF];
};

void em_init(struct hw_emitter *e, const struct hw_output *out);
bool em_flush(struct hw_emitter *e);

void em_raw(struct hw_emitter *e, const char *s, size_t n);
/* A string literal, its length known at compile time.  */
#define EM_LIT(e, lit) em_raw((e), "" lit, sizeof(lit) - 1)
void em_str_raw(struct hw_emitter *e, const char *s);
void em_printf(struct hw_emitter *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* JSON.  `key` is NULL for array elements and the top-level value.  */
void em_obj_begin(struct hw_emitter *e, const char *key);
void em_obj_end(struct hw_emitter *e);
void em_arr_begin(struct hw_emitter *e, const char *key);
void em_arr_end(struct hw_emitter *e);
void em_u64(struct hw_emitter *e, const char *key, uint64_t v);
void em_i64(struct hw_emitter *e, const char *key, int64_t v);
void em_hex(struct hw_emitter *e, const char *key, uint64_t v);
/* em_hex, or null when v is 0 (an address that was not found).  */
void em_hex_or_null(struct hw_emitter *e, const char *key, uint64_t v);
void em_str(struct hw_emitter *e, const char *key, const char *v);
void em_bool(struct hw_emitter *e, const char *key, bool v);
void em_null(struct hw_emitter *e, const char *key);
void em_fixed(struct hw_emitter *e, const char *key, double v, int prec);
/* End a top-level JSON value with a newline (a document or one JSONL
   line).  */
void em_jsonl_end(struct hw_emitter *e);

/* Fast appenders for hot loops.  */
void em_dec(struct hw_emitter *e, uint64_t v);
void em_hexnum(struct hw_emitter *e, uint64_t v);

/* "1.5 MiB"-style size into buf (>= 16 bytes).  */
const char *hw_human(char *buf, size_t len, uint64_t bytes);

#endif /* HW_EMIT_H */

/* emit.c - the buffered text / JSON writer.  */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"

void em_init(struct hw_emitter *e, const struct hw_output *out)
{
	e->out = *out;
	e->json = out->json;
	e->failed = false;
	e->depth = 0;
	e->need_comma[0] = false;
	e->len = 0;
}

bool em_flush(struct hw_emitter *e)
{
	if (e->len && !e->failed && !e->out.write(e->out.cookie, e->buf, e->len))
		e->failed = true;
	e->len = 0;
	return !e->failed;
}

void em_raw(struct hw_emitter *e, const char *s, size_t n)
{
	if (e->failed)
		return;
	if (e->len + n > EM_BUF) {
		em_flush(e);
		if (n > EM_BUF) {
			if (!e->failed && !e->out.write(e->out.cookie, s, n))
				e->failed = true;
			return;
		}
	}
	memcpy(e->buf + e->len, s, n);
	e->len += n;
}

void em_str_raw(struct hw_emitter *e, const char *s)
{
	em_raw(e, s, strlen(s));
}

void em_printf(struct hw_emitter *e, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	em_raw(e, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void em_dec(struct hw_emitter *e, uint64_t v)
{
	char tmp[24];
	int i = sizeof tmp;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	em_raw(e, tmp + i, sizeof tmp - (size_t)i);
}

void em_hexnum(struct hw_emitter *e, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[20];
	int i = sizeof tmp;
	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	em_raw(e, tmp + i, sizeof tmp - (size_t)i);
}

static void json_string(struct hw_emitter *e, const char *s)
{
	em_raw(e, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			em_raw(e, esc, 2);
		} else if (c < 0x20) {
			char esc[8];
			snprintf(esc, sizeof esc, "\\u%04x", c);
			em_raw(e, esc, 6);
		} else {
			em_raw(e, (const char *)&c, 1);
		}
	}
	em_raw(e, "\"", 1);
}

/* Comma and key before a value.  */
static void prefix(struct hw_emitter *e, const char *key)
{
	if (e->need_comma[e->depth])
		em_raw(e, ",", 1);
	e->need_comma[e->depth] = true;
	if (key) {
		json_string(e, key);
		em_raw(e, ":", 1);
	}
}

static void open_scope(struct hw_emitter *e, const char *key, char c)
{
	prefix(e, key);
	em_raw(e, &c, 1);
	if (e->depth + 1 < EM_DEPTH)
		e->depth++;
	e->need_comma[e->depth] = false;
}

static void close_scope(struct hw_emitter *e, char c)
{
	if (e->depth > 0)
		e->depth--;
	em_raw(e, &c, 1);
}

void em_obj_begin(struct hw_emitter *e, const char *key) { open_scope(e, key, '{'); }
void em_obj_end(struct hw_emitter *e) { close_scope(e, '}'); }
void em_arr_begin(struct hw_emitter *e, const char *key) { open_scope(e, key, '['); }
void em_arr_end(struct hw_emitter *e) { close_scope(e, ']'); }

void em_u64(struct hw_emitter *e, const char *key, uint64_t v)
{
	prefix(e, key);
	em_dec(e, v);
}

void em_i64(struct hw_emitter *e, const char *key, int64_t v)
{
	prefix(e, key);
	if (v < 0) {
		em_raw(e, "-", 1);
		em_dec(e, (uint64_t)0 - (uint64_t)v);
	} else {
		em_dec(e, (uint64_t)v);
	}
}

void em_hex(struct hw_emitter *e, const char *key, uint64_t v)
{
	prefix(e, key);
	em_raw(e, "\"", 1);
	em_hexnum(e, v);
	em_raw(e, "\"", 1);
}

void em_hex_or_null(struct hw_emitter *e, const char *key, uint64_t v)
{
	if (v)
		em_hex(e, key, v);
	else
		em_null(e, key);
}

void em_str(struct hw_emitter *e, const char *key, const char *v)
{
	prefix(e, key);
	json_string(e, v);
}

void em_bool(struct hw_emitter *e, const char *key, bool v)
{
	prefix(e, key);
	em_str_raw(e, v ? "true" : "false");
}

void em_null(struct hw_emitter *e, const char *key)
{
	prefix(e, key);
	em_str_raw(e, "null");
}

void em_fixed(struct hw_emitter *e, const char *key, double v, int prec)
{
	prefix(e, key);
	em_printf(e, "%.*f", prec, v);
}

void em_jsonl_end(struct hw_emitter *e)
{
	em_raw(e, "\n", 1);
	e->depth = 0;
	e->need_comma[0] = false;
}

const char *hw_human(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	double v = (double)bytes;
	unsigned u = 0;
	while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

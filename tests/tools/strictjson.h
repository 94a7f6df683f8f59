/* strictjson.h - a strict JSON reader for the test tools (jsoncheck, deathcmp).
 *
 * Strict as RFC 8259 and RFC 3629 say: the input must be UTF-8 (no stray
 * continuation bytes, overlong forms, surrogates or code points past
 * U+10FFFF), strings may hold no raw control characters and only the
 * escapes JSON defines (\u surrogates only in pairs), numbers follow the
 * grammar, and nothing but white space follows the value.  Parsed into
 * a tree whose strings are decoded to UTF-8 (NUL-free: a \u0000 is
 * refused, the tools compare C strings).  Everything is malloc'd; the
 * tools are short-lived and never free it, the fuzz harnesses, which
 * parse every report, free a tree with jfree() (a tree of a failed parse
 * is not freed: the harness stops then).
 */
#ifndef TOOLS_STRICTJSON_H
#define TOOLS_STRICTJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	enum jtype t;
	bool b;
	double num;
	char *s;            /* J_STR; J_NUM: the number's text */
	size_t n;           /* J_ARR, J_OBJ: members */
	struct jv **v;
	char **k;           /* J_OBJ: keys */
};

struct jparser {
	const unsigned char *p, *end;
	const char *err;
	size_t err_at;
	const unsigned char *start;
	int depth;
	bool nul_ok;        /* jparse_any: \u0000 is JSON too */
};

static inline bool jbad(struct jparser *j, const char *why)
{
	if (!j->err) {
		j->err = why;
		j->err_at = (size_t)(j->p - j->start);
	}
	return false;
}

/* Length of the valid UTF-8 sequence at p (< end), 0 when invalid.  */
static inline size_t jutf8(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0], lo = 0x80, hi = 0xbf;
	size_t n;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;
		hi = c == 0xed ? 0x9f : 0xbf;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;
	} else
		return 0;
	if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

static inline void jws(struct jparser *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static inline struct jv *jnew(enum jtype t)
{
	struct jv *v = calloc(1, sizeof *v);
	if (!v)
		abort();
	v->t = t;
	return v;
}

static inline int jhex4(const unsigned char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int c = p[i], d = c >= '0' && c <= '9' ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

static inline size_t jput_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 63));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 63));
		o[2] = (char)(0x80 | (cp & 63));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 63));
	o[2] = (char)(0x80 | (cp >> 6 & 63));
	o[3] = (char)(0x80 | (cp & 63));
	return 4;
}

static inline char *jstr(struct jparser *j)
{
	j->p++; /* '"' */
	/* As long as its raw text at most (every escape unescapes
	   shorter): the rest of the document would be as many bytes again
	   for every string, gigabytes for a big report.  */
	const unsigned char *q = j->p;
	while (q < j->end && *q != '"')
		q += *q == '\\' && q + 1 < j->end ? 2 : 1;
	char *o = malloc((size_t)(q - j->p) + 1);
	size_t n = 0;
	if (!o)
		abort();
	while (j->p < j->end && *j->p != '"') {
		unsigned c = *j->p;
		if (c < 0x20) {
			jbad(j, "a raw control character in a string");
			return NULL;
		}
		if (c != '\\') {
			size_t k = jutf8(j->p, j->end);
			if (!k) {
				jbad(j, "invalid UTF-8");
				return NULL;
			}
			memcpy(o + n, j->p, k);
			n += k;
			j->p += k;
			continue;
		}
		if (j->end - j->p < 2) {
			jbad(j, "a cut escape");
			return NULL;
		}
		c = j->p[1];
		j->p += 2;
		const char *simple = strchr("\"\\/bfnrt", (int)c);
		if (c && simple) {
			static const char to[] = "\"\\/\b\f\n\r\t";
			o[n++] = to[simple - "\"\\/bfnrt"];
			continue;
		}
		if (c != 'u' || j->end - j->p < 4 || jhex4(j->p) < 0) {
			jbad(j, "a bad escape");
			return NULL;
		}
		unsigned cp = (unsigned)jhex4(j->p);
		j->p += 4;
		if (cp >= 0xdc00 && cp <= 0xdfff) {
			jbad(j, "a lone low surrogate escape");
			return NULL;
		}
		if (cp >= 0xd800 && cp <= 0xdbff) {
			int lo;
			if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' ||
			    (lo = jhex4(j->p + 2)) < 0xdc00 || lo > 0xdfff) {
				jbad(j, "a lone high surrogate escape");
				return NULL;
			}
			cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned)lo - 0xdc00);
			j->p += 6;
		}
		if (cp == 0 && !j->nul_ok) {
			jbad(j, "\\u0000 (the tools compare C strings)");
			return NULL;
		}
		n += jput_utf8(o + n, cp);
	}
	if (j->p >= j->end) {
		jbad(j, "an unterminated string");
		return NULL;
	}
	j->p++;
	o[n] = '\0';
	return o;
}

static inline struct jv *jvalue(struct jparser *j);

static inline struct jv *jcontainer(struct jparser *j, bool obj)
{
	struct jv *v = jnew(obj ? J_OBJ : J_ARR);
	size_t cap = 0;
	if (++j->depth > 256) {
		jbad(j, "nested too deep");
		return NULL;
	}
	j->p++;
	jws(j);
	if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
		j->p++;
		j->depth--;
		return v;
	}
	for (;;) {
		char *key = NULL;
		jws(j);
		if (obj) {
			if (j->p >= j->end || *j->p != '"') {
				jbad(j, "a key expected");
				return NULL;
			}
			if (!(key = jstr(j)))
				return NULL;
			jws(j);
			if (j->p >= j->end || *j->p != ':') {
				jbad(j, "':' expected");
				return NULL;
			}
			j->p++;
		}
		struct jv *m = jvalue(j);
		if (!m)
			return NULL;
		if (v->n == cap) {
			cap = cap ? 2 * cap : 8;
			v->v = realloc(v->v, cap * sizeof *v->v);
			v->k = realloc(v->k, cap * sizeof *v->k);
			if (!v->v || !v->k)
				abort();
		}
		v->k[v->n] = key;
		v->v[v->n++] = m;
		jws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
			j->p++;
			j->depth--;
			return v;
		}
		jbad(j, obj ? "',' or '}' expected" : "',' or ']' expected");
		return NULL;
	}
}

static inline bool jdigits(struct jparser *j)
{
	const unsigned char *s = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static inline struct jv *jnumber(struct jparser *j)
{
	const unsigned char *s = j->p;
	if (*j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!jdigits(j)) {
		jbad(j, "a bad number");
		return NULL;
	}
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!jdigits(j)) {
			jbad(j, "a bad fraction");
			return NULL;
		}
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!jdigits(j)) {
			jbad(j, "a bad exponent");
			return NULL;
		}
	}
	struct jv *v = jnew(J_NUM);
	v->s = strndup((const char *)s, (size_t)(j->p - s));
	v->num = strtod(v->s, NULL);
	return v;
}

static inline struct jv *jword(struct jparser *j, const char *w, enum jtype t, bool b)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0) {
		jbad(j, "an unknown word");
		return NULL;
	}
	j->p += n;
	struct jv *v = jnew(t);
	v->b = b;
	return v;
}

static inline struct jv *jvalue(struct jparser *j)
{
	jws(j);
	if (j->p >= j->end) {
		jbad(j, "a value expected");
		return NULL;
	}
	switch (*j->p) {
	case '{':
		return jcontainer(j, true);
	case '[':
		return jcontainer(j, false);
	case '"': {
		char *s = jstr(j);
		if (!s)
			return NULL;
		struct jv *v = jnew(J_STR);
		v->s = s;
		return v;
	}
	case 't':
		return jword(j, "true", J_BOOL, true);
	case 'f':
		return jword(j, "false", J_BOOL, false);
	case 'n':
		return jword(j, "null", J_NULL, false);
	default:
		if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
			return jnumber(j);
		jbad(j, "a value expected");
		return NULL;
	}
}

/* One JSON text in [p, p + len): the value, or NULL with *err and
   *err_at (a byte offset) set.  */
static inline struct jv *jparse_opt(const char *p, size_t len, const char **err,
			     size_t *err_at, bool nul_ok)
{
	struct jparser j = { (const unsigned char *)p,
			     (const unsigned char *)p + len, NULL, 0,
			     (const unsigned char *)p, 0, nul_ok };
	struct jv *v = jvalue(&j);
	if (v) {
		jws(&j);
		if (j.p != j.end) {
			jbad(&j, "something after the value");
			v = NULL;
		}
	}
	*err = j.err;
	*err_at = j.err_at;
	return v;
}

static inline struct jv *jparse(const char *p, size_t len, const char **err,
			 size_t *err_at)
{
	return jparse_opt(p, len, err, err_at, false);
}

/* jparse, but a \u0000 in a string is taken (as JSON allows: a binary
   format carried in a string), for a check of syntax alone.  */
static inline struct jv *jparse_any(const char *p, size_t len,
				    const char **err, size_t *err_at)
{
	return jparse_opt(p, len, err, err_at, true);
}

/* Free a tree jparse() returned.  */
static inline void jfree(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jfree(v->v[i]);
		if (v->k)
			free(v->k[i]);
	}
	free(v->v);
	free(v->k);
	free(v->s);
	free(v);
}

/* Member `key` of an object, or NULL.  */
static inline struct jv *jget(const struct jv *o, const char *key)
{
	if (!o || o->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->k[i], key) == 0)
			return o->v[i];
	return NULL;
}

#endif /* TOOLS_STRICTJSON_H */

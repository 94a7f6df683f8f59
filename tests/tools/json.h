/* json.h - a small validating JSON reader for the test tools (header
 * only: every function is static inline, so a tool uses what it needs).
 *
 * It reads the shapes heapwalk prints -- objects, arrays, strings,
 * integers, true/false/null -- by key, whatever the order of keys:
 *   jvalid(doc)          the text is exactly one JSON value
 *   jget(obj, key)       the value of a member (NULL when absent)
 *   jpath(obj, "a.b")    the same through nested objects
 *   jnum / jstr / jhex   an unsigned integer / a string (copied) /
 *                        a "0x..." string as a number
 *   jfirst(arr), jnext(el, &bad)   iterate over an array
 * Values are addressed by a pointer to their first character inside a
 * NUL-terminated buffer.  jskip() returns the first character after a
 * value, or NULL when the text is not valid JSON there.
 * Used by truthcmp.c and jetruthcmp.c.
 */
#ifndef HW_TOOLS_JSON_H
#define HW_TOOLS_JSON_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static inline const char *jws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static inline const char *jskip_string(const char *p)
{
	if (*p != '"')
		return NULL;
	for (p++; *p != '"'; p++) {
		if (*p == 0 || (unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!p[i] || !strchr("0123456789abcdefABCDEF", p[i]))
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
	}
	return p + 1;
}

static inline const char *jskip(const char *p, int depth)
{
	if (depth > 64)
		return NULL;
	p = jws(p);
	switch (*p) {
	case '"':
		return jskip_string(p);
	case '{':
	case '[': {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';
		p = jws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = jskip_string(jws(p));
				if (!p)
					return NULL;
				p = jws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = jskip(p, depth + 1);
			if (!p)
				return NULL;
			p = jws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	case 't':
		return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f':
		return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n':
		return strncmp(p, "null", 4) ? NULL : p + 4;
	default:
		if (*p == '-' || (*p >= '0' && *p <= '9')) {
			if (*p == '-')
				p++;
			if (!(*p >= '0' && *p <= '9'))
				return NULL;
			while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' ||
			       *p == 'E' || *p == '+' || *p == '-')
				p++;
			return p;
		}
		return NULL;
	}
}

/* The value of member `key` of the object at `obj`, or NULL.  */
static inline const char *jget(const char *obj, const char *key)
{
	const char *p = jws(obj);
	size_t klen = strlen(key);
	if (*p != '{')
		return NULL;
	p = jws(p + 1);
	if (*p == '}')
		return NULL;
	for (;;) {
		const char *k = jws(p);
		const char *ke = jskip_string(k);
		if (!ke)
			return NULL;
		p = jws(ke);
		if (*p++ != ':')
			return NULL;
		p = jws(p);
		if ((size_t)(ke - k - 2) == klen && !memcmp(k + 1, key, klen))
			return p;
		p = jskip(p, 1);
		if (!p)
			return NULL;
		p = jws(p);
		if (*p++ != ',')
			return NULL;
	}
}

/* A path of keys separated by '.', e.g. "mallinfo.arena".  */
static inline const char *jpath(const char *obj, const char *path)
{
	char key[64];
	while (obj && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof key)
			return NULL;
		memcpy(key, path, n);
		key[n] = 0;
		obj = jget(obj, key);
		path += n + (path[n] == '.');
	}
	return obj;
}

static inline bool jnum(const char *v, unsigned long long *out)
{
	if (!v)
		return false;
	v = jws(v);
	if (!(*v >= '0' && *v <= '9'))
		return false;
	char *end;
	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno || *end == '.' || *end == 'e' || *end == 'E')
		return false;
	return true;
}

/* Copy a string value (escapes other than \" and \\ are kept raw).  */
static inline bool jstr(const char *v, char *buf, size_t n)
{
	if (!v)
		return false;
	v = jws(v);
	const char *e = jskip_string(v);
	if (!e || n == 0)
		return false;
	size_t k = 0;
	for (v++; v < e - 1; v++) {
		if (*v == '\\' && (v[1] == '"' || v[1] == '\\'))
			v++;
		if (k + 1 >= n)
			return false;
		buf[k++] = *v;
	}
	buf[k] = 0;
	return true;
}

/* A "0x..." string value.  */
static inline bool jhex(const char *v, unsigned long long *out)
{
	char buf[40];
	if (!jstr(v, buf, sizeof buf))
		return false;
	if (buf[0] != '0' || (buf[1] != 'x' && buf[1] != 'X') || !buf[2])
		return false;
	char *end;
	errno = 0;
	*out = strtoull(buf + 2, &end, 16);
	return !errno && !*end;
}

/* First element of the array at `arr` (NULL if empty or not an array);
   jnext() the element after `el`.  */
static inline const char *jfirst(const char *arr)
{
	const char *p = jws(arr);
	if (*p != '[')
		return NULL;
	p = jws(p + 1);
	return *p == ']' ? NULL : p;
}

static inline const char *jnext(const char *el, bool *bad)
{
	const char *p = jskip(el, 1);
	if (!p) {
		*bad = true;
		return NULL;
	}
	p = jws(p);
	if (*p == ',')
		return jws(p + 1);
	if (*p != ']')
		*bad = true;
	return NULL;
}

/* A whole document: one value and nothing after it.  */
static inline bool jvalid(const char *doc)
{
	const char *e = jskip(doc, 0);
	return e && !*jws(e);
}

#endif

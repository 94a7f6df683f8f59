/* json.c - read saved JSON back, as `diff`'s base.
 *
 * A fleet keeps these small files instead of cores: a `sizes --json`
 * document, a `sizes --by=type --json` document and `leaks --json` lines
 * (each line one leaked block; no line at all: no leak).  Only what diff
 * compares is taken: "allocator", each "classes" row (size, min, used,
 * used_bytes, free, free_bytes), each "arenas" row (arena, addr, used,
 * used_bytes, free, free_bytes), "partial", each "types" row (type,
 * count, bytes) and of a leak its addr, size, kind, type and head; any
 * other member is skipped, so later additions do not break old readers.
 * The file is untrusted like a core: every read is bounded by its
 * length, nesting is limited, and counts grow only while memory allows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analysis/blockmap.h"
#include "diff.h"

/* Deeper nesting than this is not something `sizes` writes.  */
#define MAX_DEPTH 32
/* Rows past this are not a heap's size classes or arenas.  */
#define MAX_ROWS ((size_t)1 << 24)

struct jp {
	const char *start, *p, *end;
	int depth;
	char *why;
	size_t whylen;
	bool bad;
};

static bool jfail(struct jp *j, const char *what)
{
	if (!j->bad)
		snprintf(j->why, j->whylen, "%s at byte %zu", what,
			 (size_t)(j->p - j->start));
	j->bad = true;
	return false;
}

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool eat(struct jp *j, char c)
{
	ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return true;
	}
	return false;
}

/* A string into out (truncated to outlen - 1 bytes; escapes other than
   \" and \\ kept as their letter: keys and allocator names are plain).  */
static bool jstring(struct jp *j, char *out, size_t outlen)
{
	size_t n = 0;
	if (!eat(j, '"'))
		return jfail(j, "a string expected");
	while (j->p < j->end && *j->p != '"') {
		char c = *j->p++;
		if (c == '\\') {
			if (j->p >= j->end)
				break;
			c = *j->p++;
			if (c == 'u') {
				if (j->end - j->p < 4)
					break;
				j->p += 4;
				c = '?';
			}
		}
		if (out && n + 1 < outlen)
			out[n++] = c;
	}
	if (out && outlen)
		out[n] = '\0';
	if (j->p >= j->end)
		return jfail(j, "an unterminated string");
	j->p++;
	return true;
}

/* An integer (what `sizes` writes); a fraction or exponent is not one.  */
static bool jint(struct jp *j, bool *neg, uint64_t *v)
{
	ws(j);
	*neg = j->p < j->end && *j->p == '-';
	if (*neg)
		j->p++;
	if (j->p >= j->end || *j->p < '0' || *j->p > '9')
		return jfail(j, "an integer expected");
	uint64_t x = 0;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
		unsigned d = (unsigned)(*j->p++ - '0');
		if (x > (UINT64_MAX - d) / 10)
			return jfail(j, "a number too large");
		x = x * 10 + d;
	}
	if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E'))
		return jfail(j, "an integer expected");
	*v = x;
	return true;
}

static bool ju64(struct jp *j, uint64_t *v)
{
	bool neg;
	if (!jint(j, &neg, v))
		return false;
	return !neg || jfail(j, "a count below zero");
}

static bool skip_value(struct jp *j);

/* Skip the members or elements up to `close`.  */
static bool skip_list(struct jp *j, char close, bool keys)
{
	if (++j->depth > MAX_DEPTH)
		return jfail(j, "nesting too deep");
	if (eat(j, close)) {
		j->depth--;
		return true;
	}
	do {
		if (keys && (!jstring(j, NULL, 0) || !eat(j, ':')))
			return jfail(j, "a member expected");
		if (!skip_value(j))
			return false;
	} while (eat(j, ','));
	if (!eat(j, close))
		return jfail(j, "',' or the end of a list expected");
	j->depth--;
	return true;
}

static bool skip_value(struct jp *j)
{
	ws(j);
	if (j->p >= j->end)
		return jfail(j, "a value expected");
	switch (*j->p) {
	case '"':
		return jstring(j, NULL, 0);
	case '{':
		j->p++;
		return skip_list(j, '}', true);
	case '[':
		j->p++;
		return skip_list(j, ']', false);
	default:
		break;
	}
	/* A number or a literal: up to the next delimiter.  */
	const char *start = j->p;
	while (j->p < j->end && !strchr(",]} \t\r\n", *j->p))
		j->p++;
	return j->p > start || jfail(j, "a value expected");
}

static bool jbool(struct jp *j, bool *v)
{
	ws(j);
	if (j->end - j->p >= 4 && !memcmp(j->p, "true", 4)) {
		j->p += 4;
		*v = true;
		return true;
	}
	if (j->end - j->p >= 5 && !memcmp(j->p, "false", 5)) {
		j->p += 5;
		*v = false;
		return true;
	}
	return skip_value(j);
}

/* "0x..." into v.  */
static bool jaddr(struct jp *j, uint64_t *v)
{
	char s[24];
	if (!jstring(j, s, sizeof s))
		return false;
	char *end;
	*v = strtoull(s, &end, 16);
	return (s[0] == '0' && s[1] == 'x' && !*end) ||
	       jfail(j, "an address expected");
}

/* Room for one more row of size `sz` in *rows (n used, *cap slots).  */
static bool grow(struct jp *j, void **rows, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return true;
	if (n >= MAX_ROWS)
		return jfail(j, "too many rows");
	size_t c = *cap ? 2 * *cap : 64;
	void *r = realloc(*rows, c * sz);
	if (!r)
		return jfail(j, "out of memory");
	*rows = r;
	*cap = c;
	return true;
}

/* One object's members: fn reads the value of the keys it knows.  */
typedef bool member_fn(struct jp *j, const char *key, void *row);

static bool each_member(struct jp *j, member_fn *fn, void *row)
{
	if (!eat(j, '{'))
		return jfail(j, "an object expected");
	if (++j->depth > MAX_DEPTH)
		return jfail(j, "nesting too deep");
	if (!eat(j, '}')) {
		do {
			char key[32];
			if (!jstring(j, key, sizeof key) || !eat(j, ':'))
				return jfail(j, "a member expected");
			if (!fn(j, key, row))
				return false;
		} while (eat(j, ','));
		if (!eat(j, '}'))
			return jfail(j, "',' or '}' expected");
	}
	j->depth--;
	return true;
}

struct class_row {
	struct hw_class_total c;
	bool has_min;
};

static bool class_member(struct jp *j, const char *key, void *row)
{
	struct class_row *r = row;
	if (!strcmp(key, "size"))
		return ju64(j, &r->c.max);
	if (!strcmp(key, "min")) {
		r->has_min = true;
		return ju64(j, &r->c.min);
	}
	if (!strcmp(key, "used"))
		return ju64(j, &r->c.used);
	if (!strcmp(key, "used_bytes"))
		return ju64(j, &r->c.used_bytes);
	if (!strcmp(key, "free"))
		return ju64(j, &r->c.free);
	if (!strcmp(key, "free_bytes"))
		return ju64(j, &r->c.free_bytes);
	return skip_value(j);
}

static bool arena_member(struct jp *j, const char *key, void *row)
{
	struct hw_arena_total *a = row;
	if (!strcmp(key, "arena")) {
		bool neg;
		uint64_t v;
		if (!jint(j, &neg, &v))
			return false;
		if (v > INT32_MAX)
			return jfail(j, "an arena number out of range");
		a->arena = neg ? -(int32_t)v : (int32_t)v;
		return true;
	}
	if (!strcmp(key, "addr"))
		return jaddr(j, &a->addr);
	if (!strcmp(key, "used"))
		return ju64(j, &a->used);
	if (!strcmp(key, "used_bytes"))
		return ju64(j, &a->used_bytes);
	if (!strcmp(key, "free"))
		return ju64(j, &a->free);
	if (!strcmp(key, "free_bytes"))
		return ju64(j, &a->free_bytes);
	return skip_value(j);
}

/* A string or null: the text into out, or *is_null.  */
static bool jstring_or_null(struct jp *j, char *out, size_t outlen,
			    bool *is_null)
{
	ws(j);
	*is_null = j->end - j->p >= 4 && !memcmp(j->p, "null", 4);
	if (*is_null) {
		j->p += 4;
		return true;
	}
	return jstring(j, out, outlen);
}

/* Class names longer than this are not a program's (a template's
   demangled name is a few hundred bytes at most).  */
#define MAX_NAME 4096

struct type_row {
	struct diff_base *b;
	struct diff_type t;
	bool oom;
};

static bool type_member(struct jp *j, const char *key, void *row)
{
	struct type_row *r = row;
	if (!strcmp(key, "type")) {
		char *name = malloc(MAX_NAME);
		bool null;
		if (!name)
			return jfail(j, "out of memory");
		bool ok = jstring_or_null(j, name, MAX_NAME, &null);
		if (ok && !null)
			r->t.name = diff_name(&r->b->names, name, &r->oom);
		free(name);
		return ok && (!r->oom || jfail(j, "out of memory"));
	}
	if (!strcmp(key, "count"))
		return ju64(j, &r->t.count);
	if (!strcmp(key, "bytes"))
		return ju64(j, &r->t.bytes);
	return skip_value(j);
}

/* One `leaks --json` line being read.  */
struct leak_line {
	struct diff_leak k;
	bool has_addr, has_size, has_kind, has_head, counts;
	bool oom;
};

struct top {
	struct diff_base *b;
	bool has_classes, has_types;
	bool any_min;
	struct leak_line *leak;
};

static bool read_classes(struct jp *j, struct top *t)
{
	struct hw_size_profile *p = &t->b->p;
	t->has_classes = true;
	if (!eat(j, '['))
		return jfail(j, "\"classes\" is not a list");
	if (eat(j, ']'))
		return true;
	do {
		struct class_row r = { { 0 }, false };
		if (!each_member(j, class_member, &r))
			return false;
		if (!grow(j, (void **)&p->classes, p->nclasses,
			  &t->b->classes_cap, sizeof *p->classes))
			return false;
		if (!r.has_min)
			r.c.min = r.c.max;
		t->any_min |= r.has_min;
		if (r.c.min > r.c.max)
			return jfail(j, "a class whose min is above its size");
		p->classes[p->nclasses++] = r.c;
	} while (eat(j, ','));
	return eat(j, ']') || jfail(j, "',' or ']' expected");
}

static bool read_arenas(struct jp *j, struct top *t)
{
	struct hw_size_profile *p = &t->b->p;
	/* summary's "arenas" is a count: not this list.  */
	ws(j);
	if (j->p >= j->end || *j->p != '[')
		return skip_value(j);
	t->b->has_arenas = true;
	if (!eat(j, '['))
		return jfail(j, "\"arenas\" is not a list");
	if (eat(j, ']'))
		return true;
	do {
		struct hw_arena_total a = { 0 };
		if (!each_member(j, arena_member, &a))
			return false;
		if (!grow(j, (void **)&p->arenas, p->narenas,
			  &t->b->arenas_cap, sizeof *p->arenas))
			return false;
		p->arenas[p->narenas++] = a;
	} while (eat(j, ','));
	return eat(j, ']') || jfail(j, "',' or ']' expected");
}

static bool read_types(struct jp *j, struct top *t)
{
	struct diff_base *b = t->b;
	t->has_types = true;
	if (!eat(j, '['))
		return jfail(j, "\"types\" is not a list");
	if (eat(j, ']'))
		return true;
	do {
		struct type_row r = { .b = b };
		if (!each_member(j, type_member, &r))
			return false;
		if (!grow(j, (void **)&b->types, b->ntypes, &b->types_cap,
			  sizeof *b->types))
			return false;
		b->types[b->ntypes++] = r.t;
	} while (eat(j, ','));
	return eat(j, ']') || jfail(j, "',' or ']' expected");
}

/* "a5a5..." into the leak's head.  */
static bool read_head(struct jp *j, struct diff_leak *k)
{
	char s[2 * DIFF_HEAD + 2];
	if (!jstring(j, s, sizeof s))
		return false;
	size_t len = strlen(s);
	if (len % 2 || len > 2 * DIFF_HEAD)
		return jfail(j, "a \"head\" of up to 16 bytes in hex expected");
	for (size_t i = 0; i < len; i += 2) {
		unsigned v;
		char two[3] = { s[i], s[i + 1], 0 }, *end;
		v = (unsigned)strtoul(two, &end, 16);
		if (*end || !((s[i] >= '0' && s[i] <= '9') ||
			      (s[i] >= 'a' && s[i] <= 'f')))
			return jfail(j, "a \"head\" in hex expected");
		k->head[i / 2] = (uint8_t)v;
	}
	k->nhead = (uint8_t)(len / 2);
	diff_head_key(NULL, k);
	return true;
}

static bool leak_member(struct jp *j, const char *key, struct leak_line *l)
{
	if (!strcmp(key, "addr"))
		return (l->has_addr = true) && jaddr(j, &l->k.addr);
	if (!strcmp(key, "size"))
		return (l->has_size = true) && ju64(j, &l->k.size);
	if (!strcmp(key, "head"))
		return (l->has_head = true) && read_head(j, &l->k);
	if (!strcmp(key, "kind")) {
		char kind[16];
		if (!jstring(j, kind, sizeof kind))
			return false;
		l->has_kind = true;
		/* Possible and reachable blocks are no leaks to compare.  */
		l->counts = !strcmp(kind, "definite") ||
			    !strcmp(kind, "indirect");
		l->k.kind = !strcmp(kind, "indirect") ? BM_INDIRECT
						       : BM_UNREACHED;
		return true;
	}
	return false;
}

static bool top_member(struct jp *j, const char *key, void *row)
{
	struct top *t = row;
	if (!strcmp(key, "classes"))
		return read_classes(j, t);
	if (!strcmp(key, "arenas"))
		return read_arenas(j, t);
	if (!strcmp(key, "types"))
		return read_types(j, t);
	if (!strcmp(key, "allocator"))
		return jstring(j, t->b->allocator, sizeof t->b->allocator);
	if (!strcmp(key, "partial"))
		return jbool(j, &t->b->partial);
	if (!strcmp(key, "type")) {
		/* A leak's class.  */
		struct type_row r = { .b = t->b };
		if (!type_member(j, key, &r))
			return false;
		t->leak->k.type = r.t.name;
		return true;
	}
	if (!strcmp(key, "addr") || !strcmp(key, "size") ||
	    !strcmp(key, "head") || !strcmp(key, "kind"))
		return leak_member(j, key, t->leak);
	return skip_value(j);
}

/* The class rows' totals, and whether they are exact sizes.  */
static void sizes_done(struct diff_base *b, bool any_min)
{
	b->has_sizes = true;
	b->exact = b->p.nclasses && !any_min;
	for (size_t i = 0; i < b->p.nclasses; i++) {
		const struct hw_class_total *c = &b->p.classes[i];
		b->p.used += c->used;
		b->p.used_bytes += c->used_bytes;
		b->p.free += c->free;
		b->p.free_bytes += c->free_bytes;
	}
}

bool diff_parse_json(const char *text, size_t len, struct diff_base *b,
		     const char **what, char *why, size_t whylen)
{
	struct jp j = { .start = text, .p = text, .end = text + len, .why = why,
			.whylen = whylen };
	struct leak_line line;
	struct top t = { .b = b, .leak = &line };
	size_t leaks = 0, heads = 0;
	bool ok = true, sizes = b->has_sizes, types = b->has_types;
	ws(&j);
	/* One document, or JSON Lines (leaks --json): objects until the
	   end; none at all is a leaks --json that found no leak.  */
	while (ok && j.p < j.end) {
		memset(&line, 0, sizeof line);
		t.has_classes = t.has_types = false;
		ok = each_member(&j, top_member, &t);
		ws(&j);
		if (!ok)
			break;
		if ((t.has_classes && sizes) || (t.has_types && types))
			ok = jfail(&j, "a second document of one kind");
		else if (t.has_classes || t.has_types) {
			sizes |= t.has_classes;
			types |= t.has_types;
			if (j.p != j.end)
				ok = jfail(&j, "more after the document (one "
					   "`sizes --json` document expected)");
			if (t.has_classes)
				sizes_done(b, t.any_min);
		} else if (line.has_addr && line.has_size && line.has_kind) {
			leaks++;
			heads += line.has_head;
			if (line.counts && !diff_leaks_grow(&b->leaks))
				ok = jfail(&j, "out of memory");
			else if (line.counts)
				b->leaks.v[b->leaks.n++] = line.k;
		} else
			ok = jfail(&j, "neither a sizes document nor a leaks "
				   "line (\"classes\", \"types\" or \"addr\", "
				   "\"size\" and \"kind\" expected)");
	}
	if (!ok)
		return false;
	if (t.has_classes || t.has_types) {
		*what = t.has_classes ? "sizes-json" : "types-json";
		b->has_types = types;
		return true;
	}
	if (b->has_leaks) {
		snprintf(why, whylen, "a second leaks --json");
		return false;
	}
	*what = "leaks-json";
	b->has_leaks = true;
	/* Heads on every line, or matching by size and class only.  */
	b->leak_heads = heads == leaks;
	b->leak_keys_by_form = true;
	return true;
}

/* findkinds.c - findings by kind.  A finding's text says what is wrong
 * and where; its kind is what is wrong alone.  Numbers go (they are
 * addresses under ASLR, sizes, bin and thread numbers), words stay, so
 * the kinds read as the findings do: "tcache bin # of thread #: next
 * pointer #: unaligned tcache chunk detected".
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "crash.h"
#include "findkinds.h"

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Is [w, w + len) a number: decimal digits, or 0x and hex digits?  */
static bool is_number(const char *w, size_t len)
{
	size_t i = 0;
	if (len > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) {
		for (i = 2; i < len; i++)
			if (!isxdigit((unsigned char)w[i]))
				return false;
		return true;
	}
	for (; i < len; i++)
		if (!isdigit((unsigned char)w[i]))
			return false;
	return len > 0;
}

void hw_kind_of(const char *text, char *out, size_t len)
{
	size_t o = 0;
	const char *p = text;
	while (*p && o + 1 < len) {
		if (p[0] == ';' && p[1] == ' ')
			break;
		/* glibc before 2.26: "*** Error in `./prog': ..." */
		if (*p == '`') {
			const char *q = strchr(p + 1, '\'');
			if (q && o + 3 < len) {
				memcpy(out + o, "`#'", 3);
				o += 3;
				p = q + 1;
				continue;
			}
		}
		if (word_char(*p) && (p == text || !word_char(p[-1]))) {
			size_t w = 0;
			while (word_char(p[w]))
				w++;
			if (is_number(p, w)) {
				out[o++] = '#';
				p += w;
				continue;
			}
			size_t n = w < len - 1 - o ? w : len - 1 - o;
			memcpy(out + o, p, n);
			o += n;
			p += w;
			continue;
		}
		out[o++] = *p++;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

static int by_count(const void *a, const void *b)
{
	const struct hw_kind_count *x = a, *y = b;
	if (x->note != y->note)
		return x->note ? 1 : -1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->kind, y->kind);
}

void hw_kinds_count(const struct hw_session *s, struct hw_kinds *k)
{
	memset(k, 0, sizeof *k);
	for (size_t i = 0; i < s->nfindings; i++) {
		const struct hw_finding *f = &s->findings[i];
		char kind[HW_KIND_LEN];
		if (f->note)
			k->notes++;
		else
			k->findings++;
		hw_kind_of(f->problem, kind, sizeof kind);
		size_t j;
		for (j = 0; j < k->n; j++)
			if (k->v[j].note == f->note &&
			    !strcmp(k->v[j].kind, kind))
				break;
		if (j == k->n) {
			if (k->n == HW_MAX_KINDS) {
				k->other++;
				continue;
			}
			k->n++;
			memcpy(k->v[j].kind, kind, sizeof kind);
			k->v[j].note = f->note;
			k->v[j].abort = !f->note &&
				!strncmp(f->problem, HW_MALLOC_ABORT_FINDING,
					 strlen(HW_MALLOC_ABORT_FINDING));
		}
		k->v[j].count++;
	}
	/* Findings past those kept are counted, not kept: of no kind.  */
	if (s->findings_total > k->findings) {
		k->other += s->findings_total - k->findings;
		k->findings = s->findings_total;
	}
	qsort(k->v, k->n, sizeof *k->v, by_count);
}

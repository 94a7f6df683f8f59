/* abortmsg.c - glibc's abort message (__abort_msg) in the target.
 *
 * What glibc does (the same from 2.17 to 2.44): __libc_message, which
 * malloc's checks (malloc_printerr), __libc_fatal, the fortify checks and,
 * from 2.43, assert() go through (before 2.43 __assert_fail does the
 * same itself), writes the message to stderr, then copies it into a fresh
 * anonymous mapping laid out as
 *
 *	struct abort_msg_s { unsigned int size; char msg[]; };
 *
 * (`size` is the mapping's length, a multiple of the page size; `msg` is
 * NUL-terminated), stores that mapping's address in __abort_msg, a
 * pointer in libc's .bss, and calls abort().  Up to 2.26 it does so only
 * for a message that aborts (every one of malloc's does, by default);
 * from 2.27 every message aborts.  __abort_msg is GLIBC_PRIVATE in libc's
 * .dynsym, so libc's file alone names it, without debug info.  The text
 * changed once: up to 2.26 malloc wrote "*** Error in `PROG': double free
 * or corruption (fasttop): 0x... ***" (the block's address in it), from
 * 2.27 only the check, "free(): double free detected in tcache 2".
 *
 * Without libc's file (a device's core read without its libc) there is
 * no symbol table: libc's writable data is then searched for the one
 * pointer to such a buffer (page-aligned, in an anonymous mapping, its
 * size a page multiple, a line of text that ends in a newline, as every
 * glibc message does).
 */
#include <stdlib.h>
#include <string.h>

#include "../arch/arch.h"
#include "../sym/sym.h"
#include "../target/target.h"
#include "abortmsg.h"

/* Longer messages are cut (glibc's are one line; an assertion's names
   a file and an expression).  */
#define MSG_MAX 65536
/* Bytes of libc's writable data searched without the symbol.  */
#define SCAN_MAX ((uint64_t)8 << 20)

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static bool is_libc(const char *path)
{
	const char *b = base_name(path);
	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-2.", 7) == 0;
}

static uint64_t page_size(const struct hw_target *t)
{
	uint64_t v;
	if (hw_auxv_get(t, 6 /* AT_PAGESZ */, &v) && v >= 4096 &&
	    !(v & (v - 1)))
		return v;
	return 4096;
}

/* The message in the abort_msg_s at buf, checked as the scan needs it
   (`strict`: a line of text ending in '\n', in a buffer of a page
   multiple) or only read (the symbol named it); NULL when it is none.
   Malloc'd.  */
static char *read_msg(struct hw_target *t, uint64_t buf, bool strict,
		      bool *oom)
{
	const uint8_t *p;
	uint32_t size;
	uint64_t run = hw_readable_run(t, buf, &p);
	uint64_t page = page_size(t);
	if (run < 5 || !hw_read_u32(t, buf, &size) || size < 5)
		return NULL;
	if (strict) {
		const struct hw_region *r = hw_region_of(t, buf);
		if ((buf & (page - 1)) || (size & (page - 1)) || !r ||
		    r->file >= 0 || !(r->prot & HW_PROT_W) ||
		    size > r->end - buf || size > MSG_MAX + page)
			return NULL;
	}
	uint64_t max = size < run ? size : run;
	if (max > MSG_MAX + 4)
		max = MSG_MAX + 4;
	const uint8_t *msg = p + 4;
	const uint8_t *nul = memchr(msg, 0, (size_t)(max - 4));
	size_t n = nul ? (size_t)(nul - msg) : (size_t)(max - 4);
	if (strict) {
		if (!nul || n < 2 || msg[n - 1] != '\n')
			return NULL;
		for (size_t i = 0; i < n; i++)
			if (msg[i] < 0x20 && msg[i] != '\n' && msg[i] != '\t')
				return NULL;
	}
	if (n > 0 && msg[n - 1] == '\n')
		n--;
	char *text = malloc(n + 1);
	if (!text) {
		*oom = true;
		return NULL;
	}
	memcpy(text, msg, n);
	text[n] = '\0';
	return text;
}

/* __abort_msg by symbol in the module at addr: true when the symbol is
   there (the message may still be none: a process that did not die of
   one of glibc's checks).  */
static bool by_symbol(struct hw_session *s, uint64_t at,
		      struct hw_abort_msg *out, bool *oom)
{
	struct hw_module m;
	uint64_t var, ptr;
	if (!s->syms || !hw_syms_module_at(s->syms, at, &m) ||
	    !hw_syms_lookup(s->syms, &m, "__abort_msg", &var, NULL, NULL))
		return false;
	if (!hw_read_u64(s->target, var, &ptr))
		return false;
	out->found = "symbol";
	out->var = var;
	if (ptr) {
		out->text = read_msg(s->target, ptr, false, oom);
		out->buf = out->text ? ptr : 0;
	}
	return true;
}

/* Search the writable data of the file named `path` (and the anonymous
   .bss right after it) for a pointer to an abort_msg_s.  Exactly one
   buffer must be found: two would be a guess.  */
static void by_scan(struct hw_session *s, const char *path,
		    struct hw_abort_msg *out, bool *oom)
{
	struct hw_target *t = s->target;
	uint64_t scanned = 0, found = 0, mask = t->arch->ptr_mask;
	for (size_t i = 0; i < t->nregions && scanned < SCAN_MAX; i++) {
		const struct hw_region *r = &t->regions[i];
		bool mine = r->file >= 0 && (size_t)r->file < t->nfiles &&
			    strcmp(t->files[r->file].path, path) == 0;
		bool bss = !mine && i > 0 && r->file < 0 &&
			   t->regions[i - 1].end == r->start &&
			   t->regions[i - 1].file >= 0 &&
			   strcmp(t->files[t->regions[i - 1].file].path,
				  path) == 0;
		if (!(mine || bss) || !(r->prot & HW_PROT_W))
			continue;
		for (uint64_t a = (r->start + 7) & ~(uint64_t)7;
		     a + 8 <= r->end && scanned < SCAN_MAX; a += 8) {
			uint64_t v;
			scanned += 8;
			if (!hw_read_u64(t, a, &v) || !(v &= mask) || (v & 4095))
				continue;
			if (found && v == found)
				continue;
			char *text = read_msg(t, v, true, oom);
			if (!text)
				continue;
			if (found) {     /* a second buffer: say nothing */
				free(text);
				free(out->text);
				out->text = NULL;
				out->buf = 0;
				return;
			}
			found = v;
			out->text = text;
			out->buf = v;
		}
	}
	if (out->text)
		out->found = "scan";
}

bool hw_abort_msg_find(struct hw_session *s, struct hw_abort_msg *out)
{
	struct hw_target *t = s->target;
	bool oom = false, any_libc = false;
	memset(out, 0, sizeof *out);
	/* Each libc copy (an emulator's and its guest's): the first
	   message wins.  */
	for (size_t i = 0; i < t->nfiles && !out->text && !oom; i++) {
		const struct hw_mapped_file *f = &t->files[i];
		if (f->offset != 0 || !is_libc(f->path))
			continue;
		any_libc = true;
		struct hw_abort_msg m = { 0 };
		if (!by_symbol(s, f->start, &m, &oom))
			by_scan(s, f->path, &m, &oom);
		if (m.found && (m.text || !out->found))
			*out = m;
	}
	/* A static executable holds glibc itself (its .symtab, if not
	   stripped, names __abort_msg).  */
	if (!any_libc && !oom && t->nfiles > 0)
		by_symbol(s, t->files[0].start, out, &oom);
	if (oom) {
		hw_abort_msg_free(out);
		return false;
	}
	return true;
}

void hw_abort_msg_free(struct hw_abort_msg *m)
{
	free(m->text);
	memset(m, 0, sizeof *m);
}

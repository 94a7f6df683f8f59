/* prof-sites.c - allocation sites for reports other than `prof`: which
 * stack a block was allocated from, when the allocator sampled it, named
 * the way people say it ("cache_insert <- handle_request").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "prof.h"

/* Frames a site's name shows, innermost first.  */
#define NAME_FRAMES 3

enum hw_status prof_sites_open(struct hw_session *s, struct prof_sites *ps)
{
	memset(ps, 0, sizeof *ps);
	if (!s->alloc->profile || !s->alloc->site_of)
		return HW_OK;
	const struct hw_profile *p = NULL;
	const char *why = NULL;
	enum hw_status st = s->alloc->profile(s->alloc_state, &p, &why);
	if (st != HW_OK || !p || !p->nsites)
		return st;
	ps->names = calloc(p->nsites, sizeof *ps->names);
	if (!ps->names || !prof_stacks_build(s, p, &ps->st)) {
		free(ps->names);
		ps->names = NULL;
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	ps->s = s;
	ps->p = p;
	return HW_OK;
}

void prof_sites_close(struct prof_sites *ps)
{
	if (!ps->p)
		return;
	for (size_t i = 0; i < ps->p->nsites; i++)
		free(ps->names[i]);
	free(ps->names);
	prof_stacks_free(&ps->st);
	ps->p = NULL;
}

const struct hw_prof_site *prof_sites_of(const struct prof_sites *ps,
					 const struct hw_chunk *c)
{
	if (!ps->p)
		return NULL;
	return ps->s->alloc->site_of(ps->s->alloc_state, c);
}

const char *prof_sites_name(struct prof_sites *ps,
			    const struct hw_prof_site *site)
{
	size_t i = (size_t)(site - ps->p->sites);
	if (i >= ps->p->nsites)
		return NULL;
	if (ps->names[i])
		return ps->names[i];
	struct prof_frame_ref fr[PROF_MAX_FRAMES];
	size_t n = prof_site_frames(&ps->st, site, fr, PROF_MAX_FRAMES);
	char buf[1024], tmp[96];
	size_t at = 0;
	buf[0] = '\0';
	/* fr is outermost first: take the innermost few from its end.  */
	for (size_t k = 0; k < NAME_FRAMES && k < n; k++) {
		const struct prof_frame_ref *f = &fr[n - 1 - k];
		const char *name = prof_frame_name(f->f, f->pc, tmp, sizeof tmp);
		size_t len = strlen(name);
		const char *sep = k ? " \xe2\x86\x90 " : "";  /* " <- " as U+2190 */
		size_t sl = strlen(sep);
		if (at + sl + len + 1 >= sizeof buf)
			break;
		memcpy(buf + at, sep, sl);
		memcpy(buf + at + sl, name, len);
		at += sl + len;
		buf[at] = '\0';
	}
	if (!at)
		snprintf(buf, sizeof buf, "(no frame)");
	ps->names[i] = strdup(buf);
	return ps->names[i];
}

/* sites.c - allocation sites for reports other than `prof`: which
 * stack a block was allocated from, when the allocator sampled it, named
 * the way people say it ("cache_insert <- handle_request").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "stacks.h"

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
	/* The stack's key names its frames; its innermost few are the
	   name, as diff's sites are named.  */
	struct prof_frame_ref *fr = malloc(PROF_MAX_FRAMES * sizeof *fr);
	char *key = fr ? prof_stack_key(&ps->st, site, fr) : NULL;
	free(fr);
	if (!key)
		return NULL;
	char buf[1024];
	prof_key_name(key, NAME_FRAMES, buf, sizeof buf);
	free(key);
	ps->names[i] = strdup(buf);
	return ps->names[i];
}

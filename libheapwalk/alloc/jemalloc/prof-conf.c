/* prof-conf.c - the options that shape jemalloc's profile: opt.prof,
 * prof_accum, prof_unbias, prof_active and the sampling period, from the
 * symbols when there are some, else from what the data shows (5.3's
 * unbiasing table) or the configuration the process started with (its
 * malloc_conf and the MALLOC_CONF of its environment).
 */
#include <elf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof-reader.h"

/* ---- the options ---------------------------------------------------------- */

/* The value of key in a malloc_conf string ("k:v,k:v"), the last one.  */
static bool conf_value(const char *conf, const char *key, char *out,
		       size_t len)
{
	bool found = false;
	size_t klen = strlen(key);
	for (const char *p = conf; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n > klen && !strncmp(p, key, klen) && p[klen] == ':') {
			size_t vn = n - klen - 1;
			if (vn >= len)
				vn = len - 1;
			memcpy(out, p + klen + 1, vn);
			out[vn] = '\0';
			found = true;
		}
		p = end ? end + 1 : NULL;
	}
	return found;
}

/* The configuration strings jemalloc read at start-up, in its order (a
   later one wins): the program's malloc_conf, then the environment's
   MALLOC_CONF (only what the core still holds of either).  */
static void read_conf(struct je_state *j, char *out, size_t len)
{
	out[0] = '\0';
	size_t used = 0;
	uint64_t sym = 0, size, p = 0;
	char name[64];
	snprintf(name, sizeof name, "%smalloc_conf", j->prefix);
	size_t nmod = hw_syms_nmodules(j->s->syms);
	for (size_t i = 0; j->s->syms && i < nmod && !sym; i++) {
		struct hw_module m;
		if (hw_syms_module(j->s->syms, i, &m) &&
		    !(j->have_mod && m.low == j->mod.low))
			hw_syms_lookup(j->s->syms, &m, name, &sym, &size, NULL);
	}
	if (sym && hw_read_u64(j->t, sym, &p) && p) {
		while (used + 1 < len && hw_read(j->t, p + used, out + used, 1) &&
		       out[used])
			used++;
		out[used] = '\0';
	}
	char var[16], env[512];
	snprintf(var, sizeof var, "%sMALLOC_CONF",
		 j->prefix[0] ? "JE_" : "");
	if (!hw_environ_get(j->t, var, env, sizeof env))
		return;
	size_t m = strlen(env);
	if (used && used + 1 < len)
		out[used++] = ',';
	if (m > len - used - 1)
		m = len - used - 1;
	memcpy(out + used, env, m);
	out[used + m] = '\0';
}

static bool conf_bool(const char *conf, const char *key, bool dflt)
{
	char v[16];
	if (!conf_value(conf, key, v, sizeof v))
		return dflt;
	return !strcmp(v, "true");
}

/* 5.3's prof_unbiased_sz[i] = round(sz / (1 - exp(-sz / R))): find the
   table in the data and the R it was made for.  */
static uint64_t unbiased_sz(uint64_t sz, unsigned lg)
{
	/* exp(-s/R) rounds to 1 for a small s and a large R: the quotient
	   is then infinite, and jemalloc's table saturates like to_u64.  */
	double s = (double)sz, rate = (double)((uint64_t)1 << lg);
	return jp_to_u64(s / (1.0 - exp(-s / rate)));
}

struct period_probe {
	unsigned lg;
	uint64_t first[63];           /* the table's first entry per lg */
};

static bool unbias_table_match(struct je_state *j, uint64_t at, uint64_t w,
			       void *cookie)
{
	struct period_probe *p = cookie;
	if (w < 8 || j->nsizes < 8)
		return false;
	for (unsigned lg = 0; lg < 63; lg++) {
		if (p->first[lg] != w)
			continue;
		unsigned n = j->nsizes, i;
		for (i = 1; i < n; i++) {
			uint64_t v;
			if (!hw_read_u64(j->t, at + 8ull * i, &v) ||
			    v != unbiased_sz(j->sizes[i], lg))
				break;
		}
		/* With R = 1 or 2 the table is the size table itself, which
		   the data holds too (sz_index2size_tab): no proof of R.  */
		if (i == n && lg > 1) {
			p->lg = lg;
			return true;
		}
	}
	return false;
}

static void period_first(const struct je_state *j, struct period_probe *p)
{
	for (unsigned lg = 0; lg < 63; lg++)
		p->first[lg] = unbiased_sz(j->sizes[0], lg);
}

/* A double as a count: rounded, saturated at UINT64_MAX (NaN and
   infinity included), as jemalloc's prof_double_uint64_cast does.  */
uint64_t jp_to_u64(double d)
{
	double r = round(d);
	if (!(r < (double)UINT64_MAX))
		return UINT64_MAX;
	return r > 0 ? (uint64_t)r : 0;
}

static bool read_opt_bool(struct je_state *j, const char *suffix, bool *v)
{
	uint64_t a, size;
	uint8_t b;
	if (!je_lookup(j, suffix, &a, &size) || !hw_read(j->t, a, &b, 1))
		return false;
	*v = b != 0;
	return true;
}

bool jp_read_static(struct je_state *j, const char *name, uint64_t *a)
{
	uint64_t size;
	return j->have_mod && j->s->syms &&
	       hw_syms_lookup(j->s->syms, &j->mod, name, a, &size, NULL);
}

void jp_read_options(struct je_state *j, struct hw_profile *p,
		     bool *have_opt, bool *opt_prof)
{
	/* The options: from the symbols, else from the configuration the
	   process was started with.  */
	char conf[1024];
	read_conf(j, conf, sizeof conf);
	*have_opt = read_opt_bool(j, "je_opt_prof", opt_prof);
	if (!read_opt_bool(j, "je_opt_prof_accum", &p->accum))
		p->accum = conf_bool(conf, "prof_accum", false);
	if (j->era == JE_ERA_52)
		p->unbias = false;
	else if (!read_opt_bool(j, "je_opt_prof_unbias", &p->unbias))
		p->unbias = conf_bool(conf, "prof_unbias", true);
	if (!read_opt_bool(j, "je_prof_active_state", &p->active) &&
	    !read_opt_bool(j, "je_prof_active", &p->active))
		p->active = conf_bool(conf, "prof_active", true);
	uint64_t a, size, lg = 0;
	char v[32];
	struct period_probe pp = { 0 };
	if (je_lookup(j, "je_lg_prof_sample", &a, &size) &&
	    hw_read_u64(j->t, a, &lg) && lg < 63) {
		p->period_known = true;
		p->period_from = "lg_prof_sample";
	} else if (j->era == JE_ERA_53 && j->nsizes >= 8 &&
		   (period_first(j, &pp), je_data_find(j, unbias_table_match,
						      &pp))) {
		lg = pp.lg;
		p->period_known = true;
		p->period_from = "prof_unbiased_sz";
	} else if (conf_value(conf, "lg_prof_sample", v, sizeof v) &&
		   strtoull(v, NULL, 10) <= 62) {
		lg = strtoull(v, NULL, 10);
		p->period_known = true;
		p->period_from = "malloc_conf";
	} else {
		lg = 19;
		p->period_from = "assumed: jemalloc's default";
	}
	p->lg_sample = (unsigned)lg;
	p->period = (uint64_t)1 << lg;
}

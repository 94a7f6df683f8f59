/* pprof.c - a profile as pprof's profile.proto, gzipped: the file
 * `go tool pprof` and pprof's web UI read.
 *
 * The profile is already symbolized (report/stacks.c): every location
 * carries its address and its functions and source lines, inline frames
 * first, and every mapping says what its locations have, so that pprof
 * has nothing left to symbolize (it would need the target's files).
 *
 *   sample_type   inuse_objects/count, inuse_space/bytes, and with
 *                 prof_accum alloc_objects/count, alloc_space/bytes
 *   sample        one per stack that holds something: the allocator's
 *                 estimate of the true heap (the counts `est`, as the
 *                 text report ranks them), its locations innermost first
 *                 without the allocator's own frames on top
 *   location      one per return address, as jemalloc recorded it
 *   mapping       the target's executable mappings, the main program's
 *                 first (pprof names the profile after mapping 1)
 *
 * The messages are protobuf-c's, generated at build time from
 * pprof.proto; the bytes go through zlib (gzip framing) into the emitter
 * as they are packed, so the packed profile is never held whole.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "../../emit/emit.h"
#include "../../target/target.h"
#include "pprof.pb-c.h"
#include "prof.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__Label PbLabel;

/* ---- the string table -------------------------------------------------- */

/* Strings by index, deduplicated through an open-addressing table of
   indexes (0: empty slot; string 0 is "" and never looked up).  */
struct strtab {
	char **v;
	size_t n, cap;
	uint32_t *slot;
	size_t nslot;                 /* a power of two, > 2 * n */
	bool oom;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;         /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static bool strtab_grow_slots(struct strtab *t)
{
	size_t ns = t->nslot ? t->nslot * 2 : 1024;
	uint32_t *slot = calloc(ns, sizeof *slot);
	if (!slot)
		return false;
	for (size_t i = 1; i < t->n; i++) {
		size_t h = (size_t)hash_str(t->v[i]) & (ns - 1);
		while (slot[h])
			h = (h + 1) & (ns - 1);
		slot[h] = (uint32_t)i;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = ns;
	return true;
}

/* The index of s (NULL and "" are 0), added when new; 0 after running out
   of memory (t->oom says so).  */
static int64_t str_id(struct strtab *t, const char *s)
{
	if (!s || !*s || t->oom)
		return 0;
	if (2 * (t->n + 1) >= t->nslot && !strtab_grow_slots(t))
		goto oom;
	size_t h = (size_t)hash_str(s) & (t->nslot - 1);
	for (; t->slot[h]; h = (h + 1) & (t->nslot - 1))
		if (!strcmp(t->v[t->slot[h]], s))
			return t->slot[h];
	if (t->n == t->cap) {
		size_t nc = t->cap * 2;
		void *q = realloc(t->v, nc * sizeof *t->v);
		if (!q)
			goto oom;
		t->v = q;
		t->cap = nc;
	}
	char *copy = strdup(s);
	if (!copy)
		goto oom;
	t->v[t->n] = copy;
	t->slot[h] = (uint32_t)t->n;
	return (int64_t)t->n++;
oom:
	t->oom = true;
	return 0;
}

static bool strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof *t);
	t->cap = 256;
	t->v = malloc(t->cap * sizeof *t->v);
	if (!t->v || !(t->v[0] = strdup("")))
		return false;
	t->n = 1;
	return true;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; t->v && i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slot);
}

/* ---- functions ----------------------------------------------------------- */

/* One Function per distinct (name, file); ids are index + 1.  */
struct functab {
	PbFunction *v;
	size_t n, cap;
	uint32_t *slot;               /* index + 1; 0: empty */
	size_t nslot;
};

static uint64_t hash_fn(int64_t name, int64_t file)
{
	uint64_t h = (uint64_t)name * 0x9e3779b97f4a7c15ull;
	return (h ^ (uint64_t)file) * 0xff51afd7ed558ccdull;
}

static bool functab_grow_slots(struct functab *t)
{
	size_t ns = t->nslot ? t->nslot * 2 : 1024;
	uint32_t *slot = calloc(ns, sizeof *slot);
	if (!slot)
		return false;
	for (size_t i = 0; i < t->n; i++) {
		size_t h = (size_t)hash_fn(t->v[i].name, t->v[i].filename) &
			   (ns - 1);
		while (slot[h])
			h = (h + 1) & (ns - 1);
		slot[h] = (uint32_t)(i + 1);
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = ns;
	return true;
}

/* The id of the function (name, file), added when new; 0: out of memory. */
static uint64_t fn_id(struct functab *t, int64_t name, int64_t file)
{
	if (2 * (t->n + 1) >= t->nslot && !functab_grow_slots(t))
		return 0;
	size_t h = (size_t)hash_fn(name, file) & (t->nslot - 1);
	for (; t->slot[h]; h = (h + 1) & (t->nslot - 1)) {
		const PbFunction *f = &t->v[t->slot[h] - 1];
		if (f->name == name && f->filename == file)
			return f->id;
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		void *q = realloc(t->v, nc * sizeof *t->v);
		if (!q)
			return 0;
		t->v = q;
		t->cap = nc;
	}
	PbFunction *f = &t->v[t->n];
	perftools__profiles__function__init(f);
	f->id = t->n + 1;
	f->name = name;
	/* Frames come demangled; the linker's name is not kept apart.  */
	f->system_name = name;
	f->filename = file;
	t->slot[h] = (uint32_t)++t->n;
	return f->id;
}

/* ---- mappings -------------------------------------------------------- */

/* An executable mapping of the target, and what its locations have.  */
struct pp_map {
	uint64_t start, end, offset;
	const char *name;
	int32_t file;                 /* hw_target.files index, or -1 */
	bool main;                    /* the program's own file */
	size_t nlocs;
	bool all_functions, all_files, all_lines;
	uint64_t id;
};

/* The target's executable mappings in address order (regions are
   sorted), named by their file, or [vdso]; other anonymous code (a JIT's)
   is left out: its locations have no mapping.  */
static struct pp_map *collect_maps(struct hw_session *s, size_t *nout)
{
	struct hw_target *t = s->target;
	uint64_t vdso = 0, entry = 0;
	hw_auxv_get(t, 33 /* AT_SYSINFO_EHDR */, &vdso);
	hw_auxv_get(t, 9 /* AT_ENTRY */, &entry);
	struct pp_map *m = calloc(t->nregions + 1, sizeof *m);
	if (!m)
		return NULL;
	int32_t main_file = -1;
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (entry >= r->start && entry < r->end)
			main_file = r->file;
	}
	size_t n = 0;
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (!(r->prot & HW_PROT_X))
			continue;
		const struct hw_mapped_file *f =
			r->file >= 0 && (size_t)r->file < t->nfiles ?
			&t->files[r->file] : NULL;
		struct pp_map *p = &m[n];
		*p = (struct pp_map){ .start = r->start, .end = r->end,
				      .file = -1, .all_functions = true,
				      .all_files = true, .all_lines = true };
		if (f && f->path) {
			p->name = f->path;
			p->file = r->file;
			p->main = r->file == main_file;
			if (!f->absent && r->start >= f->start)
				p->offset = f->offset + (r->start - f->start);
		} else if (vdso && r->start == vdso) {
			p->name = "[vdso]";
		} else {
			continue;
		}
		n++;
	}
	*nout = n;
	return m;
}

static struct pp_map *map_of(struct pp_map *m, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && pc >= m[lo].start ? &m[lo] : NULL;
}

/* ---- gzip on the way out -------------------------------------------- */

/* protobuf-c packs into a ProtobufCBuffer a few bytes at a time: they
   are gathered, then deflated (gzip framing) into the emitter.  */
#define GZ_CHUNK (1u << 16)
struct gz_sink {
	ProtobufCBuffer base;         /* first: protobuf-c's view */
	struct hw_emitter *e;
	z_stream z;
	bool failed;
	size_t nin;
	unsigned char in[GZ_CHUNK], out[GZ_CHUNK];
};

static void gz_run(struct gz_sink *g, const unsigned char *data, size_t len,
		   int flush)
{
	g->z.next_in = (unsigned char *)data;
	g->z.avail_in = (uInt)len;
	for (;;) {
		g->z.next_out = g->out;
		g->z.avail_out = GZ_CHUNK;
		int rc = deflate(&g->z, flush);
		if (rc == Z_STREAM_ERROR || em_failed(g->e)) {
			g->failed = true;
			return;
		}
		em_verbatim(g->e, (const char *)g->out,
			    GZ_CHUNK - g->z.avail_out);
		/* Room left in out: deflate took all it could for now.  */
		if (flush == Z_FINISH ? rc == Z_STREAM_END :
					g->z.avail_out != 0)
			return;
	}
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gz_sink *g = (struct gz_sink *)b;
	while (len && !g->failed) {
		size_t k = GZ_CHUNK - g->nin;
		if (k > len)
			k = len;
		memcpy(g->in + g->nin, data, k);
		g->nin += k;
		data += k;
		len -= k;
		if (g->nin == GZ_CHUNK) {
			gz_run(g, g->in, g->nin, Z_NO_FLUSH);
			g->nin = 0;
		}
	}
}

/* Pack prof, gzipped, into e; false when zlib failed.  */
static bool write_gzipped(const PbProfile *prof, struct hw_emitter *e)
{
	struct gz_sink *g = calloc(1, sizeof *g);
	if (!g)
		return false;
	g->base.append = gz_append;
	g->e = e;
	/* 15 + 16: the largest window, with a gzip header and trailer.  */
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return false;
	}
	perftools__profiles__profile__pack_to_buffer(prof, &g->base);
	if (!g->failed)
		gz_run(g, g->in, g->nin, Z_FINISH);
	bool ok = !g->failed;
	deflateEnd(&g->z);
	free(g);
	return ok;
}

/* ---- the profile ----------------------------------------------------- */

struct pp {
	struct hw_session *s;
	const struct prof_stacks *st;
	const struct hw_profile *p;
	struct strtab str;
	struct functab fn;
	struct pp_map *maps;
	size_t nmaps;
	bool *used;                   /* per st->pcs: some sample holds it */
};

static size_t pc_index(const struct prof_stacks *st, uint64_t pc)
{
	size_t lo = 0, hi = st->npcs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->pcs[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Every site's pcs are there; npcs would mean a broken table.  */
	return lo < st->npcs && st->pcs[lo].pc == pc ? lo : st->npcs;
}

/* The first of site's pcs that is not the allocator's own: jemalloc's
   backtrace starts in its own code (prof_backtrace, the allocation path),
   which jeprof leaves out of every stack, and then may pass through
   entry points such as operator new, which text and collapsed output
   leave out too (prof_pcs_frames): a location goes when every frame of
   it is one.  */
static unsigned first_kept(const struct prof_stacks *st,
			   const struct hw_prof_site *site)
{
	const struct hw_profile *p = st->p;
	unsigned k = 0;
	while (k < site->npcs && p->code_high && site->pcs[k] >= p->code_low &&
	       site->pcs[k] < p->code_high)
		k++;
	while (k < site->npcs && prof_pc_is_allocation_entry(st, site->pcs[k]))
		k++;
	return k;
}

static int64_t clamp(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static size_t site_values(const struct hw_profile *p,
			  const struct hw_prof_site *site, int64_t *v)
{
	v[0] = clamp(site->est.curobjs);
	v[1] = clamp(site->est.curbytes);
	if (!p->accum)
		return 2;
	v[2] = clamp(site->est.accumobjs);
	v[3] = clamp(site->est.accumbytes);
	return 4;
}

static void add_comment(struct pp *pp, int64_t *comments, size_t *n,
			const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add_comment(struct pp *pp, int64_t *comments, size_t *n,
			const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	comments[(*n)++] = str_id(&pp->str, buf);
}

/* Everything the messages point to, freed together.  */
struct pp_mem {
	PbValueType types[4], period_type;
	PbValueType *type_ptrs[4];
	PbSample *samples;
	PbSample **sample_ptrs;
	uint64_t *loc_ids;
	int64_t *values;
	PbLocation *locs;
	PbLocation **loc_ptrs;
	PbLine *lines;
	PbLine **line_ptrs;
	PbFunction **fn_ptrs;
	PbLabel *labels;
	PbLabel **label_ptrs;
	PbMapping *maps;
	PbMapping **map_ptrs;
	int64_t comments[8];
};

static void pp_mem_free(struct pp_mem *m)
{
	free(m->samples);
	free(m->sample_ptrs);
	free(m->loc_ids);
	free(m->values);
	free(m->locs);
	free(m->loc_ptrs);
	free(m->lines);
	free(m->line_ptrs);
	free(m->fn_ptrs);
	free(m->labels);
	free(m->label_ptrs);
	free(m->maps);
	free(m->map_ptrs);
}

/* A thread's label value: its thread.prof.name, else "t" and its uid
   (prof.dump's tN).  */
static int64_t thread_label(struct pp *pp, uint64_t uid)
{
	const struct hw_profile *p = pp->p;
	size_t lo = 0, hi = p->nthreads;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->threads[mid].uid < uid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nthreads && p->threads[lo].uid == uid &&
	    p->threads[lo].name && *p->threads[lo].name)
		return str_id(&pp->str, p->threads[lo].name);
	char buf[32];
	snprintf(buf, sizeof buf, "t%" PRIu64, uid);
	return str_id(&pp->str, buf);
}

/* Samples: the sites that hold something, pcs from the first kept, one
   label "thread" per thread that allocated there (pprof -tagfocus
   thread=NAME); the values stay the stack's, as jeprof counts them.  */
static bool build_samples(struct pp *pp, struct pp_mem *m, size_t nvals,
			  size_t *nsamples)
{
	const struct hw_profile *p = pp->p;
	size_t nids = 0, nlabels = 0;
	for (size_t i = 0; i < p->nsites; i++) {
		nids += p->sites[i].npcs;
		nlabels += p->sites[i].nthreads;
	}
	m->samples = calloc(p->nsites + 1, sizeof *m->samples);
	m->sample_ptrs = calloc(p->nsites + 1, sizeof *m->sample_ptrs);
	m->loc_ids = calloc(nids + 1, sizeof *m->loc_ids);
	m->values = calloc(p->nsites * nvals + 1, sizeof *m->values);
	m->labels = calloc(nlabels + 1, sizeof *m->labels);
	m->label_ptrs = calloc(nlabels + 1, sizeof *m->label_ptrs);
	if (!m->samples || !m->sample_ptrs || !m->loc_ids || !m->values ||
	    !m->labels || !m->label_ptrs)
		return false;
	int64_t thread_key = str_id(&pp->str, "thread");
	size_t ns = 0, at = 0, nl = 0;
	for (size_t i = 0; i < p->nsites; i++) {
		const struct hw_prof_site *site = &p->sites[i];
		int64_t *v = m->values + ns * nvals;
		site_values(p, site, v);
		bool any = false;
		for (size_t k = 0; k < nvals; k++)
			any |= v[k] != 0;
		/* A stack whose objects were all freed (without prof_accum
		   it counts nothing): prof.dump leaves it out too.  */
		if (!any)
			continue;
		PbSample *smp = &m->samples[ns];
		perftools__profiles__sample__init(smp);
		smp->value = v;
		smp->n_value = nvals;
		smp->location_id = m->loc_ids + at;
		smp->label = m->label_ptrs + nl;
		for (size_t t = 0; t < site->nthreads; t++) {
			PbLabel *lb = &m->labels[nl];
			perftools__profiles__label__init(lb);
			lb->key = thread_key;
			lb->str = thread_label(pp, site->threads[t].uid);
			m->label_ptrs[nl++] = lb;
			smp->n_label++;
		}
		for (unsigned k = first_kept(pp->st, site); k < site->npcs; k++) {
			size_t x = pc_index(pp->st, site->pcs[k]);
			if (x == pp->st->npcs)
				continue;
			pp->used[x] = true;
			m->loc_ids[at++] = x + 1;
		}
		smp->n_location_id = (size_t)(m->loc_ids + at -
					      smp->location_id);
		m->sample_ptrs[ns++] = smp;
	}
	*nsamples = ns;
	return true;
}

/* Locations: each used pc with its frames as lines (innermost first);
   a frame without a function gives no line (pprof shows the address).
   Each location's mapping learns what its lines have.  */
static bool build_locations(struct pp *pp, struct pp_mem *m, size_t *nlocs)
{
	const struct prof_stacks *st = pp->st;
	m->locs = calloc(st->npcs + 1, sizeof *m->locs);
	m->loc_ptrs = calloc(st->npcs + 1, sizeof *m->loc_ptrs);
	m->lines = calloc(st->nframes + 1, sizeof *m->lines);
	m->line_ptrs = calloc(st->nframes + 1, sizeof *m->line_ptrs);
	if (!m->locs || !m->loc_ptrs || !m->lines || !m->line_ptrs)
		return false;
	size_t nl = 0;
	for (size_t i = 0; i < st->npcs; i++) {
		if (!pp->used[i])
			continue;
		const struct prof_pc *pc = &st->pcs[i];
		PbLocation *loc = &m->locs[nl];
		perftools__profiles__location__init(loc);
		loc->id = i + 1;
		loc->address = pc->pc;
		struct pp_map *map = map_of(pp->maps, pp->nmaps, pc->pc);
		loc->mapping_id = map ? map->id : 0;
		loc->line = m->line_ptrs + pc->first;
		bool files = true, lines = true;
		for (uint32_t k = 0; k < pc->n; k++) {
			const struct hw_source_frame *f = &st->frames[pc->first + k];
			if (!f->function)
				continue;
			int64_t name = str_id(&pp->str, f->function);
			int64_t file = str_id(&pp->str, f->file);
			uint64_t id = fn_id(&pp->fn, name, file);
			if (!id || pp->str.oom)
				return false;
			PbLine *ln = &m->lines[pc->first + loc->n_line];
			perftools__profiles__line__init(ln);
			ln->function_id = id;
			ln->line = f->line;
			ln->column = f->column;
			loc->line[loc->n_line++] = ln;
			files &= f->file != NULL;
			lines &= f->line != 0;
		}
		if (map) {
			map->nlocs++;
			map->all_functions &= loc->n_line > 0;
			map->all_files &= loc->n_line > 0 && files;
			map->all_lines &= loc->n_line > 0 && lines;
		}
		m->loc_ptrs[nl++] = loc;
	}
	*nlocs = nl;
	return true;
}

/* Mappings: the main program's first, then by address; the build id of
   those that hold locations (their modules are loaded already).  */
static bool build_mappings(struct pp *pp, struct pp_mem *m)
{
	m->maps = calloc(pp->nmaps + 1, sizeof *m->maps);
	m->map_ptrs = calloc(pp->nmaps + 1, sizeof *m->map_ptrs);
	if (!m->maps || !m->map_ptrs)
		return false;
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < pp->nmaps; i++) {
			struct pp_map *map = &pp->maps[i];
			if (map->main != (pass == 0))
				continue;
			PbMapping *pm = &m->maps[n];
			perftools__profiles__mapping__init(pm);
			map->id = pm->id = ++n;
			pm->memory_start = map->start;
			pm->memory_limit = map->end;
			pm->file_offset = map->offset;
			pm->filename = str_id(&pp->str, map->name);
			m->map_ptrs[n - 1] = pm;
		}
	return true;
}

/* Called after build_locations: what the locations found, and ids.  */
static void finish_mappings(struct pp *pp, struct pp_mem *m)
{
	for (size_t i = 0; i < pp->nmaps; i++) {
		const struct pp_map *map = &pp->maps[i];
		PbMapping *pm = m->map_ptrs[map->id - 1];
		/* Said only of what is known: a mapping no sample passes
		   through has nothing symbolized.  Line numbers come from
		   DWARF, which describes inlining too.  */
		bool some = map->nlocs > 0;
		pm->has_functions = some && map->all_functions;
		pm->has_filenames = some && map->all_files;
		pm->has_line_numbers = some && map->all_lines;
		pm->has_inline_frames = pm->has_line_numbers;
		struct hw_module mod;
		if (some && pp->s->syms &&
		    hw_syms_module_at(pp->s->syms, map->start, &mod) &&
		    mod.build_id_len > 0 && mod.build_id_len <= 64) {
			char hex[130];
			for (int k = 0; k < mod.build_id_len; k++)
				snprintf(hex + 2 * k, 3, "%02x", mod.build_id[k]);
			pm->build_id = str_id(&pp->str, hex);
		}
	}
}

static bool build(struct pp *pp, struct pp_mem *m, PbProfile *prof)
{
	const struct hw_profile *p = pp->p;
	static const char *const types[4][2] = {
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
	};
	size_t nvals = p->accum ? 4 : 2;
	for (size_t i = 0; i < nvals; i++) {
		perftools__profiles__value_type__init(&m->types[i]);
		m->types[i].type = str_id(&pp->str, types[i][0]);
		m->types[i].unit = str_id(&pp->str, types[i][1]);
		m->type_ptrs[i] = &m->types[i];
	}
	prof->sample_type = m->type_ptrs;
	prof->n_sample_type = nvals;
	/* pprof shows the last type unless told: the live bytes.  */
	prof->default_sample_type = m->types[1].type;
	perftools__profiles__value_type__init(&m->period_type);
	m->period_type.type = str_id(&pp->str, "space");
	m->period_type.unit = str_id(&pp->str, "bytes");
	prof->period_type = &m->period_type;
	prof->period = clamp(p->period);
	/* A core does not say when it was written (its file's time is
	   the copy's, not the crash's): time_nanos stays 0, unknown.  */
	prof->time_nanos = 0;

	size_t n = 0;
	add_comment(pp, m->comments, &n, "heapwalk prof: the heap profile %s "
		    "kept, read from the target%s%s", p->allocator ?
		    p->allocator : "the allocator", p->found_by ? " by " : "",
		    p->found_by ? p->found_by : "");
	/* "(lg_prof_sample 19, from malloc_conf)"; tcmalloc's period is
	   any number: "(from FLAGS_tcmalloc_sample_parameter)".  */
	char how[160];
	const char *from = p->period_from ? p->period_from :
			   p->period_known ? "" : "assumed";
	if (p->lg_sample < 64 && p->period == (uint64_t)1 << p->lg_sample)
		snprintf(how, sizeof how, "lg_prof_sample %u%s%s", p->lg_sample,
			 p->period_from ? ", from " : *from ? ", " : "", from);
	else
		snprintf(how, sizeof how, "%s%s", p->period_from ? "from " : "",
			 from);
	add_comment(pp, m->comments, &n, "one sample every %" PRIu64 " bytes "
		    "(%s); values estimate the whole heap", p->period, how);
	add_comment(pp, m->comments, &n, "sampled: %" PRIu64 " objects, %"
		    PRIu64 " bytes live", p->sampled_objs, p->sampled_bytes);
	if (p->unreadable)
		add_comment(pp, m->comments, &n, "%" PRIu64 " sampled records "
			    "could not be read: totals are partial",
			    p->unreadable);
	prof->comment = m->comments;
	prof->n_comment = n;

	size_t nsamples, nlocs;
	pp->maps = collect_maps(pp->s, &pp->nmaps);
	if (!pp->maps || !build_mappings(pp, m) ||
	    !build_samples(pp, m, nvals, &nsamples) ||
	    !build_locations(pp, m, &nlocs))
		return false;
	finish_mappings(pp, m);
	prof->sample = m->sample_ptrs;
	prof->n_sample = nsamples;
	prof->location = m->loc_ptrs;
	prof->n_location = nlocs;
	prof->mapping = m->map_ptrs;
	prof->n_mapping = pp->nmaps;
	m->fn_ptrs = calloc(pp->fn.n + 1, sizeof *m->fn_ptrs);
	if (!m->fn_ptrs)
		return false;
	for (size_t i = 0; i < pp->fn.n; i++)
		m->fn_ptrs[i] = &pp->fn.v[i];
	prof->function = m->fn_ptrs;
	prof->n_function = pp->fn.n;
	/* Last: every string is in by now.  */
	prof->string_table = pp->str.v;
	prof->n_string_table = pp->str.n;
	return !pp->str.oom;
}

bool prof_write_pprof(struct hw_session *s, const struct prof_stacks *st,
		      struct hw_emitter *e)
{
	struct pp pp = { .s = s, .st = st, .p = st->p };
	struct pp_mem m;
	memset(&m, 0, sizeof m);
	PbProfile prof;
	perftools__profiles__profile__init(&prof);
	pp.used = calloc(st->npcs + 1, sizeof *pp.used);
	bool ok = pp.used && strtab_init(&pp.str) && build(&pp, &m, &prof);
	if (ok) {
		em_verbatim_begin(e, "pprof");
		ok = write_gzipped(&prof, e);
		em_verbatim_end(e);
	}
	pp_mem_free(&m);
	free(pp.fn.v);
	free(pp.fn.slot);
	free(pp.maps);
	free(pp.used);
	strtab_free(&pp.str);
	return ok;
}

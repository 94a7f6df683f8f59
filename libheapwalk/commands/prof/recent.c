/* recent.c - `prof --recent`: jemalloc 5.3's records of its last
 * sampled allocations and their frees (alloc/profile.h, hw_prof_recent).
 *
 * As a table, oldest first: each record's sizes, whether the object is
 * still live (and where), who allocated it from which stack, and for a
 * freed one who freed it from which stack.  After a use-after-free or a
 * double free this is the question people ask of a core: who freed this,
 * and where from.
 *
 * With -o, the file is what the process's own
 * `experimental.prof_recent.alloc_dump` would have written: jemalloc's
 * compact JSON, byte for byte (its emitter writes strings unescaped; a
 * thread name that would make that invalid JSON is escaped here).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../emit/emit.h"
#include "prof.h"

#define SITE_FRAMES 3             /* frames named in a table cell */

/* ---- jemalloc's own JSON ------------------------------------------------ */

static void put(struct hw_emitter *e, const char *s)
{
	em_verbatim(e, s, strlen(s));
}

static void put_kv_u64(struct hw_emitter *e, const char *k, uint64_t v)
{
	char buf[64];
	snprintf(buf, sizeof buf, "\"%s\":%" PRIu64, k, v);
	put(e, buf);
}

static void put_str(struct hw_emitter *e, const char *s)
{
	put(e, "\"");
	for (const char *c = s; *c; c++) {
		unsigned char u = (unsigned char)*c;
		if (u == '"' || u == '\\') {
			char esc[3] = { '\\', (char)u, '\0' };
			put(e, esc);
		} else if (u < 0x20) {
			char esc[8];
			snprintf(esc, sizeof esc, "\\u%04x", u);
			put(e, esc);
		} else {
			em_verbatim(e, c, 1);
		}
	}
	put(e, "\"");
}

static void put_trace(struct hw_emitter *e, const char *k,
		      const struct hw_prof_event *ev)
{
	put(e, ",\"");
	put(e, k);
	put(e, "\":[");
	for (unsigned i = 0; i < ev->npcs; i++) {
		char buf[32];
		snprintf(buf, sizeof buf, "%s\"0x%" PRIx64 "\"", i ? "," : "",
			 ev->pcs[i]);
		put(e, buf);
	}
	put(e, "]");
}

static void put_event(struct hw_emitter *e, const char *who,
		      const struct hw_prof_event *ev)
{
	char k[32];
	snprintf(k, sizeof k, "%s_thread_uid", who);
	put(e, ",");
	put_kv_u64(e, k, ev->thread);
	if (ev->thread_name) {
		snprintf(k, sizeof k, ",\"%s_thread_name\":", who);
		put(e, k);
		put_str(e, ev->thread_name);
	}
	snprintf(k, sizeof k, "%s_time", who);
	put(e, ",");
	put_kv_u64(e, k, ev->time_ns);
	snprintf(k, sizeof k, "%s_trace", who);
	put_trace(e, k, ev);
}

void prof_write_recent_json(const struct hw_profile *p, struct hw_emitter *e)
{
	em_verbatim_begin(e, "recent");
	put(e, "{");
	put_kv_u64(e, "sample_interval", p->period);
	char buf[64];
	snprintf(buf, sizeof buf, ",\"recent_alloc_max\":%" PRId64,
		 p->recent_max_known ? p->recent_max : (int64_t)p->nrecent);
	put(e, buf);
	put(e, ",\"recent_alloc\":[");
	for (size_t i = 0; i < p->nrecent; i++) {
		const struct hw_prof_recent *r = &p->recent[i];
		put(e, i ? ",{" : "{");
		put_kv_u64(e, "size", r->size);
		put(e, ",");
		put_kv_u64(e, "usize", r->usize);
		put(e, r->released ? ",\"released\":true" :
				     ",\"released\":false");
		put_event(e, "alloc", &r->alloc);
		if (r->freed_known)
			put_event(e, "dalloc", &r->dalloc);
		put(e, "}");
	}
	put(e, "]}");
	em_verbatim_end(e);
}

/* ---- the table ---------------------------------------------------------- */

static const struct em_field RECENT_COLS[] = {
	{ .key = "size", .label = "size", .width = 8 },
	{ .key = "usize", .label = "usize", .width = 8 },
	{ .key = "released", .label = "state", .join = "  ", .width = -5,
	  .yes = "freed", .no = "live" },
	{ .key = "address", .label = "address", .width = -14, .none = "-" },
	{ .key = "alloc_thread", .label = "thread", .width = -12 },
	{ .key = "alloc_thread_uid", .only = EM_JSON_ONLY },
	{ .key = "alloc_time_ns", .only = EM_JSON_ONLY },
	{ .key = "freed_by", .label = "freed by", .width = -12, .none = "" },
	{ .key = "dalloc_thread_uid", .only = EM_JSON_ONLY },
	{ .key = "dalloc_time_ns", .only = EM_JSON_ONLY },
	{ .key = "allocated_at", .label = "allocated at", .width = -50 },
	{ .key = "freed_at", .label = "freed at", .join = "  ", .none = "" },
};
static const struct em_table RECENT_TABLE = {
	.key = "recent", .cols = RECENT_COLS,
	.ncols = sizeof RECENT_COLS / sizeof RECENT_COLS[0],
};

static const struct em_section S_RECENT = { .label_width = 11 };
static const struct em_field F_ALLOC = { .key = "allocator",
					 .label = "allocator:" };
static const struct em_field F_RECORDS = { .key = "records",
					   .label = "recent:",
					   .noun = "record" };
static const struct em_field F_LIVE = { .key = "live", .join = ", ",
					.post = " live" };
static const struct em_field F_MAX = { .key = "recent_alloc_max",
				       .join = " ", .pre = "(limit ",
				       .post = ")", .none = "unknown" };
static const struct em_field F_FROM = { .key = "found_by",
					.label = "read from:" };
static const struct em_field F_BROKEN = { .key = "broken",
					  .label = "broken:", .yes = "the "
					  "list did not close: the records "
					  "after the break are missing" };
static const struct em_field F_NOTE = { .key = "note", .label = "note:" };

static const char *thread_cell(const struct hw_prof_event *ev, char *buf,
			       size_t len)
{
	if (ev->thread_name)
		return ev->thread_name;
	snprintf(buf, len, "t%" PRIu64, ev->thread);
	return buf;
}

enum hw_status prof_write_recent(struct hw_session *s,
				 const struct prof_stacks *st,
				 struct hw_emitter *e)
{
	(void)s;
	const struct hw_profile *p = st->p;
	size_t live = 0;
	for (size_t i = 0; i < p->nrecent; i++)
		live += !p->recent[i].released;
	em_section_begin(e, &S_RECENT);
	em_kv(e, &F_ALLOC, ev_str(p->allocator));
	em_kv(e, &F_RECORDS, ev_u64(p->nrecent));
	em_kv(e, &F_LIVE, ev_u64(live));
	em_kv(e, &F_MAX, p->recent_max_known ? ev_i64(p->recent_max) :
					       ev_null());
	if (p->recent_from)
		em_kv(e, &F_FROM, ev_str(p->recent_from));
	else
		em_kv(e, &F_NOTE, ev_str(p->recent_why ? p->recent_why :
					 "no recent-allocation records"));
	if (p->recent_broken)
		em_kv(e, &F_BROKEN, ev_bool(true));
	em_section_end(e);
	em_table_begin(e, &RECENT_TABLE);
	for (size_t i = 0; i < p->nrecent; i++) {
		const struct hw_prof_recent *r = &p->recent[i];
		char at[512], freed_at[512], t1[32], t2[32];
		prof_pcs_name(st, r->alloc.pcs, r->alloc.npcs, SITE_FRAMES, at,
			      sizeof at);
		if (r->freed_known)
			prof_pcs_name(st, r->dalloc.pcs, r->dalloc.npcs,
				      SITE_FRAMES, freed_at, sizeof freed_at);
		bool fk = r->freed_known;
		struct em_val v[12] = {
			ev_u64(r->size), ev_u64(r->usize), ev_bool(r->released),
			r->ptr ? ev_addr(r->ptr) : ev_null(),
			ev_str(thread_cell(&r->alloc, t1, sizeof t1)),
			ev_u64(r->alloc.thread), ev_u64(r->alloc.time_ns),
			fk ? ev_str(thread_cell(&r->dalloc, t2, sizeof t2)) :
			     ev_null(),
			fk ? ev_u64(r->dalloc.thread) : ev_null(),
			fk ? ev_u64(r->dalloc.time_ns) : ev_null(),
			ev_str(at),
			fk ? ev_str(freed_at) : ev_null(),
		};
		em_row(e, v);
	}
	em_table_end(e);
	return HW_OK;
}

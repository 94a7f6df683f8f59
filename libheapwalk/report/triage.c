/* triage.c - a core's triage record.  Everything in it is what the
 * commands already say of the core (summary's totals and limits,
 * check's findings, leaks' kinds, the death), cut to what a fleet
 * compares: figures, kinds and names, never a list of blocks.  JSON is
 * one line; text is one line too, for a person scanning a fleet.
 *
 * Members are documented in doc/triage.schema.json; a member whose
 * value is unknown is null, never left out, so that queries over many
 * records see the same columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../alloc/alloc.h"
#include "../alloc/module.h"
#include "../analysis/death.h"
#include "../analysis/inflight.h"
#include "../analysis/reach.h"
#include "../arch/arch.h"
#include "../emit/emit.h"
#include "../target/target.h"
#include "args.h"
#include "crash.h"
#include "findkinds.h"
#include "identity.h"
#include "limits.h"
#include "loss.h"
#include "signature.h"
#include "totals.h"
#include "triage.h"

/* Frames of the crashing thread a record keeps.  */
#define TRIAGE_FRAMES 8

/* The record's members are JSON's alone: text has its one line.  */
static const struct em_section S_RECORD = { .only = EM_JSON_ONLY };

static void put(struct hw_emitter *e, const char *key, struct em_val v)
{
	const struct em_field f = { .key = key };
	em_kv(e, &f, v);
}

static struct em_val str_or_null(const char *s)
{
	return s && *s ? ev_str(s) : ev_null();
}

static void begin(struct hw_emitter *e, const struct em_section *s)
{
	em_section_begin(e, s);
}

static const struct em_section S_FILE = { .key = "file" };
static const struct em_section S_PROCESS = { .key = "process" };
static const struct em_section S_COREDUMP = { .key = "coredump" };
static const struct em_section S_ALLOCATOR = { .key = "allocator" };
static const struct em_section S_DETAIL = { .key = "detail" };
static const struct em_section S_INSTANCES = {
	.key = "instances", .flags = EM_S_LIST };
static const struct em_section S_USED = { .key = "used" };
static const struct em_section S_FREE = { .key = "free" };
static const struct em_section S_CLASSES = {
	.key = "top_classes", .flags = EM_S_LIST };
static const struct em_section S_LEAKS = { .key = "leaks" };
static const struct em_section S_FINDINGS = { .key = "findings" };
static const struct em_section S_KINDS = {
	.key = "kinds", .flags = EM_S_LIST };
static const struct em_section S_DEATH = { .key = "death" };
static const struct em_section S_FRAMES = {
	.key = "frames", .flags = EM_S_LIST };
static const struct em_section S_SIG_FRAMES = {
	.key = "signature_frames", .flags = EM_S_LIST };
static const struct em_section S_LACKS = {
	.key = "lacks", .flags = EM_S_LIST };

static void emit_identity(struct hw_session *s, const struct hw_identity *id,
			  struct hw_emitter *e)
{
	const struct hw_target *t = s->target;
	char when[40];
	begin(e, &S_FILE);
	put(e, "size", id->has_stat ? ev_u64(id->size) : ev_null());
	put(e, "mtime", id->has_stat
		? ev_str(hw_iso_time(id->mtime_usec, when, sizeof when))
		: ev_null());
	put(e, "packed", str_or_null(t->packed));
	put(e, "unpacked", t->packed ? ev_u64(t->unpacked) : ev_null());
	em_section_end(e);

	begin(e, &S_PROCESS);
	put(e, "pid", id->has_pid ? ev_i64(id->pid) : ev_null());
	put(e, "ppid", id->has_psinfo ? ev_i64(id->ppid) : ev_null());
	put(e, "uid", id->has_psinfo ? ev_u64(id->uid) : ev_null());
	put(e, "gid", id->has_psinfo ? ev_u64(id->gid) : ev_null());
	put(e, "comm", id->has_psinfo ? ev_str(id->fname) : ev_null());
	put(e, "args", id->has_psinfo ? ev_str(id->args) : ev_null());
	put(e, "exe", str_or_null(id->exe));
	put(e, "build_id", str_or_null(id->exe_build_id));
	em_section_end(e);

	if (id->coredump_name || id->cd_usec || id->cd_hostname[0]) {
		char cd_when[40];
		begin(e, &S_COREDUMP);
		put(e, "comm", id->coredump_name ? ev_str(id->cd_comm)
						 : ev_null());
		put(e, "uid", id->coredump_name ? ev_u64(id->cd_uid)
						: ev_null());
		put(e, "boot_id", id->coredump_name ? ev_str(id->cd_boot_id)
						    : ev_null());
		put(e, "pid", id->coredump_name ? ev_i64(id->cd_pid)
						: ev_null());
		put(e, "time", id->cd_usec
			? ev_str(hw_iso_time(id->cd_usec, cd_when,
					     sizeof cd_when))
			: ev_null());
		put(e, "hostname", str_or_null(id->cd_hostname));
		put(e, "exe", str_or_null(id->cd_exe));
		em_section_end(e);
	} else {
		put(e, "coredump", ev_null());
	}
	put(e, "time", id->time_from
		? ev_str(hw_iso_time(id->time_usec, when, sizeof when))
		: ev_null());
	put(e, "time_from", str_or_null(id->time_from));
	put(e, "arch", ev_str(t->arch->name));
	put(e, "threads", ev_u64(t->nthreads));
}

static void emit_allocator(struct hw_session *s, struct hw_emitter *e)
{
	if (!s->alloc) {
		/* Why: the open's reason ("the bump allocator of a static
		   program that never frees", "no allocator found").  */
		put(e, "allocator", ev_null());
		put(e, "allocator_absent", ev_str(s->err[0] ? s->err
						  : "no allocator found"));
	} else {
		put(e, "allocator_absent", ev_null());
		const struct hw_instance *in = &s->instances[s->selected];
		char build_id[129];
		begin(e, &S_ALLOCATOR);
		put(e, "name", ev_str(s->alloc->name));
		put(e, "version", ev_str(s->alloc->version(s->alloc_state)));
		put(e, "arch", ev_str(s->arch->name));
		put(e, "module", str_or_null(in->module));
		put(e, "build_id", str_or_null(hw_build_id_of(s, in->module,
							       build_id)));
		/* What summary's JSON says of this allocator alone: how its
		   roots were found, its own statistics.  */
		begin(e, &S_DETAIL);
		s->alloc->summary(s->alloc_state, e);
		em_section_end(e);
		em_section_end(e);
	}
	begin(e, &S_INSTANCES);
	for (size_t i = 0; i < s->ninstances; i++) {
		const struct hw_instance *in = &s->instances[i];
		em_item_begin(e);
		put(e, "allocator", ev_str(in->ops->name));
		put(e, "version", ev_str(in->version));
		put(e, "module", str_or_null(in->module));
		put(e, "held", ev_u64(in->held));
		put(e, "walked", ev_bool(s->alloc && i == s->selected));
		em_item_end(e);
	}
	em_section_end(e);
}

static int by_used_bytes(const void *a, const void *b)
{
	const struct hw_size_row *x = a, *y = b;
	if (x->c.used_bytes != y->c.used_bytes)
		return x->c.used_bytes > y->c.used_bytes ? -1 : 1;
	return x->min < y->min ? -1 : x->min > y->min;
}

/* The classes holding the most bytes in use, as `sizes` rows them.  */
static bool emit_classes(struct hw_session *s, const struct hw_totals *t,
			 unsigned top, struct hw_emitter *e)
{
	size_t n = 0;
	struct hw_size_row *rows = hw_size_rows(s, &t->sizes, false, &n);
	if (!rows)
		return false;
	qsort(rows, n, sizeof *rows, by_used_bytes);
	begin(e, &S_CLASSES);
	for (size_t i = 0; i < n && i < top && rows[i].c.used; i++) {
		em_item_begin(e);
		put(e, "min", ev_u64(rows[i].min));
		put(e, "max", ev_u64(rows[i].c.size));
		put(e, "used_count", ev_u64(rows[i].c.used));
		put(e, "used_bytes", ev_u64(rows[i].c.used_bytes));
		put(e, "free_count", ev_u64(rows[i].c.free));
		put(e, "free_bytes", ev_u64(rows[i].c.free_bytes));
		em_item_end(e);
	}
	em_section_end(e);
	free(rows);
	return true;
}

static void emit_leaks(const struct hw_totals *t, struct hw_emitter *e)
{
	if (!t->reach) {
		put(e, "leaks", ev_null());
		return;
	}
	begin(e, &S_LEAKS);
	hw_emit_leak_kinds(t, e);
	em_section_end(e);
}

static void emit_findings(const struct hw_kinds *k, struct hw_emitter *e)
{
	begin(e, &S_FINDINGS);
	put(e, "total", ev_u64(k->findings));
	put(e, "notes", ev_u64(k->notes));
	put(e, "other", ev_u64(k->other));
	begin(e, &S_KINDS);
	for (size_t i = 0; i < k->n; i++) {
		em_item_begin(e);
		put(e, "kind", ev_str(k->v[i].kind));
		put(e, "count", ev_u64(k->v[i].count));
		put(e, "note", ev_bool(k->v[i].note));
		em_item_end(e);
	}
	em_section_end(e);
	em_section_end(e);
}

static void emit_death(const struct hw_death *d, struct hw_emitter *e)
{
	if (!d->died) {
		put(e, "death", ev_null());
		return;
	}
	const char *why = NULL;
	begin(e, &S_DEATH);
	put(e, "signal", ev_i64(d->signo));
	put(e, "signal_name", str_or_null(hw_signal_name(d->signo)));
	put(e, "code", d->has_siginfo ? ev_i64(d->code) : ev_null());
	put(e, "code_name", d->has_siginfo
		? str_or_null(hw_sigcode_name(d->signo, d->code, &why))
		: ev_null());
	put(e, "fault_addr", d->has_addr ? ev_addr(d->addr) : ev_null());
	put(e, "tid", ev_i64(d->tid));
	put(e, "abort_message", str_or_null(d->abort_msg));
	put(e, "malloc_abort", ev_bool(d->abort_msg &&
				       hw_malloc_abort(d->abort_msg)));
	begin(e, &S_FRAMES);
	for (size_t i = 0; i < d->nframes && i < TRIAGE_FRAMES; i++) {
		const struct hw_death_frame *f = &d->frames[i];
		em_item_begin(e);
		put(e, "function", str_or_null(f->function));
		put(e, "offset", f->function[0] ? ev_u64(f->offset) : ev_null());
		put(e, "module", str_or_null(f->module));
		put(e, "module_offset", f->module ? ev_u64(f->module_offset)
						  : ev_null());
		em_item_end(e);
	}
	em_section_end(e);
	em_section_end(e);
}

/* The one line of text: the core, its allocator and heap, what leaked,
   the damage, the signature.  */
static void text_line(const struct hw_triage_opts *o, struct hw_session *s,
		      const struct hw_totals *t, const struct hw_kinds *k,
		      const struct hw_signature *sig, struct hw_emitter *e)
{
	char used[32], leaked[64] = "", b[32], heap[160] = "no allocator found";
	if (s->alloc) {
		const char *noun = s->alloc->block_noun ? "blocks" : "chunks";
		snprintf(heap, sizeof heap, "%s %s; %s in use in %llu %s%s",
			 s->alloc->name, s->alloc->version(s->alloc_state),
			 hw_human(used, sizeof used, t->used_bytes),
			 (unsigned long long)t->used, noun,
			 s->partial.places ? " (partial)" : "");
		if (t->reach)
			snprintf(leaked, sizeof leaked, "; leaked %s",
				 hw_human(b, sizeof b,
					  t->marked_bytes[BM_UNREACHED] +
					  t->marked_bytes[BM_INDIRECT]));
	}
	em_notef(e, "%s: %s%s; %llu finding%s; %s %s", o->core, heap, leaked,
		 (unsigned long long)k->findings, k->findings == 1 ? "" : "s",
		 sig->hash, sig->text);
}

static double seconds_since(const struct timespec *a)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - a->tv_sec) +
	       (double)(now.tv_nsec - a->tv_nsec) / 1e9;
}

static void emit_head(struct hw_emitter *e, const char *core)
{
	put(e, "schema", ev_u64(HW_TRIAGE_SCHEMA));
	put(e, "core", ev_str(core));
	put(e, "heapwalk", ev_str(HEAPWALK_VERSION));
}

static void emit_tail(struct hw_emitter *e, const struct timespec *start)
{
	char when[40];
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	put(e, "analysed_at", ev_str(hw_iso_time(
		(int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000, when,
		sizeof when)));
	const struct em_field f = { .key = "seconds", .json_prec = 3 };
	em_kv(e, &f, ev_dbl(start ? seconds_since(start) : 0.0));
}

enum hw_status hw_triage_args(struct hw_session *s, int argc,
			      char *const argv[], struct hw_triage_opts *o)
{
	*o = (struct hw_triage_opts){ .core = s->core_path };
	for (int i = 1; i < argc; i++) {
		const char *v;
		uint64_t n;
		if (!strcmp(argv[i], "--no-leaks")) {
			o->no_leaks = true;
		} else if ((v = hw_args_value(argc, argv, &i, "--top"))) {
			if (!hw_args_size(v, &n) || n == 0 || n > 1000)
				return hw_error(s, HW_USAGE, "triage: --top: "
						"'%s' is not a count from 1 to "
						"1000", v);
			o->top = (unsigned)n;
		} else {
			return hw_error(s, HW_USAGE, "triage: unknown argument "
					"'%s' (it takes --no-leaks and --top N; "
					"the cores go on the command line: "
					"heapwalk triage CORE...)", argv[i]);
		}
	}
	return HW_OK;
}

enum hw_status hw_triage_emit(struct hw_session *s,
			      const struct hw_triage_opts *o,
			      struct hw_emitter *e)
{
	struct hw_totals t;
	memset(&t, 0, sizeof t);
	const struct hw_reach *reach = NULL;
	if (s->alloc) {
		if (!o->no_leaks && !(reach = hw_reach_get(s)))
			return HW_BAD_TARGET;
		enum hw_status st = hw_totals_gather(s, &t, reach);
		if (st != HW_OK)
			return st;
		if (s->alloc->check)
			s->alloc->check(s->alloc_state);
		hw_inflight_settle(s);
	}
	struct hw_death d;
	if (!hw_death_get(s, &d)) {
		free(t.sizes.slots);
		free(t.arenas);
		hw_maps_acc_free(&t.maps);
		return HW_BAD_TARGET;
	}
	if (d.died)
		hw_count_malloc_abort(s, &d);
	struct hw_kinds kinds;
	hw_kinds_count(s, &kinds);
	struct hw_signature sig;
	hw_signature_make(s, &d, &kinds, &sig);
	struct hw_identity id;
	hw_identity_get(s, s->target->is_process ? NULL : s->core_path, &id);
	struct hw_limits lim;
	hw_target_limits(s, &lim);
	bool ok = true;

	em_doc_begin(e);
	em_section_begin(e, &S_RECORD);
	emit_head(e, o->core);
	put(e, "signature", ev_str(sig.hash));
	put(e, "signature_text", ev_str(sig.text));
	begin(e, &S_SIG_FRAMES);
	for (size_t i = 0; i < sig.nframes; i++)
		put(e, NULL, ev_str(sig.frames[i]));
	em_section_end(e);
	emit_identity(s, &id, e);
	emit_allocator(s, e);
	if (s->alloc) {
		put(e, "arenas", ev_u64(s->alloc->narenas(s->alloc_state)));
		begin(e, &S_USED);
		put(e, "count", ev_u64(t.used));
		put(e, "bytes", ev_u64(t.used_bytes));
		em_section_end(e);
		begin(e, &S_FREE);
		put(e, "count", ev_u64(t.free));
		put(e, "bytes", ev_u64(t.free_bytes));
		em_section_end(e);
		put(e, "overhead", ev_u64(t.overhead));
		put(e, "largest_free", ev_u64(t.largest_free));
		ok = emit_classes(s, &t, o->top ? o->top : 5, e);
	} else {
		static const char *const absent[] = {
			"arenas", "used", "free", "overhead", "largest_free",
			"top_classes" };
		for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
			put(e, absent[i], ev_null());
	}
	emit_leaks(&t, e);
	emit_findings(&kinds, e);
	emit_death(&d, e);
	put(e, "partial", ev_bool(s->partial.places > 0));
	put(e, "partial_reason", s->partial.places ? ev_str(s->partial.why)
						   : ev_null());
	put(e, "truncated", ev_bool(s->target->truncated));
	begin(e, &S_LACKS);
	for (size_t i = 0; i < lim.n; i++)
		put(e, NULL, ev_str(lim.v[i]));
	em_section_end(e);
	emit_tail(e, &s->opened_at);
	em_section_end(e);
	text_line(o, s, &t, &kinds, &sig, e);
	em_doc_end(e);

	hw_death_free(&d);
	free(t.sizes.slots);
	free(t.arenas);
	hw_maps_acc_free(&t.maps);
	if (!ok)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	return kinds.findings ? HW_CORRUPT : HW_OK;
}

void hw_triage_emit_error(struct hw_emitter *e, const char *core,
			  enum hw_status st, const char *why)
{
	em_doc_begin(e);
	em_section_begin(e, &S_RECORD);
	emit_head(e, core);
	put(e, "error", ev_str(why && *why ? why : "could not be read"));
	put(e, "status", ev_u64((uint64_t)st));
	emit_tail(e, NULL);
	em_section_end(e);
	em_notef(e, "%s: error: %s", core, why && *why ? why
						       : "could not be read");
	em_doc_end(e);
}

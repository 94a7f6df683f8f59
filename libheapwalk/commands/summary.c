/* summary.c - the summary command: the allocator, the target and what
 * it lacks, how the process died, the totals in use, free and overhead,
 * the writable memory, leaks (--leaks), findings and the top sizes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../alloc/module.h"
#include "../analysis/inflight.h"
#include "../analysis/maps.h"
#include "../analysis/reach.h"
#include "../arch/arch.h"
#include "../emit/emit.h"
#include "../report/crash.h"
#include "../report/loss.h"
#include "../report/limits.h"
#include "../report/partial.h"
#include "../report/totals.h"
#include "../sym/sym.h"
#include "../target/target.h"
#include "command.h"

/* "1 chunk", "2 chunks": the noun's plural is its singular + "s".  */
static const char *plural(uint64_t n, const char *noun, char *buf, size_t len)
{
	snprintf(buf, len, "%llu %s%s", (unsigned long long)n, noun,
		 n == 1 ? "" : "s");
	return buf;
}

/* A count of blocks: "1 chunk", "2 chunks", or with the allocator's
   own noun ("12 regions/extents").  */
static const char *blocks(uint64_t n, const char *noun, char *buf, size_t len)
{
	if (!noun)
		return plural(n, "chunk", buf, len);
	snprintf(buf, len, "%llu %s", (unsigned long long)n, noun);
	return buf;
}

/* How a live process was read: JSON's "live" object; text has its line
   under the target's.  Nothing for a core.  */
static const struct em_section S_LIVE = {
	.key = "live", .only = EM_JSON_ONLY };
static const struct em_field F_LIVE_PID = { .key = "pid" };
static const struct em_field F_LIVE_STOPPED = {
	.key = "stopped_ms", .json_prec = 3 };
static const struct em_field F_LIVE_SNAPSHOT = { .key = "snapshot_bytes" };
static const struct em_field F_LIVE_NO_STOP = { .key = "no_stop" };
static const struct em_field F_LIVE_UNSTOPPABLE = {
	.key = "unstoppable_threads" };

static void summary_live_json(const struct hw_session *s,
			      struct hw_emitter *e)
{
	const struct hw_live *l = s->target->live;
	if (!l)
		return;
	em_section_begin(e, &S_LIVE);
	em_kv(e, &F_LIVE_PID, ev_i64(l->pid));
	em_kv(e, &F_LIVE_STOPPED, ev_dbl(l->stopped_ms));
	em_kv(e, &F_LIVE_SNAPSHOT, ev_u64(l->snapshot_bytes));
	em_kv(e, &F_LIVE_NO_STOP, ev_bool(l->no_stop));
	em_kv(e, &F_LIVE_UNSTOPPABLE, ev_u64(l->unstoppable));
	em_section_end(e);
}

static void summary_live_text(const struct hw_session *s,
			      struct hw_emitter *e)
{
	const struct hw_live *l = s->target->live;
	char b[32];
	if (l->no_stop)
		em_notef(e, "%-24s pid %d, read while it ran (--no-stop): the "
			 "view may be torn; each thread was stopped alone for "
			 "its registers, at most %.3f ms", "live:", l->pid,
			 l->stopped_ms);
	else
		em_notef(e, "%-24s pid %d, stopped %.3f ms while %s of its "
			 "writable memory were copied, then let go", "live:",
			 l->pid, l->stopped_ms,
			 hw_human(b, sizeof b, l->snapshot_bytes));
}

/* A live process stopped while a thread was inside the allocator:
   "in flight: thread 2 (tid 4712) in free(): ...", JSON "in_flight"
   (null when none; absent for a core).  */
static const struct em_field F_IN_FLIGHT = {
	.key = "in_flight", .label = "in flight:" };

static void summary_in_flight(struct hw_session *s, struct hw_emitter *e)
{
	if (!s->target->live && !s->target->is_process)
		return;
	struct hw_inflight inf;
	hw_inflight_get(s, &inf);
	if (!inf.n) {
		em_kv(e, &F_IN_FLIGHT, ev_only(ev_null(), EM_JSON_ONLY));
		return;
	}
	char who[400], line[600];
	hw_inflight_text(s, &inf, who, sizeof who);
	snprintf(line, sizeof line, "%s at the stop: the totals may be off by "
		 "its operation, and check does not count what it half did",
		 who);
	em_kv(e, &F_IN_FLIGHT, ev_str(line));
}

/* summary: "writable memory:  1.6 GiB in 57 mappings, 97.5% the
   allocator's", JSON "writable":{"bytes","mappings","allocator"}.  */
static const struct em_section S_SUM_WRITABLE = {
	.key = "writable", .title = "writable memory:", .flags = EM_S_LINE };
static const struct em_field F_SUM_BYTES = {
	.key = "bytes", .width = 16, .form = EM_T_HUMAN };
static const struct em_field F_SUM_MAPPINGS = {
	.key = "mappings", .join = " in ", .noun = "mapping" };
static const struct em_field F_SUM_ALLOC = {
	.key = "allocator", .only = EM_JSON_ONLY };
static const struct em_field F_SUM_TAIL = { .join = "", .only = EM_TEXT_ONLY };

static void emit_maps_line(struct hw_session *s, struct hw_emitter *e,
		       struct hw_maps_acc *acc)
{
	struct hw_maps m;
	if (!hw_maps_build(s, acc, &m))
		return;
	char tail[160];
	snprintf(tail, sizeof tail, ", %.1f%% the allocator's (heapwalk maps)",
		 m.writable ? 100.0 * (double)m.allocator / (double)m.writable
			    : 0.0);
	em_section_begin(e, &S_SUM_WRITABLE);
	em_kv(e, &F_SUM_BYTES, ev_u64(m.writable));
	em_kv(e, &F_SUM_MAPPINGS, ev_u64(m.nmaps));
	em_kv(e, &F_SUM_ALLOC, ev_u64(m.allocator));
	em_kv(e, &F_SUM_TAIL, ev_str(tail));
	em_section_end(e);
	hw_maps_free(&m);
}

/* ---- summary ----------------------------------------------------------- */

/* summary's lines: labels padded to 24 columns.  Where the two forms
   order their members differently, a member appears twice, once for each
   form (EM_TEXT_ONLY / EM_JSON_ONLY).  */
static const struct em_section SUMMARY_LAYOUT = { .label_width = 24 };

static const struct em_field F_ALLOCATOR = {
	.key = "allocator", .label = "allocator:" };
static const struct em_field F_VERSION = { .key = "version" };
static const struct em_field F_ARCH = {
	.key = "arch", .join = " (", .post = ")" };

/* Every allocator instance found, the walked one marked; --allocator N
   picks another.  Text: "1: ptmalloc 2.36 (x86_64) /lib/libc.so.6, holds
   1.7 MiB [walked]".  */
static const struct em_section S_INSTANCES = {
	.key = "instances", .title = "instances:", .flags = EM_S_LIST };
static const struct em_field F_INST_INDEX = { .key = "index", .post = ":" };
static const struct em_field F_INST_ALLOCATOR = { .key = "allocator" };
static const struct em_field F_INST_MODULE = { .key = "module" };
static const struct em_field F_INST_HELD = {
	.key = "held", .join = ", holds ", .form = EM_T_HUMAN };
static const struct em_field F_INST_SELECTED = {
	.key = "selected", .join = "", .yes = " [walked]", .no = "" };

static void summary_instances(const struct hw_session *s, struct hw_emitter *e)
{
	em_section_begin(e, &S_INSTANCES);
	for (size_t i = 0; i < s->ninstances; i++) {
		const struct hw_instance *in = &s->instances[i];
		em_item_begin(e);
		em_kv(e, &F_INST_INDEX, ev_u64(i + 1));
		em_kv(e, &F_INST_ALLOCATOR, ev_str(in->ops->name));
		em_kv(e, &F_VERSION, ev_str(in->version));
		em_kv(e, &F_ARCH, ev_str(in->arch->name));
		em_kv(e, &F_INST_MODULE, ev_text(ev_str(in->module),
						 in->module[0] ? NULL : "(no file)"));
		em_kv(e, &F_INST_HELD, ev_u64(in->held));
		em_kv(e, &F_INST_SELECTED, ev_bool(i == s->selected));
		em_item_end(e);
	}
	em_section_end(e);
}

/* "target: /abs/core (core of /path/prog)", and whether it is cut (JSON
   says "truncated" further down).  */
static const struct em_field F_TARGET = {
	.label = "target:", .only = EM_TEXT_ONLY };
static const struct em_field F_TARGET_PACKED = {
	.join = " (", .post = ")", .only = EM_TEXT_ONLY };
static const struct em_field F_TARGET_EXE = {
	.join = " (core of ", .post = ")", .only = EM_TEXT_ONLY };
static const struct em_field F_TARGET_PROCESS_EXE = {
	.join = " (", .post = ")", .only = EM_TEXT_ONLY };
static const struct em_field F_TARGET_CUT = {
	.join = "", .yes = " (truncated: some memory is missing)", .no = "",
	.only = EM_TEXT_ONLY };

static void summary_target(const struct hw_session *s, struct hw_emitter *e)
{
	const struct hw_target *t = s->target;
	if (t->live) {
		char pid[32];
		snprintf(pid, sizeof pid, "pid %d", t->live->pid);
		em_kv(e, &F_TARGET, ev_str(pid));
		em_kv(e, &F_TARGET_PROCESS_EXE, ev_str(t->exe ? t->exe : "?"));
		summary_live_text(s, e);
		return;
	}
	if (t->is_process) {   /* a debugger's live process */
		em_kv(e, &F_TARGET, ev_str(t->path));
		em_kv(e, &F_TARGET_PROCESS_EXE, ev_str(t->exe ? t->exe : "?"));
		return;
	}
	const char *path = s->core_path ? s->core_path : t->path;
	char *abs = path ? realpath(path, NULL) : NULL;
	const char *exe = s->exe ? s->exe : t->exe;
	em_kv(e, &F_TARGET, ev_str(abs ? abs : path ? path : "?"));
	if (t->packed) {   /* "(zstd, unpacked 1.2 GiB)" */
		char size[32], packed[64];
		snprintf(packed, sizeof packed, "%s, unpacked %s", t->packed,
			 hw_human(size, sizeof size, t->unpacked));
		em_kv(e, &F_TARGET_PACKED, ev_str(packed));
	}
	em_kv(e, &F_TARGET_EXE, exe ? ev_str(exe) : ev_absent());
	em_kv(e, &F_TARGET_CUT, ev_bool(t->truncated));
	free(abs);
}

/* What the core lacks: text near the top, JSON's "target_limits" near
   the end.  */
static const struct em_section S_CORE_LACKS = {
	.title = "core lacks:", .flags = EM_S_LIST, .only = EM_TEXT_ONLY };
static const struct em_section S_PROCESS_LACKS = {
	.title = "target lacks:", .flags = EM_S_LIST, .only = EM_TEXT_ONLY };
static const struct em_section S_TARGET_LIMITS = {
	.key = "target_limits", .flags = EM_S_LIST, .only = EM_JSON_ONLY };
static const struct em_field F_ELEMENT = { 0 };

static void emit_strings(struct hw_emitter *e, const struct em_section *list,
			 const char *const *v, size_t n)
{
	em_section_begin(e, list);
	for (size_t i = 0; i < n; i++)
		em_kv(e, &F_ELEMENT, ev_str(v[i]));
	em_section_end(e);
}

static const struct em_field F_THREADS_TEXT = {
	.label = "threads:", .only = EM_TEXT_ONLY };
static const struct em_field F_ARENAS = { .key = "arenas", .label = "arenas:" };
static const struct em_field F_THREADS_JSON = {
	.key = "threads", .only = EM_JSON_ONLY };

/* "in use:   12 chunks   1.5 MiB", JSON "used":{"count":12,"bytes":N}.  */
static const struct em_section S_USED = {
	.key = "used", .title = "in use:", .flags = EM_S_LINE };
static const struct em_section S_FREE = {
	.key = "free", .title = "free:", .flags = EM_S_LINE };
static const struct em_field F_BLOCK_COUNT = { .key = "count", .width = 19 };
static const struct em_field F_BLOCK_BYTES = {
	.key = "bytes", .width = 12, .form = EM_T_HUMAN };
/* The end of a line that text alone has ("  (partial)").  */
static const struct em_field F_TEXT_TAIL = { .join = "", .only = EM_TEXT_ONLY };
static const struct em_field F_OVERHEAD = {
	.key = "overhead", .label = "overhead:", .width = 32,
	.form = EM_T_HUMAN };
static const struct em_field F_LARGEST_FREE = {
	.key = "largest_free", .only = EM_JSON_ONLY };
/* summary --leaks: what `leaks` counts (definite and indirect are the
   leaks; possible apart); null without --leaks, not zero.  */
static const struct em_field F_LEAKS = { .key = "leaks", .only = EM_JSON_ONLY };
static const struct em_field F_LEAKS_TEXT = {
	.label = "leaks:", .width = 32, .form = EM_T_HUMAN,
	.only = EM_TEXT_ONLY };
static const struct em_field F_COUNT = { .key = "count" };
static const struct em_field F_BYTES = { .key = "bytes" };

static void summary_leaks(const struct hw_totals *t, struct hw_emitter *e,
			  const char *noun)
{
	if (!t->reach) {
		em_kv(e, &F_LEAKS, ev_null());
		return;
	}
	static const struct em_section S_LEAKS = {
		.key = "leaks", .only = EM_JSON_ONLY };
	uint64_t n = t->marked[BM_UNREACHED] + t->marked[BM_INDIRECT];
	uint64_t bytes = t->marked_bytes[BM_UNREACHED] +
			 t->marked_bytes[BM_INDIRECT];
	em_section_begin(e, &S_LEAKS);
	em_kv(e, &F_COUNT, ev_u64(n));
	em_kv(e, &F_BYTES, ev_u64(bytes));
	hw_emit_leak_kinds(t, e);
	em_section_end(e);
	char tail[240], h[32], unknown[80] = "";
	uint64_t np = t->marked[BM_POSSIBLE], nu = t->marked[HW_KIND_UNKNOWN];
	/* (Only where damage made some: the line is as it was elsewhere.)  */
	if (nu)
		snprintf(unknown, sizeof unknown, "; %llu %s%s lost or free "
			 "(unknown)", (unsigned long long)nu, noun,
			 nu == 1 ? "" : "s");
	snprintf(tail, sizeof tail, "  in %llu %s%s (%llu definite, %llu "
		 "indirect); possibly lost %s in %llu %s%s%s",
		 (unsigned long long)n, noun, n == 1 ? "" : "s",
		 (unsigned long long)t->marked[BM_UNREACHED],
		 (unsigned long long)t->marked[BM_INDIRECT],
		 hw_human(h, sizeof h, t->marked_bytes[BM_POSSIBLE]),
		 (unsigned long long)np, noun, np == 1 ? "" : "s", unknown);
	em_kv(e, &F_LEAKS_TEXT, ev_u64(bytes));
	em_kv(e, &F_TEXT_TAIL, ev_str(tail));
}
static const struct em_field F_FINDINGS = {
	.key = "findings", .label = "findings:" };
static const struct em_field F_FINDINGS_HINT = {
	.join = "", .yes = " (see 'heapwalk check')", .no = "",
	.only = EM_TEXT_ONLY };
static const struct em_field F_TRUNCATED = {
	.key = "truncated", .only = EM_JSON_ONLY };

/* The exact sizes holding the most memory in use (text: `sizes` has
   them all, by class or --exact, for both forms).  */
static const struct em_field TOP_COLS[] = {
	{ .label = "size", .join = "  ", .width = 10 },
	{ .label = "count", .width = 10 },
	{ .label = "bytes", .width = 12, .form = EM_T_HUMAN },
};
static const struct em_table TOP_TABLE = {
	.title = "top sizes in use:", .cols = TOP_COLS, .ncols = 3,
	.only = EM_TEXT_ONLY };

static void summary_top_classes(const struct hw_totals *t, struct hw_emitter *e)
{
	struct hw_size_class top[10];
	size_t ntop = 0;
	for (size_t i = 0; i < t->sizes.n; i++) {
		struct hw_size_class sc = t->sizes.slots[i];
		size_t j = ntop < 10 ? ntop++ : 10;
		while (j > 0 && top[j - 1].used_bytes < sc.used_bytes) {
			if (j < 10)
				top[j] = top[j - 1];
			j--;
		}
		if (j < 10)
			top[j] = sc;
	}
	em_table_begin(e, &TOP_TABLE);
	for (size_t i = 0; i < ntop && top[i].used; i++) {
		const struct em_val row[] = { ev_u64(top[i].size),
					      ev_u64(top[i].used),
					      ev_u64(top[i].used_bytes) };
		em_row(e, row);
	}
	em_table_end(e);
}

static enum hw_status summary_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	struct hw_totals t;
	const struct hw_reach *reach = NULL;
	for (int i = 1; i < c->argc; i++)
		if (strcmp(c->argv[i], "--leaks") != 0)
			return hw_error(s, HW_USAGE, "summary: unknown argument "
					"'%s' (--leaks adds the leak totals)",
					c->argv[i]);
	if (c->argc > 1 && !(reach = hw_reach_get(s)))
		return HW_BAD_TARGET;
	enum hw_status st = hw_totals_gather(s, &t, reach);
	if (st != HW_OK)
		return st;
	struct hw_limits lim;
	hw_target_limits(s, &lim);
	/* ptmalloc counts chunks; jemalloc names its blocks itself.  */
	const char *noun = s->alloc->block_noun;
	const char *part = s->partial.places ? "  (partial)" : "";
	char a[32], b[32], n1[48], n2[48], free_tail[160];
	/* A reserve kept as a heap's top chunk is counted free (totals.c);
	   other reserves are pages outside the blocks, left out.  Top is
	   summed over the arenas, so it may exceed the largest single free
	   chunk: the line says so.  */
	bool has_top = hw_alloc_has_reserve(s->alloc, HW_RESERVE_TOP);
	snprintf(free_tail, sizeof free_tail, "  (%s%s%slargest %s %s)%s",
		 has_top ? "of which the arenas' top chunks " : "",
		 has_top ? hw_human(a, sizeof a, t.top_bytes) : "",
		 has_top ? "; " : "", noun ? "block" : "chunk",
		 hw_human(b, sizeof b, t.largest_free), part);

	em_doc_begin(e);
	em_section_begin(e, &SUMMARY_LAYOUT);
	em_kv(e, &F_ALLOCATOR, ev_str(s->alloc->name));
	em_kv(e, &F_VERSION, ev_str(s->alloc->version(s->alloc_state)));
	em_kv(e, &F_ARCH, ev_str(s->arch->name));
	summary_instances(s, e);
	summary_target(s, e);
	summary_in_flight(s, e);
	emit_strings(e, s->target->live || s->target->is_process
			    ? &S_PROCESS_LACKS : &S_CORE_LACKS,
		     lim.v, lim.n);
	if (!hw_emit_death(s, e)) {
		em_section_end(e);
		em_doc_end(e);
		free(t.sizes.slots);
		free(t.arenas);
		hw_maps_acc_free(&t.maps);
		return HW_BAD_TARGET;
	}
	em_kv(e, &F_THREADS_TEXT, ev_u64(s->target->nthreads));
	em_kv(e, &F_ARENAS, ev_u64(s->alloc->narenas(s->alloc_state)));
	em_kv(e, &F_THREADS_JSON, ev_u64(s->target->nthreads));
	summary_live_json(s, e);

	em_section_begin(e, &S_USED);
	em_kv(e, &F_BLOCK_COUNT, ev_text(ev_u64(t.used),
					 blocks(t.used, noun, n1, sizeof n1)));
	em_kv(e, &F_BLOCK_BYTES, ev_u64(t.used_bytes));
	em_kv(e, &F_TEXT_TAIL, ev_str(part));
	em_section_end(e);
	em_section_begin(e, &S_FREE);
	em_kv(e, &F_BLOCK_COUNT, ev_text(ev_u64(t.free),
					 blocks(t.free, noun, n2, sizeof n2)));
	em_kv(e, &F_BLOCK_BYTES, ev_u64(t.free_bytes));
	em_kv(e, &F_TEXT_TAIL, ev_str(free_tail));
	em_section_end(e);
	em_kv(e, &F_OVERHEAD, ev_u64(t.overhead));
	em_kv(e, &F_TEXT_TAIL, ev_str(part));
	em_kv(e, &F_LARGEST_FREE, ev_u64(t.largest_free));
	emit_maps_line(s, e, &t.maps);
	summary_leaks(&t, e, noun ? "block" : "chunk");
	hw_emit_partial_line(s, e);
	em_kv(e, &F_FINDINGS, ev_u64(s->findings_total));
	em_kv(e, &F_FINDINGS_HINT, ev_bool(s->findings_total > 0));
	em_kv(e, &F_TRUNCATED, ev_bool(s->target->truncated));
	hw_emit_partial_members(s, e);
	emit_strings(e, &S_TARGET_LIMITS, lim.v, lim.n);
	s->alloc->summary(s->alloc_state, e);
	summary_top_classes(&t, e);
	em_section_end(e);
	em_doc_end(e);
	free(t.sizes.slots);
	free(t.arenas);
	return HW_OK;
}

static const struct hw_command_opt summary_opts[] = {
	{ "--leaks", "count the leaks too (runs leaks' reachability scan)" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_summary = {
	.name = "summary", .run = summary_run, .args = "[--leaks]",
	.summary = "allocator, arenas, totals in use / free / overhead",
	.opts = summary_opts, .example = "core summary --leaks",
	.needs = HW_NEED_WALK,
};

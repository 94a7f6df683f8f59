/* crash.c - the "death" of summary and check: how the process died.
 *
 * Text, under summary's 24-column labels:
 *
 *   died of:                 SIGABRT: sent by tgkill() (...) (SI_TKILL), by this process
 *   crashing thread:         thread 1 (tid 2319)
 *   abort message:           free(): double free detected in tcache 2
 *   chunk freed twice:       0x000055b9e3fd02a0 (40 bytes, free in tcache)
 *   backtrace of the crashing thread (tid 2319):
 *     #0  0x00007fcf16b15eec  __pthread_kill_implementation+0x10c  (libc.so.6)
 *     #1  0x00007fcf16ac6fb2  ??  (libc.so.6+0x3bfb2)
 *
 * JSON: "death": {signal, signal_name, code, code_name, cause, addr,
 * sender_pid, sender_uid, thread, tid, abort_message, abort_message_addr,
 * abort_message_found, chunks_role, chunks: [blocks], more_chunks,
 * unwound, backtrace: [{frame, pc, function, offset, module,
 * module_offset}]}, or null.  Strings from the core (the message, symbol
 * and module names) are shown in text with their control bytes as \xNN.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/death.h"
#include "../emit/emit.h"
#include "../target/target.h"
#include "crash.h"

static const struct em_field F_DEATH_NULL = {
	.key = "death", .only = EM_JSON_ONLY };
static const struct em_section S_DEATH = { .key = "death" };

static const struct em_field F_DIED = { .label = "died of:",
					.only = EM_TEXT_ONLY };
static const struct em_field F_SIGNAL = { .key = "signal",
					  .only = EM_JSON_ONLY };
static const struct em_field F_SIGNAL_NAME = { .key = "signal_name",
					       .only = EM_JSON_ONLY };
static const struct em_field F_CODE = { .key = "code", .only = EM_JSON_ONLY };
static const struct em_field F_CODE_NAME = { .key = "code_name",
					     .only = EM_JSON_ONLY };
static const struct em_field F_CAUSE = { .key = "cause",
					 .only = EM_JSON_ONLY };
static const struct em_field F_ADDR = { .key = "addr", .only = EM_JSON_ONLY };
static const struct em_field F_SENDER_PID = { .key = "sender_pid",
					      .only = EM_JSON_ONLY };
static const struct em_field F_SENDER_UID = { .key = "sender_uid",
					      .only = EM_JSON_ONLY };
static const struct em_field F_THREAD = {
	.key = "thread", .label = "crashing thread:", .pre = "thread " };
static const struct em_field F_TID = { .key = "tid", .join = " (tid ",
				       .post = ")" };
static const struct em_field F_MSG = { .key = "abort_message",
				       .label = "abort message:" };
static const struct em_field F_MSG_ADDR = { .key = "abort_message_addr",
					    .only = EM_JSON_ONLY };
static const struct em_field F_MSG_FOUND = {
	.key = "abort_message_found", .only = EM_JSON_ONLY };
static const struct em_field F_MSG_SCAN = {
	.join = " ", .only = EM_TEXT_ONLY };
static const struct em_field F_ROLE = { .key = "chunks_role",
					.only = EM_JSON_ONLY };
static const struct em_field F_MORE = { .key = "more_chunks",
					.only = EM_JSON_ONLY };
static const struct em_field F_UNWOUND = { .key = "unwound",
					   .only = EM_JSON_ONLY };

/* The blocks involved: one line each, the role the title.  */
static const struct em_field F_CH_ADDR = { .key = "addr", .form = EM_T_HEX0,
					   .digits = 16 };
static const struct em_field F_CH_SIZE = { .key = "size", .join = " (",
					   .noun = "byte" };
static const struct em_field F_CH_STATE = { .key = "state", .join = ", " };
static const struct em_field F_CH_WHERE = { .key = "where", .join = " in ",
					    .post = ")" };
static const struct em_field F_CH_ARENA = { .key = "arena",
					    .only = EM_JSON_ONLY };
static const struct em_field F_CH_CHUNK = { .key = "chunk",
					    .only = EM_JSON_ONLY };
static const struct em_field F_CH_CHUNK_SIZE = { .key = "chunk_size",
						 .only = EM_JSON_ONLY };

/* The backtrace: "  #0  0x00007f...  function+0x1c  (libc.so.6)".  */
static const struct em_field FRAME_COLS[] = {
	{ .key = "frame", .pre = "  #", .width = -2 },
	{ .key = "pc", .join = " ", .form = EM_T_HEX0, .digits = 16 },
	{ .key = "function", .join = "  ", .none = "??" },
	{ .key = "offset", .only = EM_JSON_ONLY },
	{ .key = "module", .join = "  " },
	{ .key = "module_offset", .only = EM_JSON_ONLY },
};

static const char *const chunks_role[] = {
	[HW_DEATH_FREED_TWICE] = "freed_twice",
	[HW_DEATH_NAMED] = "named_by_message",
	[HW_DEATH_FAULT] = "holds_fault_address",
	[HW_DEATH_BEING_FREED] = "being_freed",
};

/* s for a text line: control bytes as \xNN (text only; JSON escapes
   them itself).  Returns out.  */
static const char *printable(const char *s, char *out, size_t len)
{
	size_t n = 0;
	for (; *s && n + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(out + n, len - n, "\\x%02x", c);
		else
			out[n++] = (char)c;
	}
	out[n] = '\0';
	return out;
}

/* "SIGSEGV: address not mapped (SEGV_MAPERR) at 0x1000dead8".  */
static void signal_line(const struct hw_target *t, const struct hw_death *d,
			char *buf, size_t len)
{
	const char *name = hw_signal_name(d->signo), *why = NULL;
	const char *code = d->has_siginfo
			   ? hw_sigcode_name(d->signo, d->code, &why) : NULL;
	int n = name ? snprintf(buf, len, "%s", name)
		     : snprintf(buf, len, "signal %d", d->signo);
	if (n < 0 || (size_t)n >= len)
		return;
	size_t k = (size_t)n;
	if (why)
		k += (size_t)snprintf(buf + k, len - k, ": %s (%s)", why, code);
	else if (d->has_siginfo && k < len)
		k += (size_t)snprintf(buf + k, len - k, " (si_code %d)",
				      d->code);
	if (d->has_addr && k < len)
		k += (size_t)snprintf(buf + k, len - k, " at 0x%" PRIx64,
				      d->addr);
	else if (!d->has_siginfo && k < len)
		k += (size_t)snprintf(buf + k, len - k, " (the core has no "
				      "NT_SIGINFO: its cause and address "
				      "are unknown)");
	if (d->has_sender && k < len) {
		bool self = false;
		for (size_t i = 0; i < t->nthreads; i++)
			self |= t->threads[i].tid == d->sender_pid;
		if (self)
			snprintf(buf + k, len - k, ", by this process");
		else
			snprintf(buf + k, len - k, ", by pid %d (uid %d)",
				 d->sender_pid, d->sender_uid);
	}
}

static void emit_chunks(struct hw_emitter *e, const struct hw_death *d)
{
	static const struct em_section lists[][2] = {
		[HW_DEATH_FREED_TWICE] = {
			{ .key = "chunks", .title = "chunk freed twice:",
			  .flags = EM_S_LIST },
			{ .key = "chunks", .title = "freed twice, one of:",
			  .flags = EM_S_LIST } },
		[HW_DEATH_NAMED] = {
			{ .key = "chunks", .title = "chunk named:",
			  .flags = EM_S_LIST },
			{ .key = "chunks", .title = "chunk named:",
			  .flags = EM_S_LIST } },
		[HW_DEATH_FAULT] = {
			{ .key = "chunks", .title = "fault in chunk:",
			  .flags = EM_S_LIST },
			{ .key = "chunks", .title = "fault in chunk:",
			  .flags = EM_S_LIST } },
		[HW_DEATH_BEING_FREED] = {
			{ .key = "chunks", .title = "chunk being freed:",
			  .flags = EM_S_LIST },
			{ .key = "chunks", .title = "being freed, one of:",
			  .flags = EM_S_LIST } },
	};
	static const struct em_section empty = { .key = "chunks",
						 .flags = EM_S_LIST };
	em_kv(e, &F_ROLE, d->role ? ev_str(chunks_role[d->role]) : ev_null());
	em_section_begin(e, d->role ? &lists[d->role][d->nchunks > 1] : &empty);
	for (size_t i = 0; i < d->nchunks; i++) {
		const struct hw_chunk *c = &d->chunks[i];
		em_item_begin(e);
		em_kv(e, &F_CH_ADDR, ev_addr(c->addr));
		em_kv(e, &F_CH_SIZE, ev_u64(c->size));
		em_kv(e, &F_CH_STATE, ev_str(c->used ? "used" : "free"));
		em_kv(e, &F_CH_WHERE,
		      ev_str(hw_where_name((enum hw_where)c->where)));
		em_kv(e, &F_CH_ARENA, ev_i64(c->arena));
		em_kv(e, &F_CH_CHUNK, ev_addr(c->chunk));
		em_kv(e, &F_CH_CHUNK_SIZE, ev_u64(c->chunk_size));
		em_item_end(e);
	}
	em_section_end(e);
	em_kv(e, &F_MORE, ev_bool(d->more_chunks));
}

static void emit_backtrace(struct hw_emitter *e, const struct hw_death *d)
{
	char title[96];
	snprintf(title, sizeof title, "backtrace of the crashing thread "
		 "(tid %d):", d->tid);
	const struct em_table table = {
		.key = "backtrace", .title = title, .cols = FRAME_COLS,
		.ncols = sizeof FRAME_COLS / sizeof FRAME_COLS[0],
		.flags = EM_TB_NO_HEADER };
	em_kv(e, &F_UNWOUND, ev_bool(d->unwound));
	em_table_begin(e, &table);
	for (size_t i = 0; i < d->nframes; i++) {
		const struct hw_death_frame *f = &d->frames[i];
		char fn[300], safe[256], mod[300];
		struct em_val function = ev_null(), module = ev_null();
		if (f->function[0]) {
			snprintf(fn, sizeof fn, "%s+0x%" PRIx64,
				 printable(f->function, safe, sizeof safe),
				 f->offset);
			function = ev_text(ev_str(f->function), fn);
		}
		if (f->module) {
			/* Without a symbol, the offset in the module.  */
			printable(f->module, safe, sizeof safe);
			if (f->function[0])
				snprintf(mod, sizeof mod, "(%s)", safe);
			else
				snprintf(mod, sizeof mod, "(%s+0x%" PRIx64 ")",
					 safe, f->module_offset);
			module = ev_text(ev_str(f->module), mod);
		}
		const struct em_val v[] = {
			ev_u64(i), ev_addr(f->pc), function,
			f->function[0] ? ev_u64(f->offset) : ev_null(),
			module,
			f->module ? ev_u64(f->module_offset) : ev_null(),
		};
		em_row(e, v);
	}
	em_table_end(e);
	if (!d->unwound)
		em_note(e, "(no backtrace: no module of the core could be "
			"read, or the thread has no registers)");
	else if (!d->nframes)
		em_note(e, "(no backtrace: the unwinder found no frame)");
}

/* glibc's malloc aborted the process on damage it saw itself: a finding
   at the chunk it names (or at its message), whatever the walk of the
   lists still finds consistent.  */
void hw_count_malloc_abort(struct hw_session *s, const struct hw_death *d)
{
	if (!d->abort_msg || !hw_malloc_abort(d->abort_msg))
		return;
	uint64_t at = d->nchunks ? d->chunks[0].addr : d->abort_msg_at;
	hw_finding(s, at, HW_MALLOC_ABORT_FINDING "\"%s\"%s", d->abort_msg,
		   d->role == HW_DEATH_FREED_TWICE ? " (this chunk, freed "
		   "twice)" : d->role == HW_DEATH_BEING_FREED ? " (the chunk "
		   "being freed)" : d->nchunks ? " (this chunk)" : "");
}

bool hw_emit_death(struct hw_session *s, struct hw_emitter *e)
{
	struct hw_death d;
	if (!hw_death_get(s, &d))
		return false;
	if (d.died)
		hw_count_malloc_abort(s, &d);
	if (!d.died) {
		em_kv(e, &F_DEATH_NULL, ev_null());
		return true;
	}
	const struct hw_target *t = s->target;
	char line[512], *msg = NULL;
	const char *why = NULL, *code = hw_sigcode_name(d.signo, d.code, &why);
	signal_line(t, &d, line, sizeof line);
	em_section_begin(e, &S_DEATH);
	em_kv(e, &F_DIED, ev_str(line));
	em_kv(e, &F_SIGNAL, ev_i64(d.signo));
	em_kv(e, &F_SIGNAL_NAME, hw_signal_name(d.signo)
		 ? ev_str(hw_signal_name(d.signo)) : ev_null());
	em_kv(e, &F_CODE, d.has_siginfo ? ev_i64(d.code) : ev_null());
	em_kv(e, &F_CODE_NAME, d.has_siginfo && code ? ev_str(code) : ev_null());
	em_kv(e, &F_CAUSE, d.has_siginfo && why ? ev_str(why) : ev_null());
	em_kv(e, &F_ADDR, d.has_addr ? ev_addr(d.addr) : ev_null());
	em_kv(e, &F_SENDER_PID, d.has_sender ? ev_i64(d.sender_pid) : ev_null());
	em_kv(e, &F_SENDER_UID, d.has_sender ? ev_i64(d.sender_uid) : ev_null());
	em_kv(e, &F_THREAD, ev_u64(d.thread + 1));   /* as gdb numbers it */
	em_kv(e, &F_TID, ev_i64(d.tid));
	if (d.abort_msg) {
		size_t n = strlen(d.abort_msg) * 4 + 1;
		msg = malloc(n);
		if (!msg) {
			hw_death_free(&d);
			hw_error(s, HW_BAD_TARGET, "out of memory");
			return false;
		}
		em_kv(e, &F_MSG, ev_text(ev_str(d.abort_msg),
					 printable(d.abort_msg, msg, n)));
		em_kv(e, &F_MSG_SCAN, strcmp(d.abort_msg_found, "scan")
					  ? ev_absent()
					  : ev_str("(found without libc's symbols)"));
	} else {
		em_kv(e, &F_MSG, ev_null());
	}
	em_kv(e, &F_MSG_ADDR, ev_addr_or_null(d.abort_msg_at));
	em_kv(e, &F_MSG_FOUND, d.abort_msg_found ? ev_str(d.abort_msg_found)
						 : ev_null());
	emit_chunks(e, &d);
	emit_backtrace(e, &d);
	em_section_end(e);
	free(msg);
	hw_death_free(&d);
	return true;
}

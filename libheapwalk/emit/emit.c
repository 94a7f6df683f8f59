/* emit.c - the emitter: the structure of a report, the records each form
 * shows, and the sinks (a file, memory) the buffer is handed to.
 *
 * Which form is written is decided here, once, when the emitter is opened
 * (the renderer and the `only` value whose records are dropped); nothing
 * else asks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render.h"

bool em_output_of(const struct hw_output *given, struct hw_output *out)
{
	*out = (struct hw_output){ 0 };
	size_t need = offsetof(struct hw_output, form) + sizeof out->form;
	if (!given || given->sz < need || !given->write)
		return false;
	memcpy(out, given, given->sz < sizeof *out ? given->sz : sizeof *out);
	out->sz = sizeof *out;
	return out->form == HW_FORM_TEXT || out->form == HW_FORM_JSON;
}

struct hw_emitter *em_open(const struct hw_output *out)
{
	struct hw_emitter *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->buf = malloc(EM_BUF_SIZE);
	if (!e->buf) {
		free(e);
		return NULL;
	}
	e->out = *out;
	bool json = out->form == HW_FORM_JSON;
	e->r = json ? &em_json_renderer : &em_text_renderer;
	e->hide = json ? EM_TEXT_ONLY : EM_JSON_ONLY;
	e->frames[0].kind = EM_F_ROOT;
	return e;
}

/* The file sink: every byte, or false.  */
static bool file_write(void *cookie, const char *data, size_t len)
{
	int fd = (int)(intptr_t)cookie;
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		data += n;
		len -= (size_t)n;
	}
	return true;
}

struct hw_emitter *em_open_file(const char *path, int *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	struct hw_output out = { .sz = sizeof out, .write = file_write,
				 .cookie = (void *)(intptr_t)fd };
	struct hw_emitter *e = em_open(&out);
	if (!e) {
		*err = ENOMEM;
		close(fd);
		return NULL;
	}
	e->fd = fd;
	return e;
}

bool em_close(struct hw_emitter *e)
{
	em_flush(e);
	bool ok = !e->failed;
	if (e->fd > 0 && close(e->fd))
		ok = false;
	free(e->buf);
	free(e);
	return ok;
}

/* A fork and the memory it writes into.  */
struct em_forked {
	struct hw_emitter e;          /* first: the fork is its address */
	struct em_membuf mem;
};

struct hw_emitter *em_fork(const struct hw_emitter *e)
{
	struct em_forked *f = malloc(sizeof *f);
	if (!f)
		return NULL;
	f->e = *e;
	f->e.buf = malloc(EM_BUF_SIZE);
	if (!f->e.buf) {
		free(f);
		return NULL;
	}
	f->mem = (struct em_membuf){ 0 };
	f->e.out.write = em_membuf_write;
	f->e.out.cookie = &f->mem;
	f->e.fd = 0;
	f->e.len = 0;
	f->e.failed = false;
	/* The parent writes the header (em_fork_drain), once.  */
	if (f->e.ntables)
		f->e.tables[f->e.ntables - 1].header_due = false;
	return &f->e;
}

void em_fork_drain(struct hw_emitter *e, struct hw_emitter *fork)
{
	struct em_forked *f = (struct em_forked *)fork;
	if (fork->failed)
		e->failed = true;
	if ((f->mem.len || fork->len) && e->ntables && e->r->table_header)
		e->r->table_header(e, &e->tables[e->ntables - 1]);
	/* What e holds goes first; the fork's bytes go to the sink as they
	   are, not through e's buffer: what overflowed the fork's buffer
	   into memory, then the buffer.  */
	em_flush(e);
	if (f->mem.len && !e->failed &&
	    !e->out.write(e->out.cookie, f->mem.data, f->mem.len))
		e->failed = true;
	if (fork->len && !e->failed &&
	    !e->out.write(e->out.cookie, fork->buf, fork->len))
		e->failed = true;
	f->mem.len = 0;
	fork->len = 0;
}

void em_fork_close(struct hw_emitter *fork)
{
	if (!fork)
		return;
	struct em_forked *f = (struct em_forked *)fork;
	free(f->mem.data);
	free(f->e.buf);
	free(f);
}

bool em_failed(const struct hw_emitter *e)
{
	return e->failed;
}

/* ---- structure ---------------------------------------------------------- */

/* Is a record with this `only` shown?  Nothing inside a frame the form
   does not show is.  */
static bool shown(const struct hw_emitter *e, unsigned only)
{
	return !e->hidden && only != e->hide;
}

/* A new innermost frame with the parent's text layout, or NULL (then the
   frame counts as hidden) when it is not shown or nesting is too deep
   (reports nest a handful of levels; this is a bug guard, not a limit
   that data can reach).  */
static struct em_frame *push(struct hw_emitter *e, enum em_frame_kind kind,
			     unsigned only)
{
	if (!shown(e, only) || e->depth + 1 >= EM_DEPTH) {
		e->hidden++;
		return NULL;
	}
	const struct em_frame *parent = em_top(e);
	struct em_frame *f = &e->frames[++e->depth];
	*f = (struct em_frame){
		.kind = (uint8_t)kind,
		.indent = parent->indent,
		.label_width = parent->label_width,
		.first = true,
	};
	return f;
}

/* Leave the innermost frame: true if it was shown (the renderer must
   close it first), false when it was hidden.  */
static bool leaving_shown(struct hw_emitter *e)
{
	if (e->hidden) {
		e->hidden--;
		return false;
	}
	return true;
}

void em_doc_begin(struct hw_emitter *e)
{
	if (push(e, EM_F_DOC, EM_BOTH))
		e->r->doc_begin(e);
}

void em_doc_end(struct hw_emitter *e)
{
	if (!leaving_shown(e))
		return;
	e->r->doc_end(e);
	e->depth--;
}

void em_section_begin(struct hw_emitter *e, const struct em_section *s)
{
	struct em_frame *f = push(e, s->flags & EM_S_LIST ? EM_F_LIST
				  : EM_F_SECTION, s->only);
	if (!f)
		return;
	f->section = s;
	if (s->indent)
		f->indent = s->indent;
	if (s->label_width)
		f->label_width = s->label_width;
	e->r->section_begin(e, s);
}

void em_section_end(struct hw_emitter *e)
{
	if (!leaving_shown(e))
		return;
	e->r->section_end(e, em_top(e)->section);
	e->depth--;
}

void em_item_begin(struct hw_emitter *e)
{
	if (push(e, EM_F_ITEM, EM_BOTH))
		e->r->item_begin(e);
}

void em_item_end(struct hw_emitter *e)
{
	if (!leaving_shown(e))
		return;
	e->r->item_end(e);
	e->depth--;
	em_top(e)->first = false;
}

void em_kv(struct hw_emitter *e, const struct em_field *f, struct em_val v)
{
	if (shown(e, f->only) && v.only != e->hide)
		e->r->kv(e, f, &v);
}

/* ---- tables ------------------------------------------------------------- */

void em_table_begin(struct hw_emitter *e, const struct em_table *t)
{
	if (e->ntables == EM_TABLE_DEPTH) {
		e->hidden++;    /* bug guard, as in push() */
		return;
	}
	if (!push(e, EM_F_TABLE, t->only))
		return;
	struct em_table_state *ts = &e->tables[e->ntables++];
	ts->t = t;
	ts->packed = false;
	ts->nplans = ts->next_plan = 0;
	e->r->table_begin(e, ts);
}

void em_table_end(struct hw_emitter *e)
{
	if (!leaving_shown(e))
		return;
	e->r->table_end(e, &e->tables[e->ntables - 1]);
	e->ntables--;
	e->depth--;
}

void em_row_open(struct hw_emitter *e, const struct em_val *v)
{
	if (!e->ntables) {
		e->hidden++;    /* a row outside a table: a bug */
		return;
	}
	if (push(e, EM_F_ROW, EM_BOTH))
		e->r->row_open(e, &e->tables[e->ntables - 1], v);
}

void em_row_close(struct hw_emitter *e)
{
	if (!leaving_shown(e))
		return;
	e->r->row_close(e, &e->tables[e->ntables - 1]);
	e->depth--;
}

void em_row_as(struct hw_emitter *e, const char *key, const struct em_val *v,
	       enum em_only only)
{
	if (shown(e, only) && e->ntables)
		e->r->row(e, &e->tables[e->ntables - 1], key, v);
}

void em_row(struct hw_emitter *e, const struct em_val *v)
{
	if (!e->hidden && e->ntables)
		e->r->row(e, &e->tables[e->ntables - 1], NULL, v);
}

bool em_rows_shown(const struct hw_emitter *e)
{
	return !e->hidden && e->ntables;
}

void em_unpack(const struct em_field *cols, unsigned ncols,
	       const struct em_packed_row *r, struct em_val *v)
{
	for (unsigned i = 0; i < ncols && i < EM_MAX_COLS; i++) {
		const struct em_field *c = &cols[i];
		uint64_t w = r->w[i];
		if (!(r->cols >> i & 1)) {
			v[i] = ev_absent();
			continue;
		}
		switch (c->kind) {
		case EM_K_I64:
			v[i] = ev_i64((int64_t)w);
			break;
		case EM_K_ADDR:
			v[i] = ev_addr(w);
			break;
		case EM_K_BOOL:
			v[i] = ev_bool(w != 0);
			break;
		case EM_K_STR: {
			const char *word = "";
			if (c->nwords)
				word = c->words + EM_WORD_ROOM *
					em_word_index(w, c->nwords);
			size_t len = strnlen(word, EM_WORD_ROOM - 1);
			v[i] = len ? ev_word(word, len) : ev_str("");
			break;
		}
		default:
			v[i] = ev_u64(w);
			break;
		}
		v[i].only = r->text_only >> i & 1 ? EM_TEXT_ONLY : EM_BOTH;
	}
}

void em_row_packed(struct hw_emitter *e, const struct em_packed_row *r)
{
	if (e->hidden || !e->ntables)
		return;
	struct em_table_state *ts = &e->tables[e->ntables - 1];
	if (e->r->row_packed && ts->packed) {
		e->r->row_packed(e, ts, r);
		return;
	}
	struct em_val v[EM_MAX_COLS];
	em_unpack(ts->t->cols, ts->t->ncols, r, v);
	e->r->row(e, ts, NULL, v);
}

/* ---- notes -------------------------------------------------------------- */

void em_verbatim_begin(struct hw_emitter *e, const char *key)
{
	if (!e->hidden)
		e->r->verbatim_begin(e, key);
}

void em_verbatim(struct hw_emitter *e, const char *s, size_t len)
{
	if (!e->hidden && !e->failed)
		e->r->verbatim(e, s, len);
}

void em_verbatim_end(struct hw_emitter *e)
{
	if (!e->hidden)
		e->r->verbatim_end(e);
}

void em_note(struct hw_emitter *e, const char *text)
{
	if (shown(e, EM_TEXT_ONLY))
		e->r->note(e, text, strlen(text));
}

void em_notef(struct hw_emitter *e, const char *fmt, ...)
{
	if (!shown(e, EM_TEXT_ONLY))
		return;
	char small[1024], *text = small;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof small) {
		text = malloc((size_t)n + 1);
		if (!text)
			return;
		va_start(ap, fmt);
		vsnprintf(text, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	e->r->note(e, text, (size_t)n);
	if (text != small)
		free(text);
}

/* ---- a sink into memory ------------------------------------------------- */

bool em_membuf_write(void *cookie, const char *data, size_t len)
{
	struct em_membuf *m = cookie;
	if (m->len + len + 1 > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;
		while (cap < m->len + len + 1)
			cap *= 2;
		char *d = realloc(m->data, cap);
		if (!d)
			return false;
		m->data = d;
		m->cap = cap;
	}
	memcpy(m->data + m->len, data, len);
	m->len += len;
	m->data[m->len] = '\0';
	return true;
}

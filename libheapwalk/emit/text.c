/* text.c - records as aligned text for people.
 *
 * A key/value with a label starts a line: the section's indent, the
 * label padded to the section's label width, a space, the value.  One
 * without a label continues the line (after its join).  A section's title
 * is a line of its own at the parent's indent; an EM_S_LINE section is a
 * single line labelled with its title; an EM_S_LIST section labels its
 * first element's line with its title and aligns the others under it.
 * Tables print a header (each column's label padded like its values) and
 * one line per row, columns in the table's text order.
 */
#include "format.h"
#include "render.h"

static void end_line(struct hw_emitter *e)
{
	if (e->line != EM_LINE_NONE) {
		em_put_char(e, '\n');
		e->line = EM_LINE_NONE;
	}
}

/* ---- what reaches the terminal ------------------------------------------ */

/* Strings from the core (paths, symbol names, a heap_v2 base's names)
   hold any bytes.  A terminal acts on control bytes (ESC starts the
   sequences that set colours, move the cursor, retitle the window), so
   text shows each control byte, DEL, and every byte that is no part of
   a valid UTF-8 sequence as \xNN, as a C string would; valid UTF-8 goes
   out as it is.  `newlines` keeps '\n' (a note's own line breaks).  */
static bool terminal_safe(const char *s, size_t n, bool newlines)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && !(newlines && c == '\n')) || c >= 0x7f)
			return false;
	}
	return true;
}

/* The escaped form of s at out (room: 4 bytes per byte of s); returns
   its length.  */
static size_t escape_terminal(const char *s, size_t n, char *out,
			      bool newlines)
{
	static const char hex[16] = "0123456789abcdef";
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		unsigned k = c >= 0x80 ? fmt_utf8_len(s + i, n - i) : 0;
		if (k) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		if ((c >= 0x20 && c < 0x7f) || (newlines && c == '\n')) {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
		i++;
	}
	return o;
}

/* s (n bytes) escaped for a terminal, without padding.  */
static void put_escaped(struct hw_emitter *e, const char *s, size_t n,
			bool newlines)
{
	char buf[1024];
	while (n > 0) {
		size_t take = n < sizeof buf / 4 ? n : sizeof buf / 4;
		/* A piece ends before a continuation byte, so that no valid
		   UTF-8 sequence is cut in two and shown as bytes.  */
		for (unsigned back = 0; take < n && back < 3 &&
		     ((unsigned char)s[take] & 0xc0) == 0x80; back++)
			take--;
		em_put(e, buf, escape_terminal(s, take, buf, newlines));
		s += take;
		n -= take;
	}
}

/* s (n bytes) padded to |width| (right-aligned when width > 0), escaped
   for a terminal.  */
static void put_padded(struct hw_emitter *e, const char *s, size_t n,
		       int width)
{
	size_t w = (size_t)(width < 0 ? -width : width);
	char buf[4 * 128];
	if (!terminal_safe(s, n, false)) {
		if (n > 128) {      /* long: no padding is due */
			if (width > 0 && w > n)
				em_put_spaces(e, w - n);
			put_escaped(e, s, n, false);
			if (width < 0 && w > n)
				em_put_spaces(e, w - n);
			return;
		}
		n = escape_terminal(s, n, buf, false);
		s = buf;
	}
	size_t pad = w > n ? w - n : 0;
	if (width > 0)
		em_put_spaces(e, pad);
	em_put(e, s, n);
	if (width < 0)
		em_put_spaces(e, pad);
}

/* Bold on or off, when the output is a terminal that asked for colour
   (the escapes take no column: padding is counted without them).  */
static void bold(struct hw_emitter *e, bool on)
{
	if (e->out.color)
		em_put_str(e, on ? "\033[1m" : "\033[0m");
}

/* A new line: indent, label padded to the label width, a space.  */
static void start_labelled(struct hw_emitter *e, unsigned indent,
			   const char *label, int label_width)
{
	end_line(e);
	em_put_spaces(e, indent);
	bold(e, true);
	put_padded(e, label, strlen(label), -label_width);
	bold(e, false);
	em_put_char(e, ' ');
	e->line = EM_LINE_LABEL;
}

/* The line of a list's next element: the list's title on the first.  */
static void start_element(struct hw_emitter *e, struct em_frame *list)
{
	const char *title = list->section ? list->section->title : NULL;
	start_labelled(e, list->indent, list->first && title ? title : "",
		       list->label_width);
}

/* Is the value a count or address that number_cell() writes?  */
static bool is_number_cell(const struct em_field *f, const struct em_val *v)
{
	return (v->kind == EM_K_U64 || v->kind == EM_K_I64 ||
		v->kind == EM_K_ADDR) && !v->text && v->only != EM_JSON_ONLY &&
	       !f->noun && f->form != EM_T_HUMAN;
}

/* n spaces at p; returns the end.  Short runs are one fixed-size copy,
   so up to PAD_ROOM bytes are written: reserve them.  */
#define PAD_ROOM 32
static char *pad(char *p, size_t n)
{
	static const char spaces[PAD_ROOM] = "                                ";
	if (n <= PAD_ROOM)
		memcpy(p, spaces, PAD_ROOM);
	else
		memset(p, ' ', n);
	return p + n;
}

/* Room number_cell() may need: padding on either side, "0x", digits.  */
static size_t number_cell_max(int width)
{
	return (size_t)(width < 0 ? -width : width) + 2 * PAD_ROOM + 2 +
	       FMT_ROOM;
}

/* An integer or address at p, padded to |width|, in the column's form
   (EM_T_HEX: as printf's %#llx; EM_T_HEX0: zero-padded to `digits`);
   returns the end.  Inline: it is most of a `chunks` line.  */
__attribute__((always_inline))
static inline char *number_cell(char *p, unsigned form, unsigned zeros,
				int width, const struct em_val *v)
{
	unsigned n, digits;
	uint64_t u = v->u;
	const char *lead = NULL;        /* "-" or "0x" */
	bool hex = v->kind == EM_K_ADDR || form == EM_T_HEX ||
		   form == EM_T_HEX0;
	if (v->kind == EM_K_I64) {
		u = fmt_magnitude(v->i);
		digits = fmt_dec_len(u);
		hex = false;
		lead = v->i < 0 ? "-" : NULL;
	} else if (hex) {
		digits = fmt_hex_len(u);
		if (form == EM_T_HEX0 && digits < zeros)
			digits = zeros;
		/* No "0x" before a 0 count, as %#llx.  */
		lead = v->kind == EM_K_ADDR || u != 0 ? "0x" : NULL;
	} else {
		digits = fmt_dec_len(u);
	}
	n = digits + (lead ? (unsigned)strlen(lead) : 0);
	unsigned w = (unsigned)(width < 0 ? -width : width);
	unsigned fill = w > n ? w - n : 0;
	if (width > 0)
		p = pad(p, fill);
	if (lead) {
		memcpy(p, lead, 2);
		p += n - digits;
	}
	p = hex ? fmt_hex_n(p, u, digits) : fmt_dec_n(p, u, digits);
	if (width < 0)
		p = pad(p, fill);
	return p;
}

/* "a,b,c" into buf; returns its length (ids past the room are cut).  */
static size_t ids_text(char *buf, size_t len, const struct em_val *v)
{
	size_t n = 0;
	for (size_t i = 0; i < v->nids && n + FMT_U64_MAX + 2 < len; i++) {
		if (i)
			buf[n++] = ',';
		n = (size_t)(fmt_i64(buf + n, v->ids[i]) - buf);
	}
	return n;
}

#define CELL_BUF 512

/* The text of a value that is not a plain number (buf: CELL_BUF bytes
   it may use); sets *len.  */
static const char *cell_text(const struct em_field *f, const struct em_val *v,
			     char *buf, size_t *len)
{
	const char *s;
	size_t n;
	if (v->text) {
		s = v->text;
	} else if (v->kind == EM_K_NULL || v->kind == EM_K_ABSENT ||
		   v->only == EM_JSON_ONLY) {
		s = f->none ? f->none : "";
	} else if (v->kind == EM_K_STR) {
		s = v->s;
	} else if (v->kind == EM_K_BOOL) {
		s = v->b ? (f->yes ? f->yes : "yes") : (f->no ? f->no : "no");
	} else if (v->kind == EM_K_U64 && f->form == EM_T_HUMAN) {
		s = hw_human(buf, CELL_BUF, v->u);
	} else if (v->kind == EM_K_I64 && f->form == EM_T_HUMAN) {
		/* A change of size: "-1.5 MiB".  */
		uint64_t m = v->i < 0 ? (uint64_t)0 - (uint64_t)v->i
				      : (uint64_t)v->i;
		buf[0] = '-';
		hw_human(buf + (v->i < 0), CELL_BUF - 1, m);
		s = buf;
	} else if ((v->kind == EM_K_U64 || v->kind == EM_K_I64) && f->noun) {
		/* "3 heaps", "1 heap" */
		n = (size_t)((v->kind == EM_K_I64 ? fmt_i64(buf, v->i)
			      : fmt_dec(buf, v->u)) - buf);
		size_t k = strlen(f->noun);
		if (k > CELL_BUF - n - 3)
			k = CELL_BUF - n - 3;
		buf[n++] = ' ';
		memcpy(buf + n, f->noun, k);
		n += k;
		if (v->kind == EM_K_I64 ? v->i != 1 : v->u != 1)
			buf[n++] = 's';
		*len = n;
		return buf;
	} else if (v->kind == EM_K_DBL) {
		bool pct = f->form == EM_T_PCT;
		n = fmt_fixed(buf, CELL_BUF - 1, pct ? 100 * v->d : v->d,
			      f->prec);
		if (pct)
			buf[n++] = '%';
		*len = n;
		return buf;
	} else if (v->kind == EM_K_IDS) {
		*len = ids_text(buf, CELL_BUF, v);
		return buf;
	} else {
		/* A number in a form that is not a count's (an address
		   shown in human units): as it is.  */
		*len = (size_t)(number_cell(buf, EM_T_PLAIN, 0, 0, v) - buf);
		return buf;
	}
	*len = strlen(s);
	return s;
}

/* The value in text, padded, without pre and post.  */
static void put_value(struct hw_emitter *e, const struct em_field *f,
		      const struct em_val *v)
{
	if (is_number_cell(f, v)) {
		char *p = em_reserve(e, number_cell_max(f->width));
		em_advance_to(e, number_cell(p, f->form, f->digits > 16 ? 16 :
					     f->digits, f->width, v));
		return;
	}
	char buf[CELL_BUF];
	size_t n;
	const char *s = cell_text(f, v, buf, &n);
	put_padded(e, s, n, f->width);
}

/* pre, the value, post.  */
static void put_cell(struct hw_emitter *e, const struct em_field *f,
		     const struct em_val *v)
{
	if (f->pre)
		em_put_str(e, f->pre);
	put_value(e, f, v);
	if (f->post)
		em_put_str(e, f->post);
}

/* EM_T_IDLINE: "<pre><label> a,b,c" on a line of its own, continued on
   lines indented under the first id before it would pass column 99.  */
static void put_idline(struct hw_emitter *e, const struct em_field *f,
		       const struct em_val *v)
{
	if (v->kind != EM_K_IDS || v->nids == 0)
		return;
	const char *pre = f->pre ? f->pre : "", *label = f->label ? f->label : "";
	size_t indent = strlen(pre) + strlen(label) + 1, col = 0;
	end_line(e);
	for (size_t i = 0; i < v->nids; i++) {
		char id[FMT_U64_MAX];
		size_t n = (size_t)(fmt_i64(id, v->ids[i]) - id);
		if (col == 0) {
			em_put_str(e, pre);
			em_put_str(e, label);
			em_put_char(e, ' ');
			col = indent + n;
		} else if (col + 1 + n > 99) {
			EM_PUT_LIT(e, ",\n");
			em_put_spaces(e, indent);
			col = indent + n;
		} else {
			em_put_char(e, ',');
			col += 1 + n;
		}
		em_put(e, id, n);
	}
	em_put_char(e, '\n');
}

/* ---- structure ---------------------------------------------------------- */

static void doc_begin(struct hw_emitter *e)
{
	(void)e;
}

static void doc_end(struct hw_emitter *e)
{
	end_line(e);
}

static void section_begin(struct hw_emitter *e, const struct em_section *s)
{
	struct em_frame *f = em_top(e);
	if (s->flags & EM_S_LINE) {
		start_labelled(e, f->indent, s->title ? s->title : "",
			       f->label_width);
		return;
	}
	end_line(e);
	if (s->title && !(s->flags & EM_S_LIST)) {
		em_put_spaces(e, e->frames[e->depth - 1].indent);
		em_put_str(e, s->title);
		em_put_char(e, '\n');
	}
}

static void section_end(struct hw_emitter *e, const struct em_section *s)
{
	(void)s;
	end_line(e);
}

static void item_begin(struct hw_emitter *e)
{
	start_element(e, &e->frames[e->depth - 1]);
}

static void item_end(struct hw_emitter *e)
{
	end_line(e);
}

static void kv(struct hw_emitter *e, const struct em_field *f,
	       const struct em_val *v)
{
	if ((v->kind == EM_K_NULL || v->kind == EM_K_ABSENT) && !v->text &&
	    !f->none)
		return;
	if (f->form == EM_T_IDLINE) {
		put_idline(e, f, v);
		return;
	}
	struct em_frame *fr = em_top(e);
	if (f->label) {
		start_labelled(e, fr->indent, f->label, fr->label_width);
	} else if (fr->kind == EM_F_LIST) {
		start_element(e, fr);
		fr->first = false;
	} else if (e->line == EM_LINE_NONE) {
		em_put_spaces(e, fr->indent);
	} else if (e->line == EM_LINE_CONTENT) {
		em_put_str(e, f->join ? f->join : " ");
	}
	put_cell(e, f, v);
	e->line = EM_LINE_CONTENT;
}

/* ---- tables ------------------------------------------------------------- */

/* Columns text shows in the row line (not JSON's alone, not the id lists
   that go under it).  */
static bool in_line(const struct em_field *c)
{
	return c->only != EM_JSON_ONLY && c->form != EM_T_IDLINE;
}

/* Copy src into dst[cap]; false when it does not fit.  */
static bool append(char *dst, uint8_t *len, size_t cap, const char *src)
{
	if (!src)
		return true;
	size_t n = strlen(src);
	if (*len + n > cap)
		return false;
	memcpy(dst + *len, src, n);
	*len = (uint8_t)(*len + n);
	return true;
}

/* The title, the header, and the plan of a row's cells.  */
static void table_begin(struct hw_emitter *e, struct em_table_state *ts)
{
	const struct em_table *t = ts->t;
	ts->ncells = 0;
	ts->row_max = 8;
	ts->idlines = false;
	for (unsigned i = 0; i < t->ncols; i++)
		if (t->cols[i].form == EM_T_IDLINE && t->cols[i].only != EM_JSON_ONLY)
			ts->idlines = true;
	for (unsigned k = 0; k < em_text_ncols(t) && ts->ncells < EM_MAX_COLS; k++) {
		unsigned i = em_text_col(t, k);
		const struct em_field *c = &t->cols[i];
		if (!in_line(c))
			continue;
		struct em_cell_plan *cp = &ts->cells[ts->ncells];
		cp->col = (uint8_t)i;
		cp->leadlen = cp->postlen = 0;
		cp->general = !append(cp->lead, &cp->leadlen, EM_LEAD_MAX,
				      c->join ? c->join : ts->ncells ? " " : "") ||
			      !append(cp->lead, &cp->leadlen, EM_LEAD_MAX, c->pre) ||
			      !append(cp->post, &cp->postlen, EM_POST_MAX, c->post);
		cp->number = !c->noun && c->form != EM_T_HUMAN;
		cp->form = c->form;
		cp->digits = c->digits > 16 ? 16 : c->digits;
		cp->width = c->width;
		ts->ncells++;
		ts->row_max += EM_LEAD_MAX + EM_POST_MAX + EM_CELL_STR_MAX +
			       PAD_ROOM + number_cell_max(c->width);
	}
	end_line(e);
	if (t->title) {
		em_put_str(e, t->title);
		em_put_char(e, '\n');
	}
	ts->header_due = !(t->flags & EM_TB_NO_HEADER);
}

/* The header, before the table's first row: a table without rows says
   "(none)" under its title instead of a header over nothing.  */
static void header(struct hw_emitter *e, const struct em_table_state *cts)
{
	struct em_table_state *ts = &e->tables[cts - e->tables];
	if (!ts->header_due)
		return;
	ts->header_due = false;
	const struct em_table *t = ts->t;
	end_line(e);
	bold(e, true);
	for (unsigned k = 0; k < ts->ncells; k++) {
		const struct em_field *c = &t->cols[ts->cells[k].col];
		em_put_str(e, c->join ? c->join : k == 0 ? "" : " ");
		const char *h = c->label ? c->label : "";
		put_padded(e, h, strlen(h), c->width);
	}
	bold(e, false);
	em_put_char(e, '\n');
}

static void table_end(struct hw_emitter *e, struct em_table_state *ts)
{
	end_line(e);
	if (ts->header_due) {
		ts->header_due = false;
		em_put_str(e, ts->t->title ? "  (none)\n" : "(none)\n");
	}
}

/* s (n bytes) at p, padded to |width|; returns the end.  */
static char *pad_copy(char *p, const char *s, size_t n, int width)
{
	size_t w = (size_t)(width < 0 ? -width : width);
	size_t fill = w > n ? w - n : 0;
	if (width > 0)
		p = pad(p, fill);
	memcpy(p, s, n);
	p += n;
	if (width < 0)
		p = pad(p, fill);
	return p;
}

/* A string of at most EM_CELL_STR_MAX bytes at p, padded to |width|;
   returns the end, or NULL for a longer string (nothing useful written).
   Copied byte by byte: the string's length is not known, and a copy of
   fixed size could read past its end.  */
static char *string_cell(char *p, const char *s, int width)
{
	size_t n = 0, w = (size_t)(width < 0 ? -width : width);
	/* Any byte a terminal may act on takes the general path, which
	   escapes it (put_padded).  */
	if (width > 0) {
		while (n <= EM_CELL_STR_MAX && s[n]) {
			unsigned char c = (unsigned char)s[n];
			if (c < 0x20 || c >= 0x7f)
				return NULL;
			n++;
		}
		if (n > EM_CELL_STR_MAX)
			return NULL;
		p = pad(p, w > n ? w - n : 0);
		for (size_t i = 0; i < n; i++)
			p[i] = s[i];
		return p + n;
	}
	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];
		if (n == EM_CELL_STR_MAX || c < 0x20 || c >= 0x7f)
			return NULL;
		p[n] = s[n];
	}
	return pad(p + n, w > n ? w - n : 0);
}

/* One row line.  This is the loop `chunks` spends its time in: one
   reservation per row, each column's lead and post a fixed-size copy,
   numbers written in place.  */
static void row_line(struct hw_emitter *e, const struct em_table_state *ts,
		     const struct em_val *v)
{
	const struct em_table *t = ts->t;
	end_line(e);
	char *p = em_reserve(e, ts->row_max);
	for (unsigned k = 0; k < ts->ncells; k++) {
		const struct em_cell_plan *cp = &ts->cells[k];
		const struct em_val *x = &v[cp->col];
		if (!cp->general) {
			memcpy(p, cp->lead, EM_LEAD_MAX);
			p += cp->leadlen;
			char *q;
			if (cp->number && !x->text && x->only != EM_JSON_ONLY &&
			    (x->kind == EM_K_U64 || x->kind == EM_K_I64 ||
			     x->kind == EM_K_ADDR)) {
				p = number_cell(p, cp->form, cp->digits,
						cp->width, x);
			} else if (x->kind == EM_K_STR && x->nids && !x->text &&
				   x->only != EM_JSON_ONLY) {
				p = pad_copy(p, x->s, x->nids, cp->width);
			} else if (x->kind == EM_K_STR && !x->text &&
				   x->only != EM_JSON_ONLY &&
				   (q = string_cell(p, x->s, cp->width))) {
				p = q;
			} else {
				char buf[CELL_BUF];
				size_t n;
				const char *s = cell_text(&t->cols[cp->col], x,
							  buf, &n);
				if (n <= EM_CELL_STR_MAX &&
				    terminal_safe(s, n, false)) {
					p = pad_copy(p, s, n, cp->width);
				} else {
					em_advance_to(e, p);
					put_padded(e, s, n, cp->width);
					p = em_reserve(e, ts->row_max);
				}
			}
			memcpy(p, cp->post, EM_POST_MAX);
			p += cp->postlen;
			continue;
		}
		const struct em_field *c = &t->cols[cp->col];
		em_advance_to(e, p);
		em_put_str(e, c->join ? c->join : k == 0 ? "" : " ");
		put_cell(e, c, x);
		p = em_reserve(e, ts->row_max);
	}
	*p++ = '\n';
	em_advance_to(e, p);
}

/* The id lists of a row, each a line under it.  */
static void row_idlines(struct hw_emitter *e, const struct em_table_state *ts,
			const struct em_val *v)
{
	const struct em_table *t = ts->t;
	if (!ts->idlines)
		return;
	for (unsigned i = 0; i < t->ncols; i++)
		if (t->cols[i].form == EM_T_IDLINE &&
		    t->cols[i].only != EM_JSON_ONLY && v[i].only != EM_JSON_ONLY)
			put_idline(e, &t->cols[i], &v[i]);
}

static void row(struct hw_emitter *e, const struct em_table_state *ts,
		const char *key, const struct em_val *v)
{
	(void)key;
	header(e, ts);
	row_line(e, ts, v);
	row_idlines(e, ts, v);
}

/* EM_TB_ROW_COLOURS: the foregrounds rows take in turn (cyan, yellow,
   green, magenta, blue: none is the terminal's default).  */
static const char *const ROW_COLOURS[] = {
	"\033[36m", "\033[33m", "\033[32m", "\033[35m", "\033[34m",
};

static bool row_coloured(const struct hw_emitter *e,
			 const struct em_table_state *ts)
{
	return e->out.color && (ts->t->flags & EM_TB_ROW_COLOURS);
}

static void row_open(struct hw_emitter *e, const struct em_table_state *ts,
		     const struct em_val *v)
{
	header(e, ts);
	if (row_coloured(e, ts)) {
		end_line(e);
		em_put_str(e, ROW_COLOURS[e->row_colour++ %
					  (sizeof ROW_COLOURS /
					   sizeof *ROW_COLOURS)]);
	}
	row_line(e, ts, v);
	row_idlines(e, ts, v);
}

static void row_close(struct hw_emitter *e, const struct em_table_state *ts)
{
	end_line(e);
	if (row_coloured(e, ts))
		em_put_str(e, "\033[0m");
}

static void note(struct hw_emitter *e, const char *text, size_t len)
{
	end_line(e);
	if (terminal_safe(text, len, true))
		em_put(e, text, len);
	else
		put_escaped(e, text, len, true);
	em_put_char(e, '\n');
}

/* A verbatim document: its bytes, on lines of their own.  */
static void verbatim_begin(struct hw_emitter *e, const char *key)
{
	(void)key;
	end_line(e);
}

static void verbatim(struct hw_emitter *e, const char *s, size_t len)
{
	em_put(e, s, len);
}

static void verbatim_end(struct hw_emitter *e)
{
	(void)e;
}

const struct em_renderer em_text_renderer = {
	.doc_begin = doc_begin,
	.doc_end = doc_end,
	.section_begin = section_begin,
	.section_end = section_end,
	.item_begin = item_begin,
	.item_end = item_end,
	.kv = kv,
	.table_begin = table_begin,
	.table_end = table_end,
	.table_header = header,
	.row = row,
	.row_open = row_open,
	.row_close = row_close,
	.note = note,
	.verbatim_begin = verbatim_begin,
	.verbatim = verbatim,
	.verbatim_end = verbatim_end,
};

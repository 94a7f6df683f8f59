/* json.c - records as compact JSON: a document is one object on
 * one line; an EM_TB_LINES table is JSON Lines (one object per row).
 *
 * Keys are identifiers chosen by the reports and written as they are;
 * string values are escaped.  Numbers are formatted in place in the
 * output buffer (format.c); a row's member keys are measured once per
 * table.
 */
#include "format.h"
#include "render.h"

/* The frame whose object or array a member goes into: the innermost one
   that opened a container below `depth` (sections without a key and
   tables without one are text layout only).  */
static struct em_frame *container(struct hw_emitter *e, int depth)
{
	while (depth > 0 && !e->frames[depth].container)
		depth--;
	return &e->frames[depth];
}

/* The comma (when the container has a member already) and "key":.  */
static void prefix(struct hw_emitter *e, struct em_frame *c, const char *key,
		   size_t keylen)
{
	char *p = em_reserve(e, keylen + 4);
	if (c->comma)
		*p++ = ',';
	c->comma = true;
	if (key) {
		*p++ = '"';
		memcpy(p, key, keylen);
		p += keylen;
		*p++ = '"';
		*p++ = ':';
	}
	em_advance_to(e, p);
}

/* A JSON string.  Strings may come from the core (paths, symbol names,
   glibc's abort message), which holds any bytes: '"', '\\' and control
   characters are escaped, valid UTF-8 is copied, and every byte that
   does not belong to a valid UTF-8 sequence becomes U+FFFD, written
   \ufffd, so the output is always valid UTF-8 JSON.  */
static void string_body(struct hw_emitter *e, const char *s, size_t len)
{
	static const char hex[16] = "0123456789abcdef";
	const char *run = s, *end = s + len;
	while (s < end) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			s++;
			continue;
		}
		if (c >= 0x80) {
			unsigned n = fmt_utf8_len(s, (size_t)(end - s));
			if (n) {
				s += n;
				continue;
			}
		}
		em_put(e, run, (size_t)(s - run));
		if (c >= 0x80) {
			EM_PUT_LIT(e, "\\ufffd");
		} else if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			em_put(e, esc, 2);
		} else {
			char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4],
					hex[c & 15] };
			em_put(e, esc, 6);
		}
		run = ++s;
	}
	em_put(e, run, (size_t)(s - run));
}

static void string(struct hw_emitter *e, const char *s)
{
	em_put_char(e, '"');
	string_body(e, s, strlen(s));
	em_put_char(e, '"');
}

/* A number or address at p (room: FMT_ROOM + 4); returns the end.  */
static char *number(char *p, const struct em_val *v)
{
	switch (v->kind) {
	case EM_K_U64:
		return fmt_dec(p, v->u);
	case EM_K_I64:
		return fmt_i64(p, v->i);
	default: /* EM_K_ADDR */
		*p++ = '"';
		*p++ = '0';
		*p++ = 'x';
		p = fmt_hex(p, v->u, 0);
		*p++ = '"';
		return p;
	}
}

static void value(struct hw_emitter *e, const struct em_field *f,
		  const struct em_val *v)
{
	switch (v->kind) {
	case EM_K_U64:
	case EM_K_I64:
	case EM_K_ADDR:
		em_advance_to(e, number(em_reserve(e, FMT_ROOM + 4), v));
		return;
	case EM_K_DBL: {
		char buf[64];
		em_put(e, buf, fmt_fixed(buf, sizeof buf, v->d, f->json_prec));
		return;
	}
	case EM_K_STR:
		string(e, v->s);
		return;
	case EM_K_BOOL:
		if (v->b)
			EM_PUT_LIT(e, "true");
		else
			EM_PUT_LIT(e, "false");
		return;
	case EM_K_IDS:
		em_put_char(e, '[');
		for (size_t i = 0; i < v->nids; i++) {
			char *p = em_reserve(e, FMT_U64_MAX + 1);
			if (i)
				*p++ = ',';
			em_advance_to(e, fmt_i64(p, v->ids[i]));
		}
		em_put_char(e, ']');
		return;
	default: /* EM_K_NULL */
		EM_PUT_LIT(e, "null");
		return;
	}
}

/* ---- structure ---------------------------------------------------------- */

/* Open an object or array in the innermost frame, a member `key` of the
   enclosing container.  */
static void open_container(struct hw_emitter *e, const char *key, char bracket)
{
	prefix(e, container(e, e->depth - 1), key, key ? strlen(key) : 0);
	em_put_char(e, bracket);
	em_top(e)->container = true;
}

static void doc_begin(struct hw_emitter *e)
{
	open_container(e, NULL, '{');
}

static void doc_end(struct hw_emitter *e)
{
	EM_PUT_LIT(e, "}\n");
	/* Each document is a line of its own, not an element of a list.  */
	container(e, e->depth - 1)->comma = false;
}

static void section_begin(struct hw_emitter *e, const struct em_section *s)
{
	if (s->flags & EM_S_LIST)
		open_container(e, s->key, '[');
	else if (s->key)
		open_container(e, s->key, '{');
}

static void section_end(struct hw_emitter *e, const struct em_section *s)
{
	if (em_top(e)->container)
		em_put_char(e, s->flags & EM_S_LIST ? ']' : '}');
}

static void item_begin(struct hw_emitter *e)
{
	open_container(e, NULL, '{');
}

static void item_end(struct hw_emitter *e)
{
	em_put_char(e, '}');
}

static void kv(struct hw_emitter *e, const struct em_field *f,
	       const struct em_val *v)
{
	if (v->kind == EM_K_ABSENT)
		return;
	prefix(e, container(e, e->depth), f->key, f->key ? strlen(f->key) : 0);
	value(e, f, v);
}

/* ---- tables ------------------------------------------------------------- */

/* A packed table's plan (render.h), when every column it writes has a
   kind, fits the fast path, and has few enough words.  */
static void packed_plan(struct em_table_state *ts)
{
	const struct em_table *t = ts->t;
	ts->packed_cols = 0;
	for (unsigned k = 0; k < ts->ncells; k++) {
		struct em_cell_plan *cp = &ts->cells[k];
		const struct em_field *c = &t->cols[cp->col];
		if (cp->general || c->kind == EM_K_ABSENT ||
		    (c->kind == EM_K_STR && (!c->nwords ||
					     c->nwords > EM_MAX_WORDS)))
			return;
		cp->kind = c->kind;
		cp->nwords = c->nwords;
		cp->words = c->words;
		for (unsigned w = 0; w < c->nwords && w < EM_MAX_WORDS; w++)
			cp->wordlen[w] = (uint8_t)strnlen(c->words +
							  w * EM_WORD_ROOM,
							  EM_WORD_ROOM - 1);
		ts->cell_of[cp->col] = (uint8_t)k;
		ts->packed_cols |= 1u << cp->col;
	}
	ts->packed = true;
}

/* Per cell ,"key": (a key too long for it takes the general path).  */
static void table_begin(struct hw_emitter *e, struct em_table_state *ts)
{
	const struct em_table *t = ts->t;
	ts->ncells = 0;
	ts->row_max = EM_LEAD_MAX + 8;
	for (unsigned i = 0; i < t->ncols && i < EM_MAX_COLS; i++) {
		const struct em_field *c = &t->cols[i];
		if (c->only == EM_TEXT_ONLY)
			continue;
		struct em_cell_plan *cp = &ts->cells[ts->ncells++];
		size_t kl = c->key ? strlen(c->key) : 0;
		cp->col = (uint8_t)i;
		cp->general = kl + 4 > EM_LEAD_MAX;
		if (!cp->general) {
			cp->lead[0] = ',';
			cp->lead[1] = '"';
			memcpy(cp->lead + 2, c->key, kl);
			cp->lead[kl + 2] = '"';
			cp->lead[kl + 3] = ':';
			cp->leadlen = (uint8_t)(kl + 4);
		}
		ts->row_max += EM_LEAD_MAX + EM_CELL_STR_MAX + FMT_ROOM;
	}
	packed_plan(ts);
	if (t->key && !(t->flags & EM_TB_LINES))
		open_container(e, t->key, '[');
}

static void table_end(struct hw_emitter *e, struct em_table_state *ts)
{
	(void)ts;
	if (em_top(e)->container)
		em_put_char(e, ']');
}

/* The bytes a JSON string cannot hold as they are (controls, '"', '\\')
   and the end of a C string.  */
static const bool stops[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1,
	[0x06] = 1, [0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1,
	[0x0c] = 1, [0x0d] = 1, [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1,
	[0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
	[0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1,
	[0x1e] = 1, [0x1f] = 1, ['"'] = 1, ['\\'] = 1,
};

/* A short string that needs no escaping, at p; NULL when s is not one
   (the caller then takes the general path).  */
static char *plain_string(char *p, const char *s)
{
	*p++ = '"';
	for (unsigned n = 0; n < EM_CELL_STR_MAX; n++) {
		unsigned char c = (unsigned char)s[n];
		/* Non-ASCII bytes take the general path, which checks
		   that they are UTF-8.  */
		if (stops[c] || c >= 0x80) {
			if (c)
				return NULL;
			p[n] = '"';
			return p + n + 1;
		}
		p[n] = (char)c;
	}
	return NULL;
}

/* The members of a row, after its '{'.  This is the loop `chunks --json`
   spends its time in: one reservation per row, each key a fixed-size
   copy of its precomputed ,"key":, numbers written in place behind it.
   Returns whether a member was written.  */
static bool members(struct hw_emitter *e, const struct em_table_state *ts,
		    const struct em_val *v)
{
	const struct em_table *t = ts->t;
	char *p = em_reserve(e, ts->row_max);
	unsigned first = 1;
	for (unsigned k = 0; k < ts->ncells; k++) {
		const struct em_cell_plan *cp = &ts->cells[k];
		unsigned i = cp->col;
		const struct em_val *x = &v[i];
		if (x->kind == EM_K_ABSENT || x->only == EM_TEXT_ONLY)
			continue;
		if (!cp->general) {
			memcpy(p, cp->lead + first, EM_LEAD_MAX);
			p += cp->leadlen - first;
			first = 0;
			switch (x->kind) {
			case EM_K_U64:
				p = fmt_dec(p, x->u);
				continue;
			case EM_K_I64:
				p = fmt_i64(p, x->i);
				continue;
			case EM_K_ADDR:
				memcpy(p, "\"0x", 3);
				p = fmt_hex(p + 3, x->u, 0);
				*p++ = '"';
				continue;
			case EM_K_STR: {
				if (x->nids) {  /* a word: one copy */
					*p = '"';
					memcpy(p + 1, x->s, EM_WORD_ROOM);
					p += 1 + x->nids;
					*p++ = '"';
					continue;
				}
				char *q = plain_string(p, x->s);
				if (q) {
					p = q;
					continue;
				}
				break;
			}
			default:
				break;
			}
			em_advance_to(e, p);
		} else {
			em_advance_to(e, p);
			if (!first)
				em_put_char(e, ',');
			first = 0;
			em_put_char(e, '"');
			em_put_str(e, t->cols[i].key);
			EM_PUT_LIT(e, "\":");
		}
		value(e, &t->cols[i], x);
		p = em_reserve(e, ts->row_max);
	}
	em_advance_to(e, p);
	return !first;
}

static void row(struct hw_emitter *e, const struct em_table_state *ts,
		const char *key, const struct em_val *v)
{
	if (ts->t->flags & EM_TB_LINES) {
		em_put_char(e, '{');
		members(e, ts, v);
		EM_PUT_LIT(e, "}\n");
		return;
	}
	prefix(e, container(e, e->depth), key, key ? strlen(key) : 0);
	em_put_char(e, '{');
	members(e, ts, v);
	em_put_char(e, '}');
}

/* A packed row (emit.h): the loop of members() without a value's kind
   to ask, cell by cell, or a cell to skip.  */
/* Whether a value of this kind opens with a quote (and so closes with
   one).  */
static bool quoted(uint8_t kind)
{
	return kind == EM_K_ADDR || kind == EM_K_STR;
}

/* Work out the plan for rows with the columns `cols` into pl.  */
static void make_row_plan(const struct em_table_state *ts, uint32_t cols,
			  struct em_row_plan *pl)
{
	bool lines = ts->t->flags & EM_TB_LINES, open = false;
	pl->cols = cols;
	pl->usable = true;
	pl->nsteps = 0;
	for (uint32_t m = cols; m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);
		const struct em_cell_plan *cp = &ts->cells[ts->cell_of[i]];
		struct em_step *st = &pl->steps[pl->nsteps];
		size_t n = (size_t)open + cp->leadlen +
			   (cp->kind == EM_K_ADDR ? 3 : quoted(cp->kind));
		if (n > EM_STEP_LEAD) {
			pl->usable = false;
			return;
		}
		char *q = st->lead;
		if (open)
			*q++ = '"';
		memcpy(q, cp->lead, cp->leadlen);
		if (!pl->nsteps)
			*q = '{';
		q += cp->leadlen;
		if (cp->kind == EM_K_ADDR)
			memcpy(q, "\"0x", 3);
		else if (cp->kind == EM_K_STR)
			*q = '"';
		st->kind = cp->kind;
		st->col = (uint8_t)i;
		st->cell = ts->cell_of[i];
		st->leadlen = (uint8_t)n;
		open = quoted(cp->kind);
		pl->nsteps++;
	}
	char *t = pl->tail;
	if (open)
		*t++ = '"';
	else if (!pl->nsteps)
		*t++ = '{';
	*t++ = '}';
	if (lines)
		*t++ = '\n';
	pl->taillen = (uint8_t)(t - pl->tail);
}

/* The plan for rows with the columns `cols`: made now if the table has
   none for them yet.  */
static const struct em_row_plan *row_plan(struct em_table_state *ts,
					  uint32_t cols)
{
	for (unsigned k = 0; k < ts->nplans; k++)
		if (ts->plans[k].cols == cols)
			return &ts->plans[k];
	struct em_row_plan *pl;
	if (ts->nplans < EM_ROW_PLANS) {
		pl = &ts->plans[ts->nplans++];
	} else {
		pl = &ts->plans[ts->next_plan];
		ts->next_plan = (uint8_t)((ts->next_plan + 1) % EM_ROW_PLANS);
	}
	make_row_plan(ts, cols, pl);
	return pl;
}

/* A packed cell's value at p, bare (an address without its quotes and
   "0x", a word without its quotes); returns the end.  The cell's plan
   (cells[cell]) is looked at for a word only.  */
static inline __attribute__((always_inline)) char *
packed_value(char *p, uint8_t kind, uint64_t w,
	     const struct em_cell_plan *cells, unsigned cell)
{
	switch (kind) {
	case EM_K_U64:
		return fmt_dec(p, w);
	case EM_K_I64:
		return fmt_i64(p, (int64_t)w);
	case EM_K_ADDR:
		return fmt_hex(p, w, 0);
	case EM_K_BOOL:
		if (w) {
			memcpy(p, "true", 4);
			return p + 4;
		}
		memcpy(p, "false", 5);
		return p + 5;
	default: { /* EM_K_STR: a word; past the words, the last */
		const struct em_cell_plan *cp = &cells[cell];
		unsigned k = em_word_index(w, cp->nwords);
		memcpy(p, cp->words + k * EM_WORD_ROOM, EM_WORD_ROOM);
		return p + cp->wordlen[k];
	}
	}
}

/* A packed row by its plan: a copy and a value per cell (the quotes
   are in the leads and the tail).  */
static char *planned_row(char *p, const struct em_table_state *ts,
			 const struct em_row_plan *pl,
			 const struct em_packed_row *r)
{
	for (const struct em_step *st = pl->steps, *end = st + pl->nsteps;
	     st < end; st++) {
		memcpy(p, st->lead, EM_STEP_LEAD);
		p = packed_value(p + st->leadlen, st->kind, r->w[st->col],
				 ts->cells, st->cell);
	}
	memcpy(p, pl->tail, sizeof pl->tail);
	return p + pl->taillen;
}

static void row_packed(struct hw_emitter *e, struct em_table_state *ts,
		       const struct em_packed_row *r)
{
	bool lines = ts->t->flags & EM_TB_LINES;
	if (!lines)
		prefix(e, container(e, e->depth), NULL, 0);
	uint32_t cols = r->cols & ~r->text_only & ts->packed_cols;
	const struct em_row_plan *pl = row_plan(ts, cols);
	char *row = em_reserve(e, ts->row_max), *p = row;
	if (pl->usable) {
		em_advance_to(e, planned_row(p, ts, pl, r));
		return;
	}
	/* Cell by cell, each with its comma (the first one's is made the
	   '{') and its value's quotes.  */
	*p = '{';
	for (uint32_t m = cols; m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);
		const struct em_cell_plan *cp = &ts->cells[ts->cell_of[i]];
		memcpy(p, cp->lead, EM_LEAD_MAX);
		p += cp->leadlen;
		if (cp->kind == EM_K_ADDR) {
			memcpy(p, "\"0x", 3);
			p += 3;
		} else if (cp->kind == EM_K_STR) {
			*p++ = '"';
		}
		p = packed_value(p, cp->kind, r->w[i], ts->cells,
				 ts->cell_of[i]);
		if (quoted(cp->kind))
			*p++ = '"';
	}
	if (p == row)
		p++;
	*row = '{';
	*p++ = '}';
	if (lines)
		*p++ = '\n';
	em_advance_to(e, p);
}

static void row_open(struct hw_emitter *e, const struct em_table_state *ts,
		     const struct em_val *v)
{
	open_container(e, NULL, '{');
	em_top(e)->comma = members(e, ts, v);
}

static void row_close(struct hw_emitter *e, const struct em_table_state *ts)
{
	(void)ts;
	em_put_char(e, '}');
}

static void note(struct hw_emitter *e, const char *text, size_t len)
{
	/* Prose is the text form's; emit.c does not pass it here.  */
	(void)e, (void)text, (void)len;
}

/* A verbatim document is a string member.  */
static void verbatim_begin(struct hw_emitter *e, const char *key)
{
	prefix(e, container(e, e->depth), key, strlen(key));
	em_put_char(e, '"');
}

static void verbatim(struct hw_emitter *e, const char *s, size_t len)
{
	string_body(e, s, len);
}

static void verbatim_end(struct hw_emitter *e)
{
	em_put_char(e, '"');
}

const struct em_renderer em_json_renderer = {
	.doc_begin = doc_begin,
	.doc_end = doc_end,
	.section_begin = section_begin,
	.section_end = section_end,
	.item_begin = item_begin,
	.item_end = item_end,
	.kv = kv,
	.table_begin = table_begin,
	.table_end = table_end,
	.row = row,
	.row_packed = row_packed,
	.row_open = row_open,
	.row_close = row_close,
	.note = note,
	.verbatim_begin = verbatim_begin,
	.verbatim = verbatim,
	.verbatim_end = verbatim_end,
};

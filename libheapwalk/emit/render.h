/* render.h - inside the emitter: its state, the output buffer, and the
 * interface a renderer implements.  Only emit.c and the renderers
 * (text.c, json.c) include this; commands see emit.h.
 *
 * emit.c keeps the structure (a stack of frames: document, sections,
 * tables, rows), drops records that the active form does not show, and
 * calls the renderer.  A renderer writes bytes with the buffer helpers
 * below; they hand full buffers to the sink.
 */
#ifndef HW_RENDER_H
#define HW_RENDER_H

#include <string.h>

#include "emit.h"

/* 256 KiB: big enough that a sink sees few, large writes.  */
#define EM_BUF_SIZE (256 * 1024)
#define EM_DEPTH 32
#define EM_TABLE_DEPTH 4

enum em_frame_kind {
	EM_F_ROOT,
	EM_F_DOC,
	EM_F_SECTION,
	EM_F_LIST,
	EM_F_ITEM,
	EM_F_TABLE,
	EM_F_ROW,
};

struct em_frame {
	uint8_t kind;                 /* enum em_frame_kind */
	bool hidden;                  /* the active form does not show it */
	const struct em_section *section;
	/* JSON: the frame opened an object or array (else its members
	   belong to the enclosing one), and one was written in it.  */
	bool container, comma;
	/* Text: the layout of key/value lines inside; lists: whether the
	   next element is the first (it carries the title).  */
	uint8_t indent, label_width;
	bool first;
};

/* What a renderer works out once per table, so that a row is a walk
   over a short array: the cells it writes, in its order, each with the
   bytes that come before its value (JSON: ,"key":  text: the join and
   `pre`) and after it (text: `post`), copied at a fixed size, and what
   text needs of the column to write a number in place.  A cell whose
   pieces do not fit takes the general path.  */
#define EM_LEAD_MAX 32
#define EM_POST_MAX 16
/* A string cell longer than this takes the general path.  */
#define EM_CELL_STR_MAX 64
/* A packed column of more words than this is unpacked (emit.c).  */
#define EM_MAX_WORDS 32

/* The word a packed word column's value w names, of its nwords (at
   least one): an index past the words is the last one.  */
static inline unsigned em_word_index(uint64_t w, unsigned nwords)
{
	return w < nwords ? (unsigned)w : nwords - 1u;
}

struct em_cell_plan {
	uint8_t col;                  /* into the columns and a row's values */
	uint8_t leadlen, postlen;
	bool general;
	bool number;                  /* text: counts and addresses as digits */
	uint8_t form, digits;         /* text: the column's */
	int8_t width;
	char lead[EM_LEAD_MAX + 1];
	char post[EM_POST_MAX];
	/* A packed table's column (emit.h: em_field.kind, words).  */
	uint8_t kind, nwords;
	const char *words;
	uint8_t wordlen[EM_MAX_WORDS];
};

/* A packed row's cells for one set of columns, worked out when a row
   first has that set (JSON): each step's lead is every byte before its
   value -- the close of the value before it (its quote), the comma (the
   first cell: the row's '{'), the key, and the open of its own value
   ('"' or "\"0x") -- so that a cell is one fixed-size copy and its
   number or word.  A table keeps a few sets (chunks: the common one,
   mmapped chunks', orphans').  */
#define EM_STEP_LEAD 32
#define EM_ROW_PLANS 4

struct em_step {
	uint8_t kind, col, cell, leadlen;
	char lead[EM_STEP_LEAD];
};

struct em_row_plan {
	uint32_t cols;                /* the set of columns it writes */
	bool usable;                  /* false: a lead too long for a step */
	uint8_t nsteps, taillen;
	char tail[4];                 /* the last close, '}', '\n' */
	struct em_step steps[EM_MAX_COLS];
};

struct em_table_state {
	const struct em_table *t;
	uint8_t ncells;
	bool idlines;                 /* text: a column is a line under the row */
	bool header_due;              /* text: the header waits for the first
					 row (an empty table has none) */
	/* Bytes a row can take on the fast path (one reservation covers
	   it), the slack of the fixed-size copies included.  */
	size_t row_max;
	/* Packed rows (em_row_packed): the renderer's row_packed takes this
	   table's; the columns it writes (bit i: column i), and each one's
	   cell.  */
	bool packed;
	uint32_t packed_cols;
	uint8_t cell_of[EM_MAX_COLS];
	struct em_cell_plan cells[EM_MAX_COLS];
	/* The row plans made so far (nplans of them; when full, the next
	   one made replaces plans[next_plan]).  */
	uint8_t nplans, next_plan;
	struct em_row_plan plans[EM_ROW_PLANS];
};

/* Text: what the current line holds.  */
enum em_line {
	EM_LINE_NONE,     /* no line open */
	EM_LINE_LABEL,    /* a label written, no value yet */
	EM_LINE_CONTENT,  /* a value written */
};

struct em_renderer {
	void (*doc_begin)(struct hw_emitter *e);
	void (*doc_end)(struct hw_emitter *e);
	/* Called after the frame is pushed / before it is popped.  */
	void (*section_begin)(struct hw_emitter *e, const struct em_section *s);
	void (*section_end)(struct hw_emitter *e, const struct em_section *s);
	void (*item_begin)(struct hw_emitter *e);
	void (*item_end)(struct hw_emitter *e);
	void (*kv)(struct hw_emitter *e, const struct em_field *f,
		   const struct em_val *v);
	/* table_begin fills *ts (after emit.c set ts->t).  */
	void (*table_begin)(struct hw_emitter *e, struct em_table_state *ts);
	void (*table_end)(struct hw_emitter *e, struct em_table_state *ts);
	/* The header now, if it is due (text; NULL: the form has none).  */
	void (*table_header)(struct hw_emitter *e,
			     const struct em_table_state *ts);
	/* A whole row; no frame is pushed for it (the hot path).  */
	void (*row)(struct hw_emitter *e, const struct em_table_state *ts,
		    const char *key, const struct em_val *v);
	/* A packed row, when table_begin set ts->packed (NULL: emit.c
	   unpacks it for row).  */
	void (*row_packed)(struct hw_emitter *e, struct em_table_state *ts,
			   const struct em_packed_row *r);
	/* A row with records nested in it: row_open runs after its frame
	   is pushed, row_close before it is popped.  */
	void (*row_open)(struct hw_emitter *e, const struct em_table_state *ts,
			 const struct em_val *v);
	void (*row_close)(struct hw_emitter *e, const struct em_table_state *ts);
	void (*note)(struct hw_emitter *e, const char *text, size_t len);
	/* em_verbatim_*: a document of another format, as it is.  */
	void (*verbatim_begin)(struct hw_emitter *e, const char *key);
	void (*verbatim)(struct hw_emitter *e, const char *s, size_t len);
	void (*verbatim_end)(struct hw_emitter *e);
};

extern const struct em_renderer em_text_renderer;
extern const struct em_renderer em_json_renderer;

struct hw_emitter {
	const struct em_renderer *r;
	struct hw_output out;
	uint8_t hide;                 /* records with this `only` are dropped */
	bool failed;                  /* the sink refused: output is dropped */
	int fd;                       /* em_open_file's file, else 0 */
	unsigned hidden;              /* open frames the form does not show */
	int depth;                    /* frames[depth] is the innermost */
	struct em_frame frames[EM_DEPTH];
	int ntables;
	struct em_table_state tables[EM_TABLE_DEPTH];
	enum em_line line;            /* text */
	unsigned row_colour;          /* text: EM_TB_ROW_COLOURS' next colour */
	size_t len;
	char *buf;                    /* EM_BUF_SIZE bytes */
};

static inline struct em_frame *em_top(struct hw_emitter *e)
{
	return &e->frames[e->depth];
}

/* Hand the buffer to the sink (or drop it once the sink has failed).  */
void em_flush(struct hw_emitter *e);

/* Room for n more bytes (n <= EM_BUF_SIZE): where to write them.  Write
   at most n, then em_advance() by what was written.  */
static inline char *em_reserve(struct hw_emitter *e, size_t n)
{
	if (__builtin_expect(e->len + n > EM_BUF_SIZE, 0))
		em_flush(e);
	return e->buf + e->len;
}

static inline void em_advance_to(struct hw_emitter *e, char *end)
{
	e->len = (size_t)(end - e->buf);
}

/* Any number of bytes.  */
void em_put_long(struct hw_emitter *e, const char *s, size_t n);

static inline void em_put(struct hw_emitter *e, const char *s, size_t n)
{
	if (__builtin_expect(n > 256, 0)) {
		em_put_long(e, s, n);
		return;
	}
	char *p = em_reserve(e, n);
	memcpy(p, s, n);
	e->len += n;
}

static inline void em_put_str(struct hw_emitter *e, const char *s)
{
	em_put(e, s, strlen(s));
}

static inline void em_put_char(struct hw_emitter *e, char c)
{
	char *p = em_reserve(e, 1);
	*p = c;
	e->len++;
}

/* n spaces.  */
void em_put_spaces(struct hw_emitter *e, size_t n);

/* A string literal, its length known when compiling.  */
#define EM_PUT_LIT(e, lit) em_put((e), "" lit, sizeof(lit) - 1)

/* The column of a table row shown in the i-th text position.  */
static inline unsigned em_text_col(const struct em_table *t, unsigned i)
{
	return t->text_order ? t->text_order[i] : i;
}

static inline unsigned em_text_ncols(const struct em_table *t)
{
	return t->text_order ? t->ntext : t->ncols;
}

#endif /* HW_RENDER_H */

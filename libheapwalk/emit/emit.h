/* emit.h - the report model: what a command says, once, for every form.
 *
 * A command emits typed records: a document, sections (a JSON object with
 * a text title), key/values whose type says how each form shows them (a
 * byte count is an integer in JSON and "1.5 MiB" in text), tables
 * declared by a column schema whose rows are emitted once, and notes,
 * the prose that only the text form has.  A renderer chosen when the
 * emitter is opened (text or JSON: emit/text.c, emit/json.c) turns them
 * into bytes, in a large buffer that is handed to the caller's sink
 * (struct hw_output: the CLI's stdout, gdb's output, or memory).
 *
 * No report asks which form it is writing.  Where the two forms really
 * differ (a value only JSON carries, a sentence only text has, or two
 * values the forms put in a different order), the record says so with
 * `only`, and the renderer that does not show it skips it.
 *
 * Text layout in brief: a key/value with a label starts a line ("label"
 * padded to the section's label width, a space, the value); one without
 * a label continues the current line after its `join`.  Table columns
 * are padded to their width and separated by their `join`.
 *
 * A line of summary, "arenas:    9" in text and "arenas":9 in JSON:
 *
 *	static const struct em_field F_ARENAS = {
 *		.key = "arenas", .label = "arenas:" };
 *	em_kv(e, &F_ARENAS, ev_u64(n));
 *
 * A table: its columns once (static const struct em_field COLS[]), then
 * em_table_begin(), one em_row() per row with a value per column, and
 * em_table_end().
 */
#ifndef HW_EMIT_H
#define HW_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../heapwalk.h"

struct hw_emitter;

/* Which forms show a record.  */
enum em_only {
	EM_BOTH = 0,
	EM_TEXT_ONLY = 1,
	EM_JSON_ONLY = 2,
};

/* How a value reads in text (JSON's form follows from the value's kind:
   numbers are integers, addresses "0x..." strings, ratios decimals).  */
enum em_text_form {
	EM_T_PLAIN,   /* decimal; an address as 0x...; a string as it is */
	EM_T_HUMAN,   /* a byte count as "1.5 MiB" */
	EM_T_HEX,     /* a number as 0x... (JSON keeps the integer) */
	EM_T_HEX0,    /* an address zero-padded to `digits` hex digits */
	EM_T_PCT,     /* a ratio as a percentage, `prec` decimals and "%" */
	EM_T_FIXED,   /* a ratio with `prec` decimals */
	EM_T_IDLINE,  /* ids as a line of their own under the current one:
			 `pre` `label` "a,b,c", wrapped before column 100;
			 nothing when there are none */
};

/* One key/value, or one table column.  Only `key` matters to JSON;
   everything else describes the text form.  Zero is a sensible default
   for every member.  */
struct em_field {
	const char *key;     /* JSON member name; NULL for array elements */
	const char *label;   /* text: a key/value's label (starts a line);
				a column's header */
	const char *join;    /* text: before a value that continues a line,
				or before a column; NULL: " " (a table's
				first column: "") */
	const char *pre;     /* text: just before the value */
	const char *post;    /* text: just after the value */
	const char *none;    /* text of a null or absent value; NULL leaves a
				key/value out of the text (join and all),
				and a cell empty */
	const char *yes, *no;/* text of a bool (default "yes", "no") */
	const char *noun;    /* text: a count followed by this noun, with
				"s" unless the count is 1 */
	int8_t width;        /* text: padded to |width|; > 0 right-aligned */
	uint8_t form;        /* enum em_text_form: how text shows it */
	uint8_t prec;        /* text decimals (EM_T_PCT, EM_T_FIXED) */
	uint8_t json_prec;   /* JSON decimals of a double */
	uint8_t digits;      /* EM_T_HEX0 */
	uint8_t only;        /* enum em_only */
	/* A column of a packed table (em_row_packed): what its values are
	   (enum em_kind: EM_K_U64, EM_K_I64, EM_K_ADDR, EM_K_BOOL, or
	   EM_K_STR for a column of words, whose value is an index into
	   `words`: nwords words of EM_WORD_ROOM bytes each, NUL-padded,
	   that need no escaping, as ev_word's).  */
	uint8_t kind;
	uint8_t nwords;
	const char *words;
};

/* A value.  Build one with the ev_* helpers below.  */
enum em_kind {
	EM_K_ABSENT,  /* JSON leaves the member out; text shows `none` */
	EM_K_NULL,    /* JSON null; text shows `none` */
	EM_K_U64,
	EM_K_I64,
	EM_K_ADDR,    /* a u64 that JSON writes as a "0x..." string */
	EM_K_DBL,
	EM_K_STR,
	EM_K_BOOL,
	EM_K_IDS,     /* a list of int32 ids: a JSON array */
};

/* 24 bytes: a `chunks` row is nine of them, written and read back for
   each of millions of blocks.  */
struct em_val {
	uint8_t kind;        /* enum em_kind */
	uint8_t only;        /* enum em_only: this value in one form only */
	uint32_t nids;       /* EM_K_IDS: how many; EM_K_STR: a word's
				length (ev_word), 0 for any other string */
	const char *text;    /* text form to show instead of the typed one
				(still padded, with pre and post) */
	union {
		uint64_t u;
		int64_t i;
		double d;
		const char *s;
		bool b;
		const int32_t *ids;
	};
};

/* ev_* ("emitted value"): the values a record or a row cell carries.
   They are compound literals, not functions, so that a row built in a hot
   loop is stored straight into its array (a returned 32-byte struct goes
   through the stack and stalls).  */
#define ev_u64(x) ((struct em_val){ .kind = EM_K_U64, .u = (x) })
#define ev_i64(x) ((struct em_val){ .kind = EM_K_I64, .i = (x) })
#define ev_addr(x) ((struct em_val){ .kind = EM_K_ADDR, .u = (x) })
#define ev_dbl(x) ((struct em_val){ .kind = EM_K_DBL, .d = (x) })
/* The string must live until the record is emitted (it is not copied).  */
#define ev_str(x) ((struct em_val){ .kind = EM_K_STR, .s = (x) })
/* A word: a string of len (1 to EM_WORD_ROOM - 1) bytes that need no
   escaping in any form (letters, digits, '-', '_'), stored in at least
   EM_WORD_ROOM readable bytes, so that a renderer copies it as one
   fixed-size block instead of scanning it byte by byte (`chunks`' state
   and place columns, ten million times).  */
#define EM_WORD_ROOM 16
#define ev_word(x, len) \
	((struct em_val){ .kind = EM_K_STR, .nids = (uint32_t)(len), .s = (x) })
#define ev_bool(x) ((struct em_val){ .kind = EM_K_BOOL, .b = (x) })
#define ev_null() ((struct em_val){ .kind = EM_K_NULL })
#define ev_absent() ((struct em_val){ .kind = EM_K_ABSENT })
#define ev_ids(p, count) \
	((struct em_val){ .kind = EM_K_IDS, .nids = (uint32_t)(count), \
			  .ids = (p) })

/* An address that was not found (0) is null.  */
static inline struct em_val ev_addr_or_null(uint64_t v)
{
	return v ? ev_addr(v) : ev_null();
}
/* v, shown in text as `text` (a label built from several values, a
   count with a noun chosen at run time).  */
static inline struct em_val ev_text(struct em_val v, const char *text)
{
	v.text = text;
	return v;
}
/* v in one form only (the other leaves the member out / the cell
   empty).  */
static inline struct em_val ev_only(struct em_val v, enum em_only only)
{
	v.only = (uint8_t)only;
	return v;
}

/* A section: a JSON object (or array, EM_S_LIST) named `key`, shown in
   text under `title`.  */
enum {
	EM_S_LINE = 1,  /* text: one line, `title` its label, the members
			   continuing it ("in use:   12 chunks  1.5 MiB") */
	EM_S_LIST = 2,  /* JSON: an array; text: one line per element, the
			   first labelled `title`, the others aligned */
};

struct em_section {
	const char *key;        /* NULL: no JSON object, only a text layout */
	const char *title;      /* text line before the members (NULL: none) */
	uint8_t indent;         /* text: members' indent (0: as the parent) */
	uint8_t label_width;    /* text: labels padded to this (0: as the parent) */
	uint8_t flags;          /* EM_S_* */
	uint8_t only;           /* enum em_only */
};

/* A table: its columns, in JSON member order.  */
enum {
	EM_TB_LINES = 1,      /* JSON Lines: each row a top-level object on a
				 line of its own (streamable) */
	EM_TB_NO_HEADER = 2,  /* text: no header line */
	EM_TB_ROW_COLOURS = 4,/* text on a terminal that asked for colour:
				 each row opened with em_row_open, and what
				 it holds, in the next of a few colours (as
				 pwndbg's vis_heap_chunks tells chunks apart) */
};

#define EM_MAX_COLS 24

struct em_table {
	const char *key;             /* JSON: the rows are the array `key`;
					NULL: rows go where they are emitted */
	const char *title;           /* text: a line before the header */
	const struct em_field *cols;
	uint8_t ncols;               /* <= EM_MAX_COLS */
	const uint8_t *text_order;   /* text: columns in this order (indexes
					into cols); NULL: as in cols */
	uint8_t ntext;
	uint8_t flags;               /* EM_TB_* */
	uint8_t only;                /* enum em_only */
};

/* A caller's struct hw_output as this library reads it: copied into
   *out, the fields past its `sz` zero.  False when it is not one the
   library can write (no size, no write function, an unknown form).  */
bool em_output_of(const struct hw_output *given, struct hw_output *out);
/* Open an emitter writing to `out` in the form out->form asks for.  NULL
   when out of memory.  */
struct hw_emitter *em_open(const struct hw_output *out);
/* An emitter writing the text form to a new file at path (created or
   truncated), closed by em_close(); NULL with *err an errno value.  For
   documents a command writes to a file of the user's (prof -o).  */
struct hw_emitter *em_open_file(const char *path, int *err);
/* Flush, free.  Returns false if the sink failed at any point.  */
bool em_close(struct hw_emitter *e);
/* The sink refused output: a long report should stop producing.  */
bool em_failed(const struct hw_emitter *e);

/* A report's document: JSON's one object on one line.  */
void em_doc_begin(struct hw_emitter *e);
void em_doc_end(struct hw_emitter *e);

/* Sections nest; `s` must live until its em_section_end().  */
void em_section_begin(struct hw_emitter *e, const struct em_section *s);
void em_section_end(struct hw_emitter *e);
/* One object element of an EM_S_LIST section (text: one line).  */
void em_item_begin(struct hw_emitter *e);
void em_item_end(struct hw_emitter *e);

void em_kv(struct hw_emitter *e, const struct em_field *f, struct em_val v);

/* Text: the title and header; JSON: opens the array when t has a key.
   Tables nest (a row may hold a table), four deep; `t` and its columns
   must live until em_table_end().  */
void em_table_begin(struct hw_emitter *e, const struct em_table *t);
void em_table_end(struct hw_emitter *e);
/* A row of the innermost table: v[i] is the value of column i.  */
void em_row(struct hw_emitter *e, const struct em_val *v);
/* Do rows em_row()'d now reach the output?  False inside a table the
   form does not show (EM_JSON_ONLY in text): a caller of millions of
   rows may skip making their values.  */
bool em_rows_shown(const struct hw_emitter *e);
/* Packed rows, for the tables of millions of rows (`chunks`): every
   column's kind is fixed by its em_field (`kind`, `words`), and a row is
   one 64-bit word per column and which columns have a value, so that a
   renderer writes it without asking each cell what it is.  */
struct em_packed_row {
	uint32_t cols;       /* bit i: column i has a value (else absent) */
	uint32_t text_only;  /* bit i: column i's value is EM_TEXT_ONLY */
	uint64_t w[EM_MAX_COLS];
};
void em_row_packed(struct hw_emitter *e, const struct em_packed_row *r);
/* The values of packed row r of the ncols columns cols, as em_row
   takes them.  */
void em_unpack(const struct em_field *cols, unsigned ncols,
	       const struct em_packed_row *r, struct em_val *v);
/* A row that is a member `key` of the enclosing object (key NULL: an
   element), or shown in one form only.  */
void em_row_as(struct hw_emitter *e, const char *key, const struct em_val *v,
	       enum em_only only);
/* A row with records inside it (JSON: more members of the row's object;
   text: lines under the row's).  Close with em_row_close().  */
void em_row_open(struct hw_emitter *e, const struct em_val *v);
void em_row_close(struct hw_emitter *e);

/* Rows of one table rendered in several threads: a fork is a copy of
   e's state inside its innermost table, writing into memory; rows are
   em_row()'d on it in another thread, and em_fork_drain() hands what it
   wrote to e's sink, in the order the caller drains its forks (one at a
   time).  The text header, if the table's is still due, goes out before
   the first bytes drained.  NULL when out of memory.  */
struct hw_emitter *em_fork(const struct hw_emitter *e);
void em_fork_drain(struct hw_emitter *e, struct hw_emitter *fork);
void em_fork_close(struct hw_emitter *fork);

/* A document in a format of its own (a heap_v2 profile, flame graph
   input), written as it is: text writes the bytes unchanged, JSON a
   string member `key` holding them (any bytes not UTF-8 become U+FFFD).
   Pieces must not split a UTF-8 sequence.  */
void em_verbatim_begin(struct hw_emitter *e, const char *key);
void em_verbatim(struct hw_emitter *e, const char *s, size_t len);
void em_verbatim_end(struct hw_emitter *e);

/* Text only: prose the JSON form has no place for (legends, hints,
   "(partial: ...)").  A newline is added.  */
void em_note(struct hw_emitter *e, const char *text);
void em_notef(struct hw_emitter *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A sink into memory, for tests and front ends that print elsewhere:
   struct hw_output out = { .sz = sizeof out, .write = em_membuf_write,
   .cookie = &buf, .form = HW_FORM_JSON }.  The text is NUL-terminated;
   free(buf.data) when done.  */
struct em_membuf {
	char *data;
	size_t len, cap;
};
bool em_membuf_write(void *cookie, const char *data, size_t len);

/* "1.5 MiB"-style size into buf (>= 16 bytes); returns buf.  */
const char *hw_human(char *buf, size_t len, uint64_t bytes);

#endif /* HW_EMIT_H */

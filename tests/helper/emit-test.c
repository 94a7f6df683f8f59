/* emit-test - the report model and its renderers, without a core.
 *
 * Each case emits its records once and checks both forms against the
 * text written here by hand: layout of key/values and sections, tables
 * (text order, one-form columns, absent values, keyed rows, nesting, id
 * lines), packed rows (the row plans, their limits), JSON escaping, the fast paths' limits (long
 * strings and keys), number formatting against printf (SSE2 or not),
 * buffering past the emitter's buffer, and a sink that fails.  Built and run by tests/t0026-emitter.sh with
 * ASan and UBSan.  Prints "ok N cases" or the first differences; exits 1
 * on any.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit/emit.h"
#include "emit/format.h"

#define LONG_KEY_P "a_member_name_longer_than_the_fast_path_allows"

static int failures, cases;

/* Run fn with an emitter of one form; the output, NUL-terminated.  */
static char *render(void (*fn)(struct hw_emitter *), bool json)
{
	struct em_membuf buf = { 0 };
	struct hw_output out = { .sz = sizeof out, .write = em_membuf_write,
				 .cookie = &buf,
				 .form = json ? HW_FORM_JSON : HW_FORM_TEXT };
	struct hw_emitter *e = em_open(&out);
	if (!e) {
		fprintf(stderr, "em_open failed\n");
		exit(1);
	}
	fn(e);
	if (!em_close(e)) {
		fprintf(stderr, "em_close reports a failed sink\n");
		failures++;
	}
	return buf.data ? buf.data : calloc(1, 1);
}

static void expect(const char *name, const char *form, const char *got,
		   const char *want)
{
	if (strcmp(got, want) == 0)
		return;
	failures++;
	fprintf(stderr, "FAIL %s (%s)\n--- want:\n%s--- got:\n%s---\n", name,
		form, want, got);
}

static void check(const char *name, void (*fn)(struct hw_emitter *),
		  const char *text, const char *json)
{
	char *t = render(fn, false), *j = render(fn, true);
	cases++;
	expect(name, "text", t, text);
	expect(name, "json", j, json);
	free(t);
	free(j);
}

/* ---- key/values and sections -------------------------------------------- */

static const struct em_section LAYOUT = { .label_width = 12 };
static const struct em_field F_NAME = { .key = "name", .label = "name:" };
static const struct em_field F_VER = { .key = "version" };
static const struct em_field F_ARCH = { .key = "arch", .join = " (", .post = ")" };
static const struct em_field F_HEAPS = {
	.key = "heaps", .label = "layout:", .noun = "heap" };
static const struct em_field F_CACHES = {
	.key = "caches", .join = ", ", .noun = "cache" };
static const struct em_field F_SIZE = {
	.key = "size", .label = "size:", .form = EM_T_HUMAN, .width = 10 };
static const struct em_field F_ROOT = { .key = "root", .label = "root:" };
static const struct em_field F_GONE = { .key = "gone", .label = "gone:" };
static const struct em_field F_MAYBE = {
	.key = "maybe", .label = "maybe:", .none = "?" };
static const struct em_field F_FLAG = {
	.key = "flag", .join = "", .yes = " [set]", .no = "" };
static const struct em_field F_TEXT_ONLY = {
	.label = "note:", .only = EM_TEXT_ONLY };
static const struct em_field F_JSON_ONLY = {
	.key = "hidden", .only = EM_JSON_ONLY };
static const struct em_field F_RATIO = {
	.key = "ratio", .label = "ratio:", .form = EM_T_PCT, .prec = 1,
	.json_prec = 4 };
static const struct em_section S_INNER = {
	.key = "inner", .title = "inner stats:", .indent = 2, .label_width = 6 };
static const struct em_field F_A = { .key = "a", .label = "a" };
static const struct em_section S_LINE = {
	.key = "used", .title = "in use:", .flags = EM_S_LINE };
static const struct em_field F_COUNT = { .key = "count", .width = 6 };
static const struct em_field F_BYTES = {
	.key = "bytes", .width = 9, .form = EM_T_HUMAN };
static const struct em_section S_LIST = {
	.key = "things", .title = "things:", .flags = EM_S_LIST };
static const struct em_field F_ELEM = { 0 };
static const struct em_field F_INDEX = { .key = "i", .post = ":" };
static const struct em_field F_ITEM_NAME = { .key = "name" };

static void kvs(struct hw_emitter *e)
{
	em_doc_begin(e);
	em_section_begin(e, &LAYOUT);
	em_kv(e, &F_NAME, ev_str("ptmalloc"));
	em_kv(e, &F_VER, ev_str("2.36"));
	em_kv(e, &F_ARCH, ev_str("x86_64"));
	em_kv(e, &F_HEAPS, ev_u64(1));
	em_kv(e, &F_CACHES, ev_u64(3));
	em_kv(e, &F_SIZE, ev_u64(1536));
	em_kv(e, &F_ROOT, ev_addr(0x7f00));
	em_kv(e, &F_GONE, ev_null());          /* text: left out */
	em_kv(e, &F_MAYBE, ev_addr_or_null(0));
	em_kv(e, &F_FLAG, ev_bool(true));
	em_kv(e, &F_TEXT_ONLY, ev_str("text alone"));
	em_kv(e, &F_JSON_ONLY, ev_i64(-5));
	em_kv(e, &F_RATIO, ev_dbl(0.12346));
	em_section_begin(e, &S_INNER);
	em_kv(e, &F_A, ev_text(ev_u64(7), "seven"));
	em_section_end(e);
	em_section_begin(e, &S_LINE);
	em_kv(e, &F_COUNT, ev_u64(12));
	em_kv(e, &F_BYTES, ev_u64(2048));
	em_section_end(e);
	em_section_begin(e, &S_LIST);
	em_kv(e, &F_ELEM, ev_str("one"));
	em_kv(e, &F_ELEM, ev_str("two"));
	em_section_end(e);
	em_section_begin(e, &(struct em_section){ .key = "items",
		.title = "items:", .flags = EM_S_LIST });
	for (int i = 1; i <= 2; i++) {
		em_item_begin(e);
		em_kv(e, &F_INDEX, ev_u64((uint64_t)i));
		em_kv(e, &F_ITEM_NAME, ev_str(i == 1 ? "a" : "b"));
		em_item_end(e);
	}
	em_section_end(e);
	em_note(e, "a note");
	em_section_end(e);
	em_doc_end(e);
}

/* ---- tables ------------------------------------------------------------- */

enum { C_ID, C_ADDR, C_NAME, C_HIDDEN, C_SIZE, C_OWNER, C_HEX, C_IDS, NC };
static const struct em_field COLS[NC] = {
	[C_ID] = { .key = "id", .label = "id", .width = 3 },
	[C_ADDR] = { .key = "addr", .label = "address", .join = "  ",
		     .width = -18, .form = EM_T_HEX0, .digits = 16 },
	[C_NAME] = { .key = "name", .label = "name", .width = -6 },
	[C_HIDDEN] = { .key = "secret", .only = EM_JSON_ONLY },
	[C_SIZE] = { .key = "size", .label = "size", .width = 9,
		     .form = EM_T_HUMAN },
	[C_OWNER] = { .label = "owner", .width = -8, .only = EM_TEXT_ONLY },
	[C_HEX] = { .key = "cs", .label = "cs", .width = 6, .form = EM_T_HEX,
		    .none = "-" },
	[C_IDS] = { .key = "tids", .label = "threads", .pre = "    ",
		    .form = EM_T_IDLINE },
};
/* Text shows size before name.  */
static const uint8_t ORDER[] = { C_ID, C_ADDR, C_SIZE, C_NAME, C_OWNER, C_HEX };
static const struct em_table TABLE = {
	.key = "rows", .title = "the rows:", .cols = COLS, .ncols = NC,
	.text_order = ORDER, .ntext = sizeof ORDER };
static const struct em_field SUB_COLS[] = {
	{ .key = "start", .join = "    sub " },
	{ .key = "end", .join = "-" },
};
static const struct em_table SUB = {
	.key = "subs", .cols = SUB_COLS, .ncols = 2, .flags = EM_TB_NO_HEADER };

static void table(struct hw_emitter *e)
{
	static const int32_t tids[] = { 101, 102, -3 };
	/* Enough ids to wrap: 30 of 5 digits.  */
	static int32_t many[30];
	for (int i = 0; i < 30; i++)
		many[i] = 10000 + i;
	em_doc_begin(e);
	em_table_begin(e, &TABLE);
	const struct em_val r1[NC] = {
		[C_ID] = ev_u64(1), [C_ADDR] = ev_addr(0x55aa10),
		[C_NAME] = ev_str("heap"), [C_HIDDEN] = ev_u64(9),
		[C_SIZE] = ev_u64(100), [C_OWNER] = ev_str("arena 0"),
		[C_HEX] = ev_u64(0x30), [C_IDS] = ev_ids(tids, 3),
	};
	em_row(e, r1);
	const struct em_val r2[NC] = {
		[C_ID] = ev_u64(22), [C_ADDR] = ev_addr(UINT64_MAX),
		[C_NAME] = ev_str("q\"\\\n"), [C_HIDDEN] = ev_absent(),
		[C_SIZE] = ev_u64(3 << 20), [C_OWNER] = ev_str("thread ?"),
		[C_HEX] = ev_absent(), [C_IDS] = ev_null(),
	};
	em_row_open(e, r2);
	em_table_begin(e, &SUB);
	em_row(e, (const struct em_val[]){ ev_addr(0x1000), ev_addr(0x2000) });
	em_table_end(e);
	em_row_close(e);
	const struct em_val r3[NC] = {
		[C_ID] = ev_only(ev_u64(3), EM_TEXT_ONLY),
		[C_ADDR] = ev_addr(0), [C_NAME] = ev_str("x"),
		[C_HIDDEN] = ev_u64(0), [C_SIZE] = ev_u64(0),
		[C_OWNER] = ev_str(""), [C_HEX] = ev_u64(0),
		[C_IDS] = ev_ids(many, 30),
	};
	em_row(e, r3);
	em_table_end(e);
	/* A row as a member: the table's array is closed.  */
	em_table_begin(e, &(struct em_table){ .cols = COLS, .ncols = NC,
		.flags = EM_TB_NO_HEADER });
	em_row_as(e, "total", r1, EM_BOTH);
	em_row_as(e, "text", r1, EM_TEXT_ONLY);
	em_table_end(e);
	em_doc_end(e);
}

static const struct em_field LINE_COLS[] = {
	{ .key = "a", .label = "a", .width = -4, .form = EM_T_HEX0, .digits = 4 },
	{ .key = "b", .label = "b", .width = 5 },
	{ .key = "c", .label = "c", .join = "  ", .width = 6, .form = EM_T_FIXED,
	  .prec = 2, .json_prec = 3 },
};
static const struct em_table LINES = {
	.cols = LINE_COLS, .ncols = 3, .flags = EM_TB_LINES };

static void lines(struct hw_emitter *e)
{
	em_table_begin(e, &LINES);
	for (int i = 0; i < 3; i++)
		em_row(e, (const struct em_val[]){ ev_addr((uint64_t)i * 0x11),
			ev_i64(-i), ev_dbl(i / 3.0) });
	em_table_end(e);
	em_note(e, "(the end)");
}

/* ---- packed rows -------------------------------------------------------- */

static const char STATE_WORDS[3][EM_WORD_ROOM] = { "free", "used", "?" };
static const struct em_field PACKED_COLS[] = {
	{ .key = "addr", .label = "address", .width = -10, .form = EM_T_HEX0,
	  .digits = 8, .kind = EM_K_ADDR },
	{ .key = "size", .label = "size", .width = 6, .kind = EM_K_U64 },
	{ .key = "state", .label = "state", .width = -5, .kind = EM_K_STR,
	  .words = STATE_WORDS[0], .nwords = 3 },
	{ .key = "arena", .label = "arena", .width = 5, .kind = EM_K_I64 },
	{ .key = "extent", .only = EM_JSON_ONLY, .kind = EM_K_ADDR },
	{ .key = "chunk", .label = "chunk", .width = 8, .kind = EM_K_ADDR },
	{ .key = "orphaned", .only = EM_JSON_ONLY, .kind = EM_K_BOOL },
	{ .label = "t", .width = 2, .only = EM_TEXT_ONLY, .kind = EM_K_U64 },
};
static const struct em_table PACKED_LINES = {
	.cols = PACKED_COLS, .ncols = 8, .flags = EM_TB_LINES };
static const struct em_table PACKED_KEYED = {
	.key = "rows", .cols = PACKED_COLS, .ncols = 8, .flags = EM_TB_NO_HEADER };
/* A key too long for the fast path: every row unpacked.  */
static const struct em_field PACKED_LONG_COLS[] = {
	{ .key = LONG_KEY_P, .label = "k", .width = 3, .kind = EM_K_U64 },
	{ .key = "b", .label = "b", .width = 2, .kind = EM_K_BOOL },
};
static const struct em_table PACKED_LONG = {
	.key = "long", .cols = PACKED_LONG_COLS, .ncols = 2,
	.flags = EM_TB_NO_HEADER };

/* A key that fits a cell's lead but not a step's (row plans, json.c):
   with the quote before it and the "0x after it, 34 bytes.  */
static const struct em_field PACKED_EDGE_COLS[] = {
	{ .key = "s", .label = "s", .width = -4, .kind = EM_K_STR,
	  .words = STATE_WORDS[0], .nwords = 3 },
	{ .key = "address_of_the_block_start", .label = "a", .width = 6,
	  .kind = EM_K_ADDR },
};
static const struct em_table PACKED_EDGE = {
	.key = "edge", .cols = PACKED_EDGE_COLS, .ncols = 2,
	.flags = EM_TB_NO_HEADER };

static void packed_rows(struct hw_emitter *e)
{
	static const struct em_packed_row rows[] = {
		/* every column */
		{ .cols = 0xff, .w = { 0x55aa10, 100, 1, 0, 0xe0, 0x55aa00, 1,
				       7 } },
		/* extent absent; chunk in text only; a negative arena; a
		   word index past the words (the last one) */
		{ .cols = 0xaf, .text_only = 0x20,
		  .w = { 0xffffffffffffffff, 0, 9, (uint64_t)-1, 0, 0x10, 0,
			 8 } },
		/* nothing at all */
		{ .cols = 0 },
		/* no value for the first column */
		{ .cols = 0x06, .w = { 0, 18446744073709551615ull, 0 } },
		/* a fifth and a sixth set of columns: the table's first
		   plans make way for them */
		{ .cols = 0x01, .w = { 0x1000 } },
		{ .cols = 0x41, .w = { 0x2000, 0, 0, 0, 0, 0, 0 } },
	};
	em_table_begin(e, &PACKED_LINES);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		em_row_packed(e, &rows[i]);
	/* the first set again, its plan made anew */
	em_row_packed(e, &rows[0]);
	em_table_end(e);
	em_doc_begin(e);
	em_table_begin(e, &PACKED_KEYED);
	em_row_packed(e, &rows[0]);
	em_row_packed(e, &rows[1]);
	em_table_end(e);
	em_table_begin(e, &PACKED_LONG);
	em_row_packed(e, &(const struct em_packed_row){ .cols = 3,
							.w = { 5, 0 } });
	em_table_end(e);
	em_table_begin(e, &PACKED_EDGE);
	em_row_packed(e, &(const struct em_packed_row){ .cols = 3,
							.w = { 1, 0xabc } });
	em_row_packed(e, &(const struct em_packed_row){ .cols = 2,
							.w = { 0, 0xd } });
	em_table_end(e);
	em_doc_end(e);
}

/* ---- the fast paths' limits -------------------------------------------- */

#define LONG_KEY "a_member_name_longer_than_the_fast_path_allows"
#define LONG_STR "a string longer than sixty-four bytes, which takes the " \
		 "general path of both renderers"
static const struct em_field LIMIT_COLS[] = {
	{ .key = LONG_KEY, .label = "k", .width = 3 },
	{ .key = "s", .label = "s", .width = -5 },
	{ .key = "t", .label = "t", .join = "                                   x" },
};
static const struct em_table LIMITS = {
	.key = "l", .cols = LIMIT_COLS, .ncols = 3 };

static void limits(struct hw_emitter *e)
{
	em_doc_begin(e);
	em_table_begin(e, &LIMITS);
	em_row(e, (const struct em_val[]){ ev_u64(5), ev_str(LONG_STR),
					   ev_str("ctl\x01") });
	em_table_end(e);
	em_doc_end(e);
}

/* ---- hidden structure --------------------------------------------------- */

static void hidden(struct hw_emitter *e)
{
	static const struct em_section text_list = {
		.title = "lacks:", .flags = EM_S_LIST, .only = EM_TEXT_ONLY };
	static const struct em_section json_list = {
		.key = "limits", .flags = EM_S_LIST, .only = EM_JSON_ONLY };
	static const struct em_table text_table = {
		.title = "top:", .cols = LINE_COLS, .ncols = 2,
		.only = EM_TEXT_ONLY };
	em_doc_begin(e);
	em_section_begin(e, &text_list);
	em_kv(e, &F_ELEM, ev_str("no auxv"));
	em_section_end(e);
	em_section_begin(e, &json_list);
	em_kv(e, &F_ELEM, ev_str("no auxv"));
	em_note(e, "never: a note inside a JSON-only list");
	em_section_end(e);
	em_table_begin(e, &text_table);
	em_row(e, (const struct em_val[]){ ev_addr(1), ev_u64(2) });
	em_table_end(e);
	em_kv(e, &F_A, ev_u64(3));
	em_doc_end(e);
}

/* ---- numbers ------------------------------------------------------------ */

static void numbers(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char got[64], want[64];
	cases++;
	for (int i = 0; i < 220000; i++) {
		uint64_t v;
		if (i < 130)    /* 0, powers of two and their neighbours */
			v = i < 2 ? (uint64_t)i : (1ull << (i / 2 % 64)) - (i & 1);
		else if (i < 300)   /* powers of ten and their neighbours */
			v = fmt_pow10[(i - 130) / 9 % 20] + (uint64_t)((i % 3) - 1);
		else if (i < 20300) /* every number of the 4-digit table, and
				       past it; also negated */
			v = i % 2 ? (uint64_t)(i - 300) / 2
				  : (uint64_t)0 - (uint64_t)(i - 300) / 2;
		else {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v = x >> (x % 64);
		}
		*fmt_dec(got, v) = '\0';
		snprintf(want, sizeof want, "%" PRIu64, v);
		if (strcmp(got, want) || fmt_dec_len(v) != strlen(want))
			goto bad;
		*fmt_i64(got, (int64_t)v) = '\0';
		snprintf(want, sizeof want, "%" PRId64, (int64_t)v);
		if (strcmp(got, want) || fmt_i64_len((int64_t)v) != strlen(want))
			goto bad;
		*fmt_hex(got, v, 0) = '\0';
		snprintf(want, sizeof want, "%" PRIx64, v);
		if (strcmp(got, want))
			goto bad;
		*fmt_hex(got, v, 12) = '\0';
		snprintf(want, sizeof want, "%012" PRIx64, v);
		if (strcmp(got, want))
			goto bad;
		continue;
bad:
		failures++;
		fprintf(stderr, "FAIL numbers: %" PRIu64 ": got '%s', printf "
			"says '%s'\n", v, got, want);
		return;
	}
}

/* ---- buffering and sinks ------------------------------------------------ */

static void many_rows(struct hw_emitter *e)
{
	em_table_begin(e, &LINES);
	for (int i = 0; i < 40000; i++)
		em_row(e, (const struct em_val[]){ ev_addr((uint64_t)i),
			ev_i64(i), ev_dbl(0.5) });
	em_table_end(e);
}

static void buffering(void)
{
	cases++;
	for (int json = 0; json < 2; json++) {
		char *out = render(many_rows, json);
		size_t lines = 0;
		for (char *p = out; *p; p++)
			lines += *p == '\n';
		const char *last = json ? "{\"a\":\"0x9c3f\",\"b\":39999,\"c\":0.500}\n"
					: "0x9c3f 39999    0.50\n";
		size_t n = strlen(out), k = strlen(last);
		if (lines != 40000u + !json || n < k ||
		    strcmp(out + n - k, last) || n < 256 * 1024) {
			failures++;
			fprintf(stderr, "FAIL buffering (%s): %zu lines, %zu "
				"bytes, ends '%s'\n", json ? "json" : "text",
				lines, n, n > 40 ? out + n - 40 : out);
		}
		free(out);
	}
}

static int write_calls;

static bool failing_sink(void *cookie, const char *data, size_t len)
{
	(void)cookie, (void)data, (void)len;
	write_calls++;
	return false;
}

static void sink_failure(void)
{
	struct hw_output out = { .sz = sizeof out, .write = failing_sink,
				 .form = HW_FORM_JSON };
	struct hw_emitter *e = em_open(&out);
	cases++;
	if (!e)
		exit(1);
	many_rows(e);
	bool failed = em_failed(e);
	if (em_close(e) || !failed || write_calls != 1) {
		failures++;
		fprintf(stderr, "FAIL sink failure: em_failed %d, %d writes\n",
			failed, write_calls);
	}
}

int main(void)
{
	check("key/values", kvs,
	      "name:        ptmalloc 2.36 (x86_64)\n"
	      "layout:      1 heap, 3 caches\n"
	      "size:           1.5 KiB\n"
	      "root:        0x7f00\n"
	      "maybe:       ? [set]\n"
	      "note:        text alone\n"
	      "ratio:       12.3%\n"
	      "inner stats:\n"
	      "  a      seven\n"
	      "in use:          12   2.0 KiB\n"
	      "things:      one\n"
	      "             two\n"
	      "items:       1: a\n"
	      "             2: b\n"
	      "a note\n",
	      "{\"name\":\"ptmalloc\",\"version\":\"2.36\",\"arch\":\"x86_64\","
	      "\"heaps\":1,\"caches\":3,\"size\":1536,\"root\":\"0x7f00\","
	      "\"gone\":null,\"maybe\":null,\"flag\":true,\"hidden\":-5,"
	      "\"ratio\":0.1235,\"inner\":{\"a\":7},"
	      "\"used\":{\"count\":12,\"bytes\":2048},"
	      "\"things\":[\"one\",\"two\"],"
	      "\"items\":[{\"i\":1,\"name\":\"a\"},{\"i\":2,\"name\":\"b\"}]}\n");
	check("tables", table,
	      "the rows:\n"
	      " id  address                 size name   owner        cs\n"
	      "  1  0x000000000055aa10     100 B heap   arena 0    0x30\n"
	      "    threads 101,102,-3\n"
	      /* (its newline escaped: no value breaks a text line) */
	      " 22  0xffffffffffffffff   3.0 MiB q\"\\\\x0a thread ?      -\n"
	      "    sub 0x1000-0x2000\n"
	      "  3  0x0000000000000000       0 B x                    0\n"
	      "    threads 10000,10001,10002,10003,10004,10005,10006,10007,"
	      "10008,10009,10010,10011,10012,10013,\n"
	      "            10014,10015,10016,10017,10018,10019,10020,10021,"
	      "10022,10023,10024,10025,10026,10027,\n"
	      "            10028,10029\n"
	      /* the second table: columns as declared, no header */
	      "  1  0x000000000055aa10 heap       100 B arena 0    0x30\n"
	      "    threads 101,102,-3\n"
	      "  1  0x000000000055aa10 heap       100 B arena 0    0x30\n"
	      "    threads 101,102,-3\n",
	      "{\"rows\":[{\"id\":1,\"addr\":\"0x55aa10\",\"name\":\"heap\","
	      "\"secret\":9,\"size\":100,\"cs\":48,\"tids\":[101,102,-3]},"
	      "{\"id\":22,\"addr\":\"0xffffffffffffffff\",\"name\":\"q\\\"\\\\\\u000a\","
	      "\"size\":3145728,\"tids\":null,"
	      "\"subs\":[{\"start\":\"0x1000\",\"end\":\"0x2000\"}]},"
	      "{\"addr\":\"0x0\",\"name\":\"x\",\"secret\":0,\"size\":0,\"cs\":0,"
	      "\"tids\":[10000,10001,10002,10003,10004,10005,10006,10007,10008,"
	      "10009,10010,10011,10012,10013,10014,10015,10016,10017,10018,"
	      "10019,10020,10021,10022,10023,10024,10025,10026,10027,10028,"
	      "10029]}],"
	      "\"total\":{\"id\":1,\"addr\":\"0x55aa10\",\"name\":\"heap\","
	      "\"secret\":9,\"size\":100,\"cs\":48,\"tids\":[101,102,-3]}}\n");
	check("JSON Lines", lines,
	      "a        b       c\n"
	      "0x0000     0    0.00\n"
	      "0x0011    -1    0.33\n"
	      "0x0022    -2    0.67\n"
	      "(the end)\n",
	      "{\"a\":\"0x0\",\"b\":0,\"c\":0.000}\n"
	      "{\"a\":\"0x11\",\"b\":-1,\"c\":0.333}\n"
	      "{\"a\":\"0x22\",\"b\":-2,\"c\":0.667}\n");
	check("limits", limits,
	      "  k s                                       xt\n"
	      /* text shows a control byte escaped, as \xNN */
	      "  5 " LONG_STR "                                   xctl\\x01\n",
	      "{\"l\":[{\"" LONG_KEY "\":5,\"s\":\"" LONG_STR "\","
	      "\"t\":\"ctl\\u0001\"}]}\n");
	check("hidden", hidden,
	      "lacks: no auxv\n"
	      "top:\n"
	      "a        b\n"
	      "0x0001     2\n"
	      "a 3\n",
	      "{\"limits\":[\"no auxv\"],\"a\":3}\n");
	check("packed rows", packed_rows,
	      "address      size state arena    chunk  t\n"
	      "0x0055aa10    100 used      0 0x55aa00  7\n"
	      "0xffffffffffffffff      0 ?        -1     0x10  8\n"
	      /* absent cells are empty, padded as any other */
	      "                                         \n"
	      "           18446744073709551615 free                   \n"
	      "0x00001000                               \n"
	      "0x00002000                               \n"
	      "0x0055aa10    100 used      0 0x55aa00  7\n"
	      "0x0055aa10    100 used      0 0x55aa00  7\n"
	      "0xffffffffffffffff      0 ?        -1     0x10  8\n"
	      "  5 no\n"
	      "used  0xabc\n"
	      "        0xd\n",
	      "{\"addr\":\"0x55aa10\",\"size\":100,\"state\":\"used\","
	      "\"arena\":0,\"extent\":\"0xe0\",\"chunk\":\"0x55aa00\","
	      "\"orphaned\":true}\n"
	      "{\"addr\":\"0xffffffffffffffff\",\"size\":0,\"state\":\"?\","
	      "\"arena\":-1}\n"
	      "{}\n"
	      "{\"size\":18446744073709551615,\"state\":\"free\"}\n"
	      "{\"addr\":\"0x1000\"}\n"
	      "{\"addr\":\"0x2000\",\"orphaned\":false}\n"
	      "{\"addr\":\"0x55aa10\",\"size\":100,\"state\":\"used\","
	      "\"arena\":0,\"extent\":\"0xe0\",\"chunk\":\"0x55aa00\","
	      "\"orphaned\":true}\n"
	      "{\"rows\":[{\"addr\":\"0x55aa10\",\"size\":100,"
	      "\"state\":\"used\",\"arena\":0,\"extent\":\"0xe0\","
	      "\"chunk\":\"0x55aa00\",\"orphaned\":true},"
	      "{\"addr\":\"0xffffffffffffffff\",\"size\":0,\"state\":\"?\","
	      "\"arena\":-1}],"
	      "\"long\":[{\"" LONG_KEY_P "\":5,\"b\":false}],"
	      "\"edge\":[{\"s\":\"used\","
	      "\"address_of_the_block_start\":\"0xabc\"},"
	      "{\"address_of_the_block_start\":\"0xd\"}]}\n");
	numbers();
	buffering();
	sink_failure();
	if (failures) {
		fprintf(stderr, "%d of %d cases failed\n", failures, cases);
		return 1;
	}
	printf("ok %d cases\n", cases);
	return 0;
}

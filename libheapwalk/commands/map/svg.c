/* svg.c - the heap map written as SVG, streamed through the emitter.
 *
 * Nothing is kept but the row being drawn: rows are written as they are
 * finished, each strip as a group translated to its place, so the file
 * can be any size while memory stays that of one row.  The elements come
 * in the order the walk met the strips; where they are drawn comes from
 * the layout (map.c), so that order does not matter to the picture.
 *
 *   <g class="strip" data-arena="0" data-kind="heap" data-start="0x..."
 *      data-end="0x..." data-bytes-per-pixel="16" transform="...">
 *     <text>the strip's label</text>
 *     <rect x y width height class="s-STATE" data-addr="0x..."
 *           data-bytes="N" data-state="STATE" data-chunks="N"
 *           [data-mix="STATE:N STATE:N ..."]><title>...</title></rect>
 *
 * data-bytes is every byte the rectangle covers, data-state the state of
 * most of them; data-mix, when it covers more than one state, gives each
 * one's bytes.  data-chunks counts the blocks that start in it.  Each
 * state's colour and legend are its place's (alloc/where.c).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "map.h"

const char *map_state_name(unsigned state)
{
	return state < HW_WHERE_COUNT ? hw_where_name((enum hw_where)state)
				      : "unknown";
}

static void put(struct map_svg *w, const char *s)
{
	em_verbatim(w->out, s, strlen(s));
}

static void putf(struct map_svg *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void putf(struct map_svg *w, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		em_verbatim(w->out, buf, (size_t)n < sizeof buf ? (size_t)n
							 : sizeof buf - 1);
}

/* How long the UTF-8 sequence at s is when it is well formed, else 0.  */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : s[0] >= 0xe0 ? 3
		   : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Text from the target (a core's path) as XML character data: markup
   escaped, and bytes XML cannot hold (controls, broken UTF-8) as '?'.  */
static void put_text(struct map_svg *w, const char *text)
{
	char buf[512];
	size_t at = 0;
	for (const unsigned char *p = (const unsigned char *)text; *p;) {
		if (at + 8 > sizeof buf) {
			em_verbatim(w->out, buf, at);
			at = 0;
		}
		const char *ent = *p == '&' ? "&amp;" : *p == '<' ? "&lt;"
				  : *p == '>' ? "&gt;" : *p == '"' ? "&quot;"
				  : NULL;
		if (ent) {
			memcpy(buf + at, ent, strlen(ent));
			at += strlen(ent);
			p++;
			continue;
		}
		size_t n = *p < 0x80 ? (*p >= 0x20 || *p == '\t') : utf8_len(p);
		if (!n) {
			buf[at++] = '?';
			p++;
			continue;
		}
		memcpy(buf + at, p, n);
		at += n;
		p += n;
	}
	em_verbatim(w->out, buf, at);
}

/* The head: title line, then the lines given, then the legend, three
   states a line.  */
#define HEAD_TOP 18
#define LINE_PITCH 15
#define LEGEND_COLS 3
#define LEGEND_COL_WIDTH 344

#define PICTURE_WIDTH (MAP_GUTTER + MAP_WIDTH + 2 * MAP_MARGIN)
/* Lines under the title: the target, the allocator and map_head's
   lines; the legend comes after them.  */
#define HEAD_LINES 7
/* Characters a line of the head holds (monospace at 11 px: 6.6 px a
   character); longer ones are cut, their end kept.  */
#define HEAD_CHARS ((PICTURE_WIDTH - 2 * MAP_MARGIN) * 10 / 66)

uint32_t map_svg_head_height(unsigned nstates)
{
	uint32_t legend_lines = (nstates + LEGEND_COLS - 1) / LEGEND_COLS;
	return HEAD_TOP + HEAD_LINES * LINE_PITCH + 6 + legend_lines * LINE_PITCH;
}

bool map_svg_init(struct map_svg *w, struct hw_emitter *out,
		  const char *noun)
{
	memset(w, 0, sizeof *w);
	w->out = out;
	w->noun = noun;
	w->px = calloc(MAP_WIDTH, sizeof *w->px);
	w->starts = calloc(MAP_WIDTH, sizeof *w->starts);
	w->xmin = MAP_WIDTH;
	if (!w->px || !w->starts) {
		map_svg_release(w);
		return false;
	}
	return true;
}

void map_svg_release(struct map_svg *w)
{
	free(w->px);
	free(w->starts);
	w->px = NULL;
	w->starts = NULL;
}

/* One line of the head at baseline y, cut to the picture's width: a
   path (keep_end) keeps its end, "..." before it; other text its
   start.  */
static void head_line(struct map_svg *w, uint32_t y, const char *text,
		      bool keep_end)
{
	size_t n = strlen(text);
	putf(w, "<text x=\"%d\" y=\"%" PRIu32 "\">", MAP_MARGIN, y);
	if (n > HEAD_CHARS && !keep_end) {
		char cut[HEAD_CHARS + 1];
		size_t k = HEAD_CHARS - 3;
		while (k > 0 && ((unsigned char)text[k] & 0xc0) == 0x80)
			k--;
		memcpy(cut, text, k);
		cut[k] = '\0';
		put_text(w, cut);
		put(w, "...");
	} else if (n > HEAD_CHARS) {
		const char *tail = text + n - (HEAD_CHARS - 3);
		/* not inside a UTF-8 sequence */
		while (*tail && ((unsigned char)*tail & 0xc0) == 0x80)
			tail++;
		put(w, "...");
		put_text(w, tail);
	} else {
		put_text(w, text);
	}
	put(w, "</text>\n");
}

void map_svg_begin(struct map_svg *w, const struct map_head *h)
{
	unsigned width = PICTURE_WIDTH;
	em_verbatim_begin(w->out, "svg");
	put(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	putf(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
	     "height=\"%" PRIu32 "\" viewBox=\"0 0 %u %" PRIu32 "\" "
	     "font-family=\"monospace\" font-size=\"11\">\n", width, h->height,
	     width, h->height);
	put(w, "<title>heapwalk map: ");
	put_text(w, h->target);
	put(w, "</title>\n<style>text{fill:#222}.head{font-size:14px;"
	    "font-weight:bold}.arena{font-weight:bold}.mix1{fill-opacity:.6}"
	    ".mix2{fill-opacity:.3}");
	for (unsigned k = 0; k < MAP_NSTATES; k++)
		putf(w, ".s-%s{fill:%s}", map_state_name(k),
		     hw_place(k)->colour);
	put(w, ".addr{font-size:9px;text-anchor:end;fill:#666}"
	    ".sep{fill:#ffffff}</style>\n<rect width=\"100%\" height=\"100%\" "
	    "fill=\"#ffffff\"/>\n");
	uint32_t y = HEAD_TOP;
	putf(w, "<text class=\"head\" x=\"%d\" y=\"%" PRIu32 "\">heapwalk "
	     "map</text>\n", MAP_MARGIN, y);
	y += LINE_PITCH;
	head_line(w, y, h->target, true);
	y += LINE_PITCH;
	head_line(w, y, h->allocator, false);
	for (size_t i = 0; i < sizeof h->lines / sizeof h->lines[0]; i++) {
		if (!h->lines[i])
			continue;
		y += LINE_PITCH;
		head_line(w, y, h->lines[i], false);
	}
	/* The legend: only the states the heap has.  */
	unsigned col = 0;
	y = HEAD_TOP + HEAD_LINES * LINE_PITCH + 6;
	put(w, "<g class=\"legend\">\n");
	for (unsigned k = 0; k < MAP_NSTATES; k++) {
		if (!h->state_bytes[k])
			continue;
		char size[32];
		unsigned x = MAP_MARGIN + col * LEGEND_COL_WIDTH;
		putf(w, "<rect x=\"%u\" y=\"%" PRIu32 "\" width=\"10\" "
		     "height=\"10\" class=\"s-%s\" stroke=\"#888\" "
		     "stroke-width=\"0.5\"/><text x=\"%u\" y=\"%" PRIu32 "\">"
		     "%s: %s, %s</text>\n", x, y - 9, map_state_name(k), x + 14,
		     y, map_state_name(k), hw_place(k)->what,
		     hw_human(size, sizeof size, h->state_bytes[k]));
		if (++col == LEGEND_COLS) {
			col = 0;
			y += LINE_PITCH;
		}
	}
	put(w, "</g>\n");
}

void map_svg_heading(struct map_svg *w, uint32_t y, const char *title,
		     const char *detail)
{
	putf(w, "<text class=\"arena\" x=\"%d\" y=\"%" PRIu32 "\">", MAP_MARGIN,
	     y);
	put_text(w, title);
	put(w, "</text>\n");
	if (!detail[0])
		return;
	putf(w, "<text x=\"%d\" y=\"%" PRIu32 "\">", MAP_MARGIN, y + 13);
	put_text(w, detail);
	put(w, "</text>\n");
}

void map_svg_strip_begin(struct map_svg *w, const struct map_strip *st,
			 const char *kind)
{
	char size[32];
	putf(w, "<g class=\"strip\" data-arena=\"%" PRId32 "\" data-kind=\"%s\" "
	     "data-start=\"0x%" PRIx64 "\" data-end=\"0x%" PRIx64 "\" "
	     "data-bytes-per-pixel=\"%" PRIu64 "\" transform=\"translate(%d,%"
	     PRIu32 ")\">\n", st->arena, kind, st->start, st->end,
	     (uint64_t)1 << st->shift, MAP_MARGIN + MAP_GUTTER, st->y);
	if (st->collapsed)
		putf(w, "<text x=\"0\" y=\"-3\">%s 0x%" PRIx64 "-0x%" PRIx64
		     "  %s of address space only, in one row (not to scale)"
		     "</text>\n", kind, st->start, st->end,
		     hw_human(size, sizeof size, st->end - st->start));
	else
		putf(w, "<text x=\"0\" y=\"-3\">%s 0x%" PRIx64 "-0x%" PRIx64
		     "  %s  %" PRIu64 " %s%s</text>\n", kind, st->start,
		     st->end, hw_human(size, sizeof size, st->end - st->start),
		     st->nchunks, w->noun, st->nchunks == 1 ? "" : "s");
	/* Each row's first address, in the gutter: a picture in a bug
	   report is tied to addresses.  */
	for (uint32_t r = 0; r < st->rows; r++)
		putf(w, "<text class=\"addr\" x=\"-4\" y=\"%" PRIu32 "\">0x%"
		     PRIx64 "</text>\n", r * MAP_ROW_PITCH + 9,
		     st->start + ((uint64_t)r * MAP_WIDTH << st->shift));
}

void map_svg_strip_end(struct map_svg *w)
{
	put(w, "</g>\n");
}

/* One rectangle: pixels [x0, x1) of row `row`, shown as `key` (a
   state and its shade, pixel_key()).  */
static void rect(struct map_svg *w, const struct map_strip *st, uint32_t row,
		 uint32_t x0, uint32_t x1, unsigned key, const uint64_t *sum,
		 uint64_t chunks)
{
	static const char *const shade[MAP_SHADES] = { "", " mix1", " mix2" };
	unsigned state = key / MAP_SHADES;
	uint64_t addr = st->start + (((uint64_t)row * MAP_WIDTH + x0) << st->shift);
	uint64_t bytes = 0;
	unsigned kinds = 0;
	for (unsigned k = 0; k < MAP_NSTATES; k++) {
		bytes += sum[k];
		kinds += sum[k] != 0;
	}
	putf(w, "<rect x=\"%" PRIu32 "\" y=\"%" PRIu32 "\" width=\"%" PRIu32
	     "\" height=\"%d\" class=\"s-%s%s\" data-addr=\"0x%" PRIx64 "\" "
	     "data-bytes=\"%" PRIu64 "\" data-state=\"%s\" data-chunks=\"%"
	     PRIu64 "\"", x0, row * MAP_ROW_PITCH, x1 - x0, MAP_ROW_PITCH - 1,
	     map_state_name(state), shade[key % MAP_SHADES], addr, bytes,
	     map_state_name(state), chunks);
	if (kinds > 1) {
		put(w, " data-mix=\"");
		const char *sep = "";
		for (unsigned k = 0; k < MAP_NSTATES; k++)
			if (sum[k]) {
				putf(w, "%s%s:%" PRIu64, sep, map_state_name(k),
				     sum[k]);
				sep = " ";
			}
		put(w, "\"");
	}
	char size[32];
	putf(w, "><title>0x%" PRIx64 "-0x%" PRIx64 " (%s):", addr, addr + bytes,
	     hw_human(size, sizeof size, bytes));
	const char *sep = " ";
	for (unsigned k = 0; k < MAP_NSTATES; k++)
		if (sum[k]) {
			putf(w, "%s%s %s", sep, map_state_name(k),
			     hw_human(size, sizeof size, sum[k]));
			sep = ", ";
		}
	putf(w, "; %" PRIu64 " %s%s</title></rect>\n", chunks, w->noun,
	     chunks == 1 ? "" : "s");
	w->rects++;
}

/* What pixel x shows: the state with most bytes (ties: the first in
   `where` order) times MAP_SHADES, plus its shade (0: that state holds
   at least 7/8 of the pixel, 1: 5/8, 2: less); -1 for an empty pixel.
   Pixels merge into one rectangle when this is the same.  */
static int pixel_key(const uint64_t *px)
{
	int best = -1;
	uint64_t most = 0, total = 0;
	for (unsigned k = 0; k < MAP_NSTATES; k++) {
		total += px[k];
		if (px[k] > most) {
			most = px[k];
			best = (int)k;
		}
	}
	if (best < 0)
		return -1;
	/* most / total >= 7/8, 5/8, in integers (a pixel is at most 2^63
	   bytes, so 8 * most may not fit: compare the complements).  */
	uint64_t rest = total - most;
	int shade = rest <= total / 8 ? 0 : rest <= total / 8 * 3 ? 1 : 2;
	return best * MAP_SHADES + shade;
}

void map_svg_row(struct map_svg *w, const struct map_strip *st, uint32_t row)
{
	if (w->xmin > w->xmax)
		return;
	uint64_t sum[MAP_NSTATES] = { 0 }, chunks = 0;
	int cur = -1;
	uint32_t x0 = w->xmin;
	for (uint32_t x = w->xmin; x <= w->xmax + 1; x++) {
		int key = x <= w->xmax ? pixel_key(w->px[x]) : -1;
		if (key != cur) {
			if (cur >= 0) {
				rect(w, st, row, x0, x, (unsigned)cur, sum,
				     chunks);
				memset(sum, 0, sizeof sum);
				chunks = 0;
			}
			cur = key;
			x0 = x;
		}
		if (key < 0)
			continue;
		for (unsigned k = 0; k < MAP_NSTATES; k++)
			sum[k] += w->px[x][k];
		chunks += w->starts[x];
	}
	/* mmapped chunks that touch: a thin line where each begins, so
	   that two are not read as one.  */
	if (st->mmapped)
		for (uint32_t x = w->xmin + 1; x <= w->xmax; x++)
			if (w->starts[x])
				putf(w, "<rect class=\"sep\" x=\"%" PRIu32 "\" "
				     "y=\"%" PRIu32 "\" width=\"1\" height=\"%d\"/>"
				     "\n", x, row * MAP_ROW_PITCH,
				     MAP_ROW_PITCH - 1);
	memset(w->px + w->xmin, 0, (w->xmax - w->xmin + 1) * sizeof *w->px);
	memset(w->starts + w->xmin, 0,
	       (w->xmax - w->xmin + 1) * sizeof *w->starts);
	w->xmin = MAP_WIDTH;
	w->xmax = 0;
}

void map_svg_end(struct map_svg *w)
{
	put(w, "</svg>\n");
	em_verbatim_end(w->out);
}

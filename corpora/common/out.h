/* out.h - writing a corpus program's truth file without the heap it
 * describes: a static buffer, write(2) and a home-made number formatter
 * (stdio would malloc its buffers).  Included by corpora/ptmalloc/truth.h
 * and corpora/jemalloc/truth.h; the including program opens the file and
 * sets out_fd.
 */
#ifndef CORPUS_OUT_H
#define CORPUS_OUT_H

#include <string.h>
#include <unistd.h>

static char out_buf[1 << 16];
static size_t out_len;
static int out_fd = -1;

static void out_flush(void)
{
	size_t off = 0;
	while (off < out_len) {
		ssize_t n = write(out_fd, out_buf + off, out_len - off);
		if (n <= 0)
			_exit(3);
		off += (size_t)n;
	}
	out_len = 0;
}

static void out_str(const char *s)
{
	for (; *s; s++) {
		if (out_len == sizeof out_buf)
			out_flush();
		out_buf[out_len++] = *s;
	}
}

/* v in base 10, or 16 with a "0x" prefix.  */
static void out_num(unsigned long long v, unsigned base)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (base == 16)
		out_str("0x");
	while (n--) {
		char c[2] = { tmp[n], 0 };
		out_str(c);
	}
}

/* " N" */
static inline void out_sp(unsigned long long v)
{
	out_str(" ");
	out_num(v, 10);
}

/* "TAG KEY N" and a newline.  */
static inline void out_kv(const char *tag, const char *k, unsigned long long v)
{
	out_str(tag);
	out_str(" ");
	out_str(k);
	out_sp(v);
	out_str("\n");
}

static void die(const char *msg)
{
	/* A broken plan: no core, exit 2 so make-core.sh reports it.  */
	if (write(2, "corpus: ", 8) < 0 || write(2, msg, strlen(msg)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(2);
	_exit(2);
}

#endif /* CORPUS_OUT_H */

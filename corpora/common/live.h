/* live.h - the corpus programs' live mode, for `heapwalk --pid` tests.
 *
 * With CORPUS_LIVE=1 in the environment a corpus program builds the same
 * heap and writes the same truth file, but instead of abort()ing it stays
 * alive for a tracer, then checks that the tracer left it unharmed:
 *
 *  - live_begin(), first thing in main (before any thread exists, so every
 *    thread inherits the mask): SIGUSR1 is blocked (the test sends one
 *    before heapwalk attaches; it must still be pending afterwards), and
 *    any process may trace this one (PR_SET_PTRACER: Yama's
 *    ptrace_scope 1 lets only ancestors trace otherwise, and heapwalk is
 *    the program's sibling).
 *  - live_fill(p, n) at allocation time fills each block with a pattern
 *    derived from its addresses (live_bad() finds the first byte that
 *    differs from it).
 *  - live_park(), in place of abort(), after the truth file is closed:
 *    writes "ready\n" to stdout and blocks reading stdin.  The other
 *    threads stay parked where the core mode leaves them.  On a line it
 *    checks (LIVE_BLOCKS, the program's callback, checks every live
 *    block's contents), prints "OK\n" or "FAIL <why>\n" and _exit()s 0
 *    (OK) or 1; at end of file (the test went away) it _exit()s 4 without
 *    a word.
 *
 * The checks after the line, none of which allocates (no stdio, no
 * opendir: open/read/getdents64 into static buffers):
 *  1. every live block still holds its pattern (the program's callback);
 *  2. /proc/self/status says "TracerPid:\t0";
 *  3. every thread in /proc/self/task is in a state other than t (tracing
 *     stop) or T (stopped), is not traced, and none is missing: at least
 *     as many as the program said (live_threads; an emulator such as
 *     qemu-user may run threads of its own);
 *  4. SIGUSR1 is pending (sigpending), and it is delivered, once, when
 *     the program unblocks it (last: under a tracer the delivery would
 *     stop the thread).
 *
 * Without CORPUS_LIVE (or with CORPUS_LIVE=0) none of this runs: the core
 * mode is unchanged.  Needs out.h (included before this file).
 */
#ifndef CORPUS_LIVE_H
#define CORPUS_LIVE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int live_on = -1;
static int live_threads;  /* threads the program has at least */

static int live_mode(void)
{
	if (live_on < 0) {
		const char *v = getenv("CORPUS_LIVE");
		live_on = v && *v && strcmp(v, "0") != 0;
	}
	return live_on;
}

static inline void live_begin(void)
{
	sigset_t s;
	if (!live_mode())
		return;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &s, NULL) != 0)
		die("live: cannot block SIGUSR1");
#ifdef PR_SET_PTRACER
	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

/* Live mode begun (before any thread: all inherit its signal mask) and
   the truth file opened as out.h's out_fd.  */
static inline void live_truth_open(const char *path)
{
	live_begin();
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0)
		die("cannot open the truth file");
}

/* The pattern's 8-byte word at (8-aligned) address a: never a canonical
   user-space pointer (top byte 0xa5), different at every address.  */
static uint64_t live_word(uintptr_t a)
{
	uint64_t x = (uint64_t)a * 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	return (x & 0x00ffffffffffffffull) | 0xa500000000000000ull;
}

static unsigned char live_byte(uintptr_t a)
{
	uint64_t w = live_word(a & ~(uintptr_t)7);
	return (unsigned char)(w >> (8 * (a & 7)));
}

static void live_fill(void *p, size_t n)
{
	unsigned char *c = p, *end = c + n;
	if (!live_mode())
		return;
	while (c < end && ((uintptr_t)c & 7))
		*c = live_byte((uintptr_t)c), c++;
	for (; end - c >= 8; c += 8) {
		uint64_t w = live_word((uintptr_t)c);
		memcpy(c, &w, 8);
	}
	while (c < end)
		*c = live_byte((uintptr_t)c), c++;
}

/* The offset of the first byte of [p, p+n) that is not the pattern's, or
   -1 when all are.  */
static long live_bad(const void *p, size_t n)
{
	const unsigned char *c = p, *end = c + n;
	for (; c < end && ((uintptr_t)c & 7); c++)
		if (*c != live_byte((uintptr_t)c))
			return c - (const unsigned char *)p;
	for (; end - c >= 8; c += 8) {
		uint64_t w;
		memcpy(&w, c, 8);
		if (w != live_word((uintptr_t)c))
			break;
	}
	for (; c < end; c++)
		if (*c != live_byte((uintptr_t)c))
			return c - (const unsigned char *)p;
	return -1;
}

/* ---- the checks ----------------------------------------------------- */

static char live_why[256];
static size_t live_why_len;

/* Append s to live_why.  */
static void live_add(const char *s)
{
	for (; s && *s && live_why_len < sizeof live_why - 1; s++)
		live_why[live_why_len++] = *s;
	live_why[live_why_len] = 0;
}

/* Append v in base 10, or 16 with "0x".  */
static void live_add_num(unsigned long long v, unsigned base)
{
	char tmp[24], one[2] = { 0, 0 };
	int k = 0;
	do {
		tmp[k++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (base == 16)
		live_add("0x");
	while (k) {
		one[0] = tmp[--k];
		live_add(one);
	}
}

static void live_say(const char *a, const char *b)
{
	live_why_len = 0;
	live_add(a);
	live_add(b);
}

/* "MSG 0xADDR+OFF" (a block whose contents changed).  */
static void live_say_addr(const char *msg, uintptr_t addr, long off)
{
	live_say(msg, " ");
	live_add_num(addr, 16);
	live_add("+");
	live_add_num((unsigned long long)off, 10);
}

static char live_file[8192];

/* The contents of path (NUL-terminated, cut to the buffer), or NULL.  */
static const char *live_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t r = read(fd, live_file + n, sizeof live_file - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == sizeof live_file - 1)
			break;
	}
	close(fd);
	live_file[n] = 0;
	return live_file;
}

/* The value of "KEY:\t..." in a /proc status file, up to the newline
   (into a static buffer), or NULL.  */
static const char *live_field(const char *text, const char *key)
{
	static char val[64];
	size_t kl = strlen(key);
	for (const char *l = text; l && *l;) {
		if (!strncmp(l, key, kl) && l[kl] == ':') {
			const char *v = l + kl + 1;
			size_t n = 0;
			while (*v == '\t' || *v == ' ')
				v++;
			while (v[n] && v[n] != '\n' && n < sizeof val - 1) {
				val[n] = v[n];
				n++;
			}
			val[n] = 0;
			return val;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return NULL;
}

static volatile sig_atomic_t live_usr1;

static void live_on_usr1(int sig)
{
	(void)sig;
	live_usr1++;
}

/* 0 when SIGUSR1 is pending and then delivered once unblocked.  */
static int live_check_signal(void)
{
	sigset_t s;
	struct sigaction sa;
	if (sigpending(&s) != 0 || !sigismember(&s, SIGUSR1)) {
		live_say("the SIGUSR1 sent before the attach is no longer "
			 "pending", NULL);
		return -1;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = live_on_usr1;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		live_say("sigaction failed", NULL);
		return -1;
	}
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	if (sigprocmask(SIG_UNBLOCK, &s, NULL) != 0) {
		live_say("cannot unblock SIGUSR1", NULL);
		return -1;
	}
	/* A pending unblocked signal is delivered before sigprocmask
	   returns to user mode; give a slow kernel a moment anyway.  */
	for (int i = 0; i < 100 && !live_usr1; i++)
		usleep(1000);
	if (live_usr1 != 1) {
		live_say(live_usr1 ? "SIGUSR1 delivered more than once"
				   : "SIGUSR1 not delivered once unblocked",
			 NULL);
		return -1;
	}
	return 0;
}

struct live_dirent {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* 0 when no thread is stopped or traced, and there are at least
   live_threads.  */
static int live_check_threads(void)
{
	static uint64_t buf64[1024]; /* 8-byte aligned dirents */
	char *buf = (char *)buf64;
	static char path[64];
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int nthreads = 0;
	const char *v, *text;
	if (fd < 0) {
		live_say("cannot open /proc/self/task", NULL);
		return -1;
	}
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof buf64);
		if (n < 0) {
			close(fd);
			live_say("cannot read /proc/self/task", NULL);
			return -1;
		}
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			const struct live_dirent *d =
				(const struct live_dirent *)(buf + off);
			off += d->reclen;
			if (d->name[0] < '0' || d->name[0] > '9')
				continue;
			nthreads++;
			strcpy(path, "/proc/self/task/");
			strncat(path, d->name, 20);
			strcat(path, "/status");
			text = live_read(path);
			if (!text)
				continue; /* the thread is gone meanwhile */
			v = live_field(text, "State");
			if (!v) {
				close(fd);
				live_say("no State in ", path);
				return -1;
			}
			if (v[0] == 't' || v[0] == 'T') {
				close(fd);
				live_say("a thread is stopped: ", path);
				return -1;
			}
			v = live_field(text, "TracerPid");
			if (!v || strcmp(v, "0")) {
				close(fd);
				live_say("a thread is traced: ", path);
				return -1;
			}
		}
	}
	close(fd);
	if (nthreads < live_threads) {
		live_say("threads: ", NULL);
		live_add_num((unsigned)nthreads, 10);
		live_add(", expected at least ");
		live_add_num((unsigned)live_threads, 10);
		return -1;
	}
	return 0;
}

/* The process-wide checks after the program's own (blocks) one.  */
static int live_checks(int (*blocks)(void))
{
	const char *text, *v;
	if (blocks && blocks() != 0)
		return -1;
	text = live_read("/proc/self/status");
	if (!text) {
		live_say("cannot read /proc/self/status", NULL);
		return -1;
	}
	v = live_field(text, "TracerPid");
	if (!v || strcmp(v, "0")) {
		live_say("traced: TracerPid ", v ? v : "missing");
		return -1;
	}
	if (live_check_threads() != 0)
		return -1;
	/* Last: a traced thread would stop in the signal's delivery.  */
	return live_check_signal();
}

static void live_write(const char *s)
{
	size_t n = strlen(s), off = 0;
	while (off < n) {
		ssize_t w = write(1, s + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3);
		off += (size_t)w;
	}
}

/* Instead of abort(): "ready", wait for a line on stdin, check, report,
   exit.  blocks checks the program's live blocks (0: all intact; else it
   said why with live_say).  */
static inline void live_park(int (*blocks)(void))
{
	char c;
	live_write("ready\n");
	for (;;) {
		ssize_t r = read(0, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(4);
		if (c == '\n')
			break;
	}
	if (live_checks(blocks) == 0) {
		live_write("OK\n");
		_exit(0);
	}
	live_write("FAIL ");
	live_write(live_why);
	live_write("\n");
	_exit(1);
}

#endif /* CORPUS_LIVE_H */

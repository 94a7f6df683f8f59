/* leaks1 - a heap whose reachability is known by construction, for
 * `leaks`: blocks held by each kind of root, blocks held only through
 * interior pointers, blocks whose last pointer was dropped, blocks held
 * only by leaked blocks, a leaked cycle, blocks whose only pointer lies
 * in freed memory, a block held only from a callee-saved register of a
 * thread parked in a raw system call; then abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog leaks1.c && ./prog truth.txt
 *
 * Truth (argv[1]), one record per line:
 *   prog leaks1
 *   block 0xUSER SIZE KIND HOW
 *     SIZE: what the program asked malloc for.
 *     KIND: reachable | possible | definite | indirect | cycle | freed
 *       (Valgrind memcheck's categories; "cycle": a leaked cycle, one of
 *       whose blocks is definite and the others indirect, whichever the
 *       scan meets first; "freed": given back to malloc, so no block: it
 *       must not be reported at all)
 *     HOW: what holds it: global, stack (main's frame), thread-stack,
 *       tls (a __thread variable of the main thread), thread-tls, mmap (a
 *       page of the program's own anonymous mapping), heap (a reachable
 *       block; one of them is held only from the last word of a 3 MiB
 *       block), interior-global, interior-heap (a pointer 24 / 8 bytes
 *       into it), leaked-block (a definite or indirect block), cycle,
 *       freed-memory (a pointer left in a freed chunk's data), register
 *       (only a register of a thread parked in a system call), none
 *     HOLDER (for `refs` and `why`): the place that holds it: the global
 *       or __thread variable's name (g_keep, tls_keep), the function whose
 *       frame holds it (main, thread_main), 0xBLOCK+OFFSET (the block in
 *       use holding the pointer and the pointer's byte offset in it),
 *       memory:0xADDR (a word of the program's own mapping), reg:NAME
 *       (the register, as the kernel names it in NT_PRSTATUS: r12 on
 *       x86_64, x19 on aarch64, of a thread other than main), or - (none)
 *   thread INDEX TID  (0 main, 1 thread_main, 2 the register holder)
 *   end
 *
 * The program must not hold the leaked blocks itself: every address it
 * keeps for the truth is stored complemented (~p, never a pointer into
 * the heap), the blocks are made in functions whose frames are zeroed
 * afterwards (scrub()), and the truth is written without the heap (a
 * static buffer and write(2), corpora/common/out.h).
 *
 * The register-held block: a thread makes it, scrubs its stack, and
 * parks in a read(2) issued by inline asm with the pointer in a
 * callee-saved register the system call preserves (and every other
 * general register it may touch zeroed), so the kernel's NT_PRSTATUS
 * (or ptrace's view of the live thread) is its only holder.
 *
 * Live mode (CORPUS_LIVE=1, corpora/common/live.h): the same heap and
 * truth, then live_park() instead of abort(); its self-check compares
 * every block not freed with a checksum taken before the truth was
 * written (no allocation after the truth).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../common/out.h"
#include "../common/live.h"

#define MAX_BLOCKS 64
#define HUGE (3u << 20)

struct block {
	uintptr_t hidden;   /* ~address */
	size_t size;
	const char *kind, *how;
	const char *holder; /* a name, or NULL: */
	uintptr_t holder_hidden;   /* ~address of the holding block / word */
	size_t holder_off;  /* the pointer's offset in the holding block */
	int holder_is_mem;  /* holder_hidden is a word, not a block */
	uint64_t sum;       /* live mode: the contents' checksum */
};

static struct block blocks[MAX_BLOCKS];
static int nblocks;

/* The roots the program keeps on purpose.  */
struct node {
	struct node *next;
	char *inner;        /* an interior pointer */
	char pad[32];
};
static struct node *g_keep;
static void *g_big, *g_huge, *g_guard, *g_after;
static char *g_header;  /* g_after's chunk header: not into the block
			   before it (make_leaks) */
static char *g_interior;
static __thread void *tls_keep;
static void **g_page;   /* the program's own anonymous page */

static int ready_pipe[2], park_pipe[2];
static pid_t tids[3];   /* main, thread_main, reg_main */

static void note(const void *p, size_t size, const char *kind, const char *how)
{
	if (nblocks == MAX_BLOCKS)
		die("too many blocks");
	blocks[nblocks++] = (struct block){ .hidden = ~(uintptr_t)p, .size = size,
					    .kind = kind, .how = how };
}

/* Who holds the block noted last: a name, a block and the offset of the
   pointer in it, or a word of memory.  Addresses are kept complemented,
   like the blocks' own.  */
static void held_by(const char *name)
{
	blocks[nblocks - 1].holder = name;
}

static void held_in(const void *block, size_t off)
{
	blocks[nblocks - 1].holder_hidden = ~(uintptr_t)block;
	blocks[nblocks - 1].holder_off = off;
}

static void held_at(const void *word)
{
	blocks[nblocks - 1].holder_hidden = ~(uintptr_t)word;
	blocks[nblocks - 1].holder_is_mem = 1;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		die("malloc failed");
	/* Recognisable bytes, never a pointer: the scan must find only the
	   pointers stored on purpose.  */
	memset(p, 0xa5, n);
	return p;
}

/* Zero a big piece of the stack below the caller: the frames of the
   functions that held the leaked pointers, and of the truth writer.  */
static __attribute__((noinline)) void scrub(void)
{
	char buf[256 << 10];
	explicit_bzero(buf, sizeof buf);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static void *thread_main(void *arg)
{
	(void)arg;
	tids[1] = (pid_t)syscall(SYS_gettid);
	void *volatile held = xmalloc(208);
	note(held, 208, "reachable", "thread-stack");
	held_by("thread_main");
	tls_keep = xmalloc(216);
	note(tls_keep, 216, "reachable", "thread-tls");
	held_by("tls_keep");
	char c = 1;
	if (write(ready_pipe[1], &c, 1) != 1)
		die("thread: write");
	/* Parked until the process dies: its stack and TLS are roots.  */
	while (read(park_pipe[0], &c, 1) != 0)
		;
	return (void *)held;
}

/* The register-held block, made in a frame of its own (scrubbed by the
   caller); only its complement comes back.  A multiple of 16 bytes, so
   that the chunk after it (glibc's top, which the arena points at)
   starts at its end, not inside it.  */
#if defined(__x86_64__)
#define HOLD_REG "r12"
#elif defined(__aarch64__)
#define HOLD_REG "x19"
#endif

static __attribute__((noinline)) uintptr_t make_reg_block(void)
{
	void *p = xmalloc(176);
	note(p, 176, "reachable", "register");
	held_by("reg:" HOLD_REG);
	return ~(uintptr_t)p;
}

/* Park for good in read(fd) with the block's address, ~hidden, only in
   HOLD_REG: a raw system call, so no libc wrapper spills it; the other
   registers the compiler or the last calls may have left a copy in are
   zeroed first.  The handshake (one byte to ready_fd) is written from the
   same asm, after HOLD_REG holds the block: main may make the core as soon
   as it reads that byte, however late this thread is scheduled, and the
   register already says what the truth says.  The loop restarts the read
   should it ever return.  */
static __attribute__((noinline, noreturn)) void park_holding(uintptr_t hidden,
							    int fd, int ready_fd)
{
	static char sink = 1;
#if defined(__x86_64__)
	/* Three registers are left for the inputs once the clobbers are
	   taken: the byte's address comes as a memory operand.  */
	__asm__ volatile(
		"mov %0, %%r12\n\t"
		"not %%r12\n\t"
		"xor %%r8d, %%r8d\n\t"
		"xor %%r9d, %%r9d\n\t"
		"xor %%r10d, %%r10d\n\t"
		"xor %%r11d, %%r11d\n\t"
		"xor %%ecx, %%ecx\n\t"
		"mov $1, %%eax\n\t" /* SYS_write: the handshake */
		"mov %k3, %%edi\n\t"
		"lea %2, %%rsi\n\t"
		"mov $1, %%edx\n\t"
		"syscall\n\t"
		"1:\n\t"
		"xor %%eax, %%eax\n\t" /* SYS_read */
		"mov %k1, %%edi\n\t"
		"lea %2, %%rsi\n\t"
		"mov $1, %%edx\n\t"
		"syscall\n\t"
		"jmp 1b"
		:
		: "r"(hidden), "r"(fd), "m"(sink), "r"(ready_fd)
		: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
		  "r12", "memory");
#elif defined(__aarch64__)
	__asm__ volatile(
		"mvn x19, %0\n\t"
		"mov w20, %w1\n\t"
		"mov x21, %2\n\t"
		"mov w0, %w3\n\t"
		"mov x3, xzr\n\t" "mov x4, xzr\n\t" "mov x5, xzr\n\t"
		"mov x6, xzr\n\t" "mov x7, xzr\n\t" "mov x9, xzr\n\t"
		"mov x10, xzr\n\t" "mov x11, xzr\n\t" "mov x12, xzr\n\t"
		"mov x13, xzr\n\t" "mov x14, xzr\n\t" "mov x15, xzr\n\t"
		"mov x16, xzr\n\t" "mov x17, xzr\n\t" "mov x18, xzr\n\t"
		"mov x8, #64\n\t" /* SYS_write: the handshake */
		"mov x1, x21\n\t"
		"mov x2, #1\n\t"
		"svc #0\n\t"
		"1:\n\t"
		"mov x8, #63\n\t" /* SYS_read */
		"mov w0, w20\n\t"
		"mov x1, x21\n\t"
		"mov x2, #1\n\t"
		"svc #0\n\t"
		"b 1b"
		:
		: "r"(hidden), "r"(fd), "r"(&sink), "r"(ready_fd)
		: "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9",
		  "x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18",
		  "x19", "x20", "x21", "memory");
#else
#error "leaks1: no register-parking code for this architecture"
#endif
	__builtin_unreachable();
}

static void *reg_main(void *arg)
{
	(void)arg;
	tids[2] = (pid_t)syscall(SYS_gettid);
	/* Before the block exists: the first call of explicit_bzero binds
	   it lazily, and the dynamic linker's resolver saves the argument
	   registers (a stale copy of the block's address among them) below
	   scrub()'s buffer, out of its reach.  */
	scrub();
	uintptr_t hidden = make_reg_block();
	scrub();
	park_holding(hidden, park_pipe[0], ready_pipe[1]);
}

static __attribute__((noinline)) void make_reachable(void)
{
	g_keep = xmalloc(sizeof *g_keep);
	note(g_keep, sizeof *g_keep, "reachable", "global");
	held_by("g_keep");
	g_keep->next = xmalloc(sizeof *g_keep);
	note(g_keep->next, sizeof *g_keep, "reachable", "heap");
	held_in(g_keep, 0);
	g_keep->next->next = xmalloc(sizeof *g_keep);
	note(g_keep->next->next, sizeof *g_keep, "reachable", "heap");
	held_in(g_keep->next, 0);
	g_keep->next->next->next = NULL;
	g_keep->next->inner = NULL;
	g_keep->next->next->inner = NULL;

	g_big = xmalloc(200000);   /* an mmapped chunk */
	note(g_big, 200000, "reachable", "global");
	held_by("g_big");

	/* Over 1 MiB, mapped on its own: the only pointer to a block sits
	   in its last word, so the whole of it must be scanned.  */
	g_huge = xmalloc(HUGE);
	note(g_huge, HUGE, "reachable", "global");
	held_by("g_huge");
	void *tail = xmalloc(152);
	note(tail, 152, "reachable", "heap");
	held_in(g_huge, HUGE - sizeof tail);
	memcpy((char *)g_huge + HUGE - sizeof tail, &tail, sizeof tail);

	tls_keep = xmalloc(120);
	note(tls_keep, 120, "reachable", "tls");
	held_by("tls_keep");

	g_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g_page == MAP_FAILED)
		die("mmap failed");
	g_page[0] = xmalloc(136);
	note(g_page[0], 136, "reachable", "mmap");
	held_at(&g_page[0]);

	/* Reached only through interior pointers: possible.  */
	char *p = xmalloc(64);
	note(p, 64, "possible", "interior-global");
	held_by("g_interior");
	g_interior = p + 24;
	p = xmalloc(56);
	note(p, 56, "possible", "interior-heap");
	held_in(g_keep, offsetof(struct node, inner));
	g_keep->inner = p + 8;
}

/* One block, its last pointer dropped.  */
static __attribute__((noinline)) void lose(size_t size)
{
	note(xmalloc(size), size, "definite", "none");
}

static __attribute__((noinline)) void make_leaks(void)
{
	for (int i = 0; i < 5; i++)
		lose(40);
	for (int i = 0; i < 3; i++)
		lose(1000);
	lose(300000);   /* an mmapped chunk */

	/* glibc: a leak whose last word is the header of the chunk after it,
	   and a global holding that header's address (mem - 16: the form
	   glibc's own lists and arenas use), which is no pointer into the
	   leak.  (jemalloc and tcmalloc, which run this program too, put the
	   blocks apart: no global then.)  */
	char *w = xmalloc(1000);
	note(w, 1000, "definite", "none");
	g_after = xmalloc(1000);
	note(g_after, 1000, "reachable", "global");
	held_by("g_after");
	if ((char *)g_after - 16 == w + 992)
		g_header = (char *)g_after - 16;

	/* A leaked parent holding a chain: the chain is indirect.  */
	struct node *parent = xmalloc(96);
	note(parent, 96, "definite", "none");
	parent->next = xmalloc(128);
	note(parent->next, 128, "indirect", "leaked-block");
	held_in(parent, 0);
	parent->next->next = xmalloc(128);
	note(parent->next->next, 128, "indirect", "leaked-block");
	held_in(parent->next, 0);
	parent->next->next->next = NULL;

	/* A leaked cycle: nothing outside points into it.  */
	struct node *x = xmalloc(80), *y = xmalloc(80);
	x->next = y;
	y->next = x;
	note(x, 80, "cycle", "cycle");
	held_in(y, 0);
	note(y, 80, "cycle", "cycle");
	held_in(x, 0);

	/* Pointers left in freed chunks do not count.  A tcache chunk (its
	   first two words become the list link and key: the pointer sits
	   after them) and an unsorted one (too big for the tcache; a guard
	   keeps it from merging into top).  */
	void **f = xmalloc(64);
	void *z = xmalloc(48);
	note(z, 48, "definite", "freed-memory");
	f[2] = z;
	note(f, 64, "freed", "none");
	void **g = xmalloc(0x500);
	g_guard = xmalloc(24);
	note(g_guard, 24, "reachable", "global");
	held_by("g_guard");
	void *z2 = xmalloc(48);
	note(z2, 48, "definite", "freed-memory");
	g[8] = z2;
	note(g, 0x500, "freed", "none");
	free(f);
	free(g);
}

static __attribute__((noinline)) void start_thread(void)
{
	pthread_t th;
	char c;
	if (pipe(ready_pipe) != 0 || pipe(park_pipe) != 0)
		die("pipe failed");
	if (pthread_create(&th, NULL, thread_main, NULL) != 0)
		die("pthread_create failed");
	if (read(ready_pipe[0], &c, 1) != 1)
		die("the thread did not start");
	if (pthread_create(&th, NULL, reg_main, NULL) != 0)
		die("pthread_create failed");
	if (read(ready_pipe[0], &c, 1) != 1)
		die("the register thread did not start");
}

static __attribute__((noinline)) void write_truth(const char *path)
{
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out_fd < 0)
		die("cannot open the truth file");
	/* A freed chunk handed out again would make its record a lie.  */
	for (int i = 0; i < nblocks; i++)
		for (int j = 0; j < i; j++)
			if (blocks[i].hidden == blocks[j].hidden)
				die("two records of one address: a freed chunk "
				    "was reused");
	out_str("prog leaks1\n");
	for (int i = 0; i < nblocks; i++) {
		out_str("block ");
		out_num(~blocks[i].hidden, 16);
		out_str(" ");
		out_num(blocks[i].size, 10);
		out_str(" ");
		out_str(blocks[i].kind);
		out_str(" ");
		out_str(blocks[i].how);
		out_str(" ");
		if (blocks[i].holder) {
			out_str(blocks[i].holder);
		} else if (blocks[i].holder_hidden) {
			if (blocks[i].holder_is_mem)
				out_str("memory:");
			out_num(~blocks[i].holder_hidden, 16);
			if (!blocks[i].holder_is_mem) {
				out_str("+");
				out_num(blocks[i].holder_off, 10);
			}
		} else {
			out_str("-");
		}
		out_str("\n");
	}
#ifdef LEAKS1_LIBRARY_LEAKS
	LEAKS1_LIBRARY_LEAKS();
#endif
	for (int i = 0; i < 3; i++) {
		out_str("thread ");
		out_num((unsigned)i, 10);
		out_str(" ");
		out_num((unsigned long long)tids[i], 10);
		out_str("\n");
	}
	out_str("end\n");
	out_flush();
	close(out_fd);
}

/* Live mode: a checksum of a block's contents, its top byte 0xa5 so
   that it is never a pointer a scan could take.  */
static __attribute__((noinline)) uint64_t checksum(const unsigned char *p,
						   size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return (h & 0x00ffffffffffffffull) | 0xa500000000000000ull;
}

static int in_use(const struct block *b)
{
	return strcmp(b->kind, "freed") != 0;
}

/* Before the truth: the checksum of every block in use.  The last call
   sums a static buffer, so that the registers it leaves behind hold no
   block's address (the frame is scrubbed by the caller).  */
static __attribute__((noinline)) void take_checksums(void)
{
	static unsigned char nothing[8];
	for (int i = 0; i < nblocks; i++)
		if (in_use(&blocks[i]))
			blocks[i].sum = checksum(
				(const unsigned char *)~blocks[i].hidden,
				blocks[i].size);
	(void)checksum(nothing, sizeof nothing);
}

/* live_park()'s check: every block in use is as it was.  */
static int blocks_intact(void)
{
	for (int i = 0; i < nblocks; i++) {
		const unsigned char *p =
			(const unsigned char *)~blocks[i].hidden;
		if (in_use(&blocks[i]) &&
		    checksum(p, blocks[i].size) != blocks[i].sum) {
			live_say_addr("a block changed:", (uintptr_t)p, 0);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: leaks1 TRUTHFILE");
	live_begin(); /* before any thread: all inherit its signal mask */
	tids[0] = (pid_t)syscall(SYS_gettid);
#ifdef LEAKS1_LIBRARY_SETUP
	LEAKS1_LIBRARY_SETUP();
#endif
	start_thread();
	/* Held by main's own frame until the end.  Allocated before the
	   frees: nothing may be carved out of a freed chunk afterwards, or
	   the pointer left in it would lie in a live block.  */
	void *volatile on_stack = xmalloc(88);
	note(on_stack, 88, "reachable", "stack");
	held_by("main");
	make_reachable();
	make_leaks();
	if (live_mode())
		take_checksums();
	scrub();
	write_truth(argv[1]);
	scrub();
	if (live_mode()) {
		live_threads = 3;
		live_park(blocks_intact);
	}
	abort();
}

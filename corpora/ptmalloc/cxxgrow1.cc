/* cxxgrow1 - C++ objects that grow, and leaks that are added, between two
 * cores of one process, for `diff BASE` per class and `diff --leaks`.
 *
 *   g++ -O0 -g -pthread -o prog cxxgrow1.cc && ./prog truth.txt
 *
 * 1. The base: objects of a few polymorphic classes held from static
 *    arrays, objects with no vtable and plain malloc blocks (no type),
 *    and leaks: Circles, a chain of Nodes (definite -> indirect), plain
 *    blocks.
 * 2. The base core: a fork()ed child chdir()s into ./base and abort()s
 *    (as grow1.c): its memory is the heap as it was.
 * 3. The growth: more objects of each class, some of the base's deleted;
 *    new leaks: Circles of the base leaks' class and size but other
 *    content, a new Node chain, plain blocks, two base Squares whose
 *    last pointer is dropped (old blocks, new leaks), and a Holder that
 *    points to a base leak (which turns indirect: still an old leak).
 * 4. The truth, then abort() for the second core.
 *
 * Truth (argv[1]), one record per line:
 *   prog cxxgrow1
 *   type COUNT BYTES CLASS   blocks in use of CLASS (typeid(*p).name()
 *        demangled, the rest of the line; "-" for blocks of no type)
 *        gained (COUNT, BYTES > 0) or lost between the cores; BYTES in
 *        usable sizes (malloc_usable_size)
 *   leak KIND USABLE COUNT CLASS   definite or indirect leaks of one
 *        usable size and class in the second core that the base did not
 *        have ("-": no type)
 *   base-core yes|no
 *   end
 * Every allocation between the cores is recorded; class names are
 * demangled before the base.  Leaked pointers are kept complemented and
 * the frames that held them scrubbed (as cxx1.cc).
 */
#include <cxxabi.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <typeinfo>

#include "../common/out.h"

/* ---- the classes ---------------------------------------------------- */

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
	int id = 0;
};
struct Circle : Shape {
	double r = 1;
	double area() const override { return 3 * r * r; }
};
struct Square : Shape {
	double a = 2, b = 3;
	double area() const override { return a * a; }
};
template <typename T> struct Box {
	virtual ~Box() {}
	T v{};
};
namespace net {
struct Conn {
	virtual ~Conn() {}
	int sock = -1;
	char peer[40] = "";
};
} // namespace net
/* A leaked list: the first node definite, the others indirect.  */
struct Node {
	virtual ~Node() {}
	Node *next = nullptr;
	long tag = 0;
};
/* Points to another block: a leaked Holder makes its target indirect.  */
struct Holder {
	virtual ~Holder() {}
	void *held = nullptr;
};
/* No vtable: no type.  */
struct Pod {
	long a = 1, b = 2, c = 3;
};

/* ---- what changed between the cores ---------------------------------- */

enum { C_CIRCLE, C_SQUARE, C_BOX, C_CONN, C_NODE, C_HOLDER, NCLASSES };
#define NO_TYPE (-1)

static const std::type_info *const class_type[NCLASSES] = {
	&typeid(Circle), &typeid(Square), &typeid(Box<int>),
	&typeid(net::Conn), &typeid(Node), &typeid(Holder),
};
static char class_name[NCLASSES][128];

struct type_change {
	long count, bytes;
};
static type_change type_changes[NCLASSES + 1];   /* [NCLASSES]: no type */

#define MAX_LEAK_KEYS 32
struct leak_key {
	bool indirect;
	size_t usable;
	int cls;
	long count;
};
static leak_key leak_keys[MAX_LEAK_KEYS];
static int nleak_keys;
static bool growing;    /* after the base: changes are recorded */

static void count(const void *p, int cls, long d)
{
	if (!growing)
		return;
	type_change *t = &type_changes[cls == NO_TYPE ? NCLASSES : cls];
	t->count += d;
	t->bytes += d * (long)malloc_usable_size(const_cast<void *>(p));
}

static void new_leak(const void *p, int cls, bool indirect)
{
	size_t usable = malloc_usable_size(const_cast<void *>(p));
	int i;
	for (i = 0; i < nleak_keys; i++)
		if (leak_keys[i].indirect == indirect &&
		    leak_keys[i].usable == usable && leak_keys[i].cls == cls)
			break;
	if (i == nleak_keys) {
		if (nleak_keys == MAX_LEAK_KEYS)
			die("too many leak records");
		leak_keys[nleak_keys++] = leak_key{ indirect, usable, cls, 0 };
	}
	leak_keys[i].count++;
}

template <typename T> static T *made(T *p, int cls)
{
	count(p, cls, +1);
	return p;
}

template <typename T> static void gone(T *p, int cls)
{
	count(p, cls, -1);
	delete p;
}

static void *plain(size_t n, int tag)
{
	void *p = malloc(n);
	if (!p)
		die("malloc failed");
	memset(p, tag, n);
	count(p, NO_TYPE, +1);
	return p;
}

/* ---- what the program holds ------------------------------------------ */

static Circle *g_circles[128];
static Square *g_squares[64];
static Box<int> *g_boxes[32];
static net::Conn *g_conns[32];
static Pod *g_pods[32];
static void *g_plain[32];
static int ncircles, nsquares, nboxes, nconns, npods, nplain;
/* The base's leaked Circles, complemented: the Holder points to one.  */
static uintptr_t g_lost_circle[8];

static __attribute__((noinline)) void hold(int circles, int squares,
					   int boxes, int conns, int pods,
					   int plains)
{
	for (int i = 0; i < circles; i++) {
		Circle *c = made(new Circle, C_CIRCLE);
		c->id = ncircles;
		g_circles[ncircles++] = c;
	}
	for (int i = 0; i < squares; i++)
		g_squares[nsquares++] = made(new Square, C_SQUARE);
	for (int i = 0; i < boxes; i++)
		g_boxes[nboxes++] = made(new Box<int>, C_BOX);
	for (int i = 0; i < conns; i++)
		g_conns[nconns++] = made(new net::Conn, C_CONN);
	for (int i = 0; i < pods; i++)
		g_pods[npods++] = made(new Pod, NO_TYPE);
	for (int i = 0; i < plains; i++)
		g_plain[nplain++] = plain(100, 0x11);
}

/* Leaks: nothing but the truth keeps their addresses.  */
static __attribute__((noinline)) void lose_circles(int n, int first_id,
						   uintptr_t *keep)
{
	for (int i = 0; i < n; i++) {
		Circle *c = made(new Circle, C_CIRCLE);
		c->id = first_id + i;
		c->r = first_id + i;
		if (keep)
			keep[i] = ~(uintptr_t)c;
		if (growing)
			new_leak(c, C_CIRCLE, false);
	}
}

static __attribute__((noinline)) void lose_chain(int n, long tag)
{
	Node *head = nullptr;
	for (int i = 0; i < n; i++) {
		Node *x = made(new Node, C_NODE);
		x->tag = tag + i;
		x->next = head;
		head = x;
		if (growing)
			new_leak(x, C_NODE, i != n - 1);
	}
}

static __attribute__((noinline)) void lose_plain(int n, int tag)
{
	for (int i = 0; i < n; i++) {
		void *p = plain(40, tag + i);
		if (growing)
			new_leak(p, NO_TYPE, false);
	}
}

/* Base Squares' last pointers dropped: old blocks, new leaks.  */
static __attribute__((noinline)) void drop_squares(int n)
{
	for (int i = 0; i < n; i++) {
		new_leak(g_squares[i], C_SQUARE, false);
		g_squares[i] = nullptr;
	}
}

/* A leaked Holder pointing to a base leak: the base leak turns
   indirect, still not a new one.  */
static __attribute__((noinline)) void lose_holder(void)
{
	Holder *h = made(new Holder, C_HOLDER);
	h->held = (void *)~g_lost_circle[0];
	new_leak(h, C_HOLDER, false);
}

static __attribute__((noinline)) void delete_some(void)
{
	/* Base Circles and plain blocks, the newest Squares.  */
	for (int i = 0; i < 8; i++) {
		gone(g_circles[i], C_CIRCLE);
		g_circles[i] = nullptr;
	}
	for (int i = 0; i < 3; i++) {
		Square *s = g_squares[--nsquares];
		g_squares[nsquares] = nullptr;
		gone(s, C_SQUARE);
	}
	for (int i = 0; i < 4; i++) {
		count(g_plain[i], NO_TYPE, -1);
		free(g_plain[i]);
		g_plain[i] = nullptr;
	}
}

static __attribute__((noinline)) void scrub(void)
{
	char buf[256 << 10];
	explicit_bzero(buf, sizeof buf);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* Each class's name, demangled before the base (the demangler mallocs).  */
static __attribute__((noinline)) void name_classes(void)
{
	for (int k = 0; k < NCLASSES; k++) {
		int st = 0;
		char *d = abi::__cxa_demangle(class_type[k]->name(), NULL, NULL,
					      &st);
		if (st != 0 || !d || strlen(d) >= sizeof class_name[0])
			die("cannot demangle a class name");
		strcpy(class_name[k], d);
		free(d);
	}
}

/* ---- the cores and the truth ------------------------------------------ */

static int base_core(void)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork failed");
	if (pid == 0) {
		if (chdir("base") != 0)
			_exit(3);
		signal(SIGABRT, SIG_DFL);
		abort();
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid failed");
	return WIFSIGNALED(st) && WCOREDUMP(st);
}

static void out_signed(long v)
{
	if (v < 0)
		out_str("-");
	out_num((unsigned long long)(v < 0 ? -v : v), 10);
}

static const char *name_of(int cls)
{
	return cls == NO_TYPE ? "-" : class_name[cls];
}

static __attribute__((noinline)) void write_truth(const char *path,
						  int have_base)
{
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0)
		die("cannot open the truth file");
	out_str("prog cxxgrow1\n");
	for (int k = 0; k <= NCLASSES; k++) {
		const type_change *t = &type_changes[k];
		if (!t->count && !t->bytes)
			continue;
		out_str("type ");
		out_signed(t->count);
		out_str(" ");
		out_signed(t->bytes);
		out_str(" ");
		out_str(name_of(k == NCLASSES ? NO_TYPE : k));
		out_str("\n");
	}
	for (int i = 0; i < nleak_keys; i++) {
		const leak_key *l = &leak_keys[i];
		out_str(l->indirect ? "leak indirect " : "leak definite ");
		out_num(l->usable, 10);
		out_str(" ");
		out_num((unsigned long long)l->count, 10);
		out_str(" ");
		out_str(name_of(l->cls));
		out_str("\n");
	}
	out_str(have_base ? "base-core yes\n" : "base-core no\n");
	out_str("end\n");
	out_flush();
	close(out_fd);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: cxxgrow1 TRUTHFILE");
	if (mkdir("base", 0755) != 0 && errno != EEXIST)
		die("cannot make ./base");
	unlink("base/core");
	name_classes();

	/* The base.  */
	hold(40, 20, 6, 4, 10, 8);
	lose_circles(5, 1000, g_lost_circle);
	lose_chain(2, 100);
	lose_plain(3, 0x40);
	scrub();
	int have_base = base_core();

	/* The growth.  */
	growing = true;
	hold(30, 10, 7, 5, 12, 9);
	delete_some();
	lose_circles(4, 2000, nullptr);
	lose_chain(3, 200);
	lose_plain(2, 0x60);
	drop_squares(2);    /* after delete_some: base Squares 0, 1 */
	lose_holder();
	scrub();

	write_truth(argv[1], have_base);
	scrub();
	abort();
}

/* cxx1 - C++ objects of known classes on the heap, for `sizes --by=type`
 * and the type of `leaks`' blocks: plain polymorphic classes, a class
 * with a virtual base (and a diamond over it), multiple inheritance,
 * class templates, classes in a namespace and in an anonymous one,
 * objects held from std::vector and std::map, objects of a class with no
 * virtual function (no vtable: no type to find), some deleted, some
 * leaked; then abort() for a core.
 *
 *   g++ -O0 -g -pthread -o prog cxx1.cc && ./prog truth.txt
 *
 * Truth (argv[1]), one record per line:
 *   prog cxx1
 *   obj 0xADDR SIZE STATE CLASS
 *     ADDR: the complete object (dynamic_cast<void *>), which is what
 *       operator new returned; SIZE: sizeof the class; STATE: held
 *       (reachable from a global) or leaked (its last pointer dropped:
 *       `leaks` calls it definite); CLASS: typeid(*p).name() demangled
 *       by this program (abi::__cxa_demangle), the rest of the line
 *   pod 0xADDR SIZE STATE CLASS
 *     the same for an object with no vtable (heapwalk cannot name it)
 *   end
 *
 * Deleted objects are not recorded.  The program does not hold the
 * leaked objects itself: their addresses are kept complemented (~p),
 * made in functions whose frames are zeroed afterwards (scrub()), and
 * the truth is written with a static buffer and write(2)
 * (corpora/common/out.h).  Only the class names are demangled with the
 * heap, once per class, before the truth is written; those buffers are
 * freed again.
 */
#include <cxxabi.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <map>
#include <typeinfo>
#include <vector>

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

/* A virtual base, and a diamond over it.  */
struct Animal {
	virtual ~Animal() {}
	virtual int legs() const { return 4; }
	long weight = 7;
};
struct Mammal : virtual Animal {
	int fur = 1;
};
struct Bird : virtual Animal {
	int feathers = 100;
	int legs() const override { return 2; }
};
struct Bat : Mammal, Bird {
	int legs() const override { return 2; }
	int sonar = 1;
};

/* Two polymorphic bases side by side.  */
struct Reader {
	virtual ~Reader() {}
	virtual int get() { return 0; }
	int rpos = 0;
};
struct Writer {
	virtual ~Writer() {}
	virtual void put(int) {}
	int wpos = 0;
};
struct Stream : Reader, Writer {
	int get() override { return 1; }
	char name[24] = "stream";
};

template <typename T> struct Box {
	virtual ~Box() {}
	virtual T value() const { return v; }
	T v{};
};

namespace net {
struct Conn {
	virtual ~Conn() {}
	virtual int fd() const { return sock; }
	int sock = -1;
	char peer[40] = "";
};
namespace detail {
struct Buffer {
	virtual ~Buffer() {}
	char bytes[100] = "";
};
} // namespace detail
} // namespace net

namespace {
struct Local {
	virtual ~Local() {}
	virtual int f() { return 3; }
	int x = 0;
};
} // namespace

/* No virtual function: no vtable pointer, nothing names its type.  */
struct Pod {
	long a = 1, b = 2, c = 3;
};

/* ---- what the program keeps of them ---------------------------------- */

#define MAX_OBJS 512
#define MAX_CLASSES 32

struct obj {
	uintptr_t hidden;            /* ~address */
	size_t size;
	const std::type_info *type;  /* dynamic type (typeid(*p)) */
	bool leaked, pod;
};

static obj objs[MAX_OBJS];
static int nobjs;

/* Held: containers, and an array of complete objects' addresses (a
   pointer to a base part would be an interior pointer: `possible`).  */
static std::vector<Shape *> g_shapes;
static std::map<int, net::Conn *> g_conns;
static void *g_misc[128];
static int g_nmisc;

template <typename T> static void note(T *p, bool leaked)
{
	if (nobjs == MAX_OBJS)
		die("too many objects");
	objs[nobjs++] = obj{ ~(uintptr_t)dynamic_cast<void *>(p), sizeof(*p),
			     &typeid(*p), leaked, false };
}

static void note_pod(Pod *p, bool leaked)
{
	if (nobjs == MAX_OBJS)
		die("too many objects");
	objs[nobjs++] = obj{ ~(uintptr_t)p, sizeof *p, &typeid(Pod), leaked,
			     true };
}

static void forget(const void *p)
{
	for (int i = 0; i < nobjs; i++)
		if (objs[i].hidden == ~(uintptr_t)p) {
			objs[i] = objs[--nobjs];
			return;
		}
	die("forgetting an unrecorded object");
}

template <typename T> static T *keep(T *p)
{
	note(p, false);
	if (g_nmisc == 128)
		die("too many kept objects");
	g_misc[g_nmisc++] = dynamic_cast<void *>(p);
	return p;
}

/* Zero a big piece of the stack below the caller: the frames of the
   functions that held the leaked pointers.  */
static __attribute__((noinline)) void scrub(void)
{
	char buf[256 << 10];
	explicit_bzero(buf, sizeof buf);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/* ---- the heap --------------------------------------------------------- */

static __attribute__((noinline)) void make_held(void)
{
	g_shapes.reserve(128);
	for (int i = 0; i < 40; i++) {
		Circle *c = new Circle;
		c->id = i;
		note(c, false);
		g_shapes.push_back(c);
	}
	for (int i = 0; i < 25; i++) {
		Square *s = new Square;
		note(s, false);
		g_shapes.push_back(s);
	}
	for (int i = 0; i < 11; i++) {
		net::Conn *c = new net::Conn;
		c->sock = i;
		note(c, false);
		g_conns[i] = c;
	}
	for (int i = 0; i < 10; i++)
		keep(new Bat);
	for (int i = 0; i < 8; i++)
		keep(new Mammal);
	for (int i = 0; i < 3; i++)
		keep(new Animal);
	for (int i = 0; i < 9; i++)
		keep(new Stream);
	for (int i = 0; i < 5; i++)
		keep(new Box<int>);
	for (int i = 0; i < 5; i++)
		keep(new Box<long>);
	for (int i = 0; i < 6; i++)
		keep(new net::detail::Buffer);
	for (int i = 0; i < 4; i++)
		keep(new Local);
	for (int i = 0; i < 10; i++) {
		Pod *p = new Pod;
		note_pod(p, false);
		g_misc[g_nmisc++] = p;
	}
}

/* Given back: not recorded.  The Squares go back at the end of the
   vector, so no pointer to them stays in the held part.  */
static __attribute__((noinline)) void drop_some(void)
{
	for (int i = 0; i < 5; i++) {
		Shape *s = g_shapes.back();
		g_shapes.pop_back();
		forget(s);
		delete s;
	}
	net::Conn *c = g_conns[10];
	g_conns.erase(10);
	forget(c);
	delete c;
}

template <typename T> static __attribute__((noinline)) void lose(int n)
{
	for (int i = 0; i < n; i++)
		note(new T, true);
}

static __attribute__((noinline)) void make_leaks(void)
{
	lose<Circle>(3);
	lose<Bat>(2);
	lose<Stream>(1);
	lose<Box<int>>(2);
	lose<net::detail::Buffer>(1);
	lose<Local>(1);
	for (int i = 0; i < 2; i++)
		note_pod(new Pod, true);
}

/* ---- the truth --------------------------------------------------------- */

static const std::type_info *class_type[MAX_CLASSES];
static char class_name[MAX_CLASSES][128];
static int nclasses;

/* Each class's name, demangled once (the demangler mallocs).  */
static __attribute__((noinline)) void name_classes(void)
{
	for (int i = 0; i < nobjs; i++) {
		int k;
		for (k = 0; k < nclasses; k++)
			if (*class_type[k] == *objs[i].type)
				break;
		if (k < nclasses)
			continue;
		if (nclasses == MAX_CLASSES)
			die("too many classes");
		int st = 0;
		char *d = abi::__cxa_demangle(objs[i].type->name(), NULL, NULL,
					      &st);
		if (st != 0 || !d || strlen(d) >= sizeof class_name[0])
			die("cannot demangle a class name");
		strcpy(class_name[k], d);
		free(d);
		class_type[nclasses++] = objs[i].type;
	}
}

static const char *class_of(const obj *o)
{
	for (int k = 0; k < nclasses; k++)
		if (*class_type[k] == *o->type)
			return class_name[k];
	die("an unnamed class");
	return NULL;
}

static __attribute__((noinline)) void write_truth(const char *path)
{
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out_fd < 0)
		die("cannot open the truth file");
	for (int i = 0; i < nobjs; i++)
		for (int j = 0; j < i; j++)
			if (objs[i].hidden == objs[j].hidden)
				die("two records of one address");
	out_str("prog cxx1\n");
	for (int i = 0; i < nobjs; i++) {
		const obj *o = &objs[i];
		out_str(o->pod ? "pod " : "obj ");
		out_num(~o->hidden, 16);
		out_str(" ");
		out_num(o->size, 10);
		out_str(o->leaked ? " leaked " : " held ");
		out_str(class_of(o));
		out_str("\n");
	}
	out_str("end\n");
	out_flush();
	close(out_fd);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: cxx1 TRUTHFILE");
	make_held();
	drop_some();
	make_leaks();
	scrub();
	name_classes();
	scrub();
	write_truth(argv[1]);
	scrub();
	abort();
}

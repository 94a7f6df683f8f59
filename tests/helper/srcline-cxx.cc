// srcline-cxx.cc - the C++ frames of srcline-prog (see srcline-prog.c):
// names that come demangled from DWARF's linkage names (and from the
// symbol table when the program is stripped).  No name recorded has a
// space in it: the truth file separates frames by spaces.
#include <cstdio>

#define NOINLINE __attribute__((noinline))
#define STR2(x) #x
#define STR(x) STR2(x)

extern "C" void record(const char *frames);
extern "C" void cxx_entry(void);

static volatile int cxx_sink;

namespace hwt {
template <typename T> struct Box {
	T v;
	const char *outer_frames;
	__attribute__((always_inline)) void put(T x)
	{
		char buf[256];
		v = x;
		std::snprintf(buf, sizeof buf, "hwt::Box<int>::put(int):%d %s",
			      __LINE__ + 1, outer_frames);
		record(buf);
		cxx_sink++;
	}
};

NOINLINE void fill(int n)
{
	Box<int> b;
	b.outer_frames = "hwt::fill(int):" STR(__LINE__); b.put(n);
	cxx_sink += b.v;
}
} // namespace hwt

extern "C" void cxx_entry(void)
{
	hwt::fill(3);
	cxx_sink++;
}

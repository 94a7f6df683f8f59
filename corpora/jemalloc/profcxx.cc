// profcxx - a C++ program profiled by jemalloc through the environment
// (MALLOC_CONF=prof:true,lg_prof_sample:0 and LD_PRELOAD of the library:
// nothing in the program says so), for `heapwalk --pid PID prof`.
//
// It allocates from make_strings(): 100 `new std::string(200, 'x')`, so
// each string object comes through operator new from make_strings() and
// its 201-byte buffer from libstdc++'s _M_construct; the vector of
// pointers grows through std::allocator.  Its truth (argv[1]):
//   site make_strings(int) OBJS BYTES  the string objects still live and
//                                    the sum of their usable sizes
//   end
// then "ready" on stdout, and it waits for a line on stdin before it
// prints "OK" and exits (tests/live-lib.sh's protocol).
//
//   g++ -O1 -g -o profcxx profcxx.cc
#include <malloc.h>
#include <stdio.h>
#include <string>
#include <vector>

static std::vector<std::string *> keep;

__attribute__((noinline)) size_t make_strings(int n)
{
	size_t bytes = 0;
	for (int i = 0; i < n; i++) {
		std::string *s = new std::string(200, 'x');
		bytes += malloc_usable_size(s);
		keep.push_back(s);
	}
	return bytes;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: profcxx TRUTHFILE\n");
		return 2;
	}
	// The truth file is opened first: stdio's buffer is allocated (and
	// sampled) outside make_strings().
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 2;
	size_t bytes = make_strings(100);
	fprintf(f, "site make_strings(int) %zu %zu\nend\n", keep.size(), bytes);
	if (fclose(f) != 0)
		return 2;
	printf("ready\n");
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof line, stdin))
		return 1;
	printf("OK\n");
	return 0;
}

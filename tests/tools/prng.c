/* prng - deterministic pseudo-random bytes for tests.
 *
 *   prng SEED COUNT      writes COUNT bytes to stdout
 *
 * The same SEED always gives the same bytes (xorshift64*), so a test that
 * feeds "random" garbage to heapwalk fails the same way every time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: prng SEED COUNT\n");
		return 2;
	}
	uint64_t x = strtoull(argv[1], NULL, 0) * 0x9e3779b97f4a7c15ull + 1;
	unsigned long long n = strtoull(argv[2], NULL, 0);
	unsigned char buf[8192];
	while (n) {
		size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
		for (size_t i = 0; i < k; i++) {
			x ^= x >> 12;
			x ^= x << 25;
			x ^= x >> 27;
			buf[i] = (unsigned char)((x * 0x2545f4914f6cdd1dull) >> 56);
		}
		if (fwrite(buf, 1, k, stdout) != k)
			return 1;
		n -= k;
	}
	return fflush(stdout) ? 1 : 0;
}

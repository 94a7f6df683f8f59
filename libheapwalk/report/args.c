/* args.c - checking a command's words: how many, addresses, options'
 * values and sizes.  */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

enum hw_status hw_args_at_most(struct hw_session *s, int argc,
			       char *const argv[], int max, const char *what)
{
	if (argc - 1 <= max)
		return HW_OK;
	return hw_error(s, HW_USAGE, "%s: unexpected argument '%s'%s%s",
			argv[0], argv[max + 1], what ? " (" : "",
			what ? what : "");
}

static bool parse_address(const char *a, uint64_t *out)
{
	if (a[0] == '0' && (a[1] == 'x' || a[1] == 'X'))
		a += 2;
	if (!*a || strlen(a) > 16)
		return false;
	uint64_t v = 0;
	for (; *a; a++) {
		int d = *a >= '0' && *a <= '9' ? *a - '0'
			: *a >= 'a' && *a <= 'f' ? *a - 'a' + 10
			: *a >= 'A' && *a <= 'F' ? *a - 'A' + 10 : -1;
		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return true;
}

bool hw_args_addr(const char *a, uint64_t *out)
{
	return parse_address(a, out);
}

enum hw_status hw_args_address(struct hw_session *s, int argc,
			       char *const argv[], uint64_t *addr)
{
	if (argc != 2)
		return hw_error(s, HW_USAGE, "%s: expected one address",
				argv[0]);
	if (!parse_address(argv[1], addr))
		return hw_error(s, HW_USAGE, "%s: '%s' is not an address "
				"(hexadecimal, with or without 0x)", argv[0],
				argv[1]);
	return HW_OK;
}

const char *hw_args_value(int argc, char *const argv[], int *i,
			  const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	return *i + 1 < argc ? argv[++*i] : "";
}

bool hw_args_names(const char *v, const char *const *names, size_t n,
		   uint32_t *bits, const char **bad, size_t *badlen)
{
	while (*v) {
		size_t len = strcspn(v, ","), k = 0;
		while (k < n && (!names[k] || strlen(names[k]) != len ||
				 strncmp(names[k], v, len) != 0))
			k++;
		if (k == n) {
			*bad = v;
			*badlen = len;
			return false;
		}
		*bits |= 1u << k;
		v += len + (v[len] == ',');
	}
	return true;
}

bool hw_args_size(const char *v, uint64_t *out)
{
	char *end;
	if (!*v || *v == '-' || *v == '+')
		return false;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 0);
	if (end == v || errno)
		return false;
	unsigned shift = *end == 'K' || *end == 'k' ? 10
		       : *end == 'M' || *end == 'm' ? 20
		       : *end == 'G' || *end == 'g' ? 30 : 0;
	if (shift)
		end++;
	if (*end || (shift && n > UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)n << shift;
	return true;
}

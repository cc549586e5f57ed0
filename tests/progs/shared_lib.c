/* shared_lib.c — libptgen_shared.so: a shared library of ptgen's own, reached through the PLT
 * (lazy binding in the dynamic loader), calling libc and calling back into the program. */
#include <string.h>

long ptgen_shared_sum(const long *v, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

long ptgen_shared_apply(long (*fn)(long), long x, int times)
{
	while (times-- > 0)
		x = fn(x);
	return x;
}

unsigned long ptgen_shared_hash(const char *s)
{
	unsigned long h = 5381;
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++)
		h = h * 33 + (unsigned char)s[i];
	return h;
}

/* shared.c — ptgen test program: calls into libptgen_shared.so (lazily bound through the PLT),
 * which calls libc and calls back into the program. */
#include <stdio.h>

long ptgen_shared_sum(const long *v, int n);
long ptgen_shared_apply(long (*fn)(long), long x, int times);
unsigned long ptgen_shared_hash(const char *s);

static long inc3(long x)
{
	return x + 3;
}

int main(void)
{
	long v[20];
	for (int i = 0; i < 20; i++)
		v[i] = i;
	long s = ptgen_shared_sum(v, 20);
	long a = ptgen_shared_apply(inc3, 1, 7);
	unsigned long h = ptgen_shared_hash("ptgen");
	s += ptgen_shared_sum(v, 10);
	printf("sum=%ld apply=%ld hash=%lu\n", s, a, h);
	return s == 235 && a == 22 ? 0 : 1;
}

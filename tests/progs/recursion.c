/* recursion.c — ptgen test program: recursion deeper than the 64-entry return-compression
 * stack, mutual recursion, and a tail-call-free Ackermann function. */
#include <stdio.h>

static unsigned fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int is_odd(unsigned n);

static int is_even(unsigned n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

static int is_odd(unsigned n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

static unsigned long ackermann(unsigned long m, unsigned long n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}

__attribute__((noinline)) static unsigned deep(unsigned depth)
{
	volatile unsigned pad = depth;
	if (depth == 0)
		return 0;
	return deep(depth - 1) + pad;
}

int main(void)
{
	unsigned f = fib(15);
	int e = is_even(150);
	unsigned long a = ackermann(2, 3);
	unsigned d = deep(100);
	printf("fib(15)=%u even(150)=%d ack(2,3)=%lu deep=%u\n", f, e, a, d);
	return f == 610 && e == 1 && a == 9 && d == 5050 ? 0 : 1;
}

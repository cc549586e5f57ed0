/* loops.c — ptgen test program: counted and data-dependent loops, nested conditionals,
 * libc calls (printf, strlen, memset), an atexit handler and exit() from a nested call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned sink;

static void at_exit_handler(void)
{
	sink += 1;
}

static unsigned count_primes(unsigned limit)
{
	unsigned n = 0;
	for (unsigned i = 2; i < limit; i++) {
		unsigned j = 2;
		while (j * j <= i && i % j)
			j++;
		if (j * j > i)
			n++;
	}
	return n;
}

static unsigned collatz_steps(unsigned long x)
{
	unsigned steps = 0;
	while (x != 1) {
		x = (x & 1) ? 3 * x + 1 : x / 2;
		steps++;
	}
	return steps;
}

static void finish(unsigned code)
{
	if (code == 0)
		exit(0);
	exit(1);
}

int main(int argc, char **argv)
{
	char buf[256];
	unsigned primes = count_primes(600);
	unsigned longest = 0;
	for (unsigned long x = 1; x < 40; x++) {
		unsigned s = collatz_steps(x);
		if (s > longest)
			longest = s;
	}
	memset(buf, 'a', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	sink = (unsigned)strlen(buf) + (unsigned)argc + (argv[0] != NULL);
	atexit(at_exit_handler);
	printf("primes below 600: %u, longest collatz below 40: %u\n", primes, longest);
	finish(primes == 109 && longest == 111 ? 0 : 1);
	return 2;
}

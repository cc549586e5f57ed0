/* longjmp.c — ptgen test program: setjmp/longjmp out of nested calls (returns that do not
 * match the calls, an indirect jump in longjmp), repeated so that later returns follow. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static volatile int depth_reached;

__attribute__((noinline)) static void dive(int depth, int bail_at)
{
	depth_reached = depth;
	if (depth == bail_at)
		longjmp(env, depth);
	dive(depth + 1, bail_at);
	depth_reached--;
}

__attribute__((noinline)) static int leaf(int x)
{
	return x * 3;
}

int main(void)
{
	int total = 0;
	for (int round = 1; round <= 5; round++) {
		volatile int seen = 0;
		int v = setjmp(env);
		if (v == 0) {
			dive(0, round * 3);
			seen = -1; /* not reached */
		} else {
			seen = v;
		}
		total += seen + leaf(round);
	}
	printf("total=%d\n", total);
	return total == 90 ? 0 : 1;
}

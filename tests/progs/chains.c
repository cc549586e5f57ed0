/* chains.c — ptgen test program for the chains of ptrec_pt_flow_count: the same code returning
 * to different callers (the first levels the same, a deeper one different, with the same TNT
 * bits and the same next TIP: one chain key, other return addresses), indirect calls whose
 * target changes from one visit of the call site to the next, and calls nested deeper than a
 * chain may push, all between runs of conditional branches. */
#include <stdio.h>

static long hook_fn(long x) { return x + 2; }
static long fixed_fn(long x) { return x - 1; }

static long (*const volatile hook)(long) = hook_fn;
static long (*const volatile fixed)(long) = fixed_fn;

static long inner(long x)
{
	long r = hook(x); /* a chain starts at its target and returns through inner and mid */
	for (int i = 0; i < 3; i++) /* the same TNT bits from every caller */
		r += x & 1 ? i : 1;
	return r;
}

/* One call site of inner: inner's returns go back to the same place from both outers. */
static long mid(long x)
{
	return inner(x) + 1;
}

/* outer_a and outer_b: the same branches, different return addresses. */
static long outer_a(long x)
{
	long r = mid(x);
	if (r > 2)
		r--;
	return r;
}

static long outer_b(long x)
{
	long r = mid(x);
	if (r > 2)
		r--;
	return r;
}

static long f0(long x) { return x + 1; }
static long f1(long x) { return x > 3 ? x - 3 : x; }
static long f2(long x) { return x ^ 5; }

static long (*const volatile fn[3])(long) = {f0, f1, f2};

static long deep(int n, long x)
{
	if (n == 0)
		return x & 1;
	return deep(n - 1, x + 1) + 1;
}

int main(void)
{
	long acc = 0;
	for (int i = 0; i < 300; i++) {
		long v = i % 2 ? outer_a(2 * i) : outer_b(2 * i); /* even: the same bits inside */
		acc += fixed(v); /* the same TIP behind both */
		acc += fn[i % 3](acc & 7); /* a new target every visit */
		acc += fn[(i / 7) % 3](i); /* the same target for a while, then another */
		if (i % 10 == 0)
			acc += deep(9, i);
	}
	printf("acc=%ld\n", acc);
	return acc > 0 ? 0 : 1;
}

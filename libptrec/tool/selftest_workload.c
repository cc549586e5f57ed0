/* selftest_workload.c — the workload of `ptrec selftest` (selftest_workload.h).  Built with
 * -finstrument-functions -fno-inline -fno-optimize-sibling-calls (tool.am): every call stays a
 * call, every function returns with a ret, and the instrumented backend's hooks see each entry
 * and exit. */
#include "config.h"

#include "tool/selftest_workload.h"

#define WL __attribute__((noinline, noclone, used, section("ptrec_selftest_text")))

extern const char __stop_ptrec_selftest_text[];

static volatile int sink;

/* Keeps a call from becoming a tail jump and a result from being folded away. */
#define KEEP(x) __asm__ volatile("" : "+r"(x))

WL static int wl_even(int i)
{
	sink += i;
	return i;
}

WL static int wl_odd(int i)
{
	sink -= i;
	return -i;
}

WL static int wl_ind_a(int x)
{
	return x + 1;
}

WL static int wl_ind_b(int x)
{
	return x + 2;
}

WL static int wl_ind_c(int x)
{
	return x + 3;
}

static int (*const volatile wl_table[3])(int) = {wl_ind_a, wl_ind_b, wl_ind_c};

WL static int wl_recurse(int n)
{
	if (n == 0)
		return 0;
	int r = wl_recurse(n - 1);
	KEEP(r);
	return r + 1;
}

WL int ptrec_selftest_workload(int trips, int index, int depth)
{
	int acc = 0, r;

	for (int i = 0; i < trips; i++) {
		if (i & 1)
			r = wl_odd(i);
		else
			r = wl_even(i);
		KEEP(r);
		acc += r;
	}
	r = wl_table[index % 3](acc);
	KEEP(r);
	acc += r;
	r = wl_recurse(depth);
	KEEP(r);
	return acc + r;
}

const struct ptrec_selftest_fn *ptrec_selftest_functions(size_t *n)
{
	static struct ptrec_selftest_fn fns[7];

	fns[0] = (struct ptrec_selftest_fn){"workload", (uintptr_t)ptrec_selftest_workload};
	fns[1] = (struct ptrec_selftest_fn){"wl_even", (uintptr_t)wl_even};
	fns[2] = (struct ptrec_selftest_fn){"wl_odd", (uintptr_t)wl_odd};
	fns[3] = (struct ptrec_selftest_fn){"wl_ind_a", (uintptr_t)wl_ind_a};
	fns[4] = (struct ptrec_selftest_fn){"wl_ind_b", (uintptr_t)wl_ind_b};
	fns[5] = (struct ptrec_selftest_fn){"wl_ind_c", (uintptr_t)wl_ind_c};
	fns[6] = (struct ptrec_selftest_fn){"wl_recurse", (uintptr_t)wl_recurse};
	*n = sizeof(fns) / sizeof(fns[0]);
	return fns;
}

uintptr_t ptrec_selftest_text_end(void)
{
	return (uintptr_t)__stop_ptrec_selftest_text;
}

/* selftest_workload.h — the built-in workload of `ptrec selftest`: a few functions whose
 * control flow is known in advance (calls and returns, a conditional taken one way then the
 * other, an indirect call through a table, recursion, a loop with a known trip count),
 * compiled with -finstrument-functions so the instrumented backend sees them too, and kept
 * together in the section ptrec_selftest_text so a decoded branch can be mapped back to them
 * by address alone. */
#ifndef PTREC_SELFTEST_WORKLOAD_H
#define PTREC_SELFTEST_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

/* One workload function. */
struct ptrec_selftest_fn {
	const char *name;   /* its name in the expected sequence */
	uintptr_t addr;     /* its entry address */
};

/* The workload's functions, in no particular order; *n is set to their count. */
const struct ptrec_selftest_fn *ptrec_selftest_functions(size_t *n);

/* The end of the section holding them (the last function ends there). */
uintptr_t ptrec_selftest_text_end(void);

/* Runs the workload: a loop of `trips` iterations calling wl_even on even and wl_odd on odd
 * iterations, then wl_ind_c through entry `index` (2) of a table of three functions, then
 * wl_recurse(depth).  Returns a value that depends on all of it. */
int ptrec_selftest_workload(int trips, int index, int depth);

#endif

/* workload.h — the recorder benchmarks' workload in several builds (bench/workload.c). */
#ifndef PTREC_BENCH_WORKLOAD_H
#define PTREC_BENCH_WORKLOAD_H

#include <stdint.h>

/* The builds: _plain (no instrumentation), _calls (-finstrument-functions), _edges
 * (trace-pc), _rec (the flags `ptrec cflags` prints for $CC), _clang_plain and _clang_rec (the
 * same with Clang). */

/* Returns fib(n) computed recursively: fib(n+1)-1 calls. */
uint64_t wl_calls_plain(unsigned n);
uint64_t wl_calls_calls(unsigned n);
uint64_t wl_calls_edges(unsigned n);
uint64_t wl_calls_rec(unsigned n);
uint64_t wl_calls_clang_plain(unsigned n);
uint64_t wl_calls_clang_rec(unsigned n);

/* Sorts n pseudo-random numbers `rounds` times by insertion; returns a checksum. */
uint64_t wl_branches_plain(unsigned n, unsigned rounds);
uint64_t wl_branches_calls(unsigned n, unsigned rounds);
uint64_t wl_branches_edges(unsigned n, unsigned rounds);
uint64_t wl_branches_rec(unsigned n, unsigned rounds);
uint64_t wl_branches_clang_plain(unsigned n, unsigned rounds);
uint64_t wl_branches_clang_rec(unsigned n, unsigned rounds);

/* Calls a small function that is never inlined n times; returns a checksum.  Measures the
 * cost of one recorded call. */
uint64_t wl_leaf_calls_plain(unsigned n);
uint64_t wl_leaf_calls_calls(unsigned n);
uint64_t wl_leaf_calls_edges(unsigned n);
uint64_t wl_leaf_calls_rec(unsigned n);
uint64_t wl_leaf_calls_clang_plain(unsigned n);
uint64_t wl_leaf_calls_clang_rec(unsigned n);

#endif

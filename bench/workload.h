/* workload.h — the recorder benchmarks' workload in three builds (bench/workload.c):
 * _plain (no instrumentation), _calls (-finstrument-functions), _edges (trace-pc). */
#ifndef PTREC_BENCH_WORKLOAD_H
#define PTREC_BENCH_WORKLOAD_H

#include <stdint.h>

/* Returns fib(n) computed recursively: fib(n+1)-1 calls. */
uint64_t wl_calls_plain(unsigned n);
uint64_t wl_calls_calls(unsigned n);
uint64_t wl_calls_edges(unsigned n);

/* Sorts n pseudo-random numbers `rounds` times by insertion; returns a checksum. */
uint64_t wl_branches_plain(unsigned n, unsigned rounds);
uint64_t wl_branches_calls(unsigned n, unsigned rounds);
uint64_t wl_branches_edges(unsigned n, unsigned rounds);

#endif

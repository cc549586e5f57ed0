/* server_workload.h — bench_server's workload (bench/server_workload.c) in its builds: _plain,
 * _calls (-finstrument-functions), _rec (`ptrec cflags` for $CC), _clang_plain, _clang_rec. */
#ifndef PTREC_BENCH_SERVER_WORKLOAD_H
#define PTREC_BENCH_SERVER_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

/* Serves `events` batches of the pipelined requests in batch[0..len), one per line, from an
 * empty table; returns a digest of the replies. */
uint64_t sv_run_plain(const char *batch, size_t len, unsigned events);
uint64_t sv_run_calls(const char *batch, size_t len, unsigned events);
uint64_t sv_run_rec(const char *batch, size_t len, unsigned events);
uint64_t sv_run_clang_plain(const char *batch, size_t len, unsigned events);
uint64_t sv_run_clang_rec(const char *batch, size_t len, unsigned events);

#endif

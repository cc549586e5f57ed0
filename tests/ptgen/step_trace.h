/* step_trace.h — runs a program under ptrace single-step and records what it executed.
 *
 * The child is started with PTRACE_TRACEME and ADDR_NO_RANDOMIZE, runs the dynamic loader
 * freely up to the executable's entry point (AT_ENTRY, a temporary INT3), and from there is
 * single-stepped until it exits.  Every completed user instruction becomes an XL_INSN record
 * (a REP string instruction once, when it completes); a signal that interrupts user mode (a
 * fault, or an asynchronous signal) becomes an XL_ASYNC record.  The code image (executable
 * file mappings from /proc/PID/maps, taken at the entry point, after every mmap/mprotect and
 * before exit, and the vDSO dumped to a file) is collected alongside. */
#ifndef PTGEN_STEP_TRACE_H
#define PTGEN_STEP_TRACE_H

#include <stdint.h>

#include "exec_log.h"

/* One loaded object of the image. */
struct st_object {
	char *path;     /* file name (the vDSO: the file it was dumped to) */
	uint64_t base;  /* address of its lowest PT_LOAD segment (what `--elf FILE:BASE` takes) */
	uint64_t bias;  /* load bias: address minus ELF p_vaddr */
};

/* The image: every object that had executable code mapped at some point. */
struct st_image {
	struct st_object *objs; /* objects (malloc'd) */
	unsigned count;         /* objects used */
};

/* Options of a recording. */
struct st_options {
	const char *vdso_path;  /* where to dump the vDSO (NULL: do not) */
	uint64_t max_steps;     /* stop after this many single-steps (0: no limit) */
};

/* Result of a recording. */
struct st_result {
	uint64_t steps;         /* single-steps done */
	uint64_t entry;         /* where recording started (AT_ENTRY) */
	int exit_status;        /* the child's exit status, or 128+signal if a signal killed it */
};

/* Runs argv[0] (searched in PATH) with argv under single-step, appending to *log and *img.
 * Returns 0; 77 if ptrace is not permitted here (message on stderr says why); 1 on any other
 * failure (message on stderr). */
int st_record(char *const argv[], const struct st_options *opt, struct xl_log *log,
              struct st_image *img, struct st_result *res);

void st_image_free(struct st_image *img);

#endif

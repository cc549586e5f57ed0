/* exec_log.h — what ptgen saw a program do: the executed user instructions in order, each with
 * its branch class and the RIP that followed, plus the points where a signal or fault took the
 * program into the kernel.  Recording (slow, ptrace) writes it once; encoding (fast, pure) turns
 * it into as many PT streams with different settings as a test wants. */
#ifndef PTGEN_EXEC_LOG_H
#define PTGEN_EXEC_LOG_H

#include <stddef.h>
#include <stdint.h>

/* Record types. */
enum xl_type {
	XL_INSN = 1,  /* the instruction at ip executed (completed); next is the RIP after it */
	XL_ASYNC = 2, /* a signal (fault or asynchronous) entered the kernel in user mode before
	                 the instruction at ip executed: FUP(ip) + TIP.PGD */
	XL_STOP = 3,  /* recording stopped early (step limit) before the instruction at ip */
};

/* One record, 24 bytes in memory and on disk (little-endian host order). */
struct xl_rec {
	uint64_t ip;   /* instruction address */
	uint64_t next; /* XL_INSN: RIP after it executed (0 if the process ended) */
	uint8_t type;  /* enum xl_type */
	uint8_t kind;  /* XL_INSN: enum ic_kind (insn_class.h) */
	uint8_t len;   /* XL_INSN: length for branches, 0 for others */
	uint8_t flags; /* XL_F_* */
	int32_t disp;  /* XL_INSN: displacement of a direct branch */
};

#define XL_F_ZERO_CALL 0x01u /* a direct call with displacement 0 (to the next instruction) */

/* A whole log. */
struct xl_log {
	struct xl_rec *recs; /* records in execution order (malloc'd) */
	size_t count;        /* records used */
	size_t cap;          /* records allocated */
};

/* Appends a record.  Returns 0, or -1 when out of memory. */
int xl_append(struct xl_log *log, const struct xl_rec *rec);

/* Writes log to path ("PTGENXL1" header, count, records).  Returns 0 or -1 (errno set). */
int xl_write(const struct xl_log *log, const char *path);

/* Reads a log written by xl_write.  Returns 0, or -1 with a message on stderr. */
int xl_read(struct xl_log *log, const char *path);

/* Writes the ground truth: the address of every XL_INSN record, one per line as 16 lowercase
 * hex digits (the format of `ptrec decode --insn`).  Returns 0 or -1 (errno set). */
int xl_write_truth(const struct xl_log *log, const char *path);

/* Writes the ground truth with the trace events where `ptrec decode --insn` (and libipt) put
 * them: "[enabled]" before the first instruction after tracing (re)starts, "[disabled]" after
 * the instruction that entered the kernel (SYSCALL) or, for a signal or fault, after the last
 * instruction that completed before it.  Returns 0 or -1 (errno set). */
int xl_write_truth_events(const struct xl_log *log, const char *path);

void xl_free(struct xl_log *log);

#endif

/* minidump.h — a ptrec dump as a Breakpad minidump (the format Breakpad and Crashpad write on
 * Linux x86-64, read by minidump_stackwalk, lldb and the crash servers: Sentry, Backtrace,
 * Socorro, BugSplat).  doc/minidump.md says what goes where; format facts come from Breakpad's
 * public minidump_format.h and Microsoft's MINIDUMP_* documentation.
 *
 * The minidump holds only what the ptrec dump holds (a process the crash path would not dump,
 * setuid or non-dumpable, has no dump to convert): the system info the dump knows (AMD64,
 * Linux, CPU family/model/stepping, and from its host records the CPU vendor and count and
 * the kernel's uname), the exception (signal, si_code, fault address, crashing
 * thread), every thread with its context (all general registers for the event thread, only sp
 * and pc for the threads the kernel showed blocked, none for the others) and its stack bytes,
 * the modules of the mappings with their build IDs as ELF CodeView records ('BpEL'), the
 * memory the dump kept (stacks, vDSO, JIT code), the maps text (LinuxMaps), the crash-time
 * files of the process and its host the dump's SYSFILE records hold (LinuxCmdLine, LinuxAuxv,
 * LinuxProcStatus, LinuxCpuInfo, LinuxLsbRelease; never LinuxEnviron), the process id,
 * and the last branches of every thread in a stream of our own
 * (PTREC_MINIDUMP_BRANCH_STREAM).  Not async-signal-safe: it runs in `ptrec minidump`, in
 * `ptrec upload`, and in the report child at crash time (through `ptrec minidump`). */
#ifndef PTREC_MINIDUMP_H
#define PTREC_MINIDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "dump/dump_read.h"
#include "report/report.h"

/* Our stream of last branches (doc/minidump.md): in the user stream range (above
 * MINIDUMP_STREAM_TYPE's LastReservedStream 0xffff); "PT" in the high half like Breakpad's
 * 0x4767 "Gg" and Crashpad's 0x4350 "CP". */
#define PTREC_MINIDUMP_BRANCH_STREAM 0x50540001u
#define PTREC_MINIDUMP_BRANCH_VERSION 1u

/* A minidump in memory. */
struct ptrec_minidump {
	uint8_t *data;        /* the file's bytes (malloc'd) */
	size_t size;          /* bytes at data */
	uint32_t nthreads;    /* threads in its thread list */
	uint32_t nmodules;    /* modules in its module list */
	uint32_t nbuildids;   /* modules with a build ID (a CodeView record) */
	uint32_t nmemory;     /* memory ranges in its memory list */
	int has_exception;    /* 1 if it has an exception stream (crash and assertion dumps) */
};

/* Builds the minidump of the dump r was built from (ptrec_report_build with crashed_only 0:
 * every thread of r is listed).  The branch stream holds the last r->opt.branches branches of
 * the event thread and r->opt.other_branches of each other thread, as the text report shows
 * them.  r is only read.  Returns 0 and fills *md (release with ptrec_minidump_free), or
 * -PTREC_ENOMEM, -PTREC_EOVERFLOW when the minidump would pass 4 GiB (32-bit offsets), or
 * -PTREC_ENOSUPP for a dump written on another machine than x86-64 or aarch64 (PROCESS.arch:
 * CONTEXT_AMD64 or CONTEXT_ARM64 is written, never one filled from another machine's
 * registers); on error *md holds nothing to free. */
int ptrec_minidump_build(const struct ptrec_report *r, struct ptrec_minidump *md);

/* Why ptrec_minidump_build returned rc, in words ("the dump's machine has no minidump context
 * here ..." for -PTREC_ENOSUPP).  Never NULL. */
const char *ptrec_minidump_strerror(int rc);

/* Everything `ptrec minidump DUMP` does before writing: loads and parses the dump at
 * dump_path, builds its report with opt (NULL: ptrec_report_options_init's defaults; its
 * crashed_only is ignored) and the minidump.  Returns 0, or the error of the step that failed
 * with *err naming the file offset and the cause: -PTREC_EIO (cannot read the dump),
 * -PTREC_EFORMAT / -PTREC_ETRUNC (not a dump), -PTREC_ENOMEM, -PTREC_EOVERFLOW.  *complete
 * (may be NULL) gets 1 if the dump ended with its END record, 0 if it was cut short (the
 * minidump then holds what was there). */
int ptrec_minidump_from_dump(const char *dump_path, const struct ptrec_report_options *opt,
                             struct ptrec_minidump *md, struct ptrec_dump_error *err,
                             int *complete);

/* Writes md to a new file at path: created 0600 with O_EXCL|O_NOFOLLOW (an existing file or a
 * symbolic link there is never written through or replaced), removed again when writing it
 * failed.  Returns 0, or -PTREC_EIO with errno set (EEXIST when path exists). */
int ptrec_minidump_save(const struct ptrec_minidump *md, const char *path);

/* Writes md to the descriptor fd (all of it, retrying short writes).  Returns 0 or -PTREC_EIO
 * with errno set. */
int ptrec_minidump_write_fd(const struct ptrec_minidump *md, int fd);

void ptrec_minidump_free(struct ptrec_minidump *md);

#endif

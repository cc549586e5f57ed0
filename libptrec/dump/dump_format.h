/* dump_format.h — the on-disk layout of a ptrec dump (.ptrec file).  doc/dump-format.md is the
 * prose version of this header; the writer (dump_write.c, crash-time) and the reader
 * (dump_read.c) both follow it.  All integers are little-endian (x86-64 and aarch64 Linux are).
 * The machine that wrote a dump is PROCESS.arch (an ELF e_machine; 0 in dumps written before
 * it existed, which were all x86-64): it decides how REGS and TASK.nr read. */
#ifndef PTREC_DUMP_FORMAT_H
#define PTREC_DUMP_FORMAT_H

#include <signal.h>
#include <stdint.h>

#define PTREC_DUMP_MAGIC "PTRECDMP"  /* 8 bytes, no NUL */
/* Version 2: instrumented rings hold 16-byte struct ptrec_soft_records (core/branch.h) and
 * their THREAD records carry the record format, the freeze TSC and the TSC conversion.
 * Version 1 (24-byte BTS-format soft records) is still read. */
#define PTREC_DUMP_VERSION 2u
#define PTREC_DUMP_VERSION_MIN 1u /* oldest version readers accept */

/* File header, at offset 0. */
struct ptrec_dump_header {
	char magic[8];        /* PTREC_DUMP_MAGIC */
	uint32_t version;     /* PTREC_DUMP_VERSION */
	uint32_t header_size; /* sizeof(struct ptrec_dump_header); records start here */
	uint64_t flags;       /* reserved, zero */
};

/* Every record: this header, `size` payload bytes, then zero padding to a multiple of 8.
 * Readers skip record types they do not know. */
struct ptrec_dump_record {
	uint32_t type;     /* enum ptrec_dump_record_type */
	uint32_t reserved; /* zero */
	uint64_t size;     /* payload bytes (without padding) */
};

enum ptrec_dump_record_type {
	PTREC_REC_PROCESS = 1, /* struct ptrec_dump_process; exactly one, first */
	PTREC_REC_REGS = 2,    /* struct ptrec_dump_regs: the crashing thread's registers */
	PTREC_REC_THREAD = 3,  /* struct ptrec_dump_thread + ring bytes; one per thread */
	PTREC_REC_MAPS = 4,    /* text of /proc/self/maps at dump time */
	PTREC_REC_BUILDID = 5, /* struct ptrec_dump_buildid + id bytes + path */
	PTREC_REC_MEMORY = 6,  /* struct ptrec_dump_memory + bytes (JIT code, vDSO, stack) */
	PTREC_REC_STATUS = 7,  /* text, "key value" lines: the recorder's configuration and why
	                          each refused backend was refused ("refused NAME: reason") */
	PTREC_REC_WATCH = 8,   /* struct ptrec_dump_watch: the span of a latency watch (event
	                          PTREC_EVENT_WATCH); at most one */
	PTREC_REC_TASK = 9,    /* struct ptrec_dump_task: another thread as the kernel showed it
	                          (/proc/self/task/TID/syscall); at most one per thread */
	PTREC_REC_SYSFILE = 10, /* struct ptrec_dump_sysfile + bytes: a file of the process
	                           (cmdline, auxv, status) or of its host (cpuinfo, lsb-release,
	                           os-release) as read at crash time; at most one per kind */
	PTREC_REC_END = 0xffff /* no payload; a dump without it was cut short */
};

/* Why the dump was written. */
enum ptrec_dump_event {
	PTREC_EVENT_CRASH = 1,    /* fatal signal */
	PTREC_EVENT_ASSERT = 2,   /* PTREC_ASSERT failure (then abort) */
	PTREC_EVENT_SNAPSHOT = 3, /* ptrec_snapshot(); the process went on */
	PTREC_EVENT_WATCH = 4,    /* a latency watch went over budget; the process went on */
};

struct ptrec_dump_process {
	uint32_t pid;          /* process id */
	uint32_t tid;          /* thread that crashed / asserted / took the snapshot */
	uint32_t event;        /* enum ptrec_dump_event */
	int32_t signo;         /* signal number (0 for snapshots) */
	int32_t si_code;       /* siginfo si_code */
	int32_t si_errno;      /* siginfo si_errno */
	uint64_t fault_addr;   /* siginfo si_addr for SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGTRAP;
	                          for any signal sent by a process (si_code SI_USER, SI_QUEUE,
	                          SI_TKILL) instead the sender: si_pid | (uint64_t)si_uid << 32 */
	int64_t time_sec;      /* CLOCK_REALTIME at dump time */
	int64_t time_nsec;
	uint32_t backend;      /* enum ptrec_backend in use */
	uint32_t cpu_family;   /* CPUID display family (for PT errata) */
	uint32_t cpu_model;    /* CPUID display model */
	uint32_t cpu_stepping; /* CPUID stepping */
	uint32_t nthreads;     /* number of THREAD records that follow */
	uint32_t arch;         /* ELF e_machine of the writer: 62 (EM_X86_64) or 183 (EM_AARCH64);
	                          0 (older dumps) means x86-64 */
	char comm[16];         /* /proc/self/comm, NUL-terminated */
	char exe[256];         /* /proc/self/exe target, NUL-terminated, may be truncated */
	char reason[512];      /* snapshot reason or assertion text, NUL-terminated */
};

/* What PROCESS.fault_addr holds, by signal and si_code; the writer and the readers follow
 * these two.  1 when the signal was sent by a process (kill, sigqueue, tgkill): the sender,
 * si_pid | (uint64_t)si_uid << 32. */
static inline int ptrec_dump_code_sent(int32_t si_code)
{
	return si_code == SI_USER || si_code == SI_QUEUE || si_code == SI_TKILL;
}
/* Otherwise, 1 for the signals whose si_addr is kept: the faulting address. */
static inline int ptrec_dump_signal_faults(int32_t signo)
{
	return signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE ||
	       signo == SIGTRAP;
}

/* x86-64 general registers, in the order of Linux ucontext gregs (REG_R8 .. REG_CR2). */
enum ptrec_dump_reg {
	PTREC_REG_R8, PTREC_REG_R9, PTREC_REG_R10, PTREC_REG_R11, PTREC_REG_R12, PTREC_REG_R13,
	PTREC_REG_R14, PTREC_REG_R15, PTREC_REG_RDI, PTREC_REG_RSI, PTREC_REG_RBP, PTREC_REG_RBX,
	PTREC_REG_RDX, PTREC_REG_RAX, PTREC_REG_RCX, PTREC_REG_RSP, PTREC_REG_RIP, PTREC_REG_EFL,
	PTREC_REG_CSGSFS, PTREC_REG_ERR, PTREC_REG_TRAPNO, PTREC_REG_OLDMASK, PTREC_REG_CR2,
	PTREC_REG_COUNT
};

/* aarch64 registers, in the order of the kernel's struct sigcontext: x0 .. x30 (x29 the frame
 * pointer, x30 the link register), sp, pc, pstate. */
enum ptrec_dump_reg_a64 {
	PTREC_A64_X0 = 0, PTREC_A64_FP = 29, PTREC_A64_LR = 30, PTREC_A64_SP = 31,
	PTREC_A64_PC = 32, PTREC_A64_PSTATE = 33, PTREC_A64_COUNT = 34
};

#define PTREC_REG_MAX 34 /* the most registers of any arch */

/* On disk: tid, count, then count values (count = PTREC_REG_COUNT on x86-64, PTREC_A64_COUNT on
 * aarch64; the payload is 8 + 8 * count bytes).  In memory gregs has room for every arch. */
struct ptrec_dump_regs {
	uint32_t tid;                  /* thread the registers belong to */
	uint32_t count;                /* PTREC_REG_COUNT or PTREC_A64_COUNT (by PROCESS.arch) */
	uint64_t gregs[PTREC_REG_MAX]; /* values, indexed by enum ptrec_dump_reg (x86-64) or
	                                  enum ptrec_dump_reg_a64 (aarch64) */
};
#define PTREC_DUMP_REGS_SIZE(count) (8u + 8u * (count)) /* payload bytes of a REGS record */

/* The ELF machine of a PROCESS record's arch field (0: x86-64, the dumps before the field). */
static inline uint32_t ptrec_dump_arch(uint32_t arch)
{
	return arch ? arch : 62u;
}

/* Thread flags. */
#define PTREC_THREAD_CRASHED 0x1u /* this thread raised the signal / assertion / snapshot */
#define PTREC_THREAD_WRAPPED 0x2u /* the ring wrapped: its oldest bytes were overwritten */
#define PTREC_THREAD_FROZEN  0x4u /* the ring was frozen before it was copied */
#define PTREC_THREAD_UNTRACED 0x8u /* the thread had no ring (budget or kernel refusal) */
#define PTREC_THREAD_HELPER  0x10u /* its perf event was opened by ptrec-helper (the kernel
                                      refused the process itself) */
#define PTREC_THREAD_EXITED  0x20u /* the thread ended while the crash was being handled (the
                                      application's handler joined it): its ring as it left it */

struct ptrec_dump_thread {
	uint32_t tid;          /* thread id */
	uint32_t backend;      /* enum ptrec_backend that filled the ring */
	uint32_t flags;        /* PTREC_THREAD_* */
	uint32_t reserved;
	char name[16];         /* thread name (/proc/self/task/TID/comm), NUL-terminated */
	uint64_t ring_size;    /* size of the ring in bytes */
	uint64_t head;         /* total bytes ever written to the ring (aux_head / soft head) */
	uint64_t data_size;    /* ring bytes that follow, oldest first (<= ring_size) */
	uint64_t pt_config;    /* intel_pt: perf_event_attr.config (RTIT_CTL-like bits);
	                          instrumented (version 2): the PTREC_SOFT_FMT_* record format */
	uint64_t pt_config1;   /* intel_pt: config1; instrumented (version 2): the TSC when the
	                          ring was frozen, 0 if unknown */
	uint64_t pt_config2;   /* intel_pt: config2 */
	uint32_t mtc_period;   /* intel_pt: MTC period exponent from config */
	uint32_t tsc_ratio_n;  /* CPUID 15H EBX (TSC/core crystal ratio numerator), 0 = unknown */
	uint32_t tsc_ratio_d;  /* CPUID 15H EAX (denominator), 0 = unknown */
	uint32_t nom_freq;     /* intel_pt caps/max_nonturbo_ratio, 0 = unknown */
	uint64_t time_zero;    /* perf_event_mmap_page time_zero (TSC -> perf time), 0 = unknown;
	                          instrumented: TSC -> CLOCK_MONOTONIC ns, same formula */
	uint32_t time_shift;   /* perf_event_mmap_page time_shift */
	uint32_t time_mult;    /* perf_event_mmap_page time_mult */
	uint64_t stack_pointer; /* sp at freeze time if known (crashing thread), else 0 */
};

/* A latency watch's span (ptrec_watch_begin/end).  Its markers are in the event thread's
 * ring: the branches between the begin and the end marker are the span.  On intel_pt without
 * PTWRITE there are no markers: begin_tsc/end_tsc place the span by the trace's times.
 * Records written before begin_tsc existed end after `reserved` (PTREC_DUMP_WATCH_V1_SIZE
 * bytes); readers take a shorter record's missing fields as 0 and ignore extra bytes. */
struct ptrec_dump_watch {
	char name[64];         /* the watch's name, NUL-terminated, may be truncated */
	uint64_t budget_ns;    /* its budget */
	uint64_t duration_ns;  /* how long the span took (CLOCK_MONOTONIC_COARSE) */
	uint64_t begin_mark;   /* marker value at begin (ptrec_mark convention) */
	uint64_t end_mark;     /* marker value at end */
	uint32_t flags;        /* PTREC_WATCH_* of the public API */
	uint32_t reserved;     /* zero */
	uint64_t begin_tsc;    /* TSC (rdtsc) at begin when no marker was written (intel_pt
	                          without PTWRITE), 0 = not known */
	uint64_t end_tsc;      /* TSC at end, 0 = not known */
};
#define PTREC_DUMP_WATCH_V1_SIZE 104u /* bytes of a WATCH record without begin_tsc/end_tsc */

/* Memory kinds for PTREC_REC_MEMORY. */
enum ptrec_dump_memory_kind {
	PTREC_MEM_CODE = 1,  /* anonymous executable mapping (JIT) */
	PTREC_MEM_VDSO = 2,  /* the vDSO image */
	PTREC_MEM_STACK = 3, /* stack bytes from SP upwards of the crashing thread, or of a
	                        thread blocked in the kernel (its TASK record) */
};

struct ptrec_dump_memory {
	uint64_t vaddr;    /* address of the first byte */
	uint32_t kind;     /* enum ptrec_dump_memory_kind */
	uint32_t tid;      /* owning thread for STACK, else 0 */
	uint64_t size;     /* bytes that follow */
};

/* What /proc/self/task/TID/syscall said of a thread other than the event thread (crash and
 * assertion dumps).  A thread blocked in the kernel gives its user SP and PC (the PC is after
 * the `syscall` instruction); every other register stays unknown without ptrace.  Records
 * shorter than this struct (a future writer may add fields at the end) are read with the
 * missing fields 0; extra bytes are ignored. */
enum ptrec_dump_task_state {
	PTREC_TASK_SYSCALL = 1,    /* blocked in system call nr with args */
	PTREC_TASK_BLOCKED = 2,    /* blocked in the kernel outside a system call ("-1 SP PC") */
	PTREC_TASK_RUNNING = 3,    /* on a CPU ("running"): no registers */
	PTREC_TASK_UNREADABLE = 4, /* the file could not be opened, read or parsed: err */
};

#define PTREC_TASK_BUDGET 0x1u /* the stack was left out or cut: the dump's budget for the
                                  stacks of other threads (PTREC_TASK_STACKS_MAX) was used */
#define PTREC_TASK_MOVED  0x2u /* the file read again after the stack was copied said
                                  something else: the thread ran meanwhile, its stack bytes
                                  may not match sp and pc */

struct ptrec_dump_task {
	uint32_t tid;          /* the thread (its THREAD record's tid) */
	uint32_t state;        /* enum ptrec_dump_task_state */
	int64_t nr;            /* system call number (of PROCESS.arch), -1 outside one */
	uint64_t args[6];      /* its arguments (PTREC_TASK_SYSCALL) */
	uint64_t sp;           /* user stack pointer (SYSCALL, BLOCKED) */
	uint64_t pc;           /* user pc: after the syscall instruction (SYSCALL, BLOCKED) */
	uint64_t stack_size;   /* bytes of its MEMORY STACK record at sp (0: none) */
	uint32_t flags;        /* PTREC_TASK_* */
	int32_t err;           /* errno of the failure (UNREADABLE), else 0 */
};

/* What a SYSFILE record holds.  The process's files are read by the crash path (auxv at
 * ptrec_init: it never changes), the host's (and its uname) by the report child after the
 * dump was written:
 * they follow the dump's END record, closed by another END (doc/dump-format.md). */
enum ptrec_dump_sysfile_kind {
	PTREC_SYSFILE_CMDLINE = 1,     /* /proc/self/cmdline: the arguments, each NUL-terminated */
	PTREC_SYSFILE_AUXV = 2,        /* /proc/self/auxv: 16-byte (type, value) pairs */
	PTREC_SYSFILE_STATUS = 3,      /* /proc/self/task/TID/status of the event thread */
	PTREC_SYSFILE_CPUINFO = 4,     /* /proc/cpuinfo, whole processor entries */
	PTREC_SYSFILE_LSB_RELEASE = 5, /* /etc/lsb-release */
	PTREC_SYSFILE_OS_RELEASE = 6,  /* /etc/os-release, else /usr/lib/os-release */
	PTREC_SYSFILE_UNAME = 7,       /* uname(2): "sysname release version machine" */
	PTREC_SYSFILE_KINDS = 8        /* one past the last kind */
};

#define PTREC_SYSFILE_CUT 0x1u /* the file had more bytes than the record keeps (size) */

struct ptrec_dump_sysfile {
	uint32_t kind;  /* enum ptrec_dump_sysfile_kind */
	uint32_t flags; /* PTREC_SYSFILE_* */
	uint64_t size;  /* bytes the file had when read (>= the bytes that follow) */
};

/* What the writers keep of each file (the rest is counted in size and flagged CUT). */
#define PTREC_SYSFILE_CMDLINE_MAX (32u << 10)
#define PTREC_SYSFILE_AUXV_MAX 4096u
#define PTREC_SYSFILE_STATUS_MAX 8192u
#define PTREC_SYSFILE_CPUINFO_MAX (64u << 10) /* about 40 processors of a current x86-64 */
#define PTREC_SYSFILE_RELEASE_MAX 8192u

struct ptrec_dump_buildid {
	uint64_t start;    /* start address of the mapping (lowest, offset 0) */
	uint32_t id_len;   /* bytes of build-id that follow */
	uint32_t path_len; /* bytes of path that follow the id (no NUL) */
};

#endif

/* report_util.c — names of signals, signal codes and events; address conventions of branch
 * events; TSC to nanoseconds.  Shared by the report renderers. */
#include "config.h"

#include <signal.h>
#include <stdio.h>

#include "ptrec.h"
#include "core/arch.h"
#include "report/report.h"

const char *ptrec_report_signal_name(int signo)
{
	switch (signo) {
	case 0: return "none";
	case SIGHUP: return "SIGHUP";
	case SIGINT: return "SIGINT";
	case SIGQUIT: return "SIGQUIT";
	case SIGILL: return "SIGILL";
	case SIGTRAP: return "SIGTRAP";
	case SIGABRT: return "SIGABRT";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGKILL: return "SIGKILL";
	case SIGUSR1: return "SIGUSR1";
	case SIGSEGV: return "SIGSEGV";
	case SIGUSR2: return "SIGUSR2";
	case SIGPIPE: return "SIGPIPE";
	case SIGALRM: return "SIGALRM";
	case SIGTERM: return "SIGTERM";
	case SIGSYS: return "SIGSYS";
	case SIGXCPU: return "SIGXCPU";
	case SIGXFSZ: return "SIGXFSZ";
	default: return "SIG?";
	}
}

enum ptrec_report_origin ptrec_report_origin(const struct ptrec_dump_process *p, uint32_t *pid,
                                             uint32_t *uid)
{
	if (!p->signo)
		return PTREC_ORIGIN_NONE;
	if (ptrec_dump_code_sent(p->si_code)) {
		*pid = (uint32_t)p->fault_addr;
		*uid = (uint32_t)(p->fault_addr >> 32);
		return PTREC_ORIGIN_SENT;
	}
	if (p->signo == SIGSEGV && p->si_code == SI_KERNEL)
		return PTREC_ORIGIN_NO_ADDR;
	if (ptrec_dump_signal_faults(p->signo))
		return PTREC_ORIGIN_FAULT;
	return PTREC_ORIGIN_NONE;
}

const char *ptrec_report_signal_code_name(int signo, int code)
{
	switch (code) {
	case SI_USER: return "SI_USER";
	case SI_KERNEL: return "SI_KERNEL";
	case SI_QUEUE: return "SI_QUEUE";
	case SI_TKILL: return "SI_TKILL";
	default: break;
	}
	switch (signo) {
	case SIGSEGV:
		switch (code) {
		case 1: return "SEGV_MAPERR";
		case 2: return "SEGV_ACCERR";
		case 3: return "SEGV_BNDERR";
		case 4: return "SEGV_PKUERR";
		}
		break;
	case SIGBUS:
		switch (code) {
		case 1: return "BUS_ADRALN";
		case 2: return "BUS_ADRERR";
		case 3: return "BUS_OBJERR";
		case 4: return "BUS_MCEERR_AR";
		case 5: return "BUS_MCEERR_AO";
		}
		break;
	case SIGILL:
		switch (code) {
		case 1: return "ILL_ILLOPC";
		case 2: return "ILL_ILLOPN";
		case 3: return "ILL_ILLADR";
		case 4: return "ILL_ILLTRP";
		case 5: return "ILL_PRVOPC";
		case 6: return "ILL_PRVREG";
		case 7: return "ILL_COPROC";
		case 8: return "ILL_BADSTK";
		}
		break;
	case SIGFPE:
		switch (code) {
		case 1: return "FPE_INTDIV";
		case 2: return "FPE_INTOVF";
		case 3: return "FPE_FLTDIV";
		case 4: return "FPE_FLTOVF";
		case 5: return "FPE_FLTUND";
		case 6: return "FPE_FLTRES";
		case 7: return "FPE_FLTINV";
		case 8: return "FPE_FLTSUB";
		}
		break;
	case SIGTRAP:
		switch (code) {
		case 1: return "TRAP_BRKPT";
		case 2: return "TRAP_TRACE";
		case 3: return "TRAP_BRANCH";
		case 4: return "TRAP_HWBKPT";
		}
		break;
	case SIGSYS:
		if (code == 1)
			return "SYS_SECCOMP";
		break;
	}
	return NULL;
}

const char *ptrec_report_event_name(unsigned event)
{
	switch (event) {
	case PTREC_EVENT_CRASH: return "crash";
	case PTREC_EVENT_ASSERT: return "assert";
	case PTREC_EVENT_SNAPSHOT: return "snapshot";
	case PTREC_EVENT_WATCH: return "watch";
	default: return "unknown";
	}
}

const char *ptrec_report_role(const struct ptrec_report *r)
{
	switch (r->dump->process.event) {
	case PTREC_EVENT_SNAPSHOT: return "took the snapshot";
	case PTREC_EVENT_WATCH: return "watch over budget";
	default: return "crashed";
	}
}

int ptrec_mark_is_watch(uint64_t value)
{
	return value >> 36 == PTREC_MARK_WATCH_TAG;
}

int ptrec_branch_from_is_ret(const struct ptrec_report_thread *t, const struct ptrec_branch *b)
{
	/* Instrumented CALL records carry the caller's return address; EDGE records the return
	 * address of the coverage hook. */
	return t->soft && (b->kind == PTREC_BR_CALL || b->kind == PTREC_BR_IND_CALL ||
	                   b->kind == PTREC_BR_EDGE);
}

int ptrec_branch_to_is_ret(const struct ptrec_report_thread *t, const struct ptrec_branch *b)
{
	return t->soft && b->kind == PTREC_BR_RET;
}

uint64_t ptrec_tsc_to_ns(const struct ptrec_dump_thread *t, uint64_t tsc, int *exact)
{
	uint64_t quot, rem;

	*exact = 0;
	if (!t->time_mult || t->time_shift >= 64)
		return tsc;
	*exact = 1;
	quot = tsc >> t->time_shift;
	rem = tsc & ((1ull << t->time_shift) - 1);
	return t->time_zero + quot * t->time_mult + ((rem * t->time_mult) >> t->time_shift);
}

/* A system call number and its name. */
struct syscall_name {
	int16_t nr;
	const char *name;
};

const char *ptrec_report_syscall_name(uint32_t arch, int64_t nr)
{
	/* The numbers of the calls threads of a server are found blocked in, and a few more;
	 * others print as their number.  aarch64 has the generic table (asm-generic/unistd.h):
	 * no poll, select, pause or epoll_wait, only their p-variants. */
	static const struct syscall_name a64[] = {
		{63, "read"}, {64, "write"}, {57, "close"}, {73, "ppoll"}, {72, "pselect6"},
		{222, "mmap"}, {29, "ioctl"}, {67, "pread64"}, {68, "pwrite64"}, {65, "readv"},
		{66, "writev"}, {124, "sched_yield"}, {101, "nanosleep"}, {71, "sendfile"},
		{203, "connect"}, {202, "accept"}, {206, "sendto"}, {207, "recvfrom"},
		{211, "sendmsg"}, {212, "recvmsg"}, {260, "wait4"}, {193, "semop"}, {188, "msgrcv"},
		{25, "fcntl"}, {32, "flock"}, {82, "fsync"}, {83, "fdatasync"},
		{137, "rt_sigtimedwait"}, {133, "rt_sigsuspend"}, {98, "futex"},
		{4, "io_getevents"}, {128, "restart_syscall"}, {192, "semtimedop"},
		{115, "clock_nanosleep"}, {22, "epoll_pwait"}, {95, "waitid"}, {56, "openat"},
		{76, "splice"}, {242, "accept4"}, {243, "recvmmsg"}, {269, "sendmmsg"},
		{426, "io_uring_enter"}, {441, "epoll_pwait2"}, {449, "futex_waitv"},
	};
	if (arch == PTREC_EM_AARCH64) {
		for (size_t i = 0; i < sizeof(a64) / sizeof(a64[0]); i++)
			if (a64[i].nr == nr)
				return a64[i].name;
		return NULL;
	}
	static const struct syscall_name calls[] = {
		{0, "read"}, {1, "write"}, {3, "close"}, {7, "poll"}, {9, "mmap"}, {16, "ioctl"},
		{17, "pread64"}, {18, "pwrite64"}, {19, "readv"}, {20, "writev"}, {23, "select"},
		{24, "sched_yield"}, {34, "pause"}, {35, "nanosleep"}, {40, "sendfile"},
		{42, "connect"}, {43, "accept"}, {44, "sendto"}, {45, "recvfrom"}, {46, "sendmsg"},
		{47, "recvmsg"}, {61, "wait4"}, {65, "semop"}, {70, "msgrcv"}, {72, "fcntl"},
		{73, "flock"}, {74, "fsync"}, {75, "fdatasync"}, {128, "rt_sigtimedwait"},
		{130, "rt_sigsuspend"}, {202, "futex"}, {208, "io_getevents"},
		{219, "restart_syscall"}, {220, "semtimedop"},
		{230, "clock_nanosleep"}, {232, "epoll_wait"}, {247, "waitid"}, {257, "openat"},
		{270, "pselect6"}, {271, "ppoll"}, {275, "splice"}, {281, "epoll_pwait"},
		{288, "accept4"}, {299, "recvmmsg"}, {307, "sendmmsg"}, {426, "io_uring_enter"},
		{441, "epoll_pwait2"}, {449, "futex_waitv"},
	};
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (calls[i].nr == nr)
			return calls[i].name;
	return NULL;
}

const char *ptrec_report_task_state(uint32_t state)
{
	switch (state) {
	case PTREC_TASK_SYSCALL: return "blocked in a system call";
	case PTREC_TASK_BLOCKED: return "blocked in the kernel, not in a system call";
	case PTREC_TASK_RUNNING: return "running on a CPU";
	case PTREC_TASK_UNREADABLE: return "unknown (its /proc syscall file was unreadable)";
	default: return "?";
	}
}

size_t ptrec_report_fault_words(const struct ptrec_report *r, char *buf, size_t cap)
{
	size_t n = 0, at = 0;
	if (cap)
		buf[0] = 0;
	if (r->dump->process.arch != PTREC_EM_AARCH64)
		return 0;
	for (; n < r->nfault_bytes / 4 && at + 10 <= cap; n++) {
		const uint8_t *b = r->fault_bytes + 4 * n;
		uint32_t w = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
		             (uint32_t)b[3] << 24;
		at += (size_t)snprintf(buf + at, cap - at, "%s%08x", n ? " " : "", w);
	}
	return n;
}

const char *ptrec_report_a64_class(uint32_t w)
{
	/* Arm A64 encodings (Arm ARM C4.1): exception generation, branches, then the load and
	 * store group (op0 x1x0). */
	static const struct {
		uint32_t mask, value;
		const char *name;
	} classes[] = {
		{0xffff0000u, 0x00000000u, "udf (permanently undefined)"},
		{0xffe0001fu, 0xd4200000u, "brk (breakpoint: __builtin_trap)"},
		{0xffe0001fu, 0xd4400000u, "hlt"},
		{0xffe0001fu, 0xd4000001u, "svc (system call)"},
		{0xfc000000u, 0x14000000u, "b"},
		{0xfc000000u, 0x94000000u, "bl (call)"},
		{0xfffffc1fu, 0xd61f0000u, "br (indirect jump)"},
		{0xfffffc1fu, 0xd63f0000u, "blr (indirect call)"},
		{0xfefff800u, 0xd63f0800u, "blraa/blrab (authenticated indirect call)"},
		{0xfffffc1fu, 0xd65f0000u, "ret"},
		{0xfffffbffu, 0xd65f0bffu, "retaa/retab (authenticated return)"},
		{0x0a000000u, 0x08000000u, "a load or store"},
	};
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if ((w & classes[i].mask) == classes[i].value)
			return classes[i].name;
	return NULL;
}

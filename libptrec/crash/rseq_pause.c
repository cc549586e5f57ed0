/* rseq_pause.c — the crashing thread's restartable-sequences area taken from the kernel while
 * the application's crash handler runs, and given back when the handler is left.
 *
 * ASYNC-SIGNAL-SAFE ISLAND: everything here may run in a signal handler.  It may not use
 * malloc/free, stdio, locks or lazily allocated TLS (only initial-exec TLS): raw system calls.
 *
 * Why.  glibc (2.35 and later) registers an rseq area in every thread's TCB.  The kernel reads
 * its rseq_cs word at every preemption and every signal delivery; when that word does not
 * point at readable memory it kills the thread with SIGSEGV (si_code SI_KERNEL), and when it
 * finds it while delivering a SIGSEGV it resets the handler to SIG_DFL first: no handler runs,
 * no dump is written.  Crash handlers that test memory in place make the word invalid for a
 * while: Redis's fast memory test fills every anonymous writable mapping with patterns and
 * restores it, and the main thread's TCB lies in such a mapping.  Under libptrec, Redis 7 then
 * died without a dump at about one crash in ten (test_chain_rseq shows it every time).  With
 * the area unregistered the kernel does not read it; unregistering sets its cpu_id to -1, and
 * glibc then answers sched_getcpu by the system call.
 *
 * The area is the thread pointer plus glibc's __rseq_offset (weak: an older glibc or another
 * libc has none, and then nothing is paused).  The kernel wants the length it was registered
 * with, which glibc does not export (32 bytes up to glibc 2.39, more since): the lengths the
 * kernel accepts (32 and its multiples) are tried in turn; a wrong one changes nothing.  The
 * kernel's unregistration answers EINVAL for a wrong area or length (and when nothing is
 * registered) and checks the signature only after the length (EPERM): any error but EINVAL
 * (EPERM, ENOSYS, EFAULT) means no other length can succeed, so the search stops there. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "core/arch.h"
#include "crash/rseq_pause.h"


#if !defined(SYS_rseq) && defined(__x86_64__)
#define SYS_rseq 334 /* x86-64, Linux 4.18 */
#elif !defined(SYS_rseq)
#define SYS_rseq 293 /* aarch64 (the generic table), Linux 4.18 */
#endif
#define RSEQ_FLAG_UNREGISTER 1
/* the signature glibc registers with: on x86 0x53053053, on aarch64 (little-endian) the
 * instruction word 0xd428bc00 (brk #0x45e0) */
#if defined(__x86_64__)
#define RSEQ_SIG 0x53053053u
#else
#define RSEQ_SIG 0xd428bc00u
#endif
#define RSEQ_CS_OFFSET 8         /* struct rseq: cpu_id_start, cpu_id, then rseq_cs */
#define RSEQ_LEN_MIN 32
#define RSEQ_LEN_MAX 512

extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

static __thread uintptr_t paused_area __attribute__((tls_model("initial-exec")));
static __thread unsigned paused_len __attribute__((tls_model("initial-exec")));
static __thread uint64_t paused_cs __attribute__((tls_model("initial-exec")));

/* rseq(2) without touching errno (the application's handler sees the interrupted errno).
 * Returns 0 or -errno. */
static long raw_rseq(uintptr_t area, unsigned len, int flags)
{
	return ptrec_raw_syscall4(SYS_rseq, (long)area, (long)len, (long)flags, (long)RSEQ_SIG);
}

static uintptr_t thread_pointer(void)
{
	uintptr_t tp;
#if defined(__x86_64__)
	__asm__("movq %%fs:0, %0" : "=r"(tp));
#else
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#endif
	return tp;
}

int ptrec_rseq_pause(void)
{
	if (paused_area || !&__rseq_size || !&__rseq_offset || __rseq_size == 0)
		return 0;
	uintptr_t area = thread_pointer() + (uintptr_t)__rseq_offset;
	uint64_t cs = *(volatile uint64_t *)(area + RSEQ_CS_OFFSET);
	for (unsigned len = RSEQ_LEN_MIN; len <= RSEQ_LEN_MAX; len += RSEQ_LEN_MIN) {
		long ret = raw_rseq(area, len, RSEQ_FLAG_UNREGISTER);
		if (ret == 0) {
			paused_area = area;
			paused_len = len;
			paused_cs = cs;
			return 1;
		}
		if (ret != -EINVAL)
			return 0; /* EPERM: the length matched, the signature did not; ENOSYS, EFAULT */
	}
	return 0;
}

void ptrec_rseq_resume(void)
{
	uintptr_t area = paused_area;
	if (!area)
		return;
	paused_area = 0;
	if (*(volatile uint64_t *)(area + RSEQ_CS_OFFSET) == paused_cs)
		raw_rseq(area, paused_len, 0);
}

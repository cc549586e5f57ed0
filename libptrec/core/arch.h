/* arch.h — the few facts of the machine libptrec is built for that the server side needs: its
 * ELF machine (the dump's arch tag, dump_format.h) and the pc, stack pointer and frame pointer
 * of a signal's ucontext_t (x86-64: gregs[REG_RIP/RSP/RBP]; aarch64: pc, sp, regs[29]).
 * ASYNC-SIGNAL-SAFE: inline field accesses only. */
#ifndef PTREC_CORE_ARCH_H
#define PTREC_CORE_ARCH_H

#include <stdint.h>
#include <ucontext.h>

#define PTREC_EM_X86_64 62   /* ELF e_machine EM_X86_64 */
#define PTREC_EM_AARCH64 183 /* ELF e_machine EM_AARCH64 */

#if defined(__x86_64__)
#define PTREC_EM_HOST PTREC_EM_X86_64
#define PTREC_ARCH_NAME "x86-64"
#elif defined(__aarch64__)
#define PTREC_EM_HOST PTREC_EM_AARCH64
#define PTREC_ARCH_NAME "aarch64"
#else
#error "libptrec is built for x86-64 or aarch64 Linux"
#endif

static inline uint64_t ptrec_uc_pc(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#else
	return (uint64_t)uc->uc_mcontext.pc;
#endif
}

static inline uint64_t ptrec_uc_sp(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
#else
	return (uint64_t)uc->uc_mcontext.sp;
#endif
}

/* Sets the pc, stack pointer and frame pointer (rbp, x29) of uc. */
static inline void ptrec_uc_set(ucontext_t *uc, uint64_t pc, uint64_t sp, uint64_t fp)
{
#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	uc->uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
#else
	uc->uc_mcontext.pc = pc;
	uc->uc_mcontext.sp = sp;
	uc->uc_mcontext.regs[29] = fp;
#endif
}

/* A system call of up to four arguments that never touches errno (the crash path shares the
 * interrupted code's errno).  Returns the result, or -errno. */
static inline long ptrec_raw_syscall4(long nr, long a, long b, long c, long d)
{
	long ret;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
	                 : "rcx", "r11", "memory");
#else
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	__asm__ volatile("svc #0"
	                 : "+r"(x0)
	                 : "r"(x8), "r"(x1), "r"(x2), "r"(x3)
	                 : "memory");
	ret = x0;
#endif
	return ret;
}

/* The current stack pointer. */
static inline uintptr_t ptrec_current_sp(void)
{
	uintptr_t sp;
#if defined(__x86_64__)
	__asm__ volatile("movq %%rsp, %0" : "=r"(sp));
#else
	__asm__ volatile("mov %0, sp" : "=r"(sp));
#endif
	return sp;
}

#endif

/* unwind.c — offline stack unwinding: CFI rules, signal frames, wild calls, frame pointers and
 * a bounded scan, over the dump's stack bytes.  The dump's machine (PROCESS.arch) picks the
 * registers, the instructions and the kernel's signal frame layout: x86-64 or aarch64, whatever
 * machine the reader runs on. */
#include "config.h"

#include <string.h>

#include "core/arch.h"
#include "ptrec.h"
#include "report/unwind.h"

#define SCAN_WORDS 512  /* words a scan looks at above SP (4 KiB) */
#define UC_GREGS 40     /* offset of uc_mcontext.gregs in the kernel's ucontext (x86-64) */
/* aarch64: the rt_sigframe at the trampoline's SP is a siginfo (128 bytes) and the ucontext,
 * whose uc_mcontext (struct sigcontext: fault_address, regs[31], sp, pc, pstate) is 176 bytes
 * in: x0..x30, sp, pc, pstate (the REGS order) start 128 + 176 + 8 bytes above SP. */
#define A64_SIGFRAME_REGS 312
/* aarch64 pointer authentication: a signed return address carries its code in the bits above
 * the user address space, 48 bits on Linux's usual arm64 configurations (4 KiB pages; the
 * kernel's user PAC mask is bits 54..48 there, and the top byte is tag or code). */
#define A64_VA_MASK ((1ull << 48) - 1)

/* DWARF register number -> enum ptrec_dump_reg (x86-64). */
static const uint8_t dwarf_to_greg[PTREC_CFI_NREGS] = {
	PTREC_REG_RAX, PTREC_REG_RDX, PTREC_REG_RCX, PTREC_REG_RBX, PTREC_REG_RSI, PTREC_REG_RDI,
	PTREC_REG_RBP, PTREC_REG_RSP, PTREC_REG_R8, PTREC_REG_R9, PTREC_REG_R10, PTREC_REG_R11,
	PTREC_REG_R12, PTREC_REG_R13, PTREC_REG_R14, PTREC_REG_R15, PTREC_REG_RIP,
};

/* What the walk needs of the machine that wrote the dump. */
struct arch {
	int a64;          /* 1: aarch64, 0: x86-64 */
	unsigned nregs;   /* DWARF registers in use: 0 .. nregs - 1 */
	unsigned sp;      /* DWARF number of the stack pointer */
	unsigned fp;      /* ... of the frame pointer (rbp, x29) */
	unsigned pc;      /* where a frame's pc is kept (x86-64: the return-address column) */
};
static const struct arch arch_x86 = {0, 17, PTREC_CFI_RSP, PTREC_CFI_RBP, PTREC_CFI_RA};
static const struct arch arch_a64 = {1, 33, PTREC_CFI_A64_SP, PTREC_CFI_A64_FP,
                                     PTREC_CFI_A64_PC};

static const struct arch *arch_of(const struct ptrec_dump *d)
{
	return ptrec_dump_arch(d->process.arch) == PTREC_EM_AARCH64 ? &arch_a64 : &arch_x86;
}

/* The address a (possibly signed) aarch64 code pointer points at. */
static uint64_t strip_pac(uint64_t v)
{
	return v & A64_VA_MASK;
}

/* A frame's registers by DWARF number. */
struct regs {
	uint64_t r[PTREC_CFI_NREGS];
	uint8_t v[PTREC_CFI_NREGS];   /* 1 if r[i] is known */
};

/* Registers from the REGS order of the machine (aarch64: x0..x30, sp, pc are DWARF 0..32). */
static void from_gregs(struct regs *x, const struct arch *A, const uint64_t *g, uint64_t known)
{
	memset(x, 0, sizeof(*x));
	for (unsigned i = 0; i < A->nregs; i++) {
		unsigned k = A->a64 ? i : dwarf_to_greg[i];
		x->v[i] = (uint8_t)(known >> k & 1);
		x->r[i] = x->v[i] ? g[k] : 0;
	}
}

static int read_stack(void *ctx, uint64_t addr, void *out, size_t len)
{
	return ptrec_dump_read_memory(ctx, addr, out, len) == len ? 0 : -1;
}

static int read_u64(const struct ptrec_dump *d, uint64_t addr, uint64_t *v)
{
	return read_stack((void *)(uintptr_t)d, addr, v, 8);
}

#define SOME_REG (PTREC_UNWIND_NO_REG + 1) /* an unknown register, not told which */

/* Why the DWARF expression expr failed in cur: SOME_REG when it succeeds once every register
 * counts as known (it reads an unknown one), else PTREC_UNWIND_NO_REG. */
static unsigned expr_unknown(const struct ptrec_dump *d, const struct arch *A, const uint8_t *expr,
                             size_t len, const struct regs *cur, int push_first, uint64_t cfa)
{
	uint8_t all[PTREC_CFI_NREGS];
	uint64_t v;
	memset(all, 1, sizeof(all));
	if (!memchr(cur->v, 0, A->nregs))
		return PTREC_UNWIND_NO_REG;
	return ptrec_cfi_eval(expr, len, cur->r, all, push_first, cfa, read_stack,
	                      (void *)(uintptr_t)d, &v) == 0 ? SOME_REG : PTREC_UNWIND_NO_REG;
}

/* 1 if addr lies in an executable mapping of the dumped process. */
static int in_code(const struct ptrec_dump *d, uint64_t addr)
{
	size_t lo = 0, hi = d->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < d->maps[lo - 1].end && d->maps[lo - 1].perms[2] == 'x';
}

/* The little-endian aarch64 instruction at pc, or 0 (udf #0) when unreadable. */
static uint32_t a64_insn(struct ptrec_symbolizer *s, uint64_t pc)
{
	uint8_t b[4];
	if ((pc & 3) || ptrec_symbolizer_read(s, pc, b, 4) != 4)
		return 0;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* 1 if the code at pc is the rt_sigreturn trampoline: x86-64 mov $15,%rax; syscall (glibc's
 * __restore_rt), aarch64 mov x8, #139; svc #0 (the vDSO's __kernel_rt_sigreturn, qemu's). */
static int is_sigreturn(struct ptrec_symbolizer *s, const struct arch *A, uint64_t pc)
{
	static const uint8_t tramp[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
	uint8_t b[9];
	if (A->a64)
		return a64_insn(s, pc) == 0xd2801168u && a64_insn(s, pc + 4) == 0xd4000001u;
	return ptrec_symbolizer_read(s, pc, b, sizeof(b)) == sizeof(b) && !memcmp(b, tramp, 9);
}

/* 1 if the instruction before ra is a call: x86-64 direct, or indirect through a register or
 * memory; aarch64 bl, blr, and the authenticating blraa, blrab, blraaz, blrabz. */
static int after_call(struct ptrec_symbolizer *s, const struct arch *A, uint64_t ra)
{
	uint8_t b[7];
	if (A->a64) {
		uint32_t w = ra >= 4 ? a64_insn(s, ra - 4) : 0;
		return (w & 0xfc000000u) == 0x94000000u ||  /* bl */
		       (w & 0xfffffc1fu) == 0xd63f0000u ||  /* blr */
		       (w & 0xfefff800u) == 0xd63f0800u;    /* blraa(z), blrab(z) */
	}
	if (ra < 7 || ptrec_symbolizer_read(s, ra - 7, b, 7) != 7)
		return 0;
	if (b[2] == 0xe8)                                  /* call rel32 */
		return 1;
	for (unsigned len = 2; len <= 7; len++) {          /* ff /2 with a ModRM of this length */
		uint8_t op = b[7 - len], modrm = b[8 - len];
		if (op == 0xff && (modrm & 0x38) == 0x10)
			return 1;
	}
	return 0;
}

/* The registers the rules of row give the caller, its pc in next->r[A->pc].  Returns 0, or -1
 * if the CFA or the return address cannot be computed; *outermost = 1 when the rules mark the
 * return address undefined; *missing = the unknown register that kept the CFA or the return
 * address from being computed (else PTREC_UNWIND_NO_REG). */
static int apply_cfi(const struct ptrec_dump *d, const struct arch *A,
                     const struct ptrec_cfi_row *row, const struct regs *cur, struct regs *next,
                     int *outermost, unsigned *missing)
{
	uint64_t cfa;
	void *ctx = (void *)(uintptr_t)d;

	*outermost = 0;
	*missing = PTREC_UNWIND_NO_REG;
	if (row->cfa_is_expr) {
		if (ptrec_cfi_eval(row->cfa_expr, row->cfa_expr_len, cur->r, cur->v, 0, 0, read_stack,
		                   ctx, &cfa)) {
			*missing = expr_unknown(d, A, row->cfa_expr, row->cfa_expr_len, cur, 0, 0);
			return -1;
		}
	} else {
		if (!cur->v[row->cfa_reg]) {
			*missing = row->cfa_reg;
			return -1;
		}
		cfa = cur->r[row->cfa_reg] + (uint64_t)row->cfa_off;
	}
	memset(next, 0, sizeof(*next));
	for (unsigned i = 0; i < A->nregs; i++) {
		const struct ptrec_cfi_rule *ru = &row->regs[i];
		uint64_t a;
		switch (ru->kind) {
		case PTREC_CFI_SAME:
			next->r[i] = cur->r[i];
			next->v[i] = cur->v[i];
			break;
		case PTREC_CFI_UNDEF:
			break;
		case PTREC_CFI_OFFSET:
			next->v[i] = !read_u64(d, cfa + (uint64_t)ru->off, &next->r[i]);
			break;
		case PTREC_CFI_VAL_OFFSET:
			next->r[i] = cfa + (uint64_t)ru->off;
			next->v[i] = 1;
			break;
		case PTREC_CFI_REGISTER:
			next->r[i] = cur->r[ru->reg];
			next->v[i] = cur->v[ru->reg];
			break;
		case PTREC_CFI_EXPR:
			if (!ptrec_cfi_eval(ru->expr, ru->expr_len, cur->r, cur->v, 1, cfa, read_stack,
			                    ctx, &a))
				next->v[i] = !read_u64(d, a, &next->r[i]);
			break;
		case PTREC_CFI_VAL_EXPR:
			next->v[i] = !ptrec_cfi_eval(ru->expr, ru->expr_len, cur->r, cur->v, 1, cfa,
			                             read_stack, ctx, &next->r[i]);
			break;
		}
	}
	/* The caller's SP is the CFA unless a rule says otherwise (both psABIs). */
	if (row->regs[A->sp].kind == PTREC_CFI_SAME) {
		next->r[A->sp] = cfa;
		next->v[A->sp] = 1;
	}
	if (row->ra_reg >= A->nregs)
		return -1;
	if (row->regs[row->ra_reg].kind == PTREC_CFI_UNDEF) {
		*outermost = 1;
		return -1;
	}
	next->r[A->pc] = next->r[row->ra_reg];
	next->v[A->pc] = next->v[row->ra_reg];
	if (A->a64 && row->ra_signed)
		next->r[A->pc] = strip_pac(next->r[A->pc]);
	if (next->v[A->pc])
		return 0;
	const struct ptrec_cfi_rule *ra = &row->regs[row->ra_reg];
	if (ra->kind == PTREC_CFI_REGISTER && !cur->v[ra->reg])
		*missing = ra->reg;
	else if (ra->kind == PTREC_CFI_SAME && !cur->v[row->ra_reg])
		*missing = row->ra_reg;
	else if (ra->kind == PTREC_CFI_EXPR || ra->kind == PTREC_CFI_VAL_EXPR)
		*missing = expr_unknown(d, A, ra->expr, ra->expr_len, cur, 1, cfa);
	return -1;
}

/* The interrupted context from the kernel's signal frame at the trampoline's sp. */
static int from_sigframe(const struct ptrec_dump *d, const struct arch *A, uint64_t sp,
                         struct regs *next)
{
	uint64_t g[PTREC_REG_MAX];
	size_t n = A->a64 ? PTREC_A64_COUNT : PTREC_REG_COUNT;
	if (ptrec_dump_read_memory(d, sp + (A->a64 ? A64_SIGFRAME_REGS : UC_GREGS), g,
	                           n * 8) != n * 8)
		return -1;
	from_gregs(next, A, g, PTREC_UNWIND_ALL_REGS);
	return 0;
}

/* The frame record at the frame pointer: x86-64 [rbp] the caller's rbp, [rbp+8] the return
 * address; aarch64 [x29] the caller's x29, [x29+8] its x30 (signed with pointer
 * authentication: stripped).  Returns 0 with fr[1] the return address (in code, after a call). */
static int frame_record(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                        const struct arch *A, const struct regs *cur, uint64_t fr[2])
{
	uint64_t bp = cur->r[A->fp];
	if (!cur->v[A->fp] || !cur->v[A->sp] || (bp & 7) || bp < cur->r[A->sp] || bp + 16 < bp ||
	    ptrec_dump_read_memory(d, bp, fr, 16) != 16)
		return -1;
	if (A->a64)
		fr[1] = strip_pac(fr[1]);
	return in_code(d, fr[1]) && after_call(s, A, fr[1]) ? 0 : -1;
}

/* Follows the frame-pointer chain one step. */
static int from_fp(struct ptrec_symbolizer *s, const struct ptrec_dump *d, const struct arch *A,
                   const struct regs *cur, struct regs *next)
{
	uint64_t bp = cur->r[A->fp], fr[2];
	if (frame_record(s, d, A, cur, fr))
		return -1;
	*next = *cur;
	next->r[A->fp] = fr[0];
	next->r[A->sp] = bp + 16;  /* aarch64: at least; the record is at the bottom of the frame */
	next->r[A->pc] = fr[1];
	if (A->a64)
		next->v[PTREC_CFI_A64_LR] = 0;
	return 0;
}

/* aarch64, a frame without CFI whose registers are all known (frame #0, or the context a signal
 * frame saved): the return address in the link register, when it is one (in code, after a
 * call, or a signal trampoline: a handler's) and not the stale return address of a call the
 * function itself made (in the same function as pc), and the frame record at x29 does not
 * already give it (then the frame-pointer step follows that record).  The caller keeps sp and
 * x29. */
static int from_lr(struct ptrec_symbolizer *s, const struct ptrec_dump *d, const struct arch *A,
                   const struct regs *cur, struct regs *next)
{
	uint64_t lr = strip_pac(cur->r[PTREC_CFI_A64_LR]), pc = cur->r[A->pc], fr[2];
	struct ptrec_symbol a, b;
	if (!cur->v[PTREC_CFI_A64_LR] || !in_code(d, lr) ||
	    (!after_call(s, A, lr) && !is_sigreturn(s, A, lr)) ||
	    (!frame_record(s, d, A, cur, fr) && fr[1] == lr))
		return -1;
	if (in_code(d, pc)) {
		ptrec_symbolize(s, pc, 0, &a);
		ptrec_symbolize(s, lr, 1, &b);
		if (a.name && b.name && a.module == b.module && !strcmp(a.name, b.name) &&
		    pc - a.offset == lr - b.offset)
			return -1;
	}
	*next = *cur;
	next->r[A->pc] = lr;
	next->v[PTREC_CFI_A64_LR] = 0;
	return 0;
}

/* Looks above SP for a return address; only SP and the pc are known afterwards. */
static int from_scan(struct ptrec_symbolizer *s, const struct ptrec_dump *d, const struct arch *A,
                     const struct regs *cur, struct regs *next)
{
	uint64_t sp = cur->r[A->sp];
	if (!cur->v[A->sp])
		return -1;
	for (unsigned k = 0; k < SCAN_WORDS; k++) {
		uint64_t w, at = sp + 8ull * k;
		if (read_u64(d, at, &w))
			return -1;
		if (A->a64)
			w = strip_pac(w);
		if (in_code(d, w) && after_call(s, A, w)) {
			memset(next, 0, sizeof(*next));
			next->r[A->sp] = at + 8;
			next->v[A->sp] = 1;
			next->r[A->pc] = w;
			next->v[A->pc] = 1;
			return 0;
		}
	}
	return -1;
}

/* After frame out[n - 1], the frames of the functions that tail-called it, when its caller
 * (returning to ret, its stack pointer sp) called another function.  Returns the new n. */
static size_t add_tail_calls(struct ptrec_symbolizer *s, struct ptrec_unwind_frame *out, size_t n,
                             size_t max, uint64_t ret, uint64_t sp)
{
	uint64_t pcs[8];
	const struct ptrec_unwind_frame *f = &out[n - 1];
	size_t k = ptrec_symbolizer_tail_calls(s, f->pc, f->return_address, ret, pcs, 8);
	for (size_t i = 0; i < k && n < max; i++)
		out[n++] = (struct ptrec_unwind_frame){.pc = pcs[i], .sp = sp,
		                                       .how = PTREC_UNWIND_TAILCALL,
		                                       .return_address = 1};
	return n;
}

size_t ptrec_unwind(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                    const uint64_t *gregs, struct ptrec_unwind_frame *out,
                    size_t max, const char **stop)
{
	return ptrec_unwind_regs(s, d, gregs, PTREC_UNWIND_ALL_REGS, out, max, stop, NULL);
}

size_t ptrec_unwind_regs(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                         const uint64_t *gregs, uint64_t known,
                         struct ptrec_unwind_frame *out, size_t max, const char **stop,
                         unsigned *missing)
{
	const struct arch *A = arch_of(d);
	struct regs cur, next;
	size_t n = 0;
	uint64_t all = A->a64 ? (1ull << PTREC_A64_COUNT) - 1 : (1ull << PTREC_REG_COUNT) - 1;
	int partial = (known & all) != all;
	unsigned how = partial ? PTREC_UNWIND_SP_PC : PTREC_UNWIND_CONTEXT;
	unsigned unknown = PTREC_UNWIND_NO_REG;
	int is_ret = 0, was_flat = 0;
	const char *why = "the frame limit was reached";

	from_gregs(&cur, A, gregs, known);
	while (n < max) {
		uint64_t pc = cur.r[A->pc], sp = cur.r[A->sp];
		struct ptrec_cfi_row row;
		struct ptrec_unwind_frame *f = &out[n];
		int outermost = 0, rc;
		uint64_t bias;

		if (!pc && n) {
			/* a context's pc of 0 is a call through a null pointer (below) */
			why = "the return address is 0 (outermost frame)";
			break;
		}
		if (n && sp == out[n - 1].sp && pc == out[n - 1].pc) {
			why = "the unwinder made no progress";
			break;
		}
		memset(f, 0, sizeof(*f));
		f->pc = pc;
		f->sp = sp;
		f->how = (uint8_t)how;
		f->return_address = (uint8_t)is_ret;
		n++;
		if (is_ret && is_sigreturn(s, A, pc)) {
			f->signal_frame = 1;
			if (from_sigframe(d, A, sp, &next)) {
				why = "the signal frame is not in the dumped stack";
				break;
			}
			cur = next;
			how = PTREC_UNWIND_SIGNAL;
			is_ret = 0;
			continue;
		}
		unknown = PTREC_UNWIND_NO_REG;
		rc = ptrec_symbolizer_cfi(s, is_ret ? pc - 1 : pc, &row, &bias);
		if (!rc && !apply_cfi(d, A, &row, &cur, &next, &outermost, &unknown)) {
			/* A frame of 0 bytes (its return address in a register, its CFA the stack
			 * pointer: _Unwind_Resume at its jump to a landing pad, any aarch64 leaf
			 * function) leaves the stack pointer where it was; gdb goes on (its frames'
			 * CFAs differ), once in a row here. */
			unsigned ra_kind = row.regs[row.ra_reg].kind;
			int flat = !row.signal_frame && next.r[A->sp] == sp &&
			           (ra_kind == PTREC_CFI_REGISTER ||
			            (A->a64 && ra_kind == PTREC_CFI_SAME)) && !was_flat;
			if (!row.signal_frame && next.r[A->sp] <= sp && !flat) {
				why = "the stack pointer did not grow (corrupt stack?)";
				break;
			}
			was_flat = flat;
			cur = next;
			how = PTREC_UNWIND_CFI;
			is_ret = !row.signal_frame;
			if (is_ret)
				n = add_tail_calls(s, out, n, max, cur.r[A->pc], cur.r[A->sp]);
			continue;
		}
		if (outermost) {
			why = "outermost frame (its CFI marks no return address)";
			break;
		}
		if (A->a64 && (how == PTREC_UNWIND_CONTEXT || how == PTREC_UNWIND_SIGNAL) &&
		    !from_lr(s, d, A, &cur, &next)) {
			/* A leaf without CFI, or a call to a wild pointer: the link register. */
			cur = next;
			how = PTREC_UNWIND_RET_IN_LR;
			is_ret = 1;
			continue;
		}
		if (!A->a64 && n == 1 && !in_code(d, pc) && cur.v[A->sp] &&
		    !read_u64(d, sp, &next.r[A->pc])) {
			/* A call to a wild pointer faults on the pc: the return address is at SP. */
			memcpy(next.v, cur.v, sizeof(cur.v));
			memcpy(next.r, cur.r, sizeof(uint64_t) * A->pc);
			next.r[A->sp] = sp + 8;
			cur = next;
			how = PTREC_UNWIND_RET_AT_SP;
			is_ret = 1;
			continue;
		}
		if (!from_fp(s, d, A, &cur, &next)) {
			cur = next;
			how = PTREC_UNWIND_FP;
			is_ret = 1;
			continue;
		}
		if (partial && unknown != PTREC_UNWIND_NO_REG) {
			why = "a register the CFI needs is unknown";
			break;
		}
		if (!partial && !from_scan(s, d, A, &cur, &next)) {
			cur = next;
			how = PTREC_UNWIND_SCAN;
			is_ret = 1;
			continue;
		}
		why = rc == -PTREC_ENOMAP || rc == -PTREC_EFORMAT
		          ? "no CFI, frame pointer or return address found in the dumped stack"
		          : "the CFI needs stack bytes that are not in the dump";
		break;
	}
	if (stop)
		*stop = why;
	if (missing)
		*missing = partial && n < max && unknown != PTREC_UNWIND_NO_REG &&
		                   strstr(why, "unknown") ? unknown : PTREC_UNWIND_NO_REG;
	return n;
}

const char *ptrec_unwind_reg_name(uint32_t arch, unsigned reg)
{
	static const char *const names[PTREC_CFI_NREGS] = {
		"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
	};
	static const char *const a64[PTREC_CFI_NREGS] = {
		"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12",
		"x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24",
		"x25", "x26", "x27", "x28", "x29", "x30", "sp", "pc",
	};
	const char *const *t = ptrec_dump_arch(arch) == PTREC_EM_AARCH64 ? a64 : names;
	return reg < PTREC_CFI_NREGS && t[reg] ? t[reg] : "a register";
}

const char *ptrec_unwind_how_name(unsigned how)
{
	switch (how) {
	case PTREC_UNWIND_CONTEXT: return "registers";
	case PTREC_UNWIND_CFI: return "cfi";
	case PTREC_UNWIND_SIGNAL: return "signal frame";
	case PTREC_UNWIND_RET_AT_SP: return "return address at sp";
	case PTREC_UNWIND_FP: return "frame pointer";
	case PTREC_UNWIND_SCAN: return "found by scanning";
	case PTREC_UNWIND_SP_PC: return "sp and pc only";
	case PTREC_UNWIND_TAILCALL: return "tail call";
	case PTREC_UNWIND_RET_IN_LR: return "link register";
	default: return "?";
	}
}

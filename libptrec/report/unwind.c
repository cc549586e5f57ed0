/* unwind.c — offline stack unwinding: CFI rules, signal frames, wild calls, frame pointers and
 * a bounded scan, over the dump's stack bytes. */
#include "config.h"

#include <string.h>

#include "ptrec.h"
#include "report/unwind.h"

#define SCAN_WORDS 512  /* words a scan looks at above SP (4 KiB) */
#define UC_GREGS 40     /* offset of uc_mcontext.gregs in the kernel's ucontext (x86-64) */

/* DWARF register number -> enum ptrec_dump_reg. */
static const uint8_t dwarf_to_greg[PTREC_CFI_NREGS] = {
	PTREC_REG_RAX, PTREC_REG_RDX, PTREC_REG_RCX, PTREC_REG_RBX, PTREC_REG_RSI, PTREC_REG_RDI,
	PTREC_REG_RBP, PTREC_REG_RSP, PTREC_REG_R8, PTREC_REG_R9, PTREC_REG_R10, PTREC_REG_R11,
	PTREC_REG_R12, PTREC_REG_R13, PTREC_REG_R14, PTREC_REG_R15, PTREC_REG_RIP,
};

/* A frame's registers by DWARF number. */
struct regs {
	uint64_t r[PTREC_CFI_NREGS];
	uint8_t v[PTREC_CFI_NREGS];   /* 1 if r[i] is known */
};

static void from_gregs(struct regs *x, const uint64_t *g, uint32_t known)
{
	for (unsigned i = 0; i < PTREC_CFI_NREGS; i++) {
		x->r[i] = g[dwarf_to_greg[i]];
		x->v[i] = (uint8_t)(known >> dwarf_to_greg[i] & 1);
		if (!x->v[i])
			x->r[i] = 0;
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
static unsigned expr_unknown(const struct ptrec_dump *d, const uint8_t *expr, size_t len,
                             const struct regs *cur, int push_first, uint64_t cfa)
{
	uint8_t all[PTREC_CFI_NREGS];
	uint64_t v;
	memset(all, 1, sizeof(all));
	if (!memchr(cur->v, 0, sizeof(cur->v)))
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

/* 1 if the code at pc is the x86-64 rt_sigreturn trampoline: mov $15,%rax; syscall. */
static int is_sigreturn(struct ptrec_symbolizer *s, uint64_t pc)
{
	static const uint8_t tramp[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
	uint8_t b[9];
	return ptrec_symbolizer_read(s, pc, b, sizeof(b)) == sizeof(b) && !memcmp(b, tramp, 9);
}

/* 1 if the instruction before ra is a call (direct, or indirect through a register or memory). */
static int after_call(struct ptrec_symbolizer *s, uint64_t ra)
{
	uint8_t b[7];
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

/* The registers the rules of row give the caller.  Returns 0, or -1 if the CFA or the return
 * address cannot be computed; *outermost = 1 when the rules mark the return address undefined;
 * *missing = the unknown register that kept the CFA or the return address from being computed
 * (else PTREC_UNWIND_NO_REG). */
static int apply_cfi(const struct ptrec_dump *d, const struct ptrec_cfi_row *row, uint64_t bias,
                     const struct regs *cur, struct regs *next, int *outermost,
                     unsigned *missing)
{
	uint64_t cfa;
	void *ctx = (void *)(uintptr_t)d;

	(void)bias;  /* rules hold no link-time addresses on x86-64 (DW_OP_addr is not used) */
	*outermost = 0;
	*missing = PTREC_UNWIND_NO_REG;
	if (row->cfa_is_expr) {
		if (ptrec_cfi_eval(row->cfa_expr, row->cfa_expr_len, cur->r, cur->v, 0, 0, read_stack,
		                   ctx, &cfa)) {
			*missing = expr_unknown(d, row->cfa_expr, row->cfa_expr_len, cur, 0, 0);
			return -1;
		}
	} else {
		if (!cur->v[row->cfa_reg]) {
			*missing = row->cfa_reg;
			return -1;
		}
		cfa = cur->r[row->cfa_reg] + (uint64_t)row->cfa_off;
	}
	for (unsigned i = 0; i < PTREC_CFI_NREGS; i++) {
		const struct ptrec_cfi_rule *ru = &row->regs[i];
		uint64_t a;
		next->v[i] = 0;
		next->r[i] = 0;
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
	/* The caller's SP is the CFA unless a rule says otherwise (x86-64 psABI). */
	if (row->regs[PTREC_CFI_RSP].kind == PTREC_CFI_SAME) {
		next->r[PTREC_CFI_RSP] = cfa;
		next->v[PTREC_CFI_RSP] = 1;
	}
	if (row->regs[row->ra_reg].kind == PTREC_CFI_UNDEF) {
		*outermost = 1;
		return -1;
	}
	next->r[PTREC_CFI_RA] = next->r[row->ra_reg];
	next->v[PTREC_CFI_RA] = next->v[row->ra_reg];
	if (next->v[PTREC_CFI_RA])
		return 0;
	const struct ptrec_cfi_rule *ra = &row->regs[row->ra_reg];
	if (ra->kind == PTREC_CFI_REGISTER && !cur->v[ra->reg])
		*missing = ra->reg;
	else if (ra->kind == PTREC_CFI_EXPR || ra->kind == PTREC_CFI_VAL_EXPR)
		*missing = expr_unknown(d, ra->expr, ra->expr_len, cur, 1, cfa);
	return -1;
}

/* The interrupted context from the rt_sigframe whose ucontext is at sp. */
static int from_sigframe(const struct ptrec_dump *d, uint64_t sp, struct regs *next)
{
	uint64_t g[PTREC_REG_COUNT];
	if (ptrec_dump_read_memory(d, sp + UC_GREGS, g, sizeof(g)) != sizeof(g))
		return -1;
	from_gregs(next, g, PTREC_UNWIND_ALL_REGS);
	return 0;
}

/* Follows the frame-pointer chain one step. */
static int from_fp(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                   const struct regs *cur, struct regs *next)
{
	uint64_t bp = cur->r[PTREC_CFI_RBP], fr[2];
	if (!cur->v[PTREC_CFI_RBP] || !cur->v[PTREC_CFI_RSP] || (bp & 7) ||
	    bp < cur->r[PTREC_CFI_RSP] || bp + 16 < bp ||
	    ptrec_dump_read_memory(d, bp, fr, sizeof(fr)) != sizeof(fr) || !in_code(d, fr[1]) ||
	    !after_call(s, fr[1]))
		return -1;
	*next = *cur;
	next->r[PTREC_CFI_RBP] = fr[0];
	next->r[PTREC_CFI_RSP] = bp + 16;
	next->r[PTREC_CFI_RA] = fr[1];
	return 0;
}

/* Looks above SP for a return address; only SP and the pc are known afterwards. */
static int from_scan(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                     const struct regs *cur, struct regs *next)
{
	uint64_t sp = cur->r[PTREC_CFI_RSP];
	if (!cur->v[PTREC_CFI_RSP])
		return -1;
	for (unsigned k = 0; k < SCAN_WORDS; k++) {
		uint64_t w, at = sp + 8ull * k;
		if (read_u64(d, at, &w))
			return -1;
		if (in_code(d, w) && after_call(s, w)) {
			memset(next, 0, sizeof(*next));
			next->r[PTREC_CFI_RSP] = at + 8;
			next->v[PTREC_CFI_RSP] = 1;
			next->r[PTREC_CFI_RA] = w;
			next->v[PTREC_CFI_RA] = 1;
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
                    const uint64_t gregs[PTREC_REG_COUNT], struct ptrec_unwind_frame *out,
                    size_t max, const char **stop)
{
	return ptrec_unwind_regs(s, d, gregs, PTREC_UNWIND_ALL_REGS, out, max, stop, NULL);
}

size_t ptrec_unwind_regs(struct ptrec_symbolizer *s, const struct ptrec_dump *d,
                         const uint64_t gregs[PTREC_REG_COUNT], uint32_t known,
                         struct ptrec_unwind_frame *out, size_t max, const char **stop,
                         unsigned *missing)
{
	struct regs cur, next;
	size_t n = 0;
	int partial = (known & PTREC_UNWIND_ALL_REGS) != PTREC_UNWIND_ALL_REGS;
	unsigned how = partial ? PTREC_UNWIND_SP_PC : PTREC_UNWIND_CONTEXT;
	unsigned unknown = PTREC_UNWIND_NO_REG;
	int is_ret = 0, was_flat = 0;
	const char *why = "the frame limit was reached";

	from_gregs(&cur, gregs, known);
	while (n < max) {
		uint64_t pc = cur.r[PTREC_CFI_RA], sp = cur.r[PTREC_CFI_RSP], bias;
		struct ptrec_cfi_row row;
		struct ptrec_unwind_frame *f = &out[n];
		int outermost = 0, rc;

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
		if (is_ret && is_sigreturn(s, pc)) {
			f->signal_frame = 1;
			if (from_sigframe(d, sp, &next)) {
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
		if (!rc && !apply_cfi(d, &row, bias, &cur, &next, &outermost, &unknown)) {
			/* A frame of 0 bytes (its return address in a register, its CFA the stack
			 * pointer: _Unwind_Resume at its jump to a landing pad) leaves the stack
			 * pointer where it was; gdb goes on (its frames' CFAs differ), once in a
			 * row here. */
			int flat = !row.signal_frame && next.r[PTREC_CFI_RSP] == sp &&
			           row.regs[row.ra_reg].kind == PTREC_CFI_REGISTER && !was_flat;
			if (!row.signal_frame && next.r[PTREC_CFI_RSP] <= sp && !flat) {
				why = "the stack pointer did not grow (corrupt stack?)";
				break;
			}
			was_flat = flat;
			cur = next;
			how = PTREC_UNWIND_CFI;
			is_ret = !row.signal_frame;
			if (is_ret)
				n = add_tail_calls(s, out, n, max, cur.r[PTREC_CFI_RA],
				                   cur.r[PTREC_CFI_RSP]);
			continue;
		}
		if (outermost) {
			why = "outermost frame (its CFI marks no return address)";
			break;
		}
		if (n == 1 && !in_code(d, pc) && cur.v[PTREC_CFI_RSP] && !read_u64(d, sp, &next.r[16])) {
			/* A call to a wild pointer faults on the pc: the return address is at SP. */
			memcpy(next.v, cur.v, sizeof(cur.v));
			memcpy(next.r, cur.r, sizeof(uint64_t) * PTREC_CFI_RA);
			next.r[PTREC_CFI_RSP] = sp + 8;
			cur = next;
			how = PTREC_UNWIND_RET_AT_SP;
			is_ret = 1;
			continue;
		}
		if (!from_fp(s, d, &cur, &next)) {
			cur = next;
			how = PTREC_UNWIND_FP;
			is_ret = 1;
			continue;
		}
		if (partial && unknown != PTREC_UNWIND_NO_REG) {
			why = "a register the CFI needs is unknown";
			break;
		}
		if (!partial && !from_scan(s, d, &cur, &next)) {
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

const char *ptrec_unwind_reg_name(unsigned reg)
{
	static const char *const names[PTREC_CFI_NREGS] = {
		"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
	};
	return reg < PTREC_CFI_NREGS ? names[reg] : "a register";
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
	default: return "?";
	}
}

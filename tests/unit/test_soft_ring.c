/* test_soft_ring.c — the instrumented backend's per-thread ring: what each hook records (the
 * 16-byte soft record of core/branch.h), markers, append and wrap, the oldest-first view,
 * freeze/thaw (the hooks' one check), and the TSC-to-nanoseconds conversion. */
#include "config.h"

#include "core/branch.h"
#include "check.h"
#include "capture/backend_soft.h"
#include "capture/hook_gate.h"
#include "runtime/recorder.h"

void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);
void __sanitizer_cov_trace_pc(void);
void __ptrec_fentry(void);

/* Copies the view's pieces into out (oldest first) and returns the record count. */
static size_t records(const struct ptrec_ring_view *v, struct ptrec_soft_record *out, size_t max)
{
	uint8_t *p = (uint8_t *)out;
	size_t n = v->len[0] + v->len[1];
	CHECK(n % sizeof(struct ptrec_soft_record) == 0);
	CHECK(n <= max * sizeof(*out));
	if (n > max * sizeof(*out))
		return 0;
	memcpy(p, v->part[0], v->len[0]);
	if (v->len[1])
		memcpy(p + v->len[0], v->part[1], v->len[1]);
	return n / sizeof(*out);
}

#if defined(__x86_64__)
/* A function compiled the way -mfentry compiles one: it calls __ptrec_fentry first thing,
 * before its prologue.  It returns its entry stack pointer (where its return address sits). */
uint64_t entered(void);
__asm__(".text\n"
        ".globl entered\n"
        ".type entered, @function\n"
        "entered:\n"
        "\tcall __ptrec_fentry@PLT\n"
        "\tmovq %rsp, %rax\n"
        "\tret\n"
        ".size entered, .-entered\n");

/* Its caller, so that the call site is known exactly: entered_return is the return
 * address the call to entered pushes.  The stack keeps the usual alignment. */
uint64_t call_entered(void);
extern const char entered_return[];
__asm__(".text\n"
        ".globl call_entered\n"
        ".globl entered_return\n"
        ".type call_entered, @function\n"
        "call_entered:\n"
        "\tsubq $8, %rsp\n"
        "\tcall entered\n"
        "entered_return:\n"
        "\taddq $8, %rsp\n"
        "\tret\n"
        ".size call_entered, .-call_entered\n");

/* fentry_regs(out): calls __ptrec_fentry as an instrumented function's entry does (the stack
 * pointer 8 below a 16-byte boundary at the call) with a distinct value in every general
 * register but r11 and rsp, and stores what the registers hold after it: out[0..13] = rax,
 * rbx, rcx, rdx, rsi, rdi, rbp, r8, r9, r10, r12, r13, r14, r15 (0x1000 + index before). */
void fentry_regs(uint64_t *out);
__asm__(".text\n"
        ".globl fentry_regs\n"
        ".type fentry_regs, @function\n"
        "fentry_regs:\n"
        "\tpushq %rbx\n\tpushq %rbp\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
        "\tpushq %rdi\n"
        "\tsubq $8, %rsp\n"
        "\tmovq $0x1000, %rax\n\tmovq $0x1001, %rbx\n\tmovq $0x1002, %rcx\n"
        "\tmovq $0x1003, %rdx\n\tmovq $0x1004, %rsi\n\tmovq $0x1005, %rdi\n"
        "\tmovq $0x1006, %rbp\n\tmovq $0x1007, %r8\n\tmovq $0x1008, %r9\n"
        "\tmovq $0x1009, %r10\n\tmovq $0x100a, %r12\n\tmovq $0x100b, %r13\n"
        "\tmovq $0x100c, %r14\n\tmovq $0x100d, %r15\n"
        "\tcall __ptrec_fentry@PLT\n"
        "\tmovq 8(%rsp), %r11\n"
        "\tmovq %rax, 0(%r11)\n\tmovq %rbx, 8(%r11)\n\tmovq %rcx, 16(%r11)\n"
        "\tmovq %rdx, 24(%r11)\n\tmovq %rsi, 32(%r11)\n\tmovq %rdi, 40(%r11)\n"
        "\tmovq %rbp, 48(%r11)\n\tmovq %r8, 56(%r11)\n\tmovq %r9, 64(%r11)\n"
        "\tmovq %r10, 72(%r11)\n\tmovq %r12, 80(%r11)\n\tmovq %r13, 88(%r11)\n"
        "\tmovq %r14, 96(%r11)\n\tmovq %r15, 104(%r11)\n"
        "\taddq $8, %rsp\n"
        "\tpopq %rdi\n"
        "\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbp\n\tpopq %rbx\n"
        "\tret\n"
        ".size fentry_regs, .-fentry_regs\n");

/* The entry hook changes no register an instrumented function's entry may hold live: the
 * arguments (rdi, rsi, rdx, rcx, r8, r9), rax (varargs), r10 (static chain) and the
 * callee-saved ones; whether it records (ring), notes (no ring) or stays out (hooks
 * stopped).  Returns how many registers came back changed. */
static int fentry_regs_changed(void)
{
	uint64_t out[14];
	int changed = 0;
	fentry_regs(out);
	for (int i = 0; i < 14; i++)
		if (out[i] != 0x1000u + (unsigned)i) {
			fprintf(stderr, "register %d: 0x%llx after __ptrec_fentry\n", i,
			        (unsigned long long)out[i]);
			changed++;
		}
	return changed;
}
#elif defined(__aarch64__)
/* A function with a patched entry (patch_entries.c): `mov x9, x30; bl __ptrec_fentry` first
 * thing, before its prologue.  It returns its entry stack pointer. */
uint64_t entered(void);
__asm__(".text\n"
        ".p2align 3\n"
        ".globl entered\n"
        ".type entered, %function\n"
        "entered:\n"
        "\tmov x9, x30\n"
        "\tbl __ptrec_fentry\n"
        "\tmov x0, sp\n"
        "\tret\n"
        ".size entered, .-entered\n");

/* Its caller, so that the call site is known exactly: entered_return is the return address
 * the bl to entered leaves in x30. */
uint64_t call_entered(void);
extern const char entered_return[];
__asm__(".text\n"
        ".globl call_entered\n"
        ".globl entered_return\n"
        ".type call_entered, %function\n"
        "call_entered:\n"
        "\tstp x29, x30, [sp, #-16]!\n"
        "\tbl entered\n"
        "entered_return:\n"
        "\tldp x29, x30, [sp], #16\n"
        "\tret\n"
        ".size call_entered, .-call_entered\n");

/* fentry_regs(out): calls __ptrec_fentry as a patched entry does, with a distinct value in
 * every register an entry may hold live (x0..x8, x19..x30: 0x1000 + the register's number),
 * and stores what they hold after it in out[0..20] (x0..x8, then x19..x30). */
void fentry_regs(uint64_t *out);
__asm__(".text\n"
        ".globl fentry_regs\n"
        ".type fentry_regs, %function\n"
        "fentry_regs:\n"
        "\tstp x29, x30, [sp, #-112]!\n"
        "\tstp x19, x20, [sp, #16]\n\tstp x21, x22, [sp, #32]\n\tstp x23, x24, [sp, #48]\n"
        "\tstp x25, x26, [sp, #64]\n\tstp x27, x28, [sp, #80]\n\tstr x0, [sp, #96]\n"
        "\tmov x0, #0x1000\n\tmov x1, #0x1001\n\tmov x2, #0x1002\n\tmov x3, #0x1003\n"
        "\tmov x4, #0x1004\n\tmov x5, #0x1005\n\tmov x6, #0x1006\n\tmov x7, #0x1007\n"
        "\tmov x8, #0x1008\n\tmov x19, #0x1013\n\tmov x20, #0x1014\n\tmov x21, #0x1015\n"
        "\tmov x22, #0x1016\n\tmov x23, #0x1017\n\tmov x24, #0x1018\n\tmov x25, #0x1019\n"
        "\tmov x26, #0x101a\n\tmov x27, #0x101b\n\tmov x28, #0x101c\n\tmov x29, #0x101d\n"
        "\tmov x30, #0x101e\n"
        "\tmov x9, x30\n"
        "\tbl __ptrec_fentry\n"
        "\tldr x10, [sp, #96]\n"
        "\tstp x0, x1, [x10, #0]\n\tstp x2, x3, [x10, #16]\n\tstp x4, x5, [x10, #32]\n"
        "\tstp x6, x7, [x10, #48]\n\tstp x8, x19, [x10, #64]\n\tstp x20, x21, [x10, #80]\n"
        "\tstp x22, x23, [x10, #96]\n\tstp x24, x25, [x10, #112]\n"
        "\tstp x26, x27, [x10, #128]\n\tstp x28, x29, [x10, #144]\n\tstr x30, [x10, #160]\n"
        "\tldp x19, x20, [sp, #16]\n\tldp x21, x22, [sp, #32]\n\tldp x23, x24, [sp, #48]\n"
        "\tldp x25, x26, [sp, #64]\n\tldp x27, x28, [sp, #80]\n"
        "\tldp x29, x30, [sp], #112\n"
        "\tret\n"
        ".size fentry_regs, .-fentry_regs\n");

/* The entry hook changes no register a patched entry may hold live: the arguments (x0..x7),
 * x8 (indirect result), the callee-saved ones, x29 and x30 (given back from x9); whether it
 * records (ring), notes (no ring) or stays out (hooks stopped).  Returns how many registers
 * came back changed. */
static int fentry_regs_changed(void)
{
	uint64_t out[21];
	int changed = 0;
	fentry_regs(out);
	for (int i = 0; i < 21; i++) {
		unsigned reg = i < 9 ? (unsigned)i : (unsigned)i + 10;
		if (out[i] != 0x1000u + reg) {
			fprintf(stderr, "x%u: 0x%llx after __ptrec_fentry\n", reg,
			        (unsigned long long)out[i]);
			changed++;
		}
	}
	return changed;
}
#endif

/* The bytes of a patched entry before the hook's return address: x86-64 `call rel32`,
 * aarch64 `mov x9, x30; bl`. */
#if defined(__x86_64__)
#define ENTRY_CALL_BYTES 5
#else
#define ENTRY_CALL_BYTES 8
#endif

static void test_time_convert(void)
{
	struct ptrec_ring r;
	/* A 2.5 GHz TSC: 2.5e9 ticks per 1e9 ns, so 0.4 ns per tick. */
	ptrec_soft_time_convert(1000000000ull, 5000000000ull, 3500000000ull, 6000000000ull, &r);
	CHECK(r.time_mult != 0);
	uint64_t tsc = 2000000000ull; /* 1e9 ticks after the first reading: 400 ms later */
	uint64_t ns = r.time_zero + (tsc >> r.time_shift) * r.time_mult +
	              (((tsc & ((1ull << r.time_shift) - 1)) * r.time_mult) >> r.time_shift);
	CHECK(ns > 5400000000ull - 2 && ns < 5400000000ull + 2);
	/* Too close together: unknown. */
	ptrec_soft_time_convert(100, 5, 200, 9, &r);
	CHECK(r.time_mult == 0 && r.time_zero == 0);
}

int main(void)
{
	struct ptrec_config cfg;
	struct ptrec_ring ring;
	struct ptrec_ring_view v;
	struct ptrec_soft_record rec[512];
	char reason[PTREC_REASON_MAX];
	const struct ptrec_backend_ops *ops = &ptrec_backend_instrumented;

	/* Hooks that run before any ring exists record nothing but are noticed. */
	CHECK(ptrec_soft_hooks_ran() == 0);
	CHECK(fentry_regs_changed() == 0);
	CHECK(ptrec_soft_hooks_ran() == 1);
	__cyg_profile_func_enter((void *)1, (void *)2);
	CHECK(ptrec_soft_hooks_ran() == 1);

	ptrec_config_init(&cfg);
	cfg.backend = PTREC_BACKEND_INSTRUMENTED;
	cfg.flags |= PTREC_F_SOFT_TIME; /* timed records (untimed ones are checked below) */
	CHECK(ops->id == PTREC_BACKEND_INSTRUMENTED);
	CHECK(ops->probe(&cfg, reason, sizeof(reason)) == 0);
	CHECK(ops->open(&ring, 3 * 4096, &cfg, reason, sizeof(reason)) == -PTREC_EINVAL);
	CHECK(ops->open(&ring, 8, &cfg, reason, sizeof(reason)) == -PTREC_EINVAL);
	CHECK(ops->open(&ring, 4096, &cfg, reason, sizeof(reason)) == 0);
	CHECK(ring.size == 4096 && ring.head == 0 && ring.data != NULL);

	/* Each hook appends one 16-byte record: CALL from the call site to the function, RET
	 * from the function back to the call site, EDGE at the instrumented site, each with the
	 * time in x; a marker holds its value and the full TSC. */
	__cyg_profile_func_enter((void *)0x401000, (void *)0x402222);
	__cyg_profile_func_exit((void *)0x401000, (void *)0x402222);
	__sanitizer_cov_trace_pc();
	ptrec_soft_mark(0x1234567890abcdefull);
	CHECK_EQ_U64(ring.head, 4 * 16);
	ops->view(&ring, &v);
	CHECK(!v.wrapped);
	CHECK(records(&v, rec, 512) == 4);
	CHECK_EQ_U64(PTREC_SOFT_KIND(rec[0].w0), PTREC_SOFT_CALL);
	CHECK_EQ_U64(PTREC_SOFT_A(rec[0].w0), 0x402222);
	CHECK_EQ_U64(PTREC_SOFT_B(rec[0].w1), 0x401000);
	CHECK_EQ_U64(PTREC_SOFT_KIND(rec[1].w0), PTREC_SOFT_RET);
	CHECK_EQ_U64(PTREC_SOFT_A(rec[1].w0), 0x401000);
	CHECK_EQ_U64(PTREC_SOFT_B(rec[1].w1), 0x402222);
	CHECK_EQ_U64(PTREC_SOFT_KIND(rec[2].w0), PTREC_SOFT_EDGE);
	CHECK(PTREC_SOFT_A(rec[2].w0) != 0 && PTREC_SOFT_B(rec[2].w1) == 0);
	CHECK_EQ_U64(PTREC_SOFT_KIND(rec[3].w0), PTREC_SOFT_MARK);
	CHECK_EQ_U64(rec[3].w1, 0x1234567890abcdefull);
	/* Times never go backwards within the 28-bit window (the records are nanoseconds
	 * apart), and the marker's full TSC matches the EDGE's truncated one. */
	uint64_t x0 = PTREC_SOFT_X(rec[0].w0, rec[0].w1), x2 = PTREC_SOFT_X(rec[2].w0, rec[2].w1);
	uint64_t mark_x = ((rec[3].w0 & PTREC_SOFT_TSC_MASK) >> 6) & PTREC_SOFT_X_MASK;
	CHECK(((x2 - x0) & PTREC_SOFT_X_MASK) < (1u << 20));
	CHECK(((mark_x - x2) & PTREC_SOFT_X_MASK) < (1u << 20));

	/* Untimed rings (the default) leave x at 0; markers still carry the TSC. */
	ops->close(&ring);
	cfg.flags &= ~PTREC_F_SOFT_TIME;
	CHECK(ops->open(&ring, 4096, &cfg, reason, sizeof(reason)) == 0);
	__cyg_profile_func_enter((void *)0x401000, (void *)0x402222);
	ptrec_soft_mark(5);
	ops->view(&ring, &v);
	CHECK(records(&v, rec, 512) == 2);
	CHECK_EQ_U64(rec[0].w0, PTREC_SOFT_W0(PTREC_SOFT_CALL, 0x402222, 0));
	CHECK_EQ_U64(rec[0].w1, 0x401000);
	CHECK((rec[1].w0 & PTREC_SOFT_TSC_MASK) != 0 && rec[1].w1 == 5);

	/* The entry-only hook: ENTRY from the caller's call site into the function, with the
	 * function's entry stack pointer in x (x86-64: where its return address sits). */
	ring.head = 0;
	uint64_t sp = call_entered();
	CHECK_EQ_U64(ring.head, 16);
	ops->view(&ring, &v);
	CHECK(records(&v, rec, 512) == 1);
	CHECK_EQ_U64(PTREC_SOFT_KIND(rec[0].w0), PTREC_SOFT_ENTRY);
	CHECK_EQ_U64(PTREC_SOFT_B(rec[0].w1), (uintptr_t)entered + ENTRY_CALL_BYTES); /* after the call */
	CHECK_EQ_U64(PTREC_SOFT_A(rec[0].w0), (uintptr_t)entered_return); /* the call site */
	CHECK_EQ_U64(PTREC_SOFT_X(rec[0].w0, rec[0].w1), (sp >> 3) & PTREC_SOFT_X_MASK);
	CHECK_EQ_U64(rec[0].w0, PTREC_SOFT_W0(PTREC_SOFT_ENTRY, (uintptr_t)entered_return, sp >> 3));
	CHECK_EQ_U64(rec[0].w1, PTREC_SOFT_W1((uintptr_t)entered + ENTRY_CALL_BYTES, sp >> 3));
	CHECK(fentry_regs_changed() == 0);
	CHECK_EQ_U64(ring.head, 32);
	/* While a crash is handled (the gate closed) it records nothing and changes nothing. */
	CHECK(ptrec_hooks_stop() == 1);
	call_entered();
	CHECK(fentry_regs_changed() == 0);
	CHECK_EQ_U64(ring.head, 32);
	ptrec_hooks_resume();
	call_entered();
	CHECK_EQ_U64(ring.head, 48);
#if defined(__aarch64__)
	/* aarch64 with pointer authentication: a return address signed by PACIASP carries its
	 * signature above bit 47 (and in the tag byte); the records hold the plain address. */
	ring.head = 0;
	__cyg_profile_func_enter((void *)0x0012000000401000ull, (void *)0x7f2a000000402222ull);
	__cyg_profile_func_exit((void *)0x0012000000401000ull, (void *)0x7f2a000000402222ull);
	ops->view(&ring, &v);
	CHECK(records(&v, rec, 512) == 2);
	CHECK_EQ_U64(rec[0].w0, PTREC_SOFT_W0(PTREC_SOFT_CALL, 0x402222, 0));
	CHECK_EQ_U64(rec[0].w1, 0x401000);
	CHECK_EQ_U64(rec[1].w0, PTREC_SOFT_W0(PTREC_SOFT_RET, 0x401000, 0));
	CHECK_EQ_U64(rec[1].w1, 0x402222);
#endif

	/* 300 records in a 4096-byte ring (256 records): the ring wrapped; records 44..299
	 * remain, in order. */
	ring.head = 0;
	for (unsigned i = 0; i < 300; i++)
		ptrec_soft_append(i, 1000 + i, PTREC_BR_JMP);
	CHECK_EQ_U64(ring.head, 4800);
	ops->view(&ring, &v);
	CHECK(v.wrapped);
	CHECK_EQ_U64(v.head, 4800);
	CHECK(v.part[0] == ring.data + 4800 - 4096);
	size_t n = records(&v, rec, 512);
	CHECK_EQ_U64(n, 256);
	int in_order = 1;
	for (size_t i = 0; i < n; i++)
		if (PTREC_SOFT_KIND(rec[i].w0) != PTREC_SOFT_BRANCH || PTREC_SOFT_A(rec[i].w0) != 44 + i ||
		    PTREC_SOFT_B(rec[i].w1) != 1044 + i ||
		    PTREC_SOFT_X(rec[i].w0, rec[i].w1) != PTREC_BR_JMP)
			in_order = 0;
	CHECK(in_order);

	/* The pure view of a wrapped ring whose head is not on a record boundary. */
	ptrec_soft_view_make(ring.data, 4096, 4096 + 8, &v); /* oldest byte 8: starts at 16 */
	CHECK(v.wrapped && v.part[0] == ring.data + 16);
	CHECK_EQ_U64(v.len[0] + v.len[1], 4096 - 8);
	ptrec_soft_view_make(NULL, 0, 0, &v);
	CHECK(v.len[0] == 0 && v.part[0] == NULL);

	/* Frozen rings take no records and carry the format and the freeze TSC; thawed ones go
	 * on. */
	ring.head = 0;
	ops->freeze(&ring);
	CHECK(ring.soft_mask == 0);
	CHECK(!(ring.config & PTREC_SOFT_FMT_TIMED)); /* the format of this untimed ring */
	CHECK(ring.config1 != 0);
	ptrec_soft_append(1, 2, PTREC_BR_CALL);
	ptrec_soft_mark(7);
	__cyg_profile_func_enter((void *)1, (void *)2);
	call_entered();
	CHECK(fentry_regs_changed() == 0);
	CHECK_EQ_U64(ring.head, 0);
	ops->thaw(&ring);
	ptrec_soft_append(1, 2, PTREC_BR_CALL);
	CHECK_EQ_U64(ring.head, 16);

	/* After close the hooks find no ring and record nothing (and do not crash). */
	ops->close(&ring);
	CHECK(ring.data == NULL);
	__cyg_profile_func_enter((void *)1, (void *)2);
	call_entered();
	ptrec_soft_mark(1);

	test_time_convert();
	return check_done();
}

/* test_unwind.c — the unwinder's fallbacks on a dump built byte by byte (anonymous code, no
 * CFI): a call through a wild pointer (the return address at SP), the frame-pointer chain, the
 * stack scan (a word after a call instruction), the kernel's signal frame at an rt_sigreturn
 * trampoline, and where each walk stops; the same for a dump written on aarch64 (whatever
 * machine runs the test): the link register of a leaf and of a wild call, x29 frame records
 * with return addresses signed by pointer authentication, the scan, the kernel's rt_sigframe.
 * CFI unwinding itself is compared with gdb in tests/unwind/test_unwind_gdb.sh and
 * test_unwind_a64.sh. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "report/unwind.h"
#include "check.h"
#include "dump_writer.h"

#define CODE 0x400000u
#define STACK 0x7ff000u

static uint8_t code[0x1000];
static uint64_t stack[0x200];

static void put_stack(uint64_t addr, uint64_t v) { stack[(addr - STACK) / 8] = v; }

static void build(struct tbuf *b, uint64_t rip, uint64_t rsp, uint64_t rbp)
{
	static const char maps[] =
		"00400000-00401000 r-xp 00000000 00:00 0 \n"
		"007ff000-00800000 rw-p 00000000 00:00 0                          [stack]\n";
	tw_header(b);
	tw_process(b, 1, 1, PTREC_EVENT_CRASH, 11, 1, 0, PTREC_BACKEND_NONE, 0, "x", "/x", "");
	tw_regs(b, 1, rip, rsp, rbp);
	tw_record(b, PTREC_REC_MAPS, maps, sizeof(maps) - 1);
	tw_memory(b, CODE, PTREC_MEM_CODE, 0, code, sizeof(code));
	tw_memory(b, STACK, PTREC_MEM_STACK, 1, stack, sizeof(stack));
	tw_end(b);
}

/* Unwinds the dump in b (freed) from its registers. */
static size_t unwind_dump(struct tbuf *b, struct ptrec_unwind_frame *f, size_t max,
                          const char **stop)
{
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_symbolizer s;
	size_t n = 0;

	CHECK(ptrec_dump_parse(b->p, b->n, &d, &err) == 0);
	CHECK(ptrec_symbolizer_init(&s, &d, NULL, NULL) == 0);
	n = ptrec_unwind(&s, &d, d.regs.gregs, f, max, stop);
	ptrec_symbolizer_free(&s);
	ptrec_dump_free(&d);
	free(b->p);
	return n;
}

static size_t unwind(uint64_t rip, uint64_t rsp, uint64_t rbp, struct ptrec_unwind_frame *f,
                     size_t max, const char **stop)
{
	struct tbuf b = {0};
	build(&b, rip, rsp, rbp);
	return unwind_dump(&b, f, max, stop);
}

static void setup_code(void)
{
	static const uint8_t sigreturn[9] = {0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05};
	memset(code, 0x90, sizeof(code));
	memcpy(code + 0x100, "\xe8\x00\x00\x00\x00", 5);   /* call rel32: returns to 0x400105 */
	memcpy(code + 0x200, "\xff\xd0", 2);               /* call *%rax: returns to 0x400202 */
	memcpy(code + 0x2fb, "\xe8\x00\x00\x00\x00", 5);   /* the handler's caller, as the kernel
	                                                      makes it look: returns to 0x400300 */
	memcpy(code + 0x300, sigreturn, sizeof(sigreturn));
}

static void test_wild_fp_scan(void)
{
	struct ptrec_unwind_frame f[16];
	const char *stop = NULL;
	size_t n;

	memset(stack, 0, sizeof(stack));
	put_stack(0x7ff000, 0x400105);     /* the wild call's return address, at SP */
	put_stack(0x7ff040, 0x7ff080);     /* frame record: saved rbp, return address */
	put_stack(0x7ff048, 0x400202);
	put_stack(0x7ff080, 0);            /* outermost frame record: rbp 0 */
	put_stack(0x7ff088, 0x400105);
	put_stack(0x7ff0a0, 0x400050);     /* not after a call: the scan skips it */
	put_stack(0x7ff0a8, 0x12345678);   /* not code */
	put_stack(0x7ff0b0, 0x400202);     /* after a call: found by scanning */
	n = unwind(0x1234, 0x7ff000, 0x7ff040, f, 16, &stop);
	CHECK_EQ_U64(n, 5);
	CHECK_EQ_U64(f[0].pc, 0x1234);
	CHECK(f[0].how == PTREC_UNWIND_CONTEXT && !f[0].return_address);
	CHECK_EQ_U64(f[1].pc, 0x400105);
	CHECK(f[1].how == PTREC_UNWIND_RET_AT_SP && f[1].return_address);
	CHECK_EQ_U64(f[1].sp, 0x7ff008);
	CHECK_EQ_U64(f[2].pc, 0x400202);
	CHECK(f[2].how == PTREC_UNWIND_FP);
	CHECK_EQ_U64(f[2].sp, 0x7ff050);
	CHECK_EQ_U64(f[3].pc, 0x400105);
	CHECK(f[3].how == PTREC_UNWIND_FP);
	CHECK_EQ_U64(f[4].pc, 0x400202);
	CHECK(f[4].how == PTREC_UNWIND_SCAN);
	CHECK_EQ_U64(f[4].sp, 0x7ff0b8);
	CHECK(stop && strstr(stop, "no CFI"));
	CHECK_STR(ptrec_unwind_how_name(f[4].how), "found by scanning");
	/* The frame limit. */
	CHECK_EQ_U64(unwind(0x1234, 0x7ff000, 0x7ff040, f, 2, &stop), 2);
	CHECK_STR(stop, "the frame limit was reached");
	/* SP outside the dumped stack: only the registers' frame. */
	CHECK_EQ_U64(unwind(0x400010, 0x900000, 0, f, 16, &stop), 1);
}

static void test_signal_frame(void)
{
	struct ptrec_unwind_frame f[16];
	const char *stop = NULL;
	uint64_t uc = 0x7ff110;            /* the rt_sigframe's ucontext, at the handler's CFA */
	size_t n;

	memset(stack, 0, sizeof(stack));
	put_stack(0x7ff100, 0x7ff200);     /* the handler's frame record */
	put_stack(0x7ff108, 0x400300);     /* it returns to the trampoline */
	put_stack(uc + 40 + 8 * PTREC_REG_RIP, 0x400777);  /* interrupted pc */
	put_stack(uc + 40 + 8 * PTREC_REG_RSP, 0x7ff300);
	put_stack(uc + 40 + 8 * PTREC_REG_RBP, 0);
	n = unwind(0x400150, 0x7ff0f0, 0x7ff100, f, 16, &stop);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(f[1].pc, 0x400300);
	CHECK(f[1].signal_frame && f[1].how == PTREC_UNWIND_FP);
	CHECK_EQ_U64(f[2].pc, 0x400777);
	CHECK(f[2].how == PTREC_UNWIND_SIGNAL && !f[2].return_address);
	CHECK_EQ_U64(f[2].sp, 0x7ff300);
}

/* ---- aarch64 ---- */

#define A64_PAC 0x0012000000000000ull /* a pointer-authentication code in bits 54..48 */

static uint8_t code64[0x1000];

static void put_insn(uint64_t addr, uint32_t w)
{
	memcpy(code64 + (addr - CODE), &w, 4);
}

static void setup_code64(void)
{
	for (uint64_t a = CODE; a < CODE + sizeof(code64); a += 4)
		put_insn(a, 0xd503201fu);  /* nop */
	put_insn(0x400100, 0x94000040u);  /* bl: returns to 0x400104 */
	put_insn(0x400200, 0xd63f0020u);  /* blr x1: returns to 0x400204 */
	put_insn(0x400300, 0xd63f083fu);  /* blraaz x1: returns to 0x400304 */
	put_insn(0x400400, 0xd2801168u);  /* mov x8, #139 (rt_sigreturn) */
	put_insn(0x400404, 0xd4000001u);  /* svc #0 */
}

/* Unwinds an aarch64 dump whose registers are x29, x30, sp and pc (the others 0). */
static size_t unwind64(uint64_t pc, uint64_t sp, uint64_t fp, uint64_t lr,
                       struct ptrec_unwind_frame *f, size_t max, const char **stop)
{
	static const char maps[] =
		"00400000-00401000 r-xp 00000000 00:00 0 \n"
		"007ff000-00800000 rw-p 00000000 00:00 0                          [stack]\n";
	uint64_t g[PTREC_A64_COUNT] = {0};
	struct tbuf b = {0};

	g[PTREC_A64_PC] = pc;
	g[PTREC_A64_SP] = sp;
	g[PTREC_A64_FP] = fp;
	g[PTREC_A64_LR] = lr;
	tw_header(&b);
	tw_process_arch(&b, 183, 1, 1, PTREC_EVENT_CRASH, 11, 1, 0, PTREC_BACKEND_NONE, 0, "x",
	                "/x", "");
	tw_regs_a64(&b, 1, g);
	tw_record(&b, PTREC_REC_MAPS, maps, sizeof(maps) - 1);
	tw_memory(&b, CODE, PTREC_MEM_CODE, 0, code64, sizeof(code64));
	tw_memory(&b, STACK, PTREC_MEM_STACK, 1, stack, sizeof(stack));
	tw_end(&b);
	return unwind_dump(&b, f, max, stop);
}

static void test_a64_lr_fp_scan(void)
{
	struct ptrec_unwind_frame f[16];
	const char *stop = NULL;
	size_t n;

	memset(stack, 0, sizeof(stack));
	put_stack(0x7ff040, 0x7ff080);               /* frame record: x29, x30 (signed) */
	put_stack(0x7ff048, 0x400204 | A64_PAC);
	put_stack(0x7ff080, 0);                      /* outermost record: x29 0 */
	put_stack(0x7ff088, 0x400304 | A64_PAC);
	put_stack(0x7ff0a0, 0x400050);               /* not after a call: the scan skips it */
	put_stack(0x7ff0b0, 0x400104 | A64_PAC);     /* after a bl: found by scanning */
	/* A leaf without CFI: its caller's pc is in x30, then the x29 records. */
	n = unwind64(0x400010, 0x7ff000, 0x7ff040, 0x400104, f, 16, &stop);
	CHECK_EQ_U64(n, 5);
	CHECK(f[0].pc == 0x400010 && f[0].how == PTREC_UNWIND_CONTEXT);
	CHECK_EQ_U64(f[1].pc, 0x400104);
	CHECK(f[1].how == PTREC_UNWIND_RET_IN_LR && f[1].return_address);
	CHECK_EQ_U64(f[1].sp, 0x7ff000);
	CHECK_STR(ptrec_unwind_how_name(f[1].how), "link register");
	CHECK_EQ_U64(f[2].pc, 0x400204);             /* the code stripped */
	CHECK(f[2].how == PTREC_UNWIND_FP);
	CHECK_EQ_U64(f[2].sp, 0x7ff050);
	CHECK_EQ_U64(f[3].pc, 0x400304);             /* after blraaz */
	CHECK(f[3].how == PTREC_UNWIND_FP);
	CHECK_EQ_U64(f[4].pc, 0x400104);
	CHECK(f[4].how == PTREC_UNWIND_SCAN);
	CHECK_EQ_U64(f[4].sp, 0x7ff0b8);
	CHECK(stop && strstr(stop, "no CFI"));
	/* x30 holding what the record at x29 says (the function saved it there): the record
	 * alone, no frame twice. */
	n = unwind64(0x400010, 0x7ff000, 0x7ff040, 0x400204 | A64_PAC, f, 3, &stop);
	CHECK_EQ_U64(n, 3);
	CHECK(f[1].pc == 0x400204 && f[1].how == PTREC_UNWIND_FP);
	CHECK(f[2].pc == 0x400304 && f[2].how == PTREC_UNWIND_FP);
	/* x30 not after a call (a value left in it): not a frame. */
	n = unwind64(0x400010, 0x7ff000, 0x7ff040, 0x400050, f, 2, &stop);
	CHECK(n == 2 && f[1].pc == 0x400204 && f[1].how == PTREC_UNWIND_FP);
	/* A call through a wild pointer (blr x1 to 0x1234): the pc is in no code, the caller's
	 * pc in x30. */
	memset(stack, 0, sizeof(stack));
	n = unwind64(0x1234, 0x7ff000, 0, 0x400204, f, 16, &stop);
	CHECK_EQ_U64(n, 2);
	CHECK(f[0].pc == 0x1234 && f[1].pc == 0x400204);
	CHECK(f[1].how == PTREC_UNWIND_RET_IN_LR);
	CHECK(stop && strstr(stop, "no CFI"));
}

static void test_a64_signal_frame(void)
{
	struct ptrec_unwind_frame f[16];
	const char *stop = NULL;
	uint64_t regs = 0x7ff200 + 312;   /* the rt_sigframe at the handler's sp: siginfo (128),
	                                     ucontext up to uc_mcontext (176), fault_address (8),
	                                     then x0 .. x30, sp, pc, pstate */
	size_t n;

	memset(stack, 0, sizeof(stack));
	put_stack(regs + 8 * PTREC_A64_FP, 0);
	put_stack(regs + 8 * PTREC_A64_LR, 0x400104);
	put_stack(regs + 8 * PTREC_A64_SP, 0x7ff700);
	put_stack(regs + 8 * PTREC_A64_PC, 0x400777);
	/* A leaf handler: x30 is the trampoline the kernel set. */
	n = unwind64(0x400010, 0x7ff200, 0, 0x400400, f, 16, &stop);
	CHECK_EQ_U64(n, 4);
	CHECK(f[1].pc == 0x400400 && f[1].signal_frame && f[1].how == PTREC_UNWIND_RET_IN_LR);
	CHECK_EQ_U64(f[2].pc, 0x400777);
	CHECK(f[2].how == PTREC_UNWIND_SIGNAL && !f[2].return_address);
	CHECK_EQ_U64(f[2].sp, 0x7ff700);
	/* the interrupted function was a leaf too: its caller in the saved x30 */
	CHECK(f[3].pc == 0x400104 && f[3].how == PTREC_UNWIND_RET_IN_LR);
}

int main(void)
{
	setup_code();
	test_wild_fp_scan();
	test_signal_frame();
	setup_code64();
	test_a64_lr_fp_scan();
	test_a64_signal_frame();
	return check_done();
}

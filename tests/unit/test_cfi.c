/* test_cfi.c — the call-frame information machine (symbols/cfi.c): CIE and FDE parsing in
 * .eh_frame (pc-relative pointers, 'z' and 'R' augmentations) and .debug_frame, the rows that
 * DW_CFA_* instructions produce (advance, def_cfa*, offset, remember/restore_state), the
 * .eh_frame_hdr binary search agreeing with the scanned index, the PLT entries'
 * DW_CFA_def_cfa_expression, DWARF expressions, and aarch64 CFI (the x30 return-address
 * column, DW_CFA_AARCH64_negate_ra_state of pointer authentication). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "symbols/cfi.h"
#include "check.h"

struct bytes {
	uint8_t b[512];
	size_t n;
};

static void put(struct bytes *x, const void *p, size_t n) { memcpy(x->b + x->n, p, n); x->n += n; }
static void u8(struct bytes *x, uint8_t v) { put(x, &v, 1); }
static void u32(struct bytes *x, uint32_t v) { put(x, &v, 4); }
static void u64(struct bytes *x, uint64_t v) { put(x, &v, 8); }
static void patch32(struct bytes *x, size_t at, uint32_t v) { memcpy(x->b + at, &v, 4); }
static void pad(struct bytes *x, size_t from) /* DW_CFA_nop up to a multiple of 8 */
{
	while ((x->n - from) % 8)
		u8(x, 0);
}

#define EH_VADDR 0x1000u
#define HDR_VADDR 0x0f00u

/* .eh_frame: a CIE (zR, pcrel sdata4; CFA rsp+8, return address at CFA-8), an FDE for a
 * function at 0x2000 with a frame-pointer prologue and an epilogue inside remember/restore,
 * and an FDE for a PLT at 0x3000 with the PLT's CFA expression. */
static size_t fde_at[2];
static void build_eh(struct bytes *x)
{
	static const uint8_t plt_expr[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33,
	                                   0x24, 0x22};
	size_t start, len_at;

	/* CIE */
	len_at = x->n;
	u32(x, 0);
	start = x->n;
	u32(x, 0);                /* CIE id */
	u8(x, 1);                 /* version */
	put(x, "zR", 3);
	u8(x, 1);                 /* code alignment */
	u8(x, 0x78);              /* data alignment -8 */
	u8(x, 16);                /* return address column */
	u8(x, 1);                 /* augmentation data length */
	u8(x, 0x1b);              /* FDE pointers: pcrel sdata4 */
	u8(x, 0x0c); u8(x, 7); u8(x, 8);  /* def_cfa rsp+8 */
	u8(x, 0x90); u8(x, 1);            /* offset r16 at cfa-8 */
	pad(x, len_at);
	patch32(x, len_at, (uint32_t)(x->n - start));

	/* FDE 1: 0x2000..0x2040 */
	fde_at[0] = len_at = x->n;
	u32(x, 0);
	start = x->n;
	u32(x, (uint32_t)(x->n - 0));     /* CIE pointer: back to offset 0 */
	u32(x, (uint32_t)(0x2000 - (EH_VADDR + x->n)));
	u32(x, 0x40);
	u8(x, 0);                          /* augmentation data length */
	u8(x, 0x41);                       /* advance 1 */
	u8(x, 0x0e); u8(x, 16);            /* def_cfa_offset 16 */
	u8(x, 0x86); u8(x, 2);             /* offset rbp at cfa-16 */
	u8(x, 0x43);                       /* advance 3 (0x2004) */
	u8(x, 0x0d); u8(x, 6);             /* def_cfa_register rbp */
	u8(x, 0x02); u8(x, 0x20);          /* advance_loc1 0x20 (0x2024) */
	u8(x, 0x0a);                       /* remember_state */
	u8(x, 0x0c); u8(x, 7); u8(x, 8);   /* def_cfa rsp+8 */
	u8(x, 0xc6);                       /* restore rbp */
	u8(x, 0x41);                       /* advance 1 (0x2025) */
	u8(x, 0x0b);                       /* restore_state */
	pad(x, len_at);
	patch32(x, len_at, (uint32_t)(x->n - start));

	/* FDE 2: a PLT at 0x3000..0x3020 */
	fde_at[1] = len_at = x->n;
	u32(x, 0);
	start = x->n;
	u32(x, (uint32_t)(x->n - 0));
	u32(x, (uint32_t)(0x3000 - (EH_VADDR + x->n)));
	u32(x, 0x20);
	u8(x, 0);
	u8(x, 0x0f); u8(x, sizeof(plt_expr)); put(x, plt_expr, sizeof(plt_expr));
	pad(x, len_at);
	patch32(x, len_at, (uint32_t)(x->n - start));
	u32(x, 0);                         /* terminator */
}

static void build_hdr(struct bytes *h)
{
	u8(h, 1);
	u8(h, 0x1b);                       /* eh_frame_ptr: pcrel sdata4 */
	u8(h, 0x03);                       /* fde_count: udata4 */
	u8(h, 0x3b);                       /* table: datarel sdata4 */
	u32(h, (uint32_t)(EH_VADDR - (HDR_VADDR + 4)));
	u32(h, 2);
	u32(h, 0x2000 - HDR_VADDR); u32(h, (uint32_t)(EH_VADDR + fde_at[0] - HDR_VADDR));
	u32(h, 0x3000 - HDR_VADDR); u32(h, (uint32_t)(EH_VADDR + fde_at[1] - HDR_VADDR));
}

static int cfa_of(struct ptrec_cfi *cfi, uint64_t pc, uint64_t rsp, uint64_t rbp, uint64_t *cfa)
{
	struct ptrec_cfi_row row;
	uint64_t regs[PTREC_CFI_NREGS] = {0};
	uint8_t valid[PTREC_CFI_NREGS];
	int rc = ptrec_cfi_find(cfi, pc, &row);

	if (rc)
		return rc;
	memset(valid, 1, sizeof(valid));
	regs[PTREC_CFI_RSP] = rsp;
	regs[PTREC_CFI_RBP] = rbp;
	regs[PTREC_CFI_RA] = pc;
	if (row.cfa_is_expr)
		return ptrec_cfi_eval(row.cfa_expr, row.cfa_expr_len, regs, valid, 0, 0, NULL, NULL,
		                      cfa) ? -PTREC_EFORMAT : 0;
	*cfa = regs[row.cfa_reg] + (uint64_t)row.cfa_off;
	return 0;
}

static void check_rows(struct ptrec_cfi *cfi)
{
	struct ptrec_cfi_row row;
	uint64_t cfa;

	/* Entry: CFA = rsp+8, the return address at CFA-8, rbp unchanged. */
	CHECK(ptrec_cfi_find(cfi, 0x2000, &row) == 0);
	CHECK_EQ_U64(row.fde_start, 0x2000);
	CHECK_EQ_U64(row.fde_end, 0x2040);
	CHECK_EQ_U64(row.ra_reg, 16);
	CHECK(!row.cfa_is_expr && row.cfa_reg == PTREC_CFI_RSP && row.cfa_off == 8);
	CHECK(row.regs[16].kind == PTREC_CFI_OFFSET && row.regs[16].off == -8);
	CHECK(row.regs[PTREC_CFI_RBP].kind == PTREC_CFI_SAME);
	/* After push %rbp: CFA = rsp+16, rbp saved at CFA-16. */
	CHECK(ptrec_cfi_find(cfi, 0x2001, &row) == 0);
	CHECK(row.cfa_reg == PTREC_CFI_RSP && row.cfa_off == 16);
	CHECK(row.regs[PTREC_CFI_RBP].kind == PTREC_CFI_OFFSET && row.regs[PTREC_CFI_RBP].off == -16);
	/* Body: CFA = rbp+16. */
	CHECK(cfa_of(cfi, 0x2010, 0x7000, 0x7100, &cfa) == 0);
	CHECK_EQ_U64(cfa, 0x7110);
	/* Epilogue (after pop %rbp): CFA = rsp+8, rbp restored to the CIE's rule. */
	CHECK(ptrec_cfi_find(cfi, 0x2024, &row) == 0);
	CHECK(row.cfa_reg == PTREC_CFI_RSP && row.cfa_off == 8);
	CHECK(row.regs[PTREC_CFI_RBP].kind == PTREC_CFI_SAME);
	/* After restore_state: the body's rules again, CFA included. */
	CHECK(ptrec_cfi_find(cfi, 0x2025, &row) == 0);
	CHECK(row.cfa_reg == PTREC_CFI_RBP && row.cfa_off == 16);
	CHECK(row.regs[PTREC_CFI_RBP].kind == PTREC_CFI_OFFSET);
	/* PLT: CFA = rsp + 8, or rsp + 16 from the 11th byte of each 16-byte entry on. */
	CHECK(cfa_of(cfi, 0x3004, 0x7000, 0, &cfa) == 0);
	CHECK_EQ_U64(cfa, 0x7008);
	CHECK(cfa_of(cfi, 0x301b, 0x7000, 0, &cfa) == 0);
	CHECK_EQ_U64(cfa, 0x7010);
	/* Outside every FDE. */
	CHECK(ptrec_cfi_find(cfi, 0x2040, &row) == -PTREC_ENOMAP);
	CHECK(ptrec_cfi_find(cfi, 0x1fff, &row) == -PTREC_ENOMAP);
	CHECK(ptrec_cfi_find(cfi, 0x5000, &row) == -PTREC_ENOMAP);
}

static void test_eh_frame(void)
{
	struct bytes eh = {{0}, 0}, hdr = {{0}, 0};
	struct ptrec_cfi cfi;

	build_eh(&eh);
	build_hdr(&hdr);
	/* Scanned index (no .eh_frame_hdr). */
	ptrec_cfi_init(&cfi, eh.b, eh.n, EH_VADDR, 1, NULL, 0, 0);
	check_rows(&cfi);
	CHECK_EQ_U64(cfi.nindex, 2);
	ptrec_cfi_free(&cfi);
	/* Binary search through .eh_frame_hdr: the same rows, no scan. */
	ptrec_cfi_init(&cfi, eh.b, eh.n, EH_VADDR, 1, hdr.b, hdr.n, HDR_VADDR);
	check_rows(&cfi);
	CHECK(cfi.table != NULL);
	CHECK(!cfi.indexed);
	ptrec_cfi_free(&cfi);
	/* Cut short anywhere: errors, never a crash. */
	for (size_t n = 0; n < eh.n; n++) {
		struct ptrec_cfi_row row;
		ptrec_cfi_init(&cfi, eh.b, n, EH_VADDR, 1, NULL, 0, 0);
		(void)ptrec_cfi_find(&cfi, 0x2025, &row);
		(void)ptrec_cfi_find(&cfi, 0x3004, &row);
		ptrec_cfi_free(&cfi);
	}
}

/* A .debug_frame CIE at offset 0 (id 0xffffffff, version 1, no augmentation, data alignment
 * -8) with code alignment code_align, return-address column ra and the initial instructions
 * insns, then the head of an FDE for [start, start + len) (absolute 8-byte addresses); returns
 * where the FDE's length goes (patch it when its instructions are written). */
static size_t debug_frame_cie_fde(struct bytes *x, uint8_t code_align, uint8_t ra,
                                  const char *insns, size_t ninsns, uint64_t start, uint64_t len)
{
	size_t len_at = x->n, at;

	u32(x, 0);
	at = x->n;
	u32(x, 0xffffffffu);
	u8(x, 1);
	u8(x, 0);
	u8(x, code_align); u8(x, 0x78); u8(x, ra);
	put(x, insns, ninsns);
	pad(x, len_at);
	patch32(x, len_at, (uint32_t)(x->n - at));
	len_at = x->n;
	u32(x, 0);
	u32(x, 0);
	u64(x, start);
	u64(x, len);
	return len_at;
}

static void test_debug_frame(void)
{
	struct bytes x = {{0}, 0};
	struct ptrec_cfi cfi;
	struct ptrec_cfi_row row;
	/* CIE: code alignment 1, CFA rsp+8, ra (16) at CFA-8; FDE for 0x5000..0x5010. */
	size_t len_at = debug_frame_cie_fde(&x, 1, 16, "\x0c\x07\x08\x90\x01", 5, 0x5000, 0x10),
	       start = len_at + 4;

	u8(&x, 0x44);                   /* advance 4 */
	u8(&x, 0x0e); u8(&x, 32);       /* def_cfa_offset 32 */
	pad(&x, len_at);
	patch32(&x, len_at, (uint32_t)(x.n - start));

	ptrec_cfi_init(&cfi, x.b, x.n, 0, 0, NULL, 0, 0);
	CHECK(ptrec_cfi_find(&cfi, 0x5002, &row) == 0);
	CHECK(row.cfa_off == 8);
	CHECK(ptrec_cfi_find(&cfi, 0x5008, &row) == 0);
	CHECK(row.cfa_reg == PTREC_CFI_RSP && row.cfa_off == 32);
	CHECK(row.regs[16].kind == PTREC_CFI_OFFSET && row.regs[16].off == -8);
	CHECK(ptrec_cfi_find(&cfi, 0x5010, &row) == -PTREC_ENOMAP);
	ptrec_cfi_free(&cfi);
}

/* aarch64 .debug_frame as GCC writes it for a function built with -mbranch-protection=standard:
 * paciasp (negate_ra_state), str x30, [sp, #-16]! (CFA sp+16, x30 at CFA-16), then an epilogue
 * inside remember/restore_state: ldr x30, [sp], #16 (x30 restored, CFA sp), autiasp
 * (negate_ra_state again), ret; code after the epilogue has the body's rules back. */
static void test_aarch64(void)
{
	struct bytes x = {{0}, 0};
	struct ptrec_cfi cfi;
	struct ptrec_cfi_row row;
	/* CIE: code alignment 4, return address column 30 (x30), CFA sp+0 (DWARF 31); FDE for
	 * 0x6000..0x6020. */
	size_t len_at = debug_frame_cie_fde(&x, 4, 30, "\x0c\x1f\x00", 3, 0x6000, 0x20),
	       start = len_at + 4;

	u8(&x, 0x41);                   /* advance 1 insn: after paciasp */
	u8(&x, 0x2d);                   /* AARCH64_negate_ra_state */
	u8(&x, 0x41);                   /* after str x30, [sp, #-16]! */
	u8(&x, 0x0e); u8(&x, 16);       /* def_cfa_offset 16 */
	u8(&x, 0x9e); u8(&x, 2);        /* offset x30 at CFA-16 */
	u8(&x, 0x0a);                   /* remember_state */
	u8(&x, 0x43);                   /* 0x6014: after ldr x30, [sp], #16 */
	u8(&x, 0xde);                   /* restore x30 */
	u8(&x, 0x0e); u8(&x, 0);        /* def_cfa_offset 0 */
	u8(&x, 0x41);                   /* 0x6018: after autiasp */
	u8(&x, 0x2d);
	u8(&x, 0x41);                   /* 0x601c: after ret */
	u8(&x, 0x0b);                   /* restore_state */
	pad(&x, len_at);
	patch32(&x, len_at, (uint32_t)(x.n - start));

	ptrec_cfi_init(&cfi, x.b, x.n, 0, 0, NULL, 0, 0);
	cfi.machine = 183; /* EM_AARCH64 */
	CHECK(ptrec_cfi_find(&cfi, 0x6000, &row) == 0);
	CHECK(row.ra_reg == PTREC_CFI_A64_LR && !row.ra_signed);
	CHECK(row.cfa_reg == PTREC_CFI_A64_SP && row.cfa_off == 0);
	CHECK(row.regs[PTREC_CFI_A64_LR].kind == PTREC_CFI_SAME);
	CHECK(ptrec_cfi_find(&cfi, 0x6004, &row) == 0);
	CHECK(row.ra_signed && row.cfa_off == 0);
	CHECK(ptrec_cfi_find(&cfi, 0x600c, &row) == 0);
	CHECK(row.ra_signed && row.cfa_reg == PTREC_CFI_A64_SP && row.cfa_off == 16);
	CHECK(row.regs[PTREC_CFI_A64_LR].kind == PTREC_CFI_OFFSET &&
	      row.regs[PTREC_CFI_A64_LR].off == -16);
	CHECK(ptrec_cfi_find(&cfi, 0x6014, &row) == 0);
	CHECK(row.ra_signed && row.cfa_off == 0);
	CHECK(row.regs[PTREC_CFI_A64_LR].kind == PTREC_CFI_SAME);
	CHECK(ptrec_cfi_find(&cfi, 0x6018, &row) == 0);
	CHECK(!row.ra_signed && row.cfa_off == 0);
	/* restore_state brings the sign state back with the rules */
	CHECK(ptrec_cfi_find(&cfi, 0x601c, &row) == 0);
	CHECK(row.ra_signed && row.cfa_off == 16);
	CHECK(row.regs[PTREC_CFI_A64_LR].kind == PTREC_CFI_OFFSET);
	ptrec_cfi_free(&cfi);
	/* In an x86-64 file 0x2d is no instruction, and 30 no return-address column. */
	ptrec_cfi_init(&cfi, x.b, x.n, 0, 0, NULL, 0, 0);
	CHECK(ptrec_cfi_find(&cfi, 0x6000, &row) == -PTREC_EFORMAT);
	CHECK(ptrec_cfi_find(&cfi, 0x600c, &row) == -PTREC_EFORMAT);
	ptrec_cfi_free(&cfi);
}

static int read_mem(void *ctx, uint64_t addr, void *out, size_t len)
{
	(void)ctx;
	if (addr != 0x7000)
		return -1;
	memcpy(out, "\x11\x22\x33\x44\x55\x66\x77\x88", len);
	return 0;
}

static void test_expressions(void)
{
	uint64_t regs[PTREC_CFI_NREGS] = {0}, v;
	uint8_t valid[PTREC_CFI_NREGS] = {0};

	regs[PTREC_CFI_RSP] = 0x7000;
	valid[PTREC_CFI_RSP] = 1;
	/* breg7 +16 */
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x77\x10", 2, regs, valid, 0, 0, NULL, NULL, &v) == 0);
	CHECK_EQ_U64(v, 0x7010);
	/* CFA pushed first, then plus_uconst 8 */
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x23\x08", 2, regs, valid, 1, 0x100, NULL, NULL,
	                     &v) == 0);
	CHECK_EQ_U64(v, 0x108);
	/* deref and deref_size 2 */
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x77\x00\x06", 3, regs, valid, 0, 0, read_mem, NULL,
	                     &v) == 0);
	CHECK_EQ_U64(v, 0x8877665544332211ull);
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x77\x00\x94\x02", 4, regs, valid, 0, 0, read_mem,
	                     NULL, &v) == 0);
	CHECK_EQ_U64(v, 0x2211);
	/* const1s -3, lit5, mul -> -15; neg -> 15 */
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x09\xfd\x35\x1e\x1f", 5, regs, valid, 0, 0, NULL,
	                     NULL, &v) == 0);
	CHECK_EQ_U64(v, 15);
	/* lit1, bra +1 (taken: skips lit2), lit3. */
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x31\x28\x01\x00\x32\x33", 6, regs, valid, 0, 0, NULL,
	                     NULL, &v) == 0);
	CHECK_EQ_U64(v, 3);
	/* Unknown register, unreadable memory, empty stack, an endless loop: errors. */
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x76\x00", 2, regs, valid, 0, 0, NULL, NULL, &v) != 0);
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x30\x06", 2, regs, valid, 0, 0, read_mem, NULL,
	                     &v) != 0);
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x1c", 1, regs, valid, 0, 0, NULL, NULL, &v) != 0);
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x2f\xfd\xff", 3, regs, valid, 0, 0, NULL, NULL,
	                     &v) != 0);
	/* Division by zero. */
	CHECK(ptrec_cfi_eval((const uint8_t *)"\x31\x30\x1b", 3, regs, valid, 0, 0, NULL, NULL,
	                     &v) != 0);
}

int main(void)
{
	test_eh_frame();
	test_debug_frame();
	test_expressions();
	test_aarch64();
	return check_done();
}

/* cfi.h — DWARF call-frame information of one ELF file: .eh_frame (found through the binary
 * search table of .eh_frame_hdr, else a sorted index built by one scan) and .debug_frame
 * (versions 1, 3 and 4), CIE/FDE parsing with the 'z', 'R', 'P', 'L' and 'S' augmentations,
 * and the DW_CFA_* instruction machine that yields the CFA and register rules at one address.
 * Registers by DWARF number, for both machines: x86-64 0-15 (rax rdx rcx rbx rsi rdi rbp rsp
 * r8-r15) and 16 (the return-address column); aarch64 0-30 (x0-x30; the CIE's return-address
 * column is x30, the link register) and 31 (sp), with DW_CFA_AARCH64_negate_ra_state (pointer
 * authentication: the return address is signed) when the file is an aarch64 one.  Rules of
 * higher numbers (vector registers) are skipped.  Pure: bytes in, rules out; every read is
 * bounds-checked; never crashes or loops on any input.  Not async-signal-safe (the index is
 * malloc'd). */
#ifndef PTREC_CFI_H
#define PTREC_CFI_H

#include <stddef.h>
#include <stdint.h>

#define PTREC_CFI_NREGS 33   /* DWARF registers kept: x86-64 0..16, aarch64 0..32 */
#define PTREC_CFI_RA 16      /* x86-64: the return-address column */
#define PTREC_CFI_RSP 7      /* DWARF number of rsp */
#define PTREC_CFI_RBP 6      /* DWARF number of rbp */
#define PTREC_CFI_A64_FP 29  /* aarch64: x29, the frame pointer */
#define PTREC_CFI_A64_LR 30  /* aarch64: x30, the link register (the return-address column) */
#define PTREC_CFI_A64_SP 31  /* aarch64: sp */
#define PTREC_CFI_A64_PC 32  /* aarch64: the pc (no CFI rule names it; the unwinder keeps a
                                frame's pc there) */

/* How a register of the caller is found (DWARF 5 section 6.4.1). */
enum ptrec_cfi_rule_kind {
	PTREC_CFI_SAME = 0,      /* same value as in this frame (the default for every column) */
	PTREC_CFI_UNDEF,         /* undefined (for the return address: the outermost frame) */
	PTREC_CFI_OFFSET,        /* saved at CFA + off */
	PTREC_CFI_VAL_OFFSET,    /* the value CFA + off */
	PTREC_CFI_REGISTER,      /* in register reg */
	PTREC_CFI_EXPR,          /* saved at the address the expression yields (CFA pushed first) */
	PTREC_CFI_VAL_EXPR,      /* the value the expression yields (CFA pushed first) */
};

/* One register rule. */
struct ptrec_cfi_rule {
	uint8_t kind;            /* enum ptrec_cfi_rule_kind */
	uint8_t reg;             /* PTREC_CFI_REGISTER: the register */
	int64_t off;             /* PTREC_CFI_OFFSET / VAL_OFFSET: the offset */
	const uint8_t *expr;     /* PTREC_CFI_EXPR / VAL_EXPR: the expression bytes ... */
	size_t expr_len;         /* ... and their length */
};

/* The unwinding rules at one address. */
struct ptrec_cfi_row {
	uint64_t fde_start;      /* first address the FDE covers (link-time) */
	uint64_t fde_end;        /* one past its last address */
	int cfa_is_expr;         /* 1: the CFA is the value of cfa_expr, else cfa_reg + cfa_off */
	uint8_t cfa_reg;         /* DWARF register of the CFA rule */
	int64_t cfa_off;         /* offset of the CFA rule */
	const uint8_t *cfa_expr; /* DW_CFA_def_cfa_expression bytes */
	size_t cfa_expr_len;
	struct ptrec_cfi_rule regs[PTREC_CFI_NREGS]; /* rules by DWARF register number */
	unsigned ra_reg;         /* the CIE's return-address column (16 on x86-64, 30 on aarch64) */
	int ra_signed;           /* aarch64: 1 when the return address is signed at this address
	                            (RA_SIGN_STATE, toggled by DW_CFA_AARCH64_negate_ra_state): its
	                            pointer-authentication code must be stripped */
	int signal_frame;        /* 1 for a CIE with the 'S' augmentation (a signal trampoline):
	                            the caller's pc is not a return address */
};

/* An FDE found by the index: its address range and the offset of its length field. */
struct ptrec_cfi_fde {
	uint64_t start;          /* first address (link-time) */
	uint64_t end;            /* one past the last */
	uint64_t offset;         /* offset of the FDE in the section */
};

/* The CFI of one section.  Fill with ptrec_cfi_init, release with ptrec_cfi_free. */
struct ptrec_cfi {
	const uint8_t *data;     /* section bytes (not owned) */
	size_t size;
	uint64_t vaddr;          /* link-time address of the section (for pc-relative pointers) */
	int is_eh;               /* 1 for .eh_frame, 0 for .debug_frame */
	const uint8_t *hdr;      /* .eh_frame_hdr bytes, or NULL */
	size_t hdr_size;
	uint64_t hdr_vaddr;      /* its link-time address */
	const uint8_t *table;    /* the hdr's sorted table (pairs of sdata4, datarel), or NULL */
	size_t table_count;      /* its entries */
	struct ptrec_cfi_fde *index; /* sorted index built by a scan when there is no usable
	                                table (owned), or NULL */
	size_t nindex;
	int indexed;             /* 1 once the scan ran (index may still be empty) */
	uint16_t machine;        /* the file's ELF e_machine (set after ptrec_cfi_init; 0 means
	                            x86-64): 183 (EM_AARCH64) understands the AArch64 DW_CFA_*
	                            instructions */
};

/* Prepares cfi for a section (bytes not copied: they must outlive cfi).  hdr may be NULL.
 * The section is not parsed yet.  Never fails. */
void ptrec_cfi_init(struct ptrec_cfi *cfi, const uint8_t *data, size_t size, uint64_t vaddr,
                    int is_eh, const uint8_t *hdr, size_t hdr_size, uint64_t hdr_vaddr);

/* Frees the index. */
void ptrec_cfi_free(struct ptrec_cfi *cfi);

/* Finds the FDE covering link-time address pc and runs its CIE's initial instructions and its
 * own instructions up to pc.  Returns 0 with *row filled, -PTREC_ENOMAP if no FDE covers pc,
 * -PTREC_EFORMAT if the CIE/FDE or its instructions are malformed, -PTREC_ENOMEM.
 * O(log n) after the first call (which may scan the section once). */
int ptrec_cfi_find(struct ptrec_cfi *cfi, uint64_t pc, struct ptrec_cfi_row *row);

/* Memory reads for expressions: copies len bytes at addr to out, returns 0 or -1. */
typedef int (*ptrec_cfi_read_fn)(void *ctx, uint64_t addr, void *out, size_t len);

/* Evaluates a DWARF expression (the ops allowed in CFI: constants, stack, arithmetic, logic,
 * comparisons, branches, breg/bregx, deref/deref_size).  regs/valid give the frame's register
 * values by DWARF number (valid[i] 0: unknown).  If push_first, initial is pushed first (the
 * CFA for register rules).  At most 1000 operations run.  Returns 0 with *out, or -1 (bad or
 * unsupported op, stack under/overflow, unknown register, unreadable memory, too many steps). */
int ptrec_cfi_eval(const uint8_t *expr, size_t len, const uint64_t regs[PTREC_CFI_NREGS],
                   const uint8_t valid[PTREC_CFI_NREGS], int push_first, uint64_t initial,
                   ptrec_cfi_read_fn read, void *ctx, uint64_t *out);

#endif

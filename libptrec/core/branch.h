/* branch.h — the branch event: what every decoder (PT, BTS, instrumented records) produces and
 * what symbolization and reports consume.  This is the one contract between decode and render. */
#ifndef PTREC_BRANCH_H
#define PTREC_BRANCH_H

#include <stdint.h>

/* What kind of control transfer (or trace event) a branch event is. */
enum ptrec_branch_kind {
	PTREC_BR_NONE = 0,       /* not a branch (unused slot) */
	PTREC_BR_JCC,            /* conditional jump; PTREC_BRF_TAKEN says which way */
	PTREC_BR_JMP,            /* unconditional direct jump */
	PTREC_BR_CALL,           /* direct call */
	PTREC_BR_RET,            /* near return */
	PTREC_BR_IND_JMP,        /* indirect jump (register/memory operand) */
	PTREC_BR_IND_CALL,       /* indirect call */
	PTREC_BR_FAR,            /* far transfer: syscall/sysret, int, iret, far call/ret, ... */
	PTREC_BR_ENABLE,         /* tracing (re)started at `to` (TIP.PGE) */
	PTREC_BR_DISABLE,        /* tracing stopped at `from` (TIP.PGD, FUP+TIP.PGD) */
	PTREC_BR_OVERFLOW,       /* hardware overflow: history between from and to is lost */
	PTREC_BR_GAP,            /* decoder gap: history lost (error, resync, missing image) */
	PTREC_BR_TSX_ABORT,      /* transaction aborted at `from`, resumed at `to` */
	PTREC_BR_EDGE,           /* coverage edge (trace-pc): `from` is the instrumented site */
	PTREC_BR_INTERRUPT,      /* asynchronous event (signal, fault) interrupted at `from` */
	PTREC_BR_MARKER,         /* a marker (ptrec_mark): `to` holds its value, `from` the site
	                            if known (else 0) */
	PTREC_BR_EVENT,          /* Intel PT event trace: the event a CFE packet gives (interrupt
	                            with its vector, IRET, VM exit, ...), not a branch of its own:
	                            `from` the IP it binds to (0: none given), `reason` its CFE type
	                            << 8 | vector, `to` with PTREC_BRF_EVENT_DATA its EVD data (a
	                            page fault's CR2, a VM exit's exit qualification), `reserved`
	                            with PTREC_BRF_EVENT_REASON a VM exit's exit reason */
	PTREC_BR_KIND_COUNT_     /* number of kinds; not a kind */
};

/* Flags on a branch event. */
#define PTREC_BRF_TAKEN    0x01u /* conditional branch was taken */
#define PTREC_BRF_HAS_TIME 0x02u /* timestamp is valid */
#define PTREC_BRF_CYCLE    0x04u /* timestamp is cycle-accurate (CYC) */
#define PTREC_BRF_COMPRESSED_RET 0x08u /* return resolved by a compressed-return TNT bit */
#define PTREC_BRF_EVENT_DATA   0x10u /* EVENT: `to` holds its data (CR2, exit qualification) */
#define PTREC_BRF_EVENT_REASON 0x20u /* EVENT: `reserved` holds a VM exit's exit reason */

/* One branch event. */
struct ptrec_branch {
	uint64_t from;      /* address of the branching instruction (0 if unknown) */
	uint64_t to;        /* target address (0 if unknown, e.g. after DISABLE) */
	uint64_t timestamp; /* TSC-domain time when PTREC_BRF_HAS_TIME, else 0 */
	uint8_t kind;       /* enum ptrec_branch_kind */
	uint8_t flags;      /* PTREC_BRF_* */
	uint16_t reason;    /* for GAP: a -PTREC_E* code (negated to fit); EVENT: CFE type << 8 |
	                       vector; else 0 */
	uint32_t reserved;  /* EVENT: see PTREC_BRF_EVENT_REASON; GAP: trace bytes skipped before
	                       decoding resumed (saturated; 0: none
	                       or not known), else zero */
};

/* Returns a short lowercase name of kind ("jcc", "call", "ret", ...), or "?". */
const char *ptrec_branch_kind_name(unsigned kind);

/* Records as stored in BTS-format rings (hardware BTS and the instrumented backend):
 * 24 bytes, little-endian.  Hardware BTS sets PTREC_BTS_PREDICTED in flags; the instrumented
 * backend stores an enum ptrec_branch_kind in the low byte of flags and sets PTREC_BTS_SOFT. */
struct ptrec_bts_record {
	uint64_t from;  /* branch source */
	uint64_t to;    /* branch target */
	uint64_t flags; /* see above */
};
#define PTREC_BTS_PREDICTED (1ull << 4)
#define PTREC_BTS_SOFT      (1ull << 63)

/* Records of the instrumented backend from dump format version 2 on: 16 bytes, two
 * little-endian words (version 1 dumps hold 24-byte ptrec_bts_records with PTREC_BTS_SOFT).
 *
 *   w0: bits 0..47 address a | bits 48..59 x, low 12 bits | bits 60..63 enum ptrec_soft_kind
 *   w1: bits 0..47 address b | bits 48..63 x, high 16 bits
 *
 * x is a 28-bit field whose meaning depends on the kind (see the enum).  User-space code
 * addresses fit in 48 bits.  A ring's size is a multiple of 16, so a record never straddles
 * the wrap point; an all-zero record was never written. */
struct ptrec_soft_record {
	uint64_t w0; /* kind, x low bits, address a */
	uint64_t w1; /* x high bits, address b */
};

enum ptrec_soft_kind {
	PTREC_SOFT_EMPTY = 0,  /* never written */
	PTREC_SOFT_CALL = 1,   /* function entry hook: a = call site (the return address),
	                          b = callee; x = time */
	PTREC_SOFT_RET = 2,    /* function exit hook: a = the function, b = its call site (the
	                          return address); x = time */
	PTREC_SOFT_EDGE = 3,   /* coverage edge: a = instrumented site, b = 0; x = time */
	PTREC_SOFT_MARK = 4,   /* marker: w0 bits 0..59 = the full TSC (0 when untimed),
	                          w1 = the marker's value */
	PTREC_SOFT_ENTRY = 5,  /* entry-only hook (GCC -pg -mfentry): a = call site, b = the
	                          hook's return address in the callee; x = bits 3..30 of the stack
	                          pointer at entry (returns are inferred from it) */
	PTREC_SOFT_BRANCH = 6, /* any branch (ptrec_soft_append): a = from, b = to, x = enum
	                          ptrec_branch_kind */
};

#define PTREC_SOFT_ADDR_MASK ((1ull << 48) - 1)   /* address bits of w0 and w1 */
#define PTREC_SOFT_X_MASK    ((1ull << 28) - 1)   /* the x field */
#define PTREC_SOFT_TSC_MASK  ((1ull << 60) - 1)   /* MARK: TSC bits in w0 */

/* Builds w0 / w1 from a kind, the addresses and x. */
#define PTREC_SOFT_W0(kind, a, x) (((uint64_t)(kind) << 60) | \
	(((uint64_t)(x) & 0xfffu) << 48) | ((uint64_t)(a) & PTREC_SOFT_ADDR_MASK))
#define PTREC_SOFT_W1(b, x) (((((uint64_t)(x) >> 12) & 0xffffu) << 48) | \
	((uint64_t)(b) & PTREC_SOFT_ADDR_MASK))

/* The parts of a record. */
#define PTREC_SOFT_KIND(w0)   ((unsigned)((w0) >> 60))
#define PTREC_SOFT_A(w0)      ((w0) & PTREC_SOFT_ADDR_MASK)
#define PTREC_SOFT_B(w1)      ((w1) & PTREC_SOFT_ADDR_MASK)
#define PTREC_SOFT_X(w0, w1)  ((((w0) >> 48) & 0xfffu) | (((w1) >> 48) << 12))

/* Soft ring format word (struct ptrec_dump_thread.pt_config of instrumented threads, dump
 * version 2): whether CALL/RET/EDGE records carry time in x, and the time unit. */
#define PTREC_SOFT_FMT_TIMED        0x1u     /* x = (TSC >> shift) modulo 2^28 */
#define PTREC_SOFT_FMT_SHIFT(fmt)   ((unsigned)(((fmt) >> 8) & 0x3f)) /* the shift */

#endif

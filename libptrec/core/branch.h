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
	PTREC_BR_KIND_COUNT_     /* number of kinds; not a kind */
};

/* Flags on a branch event. */
#define PTREC_BRF_TAKEN    0x01u /* conditional branch was taken */
#define PTREC_BRF_HAS_TIME 0x02u /* timestamp is valid */
#define PTREC_BRF_CYCLE    0x04u /* timestamp is cycle-accurate (CYC) */
#define PTREC_BRF_COMPRESSED_RET 0x08u /* return resolved by a compressed-return TNT bit */

/* One branch event. */
struct ptrec_branch {
	uint64_t from;      /* address of the branching instruction (0 if unknown) */
	uint64_t to;        /* target address (0 if unknown, e.g. after DISABLE) */
	uint64_t timestamp; /* TSC-domain time when PTREC_BRF_HAS_TIME, else 0 */
	uint8_t kind;       /* enum ptrec_branch_kind */
	uint8_t flags;      /* PTREC_BRF_* */
	uint16_t reason;    /* for GAP: a -PTREC_E* code (negated to fit), else 0 */
	uint32_t reserved;  /* zero */
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

#endif

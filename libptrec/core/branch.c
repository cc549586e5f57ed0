/* branch.c — names of branch event kinds.  Async-signal-safe. */
#include "core/branch.h"

static const char *const kind_names[PTREC_BR_KIND_COUNT_] = {
	[PTREC_BR_NONE] = "none",         [PTREC_BR_JCC] = "jcc",
	[PTREC_BR_JMP] = "jmp",           [PTREC_BR_CALL] = "call",
	[PTREC_BR_RET] = "ret",           [PTREC_BR_IND_JMP] = "ind-jmp",
	[PTREC_BR_IND_CALL] = "ind-call", [PTREC_BR_FAR] = "far",
	[PTREC_BR_ENABLE] = "enable",     [PTREC_BR_DISABLE] = "disable",
	[PTREC_BR_OVERFLOW] = "overflow", [PTREC_BR_GAP] = "gap",
	[PTREC_BR_TSX_ABORT] = "tsx-abort", [PTREC_BR_EDGE] = "edge",
	[PTREC_BR_INTERRUPT] = "interrupt", [PTREC_BR_MARKER] = "marker",
	[PTREC_BR_EVENT] = "event",
};

const char *ptrec_branch_kind_name(unsigned kind)
{
	return kind < PTREC_BR_KIND_COUNT_ ? kind_names[kind] : "?";
}

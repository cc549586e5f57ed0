/* decode_stat.c — `ptrec decode --stat`: decodes the whole trace and prints its totals, one
 * `key: value` per line (instructions, branch events by kind, gaps and overflows, PSBs, bytes,
 * time span). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptrec.h"
#include "decode/pt_flow.h"
#include "decode/pt_packet.h"
#include "tool/tool.h"

int decode_stat(FILE *out, struct ptrec_pt_flow *f, const uint8_t *buf, size_t len)
{
	struct ptrec_pt_flow_counts c;
	uint64_t psbs = 0;
	memset(&c, 0, sizeof(c));
	int e = ptrec_pt_flow_count(f, &c);
	const uint64_t *kind = c.kind;
	for (long off = 0; (off = ptrec_pt_packet_find_psb(buf, len, (size_t)off)) >= 0; off++)
		psbs++;
	const struct ptrec_pt_flow_stats *st = ptrec_pt_flow_stats(f);
	uint64_t branches = 0;
	for (unsigned k = PTREC_BR_JCC; k <= PTREC_BR_FAR; k++)
		branches += kind[k];
	fprintf(out, "insns: %" PRIu64 "\n", st->insns);
	fprintf(out, "branches: %" PRIu64 "\n", branches);
	fprintf(out, "jcc: %" PRIu64 "\n", kind[PTREC_BR_JCC]);
	fprintf(out, "jcc-taken: %" PRIu64 "\n", c.jcc_taken);
	fprintf(out, "jmp: %" PRIu64 "\n", kind[PTREC_BR_JMP]);
	fprintf(out, "call: %" PRIu64 "\n", kind[PTREC_BR_CALL]);
	fprintf(out, "ret: %" PRIu64 "\n", kind[PTREC_BR_RET]);
	fprintf(out, "ret-compressed: %" PRIu64 "\n", c.ret_compressed);
	fprintf(out, "ind-jmp: %" PRIu64 "\n", kind[PTREC_BR_IND_JMP]);
	fprintf(out, "ind-call: %" PRIu64 "\n", kind[PTREC_BR_IND_CALL]);
	fprintf(out, "far: %" PRIu64 "\n", kind[PTREC_BR_FAR]);
	fprintf(out, "interrupt: %" PRIu64 "\n", kind[PTREC_BR_INTERRUPT]);
	fprintf(out, "tsx-abort: %" PRIu64 "\n", kind[PTREC_BR_TSX_ABORT]);
	fprintf(out, "enable: %" PRIu64 "\n", kind[PTREC_BR_ENABLE]);
	fprintf(out, "disable: %" PRIu64 "\n", kind[PTREC_BR_DISABLE]);
	fprintf(out, "ptwrite: %" PRIu64 "\n", c.ptw);
	fprintf(out, "overflows: %" PRIu64 "\n", kind[PTREC_BR_OVERFLOW]);
	fprintf(out, "gaps: %" PRIu64 "\n", kind[PTREC_BR_GAP]);
	fprintf(out, "psbs: %" PRIu64 "\n", psbs);
	fprintf(out, "bytes: %zu\n", len);
	fprintf(out, "skipped-bytes: %" PRIu64 "\n", st->skipped);
	if (c.have_time) {
		fprintf(out, "time-first: %" PRIu64 "\n", c.time_first);
		fprintf(out, "time-last: %" PRIu64 "\n", c.time_last);
		fprintf(out, "time-span: %" PRIu64 "\n", c.time_last - c.time_first);
	}
	return e;
}

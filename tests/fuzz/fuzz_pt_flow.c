/* fuzz_pt_flow.c — libFuzzer target for the PT instruction flow decoder (run by hand; the
 * deterministic smoke in make check is test_fuzz_smoke in tests/unit/test_pt_flow.c).
 *
 * Input: byte 0 = n (code size / 2), then 2n bytes of code mapped at 0x1000 (64-bit), the rest
 * is the trace.  Checks: no crash or sanitizer report, every run's instruction count and lengths
 * are sane, the decoder ends (bounded), the instruction iterator agrees with the runs, and the
 * totals of ptrec_pt_flow_count (chains and spans) are the runs added up, the first and last
 * time included (the second pass with the clocks configured, so that MTCs move time).
 *
 * Build and run (`make fuzz-flow` does this, FUZZ_SECONDS bounds it):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -Iinclude -Ilibptrec \
 *     tests/fuzz/fuzz_pt_flow.c libptrec/pt_flow.c libptrec/pt_image.c libptrec/pt_time.c \
 *     libptrec/branch_ring.c libptrec/pt_packet.c libptrec/x86_ild.c -o fuzz-pt-flow
 *   ./fuzz-pt-flow -max_total_time=120 -max_len=512 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "decode/pt_flow.h"
#include "decode/pt_image.h"

#define FUZZ_ASSERT(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t ncode = (size_t)data[0] * 2;
	if (ncode > size - 1)
		ncode = size - 1;
	const uint8_t *trace = data + 1 + ncode;
	size_t ntrace = size - 1 - ncode;
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	FUZZ_ASSERT(img);
	if (ncode)
		FUZZ_ASSERT(ptrec_pt_img_add_bytes(img, 0x1000, data + 1, ncode, 1) == 0);

	for (unsigned errata = 0; errata < 2; errata++) {
		struct ptrec_pt_flow_config cfg = {trace, ntrace, img, errata ? 7u : 0u, {0}};
		if (errata)
			cfg.time = (struct ptrec_pt_time_config){1, 2, 3, 20, 0};
		struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
		FUZZ_ASSERT(f);
		struct ptrec_pt_flow_run run;
		struct ptrec_pt_flow_counts sum, cnt;
		uint64_t insns = 0, nrun = 0;
		int e;
		memset(&sum, 0, sizeof(sum));
		memset(&cnt, 0, sizeof(cnt));
		while ((e = ptrec_pt_flow_next_run(f, &run)) > 0) {
			FUZZ_ASSERT(run.ninsn <= 4096);
			for (uint32_t i = 0; i < run.ninsn; i++)
				FUZZ_ASSERT(run.len[i] >= 1 && run.len[i] <= 15);
			FUZZ_ASSERT(run.ev.kind < PTREC_BR_KIND_COUNT_);
			insns += run.ninsn;
			sum.kind[run.ev.kind]++;
			sum.jcc_taken += run.ev.kind == PTREC_BR_JCC && (run.ev.flags & PTREC_BRF_TAKEN);
			sum.ret_compressed += !!(run.ev.flags & PTREC_BRF_COMPRESSED_RET);
			sum.aux += run.aux != 0;
			if (run.ev.flags & PTREC_BRF_HAS_TIME) {
				if (!sum.have_time)
					sum.time_first = run.ev.timestamp;
				sum.have_time = 1;
				sum.time_last = run.ev.timestamp;
			}
			FUZZ_ASSERT(++nrun < 100000000);
		}
		FUZZ_ASSERT(e == 0);
		FUZZ_ASSERT(ptrec_pt_flow_stats(f)->insns == insns);
		ptrec_pt_flow_free(f);

		/* The totals without runs are the runs added up. */
		f = ptrec_pt_flow_new(&cfg);
		FUZZ_ASSERT(f);
		FUZZ_ASSERT(ptrec_pt_flow_count(f, &cnt) == 0);
		FUZZ_ASSERT(cnt.insns == insns && cnt.jcc_taken == sum.jcc_taken &&
		            cnt.ret_compressed == sum.ret_compressed && cnt.aux == sum.aux);
		FUZZ_ASSERT(cnt.have_time == sum.have_time && cnt.time_first == sum.time_first &&
		            cnt.time_last == sum.time_last);
		for (unsigned k = PTREC_BR_NONE + 1; k < PTREC_BR_KIND_COUNT_; k++)
			FUZZ_ASSERT(cnt.kind[k] == sum.kind[k]);
		ptrec_pt_flow_free(f);

		/* The instruction iterator reports the same number of instructions. */
		f = ptrec_pt_flow_new(&cfg);
		struct ptrec_pt_flow_insn insn;
		struct ptrec_branch ev;
		uint64_t n2 = 0;
		while ((e = ptrec_pt_flow_next_insn(f, &insn, &ev, NULL)) > 0)
			if (e == PT_FLOW_INSN)
				n2++;
		FUZZ_ASSERT(e == 0 && n2 == insns);
		ptrec_pt_flow_free(f);
	}
	ptrec_pt_img_free(img);
	return 0;
}

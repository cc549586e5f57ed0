/* test_pt_marker.c — a ptrec_mark on Intel PT is a PTWRITE: the report's decoder turns its PTW
 * packet into a marker event in its place among the branches.  The trace is generated with
 * ptgen's own packet writers (tests/ptgen/pt_encode.c, independent of libptrec's decoder) for
 * a small program, following the processor model of doc/ptgen.md with PTWRITE on and
 * FUPonPTW (as backend_pt.c asks the kernel: ptw, fup_on_ptw):
 *
 *   0x401000: 90                 nop
 *   0x401001: f3 48 0f ae e0     ptwrite %rax        rax = 0x1111 (marker A)
 *   0x401006: e8 05 00 00 00     call 0x401010
 *   0x40100b: 0f 05              syscall             leaves user mode
 *   0x40100d: 90 90 90
 *   0x401010: f3 48 0f ae e0     ptwrite %rax        rax = 0xb7a000000002 (marker B)
 *   0x401015: c3                 ret                 compressed: one taken TNT bit
 *
 * Packets: PSB PSBEND, MODE.Exec TIP.PGE(0x401000), PTW(A, IP) FUP(0x401001),
 * PTW(B, IP) FUP(0x401010), TNT(1), TIP.PGD (IP suppressed).
 * Expected events, oldest first: enable, mark A, call, mark B, ret, disable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decode/branch_ring.h"
#include "decode/pt_flow.h"
#include "decode/pt_image.h"
#include "pt_encode.h"

static const uint8_t code[] = {
	0x90,                         /* 0x401000 nop */
	0xf3, 0x48, 0x0f, 0xae, 0xe0, /* 0x401001 ptwrite %rax */
	0xe8, 0x05, 0x00, 0x00, 0x00, /* 0x401006 call 0x401010 */
	0x0f, 0x05,                   /* 0x40100b syscall */
	0x90, 0x90, 0x90,             /* 0x40100d */
	0xf3, 0x48, 0x0f, 0xae, 0xe0, /* 0x401010 ptwrite %rax */
	0xc3,                         /* 0x401015 ret */
};

int main(void)
{
	struct pe_buf t = {0};
	struct ptrec_branch store[64];
	struct branch_ring ring;
	struct ptrec_pt_flow_stats st;

	pe_psb(&t);
	pe_psbend(&t);
	pe_mode_exec(&t, 1, 0, 1);
	pe_ip(&t, PE_TIP_PGE, PE_IP_FULL, 0x401000);
	pe_ptw(&t, 0x1111, 8, 1);
	pe_ip(&t, PE_FUP, PE_IP_FULL, 0x401001);
	pe_ptw(&t, 0xb7a000000002ull, 8, 1);
	pe_ip(&t, PE_FUP, PE_IP_FULL, 0x401010);
	pe_tnt_short(&t, 1, 1);
	pe_ip(&t, PE_TIP_PGD, PE_IP_SUPPRESSED, 0);
	CHECK(!t.failed);

	struct ptrec_pt_img *img = ptrec_pt_img_new();
	CHECK(img && ptrec_pt_img_add_bytes(img, 0x401000, code, sizeof(code), 0) == 0);
	ptrec_branch_ring_init(&ring, store, 64);
	int gaps = ptrec_pt_flow_decode_last(t.data, t.len, img, NULL, &ring, &st);
	CHECK(gaps == 0);

	char got[1024] = "";
	size_t n = ptrec_branch_ring_count(&ring);
	for (size_t i = 0; i < n; i++) {
		const struct ptrec_branch *b = ptrec_branch_ring_get(&ring, i);
		char one[96];
		if (b->kind == PTREC_BR_MARKER)
			snprintf(one, sizeof(one), "%smark %llx", i ? ", " : "", (unsigned long long)b->to);
		else
			snprintf(one, sizeof(one), "%s%s %llx>%llx", i ? ", " : "",
			         ptrec_branch_kind_name(b->kind), (unsigned long long)b->from,
			         (unsigned long long)b->to);
		strncat(got, one, sizeof(got) - strlen(got) - 1);
	}
	CHECK_STR(got, "enable 0>401000, mark 1111, call 401006>401010, mark b7a000000002, "
	               "ret 401015>40100b, disable 40100b>0");

	/* The marks sit in the code: A in the first block, B in the callee. */
	for (size_t i = 0; i < n; i++) {
		const struct ptrec_branch *b = ptrec_branch_ring_get(&ring, i);
		if (b->kind != PTREC_BR_MARKER)
			continue;
		if (b->to == 0x1111)
			CHECK(b->from >= 0x401000 && b->from <= 0x401006);
		else
			CHECK(b->from >= 0x401006 && b->from <= 0x401015);
	}
	ptrec_pt_img_free(img);
	free(t.data);
	return check_done();
}

/* fuzz_cfi.c — fuzzing the call-frame information parser and machine (symbols/cfi.c): FDE
 * lookup (scanned index and .eh_frame_hdr table), CIE/FDE parsing, DW_CFA_* instructions and
 * the DWARF expressions of the rules found.
 *
 * Built two ways:
 * - with -DPTREC_LIBFUZZER by `make fuzz-cfi` (clang, libFuzzer): input byte 0 picks
 *   .eh_frame (even) or .debug_frame (odd), byte 1 how much of the rest is an .eh_frame_hdr;
 * - otherwise as the `make check` smoke test: a deterministic driver (fixed seed LCG) flips
 *   bytes, writes interesting values and truncates the .eh_frame and .eh_frame_hdr of this
 *   very program, and looks up addresses across its text.  Seconds, not minutes. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/cfi.h"
#ifndef PTREC_LIBFUZZER
#include "symbols/elf_symbols.h"
#include "fuzz_mutate.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int read_nothing(void *ctx, uint64_t addr, void *out, size_t len)
{
	(void)ctx;
	if (addr & 1)
		return -1;
	memset(out, 0x5a, len);
	return 0;
}

/* Looks up n addresses from lo and evaluates every expression a row holds. */
static void probe(struct ptrec_cfi *cfi, uint64_t lo, uint64_t span, unsigned n)
{
	uint64_t regs[PTREC_CFI_NREGS];
	uint8_t valid[PTREC_CFI_NREGS];

	for (unsigned i = 0; i < PTREC_CFI_NREGS; i++) {
		regs[i] = 0x7000 + 8 * i;
		valid[i] = (uint8_t)(i != 3);
	}
	for (unsigned k = 0; k < n; k++) {
		struct ptrec_cfi_row row;
		uint64_t v;
		if (ptrec_cfi_find(cfi, lo + (span ? span * k / n : k), &row))
			continue;
		if (row.cfa_is_expr)
			(void)ptrec_cfi_eval(row.cfa_expr, row.cfa_expr_len, regs, valid, 0, 0,
			                     read_nothing, NULL, &v);
		for (unsigned i = 0; i < PTREC_CFI_NREGS; i++)
			if (row.regs[i].expr)
				(void)ptrec_cfi_eval(row.regs[i].expr, row.regs[i].expr_len, regs, valid, 1,
				                     0x7100, read_nothing, NULL, &v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptrec_cfi cfi;
	size_t hdr_len;

	if (size < 2)
		return 0;
	hdr_len = data[1] < size - 2 ? data[1] : 0;
	ptrec_cfi_init(&cfi, data + 2 + hdr_len, size - 2 - hdr_len, 0x1000, !(data[0] & 1),
	               hdr_len ? data + 2 : NULL, hdr_len, 0x800);
	probe(&cfi, 0, 0x4000, 64);
	ptrec_cfi_free(&cfi);
	return 0;
}

#ifndef PTREC_LIBFUZZER
/* A few mutations anywhere in buf. */
static void mutate_some(uint8_t *buf, size_t len)
{
	unsigned edits = 1 + (unsigned)(next_rand() % 6);
	for (unsigned e = 0; e < edits; e++)
		mutate(buf, 0, len);
}

int main(int argc, char **argv)
{
	struct ptrec_elf elf;
	const struct ptrec_elf_section *eh, *hdr, *text;
	const uint8_t *ehp, *hdrp;
	size_t ehn, hdrn;
	unsigned iters = argc > 1 ? (unsigned)atoi(argv[1]) : 20000;
	uint8_t *a, *b;

	if (ptrec_elf_open_file("/proc/self/exe", &elf, NULL)) {
		printf("SKIP: cannot read /proc/self/exe\n");
		return 77;
	}
	eh = ptrec_elf_find_section(&elf, ".eh_frame");
	hdr = ptrec_elf_find_section(&elf, ".eh_frame_hdr");
	text = ptrec_elf_find_section(&elf, ".text");
	if (!eh || !hdr || !text || ptrec_elf_section_bytes(&elf, eh, &ehp, &ehn) ||
	    ptrec_elf_section_bytes(&elf, hdr, &hdrp, &hdrn)) {
		printf("SKIP: this program has no .eh_frame/.eh_frame_hdr/.text to start from\n");
		return 77;
	}
	a = malloc(ehn);
	b = malloc(hdrn);
	if (!a || !b)
		return 99;
	for (unsigned i = 0; i < iters; i++) {
		struct ptrec_cfi cfi;
		size_t n = ehn, hn = hdrn;
		memcpy(a, ehp, ehn);
		memcpy(b, hdrp, hdrn);
		if (i) {
			if (next_rand() & 1)
				mutate_some(a, ehn);
			else
				mutate_some(b, hdrn);
			if (next_rand() % 8 == 0)
				n = (size_t)(next_rand() % (ehn + 1));
		}
		ptrec_cfi_init(&cfi, a, n, eh->addr, (int)(i % 16 != 15), i % 4 ? b : NULL, hn,
		               hdr->addr);
		probe(&cfi, text->addr, text->size, 48);
		ptrec_cfi_free(&cfi);
	}
	free(a);
	free(b);
	ptrec_elf_close(&elf);
	printf("%u mutated CFI sections looked up, no crash\n", iters);
	return 0;
}
#endif

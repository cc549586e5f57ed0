/* fuzz_report_readers.c — fuzzing the dump reader (plus BTS decoding and stack rebuilding on
 * what it returns) and the ELF/DWARF readers (plus lookups).
 *
 * Built two ways:
 * - with -DPTREC_LIBFUZZER by `make fuzz-report` (clang, libFuzzer): the first input byte picks
 *   the reader (even: dump, odd: ELF+DWARF), the rest is the input;
 * - otherwise as the `make check` smoke test: a deterministic driver (fixed seed LCG) applies
 *   byte flips, interesting 8/32/64-bit values and truncations to seeds — a dump written by
 *   the test-side writer and a small ELF with DWARF 4 and 5 built by $CC (else this program
 *   itself) — mutating the ELF headers and the .debug_* sections.  It also renders the full
 *   text/JSON/trace report of every dump that still parses.  Seconds, not minutes. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "decode/bts_decode.h"
#include "decode/soft_decode.h"
#include "report/callstack.h"
#include "dump/dump_read.h"
#include "symbols/dwarf_line.h"
#include "symbols/elf_symbols.h"
#include "ptrec.h"
#ifndef PTREC_LIBFUZZER
#include "report/report.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_dump(const uint8_t *data, size_t size)
{
	struct ptrec_dump d;
	struct ptrec_dump_error err;

	if (ptrec_dump_parse(data, size, &d, &err))
		return;
	/* Every SYSFILE's bytes are inside the input (AddressSanitizer sees an over-read). */
	for (int k = 1; k < PTREC_SYSFILE_KINDS; k++) {
		const struct ptrec_dump_sysfile_rec *f = &d.sysfiles[k];
		volatile uint8_t sink = 0;
		if (f->present && (f->len > size || f->bytes < data || f->bytes + f->len > data + size))
			abort();
		for (size_t j = 0; f->present && j < f->len; j++)
			sink ^= f->bytes[j];
		(void)sink;
	}
	for (size_t i = 0; i < d.nthreads; i++) {
		const struct ptrec_dump_thread_rec *t = &d.threads[i];
		struct ptrec_branch ev[256];
		struct ptrec_frame fr[32];
		struct ptrec_soft_ring_info info = {t->hdr.pt_config, t->hdr.pt_config1,
		                                    t->hdr.stack_pointer};
		size_t n = (i & 2) ? ptrec_soft_decode(t->data, (size_t)t->hdr.data_size, t->hdr.head,
		                                       &info, ev, 256, NULL)
		                   : ptrec_bts_decode(t->data, (size_t)t->hdr.data_size, t->hdr.head,
		                                      NULL, NULL, ev, 256, NULL);
		ptrec_callstack_rebuild(ev, n, (int)(i & 1), fr, 32, NULL);
	}
#ifndef PTREC_LIBFUZZER
	{
		struct ptrec_report r;
		struct ptrec_report_options opt;
		FILE *null = fopen("/dev/null", "w");
		ptrec_report_options_init(&opt);
		if (null && !ptrec_report_build(&r, &d, &opt)) {
			ptrec_report_text(&r, null);
			ptrec_report_json(&r, null);
			ptrec_report_trace(&r, null);
		}
		ptrec_report_free(&r);
		if (null)
			fclose(null);
	}
#endif
	ptrec_dump_free(&d);
}

static void fuzz_elf(const uint8_t *data, size_t size)
{
	struct ptrec_elf elf;
	struct ptrec_dwarf dw;

	if (ptrec_elf_open_mem(data, size, "fuzz", &elf, NULL))
		return;
	if (!ptrec_dwarf_load(&dw, &elf, NULL)) {
		for (size_t i = 0; i < dw.nrows; i += 1 + dw.nrows / 16) {
			const char *file;
			unsigned line;
			ptrec_dwarf_lookup_line(&dw, dw.rows[i].addr, &file, &line);
			ptrec_dwarf_lookup_func(&dw, dw.rows[i].addr);
			if (file)
				(void)strlen(file);
		}
		/* call sites, names and tail-call chains (dwarf_calls.c) */
		for (size_t i = 0; i < dw.ncalls; i += 1 + dw.ncalls / 16) {
			uint64_t out[8];
			const struct ptrec_dwarf_call *c = ptrec_dwarf_call_at(&dw, dw.calls[i].ret);
			if (c && c->name)
				(void)ptrec_dwarf_entry_by_name(&dw, c->name);
			for (size_t k = 0; k < dw.nfuncs; k += 1 + dw.nfuncs / 16)
				ptrec_dwarf_tail_chain(&dw, c ? c->target : 0, dw.funcs[k].lo, out, 8);
		}
		for (size_t i = 0; i < dw.nnames; i += 1 + dw.nnames / 16)
			(void)ptrec_dwarf_entry_by_name(&dw, dw.names[i].name);
		ptrec_dwarf_free(&dw);
	}
	for (size_t i = 0; i < elf.nsyms; i += 1 + elf.nsyms / 16) {
		uint8_t buf[16];
		const struct ptrec_elf_sym *s = ptrec_elf_lookup(&elf, elf.syms[i].addr + 1);
		if (s)
			(void)strlen(s->name);
		ptrec_elf_read(&elf, elf.syms[i].addr, buf, sizeof(buf));
	}
	ptrec_elf_close(&elf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		fuzz_elf(data + 1, size - 1);
	else
		fuzz_dump(data + 1, size - 1);
	return 0;
}

#ifndef PTREC_LIBFUZZER
#include "dump_writer.h"
#include "fuzz_mutate.h"

static struct tbuf sample_dump(void)
{
	struct tbuf b = {0}, ring = {0};
	uint64_t stack[8] = {0x7010, 0x401000, 0x7030, 0x401100, 0, 0, 0, 0};
	const char *maps = "400000-401000 r-xp 00000000 08:01 5 /nonexistent/prog\n"
	                   "7000-8000 rw-p 00000000 00:00 0 [stack]\n";
	for (int i = 0; i < 12; i++)
		tw_soft(&ring, 0x400100 + (uint64_t)i * 8, 0x400800 + (uint64_t)i * 4,
		        i % 3 == 2 ? PTREC_BR_RET : PTREC_BR_CALL);
	tw_header(&b);
	tw_process(&b, 7, 7, PTREC_EVENT_CRASH, 11, 1, 0x10, PTREC_BACKEND_INSTRUMENTED, 2, "p",
	           "/nonexistent/prog", "why");
	tw_regs(&b, 7, 0x400123, 0x7000, 0x7000);
	tw_sample_process_files(&b);
	tw_record(&b, PTREC_REC_MAPS, maps, strlen(maps));
	tw_buildid(&b, 0x400000, (const uint8_t *)"0123456789abcdefghij", 20, "/nonexistent/prog");
	tw_memory(&b, 0x7000, PTREC_MEM_STACK, 7, stack, sizeof(stack));
	tw_thread(&b, 7, PTREC_BACKEND_INSTRUMENTED, PTREC_THREAD_CRASHED, "main", 4096, ring.n,
	          ring.p, ring.n);
	tw_thread(&b, 8, PTREC_BACKEND_INTEL_BTS, 0, "other", 4096, ring.n + 100, ring.p, ring.n);
	tw_end(&b);
	tw_sample_host_files(&b);
	free(ring.p);
	return b;
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct tbuf b = {0};
	uint8_t tmp[65536];
	size_t n;
	if (!f)
		return NULL;
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		tb_put(&b, tmp, n);
	fclose(f);
	*len = b.n;
	return b.p;
}

/* A small ELF with DWARF: built by $CC if possible, else this executable. */
static uint8_t *elf_seed(const char *dwarf, size_t *len)
{
	const char *cc = getenv("CC"), *top = getenv("top_builddir");
	char src[4096], bin[4096], cmd[12288];
	uint8_t *p;
	FILE *f;

	snprintf(src, sizeof(src), "%s/tests/tmp/fuzz_seed_%s.c", top ? top : ".", dwarf + 2);
	snprintf(bin, sizeof(bin), "%s/tests/tmp/fuzz_seed_%s", top ? top : ".", dwarf + 2);
	snprintf(cmd, sizeof(cmd), "%s/tests/tmp", top ? top : ".");
	mkdir(cmd, 0700);
	if (cc && *cc && (f = fopen(src, "w"))) {
		/* at -O2: call sites, and relay's tail call to twice */
		fprintf(f, "#include <stdio.h>\nstatic int sq(int x)\n{\n\treturn x * x;\n}\n"
		           "__attribute__((noinline)) int twice(int x)\n{\n"
		           "\tfor (int i = 0; i < x; i++)\n\t\tputs(\"x\");\n"
		           "\treturn sq(x) + x;\n}\n"
		           "__attribute__((noinline)) int relay(int x)\n{\n\treturn twice(x + 1);\n}\n"
		           "int main(int c, char **v)\n{\n\t(void)v;\n"
		           "\treturn relay(c) + 1;\n}\n");
		fclose(f);
		snprintf(cmd, sizeof(cmd), "%s -O2 %s -o '%s' '%s' 2>/dev/null", cc, dwarf, bin, src);
		if (system(cmd) == 0 && (p = read_all(bin, len))) {
			remove(src);
			remove(bin);
			return p;
		}
		remove(src);
	}
	return read_all("/proc/self/exe", len);
}

static void fuzz_elf_seed(uint8_t *elf, size_t len, unsigned iters)
{
	struct ptrec_elf e;
	size_t ranges[32][2], nr = 0;
	uint8_t *work = malloc(len + 1);

	/* Where the headers and debug sections are, from the pristine file. */
	if (!ptrec_elf_open_mem(elf, len, "seed", &e, NULL)) {
		for (size_t i = 0; i < e.nsections && nr < 31; i++)
			if (!strncmp(e.sections[i].name, ".debug_", 7) && e.sections[i].valid &&
			    e.sections[i].size) {
				ranges[nr][0] = e.sections[i].offset;
				ranges[nr][1] = e.sections[i].offset + e.sections[i].size;
				nr++;
			}
		ptrec_elf_close(&e);
	}
	ranges[nr][0] = 0;
	ranges[nr][1] = len < 4096 ? len : 4096; /* ELF, program and (often) section headers */
	nr++;
	for (unsigned it = 0; it < iters; it++) {
		size_t n = len, r = next_rand() % nr, k = 1 + next_rand() % 8;
		memcpy(work, elf, len);
		for (size_t j = 0; j < k; j++)
			mutate(work, ranges[r][0], ranges[r][1]);
		if (next_rand() % 16 == 0)
			n = next_rand() % len;
		fuzz_elf(work, n);
	}
	free(work);
}

int main(void)
{
	struct tbuf d = sample_dump();
	uint8_t *work = malloc(d.n);
	unsigned dump_iters = 20000, elf_iters = 4000;
	size_t elen;
	uint8_t *elf;

	/* Inputs that once crashed a reader (libFuzzer's, first byte as in LLVMFuzzerTestOneInput:
	 * tests/data/fuzz/report), then the pristine seeds, once as they are. */
	{
		const char *srcdir = getenv("top_srcdir");
		char dir[4096], path[8192];
		DIR *dp;
		snprintf(dir, sizeof(dir), "%s/tests/data/fuzz/report", srcdir ? srcdir : ".");
		if (!(dp = opendir(dir))) {
			fprintf(stderr, "%s: no regression inputs\n", dir);
			return 1;
		}
		unsigned nreg = 0;
		for (struct dirent *e; (e = readdir(dp));) {
			size_t n;
			uint8_t *p;
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if ((p = read_all(path, &n))) {
				LLVMFuzzerTestOneInput(p, n);
				free(p);
				nreg++;
			}
		}
		closedir(dp);
		printf("regression inputs: %u\n", nreg);
	}
	fuzz_dump(d.p, d.n);
	for (unsigned it = 0; it < dump_iters; it++) {
		size_t n = d.n, k = 1 + next_rand() % 6;
		memcpy(work, d.p, d.n);
		for (size_t j = 0; j < k; j++)
			mutate(work, 0, d.n);
		if (next_rand() % 8 == 0)
			n = next_rand() % d.n;
		/* An exact-size copy, so that AddressSanitizer sees any over-read. */
		{
			uint8_t *exact = malloc(n ? n : 1);
			memcpy(exact, work, n);
			fuzz_dump(exact, n);
			free(exact);
		}
	}
	printf("dump reader: %u mutated dumps\n", dump_iters);
	free(work);
	free(d.p);

	elf = elf_seed("-gdwarf-4", &elen);
	if (elf) {
		fuzz_elf(elf, elen);
		fuzz_elf_seed(elf, elen, elf_iters);
		free(elf);
		printf("ELF/DWARF 4 readers: %u mutated files\n", elf_iters);
	}
	elf = elf_seed("-gdwarf-5", &elen);
	if (elf) {
		fuzz_elf_seed(elf, elen, elf_iters);
		free(elf);
		printf("ELF/DWARF 5 readers: %u mutated files\n", elf_iters);
	}
	/* Reaching here without a crash, a sanitizer report or a hang is the pass. */
	return 0;
}
#endif

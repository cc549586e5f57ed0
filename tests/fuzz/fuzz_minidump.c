/* fuzz_minidump.c — fuzzing the minidump writer (report/minidump.h) over mutated dumps: every
 * input that parses is built into a report and a minidump, and the minidump is then checked by
 * a small reader of its own against the MINIDUMP layout: the header's signature and stream
 * count, every stream inside the file, the thread, module and memory lists of exactly the size
 * their counts say, every stack, context, module name and CodeView record they point to inside
 * the file, the exception's context among the threads' contexts.  A violation aborts (a
 * finding).
 *
 * Built two ways:
 * - with -DPTREC_LIBFUZZER by `make fuzz-minidump-run` (clang, libFuzzer): the input is a dump;
 * - otherwise as the `make check` smoke test: a deterministic driver (fixed seed LCG) applies
 *   byte flips, interesting values and truncations to a sample crash dump (test-side writer)
 *   with three threads, registers, stacks, TASK records, maps and build IDs.  Seconds. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump/dump_read.h"
#include "ptrec.h"
#include "report/minidump.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *md_p;
static size_t md_n;

static uint32_t rd32(uint64_t at)
{
	if (at + 4 > md_n)
		abort(); /* the reader itself stays inside: a pointer outside was checked before */
	return (uint32_t)md_p[at] | (uint32_t)md_p[at + 1] << 8 | (uint32_t)md_p[at + 2] << 16 |
	       (uint32_t)md_p[at + 3] << 24;
}

/* size bytes at rva lie inside the file. */
static void inside(uint64_t rva, uint64_t size, const char *what)
{
	if (rva > md_n || size > md_n - rva) {
		fprintf(stderr, "minidump: %s at 0x%llx+0x%llx outside the file (0x%zx bytes)\n", what,
		        (unsigned long long)rva, (unsigned long long)size, md_n);
		abort();
	}
}

static void check_minidump(const struct ptrec_minidump *m)
{
	md_p = m->data;
	md_n = m->size;
	inside(0, 32, "header");
	if (rd32(0) != 0x504d444du || (rd32(4) & 0xffff) != 0xa793)
		abort();
	uint32_t n = rd32(8), dir = rd32(12);
	inside(dir, (uint64_t)n * 12, "stream directory");
	uint32_t ctx[4096], nctx = 0, exc_ctx = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t type = rd32(dir + 12 * i), size = rd32(dir + 12 * i + 4),
		         rva = rd32(dir + 12 * i + 8);
		inside(rva, size, "stream");
		if (type == 3) { /* ThreadList */
			uint32_t k = rd32(rva);
			if (size != 4 + (uint64_t)k * 48 || k != m->nthreads)
				abort();
			for (uint32_t t = 0; t < k; t++) {
				uint32_t e = rva + 4 + 48 * t;
				inside(rd32(e + 36), rd32(e + 32), "stack");
				inside(rd32(e + 44), rd32(e + 40), "context");
				if (rd32(e + 40) && rd32(e + 40) != 1232)
					abort();
				if (rd32(e + 40) && nctx < 4096)
					ctx[nctx++] = rd32(e + 44);
			}
		} else if (type == 4) { /* ModuleList */
			uint32_t k = rd32(rva);
			if (size != 4 + (uint64_t)k * 108 || k != m->nmodules)
				abort();
			for (uint32_t j = 0; j < k; j++) {
				uint32_t e = rva + 4 + 108 * j, name = rd32(e + 20);
				inside(name, 4, "module name");
				inside(name + 4, (uint64_t)rd32(name) + 2, "module name");
				inside(rd32(e + 80), rd32(e + 76), "CodeView record");
				if (rd32(e + 76) && rd32(rd32(e + 80)) != 0x4270454cu)
					abort();
			}
		} else if (type == 5) { /* MemoryList */
			uint32_t k = rd32(rva);
			if (size != 4 + (uint64_t)k * 16 || k != m->nmemory)
				abort();
			for (uint32_t j = 0; j < k; j++)
				inside(rd32(rva + 4 + 16 * j + 12), rd32(rva + 4 + 16 * j + 8), "memory");
		} else if (type == 6) { /* Exception */
			if (size != 168)
				abort();
			inside(rd32(rva + 164), rd32(rva + 160), "exception context");
			exc_ctx = rd32(rva + 164);
		}
	}
	if (exc_ctx) {
		uint32_t i = 0;
		while (i < nctx && ctx[i] != exc_ctx)
			i++;
		if (i == nctx && nctx < 4096)
			abort(); /* the exception's context is not a thread's */
	}
}

/* Returns 1 if the input became a minidump (and passed the checks). */
static int fuzz_one(const uint8_t *data, size_t size)
{
	int made = 0;
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_report r;
	struct ptrec_report_options opt;
	struct ptrec_minidump m;

	if (ptrec_dump_parse(data, size, &d, &err))
		return 0;
	ptrec_report_options_init(&opt);
	opt.pt_budget_ms = 10;
	if (!ptrec_report_build(&r, &d, &opt) && !ptrec_minidump_build(&r, &m)) {
		check_minidump(&m);
		ptrec_minidump_free(&m);
		made = 1;
	}
	ptrec_report_free(&r);
	ptrec_dump_free(&d);
	return made;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_one(data, size);
	return 0;
}

#ifndef PTREC_LIBFUZZER
#include "dump_writer.h"
#include "fuzz_mutate.h"

static struct tbuf sample_dump(void)
{
	struct tbuf b = {0}, ring = {0};
	uint64_t stack[16] = {0x7010, 0x401000, 0x7030, 0x401100};
	struct ptrec_dump_task t8 = {.tid = 8, .state = PTREC_TASK_SYSCALL, .nr = 7, .sp = 0x9000,
	                             .pc = 0x401200, .stack_size = 64};
	struct ptrec_dump_task t9 = {.tid = 9, .state = PTREC_TASK_RUNNING};
	const char *maps = "400000-401000 r--p 00000000 08:01 5 /nonexistent/prog\n"
	                   "401000-402000 r-xp 00001000 08:01 5 /nonexistent/prog\n"
	                   "500000-501000 r-xp 00000000 08:01 6 /nonexistent/lib\xff.so\n"
	                   "7000-8000 rw-p 00000000 00:00 0 [stack]\n";
	for (int i = 0; i < 12; i++)
		tw_soft2(&ring, i % 3 == 2 ? PTREC_SOFT_RET : PTREC_SOFT_CALL,
		         0x401100 + (uint64_t)i * 8, 0x401800 + (uint64_t)i * 4, 0);
	tw_header(&b);
	tw_process(&b, 7, 7, PTREC_EVENT_CRASH, 11, 1, 0x10, PTREC_BACKEND_INSTRUMENTED, 3, "p",
	           "/nonexistent/prog", "why");
	tw_regs(&b, 7, 0x401123, 0x7000, 0x7000);
	tw_sample_process_files(&b);
	tw_thread(&b, 7, PTREC_BACKEND_INSTRUMENTED, PTREC_THREAD_CRASHED, "main", 4096, ring.n,
	          ring.p, ring.n);
	tw_thread(&b, 8, PTREC_BACKEND_INSTRUMENTED, 0, "w1", 4096, ring.n, ring.p, ring.n);
	tw_thread(&b, 9, PTREC_BACKEND_INSTRUMENTED, 0, "w2", 4096, 0, NULL, 0);
	tw_record(&b, PTREC_REC_MAPS, maps, strlen(maps));
	tw_buildid(&b, 0x400000, (const uint8_t *)"0123456789abcdefghij", 20, "/nonexistent/prog");
	tw_memory(&b, 0x7000, PTREC_MEM_STACK, 7, stack, sizeof(stack));
	tw_memory(&b, 0x9000, PTREC_MEM_STACK, 8, stack, 64);
	tw_record(&b, PTREC_REC_TASK, &t8, sizeof(t8));
	tw_record(&b, PTREC_REC_TASK, &t9, sizeof(t9));
	tw_end(&b);
	tw_sample_host_files(&b);
	free(ring.p);
	return b;
}

/* `fuzz_minidump --seed FILE` writes the sample dump to FILE (the libFuzzer campaign's seed);
 * without arguments it is the smoke test. */
int main(int argc, char **argv)
{
	struct tbuf d = sample_dump();
	uint8_t *work = malloc(d.n);
	unsigned iters = 20000, built = 0;

	if (!work)
		return 99;
	if (argc == 3 && !strcmp(argv[1], "--seed")) {
		FILE *f = fopen(argv[2], "wb");
		int ok = f && fwrite(d.p, 1, d.n, f) == d.n;
		ok = f && fclose(f) == 0 && ok;
		free(d.p); /* a sanitizer build's LeakSanitizer failed `make fuzz-minidump-run` */
		free(work);
		return ok ? 0 : 1;
	}
	if (!fuzz_one(d.p, d.n)) { /* the pristine seed: a minidump that passes the checks */
		fprintf(stderr, "the sample dump made no minidump\n");
		return 1;
	}
	for (unsigned it = 0; it < iters; it++) {
		size_t n = d.n, k = 1 + next_rand() % 8;
		memcpy(work, d.p, d.n);
		for (size_t j = 0; j < k; j++)
			mutate(work, 16, d.n);
		if (next_rand() % 16 == 0)
			n = next_rand() % d.n;
		built += (unsigned)fuzz_one(work, n);
	}
	printf("%u mutated dumps, %u became minidumps that passed the checks\n",
	       iters, built);
	free(work);
	free(d.p);
	return built ? 0 : 1;
}
#endif

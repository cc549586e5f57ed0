/* bench_symbolize.c — symbolizing 100k addresses across libc and a large binary (libLLVM when
 * installed, else gdb, else this program; $BENCH_BINARY overrides), through a synthetic dump
 * whose MAPS place both files at PIE-like bases.  Prints module load times, lookup throughput,
 * how many addresses got a name and a line, and binutils addr2line on the same addresses. */
#include "config.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dump/dump_read.h"
#include "ptrec.h"
#include "dump_writer.h"
#include "symbols/symbolize.h"

#define NADDR 100000

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xrand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct target {
	const char *path;
	uint64_t base;
	struct ptrec_elf elf;       /* to place addresses in executable segments */
	uint64_t size;
};

static const char *pick_large(void)
{
	static const char *const cands[] = {"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
	                                    "/usr/lib/llvm-14/lib/libLLVM-14.so.1", "/usr/bin/gdb"};
	const char *env = getenv("BENCH_BINARY");
	if (env && *env)
		return env;
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (access(cands[i], R_OK) == 0)
			return cands[i];
	return "/proc/self/exe";
}

static void add_maps(struct tbuf *maps, struct target *t)
{
	char line[4400];
	for (size_t i = 0; i < t->elf.nloads; i++) {
		const struct ptrec_elf_load *l = &t->elf.loads[i];
		uint64_t s = t->base + (l->vaddr & ~0xfffull);
		uint64_t e = t->base + ((l->vaddr + l->memsz + 0xfff) & ~0xfffull);
		snprintf(line, sizeof(line), "%llx-%llx %s %08llx 08:01 %zu %s\n",
		         (unsigned long long)s, (unsigned long long)e, l->flags & PF_X ? "r-xp" : "r--p",
		         (unsigned long long)(l->offset & ~0xfffull), i + 100, t->path);
		tb_put(maps, line, strlen(line));
	}
}

static uint64_t random_code_addr(struct target *t)
{
	for (;;) {
		const struct ptrec_elf_load *l = &t->elf.loads[xrand() % t->elf.nloads];
		if ((l->flags & PF_X) && l->filesz)
			return t->base + l->vaddr + xrand() % l->filesz;
	}
}

/* addr2line -f -C on the link-time addresses of one module; returns milliseconds. */
static double run_addr2line(struct target *t, const uint64_t *addrs, size_t n)
{
	char path[] = "/tmp/bench_symbolize_XXXXXX", cmd[8192];
	int fd = mkstemp(path);
	FILE *f;
	double t0;
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	for (size_t i = 0; i < n; i++)
		if (addrs[i] >= t->base && addrs[i] < t->base + (1ull << 36))
			fprintf(f, "0x%llx\n", (unsigned long long)(addrs[i] - t->base));
	fclose(f);
	if (getenv("BENCH_NO_ADDR2LINE"))
		return -1;
	snprintf(cmd, sizeof(cmd), "addr2line -f -C -e '%s' < '%s' > /dev/null 2>&1", t->path, path);
	t0 = now_ms();
	if (system(cmd) != 0) {
		unlink(path);
		return -1;
	}
	t0 = now_ms() - t0;
	unlink(path);
	return t0;
}

int main(void)
{
	struct target tg[2];
	struct tbuf maps = {0}, dump = {0};
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_symbolizer s;
	struct ptrec_warnings w = {0};
	static uint64_t addrs[NADDR];
	double load_ms[2], t0, cold, warm;
	size_t named = 0, lined = 0;

	memset(tg, 0, sizeof(tg));
	tg[0].path = "/lib/x86_64-linux-gnu/libc.so.6";
	tg[0].base = 0x7f0000000000ull;
	tg[1].path = pick_large();
	tg[1].base = 0x7e0000000000ull;
	for (int i = 0; i < 2; i++) {
		struct stat st;
		if (ptrec_elf_open_file(tg[i].path, &tg[i].elf, NULL)) {
			printf("cannot read %s; skipped\n", tg[i].path);
			return 0;
		}
		stat(tg[i].path, &st);
		tg[i].size = (uint64_t)st.st_size;
		add_maps(&maps, &tg[i]);
	}
	tw_header(&dump);
	tw_process(&dump, 1, 1, PTREC_EVENT_SNAPSHOT, 0, 0, 0, PTREC_BACKEND_NONE, 0, "bench",
	           "bench", "");
	tw_record(&dump, PTREC_REC_MAPS, maps.p, maps.n);
	tw_end(&dump);
	if (ptrec_dump_parse(dump.p, dump.n, &d, &err)) {
		printf("dump: %s\n", err.cause);
		return 1;
	}
	for (size_t i = 0; i < NADDR; i++)
		addrs[i] = random_code_addr(&tg[xrand() % 2]);

	ptrec_symbolizer_init(&s, &d, NULL, &w);
	for (int i = 0; i < 2; i++) {
		t0 = now_ms();
		ptrec_symbolizer_module(&s, random_code_addr(&tg[i]));
		load_ms[i] = now_ms() - t0;
	}
	t0 = now_ms();
	for (size_t i = 0; i < NADDR; i++) {
		struct ptrec_symbol sym;
		ptrec_symbolize(&s, addrs[i], 0, &sym);
		named += sym.name != NULL;
		lined += sym.file != NULL;
	}
	cold = now_ms() - t0;
	t0 = now_ms();
	for (size_t i = 0; i < NADDR; i++) {
		struct ptrec_symbol sym;
		ptrec_symbolize(&s, addrs[i], 0, &sym);
	}
	warm = now_ms() - t0;

	printf("symbolizing %d random code addresses (half in each module)\n\n", NADDR);
	printf("%-44s %10s %8s %10s\n", "module", "file MiB", "symbols", "load ms");
	for (int i = 0; i < 2; i++) {
		const struct ptrec_module *m = ptrec_symbolizer_module(&s, random_code_addr(&tg[i]));
		printf("%-44s %10.1f %8zu %10.1f\n", tg[i].path, tg[i].size / 1048576.0,
		       m && m->has_elf ? m->elf.nsyms : 0, load_ms[i]);
	}
	printf("\n%-44s %10s %10s\n", "lookups", "total ms", "ns/addr");
	printf("%-44s %10.1f %10.0f\n", "ptrec symbolizer, first pass (demangling)", cold,
	       cold * 1e6 / NADDR);
	printf("%-44s %10.1f %10.0f\n", "ptrec symbolizer, second pass", warm, warm * 1e6 / NADDR);
	{
		double a = 0;
		int ok = 1;
		for (int i = 0; i < 2 && ok; i++) {
			double m = run_addr2line(&tg[i], addrs, NADDR);
			if (m < 0)
				ok = 0;
			a += m;
		}
		if (ok)
			printf("%-44s %10.1f %10.0f\n", "binutils addr2line -f -C (same addresses)", a,
			       a * 1e6 / NADDR);
		else
			printf("%-44s %10s\n", "binutils addr2line -f -C", "n/a");
	}
	printf("\nnamed: %.1f%%  with file:line: %.1f%% (system libraries ship without DWARF)\n",
	       100.0 * named / NADDR, 100.0 * lined / NADDR);
	ptrec_symbolizer_free(&s);
	ptrec_dump_free(&d);
	for (int i = 0; i < 2; i++)
		ptrec_elf_close(&tg[i].elf);
	ptrec_warnings_free(&w);
	free(maps.p);
	free(dump.p);
	return 0;
}

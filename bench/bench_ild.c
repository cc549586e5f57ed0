/* bench_ild.c — speed of ptrec_x86_ild_decode() on real code: a linear sweep over the .text section
 * of an x86-64 ELF file (default libc.so.6, or argv[1]), decoded as 64-bit, 32-bit and 16-bit
 * code, with the whole section as the buffer and with the 15-byte window a block decoder passes.
 * Prints one table row per configuration: instructions, M instructions/s, MB/s (per second of
 * this process's CPU time, so that other load on the machine matters less). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrec.h"
#include "decode/x86_ild.h"

/* Reads the .text section of an ELF64 file; returns its size (0 on failure). */
static size_t read_text(const char *path, uint8_t **out)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	uint8_t eh[64];
	size_t got = 0;
	if (fread(eh, 1, sizeof eh, f) != sizeof eh || memcmp(eh, "\177ELF", 4) || eh[4] != 2)
		goto out;
	uint64_t shoff;
	uint16_t shentsize, shnum, shstrndx;
	memcpy(&shoff, eh + 0x28, 8);
	memcpy(&shentsize, eh + 0x3a, 2);
	memcpy(&shnum, eh + 0x3c, 2);
	memcpy(&shstrndx, eh + 0x3e, 2);
	if (shentsize != 64 || shstrndx >= shnum)
		goto out;
	uint8_t *sh = malloc((size_t)shnum * 64);
	if (!sh || fseek(f, (long)shoff, SEEK_SET) || fread(sh, 64, shnum, f) != shnum) {
		free(sh);
		goto out;
	}
	uint64_t stroff, strsize;
	memcpy(&stroff, sh + shstrndx * 64 + 0x18, 8);
	memcpy(&strsize, sh + shstrndx * 64 + 0x20, 8);
	char *strs = malloc(strsize + 1);
	if (strs && !fseek(f, (long)stroff, SEEK_SET) && fread(strs, 1, strsize, f) == strsize) {
		strs[strsize] = 0;
		for (unsigned k = 0; k < shnum; k++) {
			uint32_t name;
			uint64_t off, size;
			memcpy(&name, sh + k * 64, 4);
			memcpy(&off, sh + k * 64 + 0x18, 8);
			memcpy(&size, sh + k * 64 + 0x20, 8);
			if (name < strsize && !strcmp(strs + name, ".text")) {
				*out = malloc(size);
				if (*out && !fseek(f, (long)off, SEEK_SET) &&
				    fread(*out, 1, size, f) == size)
					got = size;
				break;
			}
		}
	}
	free(strs);
	free(sh);
out:
	fclose(f);
	return got;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One linear sweep; window = 0 passes the rest of the section, else at most window bytes. */
static uint64_t sweep(const uint8_t *text, size_t size, enum ptrec_x86_mode mode, size_t window,
                      uint64_t *branches)
{
	uint64_t n = 0;
	size_t pos = 0;
	while (pos < size) {
		struct ptrec_x86_insn insn;
		size_t avail = size - pos;
		if (window && avail > window)
			avail = window;
		int r = ptrec_x86_ild_decode(text + pos, avail, 0x400000 + pos, mode, &insn);
		if (r <= 0) {
			pos++;
			continue;
		}
		*branches += insn.iclass != X86_IC_OTHER;
		pos += (size_t)r;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint8_t *text = NULL;
	size_t size = read_text(path, &text);
	if (!size) {
		printf("bench_ild: cannot read the .text of %s; skipped\n", path);
		return 0;
	}
	printf("ptrec_x86_ild_decode, linear sweep of %s .text (%zu bytes)\n", path, size);
	printf("%-8s %-8s %12s %10s %12s %10s\n", "mode", "buffer", "insns/pass", "branches",
	       "M insn/s", "MB/s");
	static const struct {
		enum ptrec_x86_mode mode;
		size_t window;
		const char *mname, *wname;
	} cfg[] = {
		{ X86_MODE_64, 0, "64-bit", "section" },
		{ X86_MODE_64, 15, "64-bit", "15 bytes" },
		{ X86_MODE_32, 0, "32-bit", "section" },
		{ X86_MODE_16, 0, "16-bit", "section" },
	};
	for (unsigned c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		uint64_t insns = 0, branches = 0, per = 0, br = 0;
		unsigned passes = 0;
		double t0 = now(), t;
		do {
			br = 0;
			per = sweep(text, size, cfg[c].mode, cfg[c].window, &br);
			insns += per;
			branches = br;
			passes++;
			t = now() - t0;
		} while (t < 0.5);
		printf("%-8s %-8s %12" PRIu64 " %10" PRIu64 " %12.1f %10.1f\n", cfg[c].mname,
		       cfg[c].wname, per, branches, insns / t / 1e6, (double)size * passes / t / 1e6);
	}
	free(text);
	return 0;
}

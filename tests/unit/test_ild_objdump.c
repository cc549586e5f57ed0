/* test_ild_objdump.c — differential test of the x86 instruction-length decoder against objdump.
 *
 * For every instruction that `$OBJDUMP -d` disassembles in a corpus of binaries on this machine,
 * ptrec_x86_ild_decode() must return objdump's length, and our branch class must be the one objdump's
 * mnemonic names (jcc, jmp, call, indirect jmp/call, ret, far transfers, ptwrite, other).
 * Lines objdump prints as "(bad)" are skipped; a lone prefix objdump prints on its own line
 * ("rex.W", "data16", "fs", ...) is checked as part of the instruction that follows it, the way
 * the processor reads it (SDM Vol. 2 2.1.1, 2.2.1).
 *
 * Parts:
 *   64-bit: x86-64 ELF files (libraries and programs), objdump -M intel64 (Intel semantics of
 *           66-prefixed near branches), at least $PTREC_ILD_MIN instructions (default 5.2 M).
 *   32-bit: the same bytes read as 32-bit code (objdump -M i386), and freestanding C compiled
 *           with $CC -m32 -c when that works; 16-bit: the same bytes with objdump -M i8086.
 *
 * Environment: $OBJDUMP (SKIP when unset or missing), $CC, $top_srcdir, $top_builddir.
 * $PTREC_ILD_CORPUS=all checks every ELF file under /usr/lib/x86_64-linux-gnu and /usr/bin
 * instead of stopping at the minimum, $PTREC_ILD_CORPUS=FILE[:FILE...] just those files; $PTREC_ILD_MIN sets the minimum; $PTREC_ILD_SHOW the
 * number of mismatches printed (default 40). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "ptrec.h"
#include "decode/x86_ild.h"

/* ---- Expected class from objdump's mnemonic --------------------------------------------- */

/* Returns 1 if word is an instruction prefix objdump prints before a mnemonic (or alone). */
static int is_prefix_word(const char *w)
{
	static const char *const words[] = {
		"lock", "rep", "repz", "repnz", "repe", "repne", "bnd", "notrack", "data16", "data32",
		"addr16", "addr32", "cs", "ds", "es", "ss", "fs", "gs", "xacquire", "xrelease",
		"rex", "rex64",
	};
	if (!strncmp(w, "rex.", 4) || w[0] == '{')
		return 1;
	for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
		if (!strcmp(w, words[k]))
			return 1;
	return 0;
}

/* Returns 1 if c is a legacy prefix byte (or REX in 64-bit mode). */
static int is_prefix_byte(uint8_t c, enum ptrec_x86_mode mode)
{
	return c == 0x66 || c == 0x67 || c == 0xf2 || c == 0xf3 || c == 0xf0 || c == 0x26 ||
	       c == 0x2e || c == 0x36 || c == 0x3e || c == 0x64 || c == 0x65 ||
	       (mode == X86_MODE_64 && (c & 0xf0) == 0x40);
}

/* Returns 1 if m (a mnemonic without prefixes) is in the NULL-terminated list. */
static int in_list(const char *m, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(m, *list))
			return 1;
	return 0;
}

/* The class objdump's mnemonic m and operands ops imply. */
static unsigned expected_class(const char *m, const char *ops)
{
	static const char *const jcc[] = {
		"jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja", "js", "jns", "jp", "jnp", "jl",
		"jge", "jle", "jg", "jc", "jnc", "jz", "jnz", "jnae", "jnb", "jna", "jnbe", "jpe",
		"jpo", "jnge", "jnl", "jng", "jnle", "jcxz", "jecxz", "jrcxz", "loop", "loope",
		"loopne", "loopz", "loopnz", "loopw", "loopl", "loopq", "loopew", "loopel", "loopeq",
		"loopnew", "loopnel", "loopneq", "jcxzw", NULL,
	};
	static const char *const jmp[] = { "jmp", "jmpw", "jmpl", "jmpq", NULL };
	static const char *const call[] = { "call", "callw", "calll", "callq", NULL };
	static const char *const ret[] = { "ret", "retw", "retl", "retq", NULL };
	static const char *const far[] = {
		"ljmp", "ljmpw", "ljmpl", "ljmpq", "lcall", "lcallw", "lcalll", "lcallq", "lret",
		"lretw", "lretl", "lretq", "iret", "iretw", "iretl", "iretd", "iretq", "int", "int3",
		"int1", "icebp", "into", "syscall", "sysret", "sysretl", "sysretq", "sysretw",
		"sysenter", "sysexit", "sysexitl", "sysexitq", "vmcall", "vmlaunch", "vmresume",
		"eretu", "erets", "uiret", "rsm", "tdcall", "seamcall", "seamret", NULL,
	};
	static const char *const ptw[] = { "ptwrite", "ptwritel", "ptwriteq", NULL };
	int indirect = ops[0] == '*';

	if (in_list(m, jcc))
		return X86_IC_JCC;
	if (in_list(m, jmp))
		return indirect ? X86_IC_JMP_IND : X86_IC_JMP;
	if (in_list(m, call))
		return indirect ? X86_IC_CALL_IND : X86_IC_CALL;
	if (in_list(m, ret))
		return X86_IC_RET;
	if (in_list(m, far))
		return X86_IC_FAR;
	if (in_list(m, ptw))
		return X86_IC_PTWRITE;
	if (!strcmp(m, "jmpabs"))
		return X86_IC_JMP_IND; /* Intel PT sends a TIP for it (APX specification) */
	return X86_IC_OTHER;
}

/* Expected "class" of an encoding the SDM defines as #UD but objdump decodes: we must return
 * -PTREC_EFORMAT. */
#define EXPECT_UD 0xffu

/* Returns 1 if the instruction bytes b[0..n) put a 66, F2, F3, F0 or REX prefix before a
 * VEX, EVEX or XOP prefix: #UD per SDM Vol. 2 2.3.2 ("Any VEX-encoded instruction with a
 * LOCK/66H/F2H/F3H/REX prefix preceding VEX will #UD"; likewise EVEX 2.7 and XOP), which
 * objdump still disassembles. */
static int prefix_before_vex(const uint8_t *b, unsigned n, enum ptrec_x86_mode mode)
{
	int bad = 0;
	for (unsigned k = 0; k + 1 < n; k++) {
		uint8_t c = b[k], d = b[k + 1];
		if (c == 0x66 || c == 0xf2 || c == 0xf3 || c == 0xf0 ||
		    (mode == X86_MODE_64 && (c & 0xf0) == 0x40)) {
			bad = 1;
			continue;
		}
		if (c == 0x26 || c == 0x2e || c == 0x36 || c == 0x3e || c == 0x64 || c == 0x65 ||
		    c == 0x67)
			continue;
		if (c == 0xc4 || c == 0xc5 || c == 0x62)
			return bad && (mode == X86_MODE_64 || (d & 0xc0) == 0xc0);
		if (c == 0x8f)
			return bad && (d & 0x1f) >= 8;
		return 0;
	}
	return 0;
}

/* ---- Checking runs of contiguous instructions ------------------------------------------- */

#define RUN_BYTES (1u << 20)
#define RUN_INSNS (1u << 16)

/* One instruction objdump printed, waiting for enough following bytes to be decoded. */
struct pending {
	uint64_t addr;    /* address */
	uint32_t off;     /* offset of its first byte in run.bytes */
	uint8_t len;      /* objdump's length (prefix lines merged) */
	uint8_t iclass;   /* expected class */
	char text[46];    /* objdump's mnemonic and operands, for the report */
};

/* Bytes of contiguous instructions and the instructions still to check. */
struct run {
	uint8_t bytes[RUN_BYTES];     /* bytes from address base on */
	uint64_t base;                /* address of bytes[0] */
	uint32_t nbytes;              /* bytes held */
	struct pending insns[RUN_INSNS]; /* unchecked instructions, in address order */
	uint32_t ninsns;              /* how many */
	/* a prefix objdump printed on its own line, merged into the next instruction */
	int carry;                    /* insns[ninsns-1] is such a prefix line */
};

/* Totals of one part of the test. */
struct totals {
	uint64_t checked;                   /* instructions compared */
	uint64_t mismatches;                /* length or class differed */
	uint64_t per_class[X86_IC_COUNT_];  /* checked instructions by expected class */
	uint64_t prefix_lines;              /* lone-prefix lines merged into the next instruction */
	uint64_t bad;                       /* "(bad)" and ".byte" lines skipped */
	uint64_t fwait_split;               /* objdump's FWAIT+x87 lines checked as two */
	uint64_t sdm_ud;                    /* prefix before VEX/EVEX/XOP: objdump decodes, #UD */
	uint64_t continuations;             /* continuation lines joined to their instruction */
	uint64_t data_lines;                /* hex+ASCII lines of data objects in code sections */
	uint64_t fred;                      /* "repz/repnz clac" read as FRED ERETU/ERETS */
};

static struct run run;
static unsigned show_max = 40;
static uint64_t shown;

/* Decodes and compares insns[0..upto) of the run; drops bytes no longer needed. */
static void check_pending(struct totals *t, enum ptrec_x86_mode mode, const char *file, uint32_t upto)
{
	for (uint32_t k = 0; k < upto; k++) {
		struct pending *p = &run.insns[k];
		struct ptrec_x86_insn insn;
		int r = ptrec_x86_ild_decode(run.bytes + p->off, run.nbytes - p->off, p->addr, mode, &insn);
		t->checked++;
		if (p->iclass == EXPECT_UD) {
			t->sdm_ud++;
			if (r == -PTREC_EFORMAT)
				continue;
		} else {
			t->per_class[p->iclass]++;
			if (r == p->len && insn.iclass == p->iclass)
				continue;
		}
		t->mismatches++;
		if (shown++ >= show_max)
			continue;
		char hex[3 * 16 + 1] = "";
		for (unsigned j = 0; j < p->len && j < 16; j++)
			snprintf(hex + 3 * j, 4, "%02x ", run.bytes[p->off + j]);
		fprintf(stderr, "MISMATCH %s:%#" PRIx64 " mode %d: %s| objdump len %u %s \"%s\"; ours ",
		        file, p->addr, 16 << mode, hex, p->len,
		        p->iclass == EXPECT_UD ? "expected-#UD" : ptrec_x86_iclass_name(p->iclass), p->text);
		if (r < 0)
			fprintf(stderr, "error %s\n", ptrec_strerror(r));
		else
			fprintf(stderr, "len %d %s\n", r, ptrec_x86_iclass_name(insn.iclass));
	}
	/* keep the unchecked ones and the bytes from the first of them */
	uint32_t drop = upto < run.ninsns ? run.insns[upto].off : run.nbytes;
	memmove(run.insns, run.insns + upto, (run.ninsns - upto) * sizeof run.insns[0]);
	run.ninsns -= upto;
	for (uint32_t k = 0; k < run.ninsns; k++)
		run.insns[k].off -= drop;
	memmove(run.bytes, run.bytes + drop, run.nbytes - drop);
	run.nbytes -= drop;
	run.base += drop;
}

/* Checks everything held (the run ended: a gap, a new section, the end of the file). */
static void flush_run(struct totals *t, enum ptrec_x86_mode mode, const char *file)
{
	if (run.carry) { /* a trailing lone prefix: objdump could not attach it to anything */
		run.ninsns--;
		run.carry = 0;
	}
	check_pending(t, mode, file, run.ninsns);
	run.nbytes = 0;
	run.ninsns = 0;
}

/* Checks the instructions that have 15 bytes after them (or all, near the buffer limits). */
static void drain_run(struct totals *t, enum ptrec_x86_mode mode, const char *file)
{
	uint32_t upto = 0;
	uint32_t limit = run.ninsns - (run.carry ? 1 : 0);
	while (upto < limit && run.insns[upto].off + 15u <= run.nbytes)
		upto++;
	check_pending(t, mode, file, upto);
}

/* Parses one line of objdump -d output and feeds the run. */
static void feed_line(struct totals *t, enum ptrec_x86_mode mode, const char *file, char *line)
{
	char *s = line;
	while (*s == ' ')
		s++;
	char *end;
	errno = 0;
	uint64_t addr = strtoull(s, &end, 16);
	if (end == s || *end != ':' || end[1] != '\t' || errno) {
		if (!strncmp(line, "Disassembly of section", 22) || !strcmp(s, "...\n") ||
		    !strcmp(line, "\t...\n"))
			flush_run(t, mode, file);
		return;
	}
	/* bytes: hex pairs separated by one space; then a tab and the instruction, or the end of
	 * the line (a continuation of the previous instruction's bytes), or anything else: the
	 * hex+ASCII dump objdump prints for a data object inside a code section */
	s = end + 2;
	uint8_t bytes[32];
	unsigned n = 0;
	while (isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) && n < sizeof bytes) {
		bytes[n++] = (uint8_t)strtoul((char[3]){ s[0], s[1], 0 }, NULL, 16);
		s += 2;
		if (*s != ' ')
			break;
		s++;
		if (*s == ' ')
			break;
	}
	while (*s == ' ')
		s++;
	if (n == 0)
		return;
	char *text = *s == '\t' ? s + 1 : NULL;
	if (text)
		text[strcspn(text, "\n")] = 0;
	if (!text && *s != '\n' && *s != 0) { /* a data dump line: not code */
		t->data_lines++;
		if (run.carry) {
			run.ninsns--;
			run.carry = 0;
		}
		flush_run(t, mode, file);
		return;
	}

	if (!text) { /* continuation line: more bytes of the previous instruction */
		if (run.ninsns && addr == run.base + run.nbytes &&
		    run.nbytes + n <= RUN_BYTES && run.insns[run.ninsns - 1].len + n < 256) {
			memcpy(run.bytes + run.nbytes, bytes, n);
			run.nbytes += n;
			run.insns[run.ninsns - 1].len = (uint8_t)(run.insns[run.ninsns - 1].len + n);
			t->continuations++;
		}
		return;
	}

	if (addr != run.base + run.nbytes || run.nbytes + n > RUN_BYTES || run.ninsns == RUN_INSNS)
		flush_run(t, mode, file);
	if (run.nbytes == 0)
		run.base = addr;
	memcpy(run.bytes + run.nbytes, bytes, n);
	uint32_t off = run.nbytes;
	run.nbytes += n;

	/* FWAIT is an instruction of its own (SDM Vol. 2 WAIT/FWAIT; "FSTSW" is FWAIT + FNSTSW),
	 * but objdump prints it, with any prefixes before it, together with the x87 instruction
	 * after it, or alone with the text of the next prefix.  Check the prefixes and 9B as one
	 * instruction (with the lone prefix lines before them), and the rest of the line as the
	 * next one. */
	unsigned pw = 0;
	while (pw < n && is_prefix_byte(bytes[pw], mode))
		pw++;
	if (pw < n && bytes[pw] == 0x9b) {
		struct pending *p;
		if (run.carry) {
			p = &run.insns[run.ninsns - 1];
			p->len = (uint8_t)(p->len + pw + 1);
			run.carry = 0;
		} else {
			p = &run.insns[run.ninsns++];
			p->addr = addr;
			p->off = off;
			p->len = (uint8_t)(pw + 1);
		}
		p->iclass = X86_IC_OTHER;
		snprintf(p->text, sizeof p->text, "fwait (objdump: %s)", text);
		t->fwait_split++;
		if (run.ninsns >= RUN_INSNS / 2)
			drain_run(t, mode, file);
		if (pw + 1 == n)
			return;
		if (pw) /* objdump applies the prefixes (67: address size) to the x87 instruction,
		         * the processor to FWAIT: objdump's length for the rest is not the truth */
			return;
		addr += pw + 1;
		off += pw + 1;
		n -= pw + 1;
		memmove(bytes, bytes + pw + 1, n);
	}

	/* mnemonic: the first word that is not a prefix; ",pt"/",pn" hints dropped */
	char words[160];
	snprintf(words, sizeof words, "%s", text);
	char *save = NULL, *w = strtok_r(words, " ", &save), *mn = NULL;
	while (w && is_prefix_word(w))
		w = strtok_r(NULL, " ", &save);
	mn = w;
	if (mn && (strstr(text, "(bad)") || mn[0] == '.')) { /* "(bad)", ".byte 0x.." */
		/* skipped; a prefix line before it goes with it */
		if (run.carry) {
			run.ninsns--;
			run.carry = 0;
		}
		t->bad++;
		flush_run(t, mode, file);
		run.base = addr + n;
		return;
	}
	if (!mn) { /* a lone prefix: checked together with the next instruction */
		t->prefix_lines++;
		if (run.carry) {
			run.insns[run.ninsns - 1].len = (uint8_t)(run.insns[run.ninsns - 1].len + n);
		} else {
			struct pending *p = &run.insns[run.ninsns++];
			p->addr = addr;
			p->off = off;
			p->len = (uint8_t)n;
			snprintf(p->text, sizeof p->text, "%s", text);
			run.carry = 1;
		}
		return;
	}
	char mnem[32];
	snprintf(mnem, sizeof mnem, "%s", mn);
	mnem[strcspn(mnem, ",")] = 0;
	char *ops = strtok_r(NULL, "", &save);
	while (ops && *ops == ' ')
		ops++;
	unsigned cls = expected_class(mnem, ops ? ops : "");
	if (!strcmp(mnem, "clac") && (!strncmp(text, "repz ", 5) || !strncmp(text, "repnz ", 6))) {
		/* objdump 2.40 predates FRED: F3 0F 01 CA is ERETU and F2 0F 01 CA is ERETS
		 * (FRED specification), which it prints as "repz/repnz clac" */
		cls = X86_IC_FAR;
		t->fred++;
	}

	if (run.carry) { /* prefix line(s) + this instruction, from the first prefix */
		struct pending *p = &run.insns[run.ninsns - 1];
		p->len = (uint8_t)(p->len + n);
		p->iclass = (uint8_t)cls;
		if (prefix_before_vex(run.bytes + p->off, p->len, mode))
			p->iclass = EXPECT_UD;
		size_t l = strlen(p->text);
		snprintf(p->text + l, sizeof p->text - l, " / %s", text);
		run.carry = 0;
	}
	if (run.ninsns == RUN_INSNS)
		drain_run(t, mode, file);
	if (run.ninsns == RUN_INSNS) /* cannot happen: drain_run is called at half capacity */
		flush_run(t, mode, file);
	struct pending *p = &run.insns[run.ninsns++];
	p->addr = addr;
	p->off = off;
	p->len = (uint8_t)n;
	p->iclass = (uint8_t)cls;
	if (prefix_before_vex(bytes, n, mode))
		p->iclass = EXPECT_UD;
	snprintf(p->text, sizeof p->text, "%s", text);
	if (run.ninsns >= RUN_INSNS / 2)
		drain_run(t, mode, file);
}

/* ---- Driving objdump -------------------------------------------------------------------- */

/* Returns 64 or 32 for an x86-64 or i386 ELF file, 0 for anything else. */
static int elf_bits(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	unsigned char h[20];
	ssize_t r = read(fd, h, sizeof h);
	close(fd);
	if (r != (ssize_t)sizeof h || memcmp(h, "\177ELF", 4) || h[5] != 1)
		return 0;
	unsigned machine = h[18] | h[19] << 8;
	if (h[4] == 2 && machine == 62)
		return 64;
	if (h[4] == 1 && machine == 3)
		return 32;
	return 0;
}

/* Runs objdump on path with extra options and checks every instruction in mode. */
static int check_file(const char *objdump, const char *opts, const char *path,
                      enum ptrec_x86_mode mode, struct totals *t)
{
	if (strchr(path, '\'') || strchr(objdump, '\''))
		return 0;
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "'%s' -d %s '%s' 2>/dev/null", objdump, opts, path);
	FILE *f = popen(cmd, "r");
	if (!f) {
		fprintf(stderr, "cannot run %s\n", cmd);
		return -1;
	}
	char line[4096];
	run.nbytes = 0;
	run.ninsns = 0;
	run.carry = 0;
	while (fgets(line, sizeof line, f))
		feed_line(t, mode, path, line);
	flush_run(t, mode, path);
	pclose(f);
	return 0;
}

static void print_totals(const char *what, const struct totals *t)
{
	printf("%s: %" PRIu64 " instructions checked, %" PRIu64 " mismatches; %" PRIu64
	       " (bad)/.byte skipped, %" PRIu64 " lone prefixes merged, %" PRIu64
	       " fwait split, %" PRIu64 " prefix-before-VEX #UD, %" PRIu64
	       " continuation lines, %" PRIu64 " data lines, %" PRIu64 " ERETU/ERETS\n  by class:",
	       what, t->checked, t->mismatches, t->bad, t->prefix_lines, t->fwait_split, t->sdm_ud,
	       t->continuations, t->data_lines, t->fred);
	for (unsigned c = 0; c < X86_IC_COUNT_; c++)
		printf(" %s %" PRIu64, ptrec_x86_iclass_name(c), t->per_class[c]);
	printf("\n");
}

/* Candidate files, most varied code first (SIMD-heavy crypto and libc string functions,
 * C++ and compilers), then every ELF file in the directories. */
static const char *const preferred[] = {
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libm.so.6",
	"/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	"/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
	"/usr/lib/x86_64-linux-gnu/libx265.so.199",
	"/usr/lib/x86_64-linux-gnu/libaom.so.3",
	"/usr/lib/x86_64-linux-gnu/libgnutls.so.30",
	"/usr/bin/gdb",
	"/usr/bin/perl",
	"/usr/bin/git",
	NULL,
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Real paths of the files already checked from the preferred list. */
static char done_paths[16][4096];
static unsigned ndone;

/* Checks the ELF files of `bits` in dir (only *.so* names when only_so) in name order, until
 * t->checked reaches min (or all of them when all != 0); symlinks are skipped (their targets
 * are in the same directory), as are the files in done_paths. */
static void scan_dir(const char *objdump, const char *dir, int only_so, int bits,
                     const char *opts, enum ptrec_x86_mode mode, uint64_t min, int all,
                     struct totals *t)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return;
	char **names = NULL;
	size_t nn = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.' || (only_so && !strstr(de->d_name, ".so")))
			continue;
		if (nn == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, cap * sizeof *names);
			if (!names)
				exit(99);
		}
		names[nn++] = strdup(de->d_name);
	}
	closedir(dp);
	if (nn)
		qsort(names, nn, sizeof *names, cmp_str);
	for (size_t k = 0; k < nn && (all || t->checked < min); k++) {
		char path[4096], rp[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[k]);
		struct stat st;
		if (stat(path, &st) || !S_ISREG(st.st_mode) || elf_bits(path) != bits)
			continue;
		if (!realpath(path, rp))
			continue;
		int seen = strcmp(rp, path) != 0;
		for (unsigned j = 0; j < ndone; j++)
			seen |= !strcmp(rp, done_paths[j]);
		if (!seen)
			check_file(objdump, opts, path, mode, t);
	}
	for (size_t k = 0; k < nn; k++)
		free(names[k]);
	free(names);
}

/* Checks 64-bit files until min instructions (or all of them when all != 0). */
static void part64(const char *objdump, uint64_t min, int all, struct totals *t)
{
	static const char opts[] = "--insn-width=16 -M intel64";
	for (const char *const *p = preferred; *p && (all || t->checked < min); p++) {
		if (elf_bits(*p) != 64 || ndone == 16 || !realpath(*p, done_paths[ndone]))
			continue;
		ndone++;
		check_file(objdump, opts, *p, X86_MODE_64, t);
	}
	scan_dir(objdump, "/usr/lib/x86_64-linux-gnu", 1, 64, opts, X86_MODE_64, min, all, t);
	scan_dir(objdump, "/usr/bin", 0, 64, opts, X86_MODE_64, min, all, t);
}

/* Compiles tests/data/ild_m32.c with $CC -m32 -c and checks the object; 1 if done. */
static int part32_compiled(const char *objdump, struct totals *t)
{
	const char *cc = getenv("CC"), *src = getenv("top_srcdir"), *bld = getenv("top_builddir");
	if (!cc || !*cc || !src || !bld)
		return 0;
	char obj[4096], cmd[8192];
	snprintf(obj, sizeof obj, "%s/tests/ild_m32_corpus.o", bld);
	int done = 0;
	static const char *const flags[] = { "-O2", "-O0", "-Os -fPIC", "-O3 -msse4.2 -mavx2", NULL };
	for (const char *const *fl = flags; *fl; fl++) {
		snprintf(cmd, sizeof cmd,
		         "%s -m32 -ffreestanding -fno-sanitize=all %s -c '%s/tests/data/ild_m32.c' "
		         "-o '%s' >/dev/null 2>&1", cc, *fl, src, obj);
		if (system(cmd) == 0 && elf_bits(obj) == 32) {
			check_file(objdump, "--insn-width=16", obj, X86_MODE_32, t);
			done = 1;
		}
		unlink(obj);
	}
	return done;
}

/* ---- Synthetic corpus: every opcode of every map ------------------------------------- */

/* A growing byte buffer. */
struct blob {
	uint8_t *b;   /* bytes */
	size_t n;     /* used */
	size_t cap;   /* allocated */
};

static void put(struct blob *bl, const uint8_t *p, size_t n)
{
	if (n == 0)
		return;
	if (bl->n + n > bl->cap) {
		bl->cap = (bl->cap + n) * 2;
		bl->b = realloc(bl->b, bl->cap);
		if (!bl->b)
			exit(99);
	}
	memcpy(bl->b + bl->n, p, n);
	bl->n += n;
}

/* ModRM forms tried after each opcode: every reg with a register and a memory operand, and
 * each displacement/SIB shape (read as 16-bit addressing where the mode says so). */
static const struct {
	uint8_t n;         /* bytes */
	uint8_t b[6];      /* ModRM [SIB] [disp] */
} forms[] = {
	{ 1, { 0xc0 } }, { 1, { 0xc9 } }, { 1, { 0xd2 } }, { 1, { 0xdb } },
	{ 1, { 0xe4 } }, { 1, { 0xed } }, { 1, { 0xf6 } }, { 1, { 0xff } },
	{ 1, { 0x00 } }, { 1, { 0x08 } }, { 1, { 0x10 } }, { 1, { 0x18 } },
	{ 1, { 0x20 } }, { 1, { 0x28 } }, { 1, { 0x30 } }, { 1, { 0x38 } },
	{ 5, { 0x05, 0x11, 0x22, 0x33, 0x44 } },       /* disp32 / RIP-relative */
	{ 6, { 0x04, 0x25, 0x11, 0x22, 0x33, 0x44 } }, /* SIB, no base, disp32 */
	{ 3, { 0x44, 0x24, 0x11 } },                   /* SIB + disp8 */
	{ 3, { 0x46, 0x11, 0x22 } },                   /* disp8 ((%bp) in 16-bit) */
	{ 3, { 0x86, 0x11, 0x22 } },                   /* disp32 (disp16 in 16-bit) */
	{ 3, { 0x06, 0x11, 0x22 } },                   /* disp16 in 16-bit addressing */
};
#define NFORMS (sizeof forms / sizeof forms[0])

/* Appends one candidate (head + opcode + form; no form when form == NFORMS) and 8 NOPs, which
 * absorb an immediate or displacement and let objdump fall back in step before the next
 * candidate. */
static unsigned long ncandidates;

static void candidate(struct blob *bl, const uint8_t *head, size_t nhead, uint8_t op,
                      unsigned form)
{
	ncandidates++;
	static const uint8_t nops[8] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90 };
	put(bl, head, nhead);
	put(bl, &op, 1);
	if (form < NFORMS)
		put(bl, forms[form].b, forms[form].n);
	put(bl, nops, sizeof nops);
}

/* Every opcode of the one-byte, 0F, 0F38 and 0F3A maps with prefixes none/66/67/F2/F3/F0
 * (and REX.W in 64-bit mode), each ModRM form; every VEX (maps 0F/0F38/0F3A, all pp, W),
 * EVEX (maps 1, 2, 3, 5, 6, all pp, W) and XOP (maps 8, 9, A) opcode with a few forms. */
static void synth(struct blob *bl, enum ptrec_x86_mode mode)
{
	static const uint8_t pfx[] = { 0, 0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x48 };
	static const uint8_t esc[4][2] = { { 0 }, { 0x0f }, { 0x0f, 0x38 }, { 0x0f, 0x3a } };
	for (unsigned map = 0; map < 4; map++) {
		for (unsigned op = 0; op < 256; op++) {
			if (map == 0) {
				int is_pfx = op == 0x26 || op == 0x2e || op == 0x36 || op == 0x3e ||
				             op == 0x64 || op == 0x65 || op == 0x66 || op == 0x67 ||
				             op == 0xf0 || op == 0xf2 || op == 0xf3 || op == 0x0f ||
				             (mode == X86_MODE_64 && (op & 0xf0) == 0x40);
				if (is_pfx)
					continue;
			}
			if (map == 1 && (op == 0x38 || op == 0x3a))
				continue;
			for (unsigned p = 0; p < sizeof pfx; p++) {
				if (pfx[p] == 0x48 && mode != X86_MODE_64)
					continue;
				uint8_t head[4];
				size_t nh = 0;
				if (pfx[p])
					head[nh++] = pfx[p];
				for (unsigned k = 0; k < 2 && esc[map][k]; k++)
					head[nh++] = esc[map][k];
				for (unsigned f = 0; f < NFORMS; f++) {
					/* without a prefix every form; with one, every register
					 * form and three memory forms */
					if (pfx[p] && f >= 8 && f != 8 && f != 16 && f != 18)
						continue;
					candidate(bl, head, nh, (uint8_t)op, f);
				}
			}
		}
	}
	/* Opcodes whose meaning depends on all of ModRM (groups, x87, 0F 01 system instructions):
	 * every ModRM byte, with the mandatory prefixes. */
	static const uint8_t full[][2] = {
		{ 0, 0x80 }, { 0, 0xc6 }, { 0, 0xc7 }, { 0, 0xf6 }, { 0, 0xf7 }, { 0, 0xfe },
		{ 0, 0xff }, { 0, 0x8f }, { 0, 0xd8 }, { 0, 0xd9 }, { 0, 0xda }, { 0, 0xdb },
		{ 0, 0xdc }, { 0, 0xdd }, { 0, 0xde }, { 0, 0xdf }, { 1, 0x00 }, { 1, 0x01 },
		{ 1, 0x0d }, { 1, 0x18 }, { 1, 0x1e }, { 1, 0x71 }, { 1, 0x78 }, { 1, 0xae },
		{ 1, 0xba }, { 1, 0xc7 },
	};
	static const uint8_t mpfx[] = { 0, 0x66, 0xf2, 0xf3 };
	for (unsigned k = 0; k < sizeof full / sizeof full[0]; k++)
		for (unsigned p = 0; p < sizeof mpfx; p++)
			for (unsigned m = 0; m < 256; m++) {
				uint8_t head[3];
				size_t nh = 0;
				if (mpfx[p])
					head[nh++] = mpfx[p];
				if (full[k][0])
					head[nh++] = 0x0f;
				head[nh++] = full[k][1];
				candidate(bl, head, nh, (uint8_t)m, NFORMS); /* m is the ModRM */
			}
	for (unsigned vmap = 1; vmap <= 3; vmap++)
		for (unsigned w = 0; w < 2; w++)
			for (unsigned pp = 0; pp < 4; pp++)
				for (unsigned op = 0; op < 256; op++) {
					uint8_t h3[3] = { 0xc4, (uint8_t)(0xe0 | vmap),
					                  (uint8_t)(w << 7 | 0x78 | pp) };
					candidate(bl, h3, 3, (uint8_t)op, 0);
					candidate(bl, h3, 3, (uint8_t)op, 18);
					if (vmap == 1 && w == 0) {
						uint8_t h2[2] = { 0xc5, (uint8_t)(0xf8 | pp) };
						candidate(bl, h2, 2, (uint8_t)op, 8);
					}
				}
	static const uint8_t emaps[] = { 1, 2, 3, 5, 6 };
	for (unsigned m = 0; m < sizeof emaps; m++)
		for (unsigned w = 0; w < 2; w++)
			for (unsigned pp = 0; pp < 4; pp++)
				for (unsigned op = 0; op < 256; op++) {
					uint8_t h[4] = { 0x62, (uint8_t)(0xf0 | emaps[m]),
					                 (uint8_t)(w << 7 | 0x7c | pp), 0x48 };
					candidate(bl, h, 4, (uint8_t)op, 0);
					candidate(bl, h, 4, (uint8_t)op, 18);
				}
	for (unsigned xmap = 8; xmap <= 10; xmap++)
		for (unsigned w = 0; w < 2; w++)
			for (unsigned op = 0; op < 256; op++) {
				uint8_t h[3] = { 0x8f, (uint8_t)(0xe0 | xmap), (uint8_t)(w << 7 | 0x78) };
				candidate(bl, h, 3, (uint8_t)op, 0);
				candidate(bl, h, 3, (uint8_t)op, 18);
			}
}

/* Writes the synthetic corpus for mode to a file, disassembles it with objdump -b binary and
 * checks every instruction; 0 on success, -1 if no file could be written. */
static int synthetic_part(const char *objdump, enum ptrec_x86_mode mode, struct totals *t)
{
	const char *bld = getenv("top_builddir");
	char path[4096];
	snprintf(path, sizeof path, "%s/ild_synth_XXXXXX", bld && *bld ? bld : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	struct blob bl = { 0 };
	synth(&bl, mode);
	size_t off = 0;
	while (off < bl.n) {
		ssize_t w = write(fd, bl.b + off, bl.n - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fd);
	free(bl.b);
	static const char *const arch[] = {
		[X86_MODE_16] = "-b binary -m i8086 --insn-width=16",
		[X86_MODE_32] = "-b binary -m i386 --insn-width=16",
		[X86_MODE_64] = "-b binary -m i386:x86-64 -M intel64 --insn-width=16",
	};
	char opts[128];
	snprintf(opts, sizeof opts, "-D %s", arch[mode]);
	if (off == bl.n)
		check_file(objdump, opts, path, mode, t);
	if (!getenv("PTREC_ILD_KEEP"))
		unlink(path);
	return off == bl.n ? 0 : -1;
}

int main(void)
{
	const char *objdump = getenv("OBJDUMP");
	if (!objdump || !*objdump || access(objdump, X_OK))
		SKIP("objdump not found ($OBJDUMP is \"%s\"); configure did not find binutils",
		     objdump ? objdump : "");
	const char *e;
	uint64_t min = 5200000;
	if ((e = getenv("PTREC_ILD_MIN")) && *e)
		min = strtoull(e, NULL, 10);
	uint64_t min32 = 1000000;
	if ((e = getenv("PTREC_ILD_MIN32")) && *e)
		min32 = strtoull(e, NULL, 10);
	if ((e = getenv("PTREC_ILD_SHOW")) && *e)
		show_max = (unsigned)strtoul(e, NULL, 10);
	int all = (e = getenv("PTREC_ILD_CORPUS")) && !strcmp(e, "all");

	static struct totals t64, t32, t16, t32c;
	if (e && *e && !all) { /* an explicit list of files */
		char *list = strdup(e), *save = NULL;
		for (char *f = strtok_r(list, ":", &save); f; f = strtok_r(NULL, ":", &save))
			if (elf_bits(f) == 64)
				check_file(objdump, "--insn-width=16 -M intel64", f, X86_MODE_64, &t64);
		free(list);
	} else {
		part64(objdump, min, all, &t64);
	}
	print_totals("64-bit (objdump -M intel64)", &t64);
	if (t64.checked == 0)
		SKIP("no x86-64 ELF files found in /usr/lib/x86_64-linux-gnu or /usr/bin");
	if (t64.checked < min)
		printf("note: this machine has only %" PRIu64 " instructions in the corpus (< %" PRIu64
		       ")\n", t64.checked, min);

	/* The same bytes as 32-bit and 16-bit code: every rule of those modes on real bytes. */
	const char *lib = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	if (elf_bits(lib) == 64) {
		/* objdump's default width (7 bytes a line): longer instructions continue on
		 * lines of their own, which the parser must join */
		check_file(objdump, "-M i386", lib, X86_MODE_32, &t32);
		print_totals("32-bit (libc.so.6 bytes, objdump -M i386)", &t32);
		check_file(objdump, "--insn-width=16 -M i8086", lib, X86_MODE_16, &t16);
		print_totals("16-bit (libc.so.6 bytes, objdump -M i8086)", &t16);
	}
	/* Real 32-bit code: the i386 libraries of a multiarch system (libc6-i386). */
	static struct totals t32l;
	scan_dir(objdump, "/usr/lib32", 1, 32, "--insn-width=16", X86_MODE_32, min32, all, &t32l);
	if (t32l.checked)
		print_totals("32-bit (ELF i386 libraries in /usr/lib32)", &t32l);
	else
		printf("32-bit libraries: none in /usr/lib32\n");
	if (part32_compiled(objdump, &t32c))
		print_totals("32-bit (tests/data/ild_m32.c, $CC -m32)", &t32c);
	else
		printf("32-bit compiled code: skipped ($CC -m32 -c does not work here)\n");

	/* Every opcode of every map, with prefixes and ModRM forms, in each mode. */
	static struct totals ts[3];
	static const char *const sname[3] = {
		"16-bit synthetic (every opcode x prefix x ModRM form)",
		"32-bit synthetic (every opcode x prefix x ModRM form)",
		"64-bit synthetic (every opcode x prefix x ModRM form)",
	};
	for (int m = X86_MODE_16; m <= X86_MODE_64; m++) {
		ncandidates = 0;
		if (synthetic_part(objdump, (enum ptrec_x86_mode)m, &ts[m]) == 0) {
			print_totals(sname[m], &ts[m]);
			printf("  %lu candidates, each followed by NOPs\n", ncandidates);
		}
		CHECK(ts[m].mismatches == 0);
		CHECK(ts[m].checked > 100000);
	}

	CHECK(t64.mismatches == 0);
	CHECK(t32.mismatches == 0);
	CHECK(t16.mismatches == 0);
	CHECK(t32.checked == 0 || t32.continuations > 0); /* the wrapped-line path was exercised */
	CHECK(t32c.mismatches == 0);
	CHECK(t32l.mismatches == 0);
	return check_done();
}

/* test_symbols.c — the ELF and DWARF readers against binutils as oracles: function symbols
 * against `nm`, name@plt entries against `objdump -d`, file:line of thousands of addresses
 * against `addr2line`, on programs this test builds with $CC: -O0 and -O2, DWARF 4 and 5, PIE
 * and non-PIE, a shared library, aarch64 programs cross-built where aarch64-linux-gnu-gcc is
 * (their PLT entries, plain and with BTI and PAC, read by this build whatever its machine),
 * a stripped binary with a separate debug file (found through .gnu_debuglink and through a
 * --debug-dir build-id tree), and a binary whose symbol table is stripped but whose DWARF is
 * kept (function names from .debug_info). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "symbols/debug_file.h"
#include "symbols/dwarf_line.h"
#include "symbols/elf_symbols.h"
#include "ptrec.h"

static const char *cc, *nm, *a2l, *objdump;
static char dir[4096];

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int rc;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* The test program: functions of many shapes, static ones, library calls through the PLT. */
static void write_sources(void)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/prog.c", dir);
	f = fopen(path, "w");
	if (!f)
		SKIP("cannot write %s", path);
	fprintf(f, "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n");
	for (int i = 0; i < 40; i++) {
		fprintf(f, "%sint f%d(int x)\n{\n", i % 3 == 0 ? "static __attribute__((noinline)) "
		                                              : "__attribute__((noinline)) ", i);
		switch (i % 4) {
		case 0:
			fprintf(f, "\tint s = 0;\n\tfor (int k = 0; k < x; k++)\n\t\ts += k * %d;\n"
			           "\treturn s;\n", i + 1);
			break;
		case 1:
			fprintf(f, "\tswitch (x & 3) {\n\tcase 0:\n\t\treturn x + %d;\n\tcase 1:\n"
			           "\t\treturn x * %d;\n\tdefault:\n\t\tbreak;\n\t}\n\treturn -x;\n",
			        i, i + 2);
			break;
		case 2:
			fprintf(f, "\tchar buf[32];\n\tsnprintf(buf, sizeof(buf), \"%%d\", x);\n"
			           "\treturn (int)strlen(buf) + %d;\n", i);
			break;
		default:
			fprintf(f, "\tif (x > %d)\n\t\treturn f%d(x - 1) + 1;\n\treturn x;\n", i,
			        i - 1);
			break;
		}
		fprintf(f, "}\n\n");
	}
	fprintf(f, "int main(int argc, char **argv)\n{\n\tint t = 0;\n\t(void)argv;\n");
	for (int i = 0; i < 40; i++)
		fprintf(f, "\tt += f%d(argc + %d);\n", i, i);
	fprintf(f, "\tchar *p = malloc(16);\n\tputs(\"done\");\n\tfree(p);\n"
	           "\treturn t == 42;\n}\n");
	fclose(f);

	snprintf(path, sizeof(path), "%s/lib.c", dir);
	f = fopen(path, "w");
	if (!f)
		SKIP("cannot write %s", path);
	fprintf(f, "#include <string.h>\n#include <stdio.h>\n\n");
	for (int i = 0; i < 20; i++)
		fprintf(f, "%sint lib%d(const char *s)\n{\n\tint n = (int)strlen(s);\n"
		           "\tif (n > %d)\n\t\tputs(s);\n\treturn n * %d;\n}\n\n",
		        i % 2 ? "static " : "", i, i, i + 3);
	fprintf(f, "int lib_entry(const char *s)\n{\n\tint t = 0;\n");
	for (int i = 0; i < 20; i++)
		fprintf(f, "\tt += lib%d(s);\n", i);
	fprintf(f, "\treturn t;\n}\n");
	fclose(f);
}

/* nm's function symbols: address, size, name. */
struct nsym {
	unsigned long long addr, size;
	char name[256];
};

static size_t read_nm(const char *bin, struct nsym *out, size_t max)
{
	char cmd[8300], line[2048];
	size_t n = 0;
	FILE *p;

	/* sysv format: name|value|class|type|size|line|section */
	snprintf(cmd, sizeof(cmd), "'%s' --format=sysv --defined-only '%s' 2>/dev/null", nm, bin);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p) && n < max) {
		char *f[7], *save = NULL, *tok;
		int k = 0;
		for (tok = strtok_r(line, "|", &save); tok && k < 7; tok = strtok_r(NULL, "|", &save))
			f[k++] = tok;
		if (k < 7)
			continue;
		for (int i = 0; i < 7; i++) {
			while (*f[i] == ' ')
				f[i]++;
			f[i][strcspn(f[i], " \n")] = 0;
		}
		/* Code symbols: functions, and untyped labels in executable sections. */
		if (strcmp(f[3], "FUNC") && strcmp(f[3], "IFUNC") && strcmp(f[3], "GNU_IFUNC") &&
		    !(!strcmp(f[3], "NOTYPE") && (!strcmp(f[6], ".text") || !strcmp(f[6], ".init") ||
		                                  !strcmp(f[6], ".fini"))))
			continue;
		if (!*f[1])
			continue;
		out[n].addr = strtoull(f[1], NULL, 16);
		out[n].size = *f[4] ? strtoull(f[4], NULL, 16) : 0;
		snprintf(out[n].name, sizeof(out[n].name), "%s", f[0]);
		n++;
	}
	pclose(p);
	return n;
}

/* 1 if nm lists name at addr. */
static int nm_has(const struct nsym *s, size_t n, unsigned long long addr, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].addr == addr && !strcmp(s[i].name, name))
			return 1;
	return 0;
}

/* Every nm function symbol is found at its address, and its last byte still maps to a symbol
 * starting at that address (unless another symbol starts inside it). */
static void check_symbols(const char *label, const struct ptrec_elf *elf, const char *oracle_bin)
{
	static struct nsym syms[20000];
	size_t n = read_nm(oracle_bin, syms, 20000), bad = 0, checked = 0;

	if (n <= 10)
		fprintf(stderr, "%s: nm lists only %zu functions\n", label, n);
	CHECK(n > 10);
	for (size_t i = 0; i < n; i++) {
		const struct ptrec_elf_sym *s = ptrec_elf_lookup(elf, syms[i].addr);
		int inner = 0;
		checked++;
		if (!s || s->addr != syms[i].addr || !nm_has(syms, n, s->addr, s->name)) {
			if (bad++ < 5)
				fprintf(stderr, "%s: %s at 0x%llx: got %s\n", label, syms[i].name,
				        syms[i].addr, s ? s->name : "(none)");
			continue;
		}
		if (!syms[i].size)
			continue;
		for (size_t k = 0; k < n; k++)
			if (syms[k].addr > syms[i].addr && syms[k].addr < syms[i].addr + syms[i].size)
				inner = 1;
		if (inner)
			continue;
		checked++;
		s = ptrec_elf_lookup(elf, syms[i].addr + syms[i].size - 1);
		if (!s || s->addr != syms[i].addr) {
			if (bad++ < 5)
				fprintf(stderr, "%s: last byte of %s: got %s\n", label, syms[i].name,
				        s ? s->name : "(none)");
		}
	}
	printf("%s: %zu symbol lookups, %zu wrong\n", label, checked, bad);
	CHECK_EQ_U64(bad, 0);
}

/* Every <name@plt> entry the objdump for bin's machine (od) shows is found, at its start. */
static void check_plt(const char *label, const struct ptrec_elf *elf, const char *bin,
                      const char *od)
{
	char cmd[8300], line[1024];
	size_t n = 0, bad = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' -d '%s' 2>/dev/null", od, bin);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char name[256];
		const struct ptrec_elf_sym *s;
		/* objdump's "<puts@plt-0x10>" names the PLT header by offset: not an entry. */
		if (sscanf(line, "%llx <%255[^>]>:", &a, name) != 2 || !strstr(name, "@plt") ||
		    strstr(name, "@plt-") || strstr(name, "@plt+"))
			continue;
		n++;
		s = ptrec_elf_lookup(elf, a);
		if (!s || s->addr != a || strcmp(s->name, name)) {
			if (bad++ < 5)
				fprintf(stderr, "%s: %s at 0x%llx: got %s\n", label, name, a,
				        s ? s->name : "(none)");
		}
	}
	pclose(p);
	printf("%s: %zu plt entries, %zu wrong\n", label, n, bad);
	CHECK(n >= 3);
	CHECK_EQ_U64(bad, 0);
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* file:line of sampled addresses inside every function, against addr2line. */
static void check_lines(const char *label, const struct ptrec_dwarf *dw, const char *oracle_bin)
{
	static struct nsym syms[20000];
	static unsigned long long addrs[200000];
	size_t n = read_nm(oracle_bin, syms, 20000), na = 0, bad = 0, known = 0;
	char path[4200], cmd[8600], line[4096];
	FILE *f, *p;

	for (size_t i = 0; i < n && na < 200000; i++)
		for (unsigned long long o = 0; o < syms[i].size && na < 200000; o++)
			addrs[na++] = syms[i].addr + o;
	snprintf(path, sizeof(path), "%s/addrs.txt", dir);
	f = fopen(path, "w");
	if (!f)
		return;
	for (size_t i = 0; i < na; i++)
		fprintf(f, "0x%llx\n", addrs[i]);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' -e '%s' < '%s'", a2l, oracle_bin, path);
	p = popen(cmd, "r");
	if (!p)
		return;
	for (size_t i = 0; i < na && fgets(line, sizeof(line), p); i++) {
		char *colon, *sp;
		const char *file = NULL;
		unsigned ln = 0;
		long want;
		int have = !ptrec_dwarf_lookup_line(dw, addrs[i], &file, &ln) && ln;

		line[strcspn(line, "\n")] = 0;
		sp = strstr(line, " (discriminator");
		if (sp)
			*sp = 0;
		colon = strrchr(line, ':');
		want = colon && colon[1] != '?' ? strtol(colon + 1, NULL, 10) : 0;
		if (colon)
			*colon = 0;
		if (!strncmp(line, "??", 2) || want == 0) {
			if (have && bad++ < 5)
				fprintf(stderr, "%s: 0x%llx: addr2line knows no line, we say %s:%u\n",
				        label, addrs[i], file, ln);
			continue;
		}
		known++;
		if (!have || (unsigned)want != ln || strcmp(base(line), base(file))) {
			if (bad++ < 5)
				fprintf(stderr, "%s: 0x%llx: addr2line %s:%ld, we %s:%u\n", label,
				        addrs[i], line, want, have ? file : "(none)", have ? ln : 0);
		}
	}
	pclose(p);
	printf("%s: %zu addresses with lines compared, %zu wrong\n", label, known, bad);
	CHECK(known > 500);
	CHECK_EQ_U64(bad, 0);
}

static void check_binary(const char *label, const char *bin, int want_plt)
{
	struct ptrec_elf elf;
	struct ptrec_dwarf dw;
	struct ptrec_warnings w = {0};

	if (ptrec_elf_open_file(bin, &elf, &w)) {
		CHECK(!"open");
		return;
	}
	CHECK(elf.has_symtab);
	CHECK(elf.build_id_len == 20);
	check_symbols(label, &elf, bin);
	if (want_plt)
		check_plt(label, &elf, bin, objdump);
	CHECK(ptrec_dwarf_load(&dw, &elf, &w) == 0);
	CHECK(dw.has_lines && dw.nrows > 100);
	check_lines(label, &dw, bin);
	for (size_t i = 0; i < w.count; i++)
		fprintf(stderr, "%s: warning: %s\n", label, w.items[i]);
	CHECK_EQ_U64(w.count, 0);
	ptrec_dwarf_free(&dw);
	ptrec_elf_close(&elf);
	ptrec_warnings_free(&w);
}

/* Stripped binary + separate debug file: symbols and lines come from the debug file. */
static void check_stripped(const char *label, const char *stripped, const char *orig,
                           const char *const *debug_dirs)
{
	struct ptrec_elf elf, dbg;
	struct ptrec_dwarf dw;
	struct ptrec_warnings w = {0};

	if (ptrec_elf_open_file(stripped, &elf, &w)) {
		CHECK(!"open stripped");
		return;
	}
	CHECK(!elf.has_symtab);
	CHECK(ptrec_debug_file_open(&elf, stripped, debug_dirs, &dbg, &w) == 0);
	CHECK(dbg.has_symtab);
	check_symbols(label, &dbg, orig);
	CHECK(ptrec_dwarf_load(&dw, &dbg, &w) == 0);
	check_lines(label, &dw, orig);
	ptrec_dwarf_free(&dw);
	ptrec_elf_close(&dbg);
	ptrec_elf_close(&elf);
	for (size_t i = 0; i < w.count; i++)
		fprintf(stderr, "%s: warning: %s\n", label, w.items[i]);
	ptrec_warnings_free(&w);
}

/* No symbol table at all, DWARF kept: every function of the source is named from
 * .debug_info at several addresses inside it. */
static void check_dwarf_names(const char *label, const char *nosym, const char *orig)
{
	static struct nsym syms[20000];
	size_t n = read_nm(orig, syms, 20000), checked = 0, bad = 0;
	struct ptrec_elf elf;
	struct ptrec_dwarf dw;
	struct ptrec_warnings w = {0};

	if (ptrec_elf_open_file(nosym, &elf, &w)) {
		CHECK(!"open");
		return;
	}
	CHECK(!elf.has_symtab);
	CHECK(ptrec_dwarf_load(&dw, &elf, &w) == 0);
	CHECK(dw.nfuncs >= 41);
	for (size_t i = 0; i < n; i++) {
		const char *nmname = syms[i].name;
		if (!syms[i].size || strchr(nmname, '.') ||
		    !((nmname[0] == 'f' && nmname[1] >= '0' && nmname[1] <= '9') ||
		      !strcmp(nmname, "main")))
			continue;
		for (unsigned long long o = 0; o < syms[i].size; o += 7) {
			const struct ptrec_dwarf_func *f = ptrec_dwarf_lookup_func(&dw, syms[i].addr + o);
			checked++;
			if (!f || strcmp(f->name, nmname)) {
				if (bad++ < 5)
					fprintf(stderr, "%s: 0x%llx in %s: DWARF says %s\n", label,
					        syms[i].addr + o, nmname, f ? f->name : "(none)");
			}
		}
	}
	printf("%s: %zu DWARF function lookups, %zu wrong\n", label, checked, bad);
	CHECK(checked > 100);
	CHECK_EQ_U64(bad, 0);
	ptrec_dwarf_free(&dw);
	ptrec_elf_close(&elf);
	ptrec_warnings_free(&w);
}

/* aarch64 PLT entries (16 bytes after a 32-byte PLT0; 24 with -z force-bti, `bti c` first;
 * PAC's autia1716 with -z pac-plt) named by this build's reader, whatever machine it runs on,
 * against aarch64 objdump's <name@plt> labels.  Cross-built where the cross GCC is (the
 * aarch64 build's own $CC, or aarch64-linux-gnu-gcc beside an x86-64 build). */
static void check_a64_plt(void)
{
	static const char *const ways[][2] = {
		{"aarch64 PIE", "-fPIE -pie"},
		{"aarch64 non-PIE", "-fno-pie -no-pie"},
		{"aarch64 BTI+PAC PLT", "-fPIE -pie -mbranch-protection=standard "
		 "-Wl,-z,force-bti,-z,pac-plt"},
	};
	const char *a64cc = "aarch64-linux-gnu-gcc", *a64od = "aarch64-linux-gnu-objdump";
	char bin[4300];

#if defined(__aarch64__)
	a64cc = cc;
	a64od = objdump;
#endif
	if (run("command -v %s >/dev/null && command -v %s >/dev/null", a64cc, a64od)) {
		printf("note: no %s or %s: the aarch64 PLT entries are not checked\n", a64cc, a64od);
		return;
	}
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		struct ptrec_elf elf;

		snprintf(bin, sizeof(bin), "%s/a64plt%zu", dir, i);
		if (run("%s -O1 %s -o '%s' '%s/prog.c'", a64cc, ways[i][1], bin, dir)) {
			CHECK(!"cross-compile");
			continue;
		}
		if (ptrec_elf_open_file(bin, &elf, NULL)) {
			CHECK(!"open aarch64");
			continue;
		}
		CHECK_EQ_U64(elf.machine, 183 /* EM_AARCH64 */);
		check_plt(ways[i][0], &elf, bin, a64od);
		ptrec_elf_close(&elf);
	}
}

int main(void)
{
	const char *top = getenv("top_builddir");
	static const char *const opts[] = {"-O0", "-O2"};
	static const char *const dwarfs[] = {"-gdwarf-4", "-gdwarf-5"};
	static const char *const pies[] = {"-fPIE -pie", "-fno-pie -no-pie"};
	char bin[4300], label[128];

	setvbuf(stdout, NULL, _IONBF, 0);
	cc = getenv("CC");
	nm = getenv("NM");
	a2l = getenv("ADDR2LINE");
	objdump = getenv("OBJDUMP");
	if (!cc || !*cc || !nm || !*nm || !a2l || !*a2l || !objdump || !*objdump)
		SKIP("needs $CC, $NM, $ADDR2LINE and $OBJDUMP (binutils oracles)");
	snprintf(dir, sizeof(dir), "%s/tests/tmp", top ? top : ".");
	mkdir(dir, 0700); /* the build tree's scratch folder */
	snprintf(dir, sizeof(dir), "%s/tests/tmp/symbols.XXXXXX", top ? top : ".");
	if (!mkdtemp(dir))
		SKIP("cannot create a temporary directory: %s", strerror(errno));
	write_sources();

	for (int o = 0; o < 2; o++)
		for (int g = 0; g < 2; g++)
			for (int p = 0; p < 2; p++) {
				snprintf(bin, sizeof(bin), "%s/prog%d%d%d", dir, o, g, p);
				snprintf(label, sizeof(label), "prog %s %s %s", opts[o], dwarfs[g],
				         p ? "non-PIE" : "PIE");
				if (run("%s %s %s %s -Wl,--build-id -o '%s' '%s/prog.c'", cc, opts[o],
				        dwarfs[g], pies[p], bin, dir)) {
					CHECK(!"compile");
					continue;
				}
				check_binary(label, bin, 1);
			}

	/* A shared library. */
	snprintf(bin, sizeof(bin), "%s/libt.so", dir);
	if (!run("%s -O1 -gdwarf-5 -shared -fPIC -Wl,--build-id -o '%s' '%s/lib.c'", cc, bin, dir))
		check_binary("shared library -O1 -gdwarf-5", bin, 1);
	else
		CHECK(!"compile lib");

	/* Stripped, with its debug file next to it (.gnu_debuglink, CRC checked)... */
	if (!run("cd '%s' && cp prog100 s1 && \"${OBJCOPY:-objcopy}\" --only-keep-debug s1 s1.debug && "
	         "\"${STRIP:-strip}\" --strip-all s1 && \"${OBJCOPY:-objcopy}\" --add-gnu-debuglink=s1.debug s1", dir)) {
		snprintf(bin, sizeof(bin), "%s/s1", dir);
		char orig[4300];
		snprintf(orig, sizeof(orig), "%s/prog100", dir);
		check_stripped("stripped + debuglink", bin, orig, NULL);
	} else {
		CHECK(!"strip");
	}
	/* ... and found by build-id under a --debug-dir. */
	if (!run("cd '%s' && cp prog011 s2 && \"${OBJCOPY:-objcopy}\" --only-keep-debug s2 s2.debug && "
	         "\"${STRIP:-strip}\" --strip-all s2 && id=$(readelf -n s2 | sed -n 's/.*Build ID: //p') && "
	         "mkdir -p dbg/.build-id/$(echo $id | cut -c1-2) && "
	         "mv s2.debug dbg/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug",
	         dir)) {
		char dd[4300], orig[4300];
		const char *dirs[2] = {dd, NULL};
		snprintf(dd, sizeof(dd), "%s/dbg", dir);
		snprintf(bin, sizeof(bin), "%s/s2", dir);
		snprintf(orig, sizeof(orig), "%s/prog011", dir);
		check_stripped("stripped + build-id in --debug-dir", bin, orig, dirs);
	} else {
		CHECK(!"strip by build-id");
	}
	/* Symbol table stripped, DWARF kept: names from .debug_info, DWARF 4 and 5. */
	if (!run("cd '%s' && \"${STRIP:-strip}\" --strip-all --keep-section='.debug_*' -o ns4 prog110 && "
	         "\"${STRIP:-strip}\" --strip-all --keep-section='.debug_*' -o ns5 prog010", dir)) {
		char ns[4300], orig[4300];
		snprintf(ns, sizeof(ns), "%s/ns4", dir);
		snprintf(orig, sizeof(orig), "%s/prog110", dir);
		check_dwarf_names("no symtab, DWARF 4 -O2", ns, orig);
		snprintf(ns, sizeof(ns), "%s/ns5", dir);
		snprintf(orig, sizeof(orig), "%s/prog010", dir);
		check_dwarf_names("no symtab, DWARF 5 -O0", ns, orig);
	} else {
		CHECK(!"strip keep debug");
	}

	/* Compressed debug sections: symbols work, and the lines are the uncompressed file's, with
	 * no warning. */
	if (!run("cd '%s' && objcopy --compress-debug-sections=zlib prog000 pz", dir)) {
		struct ptrec_elf elf;
		struct ptrec_dwarf dw;
		struct ptrec_warnings w = {0};
		int warned = 0;
		snprintf(bin, sizeof(bin), "%s/pz", dir);
		if (!ptrec_elf_open_file(bin, &elf, &w)) {
			char orig[4300];
			snprintf(orig, sizeof(orig), "%s/prog000", dir);
			struct ptrec_elf plain;
			struct ptrec_dwarf pdw;
			check_symbols("compressed debug sections", &elf, orig);
			CHECK(ptrec_dwarf_load(&dw, &elf, &w) == 0);
			CHECK(ptrec_elf_open_file(orig, &plain, NULL) == 0);
			CHECK(ptrec_dwarf_load(&pdw, &plain, NULL) == 0);
			CHECK(dw.nrows > 0);
			CHECK_EQ_U64(dw.nrows, pdw.nrows);
			CHECK(dw.nrows == pdw.nrows &&
			      !memcmp(dw.rows, pdw.rows, dw.nrows * sizeof(*dw.rows)));
			for (size_t i = 0; i < w.count; i++)
				warned |= strstr(w.items[i], "compress") != NULL;
			CHECK(!warned);
			ptrec_dwarf_free(&pdw);
			ptrec_elf_close(&plain);
			ptrec_dwarf_free(&dw);
			ptrec_elf_close(&elf);
		} else {
			CHECK(!"open compressed");
		}
		ptrec_warnings_free(&w);
	} else {
		printf("objcopy cannot compress debug sections here; that check is skipped\n");
	}

	check_a64_plt();
	if (!getenv("PTREC_KEEP_TMP"))
		run("rm -rf '%s'", dir);
	return check_done();
}

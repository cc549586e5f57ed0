/* test_inline.c — inlined calls from DWARF (DW_TAG_inlined_subroutine with DW_AT_call_file and
 * DW_AT_call_line, low/high pc and range lists) against `addr2line -i -f`: a program built at
 * -O2 -g with functions inlined two deep, once with DWARF 5 (.debug_rnglists) and once with
 * DWARF 4 (.debug_ranges), is read by the DWARF reader; at every address of its line table,
 * the chain of inlined frames (names, files and lines, innermost first, then the containing
 * function's call-site line) equals addr2line's.  SKIP without addr2line or a compiler. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrec.h"
#include "symbols/dwarf_line.h"
#include "symbols/elf_symbols.h"
#include "check.h"

static const char *prog_src =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"static inline int parse_digit(const char *s, int i)\n"
	"{\n"
	"\tif (s[i] < '0' || s[i] > '9')\n"
	"\t\tabort();\n"
	"\treturn s[i] - '0';\n"
	"}\n"
	"static inline int parse_header(const char *s, int n)\n"
	"{\n"
	"\tint v = 0;\n"
	"\tfor (int i = 0; i < n; i++)\n"
	"\t\tv = v * 10 + parse_digit(s, i);\n"
	"\treturn v;\n"
	"}\n"
	"__attribute__((noinline)) int parse_request(const char *s, int n)\n"
	"{\n"
	"\tint h = parse_header(s, n);\n"
	"\tif (h > 100)\n"
	"\t\tputs(\"big\");\n"
	"\treturn h + parse_header(s + 1, n - 1);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\treturn parse_request(argc > 1 ? argv[1] : \"123\", 3);\n"
	"}\n";

static const char *base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "??";
}

/* Compares one address: our chain against addr2line's "func\nfile:line" pairs. */
static int compare(const struct ptrec_elf *elf, const struct ptrec_dwarf *d, uint64_t addr,
                   char **lines, size_t nlines)
{
	struct ptrec_inline_frame ch[16];
	size_t n = ptrec_dwarf_inline_chain(d, addr, ch, 16);
	int ok = 1;

	if (!n) {
		/* No inlined call here: addr2line shows one frame. */
		return nlines == 2;
	}
	if (nlines != 2 * n)
		ok = 0;
	for (size_t k = 0; ok && k < n; k++) {
		const char *want_fn = lines[2 * k], *loc = lines[2 * k + 1], *colon;
		const char *name = ch[k].name;
		char want_file[512];
		unsigned want_line;
		if (!name) {
			const struct ptrec_elf_sym *s = ptrec_elf_lookup(elf, addr);
			name = s ? s->name : "??";
		}
		colon = strrchr(loc, ':');
		if (!colon)
			return 0;
		snprintf(want_file, sizeof(want_file), "%.*s", (int)(colon - loc), loc);
		want_line = (unsigned)strtoul(colon + 1, NULL, 10);
		if (strcmp(name, want_fn) || strcmp(base(ch[k].file), base(want_file)) ||
		    ch[k].line != want_line)
			ok = 0;
	}
	if (!ok) {
		fprintf(stderr, "0x%llx: ours:", (unsigned long long)addr);
		for (size_t k = 0; k < n; k++)
			fprintf(stderr, " %s@%s:%u", ch[k].name ? ch[k].name : "(fn)", base(ch[k].file),
			        ch[k].line);
		fprintf(stderr, "\n  addr2line:");
		for (size_t k = 0; k < nlines; k++)
			fprintf(stderr, " %s", lines[k]);
		fputc('\n', stderr);
	}
	return ok;
}

static void check_build(const char *a2l, const char *cc, const char *dir, const char *dwarf)
{
	char src[4200], prog[4200], cmd[13000], line[4096];
	struct ptrec_elf elf;
	struct ptrec_dwarf d;
	FILE *f;
	size_t inlined = 0, equal = 0, total = 0;
	char *lines[64];
	size_t nlines = 0;
	uint64_t cur = 0;
	const struct ptrec_elf_sym *fn;

	snprintf(src, sizeof(src), "%s/inl.c", dir);
	snprintf(prog, sizeof(prog), "%s/inl%s", dir, dwarf);
	f = fopen(src, "w");
	fputs(prog_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -O2 -g %s -o '%s' '%s'", cc, dwarf, prog, src);
	if (system(cmd)) {
		printf("note: %s cannot build with %s\n", cc, dwarf);
		return;
	}
	CHECK(ptrec_elf_open_file(prog, &elf, NULL) == 0);
	CHECK(ptrec_dwarf_load(&d, &elf, NULL) == 0);
	CHECK(d.ninlines > 0);
	/* Every line-table address inside parse_request, through addr2line -a -i -f. */
	snprintf(cmd, sizeof(cmd), "%s/addrs", dir);
	f = fopen(cmd, "w");
	for (size_t i = 0; i < d.nrows; i++) {
		fn = ptrec_elf_lookup(&elf, d.rows[i].addr);
		if (!d.rows[i].end && fn && !strcmp(fn->name, "parse_request"))
			fprintf(f, "0x%llx\n", (unsigned long long)d.rows[i].addr);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' -a -i -f -e '%s' < '%s/addrs'", a2l, prog, dir);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f && 1) {
		int eof = !fgets(line, sizeof(line), f);
		if (!eof) {
			char *e = strstr(line, " (discriminator");
			line[strcspn(line, "\n")] = 0;
			if (e)
				*e = 0;
		}
		if (eof || !strncmp(line, "0x", 2)) {
			if (cur) {
				total++;
				inlined += ptrec_dwarf_inline_chain(&d, cur, (struct ptrec_inline_frame[2]){},
				                                    2) > 0;
				equal += (size_t)compare(&elf, &d, cur, lines, nlines);
			}
			for (size_t k = 0; k < nlines; k++)
				free(lines[k]);
			nlines = 0;
			if (eof)
				break;
			cur = strtoull(line, NULL, 16);
		} else if (nlines < 64) {
			lines[nlines++] = strdup(line);
		}
	}
	if (f)
		pclose(f);
	printf("%s: %zu addresses, %zu inside inlined calls, %zu equal to addr2line -i\n", dwarf,
	       total, inlined, equal);
	CHECK(total > 10);
	CHECK(inlined > 5);
	CHECK_EQ_U64(equal, total);
	ptrec_dwarf_free(&d);
	ptrec_elf_close(&elf);
}

int main(void)
{
	const char *a2l = getenv("ADDR2LINE"), *cc = getenv("CC");
	const char *top = getenv("top_builddir");
	char dir[4096], cmd[4200];

	if (!a2l || !*a2l)
		SKIP("addr2line not found (test oracle)");
	if (!cc || !*cc)
		cc = "cc";
	snprintf(dir, sizeof(dir), "%s/tests/tmp", top ? top : ".");
	mkdir(dir, 0700); /* the build tree's scratch folder */
	snprintf(dir, sizeof(dir), "%s/tests/tmp/inline.XXXXXX", top ? top : ".");
	if (!mkdtemp(dir))
		return 99;
	check_build(a2l, cc, dir, "-gdwarf-5");
	check_build(a2l, cc, dir, "-gdwarf-4");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)system(cmd);
	return check_done();
}

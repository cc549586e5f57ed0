/* test_report.c — golden-STRUCTURE tests of `ptrec report`: the test builds a known program
 * and shared library with $CC -g, takes function addresses from $NM, return addresses from
 * $OBJDUMP and expected lines from $ADDR2LINE, writes a synthetic dump (test-side writer) of
 * a crash in leaf() <- middle() <- main() with instrumented records, a second thread inside
 * the library calling into the vDSO, registers and a frame-pointer chain in stack memory, and
 * checks that the expected names and lines appear in the right sections and order — in the
 * text, JSON and trace formats, with --threads/--branches, a build-id mismatch, a cut-short
 * dump and a corrupt one.  Not a byte-for-byte snapshot of our own output. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dump_writer.h"
#include "json_check.h"
#include "ptrec.h"

static const char *cc, *nmp, *a2l, *objdump, *tool;
static char dir[4096], prog[4200], lib[4200], vdso_path[4200];

#define PROG_BASE 0x555555554000ull
#define LIB_BASE 0x7ffff7fb0000ull
#define STACK_LO 0x7fffffffe000ull

/* Runs a shell command and returns its stdout (malloc'd), exit status in *status. */
static char *capture(int *status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *capture(int *status, const char *fmt, ...)
{
	char cmd[16384];
	struct tbuf out = {0};
	char buf[4096];
	size_t n;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (!p)
		return strdup("");
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		tb_put(&out, buf, n);
	tb_put(&out, "", 1);
	st = pclose(p);
	if (status)
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return (char *)out.p;
}

/* Link-time address of a function (nm). */
static uint64_t sym(const char *bin, const char *name)
{
	char *o = capture(NULL, "'%s' --defined-only '%s' | awk '$3 == \"%s\" {print $1}'", nmp, bin,
	                  name);
	uint64_t a = strtoull(o, NULL, 16);
	free(o);
	if (!a)
		fprintf(stderr, "nm: no %s in %s\n", name, bin);
	return a;
}

/* Link-time return address of the call in caller whose target text contains callee:
 * the address of the instruction after it (objdump). */
static uint64_t ret_addr(const char *bin, const char *caller, const char *callee)
{
	char *o = capture(NULL, "'%s' -d --no-show-raw-insn '%s' | awk '/^[0-9a-f]+ <%s>:/ "
	                  "{f=1; next} /^$/ {f=0} f && want {print $1; exit} "
	                  "f && /call/ && /<%s>/ {want=1}'", objdump, bin, caller, callee);
	uint64_t a = strtoull(o, NULL, 16);
	free(o);
	if (!a)
		fprintf(stderr, "objdump: no call to %s in %s\n", callee, caller);
	return a;
}

/* "file:line" basename form from addr2line for a link-time address. */
static char *line_of(const char *bin, uint64_t addr)
{
	char *o = capture(NULL, "'%s' -e '%s' 0x%llx | sed 's/ (discriminator.*//; s|.*/||'", a2l,
	                  bin, (unsigned long long)addr);
	o[strcspn(o, "\n")] = 0;
	return o;
}

/* Bytes objdump shows for the instruction at addr ("48 8b 45 f8"). */
static char *insn_bytes(const char *bin, uint64_t addr)
{
	char *o = capture(NULL, "'%s' -d '%s' | awk -F'\\t' '$1 ~ /^ *%llx:$/ {print $2; exit}'",
	                  objdump, bin, (unsigned long long)addr);
	size_t n = strlen(o);
	while (n && (o[n - 1] == '\n' || o[n - 1] == ' '))
		o[--n] = 0;
	return o;
}

/* The address of the k-th instruction of function fn (objdump). */
static uint64_t nth_insn(const char *bin, const char *fn, int k)
{
	char *o = capture(NULL, "'%s' -d '%s' | awk '/^[0-9a-f]+ <%s>:/ {f=1; next} /^$/ {f=0} "
	                  "f {n++; if (n == %d) {sub(\":\", \"\", $1); print $1; exit}}'",
	                  objdump, bin, fn, k);
	uint64_t a = strtoull(o, NULL, 16);
	free(o);
	return a;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len)
		SKIP("cannot write %s", path);
	fclose(f);
}

/* The section of text starting at header and ending at the next "\n== ". */
static char *section(const char *text, const char *header)
{
	const char *s = strstr(text, header), *e;
	if (!s)
		return strdup("");
	e = strstr(s + 1, "\n== ");
	return strndup(s, e ? (size_t)(e - s) : strlen(s));
}

/* 1 if the needles appear in this order in text. */
static int in_order(const char *text, const char *const *needles)
{
	const char *p = text;
	if (!text)
		return 0;
	for (size_t i = 0; needles[i]; i++) {
		p = strstr(p, needles[i]);
		if (!p) {
			fprintf(stderr, "not found in order: \"%s\"\n", needles[i]);
			return 0;
		}
		p += strlen(needles[i]);
	}
	return 1;
}

struct fixture {
	uint64_t leaf, middle, helper, main_, lib_work;      /* link-time */
	uint64_t r_main_helper, r_helper_lib, r_main_middle, r_middle_leaf; /* link-time */
	uint64_t rip;                                         /* runtime */
	uint64_t vdso_base, vdso_size, vdso_fn;               /* runtime */
	uint8_t *vdso;                                        /* copy of our own vDSO */
	char vdso_fn_name[64];
};

static void build(struct fixture *fx)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/libw.c", dir);
	f = fopen(path, "w");
	if (!f)
		SKIP("cannot write %s", path);
	fprintf(f, "__attribute__((noinline)) int lib_work(int v)\n{\n\tint r = v * 3;\n"
	           "\treturn r + 1;\n}\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/rprog.c", dir);
	f = fopen(path, "w");
	if (!f)
		SKIP("cannot write %s", path);
	fprintf(f, "int lib_work(int v);\n\n"
	           "__attribute__((noinline)) int leaf(int *p)\n{\n\tint v = *p;\n"
	           "\treturn v + 1;\n}\n\n"
	           "__attribute__((noinline)) int middle(int *p)\n{\n\tint x = leaf(p);\n"
	           "\treturn x * 2;\n}\n\n"
	           "__attribute__((noinline)) int helper(int v)\n{\n\tint w = lib_work(v);\n"
	           "\treturn w + v;\n}\n\n"
	           "int main(int argc, char **argv)\n{\n\tint *p = argc > 5 ? &argc : 0;\n"
	           "\t(void)argv;\n\tint h = helper(argc);\n\treturn middle(p) + h;\n}\n");
	fclose(f);
	snprintf(lib, sizeof(lib), "%s/libw.so", dir);
	snprintf(prog, sizeof(prog), "%s/rprog", dir);
	free(capture(NULL, "cd '%s' && %s -O0 -g -fno-omit-frame-pointer -shared -fPIC "
	                   "-Wl,--build-id -o libw.so libw.c && %s -O0 -g -fno-omit-frame-pointer "
	                   "-fPIE -pie -Wl,--build-id -o rprog rprog.c ./libw.so", dir, cc, cc));
	if (access(prog, F_OK) || access(lib, F_OK))
		SKIP("$CC could not build the test program");
	fx->leaf = sym(prog, "leaf");
	fx->middle = sym(prog, "middle");
	fx->helper = sym(prog, "helper");
	fx->main_ = sym(prog, "main");
	fx->lib_work = sym(lib, "lib_work");
	fx->r_main_helper = ret_addr(prog, "main", "helper");
	fx->r_main_middle = ret_addr(prog, "main", "middle");
	fx->r_middle_leaf = ret_addr(prog, "middle", "leaf");
	fx->r_helper_lib = ret_addr(prog, "helper", "lib_work@plt");
	fx->rip = PROG_BASE + nth_insn(prog, "leaf", 4);
	CHECK(fx->leaf && fx->middle && fx->helper && fx->main_ && fx->lib_work);
	CHECK(fx->r_main_helper && fx->r_main_middle && fx->r_middle_leaf && fx->r_helper_lib);
	CHECK(fx->rip > PROG_BASE + fx->leaf);
}

/* Copies this process's own vDSO (from /proc/self/maps) and finds clock_gettime in it with
 * nm -D on a file copy. */
static int grab_vdso(struct fixture *fx)
{
	unsigned long long lo = 0, hi = 0;
	char *o;
	FILE *m = fopen("/proc/self/maps", "r");
	char line[512];

	while (m && fgets(line, sizeof(line), m))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%llx-%llx", &lo, &hi);
	if (m)
		fclose(m);
	if (!lo || hi <= lo)
		return 0;
	fx->vdso_base = lo;
	fx->vdso_size = hi - lo;
	fx->vdso = malloc(fx->vdso_size);
	memcpy(fx->vdso, (const void *)(uintptr_t)lo, fx->vdso_size);
	snprintf(vdso_path, sizeof(vdso_path), "%s/vdso.so", dir);
	write_file(vdso_path, fx->vdso, fx->vdso_size);
	o = capture(NULL, "'%s' -D --defined-only '%s' | awk '$3 ~ /clock_gettime/ {sub(\"@.*\", \"\", $3);"
	                  " print $1, $3; exit}'", nmp, vdso_path);
	if (sscanf(o, "%llx %63s", &lo, fx->vdso_fn_name) != 2) {
		free(o);
		return 0;
	}
	free(o);
	fx->vdso_fn = fx->vdso_base + lo; /* vDSO symbols are offsets from its base (p_vaddr 0) */
	return 1;
}

/* The dump format make_dump writes: 1 (24-byte instrumented records) or 2 (16-byte). */
static uint32_t dump_version = 1;

/* Appends a call or return to an instrumented ring in dump_version's record format. */
static void soft(struct tbuf *ring, uint64_t from, uint64_t to, unsigned kind)
{
	if (dump_version == 1)
		tw_soft(ring, from, to, kind);
	else
		tw_soft2(ring, kind == PTREC_BR_CALL ? PTREC_SOFT_CALL : PTREC_SOFT_RET, from, to, 0);
}

/* Writes the dump.  build_id: NULL (no BUILDID records) or the id to claim for rprog. */
static void make_dump(const struct fixture *fx, struct tbuf *b, const uint8_t *build_id,
                      size_t id_len, size_t *thread2_off)
{
	struct tbuf r1 = {0}, r2 = {0}, maps = {0};
	uint64_t stack[32];
	char line[8400];

	memset(stack, 0, sizeof(stack));
	/* rbp chain: leaf's frame at +0x10 -> middle's at +0x40 -> main's at +0x80 -> end. */
	stack[0x10 / 8] = STACK_LO + 0x40;
	stack[0x18 / 8] = PROG_BASE + fx->r_middle_leaf;
	stack[0x40 / 8] = STACK_LO + 0x80;
	stack[0x48 / 8] = PROG_BASE + fx->r_main_middle;

	soft(&r1, PROG_BASE + fx->r_main_helper, PROG_BASE + fx->helper, PTREC_BR_CALL);
	soft(&r1, PROG_BASE + fx->r_helper_lib, LIB_BASE + fx->lib_work, PTREC_BR_CALL);
	soft(&r1, LIB_BASE + fx->lib_work, PROG_BASE + fx->r_helper_lib, PTREC_BR_RET);
	soft(&r1, PROG_BASE + fx->helper, PROG_BASE + fx->r_main_helper, PTREC_BR_RET);
	soft(&r1, PROG_BASE + fx->r_main_middle, PROG_BASE + fx->middle, PTREC_BR_CALL);
	soft(&r1, PROG_BASE + fx->r_middle_leaf, PROG_BASE + fx->leaf, PTREC_BR_CALL);

	soft(&r2, PROG_BASE + fx->r_main_helper, PROG_BASE + fx->helper, PTREC_BR_CALL);
	soft(&r2, PROG_BASE + fx->r_helper_lib, LIB_BASE + fx->lib_work, PTREC_BR_CALL);
	if (fx->vdso_fn)
		soft(&r2, LIB_BASE + fx->lib_work + 4, fx->vdso_fn, PTREC_BR_CALL);

#define MAPLINE(...) do { snprintf(line, sizeof(line), __VA_ARGS__); \
		tb_put(&maps, line, strlen(line)); } while (0)
	MAPLINE("%llx-%llx r--p 00000000 08:01 11 %s\n", PROG_BASE, PROG_BASE + 0x1000, prog);
	MAPLINE("%llx-%llx r-xp 00001000 08:01 11 %s\n", PROG_BASE + 0x1000, PROG_BASE + 0x2000, prog);
	MAPLINE("%llx-%llx r--p 00002000 08:01 11 %s\n", PROG_BASE + 0x2000, PROG_BASE + 0x5000, prog);
	MAPLINE("%llx-%llx r--p 00000000 08:01 12 %s\n", LIB_BASE, LIB_BASE + 0x1000, lib);
	MAPLINE("%llx-%llx r-xp 00001000 08:01 12 %s\n", LIB_BASE + 0x1000, LIB_BASE + 0x2000, lib);
	MAPLINE("%llx-%llx r--p 00002000 08:01 12 %s\n", LIB_BASE + 0x2000, LIB_BASE + 0x5000, lib);
	if (fx->vdso)
		MAPLINE("%llx-%llx r-xp 00000000 00:00 0 [vdso]\n",
		        (unsigned long long)fx->vdso_base,
		        (unsigned long long)(fx->vdso_base + fx->vdso_size));
	MAPLINE("7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n");
#undef MAPLINE

	memset(b, 0, sizeof(*b));
	tw_header_v(b, dump_version);
	tw_process(b, 1000, 1001, PTREC_EVENT_CRASH, 11, 1, 0, PTREC_BACKEND_INSTRUMENTED, 2,
	           "rprog", prog, "");
	tw_regs(b, 1001, fx->rip, STACK_LO, STACK_LO + 0x10);
	tw_record(b, PTREC_REC_MAPS, maps.p, maps.n);
	if (build_id)
		tw_buildid(b, PROG_BASE, build_id, id_len, prog);
	if (fx->vdso)
		tw_memory(b, fx->vdso_base, PTREC_MEM_VDSO, 0, fx->vdso, fx->vdso_size);
	tw_memory(b, STACK_LO, PTREC_MEM_STACK, 1001, stack, sizeof(stack));
	tw_thread(b, 1001, PTREC_BACKEND_INSTRUMENTED, PTREC_THREAD_CRASHED | PTREC_THREAD_FROZEN,
	          "main", 65536, r1.n, r1.p, r1.n);
	*thread2_off = b->n;
	tw_thread(b, 1002, PTREC_BACKEND_INSTRUMENTED, PTREC_THREAD_FROZEN, "worker", 65536, r2.n,
	          r2.p, r2.n);
	tw_end(b);
	free(r1.p);
	free(r2.p);
	free(maps.p);
}

static char *report(int *status, const char *dump, const char *args)
{
	return capture(status, "'%s' report '%s' %s 2>'%s/stderr.txt'", tool, dump, args, dir);
}

static void test_text(const struct fixture *fx, const char *dump)
{
	int st;
	char *out = report(&st, dump, "");
	char *fault = section(out, "== Faulting instruction");
	char *t1 = section(out, "== Thread 1001");
	char *t2 = section(out, "== Thread 1002");
	char *warn = section(out, "== Warnings");
	char want[512], *l_rip = line_of(prog, fx->rip - PROG_BASE);
	char *l_middle = line_of(prog, fx->r_middle_leaf - 1);
	char *l_main = line_of(prog, fx->r_main_middle - 1);
	char *l_helper = line_of(prog, fx->r_helper_lib - 1);
	char *l_lib = line_of(lib, fx->lib_work);
	char *bytes = insn_bytes(prog, fx->rip - PROG_BASE);

	CHECK_EQ_U64(st, 0);
	{
		const char *order[] = {"== Process", "== Rings", "== Faulting instruction",
		                       "== Thread 1001 (main) [crashed]", "== Thread 1002 (worker)",
		                       "== Warnings", NULL};
		CHECK(in_order(out, order));
	}
	CHECK(strstr(out, "signal SIGSEGV (11), code SEGV_MAPERR (1)") != NULL);
	CHECK(strstr(out, "backend:  instrumented") != NULL);
	/* The faulting instruction: symbol+offset, file:line, bytes from the file. */
	snprintf(want, sizeof(want), "symbol:   leaf+0x%llx",
	         (unsigned long long)(fx->rip - PROG_BASE - fx->leaf));
	CHECK(strstr(fault, want) != NULL);
	CHECK(strstr(fault, l_rip) != NULL);
	snprintf(want, sizeof(want), "bytes:    %s", bytes);
	CHECK(bytes[0] && strstr(fault, want) != NULL);
	/* The call stack from the branch history: leaf <- middle <- main, with the lines of the
	 * calls; then the unwound stack agrees. */
	{
		const char *order[] = {"call stack from branch history", "leaf+", l_rip, "middle+",
		                       l_middle, "calls leaf", "main+", l_main, "calls middle",
		                       "stack (unwound from the registers", "leaf+", "middle+", l_middle,
		                       "main+", l_main, "last 6 of 6 branches", NULL};
		CHECK(in_order(t1, order));
	}
	/* helper and lib_work returned before the crash: not on the rebuilt stack. */
	{
		char *stack = strndup(t1, (size_t)(strstr(t1, "stack (unwound") - t1));
		CHECK(!strstr(stack, "helper"));
		free(stack);
	}
	/* Last branches, newest first, with lines on both sides. */
	{
		const char *order[] = {"#0 ", "call", "middle+", "-> ", "leaf+0x0",
		                       "#1 ", "call", "main+", "-> ", "middle+0x0",
		                       "#2 ", "ret", "helper+0x0", "-> ", "main+",
		                       "#3 ", "ret", "lib_work+0x0", l_lib, "-> ", "helper+", l_helper,
		                       "#4 ", "call", "helper+", l_helper, "-> ", "lib_work+0x0", l_lib,
		                       "#5 ", "call", "main+", "-> ", "helper+0x0",
		                       "start of the recording", NULL};
		CHECK(in_order(strstr(t1, "last 6 of 6"), order));
	}
	/* The other thread: inside the vDSO, called from the library, called from helper. */
	if (fx->vdso_fn) {
		const char *order[] = {"call stack from branch history", "lib_work+", "calls ",
		                       "clock_gettime", "helper+", l_helper, "calls lib_work",
		                       "main+", "calls helper", "last 3 of 3 branches", NULL};
		CHECK(in_order(t2, order));
	}
	CHECK(strstr(warn, "(none)") != NULL);
	if (!strstr(warn, "(none)"))
		fprintf(stderr, "%s\n", warn);
	free(out);
	free(fault);
	free(t1);
	free(t2);
	free(warn);
	free(l_rip);
	free(l_middle);
	free(l_main);
	free(l_helper);
	free(l_lib);
	free(bytes);
}

/* The same history in a version 1 dump (24-byte records, written by older releases) and in a
 * version 2 dump (16-byte records) gives the same report, line for line. */
static void test_old_and_new_format(const struct fixture *fx, const char *v1_dump)
{
	struct tbuf b;
	size_t t2;
	char v2_dump[4300], v1_copy[4300];
	int st1, st2;

	dump_version = 2;
	make_dump(fx, &b, NULL, 0, &t2);
	dump_version = 1;
	CHECK_EQ_U64(b.p[8], 2);
	snprintf(v2_dump, sizeof(v2_dump), "%s/crash.v2", dir);
	write_file(v2_dump, b.p, b.n);
	free(b.p);
	/* Same file name length, so the header lines naming the dump compare equal too. */
	snprintf(v1_copy, sizeof(v1_copy), "%s/crash.v1", dir);
	free(capture(NULL, "cp '%s' '%s'", v1_dump, v1_copy));
	char *o1 = report(&st1, v1_copy, "");
	char *o2 = report(&st2, v2_dump, "");
	CHECK_EQ_U64(st1, 0);
	CHECK_EQ_U64(st2, 0);
	char *l1 = strstr(o1, "== Thread 1001"), *l2 = strstr(o2, "== Thread 1001");
	CHECK(l1 && l2 && strstr(l1, " call ") != NULL);
	if (l1 && l2 && strcmp(l1, l2))
		fprintf(stderr, "--- v1 report\n%s\n--- v2 report\n%s\n", l1, l2);
	CHECK(l1 && l2 && !strcmp(l1, l2));
	free(o1);
	free(o2);
}

static void test_options(const char *dump)
{
	int st;
	char *out = report(&st, dump, "--threads crashed --branches 2");
	CHECK_EQ_U64(st, 0);
	CHECK(strstr(out, "== Thread 1001") && !strstr(out, "== Thread 1002"));
	CHECK(strstr(out, "last 2 of 6 branches") != NULL);
	CHECK(strstr(out, "4 older branches not shown") != NULL);
	free(out);
	out = report(&st, dump, "--format yaml");
	CHECK_EQ_U64(st, 2);
	free(out);
	out = report(&st, dump, "--branches -1");
	CHECK_EQ_U64(st, 2);
	free(out);
}

static void test_json_and_trace(const char *dump)
{
	int st;
	char *out = report(&st, dump, "--format json");
	CHECK_EQ_U64(st, 0);
	CHECK(json_valid(out));
	{
		const char *order[] = {"\"format\":\"ptrec-report\"", "\"signal\":{\"number\":11",
		                       "\"fault\":", "\"function\":\"leaf\"", "\"threads\":[",
		                       "\"tid\":1001", "\"crashed\":true", "\"stack\":[",
		                       "\"function\":\"middle\"", "\"backtrace\":[", "\"branches\":[",
		                       "\"kind\":\"call\"", "\"tid\":1002", "\"warnings\":[]", NULL};
		CHECK(in_order(out, order));
	}
	free(out);
	out = report(&st, dump, "--format trace");
	CHECK_EQ_U64(st, 0);
	CHECK(json_valid(out));
	{
		const char *order[] = {"\"traceEvents\":[", "\"thread_name\"", "main (crashed)",
		                       "\"ph\":\"B\"", "\"name\":\"helper\"", "\"name\":\"lib_work\"",
		                       "\"ph\":\"E\"", "\"ph\":\"E\"", "\"name\":\"middle\"",
		                       "\"name\":\"leaf\"", "\"name\":\"SIGSEGV\"", "worker", NULL};
		CHECK(in_order(out, order));
	}
	free(out);
}

static void test_build_ids(const struct fixture *fx)
{
	char path[4300];
	struct tbuf b;
	size_t t2;
	uint8_t wrong[20], real[20];
	char *o = capture(NULL, "readelf -n '%s' | sed -n 's/.*Build ID: //p'", prog);
	int st, n = 0;

	for (int i = 0; i < 20 && sscanf(o + 2 * i, "%2hhx", &real[i]) == 1; i++)
		n++;
	free(o);
	if (n != 20) {
		printf("readelf gave no build-id; build-id checks skipped\n");
		return;
	}
	memcpy(wrong, real, 20);
	wrong[0] ^= 0xff;

	/* The right build-id: used, no warning. */
	make_dump(fx, &b, real, 20, &t2);
	snprintf(path, sizeof(path), "%s/good-id.ptrec", dir);
	write_file(path, b.p, b.n);
	free(b.p);
	o = report(&st, path, "");
	CHECK(strstr(o, "symbol:   leaf+") != NULL);
	CHECK(!strstr(o, "build-id mismatch"));
	free(o);

	/* A different build-id: warned, and the file's symbols are not used. */
	make_dump(fx, &b, wrong, 20, &t2);
	snprintf(path, sizeof(path), "%s/bad-id.ptrec", dir);
	write_file(path, b.p, b.n);
	free(b.p);
	o = report(&st, path, "");
	{
		char *warn = section(o, "== Warnings"), *fault = section(o, "== Faulting instruction");
		char want[4400];
		CHECK(strstr(warn, "build-id mismatch") && strstr(warn, "rprog"));
		CHECK(!strstr(fault, "leaf"));
		snprintf(want, sizeof(want), "module:   %s+0x%llx", prog,
		         (unsigned long long)(fx->rip - PROG_BASE));
		CHECK(strstr(fault, want) != NULL);
		/* The library is still symbolized. */
		CHECK(strstr(o, "lib_work+0x0") != NULL);
		free(warn);
		free(fault);
	}
	free(o);
}

static void test_cut_and_bad(const struct fixture *fx)
{
	char path[4300], *o, *err;
	struct tbuf b;
	size_t t2;
	int st;
	struct stat before, after_st;

	make_dump(fx, &b, NULL, 0, &t2);
	/* Cut inside the second THREAD record. */
	snprintf(path, sizeof(path), "%s/cut.ptrec", dir);
	write_file(path, b.p, t2 + 40);
	o = report(&st, path, "");
	CHECK_EQ_U64(st, 1);
	CHECK(strstr(o, "CUT SHORT") != NULL);
	CHECK(strstr(o, "== Thread 1001 (main) [crashed]") && strstr(o, "leaf+0x0"));
	CHECK(!strstr(o, "== Thread 1002"));
	{
		char *warn = section(o, "== Warnings");
		CHECK(strstr(warn, "cut short") != NULL);
		free(warn);
	}
	free(o);

	/* Corrupt: error with file, offset and cause; non-zero exit; the file untouched. */
	b.p[0] = 'X';
	snprintf(path, sizeof(path), "%s/bad.ptrec", dir);
	write_file(path, b.p, b.n);
	CHECK(stat(path, &before) == 0);
	o = report(&st, path, "");
	CHECK_EQ_U64(st, 3);
	CHECK(o[0] == 0);
	free(o);
	{
		char ep[4300];
		snprintf(ep, sizeof(ep), "cat '%s/stderr.txt'", dir);
		err = capture(NULL, "%s", ep);
		CHECK(strstr(err, path) && strstr(err, "offset 0x0") && strstr(err, "bad magic"));
		free(err);
	}
	CHECK(stat(path, &after_st) == 0);
	CHECK(before.st_size == after_st.st_size && before.st_mtime == after_st.st_mtime);
	/* A REGS count that lies: offset of the field. */
	b.p[0] = 'P';
	b.p[24 + 16 + sizeof(struct ptrec_dump_process) + 16 + 4] = 9;
	write_file(path, b.p, b.n);
	o = report(&st, path, "");
	CHECK_EQ_U64(st, 3);
	free(o);
	err = capture(NULL, "cat '%s/stderr.txt'", dir);
	{
		char want[64];
		snprintf(want, sizeof(want), "offset 0x%zx: REGS count 9",
		         24 + 16 + sizeof(struct ptrec_dump_process) + 16 + 4);
		CHECK(strstr(err, want) != NULL);
		if (!strstr(err, want))
			fprintf(stderr, "stderr: %s\n", err);
	}
	free(err);
	free(b.p);
	/* No such file. */
	o = capture(&st, "'%s' report '%s/nonexistent.ptrec' 2>&1", tool, dir);
	CHECK_EQ_U64(st, 3);
	CHECK(strstr(o, "nonexistent.ptrec") && strstr(o, "cannot open"));
	free(o);
}

/* An intel_pt ring over JIT code saved in the dump: enable at 0x10000, call 0x10010, a
 * compressed return, the fault at 0x10006 (FUP + TIP.PGD), then the signal handler enabled at
 * 0x10020.  The report decodes it, ends the history at the fault and leaves out the handler. */
/* The Process section says where the signal came from: the fault address of a fault; none for
 * a SIGSEGV with SI_KERNEL (a general-protection fault: the CPU gives no address, and 0 would
 * read as a NULL dereference); the sender (pid, uid: si_pid and si_uid, which the dump keeps
 * in fault_addr) of a signal sent by kill, sigqueue or tgkill, never a fault address. */
static void test_signal_origin(void)
{
	static const struct {
		int signo, code;
		uint64_t fault;
		const char *text, *json;
	} cases[] = {
		{11, 1, 0x10, "fault address: 0x10\n", "\"fault_addr\":\"0x10\",\"sender\":null"},
		{11, 0x80, 0, "fault address: none (SI_KERNEL: a general-protection fault",
		 "\"fault_addr\":null,\"sender\":null"},
		{11, 0, 4242 | (uint64_t)1000 << 32, "sent by:  pid 4242, uid 1000 (another process)\n",
		 "\"fault_addr\":null,\"sender\":{\"pid\":4242,\"uid\":1000}"},
		{6, -6, 50 | (uint64_t)0 << 32, "sent by:  pid 50, uid 0 (this process)\n",
		 "\"sender\":{\"pid\":50,\"uid\":0}"},
		{7, -1, 7 | (uint64_t)7 << 32, "sent by:  pid 7, uid 7 (another process)\n",
		 "\"sender\":{\"pid\":7,\"uid\":7}"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tbuf b = {0};
		char path[4300];
		int st;
		tw_header(&b);
		tw_process(&b, 50, 51, PTREC_EVENT_CRASH, cases[i].signo, cases[i].code, cases[i].fault,
		           PTREC_BACKEND_NONE, 0, "origin", "/origin", "");
		tw_end(&b);
		snprintf(path, sizeof(path), "%s/origin%zu.ptrec", dir, i);
		write_file(path, b.p, b.n);
		free(b.p);
		char *o = report(&st, path, "");
		CHECK_EQ_U64(st, 0);
		CHECK(strstr(o, cases[i].text) != NULL);
		CHECK((strstr(o, "fault address:") != NULL) == (cases[i].code > 0));
		CHECK((strstr(o, "sent by:") != NULL) == (cases[i].code <= 0));
		if (!strstr(o, cases[i].text))
			printf("case %zu: no '%s' in:\n%s\n", i, cases[i].text, o);
		free(o);
		o = report(&st, path, "--format json");
		CHECK_EQ_U64(st, 0);
		CHECK(json_valid(o));
		CHECK(strstr(o, cases[i].json) != NULL);
		free(o);
	}
}

/* Writes the dump of a process that crashed at 0x10006 (SIGSEGV) with code at 0x10000 and one
 * intel_pt thread whose trace is trace. */
static void write_pt_dump(const char *path, const uint8_t *code, size_t ncode,
                          const struct tbuf *trace)
{
	struct tbuf b = {0};
	tw_header(&b);
	tw_process(&b, 50, 51, PTREC_EVENT_CRASH, 11, 1, 0, PTREC_BACKEND_INTEL_PT, 1, "jit", "/jit",
	           "");
	tw_regs(&b, 51, 0x10006, 0x7000, 0);
	tw_memory(&b, 0x10000, PTREC_MEM_CODE, 0, code, ncode);
	tw_thread(&b, 51, PTREC_BACKEND_INTEL_PT, PTREC_THREAD_CRASHED, "jit", 4096, trace->n,
	          trace->p, trace->n);
	tw_end(&b);
	write_file(path, b.p, b.n);
	free(b.p);
}

/* The trace of test_pt up to the fault: PSB+ (TSC 0x1000), TIP.PGE 0x10000, the call, TNT
 * for the ret. */
static void pt_start(struct tbuf *trace)
{
	for (int i = 0; i < 8; i++)
		tb_put(trace, "\x02\x82", 2);                              /* PSB */
	tb_put(trace, "\x19\x00\x10\x00\x00\x00\x00\x00", 8);          /* TSC 0x1000 */
	tb_put(trace, "\x02\x23", 2);                                  /* PSBEND */
	tb_put(trace, "\x71\x00\x00\x01\x00\x00\x00", 7);              /* TIP.PGE 0x10000 */
	tb_put(trace, "\x06", 1);                                      /* TNT: 1 (the ret) */
}

static void test_pt(void)
{
	static const uint8_t code[0x30] = {
		[0x00] = 0xe8, 0x0b, 0x00, 0x00, 0x00, /* call 0x10010 */
		[0x05] = 0x90,                         /* nop */
		[0x06] = 0x8b, 0x00,                   /* mov (%rax),%eax: faults */
		[0x08] = 0xc3,
		[0x10] = 0xc3,                         /* ret */
		[0x20] = 0xc3,                         /* the handler: ret */
	};
	struct tbuf trace = {0};
	char path[4300], *o;
	int st;

	pt_start(&trace);
	tb_put(&trace, "\x7d\x06\x00\x01\x00\x00\x00", 7);              /* FUP 0x10006 */
	tb_put(&trace, "\x01", 1);                                      /* TIP.PGD */
	tb_put(&trace, "\x71\x20\x00\x01\x00\x00\x00", 7);              /* TIP.PGE 0x10020 */

	snprintf(path, sizeof(path), "%s/pt.ptrec", dir);
	write_pt_dump(path, code, sizeof(code), &trace);
	o = report(&st, path, "");
	CHECK_EQ_U64(st, 0);
	{
		const char *order[] = {"== Faulting instruction", "address:  0x10006",
		                       "bytes:    8b 00 c3", "(from dump memory)",
		                       "== Thread 51 (jit) [crashed]", "call stack from branch history",
		                       "#0   0x10006", "last 4 of ",
		                       "1 branches after the fault, in the signal handler, left out",
		                       "#0 ", "disable", "0x10006",
		                       "#1 ", "ret", "0x10010 -> 0x10005",
		                       "#2 ", "call", "0x10000 -> 0x10010",
		                       "#3 ", "enable", NULL};
		CHECK(in_order(o, order));
		/* Timestamps: every event carries the TSC of the PSB+, so the span is zero. */
		CHECK(strstr(o, "[t-0 tsc]") != NULL);
		CHECK(strstr(o, " 0 tsc\n") != NULL);
		/* The handler is not in the history. */
		CHECK(!strstr(strstr(o, "== Thread 51") ? strstr(o, "== Thread 51") : o, "0x10020"));
	}
	free(o);
	o = report(&st, path, "--format json");
	CHECK(json_valid(o) && strstr(o, "\"tsc\":4096") && strstr(o, "\"first_tsc\":4096"));
	free(o);
	o = report(&st, path, "--format trace");
	CHECK(json_valid(o) && strstr(o, "\"ph\":\"B\""));
	free(o);
	free(trace.p);

	/* The same crash traced with Intel PT event trace: the page fault is an event of its own,
	 * "Faults, exceptions including the fault vector.  Page faults additionally include the
	 * page fault address" (SDM, Event Trace): EVD (type 0, CR2) and CFE (INTR, vector 14)
	 * before the FUP + TIP.PGD of the fault; the report says it before the disable. */
	trace = (struct tbuf){0};
	pt_start(&trace);
	tb_put(&trace, "\x02\x53\x00\x40\x00\x00\x00\x00\x00\x00\x00", 11); /* EVD CR2 0x40 */
	tb_put(&trace, "\x02\x13\x01\x0e", 4);                          /* CFE INTR 14 */
	tb_put(&trace, "\x7d\x06\x00\x01\x00\x00\x00", 7);              /* FUP 0x10006 */
	tb_put(&trace, "\x01", 1);                                      /* TIP.PGD */
	snprintf(path, sizeof(path), "%s/pt_event.ptrec", dir);
	write_pt_dump(path, code, sizeof(code), &trace);
	o = report(&st, path, "");
	CHECK_EQ_U64(st, 0);
	{
		const char *order[] = {"== Thread 51 (jit) [crashed]", "last 5 of ",
		                       "#0 ", "disable", "0x10006",
		                       "#1 ", "-- event: interrupt 14, cr2 0x40 at 0x10006",
		                       "#2 ", "ret", NULL};
		CHECK(in_order(o, order));
	}
	free(o);
	o = report(&st, path, "--format json");
	CHECK(json_valid(o) && strstr(o, "{\"kind\":\"event\",\"from\":{\"addr\":\"0x10006\"") &&
	      strstr(o, "\"to\":{\"addr\":\"0x0\"},\"event\":\"interrupt\",\"vector\":14,"
	                "\"cr2\":\"0x40\""));
	free(o);
	free(trace.p);
}

/* C++ names: demangled when the C++ runtime can be loaded at run time, raw otherwise. */
static void test_cxx(void)
{
	char src[4300], bin[4300], path[4300], line[8400], *o;
	struct tbuf b = {0}, ring = {0}, maps = {0};
	uint64_t frob, caller;
	void *rt = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	FILE *f;
	int st;

	snprintf(src, sizeof(src), "%s/w.cc", dir);
	snprintf(bin, sizeof(bin), "%s/wcc", dir);
	f = fopen(src, "w");
	if (!f)
		return;
	fprintf(f, "namespace ns {\nstruct Widget {\n\tint frob(int x);\n};\n"
	           "__attribute__((noinline)) int Widget::frob(int x)\n{\n\treturn x + 1;\n}\n}\n"
	           "int main()\n{\n\tns::Widget w;\n\treturn w.frob(1);\n}\n");
	fclose(f);
	o = capture(&st, "%s -x c++ -O0 -g -fPIE -pie -o '%s' '%s' 2>&1", cc, bin, src);
	free(o);
	if (st) {
		printf("$CC cannot compile C++ here: demangling check skipped\n");
		if (rt)
			dlclose(rt);
		return;
	}
	frob = sym(bin, "_ZN2ns6Widget4frobEi");
	caller = ret_addr(bin, "main", "_ZN2ns6Widget4frobEi");
	CHECK(frob && caller);
	tw_soft(&ring, PROG_BASE + caller, PROG_BASE + frob, PTREC_BR_CALL);
	snprintf(line, sizeof(line), "%llx-%llx r-xp 00000000 08:01 3 %s\n", PROG_BASE,
	         PROG_BASE + 0x5000, bin);
	tb_put(&maps, line, strlen(line));
	tw_header(&b);
	tw_process(&b, 9, 9, PTREC_EVENT_CRASH, 11, 1, 0, PTREC_BACKEND_INSTRUMENTED, 1, "wcc", bin,
	           "");
	tw_regs(&b, 9, PROG_BASE + frob + 4, 0, 0);
	tw_record(&b, PTREC_REC_MAPS, maps.p, maps.n);
	tw_thread(&b, 9, PTREC_BACKEND_INSTRUMENTED, PTREC_THREAD_CRASHED, "wcc", 4096, ring.n,
	          ring.p, ring.n);
	tw_end(&b);
	snprintf(path, sizeof(path), "%s/cxx.ptrec", dir);
	write_file(path, b.p, b.n);
	o = report(&st, path, "");
	CHECK_EQ_U64(st, 0);
	if (rt) {
		CHECK(strstr(o, "symbol:   ns::Widget::frob(int)+0x4") != NULL);
		CHECK(strstr(o, "-> 0x") && strstr(o, "ns::Widget::frob(int)+0x0"));
		dlclose(rt);
	} else {
		CHECK(strstr(o, "symbol:   _ZN2ns6Widget4frobEi+0x4") != NULL);
	}
	free(o);
	free(b.p);
	free(ring.p);
	free(maps.p);
}

/* A stripped program: names and lines come from its debug file, found by build-id under
 * --debug-dir; without the option the report has neither (and says nothing false). */
static void test_debug_dir(const struct fixture *fx)
{
	char path[4300], args[4400], *o;
	struct tbuf b;
	size_t t2;
	int st;
	char saved[4200];

	o = capture(&st, "cd '%s' && cp rprog rprog.full && objcopy --only-keep-debug rprog.full "
	                 "rprog.debug && strip --strip-all rprog && id=$(readelf -n rprog | "
	                 "sed -n 's/.*Build ID: //p') && mkdir -p dd/.build-id/$(echo $id | cut -c1-2) "
	                 "&& mv rprog.debug dd/.build-id/$(echo $id | cut -c1-2)/$(echo $id | "
	                 "cut -c3-).debug 2>&1", dir);
	free(o);
	if (st) {
		printf("objcopy/strip/readelf unavailable: --debug-dir check skipped\n");
		return;
	}
	make_dump(fx, &b, NULL, 0, &t2);
	snprintf(path, sizeof(path), "%s/stripped.ptrec", dir);
	write_file(path, b.p, b.n);
	free(b.p);
	o = report(&st, path, "");
	CHECK(!strstr(o, "symbol:   leaf+"));
	free(o);
	snprintf(args, sizeof(args), "--debug-dir '%s/dd'", dir);
	o = report(&st, path, args);
	snprintf(saved, sizeof(saved), "%s/rprog.full", dir);
	{
		char *l_rip = line_of(saved, fx->rip - PROG_BASE);
		CHECK(strstr(o, "symbol:   leaf+") != NULL);
		CHECK(l_rip[0] && strstr(o, l_rip) != NULL);
		free(l_rip);
	}
	free(o);
	/* Put the full program back for any later check. */
	free(capture(NULL, "cd '%s' && mv rprog.full rprog", dir));
}

int main(void)
{
#if !defined(__x86_64__)
	SKIP("aarch64: the fixture reads x86-64 objdump output (call instructions, their bytes) "
	     "and the unwinder is x86-64 only so far; the crash tests check the aarch64 reports");
#endif
	const char *top = getenv("top_builddir");
	struct fixture fx;
	struct tbuf b;
	size_t t2;
	char dump[4300];

	setvbuf(stdout, NULL, _IONBF, 0);
	memset(&fx, 0, sizeof(fx));
	cc = getenv("CC");
	nmp = getenv("NM");
	a2l = getenv("ADDR2LINE");
	objdump = getenv("OBJDUMP");
	tool = getenv("PTREC_TOOL");
	if (!cc || !*cc || !nmp || !*nmp || !a2l || !*a2l || !objdump || !*objdump || !tool)
		SKIP("needs $CC, $NM, $ADDR2LINE, $OBJDUMP and $PTREC_TOOL");
	snprintf(dir, sizeof(dir), "%s/tests/tmp", top ? top : ".");
	mkdir(dir, 0700); /* the build tree's scratch folder */
	snprintf(dir, sizeof(dir), "%s/tests/tmp/report.XXXXXX", top ? top : ".");
	if (!mkdtemp(dir))
		SKIP("cannot create a temporary directory: %s", strerror(errno));
	build(&fx);
	if (!grab_vdso(&fx))
		printf("no vDSO in this process: vDSO checks skipped\n");

	make_dump(&fx, &b, NULL, 0, &t2);
	snprintf(dump, sizeof(dump), "%s/crash.ptrec", dir);
	write_file(dump, b.p, b.n);
	free(b.p);

	test_text(&fx, dump);
	test_old_and_new_format(&fx, dump);
	test_options(dump);
	test_json_and_trace(dump);
	test_build_ids(&fx);
	test_cut_and_bad(&fx);
	test_signal_origin();
	test_pt();
	test_cxx();
	test_debug_dir(&fx);
	free(fx.vdso);
	if (!getenv("PTREC_KEEP_TMP")) free(capture(NULL, "rm -rf '%s'", dir));
	return check_done();
}

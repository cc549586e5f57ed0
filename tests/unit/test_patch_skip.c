/* test_patch_skip.c — PTREC_NO_TRACE at run time (capture/patch_skip.h): the list's syntax, the
 * lookup of names in an ELF file's symbol table (this test program's own, and a file that is not
 * ELF), clones matched by their base name, and entries found at a function's start or after its
 * endbr64. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "capture/patch_skip.h"

/* Functions of this program to look up (global: in .symtab, and not inlined away). */
int skip_probe_alpha(int x);
int skip_probe_alphabet(int x);
__attribute__((noinline, used)) int skip_probe_alpha(int x) { return x + 1; }
__attribute__((noinline, used)) int skip_probe_alphabet(int x) { return x + 2; }

static void test_parse(void)
{
	struct ptrec_skip_names n;

	CHECK(ptrec_skip_parse(NULL, &n) == 0);
	CHECK(ptrec_skip_parse("", &n) == 0);
	CHECK(ptrec_skip_parse(" ,: ", &n) == 0);
	CHECK(ptrec_skip_parse("zfree", &n) == 1);
	CHECK_STR(n.name[0], "zfree");
	CHECK(ptrec_skip_parse(" zfree,zmalloc:\tsdsfree  , dictFind,", &n) == 4);
	CHECK_STR(n.name[0], "zfree");
	CHECK_STR(n.name[1], "zmalloc");
	CHECK_STR(n.name[2], "sdsfree");
	CHECK_STR(n.name[3], "dictFind");

	/* At most PTREC_SKIP_NAMES names; a list of PTREC_SKIP_LIST_MAX bytes is refused whole. */
	char big[PTREC_SKIP_LIST_MAX + 1];
	size_t k = 0;
	for (int i = 0; k + 8 < PTREC_SKIP_LIST_MAX - 1; i++)
		k += (size_t)snprintf(big + k, sizeof(big) - k, "f%d,", i);
	CHECK(ptrec_skip_parse(big, &n) == PTREC_SKIP_NAMES);
	memset(big, 'a', PTREC_SKIP_LIST_MAX);
	big[PTREC_SKIP_LIST_MAX] = '\0';
	CHECK(ptrec_skip_parse(big, &n) == -1);
	CHECK(n.n == 0);
}

static void test_find_self(void)
{
	struct ptrec_skip_names n;
	static struct ptrec_skip_addrs a;
	const char *why = "unset";

	/* Non-PIE or PIE: the symbol's value plus the bias is the function's address; with bias 0
	 * the symbol value itself comes back, and &f minus it is the program's bias. */
	CHECK(ptrec_skip_parse("skip_probe_alpha,no_such_function_here", &n) == 2);
	CHECK(ptrec_skip_find(&n, "/proc/self/exe", 0, &a, &why) == 0);
	CHECK(why == NULL);
	/* "skip_probe_alpha" names that function, not skip_probe_alphabet (no '.' after it). */
	CHECK(a.n == 1);
	uintptr_t bias = (uintptr_t)skip_probe_alpha - a.addr[0];
	CHECK(n.found == 1u); /* the second name matched nothing */

	CHECK(ptrec_skip_find(&n, "/proc/self/exe", bias, &a, &why) == 0);
	CHECK(a.n == 1 && a.addr[0] == (uintptr_t)skip_probe_alpha);
	CHECK(ptrec_skip_has(&a, (uintptr_t)skip_probe_alpha));
	CHECK(!ptrec_skip_has(&a, (uintptr_t)skip_probe_alphabet));
	/* 4 bytes in only when the function starts with endbr64 (f3 0f 1e fa) */
	int endbr = !memcmp((const void *)(uintptr_t)skip_probe_alpha, "\xf3\x0f\x1e\xfa", 4);
	CHECK(ptrec_skip_has(&a, (uintptr_t)skip_probe_alpha + 4) == endbr);

	/* A clone suffix: the entry of "skip_probe_alphabet" is covered by that name only. */
	CHECK(ptrec_skip_parse("skip_probe_alpha,skip_probe_alphabet", &n) == 2);
	CHECK(ptrec_skip_find(&n, "/proc/self/exe", bias, &a, &why) == 0);
	CHECK(a.n == 2 && n.found == 3u);
	CHECK(ptrec_skip_has(&a, (uintptr_t)skip_probe_alphabet));

	/* No names: nothing is read. */
	CHECK(ptrec_skip_parse("", &n) == 0);
	CHECK(ptrec_skip_find(&n, "/nonexistent", 0, &a, &why) == 0 && a.n == 0);
}

static void test_find_bad_files(const char *dir)
{
	struct ptrec_skip_names n;
	static struct ptrec_skip_addrs a;
	const char *why = NULL;
	char path[4096];

	CHECK(ptrec_skip_parse("main", &n) == 1);
	CHECK(ptrec_skip_find(&n, "/nonexistent/prog", 0, &a, &why) == -1);
	CHECK_STR(why, "cannot open the file");

	/* Not ELF; an ELF header cut short; an ELF header whose section headers lie beyond the
	 * file: each refused with a reason, nothing found. */
	snprintf(path, sizeof(path), "%s/notelf", dir);
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("#!/bin/sh\necho this is not an ELF file, but long enough for a header......\n", f);
	fclose(f);
	why = NULL;
	CHECK(ptrec_skip_find(&n, path, 0, &a, &why) == -1 && why != NULL && a.n == 0);

	FILE *self = fopen("/proc/self/exe", "rb");
	unsigned char eh[64];
	CHECK(self && fread(eh, 1, sizeof(eh), self) == sizeof(eh));
	if (self)
		fclose(self);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(eh, 1, 40, f) == 40);
	fclose(f);
	why = NULL;
	CHECK(ptrec_skip_find(&n, path, 0, &a, &why) == -1 && why != NULL);

	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(eh, 1, sizeof(eh), f) == sizeof(eh));
	fclose(f);
	why = NULL;
	CHECK(ptrec_skip_find(&n, path, 0, &a, &why) == -1);
	CHECK_STR(why, "section headers unreadable");
	remove(path);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	test_parse();
	test_find_self();
	test_find_bad_files(tmp && *tmp ? tmp : "/tmp");
	return check_done();
}

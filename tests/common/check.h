/* check.h — a minimal assertion kit for the unit tests (Automake exit-code protocol:
 * 0 pass, 1 fail, 77 skip, 99 hard error). */
#ifndef PTREC_TEST_CHECK_H
#define PTREC_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond) do { \
	check_count++; \
	if (!(cond)) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	} } while (0)

#define CHECK_EQ_U64(a, b) do { \
	uint64_t ca_ = (uint64_t)(a), cb_ = (uint64_t)(b); \
	check_count++; \
	if (ca_ != cb_) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s == %s (0x%" PRIx64 " != 0x%" PRIx64 ")\n", \
		        __FILE__, __LINE__, #a, #b, ca_, cb_); \
	} } while (0)

#define CHECK_STR(a, b) do { \
	const char *ca_ = (a), *cb_ = (b); \
	check_count++; \
	if (!ca_ || !cb_ || strcmp(ca_, cb_)) { \
		check_failures++; \
		fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n", __FILE__, \
		        __LINE__, #a, #b, ca_ ? ca_ : "(null)", cb_ ? cb_ : "(null)"); \
	} } while (0)

/* Exit with 77 (SKIP) and the reason. */
#define SKIP(...) do { printf("SKIP: "); printf(__VA_ARGS__); printf("\n"); exit(77); } while (0)

/* 1 when this program is not an x86-64 one but the kernel's /proc/cpuinfo describes x86 CPUs
 * (it has vendor_id lines): an aarch64 program run by qemu-user on an x86-64 machine (the arm64
 * phase of .ci/run), where the kernel features qemu does not emulate are missing. */
static inline int test_under_qemu_user(void)
{
#if defined(__x86_64__)
	return 0;
#else
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	int x86 = 0;
	while (f && !x86 && fgets(line, sizeof(line), f))
		x86 = strncmp(line, "vendor_id", 9) == 0;
	if (f)
		fclose(f);
	return x86;
#endif
}

/* Ends main(): prints the totals and returns the Automake status. */
static inline int check_done(void)
{
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif

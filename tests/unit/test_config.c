/* test_config.c — configuration defaults, PTREC_* environment variables, error strings and
 * backend names. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ptrec.h"
#include "core/settings.h"

static void test_sizes(void)
{
	size_t v = 0;
	CHECK(ptrec_parse_size("4096", &v) == 0 && v == 4096);
	CHECK(ptrec_parse_size("0x2000", &v) == 0 && v == 0x2000);
	CHECK(ptrec_parse_size("64K", &v) == 0 && v == 65536);
	CHECK(ptrec_parse_size("4MiB", &v) == 0 && v == 4u << 20);
	CHECK(ptrec_parse_size("1G", &v) == 0 && v == 1u << 30);
	CHECK(ptrec_parse_size("", &v) == -PTREC_EINVAL);
	CHECK(ptrec_parse_size(NULL, &v) == -PTREC_EINVAL);
	CHECK(ptrec_parse_size("-5", &v) == -PTREC_EINVAL);
	CHECK(ptrec_parse_size("12Q", &v) == -PTREC_EINVAL);
	CHECK(ptrec_parse_size("99999999999999999999", &v) == -PTREC_EINVAL);
	CHECK(ptrec_parse_size("17179869184G", &v) == -PTREC_EINVAL);
	CHECK(ptrec_ring_size_valid(4096));
	CHECK(ptrec_ring_size_valid(128u << 20));
	CHECK(!ptrec_ring_size_valid(2048));
	CHECK(!ptrec_ring_size_valid(3 * 4096));
	CHECK(!ptrec_ring_size_valid(256u << 20));
}

static void test_defaults_and_env(void)
{
	struct ptrec_config cfg;

	unsetenv("PTREC_BACKEND");
	unsetenv("PTREC_RING_SIZE");
	CHECK(ptrec_config_init(NULL) == -PTREC_EINVAL);
	CHECK(ptrec_config_init(&cfg) == 0);
	CHECK(cfg.struct_size == sizeof(cfg));
	CHECK(cfg.backend == PTREC_BACKEND_AUTO);
	CHECK(cfg.ring_size == PTREC_RING_DEFAULT);
	CHECK(cfg.report_branches == 64);
	CHECK(!(cfg.flags & PTREC_F_MINIDUMP));

	setenv("PTREC_BACKEND", "instrumented", 1);
	setenv("PTREC_MINIDUMP", "1", 1);
	setenv("PTREC_RING_SIZE", "1M", 1);
	setenv("PTREC_BRANCHES", "128", 1);
	setenv("PTREC_DIR", "/var/crash", 1);
	CHECK(ptrec_config_init(&cfg) == 0);
	CHECK(cfg.backend == PTREC_BACKEND_INSTRUMENTED);
	CHECK(cfg.ring_size == 1u << 20);
	CHECK(cfg.report_branches == 128);
	CHECK_STR(cfg.dump_dir, "/var/crash");
	CHECK(cfg.flags & PTREC_F_MINIDUMP);
	setenv("PTREC_MINIDUMP", "0", 1);
	CHECK(ptrec_config_init(&cfg) == 0 && !(cfg.flags & PTREC_F_MINIDUMP));

	/* Invalid values keep the defaults, and are named (escaped) for ptrec_status. */
	CHECK_STR(ptrec_settings_problems(), "");
	setenv("PTREC_BACKEND", "magic", 1);
	setenv("PTREC_RING_SIZE", "3000", 1);
	setenv("PTREC_MEMORY", "-5", 1);
	setenv("PTREC_BRANCHES", "abc\n", 1);
	setenv("PTREC_REPORT_TIMEOUT_MS", "50", 1);
	setenv("PTREC_MINIDUMP", "yes", 1);
	CHECK(ptrec_config_init(&cfg) == 0);
	CHECK(!(cfg.flags & PTREC_F_MINIDUMP));
	CHECK(cfg.backend == PTREC_BACKEND_AUTO);
	CHECK(cfg.ring_size == PTREC_RING_DEFAULT);
	CHECK(cfg.memory_budget == PTREC_MEMORY_DEFAULT);
	CHECK(cfg.report_branches == 64);
	CHECK(cfg.report_timeout_ms == 10000);
	const char *p = ptrec_settings_problems();
	CHECK(strstr(p, "PTREC_BACKEND=magic: not auto, none,") != NULL);
	CHECK(strstr(p, "PTREC_RING_SIZE=3000: not a power of two from 4K to 128M, default kept") != NULL);
	CHECK(strstr(p, "PTREC_MEMORY=-5: not a size") != NULL);
	CHECK(strstr(p, "PTREC_BRANCHES=abc\\x0a: not a number") != NULL);
	CHECK(strstr(p, "PTREC_REPORT_TIMEOUT_MS=50: not 0 (no report at crash time)") != NULL);
	CHECK(strstr(p, "PTREC_MINIDUMP=yes: not 0 or 1") != NULL);
	unsetenv("PTREC_MINIDUMP");
	/* 0 is valid: no report at crash time. */
	setenv("PTREC_REPORT_TIMEOUT_MS", "0", 1);
	CHECK(ptrec_config_init(&cfg) == 0 && cfg.report_timeout_ms == 0);
	unsetenv("PTREC_MEMORY");
	unsetenv("PTREC_REPORT_TIMEOUT_MS");
	unsetenv("PTREC_BRANCHES");
}

static void test_names(void)
{
	CHECK_STR(ptrec_strerror(0), "success");
	CHECK_STR(ptrec_strerror(-PTREC_ENOTIMPL), ptrec_strerror(PTREC_ENOTIMPL));
	CHECK_STR(ptrec_strerror(-9999), "unknown error");
	for (int e = 0; e < PTREC_ERROR_COUNT_; e++)
		CHECK(strcmp(ptrec_strerror(-e), "unknown error") != 0);
	for (int b = 0; b < PTREC_BACKEND_COUNT_; b++)
		CHECK(ptrec_backend_parse(ptrec_backend_name((enum ptrec_backend)b)) == b);
	CHECK(ptrec_backend_parse("pt") == -PTREC_EINVAL);
	CHECK_STR(ptrec_backend_name(PTREC_BACKEND_COUNT_), "unknown");
	CHECK_STR(ptrec_version(), PACKAGE_VERSION);
}

int main(void)
{
	test_sizes();
	test_defaults_and_env();
	test_names();
	return check_done();
}

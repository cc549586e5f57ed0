/* settings.c — recorder configuration: defaults and PTREC_* environment variables.  An invalid
 * value keeps the default and is said once on stderr and kept for ptrec_status. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "core/safe_str.h"
#include "core/settings.h"

const char *ptrec_env(const char *name)
{
#ifdef HAVE_SECURE_GETENV
	return secure_getenv(name);
#else
	return getenv(name);
#endif
}

int ptrec_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -PTREC_EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -PTREC_EINVAL;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'b' || *end == 'B') && shift)
		end++;
	if (*end)
		return -PTREC_EINVAL;
	if (shift && v > (~0ULL >> shift))
		return -PTREC_EINVAL;
	*out = (size_t)(v << shift);
	return 0;
}

int ptrec_ring_size_valid(size_t size)
{
	return size >= PTREC_RING_MIN && size <= PTREC_RING_MAX && (size & (size - 1)) == 0;
}

/* The invalid PTREC_* values seen so far, "NAME=VALUE: why" joined by "; ". */
static char problems[1024];
static _Atomic int problems_said;
static pthread_mutex_t problems_lock = PTHREAD_MUTEX_INITIALIZER;

/* Notes that name=value was invalid (why) and the default is kept. */
static void bad(const char *name, const char *value, const char *why)
{
	struct ptrec_sbuf b;
	size_t used;

	pthread_mutex_lock(&problems_lock);
	used = strlen(problems);
	if (!strstr(problems, name)) {
		ptrec_sbuf_init(&b, problems + used, sizeof(problems) - used);
		if (used)
			ptrec_sbuf_str(&b, "; ");
		ptrec_sbuf_str(&b, name);
		ptrec_sbuf_str(&b, "=");
		ptrec_sbuf_escaped(&b, value);
		ptrec_sbuf_str(&b, ": ");
		ptrec_sbuf_str(&b, why);
		ptrec_sbuf_str(&b, ", default kept");
		if (b.overflow)
			problems[used] = '\0';
	}
	pthread_mutex_unlock(&problems_lock);
}

const char *ptrec_settings_problems(void)
{
	return problems;
}

/* Reads an unsigned variable within [lo, hi] (0 also allowed when zero_ok). */
static void env_uint(const char *name, unsigned *field, unsigned lo, unsigned hi, int zero_ok,
                     const char *range)
{
	const char *s = ptrec_env(name);
	size_t v;
	if (!s)
		return;
	if (ptrec_parse_size(s, &v) != 0)
		bad(name, s, "not a number");
	else if (v > hi || (v < lo && !(zero_ok && v == 0)))
		bad(name, s, range);
	else
		*field = (unsigned)v;
}

PTREC_API int ptrec_config_init(struct ptrec_config *cfg)
{
	const char *s;
	size_t v;
	int b;

	if (!cfg)
		return -PTREC_EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	cfg->struct_size = sizeof(*cfg);
	cfg->backend = PTREC_BACKEND_AUTO;
	cfg->ring_size = PTREC_RING_DEFAULT;
	cfg->memory_budget = PTREC_MEMORY_DEFAULT;
	cfg->report_branches = 64;
	cfg->report_timeout_ms = 10000;
	cfg->snapshot_interval_ms = 1000;
	cfg->snapshot_max_files = 16;

	if ((s = ptrec_env("PTREC_BACKEND"))) {
		if ((b = ptrec_backend_parse(s)) >= 0)
			cfg->backend = (enum ptrec_backend)b;
		else
			bad("PTREC_BACKEND", s, "not auto, none, intel_pt, intel_bts or instrumented");
	}
	if ((s = ptrec_env("PTREC_RING_SIZE"))) {
		if (ptrec_parse_size(s, &v) != 0)
			bad("PTREC_RING_SIZE", s, "not a size (bytes, or with K/M/G)");
		else if (!ptrec_ring_size_valid(v))
			bad("PTREC_RING_SIZE", s, "not a power of two from 4K to 128M");
		else
			cfg->ring_size = v;
	}
	if ((s = ptrec_env("PTREC_MEMORY"))) {
		if (ptrec_parse_size(s, &v) != 0)
			bad("PTREC_MEMORY", s, "not a size (bytes, or with K/M/G)");
		else if (v < PTREC_RING_MIN)
			bad("PTREC_MEMORY", s, "less than one 4K ring");
		else
			cfg->memory_budget = v;
	}
	if ((s = ptrec_env("PTREC_DIR")) && *s) {
		if (strlen(s) < PTREC_DIR_MAX)
			cfg->dump_dir = s;
		else
			bad("PTREC_DIR", "...", "path too long");
	}
	if ((s = ptrec_env("PTREC_FILTER")) && *s) {
		if (strlen(s) < PTREC_FILTER_MAX)
			cfg->filter = s;
		else
			bad("PTREC_FILTER", "...", "filter too long");
	}
	env_uint("PTREC_BRANCHES", &cfg->report_branches, 1, 1000000, 0, "not from 1 to 1000000");
	env_uint("PTREC_REPORT_TIMEOUT_MS", &cfg->report_timeout_ms, PTREC_REPORT_TIMEOUT_MIN,
	         PTREC_REPORT_TIMEOUT_MAX, 1,
	         "not 0 (no report at crash time) or from 100 to 3600000 ms");
	env_uint("PTREC_SNAPSHOT_INTERVAL_MS", &cfg->snapshot_interval_ms, 0, 0xffffffffu, 1, "");
	env_uint("PTREC_SNAPSHOT_MAX", &cfg->snapshot_max_files, 0, 0xffffffffu, 1, "");
	env_uint("PTREC_FLAGS", &cfg->flags, 0, 0xffffffffu, 1, "");
	if ((s = ptrec_env("PTREC_MINIDUMP"))) {
		if (!strcmp(s, "1"))
			cfg->flags |= PTREC_F_MINIDUMP;
		else if (!strcmp(s, "0"))
			cfg->flags &= ~PTREC_F_MINIDUMP;
		else
			bad("PTREC_MINIDUMP", s, "not 0 or 1");
	}
	if ((s = ptrec_env("PTREC_CHAIN"))) {
		if (!strcmp(s, "first"))
			cfg->flags |= PTREC_F_DUMP_FIRST;
		else if (!strcmp(s, "dying"))
			cfg->flags &= ~PTREC_F_DUMP_FIRST;
		else
			bad("PTREC_CHAIN", s, "not first or dying");
	}
	if (problems[0] && !atomic_exchange(&problems_said, 1)) {
		ptrec_stderr("ptrec: invalid settings ignored: ");
		ptrec_stderr(problems);
		ptrec_stderr("\n");
	}
	return 0;
}

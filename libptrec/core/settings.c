/* config.c — recorder configuration: defaults and PTREC_* environment variables. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptrec.h"
#include "core/settings.h"

static const char *env(const char *name)
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

static void env_uint(const char *name, unsigned *field)
{
	size_t v;
	if (ptrec_parse_size(env(name), &v) == 0 && v <= 0xffffffffu)
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

	if ((s = env("PTREC_BACKEND")) && (b = ptrec_backend_parse(s)) >= 0)
		cfg->backend = (enum ptrec_backend)b;
	if (ptrec_parse_size(env("PTREC_RING_SIZE"), &v) == 0 && ptrec_ring_size_valid(v))
		cfg->ring_size = v;
	if (ptrec_parse_size(env("PTREC_MEMORY"), &v) == 0 && v >= PTREC_RING_MIN)
		cfg->memory_budget = v;
	if ((s = env("PTREC_DIR")) && *s)
		cfg->dump_dir = s;
	if ((s = env("PTREC_FILTER")) && *s)
		cfg->filter = s;
	env_uint("PTREC_BRANCHES", &cfg->report_branches);
	env_uint("PTREC_REPORT_TIMEOUT_MS", &cfg->report_timeout_ms);
	env_uint("PTREC_SNAPSHOT_INTERVAL_MS", &cfg->snapshot_interval_ms);
	env_uint("PTREC_SNAPSHOT_MAX", &cfg->snapshot_max_files);
	env_uint("PTREC_FLAGS", &cfg->flags);
	if ((s = env("PTREC_CHAIN")) && !strcmp(s, "first"))
		cfg->flags |= PTREC_F_DUMP_FIRST;
	else if (s && !strcmp(s, "dying"))
		cfg->flags &= ~PTREC_F_DUMP_FIRST;
	return 0;
}

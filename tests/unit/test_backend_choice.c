/* test_backend_choice.c — how the recorder picks its backend: auto tries intel_pt, then
 * intel_bts, then instrumented, else none; an explicit choice probes only that backend and
 * fails with -PTREC_ENOSUPP when it refuses; every refusal keeps its reason.  The probes here
 * are fakes that answer as a machine would. */
#include "config.h"

#include <stdio.h>

#include "check.h"
#include "runtime/recorder.h"

static char probe_log[128];  /* which probes ran, in order */
static int pt_ok, bts_ok, soft_ok;

static int probe(const char *name, int ok, const char *why, char *reason, size_t len)
{
	strcat(probe_log, name);
	strcat(probe_log, " ");
	if (ok)
		return 0;
	snprintf(reason, len, "%s", why);
	return -PTREC_EPERM;
}

static int pt_probe(const struct ptrec_config *c, char *r, size_t l)
{
	(void)c;
	return probe("pt", pt_ok, "perf_event_paranoid is 3: unprivileged perf is disabled", r, l);
}

static int bts_probe(const struct ptrec_config *c, char *r, size_t l)
{
	(void)c;
	return probe("bts", bts_ok, "no intel_bts PMU in /sys/bus/event_source/devices", r, l);
}

static int soft_probe(const struct ptrec_config *c, char *r, size_t l)
{
	(void)c;
	return probe("soft", soft_ok, "no instrumented code ran", r, l);
}

static const struct ptrec_backend_ops fake_pt = {.id = PTREC_BACKEND_INTEL_PT, .probe = pt_probe};
static const struct ptrec_backend_ops fake_bts = {.id = PTREC_BACKEND_INTEL_BTS, .probe = bts_probe};
static const struct ptrec_backend_ops fake_soft = {.id = PTREC_BACKEND_INSTRUMENTED,
                                                   .probe = soft_probe};

static char reasons[PTREC_BACKEND_COUNT_][PTREC_REASON_MAX];

static int choose(enum ptrec_backend want, const struct ptrec_backend_ops *const *c, size_t n,
                  const struct ptrec_backend_ops **chosen)
{
	struct ptrec_config cfg;
	ptrec_config_init(&cfg);
	cfg.backend = want;
	probe_log[0] = '\0';
	return ptrec_backend_choose(c, n, &cfg, reasons, chosen);
}

int main(void)
{
	const struct ptrec_backend_ops *all[] = {&fake_soft, &fake_bts, &fake_pt}; /* any order */
	const struct ptrec_backend_ops *no_hw[] = {NULL, NULL, &fake_soft};
	const struct ptrec_backend_ops *chosen;

	/* A machine with PT: auto takes it and probes nothing else. */
	pt_ok = bts_ok = soft_ok = 1;
	CHECK(choose(PTREC_BACKEND_AUTO, all, 3, &chosen) == PTREC_BACKEND_INTEL_PT);
	CHECK(chosen == &fake_pt);
	CHECK_STR(probe_log, "pt ");
	CHECK_STR(reasons[PTREC_BACKEND_INTEL_PT], "");

	/* PT refused (paranoid level): BTS is next. */
	pt_ok = 0;
	CHECK(choose(PTREC_BACKEND_AUTO, all, 3, &chosen) == PTREC_BACKEND_INTEL_BTS);
	CHECK_STR(probe_log, "pt bts ");
	CHECK_STR(reasons[PTREC_BACKEND_INTEL_PT],
	          "perf_event_paranoid is 3: unprivileged perf is disabled");
	CHECK_STR(reasons[PTREC_BACKEND_INTEL_BTS], "");

	/* A VM: no PMU at all, an instrumented program. */
	bts_ok = 0;
	CHECK(choose(PTREC_BACKEND_AUTO, all, 3, &chosen) == PTREC_BACKEND_INSTRUMENTED);
	CHECK(chosen == &fake_soft);
	CHECK_STR(probe_log, "pt bts soft ");
	CHECK_STR(reasons[PTREC_BACKEND_INTEL_BTS], "no intel_bts PMU in /sys/bus/event_source/devices");

	/* Nothing works: none, with three reasons. */
	soft_ok = 0;
	CHECK(choose(PTREC_BACKEND_AUTO, all, 3, &chosen) == PTREC_BACKEND_NONE);
	CHECK(chosen == NULL);
	CHECK_STR(reasons[PTREC_BACKEND_INSTRUMENTED], "no instrumented code ran");
	CHECK(reasons[PTREC_BACKEND_INTEL_PT][0] && reasons[PTREC_BACKEND_INTEL_BTS][0]);

	/* Hardware backends not built in: said so, without probing. */
	soft_ok = 1;
	CHECK(choose(PTREC_BACKEND_AUTO, no_hw, 3, &chosen) == PTREC_BACKEND_INSTRUMENTED);
	CHECK_STR(probe_log, "soft ");
	CHECK_STR(reasons[PTREC_BACKEND_INTEL_PT], "not built into this library");
	CHECK_STR(reasons[PTREC_BACKEND_INTEL_BTS], "not built into this library");

	/* An explicit backend is the only one probed, and its refusal is an error. */
	pt_ok = 1;
	CHECK(choose(PTREC_BACKEND_INTEL_BTS, all, 3, &chosen) == -PTREC_ENOSUPP);
	CHECK_STR(probe_log, "bts ");
	CHECK(chosen == NULL);
	CHECK_STR(reasons[PTREC_BACKEND_INTEL_BTS], "no intel_bts PMU in /sys/bus/event_source/devices");
	CHECK_STR(reasons[PTREC_BACKEND_INTEL_PT], "");
	CHECK(choose(PTREC_BACKEND_INSTRUMENTED, all, 3, &chosen) == PTREC_BACKEND_INSTRUMENTED);
	CHECK_STR(probe_log, "soft ");
	CHECK(choose(PTREC_BACKEND_INTEL_PT, no_hw, 3, &chosen) == -PTREC_ENOSUPP);
	CHECK_STR(reasons[PTREC_BACKEND_INTEL_PT], "not built into this library");

	/* none probes nothing. */
	CHECK(choose(PTREC_BACKEND_NONE, all, 3, &chosen) == PTREC_BACKEND_NONE);
	CHECK_STR(probe_log, "");
	CHECK(chosen == NULL);
	return check_done();
}

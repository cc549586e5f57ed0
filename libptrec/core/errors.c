/* errors.c — error strings, version and backend names.
 * Async-signal-safe: only constant tables, no calls. */
#include "config.h"
#include <string.h>

#include "ptrec.h"

static const char *const error_text[PTREC_ERROR_COUNT_] = {
	[PTREC_OK] = "success",
	[PTREC_EINVAL] = "invalid argument",
	[PTREC_ENOMEM] = "out of memory or memory budget exhausted",
	[PTREC_ENOTIMPL] = "not implemented in this build",
	[PTREC_ENOSUPP] = "not supported on this machine",
	[PTREC_EPERM] = "permission denied by the kernel",
	[PTREC_EBUSY] = "resource busy",
	[PTREC_EIO] = "input/output error",
	[PTREC_EFORMAT] = "malformed input",
	[PTREC_ETRUNC] = "input truncated",
	[PTREC_ESTATE] = "wrong state for this call",
	[PTREC_ERATE] = "refused by rate limit or file cap",
	[PTREC_ENOSYNC] = "no synchronisation point (PSB) found",
	[PTREC_ENOMAP] = "address not in the code image",
	[PTREC_EOVERFLOW] = "overflow",
	[PTREC_EEOS] = "end of stream",
};

PTREC_API const char *ptrec_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= PTREC_ERROR_COUNT_ || !error_text[err])
		return "unknown error";
	return error_text[err];
}

PTREC_API const char *ptrec_version(void)
{
	return PACKAGE_VERSION;
}

static const char *const backend_names[PTREC_BACKEND_COUNT_] = {
	[PTREC_BACKEND_AUTO] = "auto",
	[PTREC_BACKEND_NONE] = "none",
	[PTREC_BACKEND_INTEL_PT] = "intel_pt",
	[PTREC_BACKEND_INTEL_BTS] = "intel_bts",
	[PTREC_BACKEND_INSTRUMENTED] = "instrumented",
};

PTREC_API const char *ptrec_backend_name(enum ptrec_backend backend)
{
	if ((unsigned)backend >= PTREC_BACKEND_COUNT_)
		return "unknown";
	return backend_names[backend];
}

PTREC_API int ptrec_backend_parse(const char *name)
{
	if (!name)
		return -PTREC_EINVAL;
	for (int i = 0; i < PTREC_BACKEND_COUNT_; i++)
		if (strcmp(name, backend_names[i]) == 0)
			return i;
	return -PTREC_EINVAL;
}

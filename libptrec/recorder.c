/* recorder.c — recorder lifecycle.  Placeholder until the recorder issue lands: every call
 * returns -PTREC_ENOTIMPL, never pretends. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ptrec.h"

PTREC_API int ptrec_init(const struct ptrec_config *cfg) { (void)cfg; return -PTREC_ENOTIMPL; }
PTREC_API int ptrec_shutdown(void) { return -PTREC_ENOTIMPL; }
PTREC_API int ptrec_thread_attach(void) { return -PTREC_ENOTIMPL; }
PTREC_API int ptrec_thread_detach(void) { return -PTREC_ENOTIMPL; }
PTREC_API int ptrec_snapshot_path(const char *reason, char *path, size_t pathlen)
{
	(void)reason; (void)path; (void)pathlen;
	return -PTREC_ENOTIMPL;
}
PTREC_API int ptrec_snapshot(const char *reason) { return ptrec_snapshot_path(reason, NULL, 0); }
PTREC_API int ptrec_crash_dump(int signo, siginfo_t *info, void *uc)
{
	(void)signo; (void)info; (void)uc;
	return -PTREC_ENOTIMPL;
}
PTREC_API void ptrec_assert_fail(const char *expr, const char *file, int line, const char *func,
                                 const char *fmt, ...)
{
	(void)expr; (void)file; (void)line; (void)func; (void)fmt;
	abort();
}
PTREC_API int ptrec_status(struct ptrec_status *st)
{
	if (!st || st->struct_size != sizeof(*st))
		return -PTREC_EINVAL;
	memset(st, 0, sizeof(*st));
	st->struct_size = sizeof(*st);
	return 0;
}

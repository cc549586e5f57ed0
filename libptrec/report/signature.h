/* signature.h — the crash signature of a report: a short name for "this crash site" made from
 * the event thread's frames, the same across runs of one program (ASLR, other pids, other
 * threads) and different for another site.  `ptrec list --group` counts crashes by it and
 * `ptrec upload` sends it to crash servers.  The idea is Socorro's: walk the frames from the
 * innermost, skip the irrelevant ones (signal trampolines, raise/abort, libc's assert and
 * terminate machinery, libptrec's own frames), keep generic ones (memcpy, malloc, C library
 * code) and go on to their caller, and end with the first frame that is neither; names are
 * normalized (no offsets or addresses, C++ parameters and template arguments removed) and
 * joined with " | ".  The rules are in doc/report-format.md.  Not async-signal-safe. */
#ifndef PTREC_SIGNATURE_H
#define PTREC_SIGNATURE_H

#include <stddef.h>

#define PTREC_SIGNATURE_MAX 256   /* bytes with the NUL: a signature has at most 255 */
#define PTREC_SIGNATURE_FRAMES 8  /* frames in a signature at most */

struct ptrec_report;

/* Writes into out (cap bytes, NUL-terminated, cut if longer) the normalized form of one
 * function name, demangled or not: a C++ name without its return type, parameters and
 * qualifiers after them, template arguments collapsed to "<T>" ("ns::Map<T>::find"), and
 * without compiler clone suffixes (".part.0", ".cold", ".isra.0", ".constprop.0",
 * ".lto_priv.0", ".llvm.NNN", " [clone .cold]").  Returns out. */
char *ptrec_signature_normalize(const char *name, char *out, size_t cap);

/* Writes the signature of report r's event thread into out (cap bytes, at most
 * PTREC_SIGNATURE_MAX - 1 characters): from its unwound stack, else from the call stack
 * rebuilt from its branch history; "EMPTY: no frame" when neither has a frame.  Returns out.
 * ptrec_report_build stores it in r->signature. */
char *ptrec_report_signature(struct ptrec_report *r, char *out, size_t cap);

/* The signature of the dump file at path, as `ptrec report` would show it (the report is built
 * for its event thread only; debug_dirs as ptrec_report_options.debug_dirs, may be NULL).
 * Returns 0 with out filled, or -PTREC_EIO / -PTREC_EFORMAT... (the dump could not be read
 * or parsed; out is "") or -PTREC_ENOMEM. */
int ptrec_dump_signature(const char *path, const char *const *debug_dirs, char *out,
                         size_t cap);

#endif

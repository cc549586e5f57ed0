/* debug_file.h — finds the separate debug file of an ELF: /usr/lib/debug/.build-id/xx/yyyy.debug
 * (and the same under each --debug-dir), then .gnu_debuglink next to the file, in .debug/, and
 * under the debug directories; and a debuginfod client's cache by build-id
 * (ptrec_debug_cache_open).  Candidates are verified (build-id or CRC32) before use.
 * Not async-signal-safe. */
#ifndef PTREC_DEBUG_FILE_H
#define PTREC_DEBUG_FILE_H

#include "symbols/elf_symbols.h"
#include "core/warnings.h"

/* Opens the debug file of elf (read from path).  debug_dirs is a NULL-terminated list of extra
 * directories (may be NULL), searched before /usr/lib/debug.  A candidate that fails
 * verification is skipped with a warning.  Returns 0 with *dbg open, -PTREC_ENOMAP if none
 * was found, -PTREC_ENOMEM. */
int ptrec_debug_file_open(const struct ptrec_elf *elf, const char *path,
                          const char *const *debug_dirs, struct ptrec_elf *dbg,
                          struct ptrec_warnings *w);

/* Opens the file of kind ("debuginfo" or "executable") that a debuginfod client keeps for the
 * build-id id in its cache directory cache: CACHE/HEX/KIND (elfutils' layout).  Only reads: the
 * tool fetches (tool/debuginfod.c).  The file must be an x86-64 ELF with build-id id, else it is
 * skipped with a warning.  Returns 0 with *out open, -PTREC_ENOMAP if there is none, or
 * -PTREC_ENOMEM. */
int ptrec_debug_cache_open(const char *cache, const uint8_t *id, size_t id_len, const char *kind,
                           struct ptrec_elf *out, struct ptrec_warnings *w);

#endif

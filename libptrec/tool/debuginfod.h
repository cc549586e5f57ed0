/* debuginfod.h — `ptrec report`'s client of debuginfod servers (DEBUGINFOD_URLS): it fetches the
 * debug files and executables a report lacks, by build-id, into elfutils' client cache, from
 * which the symbols layer reads them (symbols/debug_file.h).  The only code of ptrec that goes
 * to the network, always through a child: elfutils' `debuginfod-find` when it is on PATH, else
 * curl(1).  The report child started at crash time never has DEBUGINFOD_URLS unless
 * PTREC_REPORT_DEBUGINFOD=1 (crash/report_child.c). */
#ifndef PTREC_TOOL_DEBUGINFOD_H
#define PTREC_TOOL_DEBUGINFOD_H

#include <stddef.h>

struct ptrec_report;
struct ptrec_warnings;

/* The client cache directory by elfutils' rules: $DEBUGINFOD_CACHE_PATH, else
 * $XDG_CACHE_HOME/debuginfod_client, else $HOME/.cache/debuginfod_client.  Returns buf, or NULL
 * when none can be named (no HOME). */
const char *tool_debuginfod_cache(char *buf, size_t cap);

/* For each module report r used (loaded) that lacks its file (PTREC_MODULE_NO_FILE: the
 * executable and the debug file are fetched) or its debug information (PTREC_MODULE_NO_DEBUG:
 * the debug file), and has a build-id in the dump: fetches them from the servers of
 * DEBUGINFOD_URLS into cache, saying in notes what was fetched and what no server had.  Each
 * server gets DEBUGINFOD_TIMEOUT seconds (default 90) to start sending.  Returns the number of
 * files fetched (0 when DEBUGINFOD_URLS is unset or empty): build the report again to use
 * them. */
size_t tool_debuginfod_fetch(struct ptrec_report *r, const char *cache,
                             struct ptrec_warnings *notes);

#endif

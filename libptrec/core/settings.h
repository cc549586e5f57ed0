/* settings.h — internal configuration helpers shared by the library and the tool. */
#ifndef PTREC_CONFIG_INTERNAL_H
#define PTREC_CONFIG_INTERNAL_H

#include <stddef.h>

#define PTREC_RING_MIN (4u << 10)          /* smallest ring: one 4 KiB page */
#define PTREC_RING_MAX (128u << 20)        /* largest ring: the biggest ToPA region */
#define PTREC_RING_DEFAULT (64u << 10)     /* default bytes per thread ring */
#define PTREC_MEMORY_DEFAULT (64u << 20)   /* default budget for all rings */
#define PTREC_REPORT_TIMEOUT_MIN 100u      /* shortest crash-time report timeout (0 = none) */
#define PTREC_REPORT_TIMEOUT_MAX 3600000u  /* longest: one hour */
#define PTREC_DIR_MAX 4000u                /* PTREC_DIR must be shorter (room for names) */
#define PTREC_FILTER_MAX 1024u             /* PTREC_FILTER must be shorter */

/* Parses "123", "0x1000", "64K", "4MiB", "1G" into bytes.  Returns 0 or -PTREC_EINVAL
 * (NULL, empty, negative, trailing junk, overflow). */
int ptrec_parse_size(const char *s, size_t *out);

/* Returns 1 if size is a power of two within [PTREC_RING_MIN, PTREC_RING_MAX], else 0. */
int ptrec_ring_size_valid(size_t size);

/* getenv, or secure_getenv where libc has it (NULL in setuid/setgid and AT_SECURE processes). */
const char *ptrec_env(const char *name);

/* The invalid PTREC_* values ptrec_config_init has seen in this process, as
 * "NAME=VALUE: why, default kept" joined by "; ", or "".  Each was also said once on stderr. */
const char *ptrec_settings_problems(void);

#endif

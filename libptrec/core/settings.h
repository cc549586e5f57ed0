/* settings.h — internal configuration helpers shared by the library and the tool. */
#ifndef PTREC_CONFIG_INTERNAL_H
#define PTREC_CONFIG_INTERNAL_H

#include <stddef.h>

#define PTREC_RING_MIN (4u << 10)          /* smallest ring: one 4 KiB page */
#define PTREC_RING_MAX (128u << 20)        /* largest ring: the biggest ToPA region */
#define PTREC_RING_DEFAULT (64u << 10)     /* default bytes per thread ring */
#define PTREC_MEMORY_DEFAULT (64u << 20)   /* default budget for all rings */

/* Parses "123", "0x1000", "64K", "4MiB", "1G" into bytes.  Returns 0 or -PTREC_EINVAL
 * (NULL, empty, negative, trailing junk, overflow). */
int ptrec_parse_size(const char *s, size_t *out);

/* Returns 1 if size is a power of two within [PTREC_RING_MIN, PTREC_RING_MAX], else 0. */
int ptrec_ring_size_valid(size_t size);

#endif

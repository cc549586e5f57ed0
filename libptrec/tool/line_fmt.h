/* line_fmt.h — building the fixed-format lines of `ptrec decode` listings in a buffer (an
 * instruction address, a branch event), several times faster than printf, byte for byte what
 * the printf formats in the comments would print. */
#ifndef PTREC_LINE_FMT_H
#define PTREC_LINE_FMT_H

#include <stdint.h>
#include <string.h>

/* Writes "%016" PRIx64 of v at p; returns the end. */
static inline char *line_hex16(char *p, uint64_t v)
{
	static const char digit[16] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--, v >>= 4)
		p[i] = digit[v & 15];
	return p + 16;
}

/* Writes "%" PRIu64 of v at p; returns the end. */
static inline char *line_dec(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Writes "%-*s" of s (width w) at p; returns the end. */
static inline char *line_pad(char *p, const char *s, size_t w)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	p += n;
	for (; n < w; n++)
		*p++ = ' ';
	return p;
}

/* Writes the string s at p; returns the end. */
static inline char *line_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

#endif

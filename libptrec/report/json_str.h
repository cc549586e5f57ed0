/* json_str.h — the one JSON string writer of the read side, used by the JSON report, the
 * trace-event timeline and `ptrec info --json`. */
#ifndef PTREC_REPORT_JSON_STR_H
#define PTREC_REPORT_JSON_STR_H

#include <stdio.h>

/* Writes s (NULL as "") to out as a JSON string literal with its quotes (RFC 8259):
 * - '"' and '\\' are escaped; \b \f \n \r \t take their short forms; every other byte below
 *   0x20, and 0x7f, is written as \u00XX, so the text has no control characters at all;
 * - well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF) is
 *   copied as it is;
 * - any other byte (a stray continuation byte, a truncated or overlong sequence, 0xc0, 0xc1,
 *   0xf5-0xff) is written as \u00XX with XX its value: the output is always valid UTF-8 and
 *   the byte can still be read back.
 * Thread names, file names and reasons come from the crashed process: this is what keeps them
 * from breaking or injecting into the JSON. */
void ptrec_json_str(FILE *out, const char *s);

/* The length of the well-formed UTF-8 sequence at p (1-4), or 0 if p does not start one. */
size_t ptrec_utf8_seq_len(const unsigned char *p);

#endif

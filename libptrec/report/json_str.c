/* json_str.c — the one JSON string writer of the read side (contract in json_str.h). */
#include "config.h"

#include <stddef.h>

#include "report/json_str.h"

size_t ptrec_utf8_seq_len(const unsigned char *p)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80; /* no overlong 3-byte forms */
		unsigned hi = c == 0xed ? 0x9f : 0xbf; /* no surrogates U+D800..U+DFFF */
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned lo = c == 0xf0 ? 0x90 : 0x80; /* no overlong 4-byte forms */
		unsigned hi = c == 0xf4 ? 0x8f : 0xbf; /* nothing above U+10FFFF */
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

void ptrec_json_str(FILE *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', out);
	while (*p) {
		unsigned c = *p;
		size_t n;
		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc((int)c, out);
			p++;
			continue;
		}
		switch (c) {
		case '\b': fputs("\\b", out); p++; continue;
		case '\f': fputs("\\f", out); p++; continue;
		case '\n': fputs("\\n", out); p++; continue;
		case '\r': fputs("\\r", out); p++; continue;
		case '\t': fputs("\\t", out); p++; continue;
		default: break;
		}
		n = c < 0x20 || c == 0x7f ? 0 : ptrec_utf8_seq_len(p);
		if (n == 0) {
			fputs("\\u00", out);
			fputc(hex[c >> 4], out);
			fputc(hex[c & 15], out);
			p++;
			continue;
		}
		fwrite(p, 1, n, out);
		p += n;
	}
	fputc('"', out);
}

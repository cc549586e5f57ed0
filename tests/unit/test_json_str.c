/* test_json_str.c — the JSON string writer, rule by rule (report/json_str.h, RFC 8259 and
 * RFC 3629).  Every expected literal is written out by hand from those rules. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report/json_str.h"

/* ptrec_json_str(s) as a C string. */
static const char *json(const char *s)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	if (!f)
		abort();
	ptrec_json_str(f, s);
	fclose(f);
	return buf;
}

int main(void)
{
	/* Plain ASCII is copied, with its quotes; NULL is the empty string. */
	CHECK_STR(json("main"), "\"main\"");
	CHECK_STR(json(NULL), "\"\"");
	CHECK_STR(json(""), "\"\"");

	/* Quotation mark and reverse solidus are escaped. */
	CHECK_STR(json("a\"b\\c"), "\"a\\\"b\\\\c\"");

	/* The five control characters with short forms use them. */
	CHECK_STR(json("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");

	/* Every other control character, and DEL, is \u00XX: a thread name holding an ANSI escape
	 * cannot reach a terminal through the JSON. */
	CHECK_STR(json("x\033[31my"), "\"x\\u001b[31my\"");
	CHECK_STR(json("\001\037\177"), "\"\\u0001\\u001f\\u007f\"");

	/* Well-formed UTF-8 is copied: 2, 3 and 4 byte sequences, the largest code point. */
	CHECK_STR(json("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
	CHECK_STR(json("\xe2\x82\xac"), "\"\xe2\x82\xac\"");
	CHECK_STR(json("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
	CHECK_STR(json("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");

	/* Anything else above 0x7f is \u00XX, byte by byte: a stray continuation byte, a truncated
	 * sequence, overlong forms (C0 80, E0 80 80, F0 80 80 80), a surrogate (ED A0 80), a code
	 * point above U+10FFFF (F4 90 80 80) and bytes that never appear in UTF-8 (F5, FF). */
	CHECK_STR(json("\x80"), "\"\\u0080\"");
	CHECK_STR(json("\xc3"), "\"\\u00c3\"");
	CHECK_STR(json("\xc3x"), "\"\\u00c3x\"");
	CHECK_STR(json("\xc0\x80"), "\"\\u00c0\\u0080\"");
	CHECK_STR(json("\xe0\x80\x80"), "\"\\u00e0\\u0080\\u0080\"");
	CHECK_STR(json("\xf0\x80\x80\x80"), "\"\\u00f0\\u0080\\u0080\\u0080\"");
	CHECK_STR(json("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");
	CHECK_STR(json("\xf4\x90\x80\x80"), "\"\\u00f4\\u0090\\u0080\\u0080\"");
	CHECK_STR(json("\xf5\xff"), "\"\\u00f5\\u00ff\"");

	/* The sequence length rule on its own. */
	CHECK_EQ_U64(ptrec_utf8_seq_len((const unsigned char *)"A"), 1);
	CHECK_EQ_U64(ptrec_utf8_seq_len((const unsigned char *)"\xc2\xa0"), 2);
	CHECK_EQ_U64(ptrec_utf8_seq_len((const unsigned char *)"\xe0\xa0\x80"), 3);
	CHECK_EQ_U64(ptrec_utf8_seq_len((const unsigned char *)"\xf0\x90\x80\x80"), 4);
	CHECK_EQ_U64(ptrec_utf8_seq_len((const unsigned char *)"\xc1\xbf"), 0);
	CHECK_EQ_U64(ptrec_utf8_seq_len((const unsigned char *)"\xe2\x82"), 0);
	return check_done();
}

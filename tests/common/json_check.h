/* json_check.h — a strict JSON well-formedness checker for tests (RFC 8259 grammar; no
 * values kept).  Header-only; test code. */
#ifndef PTREC_TEST_JSON_CHECK_H
#define PTREC_TEST_JSON_CHECK_H

#include <string.h>

struct jc {
	const char *p;
	int depth;
};

static int jc_value(struct jc *c);

static void jc_ws(struct jc *c)
{
	while (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r')
		c->p++;
}

static int jc_string(struct jc *c)
{
	if (*c->p != '"')
		return 0;
	for (c->p++; *c->p != '"'; c->p++) {
		unsigned char ch = (unsigned char)*c->p;
		if (ch < 0x20)
			return 0;
		if (ch == '\\') {
			c->p++;
			if (*c->p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", c->p[i]) || !c->p[i])
						return 0;
				c->p += 4;
			} else if (!*c->p || !strchr("\"\\/bfnrt", *c->p)) {
				return 0;
			}
		}
	}
	c->p++;
	return 1;
}

static int jc_number(struct jc *c)
{
	const char *s = c->p;
	if (*c->p == '-')
		c->p++;
	if (*c->p == '0')
		c->p++;
	else if (*c->p >= '1' && *c->p <= '9')
		while (*c->p >= '0' && *c->p <= '9')
			c->p++;
	else
		return 0;
	if (*c->p == '.') {
		c->p++;
		if (!(*c->p >= '0' && *c->p <= '9'))
			return 0;
		while (*c->p >= '0' && *c->p <= '9')
			c->p++;
	}
	if (*c->p == 'e' || *c->p == 'E') {
		c->p++;
		if (*c->p == '+' || *c->p == '-')
			c->p++;
		if (!(*c->p >= '0' && *c->p <= '9'))
			return 0;
		while (*c->p >= '0' && *c->p <= '9')
			c->p++;
	}
	return c->p > s;
}

static int jc_value(struct jc *c)
{
	jc_ws(c);
	if (++c->depth > 200)
		return 0;
	switch (*c->p) {
	case '{':
		c->p++;
		jc_ws(c);
		if (*c->p == '}') {
			c->p++;
			break;
		}
		for (;;) {
			jc_ws(c);
			if (!jc_string(c))
				return 0;
			jc_ws(c);
			if (*c->p++ != ':' || !jc_value(c))
				return 0;
			jc_ws(c);
			if (*c->p == ',') {
				c->p++;
				continue;
			}
			if (*c->p++ != '}')
				return 0;
			break;
		}
		break;
	case '[':
		c->p++;
		jc_ws(c);
		if (*c->p == ']') {
			c->p++;
			break;
		}
		for (;;) {
			if (!jc_value(c))
				return 0;
			jc_ws(c);
			if (*c->p == ',') {
				c->p++;
				continue;
			}
			if (*c->p++ != ']')
				return 0;
			break;
		}
		break;
	case '"':
		if (!jc_string(c))
			return 0;
		break;
	case 't':
		if (strncmp(c->p, "true", 4))
			return 0;
		c->p += 4;
		break;
	case 'f':
		if (strncmp(c->p, "false", 5))
			return 0;
		c->p += 5;
		break;
	case 'n':
		if (strncmp(c->p, "null", 4))
			return 0;
		c->p += 4;
		break;
	default:
		if (!jc_number(c))
			return 0;
	}
	c->depth--;
	return 1;
}

/* 1 if text is exactly one well-formed JSON value (surrounding whitespace allowed). */
static inline int json_valid(const char *text)
{
	struct jc c = {text, 0};
	if (!jc_value(&c))
		return 0;
	jc_ws(&c);
	return *c.p == 0;
}

#endif

/* fact_emit.c — the two renderings of a tree of facts (fact_emit.h): text lines and JSON. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/json_str.h"
#include "tool/fact_emit.h"

const char *fact_yesno(int v)
{
	return v ? "yes" : "no";
}

const char *fact_human(uint64_t v, char *buf, size_t len)
{
	if (v == UINT64_MAX)
		snprintf(buf, len, "unlimited");
	else if (v && v % (1u << 30) == 0)
		snprintf(buf, len, "%" PRIu64 " GiB", v >> 30);
	else if (v && v % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 " MiB", v >> 20);
	else if (v && v % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", v >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " bytes", v);
	return buf;
}

/* "0 3 6 9" for a bitmap of encodings. */
static const char *encodings(unsigned bitmap, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 16; i++)
		if ((bitmap >> i) & 1)
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%u", n ? " " : "", i);
	if (!bitmap)
		snprintf(buf, len, "none");
	return buf;
}

const char *fact_say(char *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t, FACT_WORDS_MAX, fmt, ap);
	va_end(ap);
	return t;
}

static void fact(struct fact_emitter *e, const char *key, enum fact_kind k, long long i,
                 uint64_t u, const char *s, const char *words)
{
	struct fact_value v = {k, i, u, s};

	e->fact(e, key, &v, words);
}

void fact_null(struct fact_emitter *e, const char *key, const char *words)
{
	fact(e, key, FACT_NULL, 0, 0, NULL, words);
}

void fact_bool(struct fact_emitter *e, const char *key, int v, const char *words)
{
	fact(e, key, FACT_BOOL, v != 0, 0, NULL, words);
}

void fact_bit(struct fact_emitter *e, const char *key, int v, const char *what)
{
	char t[FACT_WORDS_MAX];

	fact_bool(e, key, v, fact_say(t, "%s (%s)", fact_yesno(v), what));
}

void fact_int(struct fact_emitter *e, const char *key, long long v, const char *words)
{
	fact(e, key, FACT_INT, v, 0, NULL, words);
}

void fact_count(struct fact_emitter *e, const char *key, uint64_t v, const char *words)
{
	fact(e, key, FACT_COUNT, 0, v, NULL, words);
}

void fact_bytes(struct fact_emitter *e, const char *key, uint64_t v, const char *words)
{
	fact(e, key, FACT_BYTES, 0, v, NULL, words);
}

void fact_str(struct fact_emitter *e, const char *key, const char *v, const char *words)
{
	fact(e, key, FACT_STR, 0, 0, v, words);
}

void fact_bits(struct fact_emitter *e, const char *key, unsigned v)
{
	fact(e, key, FACT_BITS, 0, v, NULL, NULL);
}

void fact_open(struct fact_emitter *e, const char *key, const char *title)
{
	e->open(e, key, title);
}

void fact_close(struct fact_emitter *e)
{
	e->close(e);
}

/* ---- text ------------------------------------------------------------------------------ */

#define TEXT_KEY_COLUMN 24

/* The words a value says by itself. */
static const char *value_words(const struct fact_value *v, char *t)
{
	switch (v->kind) {
	case FACT_NULL: return "unknown";
	case FACT_BOOL: return fact_yesno((int)v->i);
	case FACT_INT: return fact_say(t, "%lld", v->i);
	case FACT_COUNT:
		return v->u == UINT64_MAX ? "unlimited" : fact_say(t, "%" PRIu64, v->u);
	case FACT_BYTES: return fact_human(v->u, t, FACT_WORDS_MAX);
	case FACT_STR: return v->s ? v->s : "none";
	case FACT_BITS: {
		char list[64];
		return fact_say(t, "0x%04x: %s", (unsigned)v->u,
		                encodings((unsigned)v->u, list, sizeof(list)));
	}
	}
	return "";
}

/* Prints the indent and key; returns the padding that reaches the value column. */
static int text_key(struct fact_emitter *e, const char *key)
{
	int indent = 2 * (e->depth - 1), pad = TEXT_KEY_COLUMN - indent - (int)strlen(key);

	fprintf(e->f, "%*s%s", indent, "", key);
	return pad > 1 ? pad : 1;
}

static void text_open(struct fact_emitter *e, const char *key, const char *title)
{
	if (key) {
		if (e->depth == 1)
			fputc('\n', e->f);
		int pad = text_key(e, key);
		if (title)
			fprintf(e->f, "%*s(%s)", pad, "", title);
		fputc('\n', e->f);
	}
	e->depth++;
}

static void text_close(struct fact_emitter *e)
{
	e->depth--;
}

static void text_fact(struct fact_emitter *e, const char *key, const struct fact_value *v,
                      const char *words)
{
	char t[FACT_WORDS_MAX];
	int pad = text_key(e, key);

	fprintf(e->f, "%*s%s\n", pad, "", words ? words : value_words(v, t));
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_key(struct fact_emitter *e, const char *key)
{
	if (e->need_comma[e->depth])
		fputc(',', e->f);
	fputc('\n', e->f);
	for (int i = 0; i <= e->depth; i++)
		fputs("  ", e->f);
	e->need_comma[e->depth] = 1;
	if (key) {
		ptrec_json_str(e->f, key);
		fputs(": ", e->f);
	}
}

static void json_begin(struct fact_emitter *e, const char *key, char c)
{
	if (e->depth >= 0)
		json_key(e, key);
	fputc(c, e->f);
	e->depth++;
	e->need_comma[e->depth] = 0;
}

static void json_end(struct fact_emitter *e, char c)
{
	e->depth--;
	fputc('\n', e->f);
	for (int i = 0; i <= e->depth; i++)
		fputs("  ", e->f);
	fputc(c, e->f);
}

static void json_open(struct fact_emitter *e, const char *key, const char *title)
{
	(void)title;
	json_begin(e, key, '{');
}

static void json_close(struct fact_emitter *e)
{
	json_end(e, '}');
}

static void json_fact(struct fact_emitter *e, const char *key, const struct fact_value *v,
                      const char *words)
{
	(void)words;
	if (v->kind == FACT_BITS) {
		json_begin(e, key, '[');
		for (unsigned i = 0; i < 16; i++)
			if ((v->u >> i) & 1) {
				json_key(e, NULL);
				fprintf(e->f, "%u", i);
			}
		json_end(e, ']');
		return;
	}
	json_key(e, key);
	switch (v->kind) {
	case FACT_BOOL: fputs(v->i ? "true" : "false", e->f); break;
	case FACT_INT: fprintf(e->f, "%lld", v->i); break;
	case FACT_COUNT:
	case FACT_BYTES:
		if (v->u == UINT64_MAX)
			fputs("\"unlimited\"", e->f);
		else
			fprintf(e->f, "%" PRIu64, v->u);
		break;
	case FACT_STR:
		if (v->s)
			ptrec_json_str(e->f, v->s);
		else
			fputs("null", e->f);
		break;
	default: fputs("null", e->f); break;
	}
}

/* Sets e up with the three functions of one rendering; depth counts from first_depth. */
static void emitter_init(struct fact_emitter *e, FILE *f, const struct fact_emitter *ops,
                         int first_depth)
{
	*e = *ops;
	e->f = f;
	e->depth = first_depth;
}

void fact_text_init(struct fact_emitter *e, FILE *f)
{
	static const struct fact_emitter text = {.open = text_open, .close = text_close,
	                                         .fact = text_fact};
	emitter_init(e, f, &text, 0);
}

void fact_json_init(struct fact_emitter *e, FILE *f)
{
	static const struct fact_emitter json = {.open = json_open, .close = json_close,
	                                         .fact = json_fact};
	emitter_init(e, f, &json, -1);
}

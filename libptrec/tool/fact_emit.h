/* fact_emit.h — a report stated once as a tree of facts and rendered by one of two emitters:
 * text ("KEY  WORDS" lines, two spaces of indent per section) or JSON (objects of the same
 * keys).  `ptrec info` describes its facts once (cmd_info.c), so a fact is in both outputs or
 * in neither, and a line of the text names its JSON path. */
#ifndef PTREC_TOOL_FACT_EMIT_H
#define PTREC_TOOL_FACT_EMIT_H

#include <stdint.h>
#include <stdio.h>

enum fact_kind {
	FACT_NULL,  /* unknown: JSON null */
	FACT_BOOL,  /* i: 0 or 1 */
	FACT_INT,   /* i */
	FACT_COUNT, /* u; UINT64_MAX is the string "unlimited" */
	FACT_BYTES, /* u, as FACT_COUNT; the text says "64 KiB" */
	FACT_STR,   /* s; NULL is null */
	FACT_BITS,  /* u: a bitmap of encodings 0..15, a JSON array of the set bits */
};

struct fact_value {
	enum fact_kind kind;
	long long i;
	uint64_t u;
	const char *s;
};

/* An emitter: fact_text_init or fact_json_init fills it. */
struct fact_emitter {
	void (*open)(struct fact_emitter *e, const char *key, const char *title);
	void (*close)(struct fact_emitter *e);
	void (*fact)(struct fact_emitter *e, const char *key, const struct fact_value *v,
	             const char *words);
	FILE *f;
	int depth;           /* sections open */
	int need_comma[16];  /* JSON: a member was written at this depth */
};

void fact_text_init(struct fact_emitter *e, FILE *f);
void fact_json_init(struct fact_emitter *e, FILE *f);

/* The tree: the whole report is one section opened with key NULL.  A section has a key and,
 * for the text, an optional title in parentheses; at most 14 levels.  Each fact has its key,
 * its value and the words the text shows instead of the value alone (NULL: the value's own
 * words: "yes", "64 KiB", "unknown", ...). */
void fact_open(struct fact_emitter *e, const char *key, const char *title);
void fact_close(struct fact_emitter *e);
void fact_null(struct fact_emitter *e, const char *key, const char *words);
void fact_bool(struct fact_emitter *e, const char *key, int v, const char *words);
void fact_bit(struct fact_emitter *e, const char *key, int v, const char *what); /* "yes (WHAT)" */
void fact_int(struct fact_emitter *e, const char *key, long long v, const char *words);
void fact_count(struct fact_emitter *e, const char *key, uint64_t v, const char *words);
void fact_bytes(struct fact_emitter *e, const char *key, uint64_t v, const char *words);
void fact_str(struct fact_emitter *e, const char *key, const char *v, const char *words);
void fact_bits(struct fact_emitter *e, const char *key, unsigned v);

/* Words for the facts. */
#define FACT_WORDS_MAX 1200
/* Formats into t (FACT_WORDS_MAX bytes) and returns it. */
const char *fact_say(char *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *fact_yesno(int v);
/* "64 KiB", "1 MiB", "1536 bytes", "unlimited" (UINT64_MAX). */
const char *fact_human(uint64_t v, char *buf, size_t len);

#endif

/* server_workload.c — a real-world-shaped CPU-bound workload for bench_server: a small
 * key-value server's request path with many small functions.  An event loop takes requests
 * from a batch of pipelined text commands ("SET k v", "GET k", "INCR k", "DEL k"), a parser
 * splits and decodes them, a chained hash table stores the keys, and replies are appended to
 * an output buffer.  Compiled once per build with SV_NAME set (bench/bench.am), with LTO. */
#include <stdint.h>
#include <string.h>

#include "server_workload.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define FN(name) CAT(name, SV_NAME)

#define NBUCKETS 4096
#define NENTRIES 8192

struct entry {
	char key[24];
	int64_t value;
	int next;            /* index of the next entry in the bucket, -1 at the end */
	int used;
};

struct table {
	int bucket[NBUCKETS];
	struct entry e[NENTRIES];
	int nfree;
	int freelist[NENTRIES];
};

struct out {
	char buf[1 << 16];
	size_t n;
	uint64_t digest;
};

struct token {
	const char *p;
	size_t n;
};

typedef void (*command_fn)(struct table *, const struct token *, struct out *);

static struct table FN(tab_);
static struct out FN(out_);

static int is_space(char c) { return c == ' ' || c == '\r' || c == '\n' || c == '\t'; }

static uint32_t hash_bytes(const char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h;
}

static int key_equal(const struct entry *e, const struct token *k)
{
	return strlen(e->key) == k->n && !memcmp(e->key, k->p, k->n);
}

static void table_init(struct table *t)
{
	for (int i = 0; i < NBUCKETS; i++)
		t->bucket[i] = -1;
	t->nfree = NENTRIES;
	for (int i = 0; i < NENTRIES; i++) {
		t->freelist[i] = NENTRIES - 1 - i;
		t->e[i].used = 0;
	}
}

static struct entry *table_find(struct table *t, const struct token *k)
{
	for (int i = t->bucket[hash_bytes(k->p, k->n) % NBUCKETS]; i >= 0; i = t->e[i].next)
		if (key_equal(&t->e[i], k))
			return &t->e[i];
	return NULL;
}

static struct entry *table_insert(struct table *t, const struct token *k)
{
	struct entry *e = table_find(t, k);
	if (e || !t->nfree || k->n >= sizeof(e->key))
		return e;
	int i = t->freelist[--t->nfree];
	uint32_t b = hash_bytes(k->p, k->n) % NBUCKETS;
	e = &t->e[i];
	memcpy(e->key, k->p, k->n);
	e->key[k->n] = 0;
	e->value = 0;
	e->used = 1;
	e->next = t->bucket[b];
	t->bucket[b] = i;
	return e;
}

static void table_delete(struct table *t, const struct token *k)
{
	int *link = &t->bucket[hash_bytes(k->p, k->n) % NBUCKETS];
	while (*link >= 0) {
		struct entry *e = &t->e[*link];
		if (key_equal(e, k)) {
			int i = *link;
			*link = e->next;
			e->used = 0;
			t->freelist[t->nfree++] = i;
			return;
		}
		link = &e->next;
	}
}

static void out_put(struct out *o, const char *s, size_t n)
{
	if (o->n + n > sizeof(o->buf)) {
		for (size_t i = 0; i < o->n; i++)
			o->digest = o->digest * 31 + (uint8_t)o->buf[i];
		o->n = 0;
	}
	memcpy(o->buf + o->n, s, n);
	o->n += n;
}

static void out_int(struct out *o, int64_t v)
{
	char tmp[24];
	size_t n = 0;
	uint64_t u = v < 0 ? (uint64_t)-v : (uint64_t)v;
	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[sizeof(tmp) - 1 - n++] = '-';
	out_put(o, ":", 1);
	out_put(o, tmp + sizeof(tmp) - n, n);
	out_put(o, "\r\n", 2);
}

static int64_t parse_int(const struct token *t)
{
	int64_t v = 0;
	for (size_t i = 0; i < t->n; i++)
		v = v * 10 + (t->p[i] - '0');
	return v;
}

static void cmd_set(struct table *t, const struct token *a, struct out *o)
{
	struct entry *e = table_insert(t, &a[1]);
	if (e)
		e->value = parse_int(&a[2]);
	out_put(o, "+OK\r\n", 5);
}

static void cmd_get(struct table *t, const struct token *a, struct out *o)
{
	struct entry *e = table_find(t, &a[1]);
	if (e)
		out_int(o, e->value);
	else
		out_put(o, "$-1\r\n", 5);
}

static void cmd_incr(struct table *t, const struct token *a, struct out *o)
{
	struct entry *e = table_insert(t, &a[1]);
	out_int(o, e ? ++e->value : 0);
}

static void cmd_del(struct table *t, const struct token *a, struct out *o)
{
	table_delete(t, &a[1]);
	out_put(o, ":1\r\n", 4);
}

static command_fn lookup_command(const struct token *name)
{
	static const struct { const char *name; command_fn fn; } cmds[] = {
		{"SET", cmd_set}, {"GET", cmd_get}, {"INCR", cmd_incr}, {"DEL", cmd_del},
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strlen(cmds[i].name) == name->n && !memcmp(cmds[i].name, name->p, name->n))
			return cmds[i].fn;
	return NULL;
}

/* Splits one line into up to 3 tokens; returns the position after the line. */
static const char *parse_line(const char *p, const char *end, struct token *a, int *n)
{
	*n = 0;
	while (p < end && *p != '\n') {
		while (p < end && *p != '\n' && is_space(*p))
			p++;
		const char *s = p;
		while (p < end && !is_space(*p))
			p++;
		if (p > s && *n < 3) {
			a[*n].p = s;
			a[*n].n = (size_t)(p - s);
			(*n)++;
		}
	}
	return p < end ? p + 1 : p;
}

static void handle_request(struct table *t, const struct token *a, int n, struct out *o)
{
	command_fn f = n ? lookup_command(&a[0]) : NULL;
	if (f && n >= 2)
		f(t, a, o);
	else
		out_put(o, "-ERR\r\n", 6);
}

/* The event loop: each "event" is a batch of pipelined requests. */
uint64_t FN(sv_run_)(const char *batch, size_t len, unsigned events)
{
	struct table *t = &FN(tab_);
	struct out *o = &FN(out_);

	table_init(t);
	o->n = 0;
	o->digest = 0;
	for (unsigned ev = 0; ev < events; ev++) {
		const char *p = batch, *end = batch + len;
		while (p < end) {
			struct token a[3];
			int n;
			p = parse_line(p, end, a, &n);
			handle_request(t, a, n, o);
		}
	}
	return o->digest + o->n;
}

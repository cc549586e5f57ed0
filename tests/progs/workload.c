/* workload.c — ptgen benchmark program: a mix of what servers do (a hash table with malloc and
 * free, sorting with a comparator callback, formatting and parsing strings, memcpy/strcmp), a
 * couple of hundred thousand instructions.  Not run by `make check`; see doc/ptgen.md.
 *
 *   workload [ROUNDS]
 *
 * ROUNDS (default 1) repeats the work with other keys each round (other hash chains, another
 * order to sort, other strings to format): a long run whose branches do not repeat one pattern,
 * for bench_decode --varied. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct entry *next;
	unsigned long key;
	char name[24];
};

#define BUCKETS 64
static struct entry *table[BUCKETS];

static unsigned long hash(const char *s)
{
	unsigned long h = 1469598103934665603ul;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ul;
	return h;
}

static void put(const char *name, unsigned long key)
{
	unsigned long h = hash(name) % BUCKETS;
	for (struct entry *e = table[h]; e; e = e->next)
		if (!strcmp(e->name, name)) {
			e->key = key;
			return;
		}
	struct entry *e = malloc(sizeof(*e));
	if (!e)
		exit(2);
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->key = key;
	e->next = table[h];
	table[h] = e;
}

static long get(const char *name)
{
	for (struct entry *e = table[hash(name) % BUCKETS]; e; e = e->next)
		if (!strcmp(e->name, name))
			return (long)e->key;
	return -1;
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	return (x > y) - (x < y);
}

static long work_round(unsigned r, unsigned long *total);

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1;
	long found = 0;
	unsigned long total = 0;
	for (unsigned r = 0; r < rounds; r++)
		found += work_round(r, &total);
	printf("found=%ld total=%lu\n", found, total);
	return found > 0 ? 0 : 1;
}

/* One round of the work; round 0 is the original program. */
static long work_round(unsigned r, unsigned long *total)
{
	char name[32];
	unsigned long keys[120];
	for (int i = 0; i < 120; i++) {
		snprintf(name, sizeof(name), "key-%u", (i * 7919u + r * 104729u) % (200 + r % 57));
		keys[i] = hash(name);
		put(name, (unsigned long)i);
	}
	qsort(keys, 120, sizeof(keys[0]), cmp_ulong);
	long found = 0;
	for (int i = 0; i < 200; i += 3 + r % 2) {
		snprintf(name, sizeof(name), "key-%d", i);
		found += get(name) >= 0;
	}
	char buf[256], copy[256];
	for (int i = 0; i < 30; i++) {
		int n = snprintf(buf, sizeof(buf), "%d,%lu,%s", i, keys[(i + r) % 120], "payload");
		memcpy(copy, buf, (size_t)n + 1);
		*total += strtoul(strchr(copy, ',') + 1, NULL, 10) % 1000 + strlen(copy);
	}
	for (int b = 0; b < BUCKETS; b++)
		while (table[b]) {
			struct entry *e = table[b];
			table[b] = e->next;
			free(e);
		}
	*total += keys[0] <= keys[119];
	return found;
}

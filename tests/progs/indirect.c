/* indirect.c — ptgen test program: calls through function pointers (a table, a struct of
 * operations) and libc calling back into the program (qsort's comparator, bsearch). */
#include <stdio.h>
#include <stdlib.h>

typedef long (*binop)(long, long);

static long add(long a, long b) { return a + b; }
static long sub(long a, long b) { return a - b; }
static long mul(long a, long b) { return a * b; }
static long max(long a, long b) { return a > b ? a : b; }

static binop volatile table[] = {add, sub, mul, max};

struct ops {
	long (*init)(void);
	long (*step)(long);
};

static long init_one(void) { return 1; }
static long twice(long x) { return 2 * x + 1; }

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int main(void)
{
	long acc = 0;
	for (int i = 0; i < 64; i++)
		acc = table[i % 4](acc, i);
	struct ops volatile o = {init_one, twice};
	long v = o.init();
	for (int i = 0; i < 10; i++)
		v = o.step(v);
	int data[48];
	for (int i = 0; i < 48; i++)
		data[i] = (i * 37 + 11) % 48;
	qsort(data, 48, sizeof(data[0]), cmp_int);
	int key = 17;
	int *hit = bsearch(&key, data, 48, sizeof(data[0]), cmp_int);
	printf("acc=%ld v=%ld sorted=%d..%d hit=%d\n", acc, v, data[0], data[47], hit ? *hit : -1);
	return v == 2047 && data[0] == 0 && data[47] == 47 && hit && *hit == 17 ? 0 : 1;
}

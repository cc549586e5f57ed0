/* ild_m32.c — freestanding C compiled with $CC -m32 -c by tests/unit/test_ild_objdump.c, so the
 * instruction-length decoder is compared with objdump on real compiler-generated 32-bit code:
 * switch tables, indirect calls, 64-bit arithmetic on a 32-bit machine, x87 and SSE floating
 * point, string loops, bit operations.  No headers: it must build without a 32-bit libc. */

typedef unsigned int u32;
typedef unsigned long long u64;
typedef int (*binop)(int, int);

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }
static int divi(int a, int b) { return b ? a / b : 0; }

static binop ops[4] = { add, sub, mul, divi };

int apply(unsigned k, int a, int b)
{
	return ops[k & 3](a, b);
}

int classify(int c)
{
	switch (c) {
	case 0: return 10;
	case 1: return 21;
	case 2: return 32;
	case 3: return 43;
	case 4: return 54;
	case 5: return 65;
	case 6: return 76;
	case 7: return 87;
	case 9: return 98;
	case 12: return 3;
	default: return -1;
	}
}

u64 mix64(u64 x, u64 y, unsigned s)
{
	x ^= y << (s & 63);
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	return x / (y | 1) + x % (y | 3);
}

double poly(const double *c, int n, double x)
{
	double r = 0;
	for (int i = n - 1; i >= 0; i--)
		r = r * x + c[i];
	return r;
}

float dotf(const float *a, const float *b, int n)
{
	float s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

long double ext(long double a, long double b)
{
	return a * b - a / (b + 1.0L);
}

u32 popc(u32 v)
{
	u32 c = 0;
	while (v) {
		v &= v - 1;
		c++;
	}
	return c;
}

void *copy(void *d, const void *s, u32 n)
{
	unsigned char *dd = d;
	const unsigned char *ss = s;
	while (n--)
		*dd++ = *ss++;
	return d;
}

int find(const char *s, char c)
{
	for (int i = 0; s[i]; i++)
		if (s[i] == c)
			return i;
	return -1;
}

static int depth(int n)
{
	if (n <= 1)
		return 1;
	return depth(n - 1) + depth(n - 2);
}

int fib(int n)
{
	return depth(n);
}

void sort(int *v, int n)
{
	for (int i = 1; i < n; i++) {
		int x = v[i], j = i - 1;
		while (j >= 0 && v[j] > x) {
			v[j + 1] = v[j];
			j--;
		}
		v[j + 1] = x;
	}
}

u32 hash(const unsigned char *p, u32 n)
{
	u32 h = 2166136261u;
	for (u32 i = 0; i < n; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

short narrow(short a, signed char b, unsigned short c)
{
	return (short)(a * b + (c >> 3) - (a ^ c));
}

int bits(u32 x)
{
	return __builtin_clz(x | 1) + __builtin_ctz(x | 0x80000000u) + __builtin_parity(x);
}

u32 bswap(u32 x)
{
	return __builtin_bswap32(x) ^ (x << 7 | x >> 25);
}

int sat(int a, int b)
{
	int r;
	if (__builtin_add_overflow(a, b, &r))
		return a > 0 ? 0x7fffffff : (int)0x80000000;
	return r;
}

void vadd(int *restrict d, const int *restrict a, const int *restrict b, int n)
{
	for (int i = 0; i < n; i++)
		d[i] = a[i] + b[i] * 3;
}

int tail(int x)
{
	if (x & 1)
		return apply((unsigned)x, x, 3);
	return classify(x >> 1);
}

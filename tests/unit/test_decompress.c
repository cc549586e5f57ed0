/* test_decompress.c — the decompressors of compressed debug sections (symbols/inflate.c,
 * symbols/zstd_decode.c, symbols/elf_compressed.c), against what the reference tools produce:
 * - zlib: a known empty stream; raw DEFLATE from `gzip -1/-6/-9` of text, binary and
 *   repetitive data (stored, fixed and dynamic blocks); the Adler-32 check;
 * - zstd: frames from the `zstd` CLI at levels 1, 3 and 19, with and without the content
 *   checksum, small blocks (-B), several frames in a row, a skippable frame;
 * - ELF: the sections of a program built with -g, compressed by `objcopy
 *   --compress-debug-sections=zlib|zstd|zlib-gnu` (.zdebug_*), read back equal to the
 *   uncompressed ones;
 * - damage: every truncation and thousands of byte flips give an error or (rarely) the wrong
 *   bytes of the right size, never a crash or a write past the output; a size other than the
 *   real one is an error.
 * Each tool missing from the machine skips its part (and says so); all missing is a SKIP. */
#include "config.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrec.h"
#include "symbols/decompress.h"
#include "symbols/elf_symbols.h"
#include "check.h"
#include "fuzz_mutate.h"

static char dir[4096];
static int parts;


static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)n + 1)) && fread(p, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

static int have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

/* The sample: text, counting bytes, a long run, pseudo-random bytes. */
static uint8_t *sample(size_t *len)
{
	size_t n = 300000, i = 0;
	uint8_t *p = malloc(n);
	while (i < 120000) {
		int k = snprintf((char *)p + i, n - i, "line %zu: the quick brown fox %zu\n", i,
		                 i * 7919 % 1000);
		i += (size_t)k;
	}
	for (; i < 160000; i++)
		p[i] = (uint8_t)i;
	for (; i < 220000; i++)
		p[i] = 'x';
	for (; i < n; i++)
		p[i] = (uint8_t)next_rand();
	*len = n;
	return p;
}

/* Damage: truncations and byte flips never crash, never write past the output. */
static void damage(const uint8_t *z, size_t zn, size_t n, int zstd)
{
	uint8_t *copy = malloc(zn), *out = malloc(n + 16);
	for (size_t cut = 0; cut < zn; cut += 1 + zn / 97) {
		memset(out + n, 0xa5, 16);
		if (zstd)
			CHECK(ptrec_zstd_decompress(z, cut, out, n) != 0);
		else
			CHECK(ptrec_zlib_inflate(z, cut, out, n) != 0);
		CHECK(out[n] == 0xa5 && out[n + 15] == 0xa5);
	}
	for (int i = 0; i < 300; i++) {
		memcpy(copy, z, zn);
		for (int k = 0; k < 3; k++)
			mutate(copy, 0, zn);
		memset(out + n, 0xa5, 16);
		if (zstd)
			(void)ptrec_zstd_decompress(copy, zn, out, n);
		else
			(void)ptrec_zlib_inflate(copy, zn, out, n);
		CHECK(out[n] == 0xa5 && out[n + 15] == 0xa5);
	}
	free(copy);
	free(out);
}

static void test_zlib_known(void)
{
	static const uint8_t empty[] = {0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01};
	/* A stored block holding "abc": BFINAL, BTYPE 00, LEN 3, NLEN, bytes; Adler-32. */
	static const uint8_t stored[] = {0x78, 0x01, 0x01, 0x03, 0x00, 0xfc, 0xff, 'a', 'b', 'c',
	                                 0x02, 0x4d, 0x01, 0x27};
	uint8_t out[8];

	CHECK(ptrec_zlib_inflate(empty, sizeof(empty), out, 0) == 0);
	CHECK(ptrec_zlib_inflate(empty, sizeof(empty), out, 1) == -PTREC_EFORMAT);
	CHECK(ptrec_zlib_inflate(stored, sizeof(stored), out, 3) == 0);
	CHECK(!memcmp(out, "abc", 3));
	{
		uint8_t bad[sizeof(stored)];
		memcpy(bad, stored, sizeof(bad));
		bad[sizeof(bad) - 1] ^= 1;   /* Adler-32 */
		CHECK(ptrec_zlib_inflate(bad, sizeof(bad), out, 3) == -PTREC_EFORMAT);
		memcpy(bad, stored, sizeof(bad));
		bad[1] = 0x20;               /* a preset dictionary */
		CHECK(ptrec_zlib_inflate(bad, sizeof(bad), out, 3) == -PTREC_EFORMAT);
	}
}

static void test_gzip(const uint8_t *data, size_t n)
{
	char in[4200], gz[4200];
	const char *levels[] = {"-1", "-6", "-9"};

	if (!have("gzip")) {
		printf("note: gzip not found: DEFLATE is checked only against known streams\n");
		return;
	}
	parts++;
	snprintf(in, sizeof(in), "%s/sample", dir);
	for (size_t l = 0; l < 3; l++) {
		size_t zn, hdr = 10;
		uint8_t *z, *out = malloc(n);
		FILE *f = fopen(in, "wb");
		fwrite(data, 1, n, f);
		fclose(f);
		snprintf(gz, sizeof(gz), "%s/sample.gz", dir);
		{
			char cmd[9000];
			snprintf(cmd, sizeof(cmd), "gzip -n -c %s '%s' > '%s'", levels[l], in, gz);
			CHECK(system(cmd) == 0);
		}
		z = slurp(gz, &zn);
		CHECK(z && zn > 18 && z[0] == 0x1f && z[1] == 0x8b && z[3] == 0);
		if (!z || zn <= 18)
			continue;
		{
			size_t used = 0;
			CHECK(ptrec_inflate(z + hdr, zn - hdr - 8, out, n, &used) == 0);
			CHECK(!memcmp(out, data, n));
			CHECK_EQ_U64(used, zn - hdr - 8);
			CHECK(ptrec_inflate(z + hdr, zn - hdr - 8, out, n - 1, NULL) == -PTREC_EFORMAT);
		}
		if (l == 1) {
			/* Damage, on the raw DEFLATE wrapped as zlib (a wrong checksum is fine). */
			uint8_t *zz = malloc(zn);
			zz[0] = 0x78;
			zz[1] = 0x9c;
			memcpy(zz + 2, z + hdr, zn - hdr - 8);
			damage(zz, zn - hdr - 8 + 2 + 4, n, 0);
			free(zz);
		}
		free(z);
		free(out);
	}
}

static void test_zstd(const uint8_t *data, size_t n)
{
	static const char *opts[] = {"-1", "-3", "-19", "-3 --no-check", "-1 -B4096"};
	char in[4200], zs[4200], cmd[9000];

	if (!have("zstd")) {
		printf("note: zstd not found: the zstd decoder is checked only through objcopy\n");
		return;
	}
	parts++;
	snprintf(in, sizeof(in), "%s/sample", dir);
	snprintf(zs, sizeof(zs), "%s/sample.zst", dir);
	{
		FILE *f = fopen(in, "wb");
		fwrite(data, 1, n, f);
		fclose(f);
	}
	for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
		size_t zn;
		uint8_t *z, *out = malloc(n + 16);
		snprintf(cmd, sizeof(cmd), "zstd -q -f %s -o '%s' '%s'", opts[o], zs, in);
		CHECK(system(cmd) == 0);
		z = slurp(zs, &zn);
		CHECK(z != NULL);
		if (!z)
			continue;
		CHECK(ptrec_zstd_decompress(z, zn, out, n) == 0);
		CHECK(!memcmp(out, data, n));
		CHECK(ptrec_zstd_decompress(z, zn, out, n - 1) == -PTREC_EFORMAT);
		if (o == 0) {
			/* Two frames in a row after a skippable frame: their concatenation. */
			uint8_t *two = malloc(2 * zn + 12), *out2 = malloc(2 * n);
			memcpy(two, "\x50\x2a\x4d\x18\x04\x00\x00\x00skip", 12);
			memcpy(two + 12, z, zn);
			memcpy(two + 12 + zn, z, zn);
			CHECK(ptrec_zstd_decompress(two, 2 * zn + 12, out2, 2 * n) == 0);
			CHECK(!memcmp(out2, data, n) && !memcmp(out2 + n, data, n));
			free(two);
			free(out2);
			/* The checksum catches a changed byte of content. */
			damage(z, zn, n, 1);
		}
		free(z);
		free(out);
	}
}

/* Compares every .debug_* section of plain with the same section of packed. */
static void same_sections(const char *plain, const char *packed, const char *how)
{
	struct ptrec_elf a, b;
	int compared = 0, compressed = 0;

	CHECK(ptrec_elf_open_file(plain, &a, NULL) == 0);
	CHECK(ptrec_elf_open_file(packed, &b, NULL) == 0);
	for (size_t i = 0; i < a.nsections; i++) {
		const struct ptrec_elf_section *s = &a.sections[i], *t = NULL;
		const uint8_t *p, *q;
		size_t pn, qn;
		if (strncmp(s->name, ".debug_", 7) || ptrec_elf_section_bytes(&a, s, &p, &pn))
			continue;
		CHECK(ptrec_elf_debug_section(&b, s->name, &q, &qn, &t) == 0);
		if (!t)
			continue;
		compressed += (t->flags & SHF_COMPRESSED) || !strncmp(t->name, ".zdebug", 7);
		CHECK_EQ_U64(qn, pn);
		CHECK(qn == pn && !memcmp(p, q, pn));
		compared++;
	}
	printf("%s: %d debug sections equal, %d of them compressed\n", how, compared, compressed);
	CHECK(compared >= 3);
	CHECK(compressed >= 3);
	ptrec_elf_close(&a);
	ptrec_elf_close(&b);
}

static void test_objcopy(void)
{
	const char *objcopy = getenv("OBJCOPY"), *cc = getenv("CC");
	static const char *modes[] = {"zlib", "zstd", "zlib-gnu"};
	char src[4200], prog[4200], packed[4200], cmd[16000];

	if (!objcopy || !*objcopy || !cc || !*cc) {
		printf("note: no objcopy or CC: compressed ELF sections not checked\n");
		return;
	}
	snprintf(src, sizeof(src), "%s/p.c", dir);
	snprintf(prog, sizeof(prog), "%s/p", dir);
	{
		FILE *f = fopen(src, "w");
		fprintf(f, "#include <stdio.h>\nstatic int sq(int x) { return x * x; }\n"
		           "int main(int c, char **v) { (void)v; printf(\"%%d\\n\", sq(c)); "
		           "return 0; }\n");
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "%s -g -O1 -o '%s' '%s'", cc, prog, src);
	CHECK(system(cmd) == 0);
	parts++;
	for (size_t m = 0; m < 3; m++) {
		snprintf(packed, sizeof(packed), "%s/p.%s", dir, modes[m]);
		snprintf(cmd, sizeof(cmd), "'%s' --compress-debug-sections=%s '%s' '%s' 2>/dev/null",
		         objcopy, modes[m], prog, packed);
		if (system(cmd) != 0) {
			printf("note: %s cannot --compress-debug-sections=%s\n", objcopy, modes[m]);
			continue;
		}
		same_sections(prog, packed, modes[m]);
	}
}

int main(void)
{
	size_t n;
	uint8_t *data;

	{
		const char *top = getenv("top_builddir");
		snprintf(dir, sizeof(dir), "%s/tests/tmp", top ? top : ".");
		mkdir(dir, 0700); /* the build tree's scratch folder */
		snprintf(dir, sizeof(dir), "%s/tests/tmp/decompress.XXXXXX", top ? top : ".");
	}
	if (!mkdtemp(dir))
		return 99;
	data = sample(&n);
	test_zlib_known();
	test_gzip(data, n);
	test_zstd(data, n);
	test_objcopy();
	free(data);
	{
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	if (!parts)
		SKIP("none of gzip, zstd, objcopy found: only known streams checked");
	return check_done();
}

/* test_pt_image.c — the code image: sections from bytes, raw files, ELF program headers and the
 * process's own memory; newest-wins overlaps; lookup and reads across sections. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ptrec.h"
#include "decode/elf_load.h"
#include "decode/pt_image.h"

static void test_bytes_and_overlap(void)
{
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	uint8_t a[16], b[4], buf[32];
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	CHECK(ptrec_pt_img_add_bytes(img, 0x1000, a, sizeof(a), 1) == 0);
	uint64_t g1 = ptrec_pt_img_generation(img);
	/* The newer section replaces the overlapped middle of the older one, which is split. */
	CHECK(ptrec_pt_img_add_bytes(img, 0x1004, b, sizeof(b), 0) == 0);
	CHECK(ptrec_pt_img_generation(img) != g1);
	struct ptrec_pt_img_section s[8];
	CHECK_EQ_U64(ptrec_pt_img_sections(img, s, 8), 3);
	CHECK_EQ_U64(s[0].vaddr, 0x1000);
	CHECK_EQ_U64(s[0].size, 4);
	CHECK_EQ_U64(s[1].vaddr, 0x1004);
	CHECK_EQ_U64(s[2].vaddr, 0x1008);
	CHECK_EQ_U64(s[2].size, 8);
	/* Reads cross the section boundaries. */
	CHECK_EQ_U64(ptrec_pt_img_read(img, 0x1002, buf, 8), 8);
	CHECK_EQ_U64(buf[1], 0xaa);
	CHECK_EQ_U64(buf[2], 0xbb);
	CHECK_EQ_U64(buf[5], 0xbb);
	CHECK_EQ_U64(buf[6], 0xaa);
	/* Short read at the end of the image; nothing outside it. */
	CHECK_EQ_U64(ptrec_pt_img_read(img, 0x100e, buf, 8), 2);
	CHECK_EQ_U64(ptrec_pt_img_read(img, 0x1010, buf, 8), 0);
	CHECK(ptrec_pt_img_find(img, 0xfff) == NULL);
	CHECK(ptrec_pt_img_find(img, 0x1010) == NULL);
	CHECK(ptrec_pt_img_find(img, 0x100f) != NULL);
	CHECK_EQ_U64(ptrec_pt_img_find(img, 0x1005)->vaddr, 0x1004);
	/* A section covering everything replaces all. */
	uint8_t c[64];
	memset(c, 0xcc, sizeof(c));
	CHECK(ptrec_pt_img_add_bytes(img, 0xff0, c, sizeof(c), 1) == 0);
	CHECK_EQ_U64(ptrec_pt_img_sections(img, s, 8), 1);
	CHECK_EQ_U64(ptrec_pt_img_read(img, 0x1004, buf, 1), 1);
	CHECK_EQ_U64(buf[0], 0xcc);
	/* Bad arguments. */
	CHECK(ptrec_pt_img_add_bytes(img, 0x1000, c, 0, 1) == -PTREC_EINVAL);
	CHECK(ptrec_pt_img_add_bytes(img, UINT64_MAX - 2, c, 8, 1) == -PTREC_EINVAL);
	ptrec_pt_img_free(img);
}

static void test_raw_spec(const char *dir)
{
	char path[4096], spec[4200];
	snprintf(path, sizeof(path), "%s/test_pt_image.raw.XXXXXX", dir);
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	uint8_t data[256];
	for (int i = 0; i < 256; i++)
		data[i] = (uint8_t)i;
	CHECK(write(fd, data, sizeof(data)) == (ssize_t)sizeof(data));
	close(fd);

	struct ptrec_pt_img *img = ptrec_pt_img_new();
	uint8_t buf[4];
	/* FILE:VADDR maps the whole file. */
	snprintf(spec, sizeof(spec), "%s:0x400000", path);
	CHECK(ptrec_pt_img_add_raw_spec(img, spec) == 0);
	CHECK_EQ_U64(ptrec_pt_img_read(img, 0x400010, buf, 1), 1);
	CHECK_EQ_U64(buf[0], 0x10);
	CHECK_EQ_U64(ptrec_pt_img_read(img, 0x400100, buf, 1), 0);
	/* FILE:FROM-TO:VADDR maps [FROM, TO). */
	snprintf(spec, sizeof(spec), "%s:0x20-0x30:0x500000", path);
	CHECK(ptrec_pt_img_add_raw_spec(img, spec) == 0);
	CHECK_EQ_U64(ptrec_pt_img_read(img, 0x500000, buf, 1), 1);
	CHECK_EQ_U64(buf[0], 0x20);
	CHECK(ptrec_pt_img_find(img, 0x50000f) != NULL);
	CHECK(ptrec_pt_img_find(img, 0x500010) == NULL);
	/* FILE:FROM:VADDR maps from FROM to the end. */
	snprintf(spec, sizeof(spec), "%s:16:0x600000", path);
	CHECK(ptrec_pt_img_add_raw_spec(img, spec) == 0);
	CHECK_EQ_U64(ptrec_pt_img_read(img, 0x600000, buf, 1), 1);
	CHECK_EQ_U64(buf[0], 16);
	/* Errors: no VADDR, range past the end, reversed range, missing file. */
	CHECK(ptrec_pt_img_add_raw_spec(img, path) == -PTREC_EINVAL ||
	      ptrec_pt_img_add_raw_spec(img, path) == -PTREC_EIO);
	snprintf(spec, sizeof(spec), "%s:0-0x1000:0x700000", path);
	CHECK(ptrec_pt_img_add_raw_spec(img, spec) == -PTREC_EINVAL);
	snprintf(spec, sizeof(spec), "%s:0x30-0x20:0x700000", path);
	CHECK(ptrec_pt_img_add_raw_spec(img, spec) == -PTREC_EINVAL);
	CHECK(ptrec_pt_img_add_raw_spec(img, "/nonexistent/ptrec:0x1000") == -PTREC_EIO);
	ptrec_pt_img_free(img);
	unlink(path);
}

/* Finds the lowest mapping of /proc/self/exe in /proc/self/maps. */
static uint64_t exe_base(void)
{
	char exe[4096], line[4600];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t base = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo;
		if (strstr(line, exe) && sscanf(line, "%llx-", &lo) == 1) {
			base = lo;
			break;
		}
	}
	if (f)
		fclose(f);
	return base;
}

static int probe(int x)
{
	return x * 3 + 1;
}

static void test_elf_and_self(void)
{
	uint8_t want[32], got[32];
	uint64_t fn = (uint64_t)(uintptr_t)&probe;
	memcpy(want, (const void *)(uintptr_t)fn, sizeof(want));

	/* The process's own executable mappings hold the function's bytes in place. */
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	CHECK(ptrec_pt_img_add_self(img) > 0);
	CHECK_EQ_U64(ptrec_pt_img_read(img, fn, got, sizeof(got)), sizeof(got));
	CHECK(memcmp(want, got, sizeof(got)) == 0);
	ptrec_pt_img_free(img);

	/* The ELF file's executable segment, placed at the load base when it is a PIE. */
	uint64_t base = exe_base();
	CHECK(base != 0);
	img = ptrec_pt_img_new();
	long long bad;
	/* e_type at offset 16: 3 = ET_DYN (PIE: needs the base), 2 = ET_EXEC. */
	uint8_t eh[18] = {0};
	FILE *ef = fopen("/proc/self/exe", "rb");
	CHECK(ef && fread(eh, 1, sizeof(eh), ef) == sizeof(eh));
	if (ef)
		fclose(ef);
	int n = ptrec_elf_load_image(img, "/proc/self/exe", eh[16] == 3, base, &bad);
	CHECK(n >= 1);
	CHECK_EQ_U64(ptrec_pt_img_read(img, fn, got, sizeof(got)), sizeof(got));
	CHECK(memcmp(want, got, sizeof(got)) == 0);
	ptrec_pt_img_free(img);
	(void)probe(1);
}

static void test_elf_errors(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/test_pt_image.elf.XXXXXX", dir);
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	/* A valid ELF64 identification, then a truncated header. */
	const uint8_t head[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0};
	CHECK(write(fd, head, sizeof(head)) == (ssize_t)sizeof(head));
	close(fd);
	struct ptrec_pt_img *img = ptrec_pt_img_new();
	long long bad = 99;
	CHECK(ptrec_elf_load_image(img, path, 0, 0, &bad) == -PTREC_EFORMAT);
	CHECK_EQ_U64(bad, 0);
	CHECK(ptrec_elf_load_image(img, "/nonexistent/ptrec", 0, 0, &bad) == -PTREC_EIO);
	ptrec_pt_img_free(img);
	unlink(path);
}

int main(void)
{
	const char *dir = getenv("top_builddir");
	if (!dir)
		dir = ".";
	test_bytes_and_overlap();
	test_raw_spec(dir);
	test_elf_and_self();
	test_elf_errors(dir);
	return check_done();
}

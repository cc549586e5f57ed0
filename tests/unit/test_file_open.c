/* test_file_open.c — readers never block on their input and look at a file's header before
 * reading all of it: a FIFO (as a dump, an ELF file, a code image file) is refused at once;
 * a 1 GiB file that is not a dump costs one header read; a real dump loads whole. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dump_writer.h"
#include "ptrec.h"
#include "core/file_open.h"
#include "decode/elf_load.h"
#include "decode/pt_image.h"
#include "dump/dump_read.h"
#include "symbols/elf_symbols.h"

static char dir[] = "/tmp/ptrec-file-open.XXXXXX";
static char fifo[64], big[64], dump[64];

static void fifo_refused(void)
{
	struct stat st;
	struct ptrec_elf elf;
	struct ptrec_warnings w;
	struct ptrec_dump_file f;
	struct ptrec_dump_error err;
	struct ptrec_pt_img *img = ptrec_pt_img_new();

	memset(&w, 0, sizeof(w));
	alarm(20); /* a reader that blocks on the FIFO fails the test instead of hanging it */
	CHECK(ptrec_open_regular(fifo, &st) == -1 && errno == EINVAL);
	CHECK_STR(ptrec_file_type(st.st_mode), "FIFO");
	CHECK(ptrec_elf_open_file(fifo, &elf, &w) == -PTREC_EIO);
	CHECK(img != NULL);
	CHECK(ptrec_elf_load_image(img, fifo, 0, 0, NULL) == -PTREC_EIO);
	CHECK(ptrec_pt_img_add_file(img, fifo, 0, 0, 0x400000) == -PTREC_EIO);
	CHECK(ptrec_dump_load(fifo, &f, &err) == -PTREC_EIO);
	CHECK(strstr(err.cause, "not a regular file (a FIFO)") != NULL);
	CHECK(ptrec_dump_load(dir, &f, &err) == -PTREC_EIO);
	CHECK(strstr(err.cause, "not a regular file (a directory)") != NULL);
	alarm(0);
	ptrec_pt_img_free(img);
}

static long maxrss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void header_first(void)
{
	struct ptrec_dump_file f;
	struct ptrec_dump_error err;
	struct tbuf b = {0};
	int fd;

	/* 1 GiB of zeros: bad magic after one 24-byte read, not a 1 GiB buffer. */
	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, 1l << 30) == 0);
	close(fd);
	long before = maxrss_kib();
	CHECK(ptrec_dump_load(big, &f, &err) == -PTREC_EFORMAT);
	CHECK(err.offset == 0 && strstr(err.cause, "bad magic") != NULL);
	CHECK(f.data == NULL);
	CHECK(maxrss_kib() - before < 64 * 1024);

	/* A dump written by the test writer loads whole and parses. */
	tw_header(&b);
	tw_process(&b, 10, 10, 1, 11, 1, 0, 1, 0, "srv", "/usr/bin/srv", "");
	tw_end(&b);
	fd = open(dump, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, b.p, b.n) == (ssize_t)b.n);
	close(fd);
	CHECK(ptrec_dump_load(dump, &f, &err) == 0);
	CHECK(f.size == b.n && memcmp(f.data, b.p, b.n) == 0);
	struct ptrec_dump d;
	CHECK(ptrec_dump_parse(f.data, f.size, &d, &err) == 0 && d.complete);
	CHECK_STR(d.process.comm, "srv");
	ptrec_dump_free(&d);
	ptrec_dump_file_free(&f);

	/* Shorter than a header: cut short, said so. */
	fd = open(dump, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, b.p, 10) == 10);
	close(fd);
	CHECK(ptrec_dump_load(dump, &f, &err) == -PTREC_ETRUNC);
	CHECK(strstr(err.cause, "too short") != NULL);
	free(b.p);
}

int main(void)
{
	if (!mkdtemp(dir))
		SKIP("cannot make a scratch directory");
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(big, sizeof(big), "%s/big", dir);
	snprintf(dump, sizeof(dump), "%s/d.ptrec", dir);
	if (mkfifo(fifo, 0600) != 0)
		SKIP("mkfifo: %s", strerror(errno));
	fifo_refused();
	header_first();
	unlink(fifo);
	unlink(big);
	unlink(dump);
	rmdir(dir);
	return check_done();
}

/* test_host_files.c — the host's files the report child appends to a dump
 * (ptrec_dump_append_files, crash/dump_write.c), read back by the dump reader.  Spec:
 * - after the dump's END come one SYSFILE record per kind read and another END; the dump reads
 *   complete, without warnings, the process's records before END untouched;
 * - a /proc/cpuinfo of 192 processors (about 200 KiB) keeps its first whole processor entries
 *   within PTREC_SYSFILE_CPUINFO_MAX, flagged CUT, with the file's full size: the text kept
 *   is the file's start and ends with an entry's blank line;
 * - this host's uname(2) follows, "sysname release version machine";
 * - a file that fits is kept whole and not flagged; a kind already read is not read again
 *   (the second os-release), a missing file is tried at its next path;
 * - a FIFO or a device is never read (no record, no hang), and a missing dump is an error. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "check.h"
#include "crash/crash.h"
#include "dump/dump_read.h"
#include "dump_writer.h"

static char dir[] = "/tmp/ptrec-host-files.XXXXXX";

static void path_in(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

static void write_file(const char *name, const void *p, size_t n)
{
	char path[256];
	path_in(path, sizeof(path), name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(99);
	}
}

static uint8_t *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	struct tbuf b = {0};
	uint8_t tmp[65536];
	size_t k;
	if (!f)
		return NULL;
	while ((k = fread(tmp, 1, sizeof(tmp), f)) > 0)
		tb_put(&b, tmp, k);
	fclose(f);
	*n = b.n;
	return b.p;
}

int main(void)
{
	char dump[256], cpu[256], lsb[256], os1[256], os2[256], fifo[256];
	struct tbuf b = {0}, text = {0};
	static const char cmdline[] = "/usr/bin/demo\0-x\0";
	static const char osrel[] = "ID=debian\nVERSION_ID=\"12\"\n";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 99;
	}
	path_in(dump, sizeof(dump), "d.ptrec");
	path_in(cpu, sizeof(cpu), "cpuinfo");
	path_in(lsb, sizeof(lsb), "lsb-release");
	path_in(os1, sizeof(os1), "os-release");
	path_in(os2, sizeof(os2), "usr-os-release");
	path_in(fifo, sizeof(fifo), "fifo");

	/* A dump as the crash path leaves it: the process's files, then END. */
	tw_header(&b);
	tw_process(&b, 7, 7, PTREC_EVENT_CRASH, 11, 1, 0x10, PTREC_BACKEND_NONE, 0, "demo",
	           "/usr/bin/demo", "");
	tw_sysfile(&b, PTREC_SYSFILE_CMDLINE, 0, sizeof(cmdline) - 1, cmdline, sizeof(cmdline) - 1);
	tw_end(&b);
	size_t dump_size = b.n;
	write_file("d.ptrec", b.p, b.n);

	/* 192 processors of a large x86-64 server, each entry about 1 KiB. */
	for (int i = 0; i < 192; i++) {
		char e[2048];
		int n = snprintf(e, sizeof(e), "processor\t: %d\nvendor_id\t: GenuineIntel\n"
		                 "model name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t:", i);
		tb_put(&text, e, (size_t)n);
		for (int k = 0; k < 120; k++)
			tb_put(&text, " avx512f", 8);
		tb_put(&text, "\n\n", 2);
	}
	CHECK(text.n > 3 * PTREC_SYSFILE_CPUINFO_MAX);
	write_file("cpuinfo", text.p, text.n);
	write_file("usr-os-release", osrel, sizeof(osrel) - 1);
	write_file("os-release", "ID=other\n", 9); /* the second of its kind: not read */
	CHECK(mkfifo(fifo, 0600) == 0);

	const struct ptrec_host_file files[] = {
		{PTREC_SYSFILE_CPUINFO, cpu, PTREC_SYSFILE_CPUINFO_MAX},
		{PTREC_SYSFILE_LSB_RELEASE, fifo, PTREC_SYSFILE_RELEASE_MAX}, /* never read */
		{PTREC_SYSFILE_LSB_RELEASE, "/dev/zero", PTREC_SYSFILE_RELEASE_MAX}, /* nor this */
		{PTREC_SYSFILE_OS_RELEASE, lsb /* missing */, PTREC_SYSFILE_RELEASE_MAX},
		{PTREC_SYSFILE_OS_RELEASE, os2, PTREC_SYSFILE_RELEASE_MAX},
		{PTREC_SYSFILE_OS_RELEASE, os1, PTREC_SYSFILE_RELEASE_MAX},
		{0, NULL, 0},
	};
	CHECK_EQ_U64(ptrec_dump_append_files(0, dump, files), 0);

	size_t n;
	uint8_t *data = read_file(dump, &n);
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	CHECK(data && !memcmp(data, b.p, dump_size)); /* what the crash path wrote, untouched */
	CHECK(data && ptrec_dump_parse(data, n, &d, &err) == 0);
	if (data && d.complete) {
		const struct ptrec_dump_sysfile_rec *c = &d.sysfiles[PTREC_SYSFILE_CPUINFO];
		CHECK_EQ_U64(d.warnings.count, 0);
		CHECK_EQ_U64(d.end_offset, n);
		CHECK(d.sysfiles[PTREC_SYSFILE_CMDLINE].present && !d.sysfiles[PTREC_SYSFILE_CMDLINE].appended);
		CHECK(c->present && c->appended);
		CHECK(c->hdr.flags & PTREC_SYSFILE_CUT);
		CHECK_EQ_U64(c->hdr.size, text.n);
		CHECK(c->len <= PTREC_SYSFILE_CPUINFO_MAX && c->len > PTREC_SYSFILE_CPUINFO_MAX - 2048);
		CHECK(!memcmp(c->bytes, text.p, c->len));
		CHECK(c->len >= 2 && c->bytes[c->len - 1] == '\n' && c->bytes[c->len - 2] == '\n');
		CHECK(!d.sysfiles[PTREC_SYSFILE_LSB_RELEASE].present);
		const struct ptrec_dump_sysfile_rec *o = &d.sysfiles[PTREC_SYSFILE_OS_RELEASE];
		CHECK(o->present && o->len == sizeof(osrel) - 1 && !(o->hdr.flags & PTREC_SYSFILE_CUT));
		CHECK(o->present && !memcmp(o->bytes, osrel, sizeof(osrel) - 1));
		/* and this host's uname, as Breakpad's OS version string */
		struct utsname u;
		char want[4 * sizeof(u.release)];
		CHECK(uname(&u) == 0);
		snprintf(want, sizeof(want), "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
		const struct ptrec_dump_sysfile_rec *un = &d.sysfiles[PTREC_SYSFILE_UNAME];
		CHECK(un->present && un->appended && un->len == strlen(want));
		CHECK(un->present && !memcmp(un->bytes, want, un->len < strlen(want) ? un->len : strlen(want)));
		printf("cpuinfo: %zu of %zu bytes kept\n", c->len, text.n);
		ptrec_dump_free(&d);
	}
	free(data);

	/* A small cpuinfo is kept whole. */
	write_file("d.ptrec", b.p, b.n);
	write_file("cpuinfo", text.p, 3000);
	CHECK_EQ_U64(ptrec_dump_append_files(0, dump, files), 0);
	data = read_file(dump, &n);
	CHECK(data && ptrec_dump_parse(data, n, &d, &err) == 0);
	if (data) {
		CHECK_EQ_U64(d.sysfiles[PTREC_SYSFILE_CPUINFO].len, 3000);
		CHECK(!(d.sysfiles[PTREC_SYSFILE_CPUINFO].hdr.flags & PTREC_SYSFILE_CUT));
		ptrec_dump_free(&d);
	}
	free(data);

	char missing[256];
	path_in(missing, sizeof(missing), "none.ptrec");
	CHECK_EQ_U64((uint64_t)(int64_t)ptrec_dump_append_files(0, missing, files),
	             (uint64_t)(int64_t)-PTREC_EIO);

	unlink(dump);
	unlink(cpu);
	unlink(os1);
	unlink(os2);
	unlink(fifo);
	rmdir(dir);
	free(b.p);
	free(text.p);
	return check_done();
}

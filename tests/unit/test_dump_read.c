/* test_dump_read.c — the dump reader on dumps written byte by byte by the test: every field of
 * a valid dump, a cut at every offset (read as far as it goes, or a clean error before the
 * PROCESS record is whole), and corrupted sizes and fields (an error naming the offset). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dump/dump_read.h"
#include "dump_writer.h"
#include "ptrec.h"

/* Offsets of the records in the sample dump. */
struct layout {
	size_t process, regs, maps, buildid, thread, memory, end;
};

static const uint8_t sample_id[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
                                      7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void sample(struct tbuf *b, struct layout *l)
{
	struct tbuf ring = {0};
	uint8_t stack[64];
	const char *maps =
		"555555554000-555555555000 r--p 00000000 08:01 1234 /usr/bin/demo\n"
		"555555555000-555555556000 r-xp 00001000 08:01 1234 /usr/bin/demo\n"
		"this line is not a mapping\n"
		"7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0                          [vdso]\n"
		"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 \n";

	for (int i = 0; i < 64; i++)
		stack[i] = (uint8_t)i;
	tw_soft(&ring, 0x555555555010, 0x555555555100, PTREC_BR_CALL);
	tw_soft(&ring, 0x555555555100, 0x555555555010, PTREC_BR_RET);
	tw_soft(&ring, 0x555555555020, 0x555555555200, PTREC_BR_CALL);
	memset(b, 0, sizeof(*b));
	tw_header(b);
	l->process = b->n;
	tw_process(b, 4242, 4243, PTREC_EVENT_CRASH, 11, 1, 0xdead, PTREC_BACKEND_INSTRUMENTED, 1,
	           "demo", "/usr/bin/demo", "");
	l->regs = b->n;
	tw_regs(b, 4243, 0x555555555210, 0x7fffffffe000, 0x7fffffffe020);
	l->maps = b->n;
	tw_record(b, PTREC_REC_MAPS, maps, strlen(maps));
	l->buildid = b->n;
	tw_buildid(b, 0x555555554000, sample_id, sizeof(sample_id), "/usr/bin/demo");
	l->thread = b->n;
	tw_thread(b, 4243, PTREC_BACKEND_INSTRUMENTED, PTREC_THREAD_CRASHED | PTREC_THREAD_FROZEN,
	          "demo-main", 65536, ring.n, ring.p, ring.n);
	l->memory = b->n;
	tw_memory(b, 0x7fffffffe000, PTREC_MEM_STACK, 4243, stack, sizeof(stack));
	l->end = b->n;
	tw_end(b);
	free(ring.p);
}

static void test_valid(void)
{
	struct tbuf b;
	struct layout l;
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	uint8_t mem[16];

	sample(&b, &l);
	CHECK(ptrec_dump_parse(b.p, b.n, &d, &err) == 0);
	CHECK(d.complete);
	CHECK_EQ_U64(d.end_offset, b.n);
	CHECK_EQ_U64(d.process.pid, 4242);
	CHECK_EQ_U64(d.process.tid, 4243);
	CHECK_EQ_U64(d.process.signo, 11);
	CHECK_EQ_U64(d.process.fault_addr, 0xdead);
	CHECK_STR(d.process.comm, "demo");
	CHECK_STR(d.process.exe, "/usr/bin/demo");
	CHECK(d.has_regs);
	CHECK_EQ_U64(d.regs.gregs[PTREC_REG_RIP], 0x555555555210);
	CHECK_EQ_U64(d.regs.gregs[PTREC_REG_RBP], 0x7fffffffe020);
	CHECK_EQ_U64(d.nthreads, 1);
	CHECK_EQ_U64(d.threads[0].hdr.tid, 4243);
	CHECK_STR(d.threads[0].hdr.name, "demo-main");
	CHECK_EQ_U64(d.threads[0].hdr.data_size, 72);
	CHECK_EQ_U64(d.threads[0].offset, l.thread);
	CHECK(d.threads[0].data == b.p + l.thread + 16 + sizeof(struct ptrec_dump_thread));
	CHECK(ptrec_dump_find_thread(&d, 4243) == &d.threads[0]);
	CHECK(ptrec_dump_find_thread(&d, 1) == NULL);
	/* Four mappings; the malformed line is skipped with a warning. */
	CHECK_EQ_U64(d.nmaps, 4);
	CHECK_EQ_U64(d.maps[1].start, 0x555555555000);
	CHECK_EQ_U64(d.maps[1].end, 0x555555556000);
	CHECK_EQ_U64(d.maps[1].offset, 0x1000);
	CHECK_EQ_U64(d.maps[1].inode, 1234);
	CHECK_STR(d.maps[1].perms, "r-xp");
	CHECK_STR(d.maps[1].path, "/usr/bin/demo");
	CHECK_STR(d.maps[2].path, "[vdso]");
	CHECK_STR(d.maps[3].path, "");
	CHECK_EQ_U64(d.warnings.count, 1);
	CHECK(d.warnings.count && strstr(d.warnings.items[0], "MAPS line 3 malformed"));
	CHECK_EQ_U64(d.nbuildids, 1);
	CHECK_EQ_U64(d.buildids[0].id_len, 20);
	CHECK(!memcmp(d.buildids[0].id, sample_id, 20));
	CHECK_STR(d.buildids[0].path, "/usr/bin/demo");
	CHECK_EQ_U64(d.nmemory, 1);
	CHECK_EQ_U64(ptrec_dump_read_memory(&d, 0x7fffffffe008, mem, 8), 8);
	CHECK_EQ_U64(mem[0], 8);
	CHECK_EQ_U64(ptrec_dump_read_memory(&d, 0x7fffffffe038, mem, 16), 8); /* range ends */
	CHECK_EQ_U64(ptrec_dump_read_memory(&d, 0x7fffffffe040, mem, 8), 0);
	CHECK_EQ_U64(ptrec_dump_read_memory(&d, 0x7fffffffdff8, mem, 8), 0);
	ptrec_dump_free(&d);
	free(b.p);
}

/* Cut at every offset: before the PROCESS record is whole the reader fails cleanly
 * (ETRUNC); from there on it reads what is there, says the dump was cut short, and every
 * pointer it returns lies inside the bytes it was given. */
static void test_truncated_everywhere(void)
{
	struct tbuf b;
	struct layout l;
	size_t process_end, bad = 0;

	sample(&b, &l);
	process_end = l.regs;
	for (size_t k = 0; k < b.n; k++) {
		uint8_t *copy = malloc(k ? k : 1); /* exact size: ASan sees any over-read */
		struct ptrec_dump d;
		struct ptrec_dump_error err;
		int rc;

		memcpy(copy, b.p, k);
		rc = ptrec_dump_parse(copy, k, &d, &err);
		if (k < process_end) {
			if (rc != -PTREC_ETRUNC || err.offset > k || !err.cause[0])
				bad++;
		} else {
			int ok = rc == 0 && !d.complete && d.warnings.count >= 1;
			for (size_t i = 0; ok && i < d.nthreads; i++)
				ok = d.threads[i].data >= copy &&
				     d.threads[i].data + d.threads[i].hdr.data_size <= copy + k;
			for (size_t i = 0; ok && i < d.nmemory; i++)
				ok = d.memory[i].bytes + d.memory[i].hdr.size <= copy + k;
			/* What is fully present is read. */
			if (ok && k >= l.memory)
				ok = d.nthreads == 1 && d.nmaps == 4 && d.has_regs;
			if (ok && k < l.thread + 16)
				ok = d.nthreads == 0;
			if (!ok) {
				fprintf(stderr, "cut at %zu: rc %d complete %d warnings %zu\n", k, rc,
				        d.complete, d.warnings.count);
				bad++;
			}
			if (!rc)
				ptrec_dump_free(&d);
		}
		free(copy);
	}
	CHECK_EQ_U64(bad, 0);
	free(b.p);
}

/* Parses b after poking a 32- or 64-bit value at off; expects code and the error offset. */
static void expect_error(const struct tbuf *b, size_t off, uint64_t value, int width, int code,
                         uint64_t err_off, const char *cause_part)
{
	uint8_t *copy = malloc(b->n);
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	int rc;

	memcpy(copy, b->p, b->n);
	memcpy(copy + off, &value, (size_t)width);
	rc = ptrec_dump_parse(copy, b->n, &d, &err);
	if (rc != code)
		fprintf(stderr, "poke 0x%llx at %zu: rc %d, expected %d\n", (unsigned long long)value, off, rc, code);
	CHECK_EQ_U64(rc, code);
	if (rc == 0)
		ptrec_dump_free(&d);
	else {
		CHECK_EQ_U64(err.offset, err_off);
		if (!strstr(err.cause, cause_part))
			fprintf(stderr, "cause \"%s\" lacks \"%s\"\n", err.cause, cause_part);
		CHECK(strstr(err.cause, cause_part) != NULL);
	}
	free(copy);
}

static void test_corrupted(void)
{
	struct tbuf b;
	struct layout l;
	size_t th = sizeof(struct ptrec_dump_record); /* record header bytes */

	sample(&b, &l);
	expect_error(&b, 0, 0x58, 1, -PTREC_EFORMAT, 0, "bad magic");
	expect_error(&b, 8, 3, 4, -PTREC_EFORMAT, 8, "version 3");
	expect_error(&b, 8, 0, 4, -PTREC_EFORMAT, 8, "version 0");
	expect_error(&b, 12, 20, 4, -PTREC_EFORMAT, 12, "header_size");
	/* The first record must be PROCESS. */
	expect_error(&b, l.process, PTREC_REC_REGS, 4, -PTREC_EFORMAT, l.process, "expected PROCESS");
	/* PROCESS of the wrong size, and a PROCESS size running past the file. */
	expect_error(&b, l.process + 8, 100, 8, -PTREC_EFORMAT, l.process + 8, "PROCESS record has 100");
	expect_error(&b, l.process + 8, UINT64_MAX, 8, -PTREC_ETRUNC, l.process + 8, "claims");
	/* PROCESS fields out of range. */
	expect_error(&b, l.process + th + 8, 9, 4, -PTREC_EFORMAT, l.process + th + 8, "event 9");
	expect_error(&b, l.process + th + offsetof(struct ptrec_dump_process, backend), 77, 4,
	             -PTREC_EFORMAT, l.process + th + offsetof(struct ptrec_dump_process, backend),
	             "backend 77");
	/* A reserved field that is not zero. */
	expect_error(&b, l.regs + 4, 1, 4, -PTREC_EFORMAT, l.regs + 4, "reserved");
	/* REGS count. */
	expect_error(&b, l.regs + th + 4, 5, 4, -PTREC_EFORMAT, l.regs + th + 4, "REGS count 5");
	/* THREAD data_size disagreeing with the record, and exceeding the ring. */
	expect_error(&b, l.thread + th + offsetof(struct ptrec_dump_thread, data_size), 73, 8,
	             -PTREC_EFORMAT, l.thread + th + offsetof(struct ptrec_dump_thread, data_size),
	             "does not match");
	expect_error(&b, l.thread + th + offsetof(struct ptrec_dump_thread, ring_size), 64, 8,
	             -PTREC_EFORMAT, l.thread + th + offsetof(struct ptrec_dump_thread, data_size),
	             "exceeds ring_size");
	expect_error(&b, l.thread + th + offsetof(struct ptrec_dump_thread, head), 24, 8,
	             -PTREC_EFORMAT, l.thread + th + offsetof(struct ptrec_dump_thread, head),
	             "head 24");
	/* THREAD record shorter than its header. */
	expect_error(&b, l.thread + 8, 16, 8, -PTREC_EFORMAT, l.thread + 8, "less than");
	/* BUILDID lengths. */
	expect_error(&b, l.buildid + th + 8, 200, 4, -PTREC_EFORMAT, l.buildid + th + 8, "too large");
	expect_error(&b, l.buildid + th + 8, 19, 4, -PTREC_EFORMAT, l.buildid + th + 8,
	             "do not match");
	/* MEMORY size. */
	expect_error(&b, l.memory + th + 16, 65, 8, -PTREC_EFORMAT, l.memory + th + 16,
	             "does not match");
	/* A record size pointing past the end is a cut-short dump, not an error. */
	expect_error(&b, l.thread + 8, 1u << 30, 8, 0, 0, "");
	/* END with a payload (present in the file). */
	{
		static const uint8_t eight[8];
		tb_put(&b, eight, 8);
		expect_error(&b, l.end + 8, 8, 8, -PTREC_EFORMAT, l.end + 8, "END record has 8");
	}
	free(b.p);
}

static void test_cut_short_and_unknown(void)
{
	struct tbuf b;
	struct layout l;
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	uint8_t *copy;

	sample(&b, &l);
	/* An unknown record type is skipped; the dump stays complete. */
	copy = malloc(b.n);
	memcpy(copy, b.p, b.n);
	copy[l.buildid] = 0x42;
	CHECK(ptrec_dump_parse(copy, b.n, &d, &err) == 0);
	CHECK(d.complete);
	CHECK_EQ_U64(d.nbuildids, 0);
	CHECK_EQ_U64(d.nthreads, 1);
	ptrec_dump_free(&d);
	/* A huge THREAD size: read up to it, with a warning naming the offset. */
	memcpy(copy, b.p, b.n);
	{
		uint64_t huge = 1ull << 40;
		memcpy(copy + l.thread + 8, &huge, 8);
	}
	CHECK(ptrec_dump_parse(copy, b.n, &d, &err) == 0);
	CHECK(!d.complete);
	CHECK_EQ_U64(d.nthreads, 0);
	CHECK_EQ_U64(d.nmaps, 4);
	{
		char want[64];
		int found = 0;
		snprintf(want, sizeof(want), "offset 0x%zx: dump cut short", l.thread);
		for (size_t i = 0; i < d.warnings.count; i++)
			found |= strstr(d.warnings.items[i], want) != NULL;
		CHECK(found);
	}
	ptrec_dump_free(&d);
	free(copy);
	/* Trailing bytes after END are reported. */
	tb_put(&b, "xx", 2);
	CHECK(ptrec_dump_parse(b.p, b.n, &d, &err) == 0);
	CHECK(d.complete);
	CHECK(d.warnings.count == 2 && strstr(d.warnings.items[1], "after the END record"));
	ptrec_dump_free(&d);
	free(b.p);
}

/* 1 if a warning of d contains text. */
static int warned(const struct ptrec_dump *d, const char *text)
{
	for (size_t i = 0; i < d->warnings.count; i++)
		if (strstr(d->warnings.items[i], text))
			return 1;
	return 0;
}

/* SYSFILE records: the process's in the dump, the host's appended after END by the report
 * child and closed by another END; read by kind, what was cut flagged, nothing in them fatal,
 * and an appended part cut anywhere read as far as it goes without losing the dump. */
static void test_sysfiles(void)
{
	static const char cmdline[] = "/usr/bin/demo\0--port\0" "6379\0";
	static const uint64_t auxv[] = {6, 4096, 9, 0x555555555040, 0, 0};
	static const char cpuinfo[] = "processor\t: 0\nvendor_id\t: GenuineIntel\n\n";
	static const char osrel[] = "ID=debian\nVERSION_ID=\"12\"\n";
	struct tbuf b = {0};
	struct ptrec_dump d;
	struct ptrec_dump_error err;

	tw_header(&b);
	tw_process(&b, 7, 7, PTREC_EVENT_CRASH, 11, 1, 0x10, PTREC_BACKEND_NONE, 0, "demo",
	           "/usr/bin/demo", "");
	tw_sysfile(&b, PTREC_SYSFILE_CMDLINE, 0, sizeof(cmdline) - 1, cmdline, sizeof(cmdline) - 1);
	tw_sysfile(&b, PTREC_SYSFILE_AUXV, 0, sizeof(auxv), auxv, sizeof(auxv));
	tw_sysfile(&b, 99, 0, 3, "new", 3); /* a kind of a later writer: skipped */
	tw_end(&b);
	size_t end1 = b.n;
	tw_sysfile(&b, PTREC_SYSFILE_CPUINFO, PTREC_SYSFILE_CUT, 300000, cpuinfo,
	           sizeof(cpuinfo) - 1);
	tw_sysfile(&b, PTREC_SYSFILE_OS_RELEASE, 0, sizeof(osrel) - 1, osrel, sizeof(osrel) - 1);
	tw_end(&b);

	CHECK(ptrec_dump_parse(b.p, b.n, &d, &err) == 0);
	CHECK(d.complete);
	CHECK_EQ_U64(d.end_offset, b.n);
	CHECK_EQ_U64(d.warnings.count, 0);
	const struct ptrec_dump_sysfile_rec *f = d.sysfiles;
	CHECK(f[PTREC_SYSFILE_CMDLINE].present && !f[PTREC_SYSFILE_CMDLINE].appended);
	CHECK_EQ_U64(f[PTREC_SYSFILE_CMDLINE].len, sizeof(cmdline) - 1);
	CHECK(!memcmp(f[PTREC_SYSFILE_CMDLINE].bytes, cmdline, sizeof(cmdline) - 1));
	CHECK(f[PTREC_SYSFILE_AUXV].present && f[PTREC_SYSFILE_AUXV].len == sizeof(auxv));
	CHECK(!memcmp(f[PTREC_SYSFILE_AUXV].bytes, auxv, sizeof(auxv)));
	CHECK(!f[PTREC_SYSFILE_STATUS].present && !f[PTREC_SYSFILE_LSB_RELEASE].present);
	CHECK(f[PTREC_SYSFILE_CPUINFO].present && f[PTREC_SYSFILE_CPUINFO].appended);
	CHECK_EQ_U64(f[PTREC_SYSFILE_CPUINFO].hdr.size, 300000);
	CHECK(f[PTREC_SYSFILE_CPUINFO].hdr.flags & PTREC_SYSFILE_CUT);
	CHECK(!memcmp(f[PTREC_SYSFILE_CPUINFO].bytes, cpuinfo, sizeof(cpuinfo) - 1));
	CHECK(f[PTREC_SYSFILE_OS_RELEASE].present && f[PTREC_SYSFILE_OS_RELEASE].appended);
	CHECK(!(f[PTREC_SYSFILE_OS_RELEASE].hdr.flags & PTREC_SYSFILE_CUT));
	ptrec_dump_free(&d);

	/* The appended part cut at every offset: the dump stays complete, the whole records
	 * are read, a cut one is left out with a warning. */
	for (size_t n = end1; n < b.n; n++) {
		CHECK(ptrec_dump_parse(b.p, n, &d, &err) == 0);
		CHECK(d.complete);
		CHECK(d.sysfiles[PTREC_SYSFILE_AUXV].present);
		CHECK(n == end1 || warned(&d, "bytes after the END record") ||
		      warned(&d, "have no END of their own: cut short"));
		CHECK(!d.sysfiles[PTREC_SYSFILE_OS_RELEASE].present ||
		      n >= b.n - 16 /* only the closing END is missing */);
		ptrec_dump_free(&d);
	}

	/* Odd records: too short for the header, a second of a kind, a size below the bytes
	 * kept: warnings, never a failure; a record after END that is not a SYSFILE is not read. */
	struct tbuf o = {0};
	tw_header(&o);
	tw_process(&o, 7, 7, PTREC_EVENT_CRASH, 11, 1, 0x10, PTREC_BACKEND_NONE, 0, "demo",
	           "/usr/bin/demo", "");
	tw_record(&o, PTREC_REC_SYSFILE, "short", 5);
	tw_sysfile(&o, PTREC_SYSFILE_STATUS, 0, 2, "Name:\tdemo\n", 11);
	tw_sysfile(&o, PTREC_SYSFILE_STATUS, 0, 5, "other", 5);
	tw_end(&o);
	tw_memory(&o, 0x7000, PTREC_MEM_STACK, 7, "12345678", 8);
	tw_end(&o);
	CHECK(ptrec_dump_parse(o.p, o.n, &d, &err) == 0);
	CHECK(d.complete);
	CHECK(warned(&d, "less than its 16-byte header"));
	CHECK(warned(&d, "second SYSFILE record of kind 3"));
	CHECK(warned(&d, "says the file had 2 bytes but keeps 11"));
	CHECK(warned(&d, "not whole SYSFILE records"));
	CHECK(d.sysfiles[PTREC_SYSFILE_STATUS].present);
	CHECK_EQ_U64(d.sysfiles[PTREC_SYSFILE_STATUS].hdr.size, 11);
	CHECK(!memcmp(d.sysfiles[PTREC_SYSFILE_STATUS].bytes, "Name:\tdemo\n", 11));
	CHECK_EQ_U64(d.nmemory, 0);
	ptrec_dump_free(&d);
	free(o.p);
	free(b.p);
}

int main(void)
{
	test_valid();
	test_truncated_everywhere();
	test_corrupted();
	test_cut_short_and_unknown();
	test_sysfiles();
	return check_done();
}

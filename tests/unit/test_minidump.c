/* test_minidump.c — the minidump writer (report/minidump.h) against the layout of Breakpad's
 * minidump_format.h and Microsoft's MINIDUMP_* structures, read back here at the documented
 * offsets (an independent reader, not the writer's code): a synthetic crash dump (test-side
 * writer) of three threads — the crashed one with all registers and its stack, one the kernel
 * showed blocked in a system call (sp and pc only, its stack), one running (no registers) —
 * and mappings of an executable with a build ID, a library without one, a data file and
 * anonymous memory.  Spec: header and directory; system info (AMD64, Linux, family/model/
 * stepping); the exception (signal as code, si_code as flags, fault address, crashing thread
 * and its context); every thread with the right context flags, registers and stack bytes;
 * modules only for executable file mappings, spanning all mappings of the file, with the build
 * ID as an ELF CodeView record and the path as UTF-16; the memory list sorted without
 * overlaps; LinuxMaps equal to the dump's maps; the branch stream of doc/minidump.md; no
 * exception for a snapshot; files created 0600 and never over an existing file or link. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dump_writer.h"
#include "ptrec.h"
#include "report/minidump.h"

#define EXE "/opt/srv/bin/server"
#define LIB "/opt/srv/lib/libw\xc3\xa9ird\xf0\x9f\x98\x80.so" /* é and U+1F600 */
static const char maps_text[] =
	"555555554000-555555555000 r--p 00000000 08:01 11 " EXE "\n"
	"555555555000-555555556000 r-xp 00001000 08:01 11 " EXE "\n"
	"555555556000-555555558000 rw-p 00002000 08:01 11 " EXE "\n"
	"555555558000-555555579000 rw-p 00000000 00:00 0 [heap]\n"
	"7ffff7a00000-7ffff7b00000 r--p 00000000 08:01 12 /var/lib/srv/data.bin\n"
	"7ffff7d00000-7ffff7d01000 r--p 00000000 08:01 13 " LIB "\n"
	"7ffff7d01000-7ffff7d03000 r-xp 00001000 08:01 13 " LIB "\n"
	"7ffff7ff0000-7ffff7ff2000 r-xp 00000000 00:00 0 [vdso]\n"
	"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n";
static const uint8_t build_id[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                     11, 12, 13, 14, 15, 16};
#define STACK7 0x7fffffffe000ull
#define STACK8 0x7ffff7c00000ull
#define VDSO 0x7ffff7ff0000ull

/* The event thread's newest branch and its count, as the report decoded them. */
static struct ptrec_branch newest;
static size_t decoded;

static uint32_t u16(const struct ptrec_minidump *m, uint64_t at)
{
	if (at + 2 > m->size)
		return 0xdead;
	return (uint32_t)m->data[at] | (uint32_t)m->data[at + 1] << 8;
}
static uint32_t u32(const struct ptrec_minidump *m, uint64_t at)
{
	return at + 4 > m->size ? 0xdeadbeef : u16(m, at) | u16(m, at + 2) << 16;
}
static uint64_t u64(const struct ptrec_minidump *m, uint64_t at)
{
	return at + 8 > m->size ? 0xdeadbeefdeadull : u32(m, at) | (uint64_t)u32(m, at + 4) << 32;
}

/* The directory entry of stream type: *size and the rva returned; 0 if absent. */
static uint32_t stream(const struct ptrec_minidump *m, uint32_t type, uint32_t *size)
{
	uint32_t n = u32(m, 8), dir = u32(m, 12);
	for (uint32_t i = 0; i < n; i++)
		if (u32(m, dir + 12 * i) == type) {
			*size = u32(m, dir + 12 * i + 4);
			return u32(m, dir + 12 * i + 8);
		}
	*size = 0;
	return 0;
}

/* The MINIDUMP_STRING at rva as UTF-16 units in out; returns their count. */
static size_t md_str(const struct ptrec_minidump *m, uint32_t rva, uint16_t *out, size_t cap)
{
	size_t n = u32(m, rva) / 2;
	for (size_t i = 0; i < n && i < cap; i++)
		out[i] = (uint16_t)u16(m, rva + 4 + 2 * i);
	CHECK_EQ_U64(u16(m, rva + 4 + 2 * n), 0); /* terminated */
	return n;
}

/* SYSFILE records make_dump writes: 0 none (the dumps before them), 1 all, 2 without
 * lsb-release and with a cut cpuinfo. */
static int with_sysfiles;
static const char sf_cmdline[] = "/opt/srv/bin/server\0--port\0" "6379\0";
static const uint64_t sf_auxv[] = {33, VDSO, 6, 4096, 9, 0x555555555040, 0, 0};
static const char sf_status[] = "Name:\tserver\nPid:\t7\nTgid:\t4242\n";
static const char sf_cpuinfo[] = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\n"
                                 "processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\n";
static const char sf_lsb[] = "DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=24.04\n";
static const char sf_os[] = "ID=debian\nVERSION_ID=\"12\"\n";
static const char sf_uname[] = "Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64";

static struct tbuf make_dump(uint32_t event, int overlap)
{
	struct tbuf b = {0}, ring = {0};
	uint64_t stack7[64], stack8[16];
	uint8_t vdso[8192] = {0x7f, 'E', 'L', 'F'};
	struct ptrec_dump_task t8 = {.tid = 8, .state = PTREC_TASK_SYSCALL, .nr = 202,
	                             .sp = STACK8, .pc = 0x7ffff7d01234, .stack_size = sizeof(stack8)};
	struct ptrec_dump_task t9 = {.tid = 9, .state = PTREC_TASK_RUNNING};

	for (int i = 0; i < 64; i++)
		stack7[i] = 0x1000 + (uint64_t)i;
	for (int i = 0; i < 16; i++)
		stack8[i] = 0x2000 + (uint64_t)i;
	for (int i = 0; i < 100; i++)
		tw_soft2(&ring, i % 2 ? PTREC_SOFT_RET : PTREC_SOFT_CALL, 0x555555555100 + (uint64_t)i,
		         0x555555555800 + (uint64_t)i, 0);
	tw_header(&b);
	tw_process(&b, 4242, 7, event, event == PTREC_EVENT_CRASH ? SIGSEGV : 0, 1, 0x10,
	           PTREC_BACKEND_INSTRUMENTED, 3, "server", EXE, "");
	tw_regs(&b, 7, 0x555555555123, STACK7, 0x7fffffffe100);
	if (with_sysfiles) {
		tw_sysfile(&b, PTREC_SYSFILE_CMDLINE, 0, sizeof(sf_cmdline) - 1, sf_cmdline,
		           sizeof(sf_cmdline) - 1);
		tw_sysfile(&b, PTREC_SYSFILE_AUXV, 0, sizeof(sf_auxv), sf_auxv, sizeof(sf_auxv));
		tw_sysfile(&b, PTREC_SYSFILE_STATUS, 0, sizeof(sf_status) - 1, sf_status,
		           sizeof(sf_status) - 1);
	}
	tw_thread(&b, 7, PTREC_BACKEND_INSTRUMENTED, PTREC_THREAD_CRASHED, "server", 1u << 16,
	          ring.n, ring.p, ring.n);
	tw_thread(&b, 8, PTREC_BACKEND_INSTRUMENTED, 0, "worker", 1u << 16, 0, NULL, 0);
	tw_thread(&b, 9, PTREC_BACKEND_INSTRUMENTED, 0, "busy", 1u << 16, 0, NULL, 0);
	tw_record(&b, PTREC_REC_MAPS, maps_text, strlen(maps_text));
	tw_buildid(&b, 0x555555554000, build_id, sizeof(build_id), EXE);
	tw_memory(&b, VDSO, PTREC_MEM_VDSO, 0, vdso, sizeof(vdso));
	tw_memory(&b, STACK7, PTREC_MEM_STACK, 7, stack7, sizeof(stack7));
	if (overlap) /* a record over the vDSO's bytes: left out */
		tw_memory(&b, VDSO + 4096, PTREC_MEM_CODE, 0, vdso, 4096);
	tw_memory(&b, STACK8, PTREC_MEM_STACK, 8, stack8, sizeof(stack8));
	tw_record(&b, PTREC_REC_TASK, &t8, sizeof(t8));
	tw_record(&b, PTREC_REC_TASK, &t9, sizeof(t9));
	tw_end(&b);
	if (with_sysfiles) { /* appended by the report child */
		int cut = with_sysfiles == 2;
		tw_sysfile(&b, PTREC_SYSFILE_CPUINFO, cut ? PTREC_SYSFILE_CUT : 0,
		           cut ? 200000 : sizeof(sf_cpuinfo) - 1, sf_cpuinfo, sizeof(sf_cpuinfo) - 1);
		if (!cut)
			tw_sysfile(&b, PTREC_SYSFILE_LSB_RELEASE, 0, sizeof(sf_lsb) - 1, sf_lsb,
			           sizeof(sf_lsb) - 1);
		tw_sysfile(&b, PTREC_SYSFILE_OS_RELEASE, 0, sizeof(sf_os) - 1, sf_os, sizeof(sf_os) - 1);
		if (!cut)
			tw_sysfile(&b, PTREC_SYSFILE_UNAME, 0, sizeof(sf_uname) - 1, sf_uname,
			           sizeof(sf_uname) - 1);
		tw_end(&b);
	}
	free(ring.p);
	return b;
}

static int build(uint32_t event, int overlap, struct ptrec_minidump *md)
{
	struct tbuf b = make_dump(event, overlap);
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_report r;
	struct ptrec_report_options opt;
	int rc = ptrec_dump_parse(b.p, b.n, &d, &err);
	CHECK_EQ_U64(rc, 0);
	if (rc) {
		fprintf(stderr, "parse: %s\n", err.cause);
		exit(99);
	}
	ptrec_report_options_init(&opt);
	opt.branches = 10;
	opt.other_branches = 4;
	rc = ptrec_report_build(&r, &d, &opt);
	CHECK_EQ_U64(rc, 0);
	if (!rc && r.nthreads && r.threads[0].nbranches) {
		newest = r.threads[0].branches[r.threads[0].nbranches - 1];
		decoded = r.threads[0].nbranches;
	}
	rc = ptrec_minidump_build(&r, md);
	CHECK_EQ_U64(rc, 0);
	ptrec_report_free(&r);
	ptrec_dump_free(&d);
	free(b.p);
	return rc;
}

/* The thread list entry of tid, or 0. */
static uint32_t thread_entry(const struct ptrec_minidump *m, uint32_t tid)
{
	uint32_t size, tl = stream(m, 3, &size);
	for (uint32_t i = 0; i < u32(m, tl); i++)
		if (u32(m, tl + 4 + 48 * i) == tid)
			return tl + 4 + 48 * i;
	return 0;
}

static void test_crash(void)
{
	struct ptrec_minidump m;
	uint32_t size, at;

	if (build(PTREC_EVENT_CRASH, 1, &m))
		return;
	/* MINIDUMP_HEADER */
	CHECK_EQ_U64(u32(&m, 0), 0x504d444d);
	CHECK_EQ_U64(u32(&m, 4) & 0xffff, 0xa793);
	CHECK_EQ_U64(u32(&m, 20), 1700000000);
	/* every stream lies inside the file */
	for (uint32_t i = 0; i < u32(&m, 8); i++) {
		uint32_t e = u32(&m, 12) + 12 * i;
		CHECK(u32(&m, e + 8) + (uint64_t)u32(&m, e + 4) <= m.size);
	}

	/* MINIDUMP_SYSTEM_INFO: AMD64, family 6 model 85 stepping 4, Linux */
	at = stream(&m, 7, &size);
	CHECK(at && size >= 56);
	CHECK_EQ_U64(u16(&m, at), 9);
	CHECK_EQ_U64(u16(&m, at + 2), 6);
	CHECK_EQ_U64(u16(&m, at + 4), 85 << 8 | 4);
	CHECK_EQ_U64(u32(&m, at + 20), 0x8201);
	CHECK_EQ_U64(u32(&m, at + 44), 0x50654); /* CPUID 1 EAX of 6/85/4 */

	/* MINIDUMP_MISC_INFO: the process id */
	at = stream(&m, 15, &size);
	CHECK(at && size == 24);
	CHECK_EQ_U64(u32(&m, at + 4) & 1, 1);
	CHECK_EQ_U64(u32(&m, at + 8), 4242);

	/* MINIDUMP_EXCEPTION_STREAM */
	at = stream(&m, 6, &size);
	CHECK(at && size == 168);
	CHECK_EQ_U64(u32(&m, at), 7);
	CHECK_EQ_U64(u32(&m, at + 8), SIGSEGV);
	CHECK_EQ_U64(u32(&m, at + 12), 1); /* SEGV_MAPERR */
	CHECK_EQ_U64(u64(&m, at + 24), 0x10);
	uint32_t ectx = u32(&m, at + 164);
	CHECK_EQ_U64(u32(&m, at + 160), 1232);
	CHECK(m.has_exception);

	/* MINIDUMP_THREAD_LIST: all three */
	at = stream(&m, 3, &size);
	CHECK_EQ_U64(u32(&m, at), 3);
	CHECK_EQ_U64(size, 4 + 3 * 48);
	CHECK_EQ_U64(m.nthreads, 3);
	uint32_t t7 = thread_entry(&m, 7), t8 = thread_entry(&m, 8), t9 = thread_entry(&m, 9);
	CHECK(t7 && t8 && t9);
	/* the crashed thread: CONTEXT_AMD64 with CONTROL and INTEGER, its registers */
	uint32_t c7 = u32(&m, t7 + 44);
	CHECK_EQ_U64(c7, ectx);
	CHECK_EQ_U64(u32(&m, t7 + 40), 1232);
	CHECK_EQ_U64(c7 % 16, 0);
	CHECK_EQ_U64(u32(&m, c7 + 48), 0x100003);
	CHECK_EQ_U64(u64(&m, c7 + 248), 0x555555555123); /* rip */
	CHECK_EQ_U64(u64(&m, c7 + 152), STACK7);         /* rsp */
	CHECK_EQ_U64(u64(&m, c7 + 160), 0x7fffffffe100); /* rbp */
	/* its stack: start, size, the bytes */
	CHECK_EQ_U64(u64(&m, t7 + 24), STACK7);
	CHECK_EQ_U64(u32(&m, t7 + 32), 64 * 8);
	CHECK_EQ_U64(u64(&m, u32(&m, t7 + 36) + 8 * 5), 0x1005);
	/* the blocked thread: sp and pc only (CONTROL), its stack */
	uint32_t c8 = u32(&m, t8 + 44);
	CHECK(c8 != 0);
	CHECK_EQ_U64(u32(&m, c8 + 48), 0x100001);
	CHECK_EQ_U64(u64(&m, c8 + 248), 0x7ffff7d01234);
	CHECK_EQ_U64(u64(&m, c8 + 152), STACK8);
	CHECK_EQ_U64(u64(&m, c8 + 120), 0); /* rax unknown: zero */
	CHECK_EQ_U64(u64(&m, t8 + 24), STACK8);
	CHECK_EQ_U64(u32(&m, t8 + 32), 16 * 8);
	CHECK_EQ_U64(u64(&m, u32(&m, t8 + 36) + 8 * 3), 0x2003);
	/* the running thread: listed, no context, no stack */
	CHECK_EQ_U64(u32(&m, t9 + 40), 0);
	CHECK_EQ_U64(u32(&m, t9 + 32), 0);

	/* MINIDUMP_MODULE_LIST: the executable and the library, not the data file */
	at = stream(&m, 4, &size);
	CHECK_EQ_U64(u32(&m, at), 2);
	CHECK_EQ_U64(size, 4 + 2 * 108);
	CHECK_EQ_U64(m.nmodules, 2);
	CHECK_EQ_U64(m.nbuildids, 1);
	uint32_t m0 = at + 4, m1 = at + 4 + 108;
	CHECK_EQ_U64(u64(&m, m0), 0x555555554000);
	CHECK_EQ_U64(u32(&m, m0 + 8), 0x4000); /* r--p, r-xp and rw-p of the file */
	uint16_t name[256];
	size_t n = md_str(&m, u32(&m, m0 + 20), name, 256);
	CHECK_EQ_U64(n, strlen(EXE));
	CHECK(n == strlen(EXE) && name[0] == '/' && name[n - 1] == 'r');
	uint32_t cv = u32(&m, m0 + 80);
	CHECK_EQ_U64(u32(&m, m0 + 76), 4 + 20);
	CHECK_EQ_U64(u32(&m, cv), 0x4270454c); /* 'BpEL' */
	CHECK(cv && !memcmp(m.data + cv + 4, build_id, 20));
	CHECK_EQ_U64(u64(&m, m1), 0x7ffff7d00000);
	CHECK_EQ_U64(u32(&m, m1 + 8), 0x3000);
	CHECK_EQ_U64(u32(&m, m1 + 76), 0); /* no build ID: no CodeView record */
	n = md_str(&m, u32(&m, m1 + 20), name, 256);
	/* "/opt/srv/lib/libw" e-acute "ird" U+1F600 ".so": 17 + 1 + 3 + 2 + 3 units */
	CHECK_EQ_U64(n, 26);
	CHECK_EQ_U64(name[17], 0xe9);
	CHECK_EQ_U64(name[21], 0xd83d);
	CHECK_EQ_U64(name[22], 0xde00);

	/* MINIDUMP_MEMORY_LIST: vDSO and both stacks, sorted; the overlapping record left out */
	at = stream(&m, 5, &size);
	CHECK_EQ_U64(u32(&m, at), 3);
	CHECK_EQ_U64(m.nmemory, 3);
	CHECK_EQ_U64(u64(&m, at + 4), STACK8);
	CHECK_EQ_U64(u64(&m, at + 4 + 16), VDSO);
	CHECK_EQ_U64(u32(&m, at + 4 + 16 + 8), 8192);
	CHECK_EQ_U64(u64(&m, at + 4 + 32), STACK7);
	CHECK_EQ_U64(u32(&m, at + 4 + 32 + 12), u32(&m, t7 + 36)); /* the same bytes */

	/* LinuxMaps: the maps text as it is */
	at = stream(&m, 0x47670009, &size);
	CHECK_EQ_U64(size, strlen(maps_text));
	CHECK(at && !memcmp(m.data + at, maps_text, strlen(maps_text)));

	/* the branch stream (doc/minidump.md) */
	at = stream(&m, PTREC_MINIDUMP_BRANCH_STREAM, &size);
	CHECK(at != 0);
	CHECK_EQ_U64(u32(&m, at), 1);      /* version */
	CHECK_EQ_U64(u32(&m, at + 4), 3);  /* threads */
	CHECK_EQ_U64(u32(&m, at + 8), 24);
	CHECK_EQ_U64(u32(&m, at + 12), 32);
	CHECK_EQ_U64(u32(&m, at + 16), PTREC_BACKEND_INSTRUMENTED);
	uint32_t th = at + 24;
	CHECK_EQ_U64(u32(&m, th), 7);
	CHECK_EQ_U64(u32(&m, th + 4), 0x1 | 0x2 | 0x4); /* event thread, cut, instrumented */
	CHECK(decoded >= 10);
	CHECK_EQ_U64(u32(&m, th + 8), 10);               /* --branches 10 */
	CHECK(u64(&m, th + 16) >= decoded);
	/* the newest last: the report's newest branch */
	uint32_t last = th + 24 + 9 * 32;
	CHECK_EQ_U64(m.data[last + 24], newest.kind);
	CHECK_EQ_U64(m.data[last + 25], newest.flags);
	CHECK_EQ_U64(u64(&m, last), newest.from);
	CHECK_EQ_U64(u64(&m, last + 8), newest.to);
	CHECK(newest.from >= 0x555555555100 && newest.to >= 0x555555555100);
	uint32_t th8 = th + 24 + 10 * 32;
	CHECK_EQ_U64(u32(&m, th8), 8);
	CHECK_EQ_U64(u32(&m, th8 + 8), 0);
	CHECK_EQ_U64(u32(&m, th8 + 24), 9);
	CHECK_EQ_U64(at + size, th8 + 24 + 24);

	/* saving: 0600, never over an existing file or through a link */
	char dir[] = "/tmp/ptrec-md-test.XXXXXX", path[64], link[64];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/a.dmp", dir);
	snprintf(link, sizeof(link), "%s/link.dmp", dir);
	mode_t old = umask(0);
	CHECK_EQ_U64(ptrec_minidump_save(&m, path), 0);
	umask(old);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && (size_t)st.st_size == m.size);
	CHECK_EQ_U64(ptrec_minidump_save(&m, path), (uint64_t)-PTREC_EIO);
	CHECK_EQ_U64(errno, EEXIST);
	CHECK(symlink(path, link) == 0);
	CHECK_EQ_U64(ptrec_minidump_save(&m, link), (uint64_t)-PTREC_EIO);
	CHECK(stat(path, &st) == 0 && (size_t)st.st_size == m.size);
	unlink(link);
	unlink(path);
	rmdir(dir);
	ptrec_minidump_free(&m);
}

static void test_snapshot(void)
{
	struct ptrec_minidump m;
	uint32_t size;
	if (build(PTREC_EVENT_SNAPSHOT, 0, &m))
		return;
	CHECK_EQ_U64(stream(&m, 6, &size), 0); /* no exception: the process went on */
	CHECK(!m.has_exception);
	CHECK_EQ_U64(m.nthreads, 3);
	CHECK_EQ_U64(m.nmemory, 3);
	ptrec_minidump_free(&m);
}

/* An aarch64 dump (PROCESS.arch 183) gets ARM64 system info (architecture 12) and CONTEXT_ARM64
 * contexts (912 bytes, Breakpad's MDRawContextARM64: flags u32 at 0, cpsr u32 at 4, x0..x30 from
 * 8, sp at 256, pc at 264), its registers read by enum ptrec_dump_reg_a64; a dump of a machine
 * with no context here (32-bit Arm, 40) is refused, never written with another machine's
 * context. */
static void test_other_machine(void)
{
	struct tbuf b = make_dump(PTREC_EVENT_CRASH, 0);
	struct ptrec_dump d;
	struct ptrec_dump_error err;
	struct ptrec_report r;
	struct ptrec_report_options opt;
	struct ptrec_minidump md;
	uint32_t size, at;

	CHECK_EQ_U64(ptrec_dump_parse(b.p, b.n, &d, &err), 0);
	d.process.arch = 183; /* EM_AARCH64 */
	d.regs.count = PTREC_A64_COUNT;
	for (unsigned i = 0; i < PTREC_A64_COUNT; i++)
		d.regs.gregs[i] = 0x1000 + i;
	d.regs.gregs[PTREC_A64_SP] = STACK7;
	d.regs.gregs[PTREC_A64_PC] = 0x555555555123;
	d.regs.gregs[PTREC_A64_PSTATE] = 0x60000000;
	ptrec_report_options_init(&opt);
	CHECK_EQ_U64(ptrec_report_build(&r, &d, &opt), 0);
	CHECK_EQ_U64(ptrec_minidump_build(&r, &md), 0);
	at = stream(&md, 7, &size);
	CHECK(at && size >= 56);
	CHECK_EQ_U64(u16(&md, at), 12);          /* PROCESSOR_ARCHITECTURE_ARM64 */
	CHECK_EQ_U64(u32(&md, at + 44), 0);      /* no x86 CPUID version */
	at = stream(&md, 6, &size);
	CHECK(at && size == 168);
	CHECK_EQ_U64(u32(&md, at + 160), 912);
	uint32_t c = u32(&md, at + 164);
	uint32_t t7 = thread_entry(&md, 7);
	CHECK(t7 && u32(&md, t7 + 40) == 912 && u32(&md, t7 + 44) == c);
	CHECK(c && c + 912u <= md.size);
	CHECK_EQ_U64(u32(&md, c), 0x00400003);   /* CONTEXT_ARM64 | CONTROL | INTEGER */
	CHECK_EQ_U64(u32(&md, c + 4), 0x60000000); /* cpsr */
	CHECK_EQ_U64(u64(&md, c + 8), 0x1000);   /* x0 */
	CHECK_EQ_U64(u64(&md, c + 8 + 8 * 29), 0x1000 + 29); /* fp */
	CHECK_EQ_U64(u64(&md, c + 8 + 8 * 30), 0x1000 + 30); /* lr */
	CHECK_EQ_U64(u64(&md, c + 256), STACK7); /* sp */
	CHECK_EQ_U64(u64(&md, c + 264), 0x555555555123); /* pc */
	for (unsigned k = 272; k < 912; k += 8)  /* float and debug state: not in the dump */
		CHECK_EQ_U64(u64(&md, c + k), 0);
	ptrec_minidump_free(&md);

	d.process.arch = 40; /* EM_ARM */
	CHECK_EQ_U64((uint64_t)(int64_t)ptrec_minidump_build(&r, &md), (uint64_t)(int64_t)-PTREC_ENOSUPP);
	CHECK_EQ_U64(md.size, 0);
	ptrec_report_free(&r);
	ptrec_dump_free(&d);
	free(b.p);
}

/* 1 if the stream of type holds exactly len bytes equal to want. */
static int stream_is(const struct ptrec_minidump *m, uint32_t type, const void *want, size_t len)
{
	uint32_t size, at = stream(m, type, &size);
	return at && size == len && at + (uint64_t)size <= m->size && !memcmp(m->data + at, want, len);
}

/* The Linux streams Breakpad writes from /proc and /etc, from the dump's SYSFILE records as
 * they are: LinuxCmdLine, LinuxAuxv, LinuxProcStatus, LinuxCpuInfo, LinuxLsbRelease (the
 * lsb-release when there is one, else the os-release); the system info's vendor and processor
 * count from the cpuinfo (none when it was cut); a dump without SYSFILE records (all dumps
 * before them) has none of these streams. */
static void test_linux_streams(void)
{
	struct ptrec_minidump m;
	uint32_t size, si;

	if (build(PTREC_EVENT_CRASH, 0, &m))
		return;
	for (uint32_t type = 0x47670003; type <= 0x47670008; type++)
		CHECK_EQ_U64(stream(&m, type, &size), 0);
	si = stream(&m, 7, &size);
	CHECK_EQ_U64(m.data[si + 6], 0); /* number_of_processors: unknown */
	CHECK_EQ_U64(u32(&m, si + 32), 0);
	ptrec_minidump_free(&m);

	with_sysfiles = 1;
	if (build(PTREC_EVENT_CRASH, 0, &m) == 0) {
		CHECK(stream_is(&m, 0x47670006, sf_cmdline, sizeof(sf_cmdline) - 1));
		CHECK(stream_is(&m, 0x47670008, sf_auxv, sizeof(sf_auxv)));
		CHECK(stream_is(&m, 0x47670004, sf_status, sizeof(sf_status) - 1));
		CHECK(stream_is(&m, 0x47670003, sf_cpuinfo, sizeof(sf_cpuinfo) - 1));
		CHECK(stream_is(&m, 0x47670005, sf_lsb, sizeof(sf_lsb) - 1));
		CHECK_EQ_U64(stream(&m, 0x47670007, &size), 0); /* never the environment */
		si = stream(&m, 7, &size);
		CHECK_EQ_U64(m.data[si + 6], 2);
		CHECK(!memcmp(m.data + si + 32, "GenuineIntel", 12));
		/* the OS version: the host's uname, the release's numbers */
		uint16_t csd[128];
		size_t k = md_str(&m, u32(&m, si + 24), csd, 128);
		CHECK_EQ_U64(k, sizeof(sf_uname) - 1);
		for (size_t i = 0; i < k && i < sizeof(sf_uname) - 1; i++)
			CHECK_EQ_U64(csd[i], (unsigned char)sf_uname[i]);
		CHECK_EQ_U64(u32(&m, si + 8), 6);
		CHECK_EQ_U64(u32(&m, si + 12), 1);
		CHECK_EQ_U64(u32(&m, si + 16), 0);
		ptrec_minidump_free(&m);
	}
	with_sysfiles = 2;
	if (build(PTREC_EVENT_CRASH, 0, &m) == 0) {
		CHECK(stream_is(&m, 0x47670005, sf_os, sizeof(sf_os) - 1));
		CHECK(stream_is(&m, 0x47670003, sf_cpuinfo, sizeof(sf_cpuinfo) - 1));
		si = stream(&m, 7, &size);
		CHECK_EQ_U64(m.data[si + 6], 0); /* cut: the count is not known */
		CHECK_EQ_U64(u32(&m, u32(&m, si + 24)), 0); /* no uname: an empty OS version */
		CHECK_EQ_U64(u32(&m, si + 8), 0);
		CHECK(!memcmp(m.data + si + 32, "GenuineIntel", 12));
		ptrec_minidump_free(&m);
	}
	with_sysfiles = 0;
}

int main(void)
{
	test_crash();
	test_linux_streams();
	test_snapshot();
	test_other_machine();
	return check_done();
}

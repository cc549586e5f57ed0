/* dump_writer.h — the TEST-side dump writer: builds ptrec dumps byte by byte in memory,
 * independently of the library's crash-time writer, so that reader and report tests control
 * every field (and can corrupt any of them).  Header-only; test code. */
#ifndef PTREC_TEST_DUMP_WRITER_H
#define PTREC_TEST_DUMP_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dump/dump_format.h"
#include "core/branch.h"

/* A growing byte buffer. */
struct tbuf {
	uint8_t *p;
	size_t n, cap;
};

static inline void tb_put(struct tbuf *b, const void *src, size_t len)
{
	if (b->n + len > b->cap) {
		size_t nc = b->cap ? b->cap : 4096;
		while (nc < b->n + len)
			nc *= 2;
		b->p = realloc(b->p, nc);
		if (!b->p)
			abort();
		b->cap = nc;
	}
	if (len)
		memcpy(b->p + b->n, src, len);
	b->n += len;
}

static inline void tb_u32(struct tbuf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	tb_put(b, x, 4);
}

static inline void tb_u64(struct tbuf *b, uint64_t v)
{
	tb_u32(b, (uint32_t)v);
	tb_u32(b, (uint32_t)(v >> 32));
}

static inline void tb_str(struct tbuf *b, const char *s, size_t field)
{
	char tmp[1024] = {0};
	strncpy(tmp, s, field - 1);
	tb_put(b, tmp, field);
}

/* File header (magic, version, header size 24, flags 0). */
static inline void tw_header_v(struct tbuf *b, uint32_t version)
{
	tb_put(b, "PTRECDMP", 8);
	tb_u32(b, version);
	tb_u32(b, 24);
	tb_u64(b, 0);
}

/* The header of a version 1 dump (24-byte instrumented records: tw_soft). */
static inline void tw_header(struct tbuf *b)
{
	tw_header_v(b, 1);
}

/* A record of type with len payload bytes, padded with zeros to 8. */
static inline void tw_record(struct tbuf *b, uint32_t type, const void *payload, size_t len)
{
	static const uint8_t zero[8];
	tb_u32(b, type);
	tb_u32(b, 0);
	tb_u64(b, len);
	tb_put(b, payload, len);
	tb_put(b, zero, (8 - len % 8) % 8);
}

/* The PROCESS payload, field by field in the documented order, of a dump written on the
 * machine arch (an ELF e_machine; 0, the field before it existed: x86-64). */
static inline void tw_process_arch(struct tbuf *b, uint32_t arch, uint32_t pid, uint32_t tid,
                                   uint32_t event, int32_t signo, int32_t code, uint64_t fault,
                                   uint32_t backend, uint32_t nthreads, const char *comm,
                                   const char *exe, const char *reason)
{
	struct tbuf p = {0};
	tb_u32(&p, pid);
	tb_u32(&p, tid);
	tb_u32(&p, event);
	tb_u32(&p, (uint32_t)signo);
	tb_u32(&p, (uint32_t)code);
	tb_u32(&p, 0);             /* si_errno */
	tb_u64(&p, fault);
	tb_u64(&p, 1700000000);    /* time_sec */
	tb_u64(&p, 123456789);     /* time_nsec */
	tb_u32(&p, backend);
	tb_u32(&p, 6);             /* cpu family */
	tb_u32(&p, 85);            /* model */
	tb_u32(&p, 4);             /* stepping */
	tb_u32(&p, nthreads);
	tb_u32(&p, arch);
	tb_str(&p, comm, 16);
	tb_str(&p, exe, 256);
	tb_str(&p, reason, 512);
	tw_record(b, PTREC_REC_PROCESS, p.p, p.n);
	free(p.p);
}

/* An x86-64 PROCESS (arch 0). */
static inline void tw_process(struct tbuf *b, uint32_t pid, uint32_t tid, uint32_t event,
                              int32_t signo, int32_t code, uint64_t fault, uint32_t backend,
                              uint32_t nthreads, const char *comm, const char *exe,
                              const char *reason)
{
	tw_process_arch(b, 0, pid, tid, event, signo, code, fault, backend, nthreads, comm, exe,
	                reason);
}

/* aarch64 REGS: x0 .. x30, sp, pc, pstate from g (PTREC_A64_COUNT values). */
static inline void tw_regs_a64(struct tbuf *b, uint32_t tid, const uint64_t *g)
{
	struct tbuf p = {0};
	tb_u32(&p, tid);
	tb_u32(&p, PTREC_A64_COUNT);
	for (int i = 0; i < PTREC_A64_COUNT; i++)
		tb_u64(&p, g[i]);
	tw_record(b, PTREC_REC_REGS, p.p, p.n);
	free(p.p);
}

/* REGS: rip, rsp, rbp set, everything else zero. */
static inline void tw_regs(struct tbuf *b, uint32_t tid, uint64_t rip, uint64_t rsp, uint64_t rbp)
{
	struct tbuf p = {0};
	tb_u32(&p, tid);
	tb_u32(&p, PTREC_REG_COUNT);
	for (int i = 0; i < PTREC_REG_COUNT; i++)
		tb_u64(&p, i == PTREC_REG_RIP ? rip : i == PTREC_REG_RSP ? rsp
		           : i == PTREC_REG_RBP ? rbp : 0);
	tw_record(b, PTREC_REC_REGS, p.p, p.n);
	free(p.p);
}

/* The clock fields of a THREAD record (dump_format.h), zero = unknown. */
struct tw_clock {
	uint32_t mtc_period;   /* intel_pt MTC period exponent */
	uint32_t tsc_ratio_n;  /* CPUID 15H EBX */
	uint32_t tsc_ratio_d;  /* CPUID 15H EAX */
	uint32_t nom_freq;     /* max non-turbo ratio */
	uint64_t time_zero;    /* TSC -> ns: time_zero + tsc * time_mult >> time_shift */
	uint32_t time_shift;
	uint32_t time_mult;
};

/* THREAD with ring bytes and the clock fields of clk (NULL: all zero). */
static inline void tw_thread_clock(struct tbuf *b, uint32_t tid, uint32_t backend,
                                   uint32_t flags, const char *name, uint64_t ring_size,
                                   uint64_t head, const void *data, size_t len,
                                   const struct tw_clock *clk)
{
	static const struct tw_clock none;
	struct tbuf p = {0};
	if (!clk)
		clk = &none;
	tb_u32(&p, tid);
	tb_u32(&p, backend);
	tb_u32(&p, flags);
	tb_u32(&p, 0);
	tb_str(&p, name, 16);
	tb_u64(&p, ring_size);
	tb_u64(&p, head);
	tb_u64(&p, len);           /* data_size */
	tb_u64(&p, 0);             /* pt_config */
	tb_u64(&p, 0);
	tb_u64(&p, 0);
	tb_u32(&p, clk->mtc_period);
	tb_u32(&p, clk->tsc_ratio_n);
	tb_u32(&p, clk->tsc_ratio_d);
	tb_u32(&p, clk->nom_freq);
	tb_u64(&p, clk->time_zero);
	tb_u32(&p, clk->time_shift);
	tb_u32(&p, clk->time_mult);
	tb_u64(&p, 0);             /* stack_pointer */
	tb_put(&p, data, len);
	tw_record(b, PTREC_REC_THREAD, p.p, p.n);
	free(p.p);
}

/* WATCH: the fields in the documented order, cut or zero-padded to size payload bytes (104: a
 * record from before begin_tsc/end_tsc existed). */
static inline void tw_watch(struct tbuf *b, const char *name, uint64_t budget_ns,
                            uint64_t duration_ns, uint64_t begin_mark, uint64_t end_mark,
                            uint32_t flags, uint64_t begin_tsc, uint64_t end_tsc, size_t size)
{
	struct tbuf p = {0};
	tb_str(&p, name, 64);
	tb_u64(&p, budget_ns);
	tb_u64(&p, duration_ns);
	tb_u64(&p, begin_mark);
	tb_u64(&p, end_mark);
	tb_u32(&p, flags);
	tb_u32(&p, 0);             /* reserved */
	tb_u64(&p, begin_tsc);
	tb_u64(&p, end_tsc);
	while (p.n < size)
		tb_put(&p, "", 1);
	tw_record(b, PTREC_REC_WATCH, p.p, size);
	free(p.p);
}

/* THREAD with ring bytes. */
static inline void tw_thread(struct tbuf *b, uint32_t tid, uint32_t backend, uint32_t flags,
                             const char *name, uint64_t ring_size, uint64_t head,
                             const void *data, size_t len)
{
	tw_thread_clock(b, tid, backend, flags, name, ring_size, head, data, len, NULL);
}

static inline void tw_memory(struct tbuf *b, uint64_t vaddr, uint32_t kind, uint32_t tid,
                             const void *bytes, size_t len)
{
	struct tbuf p = {0};
	tb_u64(&p, vaddr);
	tb_u32(&p, kind);
	tb_u32(&p, tid);
	tb_u64(&p, len);
	tb_put(&p, bytes, len);
	tw_record(b, PTREC_REC_MEMORY, p.p, p.n);
	free(p.p);
}

static inline void tw_buildid(struct tbuf *b, uint64_t start, const uint8_t *id, size_t idlen,
                              const char *path)
{
	struct tbuf p = {0};
	tb_u64(&p, start);
	tb_u32(&p, (uint32_t)idlen);
	tb_u32(&p, (uint32_t)strlen(path));
	tb_put(&p, id, idlen);
	tb_put(&p, path, strlen(path));
	tw_record(b, PTREC_REC_BUILDID, p.p, p.n);
	free(p.p);
}

static inline void tw_end(struct tbuf *b)
{
	tw_record(b, PTREC_REC_END, NULL, 0);
}

/* A SYSFILE record: kind, flags, the file's size, then len bytes. */
static inline void tw_sysfile(struct tbuf *b, uint32_t kind, uint32_t flags, uint64_t size,
                              const void *bytes, size_t len)
{
	struct tbuf p = {0};
	tb_u32(&p, kind);
	tb_u32(&p, flags);
	tb_u64(&p, size);
	tb_put(&p, bytes, len);
	tw_record(b, PTREC_REC_SYSFILE, p.p, p.n);
	free(p.p);
}

/* Sample SYSFILE records for the fuzzers' seeds: the process's (cmdline, auxv, status), written
 * inside a dump, and the host's (cpuinfo, lsb-release, os-release, uname) with their END, appended
 * after it as the report child does. */
static inline void tw_sample_process_files(struct tbuf *b)
{
	static const char cmdline[] = "/nonexistent/prog\0-x\0";
	static const uint64_t auxv[] = {6, 4096, 9, 0x401040, 16, 0x178bfbff, 0, 0};
	static const char status[] = "Name:\tp\nState:\tR (running)\nPid:\t7\nThreads:\t3\n";
	tw_sysfile(b, PTREC_SYSFILE_CMDLINE, 0, sizeof(cmdline) - 1, cmdline, sizeof(cmdline) - 1);
	tw_sysfile(b, PTREC_SYSFILE_AUXV, 0, sizeof(auxv), auxv, sizeof(auxv));
	tw_sysfile(b, PTREC_SYSFILE_STATUS, 0, sizeof(status) - 1, status, sizeof(status) - 1);
}

static inline void tw_sample_host_files(struct tbuf *b)
{
	static const char cpuinfo[] = "processor\t: 0\nvendor_id\t: GenuineIntel\n"
	                              "model name\t: Xeon\n\n";
	static const char lsb[] = "DISTRIB_ID=Debian\n";
	static const char os[] = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n";
	tw_sysfile(b, PTREC_SYSFILE_CPUINFO, PTREC_SYSFILE_CUT, 200000, cpuinfo,
	           sizeof(cpuinfo) - 1);
	tw_sysfile(b, PTREC_SYSFILE_LSB_RELEASE, 0, sizeof(lsb) - 1, lsb, sizeof(lsb) - 1);
	tw_sysfile(b, PTREC_SYSFILE_OS_RELEASE, 0, sizeof(os) - 1, os, sizeof(os) - 1);
	tw_sysfile(b, PTREC_SYSFILE_UNAME, 0, 11, "Linux 6.1.0", 11);
	tw_end(b);
}

/* Appends one version 2 instrumented record: enum ptrec_soft_kind, addresses a and b, the
 * 28-bit field x, laid out as core/branch.h says (written here field by field). */
static inline void tw_soft2(struct tbuf *ring, unsigned soft_kind, uint64_t a, uint64_t b,
                            uint32_t x)
{
	tb_u64(ring, (uint64_t)soft_kind << 60 | (uint64_t)(x & 0xfff) << 48 |
	             (a & 0xffffffffffffull));
	tb_u64(ring, (uint64_t)(x >> 12 & 0xffff) << 48 | (b & 0xffffffffffffull));
}

/* Appends one version 1 instrumented (soft) record. */
static inline void tw_soft(struct tbuf *ring, uint64_t from, uint64_t to, unsigned kind)
{
	tb_u64(ring, from);
	tb_u64(ring, to);
	tb_u64(ring, PTREC_BTS_SOFT | kind);
}

#endif

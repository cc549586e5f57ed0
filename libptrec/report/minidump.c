/* minidump.c — writes a ptrec dump's report as a Breakpad minidump (minidump.h,
 * doc/minidump.md).  Every structure is written field by field, little-endian, at the offsets
 * of Breakpad's minidump_format.h, minidump_cpu_amd64.h and minidump_cpu_arm64.h (Microsoft's
 * MINIDUMP_* layout):
 * nothing here depends on the host compiler's struct packing.  Not async-signal-safe. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrec.h"
#include "report/minidump.h"

/* ---- format facts (minidump_format.h, minidump_cpu_amd64.h) ------------------------------ */
#define MD_SIGNATURE 0x504d444du          /* "MDMP" */
#define MD_VERSION 0xa793u                /* MINIDUMP_VERSION (low 16 bits) */
#define MD_HEADER_SIZE 32u
#define MD_DIRENT_SIZE 12u                /* stream_type, data_size, rva */
#define MD_THREAD_SIZE 48u                /* MINIDUMP_THREAD */
#define MD_MODULE_SIZE 108u               /* MINIDUMP_MODULE */
#define MD_MEMDESC_SIZE 16u               /* MINIDUMP_MEMORY_DESCRIPTOR */
#define MD_EXCEPTION_SIZE 168u            /* MINIDUMP_EXCEPTION_STREAM */
#define MD_SYSINFO_SIZE 56u               /* MINIDUMP_SYSTEM_INFO */
#define MD_MISCINFO_SIZE 24u              /* MINIDUMP_MISC_INFO */
#define MD_CONTEXT_AMD64_SIZE 1232u       /* CONTEXT (AMD64) */
#define MD_CONTEXT_ARM64_SIZE 912u        /* CONTEXT (ARM64), Breakpad's MDRawContextARM64 */

enum md_stream {
	MD_THREAD_LIST = 3,
	MD_MODULE_LIST = 4,
	MD_MEMORY_LIST = 5,
	MD_EXCEPTION = 6,
	MD_SYSTEM_INFO = 7,
	MD_MISC_INFO = 15,
	MD_LINUX_CPU_INFO = 0x47670003,   /* Breakpad: /proc/cpuinfo */
	MD_LINUX_PROC_STATUS = 0x47670004, /* /proc/TID/status of the crashing thread */
	MD_LINUX_LSB_RELEASE = 0x47670005, /* /etc/lsb-release, else /etc/os-release */
	MD_LINUX_CMD_LINE = 0x47670006,   /* /proc/PID/cmdline */
	MD_LINUX_AUXV = 0x47670008,       /* /proc/PID/auxv */
	MD_LINUX_MAPS = 0x47670009,       /* Breakpad: /proc/PID/maps */
};

#define MD_ARCH_AMD64 9u                  /* PROCESSOR_ARCHITECTURE_AMD64 */
#define MD_ARCH_ARM64 12u                 /* PROCESSOR_ARCHITECTURE_ARM64 */
#define MD_OS_LINUX 0x8201u               /* Breakpad's platform id for Linux */
#define MD_MISC_PROCESS_ID 0x1u           /* MINIDUMP_MISC1_PROCESS_ID */
#define MD_CV_ELF 0x4270454cu             /* "LEpB": CodeView record of an ELF build ID */

#define MD_CTX_AMD64 0x00100000u
#define MD_CTX_CONTROL 0x1u               /* ss, rsp, cs, rip, eflags */
#define MD_CTX_INTEGER 0x2u               /* rax..r15 but rsp; x0..x30 on ARM64 */
#define MD_CTX_ARM64 0x00400000u          /* CONTROL: sp, pc, cpsr; INTEGER: x0..x30 */

/* CONTEXT (ARM64) field offsets: context_flags (u32), cpsr (u32), x0..x28, fp (x29), lr (x30),
 * sp, pc (u64 each), then the float state (v0..v31 of 16 bytes, fpcr, fpsr) and the debug
 * registers, left zero. */
enum md_ctx_a64_off { CTX64_FLAGS = 0, CTX64_CPSR = 4, CTX64_X0 = 8, CTX64_SP = 256, CTX64_PC = 264 };

/* CONTEXT (AMD64) field offsets. */
enum md_ctx_off {
	CTX_FLAGS = 48, CTX_CS = 56, CTX_FS = 62, CTX_GS = 64, CTX_SS = 66, CTX_EFLAGS = 68,
	CTX_RAX = 120, CTX_RCX = 128, CTX_RDX = 136, CTX_RBX = 144, CTX_RSP = 152, CTX_RBP = 160,
	CTX_RSI = 168, CTX_RDI = 176, CTX_R8 = 184, CTX_RIP = 248,
};

/* ---- the growing file --------------------------------------------------------------------- */
struct md_out {
	uint8_t *p;
	size_t n, cap;
	int err; /* -PTREC_ENOMEM or -PTREC_EOVERFLOW once something failed */
};

/* Appends size zero bytes aligned to align (a power of two); returns their offset, or 0 once
 * anything failed (offset 0 is the header: never a valid answer). */
static uint32_t md_alloc(struct md_out *o, size_t size, size_t align)
{
	if (o->err)
		return 0;
	size_t at = (o->n + align - 1) & ~(align - 1);
	if (at > UINT32_MAX || size > UINT32_MAX - at) {
		o->err = -PTREC_EOVERFLOW;
		return 0;
	}
	if (at + size > o->cap) {
		size_t cap = o->cap ? o->cap : 64u << 10;
		while (cap < at + size)
			cap *= 2;
		uint8_t *p = realloc(o->p, cap);
		if (!p) {
			o->err = -PTREC_ENOMEM;
			return 0;
		}
		o->p = p;
		o->cap = cap;
	}
	memset(o->p + o->n, 0, at + size - o->n);
	o->n = at + size;
	return (uint32_t)at;
}

static void put16(struct md_out *o, uint32_t at, uint16_t v)
{
	if (o->err)
		return;
	o->p[at] = (uint8_t)v;
	o->p[at + 1] = (uint8_t)(v >> 8);
}

static void put32(struct md_out *o, uint32_t at, uint32_t v)
{
	if (o->err)
		return;
	for (int i = 0; i < 4; i++)
		o->p[at + i] = (uint8_t)(v >> (8 * i));
}

static void put64(struct md_out *o, uint32_t at, uint64_t v)
{
	if (o->err)
		return;
	for (int i = 0; i < 8; i++)
		o->p[at + i] = (uint8_t)(v >> (8 * i));
}

/* Appends bytes; returns their offset (0 on failure or when len is 0). */
static uint32_t md_bytes(struct md_out *o, const void *bytes, size_t len, size_t align)
{
	if (!len)
		return 0;
	uint32_t at = md_alloc(o, len, align);
	if (at)
		memcpy(o->p + at, bytes, len);
	return at;
}

/* A location descriptor (data_size, rva) at at. */
static void put_loc(struct md_out *o, uint32_t at, uint32_t size, uint32_t rva)
{
	put32(o, at, size);
	put32(o, at + 4, rva);
}

/* Decodes one UTF-8 character of s[0..len) into *cp; returns its length.  A byte that starts
 * no valid sequence is taken as U+FFFD (paths are bytes, not always UTF-8). */
static size_t utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned need;
	uint32_t c = s[0], min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0)
		need = 1, c &= 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		need = 2, c &= 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		need = 3, c &= 0x07, min = 0x10000;
	else
		goto bad;
	if (need >= len)
		goto bad;
	for (unsigned i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		goto bad;
	*cp = c;
	return need + 1;
bad:
	*cp = 0xfffd;
	return 1;
}

/* Appends a MINIDUMP_STRING (byte length, UTF-16LE, a 0 terminator) of the UTF-8 text s;
 * returns its offset. */
static uint32_t md_string(struct md_out *o, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), units = 0;
	uint32_t cp;

	for (size_t i = 0; i < len; units += cp >= 0x10000 ? 2 : 1)
		i += utf8_next(u + i, len - i, &cp);
	if (units > (UINT32_MAX - 6) / 2) {
		o->err = -PTREC_EOVERFLOW;
		return 0;
	}
	uint32_t at = md_alloc(o, 4 + units * 2 + 2, 4);
	put32(o, at, (uint32_t)(units * 2));
	uint32_t w = at + 4;
	for (size_t i = 0; i < len && !o->err;) {
		i += utf8_next(u + i, len - i, &cp);
		if (cp >= 0x10000) {
			cp -= 0x10000;
			put16(o, w, (uint16_t)(0xd800 | cp >> 10));
			put16(o, w + 2, (uint16_t)(0xdc00 | (cp & 0x3ff)));
			w += 4;
		} else {
			put16(o, w, (uint16_t)cp);
			w += 2;
		}
	}
	return at;
}

/* ---- the streams -------------------------------------------------------------------------- */
struct md_builder {
	struct md_out o;
	const struct ptrec_report *r;
	const struct ptrec_dump *d;
	uint32_t dir;            /* offset of the stream directory */
	uint32_t nstreams;       /* entries written */
	uint32_t maxstreams;     /* entries reserved */
	uint32_t *mem_rva;       /* per dump MEMORY record: offset of its bytes, 0 if left out */
	uint32_t *mem_size;      /* per dump MEMORY record: bytes written */
	uint32_t crash_ctx;      /* offset of the event thread's context, 0 if none */
	uint32_t ctx_size;       /* bytes of a context: CONTEXT (AMD64) or CONTEXT (ARM64) */
	int a64;                 /* the dump was written on aarch64 */
	struct ptrec_minidump *md;
};

static void add_stream(struct md_builder *b, uint32_t type, uint32_t rva, uint32_t size)
{
	if (b->o.err || b->nstreams >= b->maxstreams)
		return;
	uint32_t at = b->dir + b->nstreams++ * MD_DIRENT_SIZE;
	put32(&b->o, at, type);
	put_loc(&b->o, at + 4, size, rva);
}

/* CPUID leaf 1 EAX from the display family, model and stepping the dump keeps. */
static uint32_t cpuid_version(const struct ptrec_dump_process *p)
{
	uint32_t fam = p->cpu_family, model = p->cpu_model, v = p->cpu_stepping & 0xf;
	if (fam >= 0xf) {
		v |= 0xfu << 8 | ((fam - 0xf) & 0xff) << 20;
	} else {
		v |= (fam & 0xf) << 8;
	}
	v |= (model & 0xf) << 4;
	if (fam == 6 || fam >= 0xf)
		v |= ((model >> 4) & 0xf) << 16;
	return v;
}

/* The value of the first line "key<tabs or spaces>: value" of a cpuinfo text, or NULL;
 * *len its length. */
static const char *cpuinfo_value(const struct ptrec_dump_sysfile_rec *f, const char *key,
                                 size_t *len)
{
	const char *t = (const char *)f->bytes, *end = t + f->len;
	size_t klen = strlen(key);

	for (const char *l = t; l < end;) {
		const char *eol = memchr(l, '\n', (size_t)(end - l));
		if (!eol)
			eol = end;
		if ((size_t)(eol - l) > klen && !memcmp(l, key, klen) &&
		    (l[klen] == '\t' || l[klen] == ' ' || l[klen] == ':')) {
			const char *v = l + klen;
			while (v < eol && (*v == '\t' || *v == ' '))
				v++;
			if (v < eol && *v == ':') {
				v++;
				while (v < eol && *v == ' ')
					v++;
				*len = (size_t)(eol - v);
				return v;
			}
		}
		l = eol + 1;
	}
	return NULL;
}

/* The processors a whole /proc/cpuinfo lists ("processor" lines), 0 when it was cut. */
static unsigned cpuinfo_processors(const struct ptrec_dump_sysfile_rec *f)
{
	const char *t = (const char *)f->bytes;
	unsigned n = 0;

	if (f->hdr.flags & PTREC_SYSFILE_CUT)
		return 0;
	for (size_t i = 0; i + 9 <= f->len; i++)
		if ((i == 0 || t[i - 1] == '\n') && !memcmp(t + i, "processor", 9) &&
		    (i + 9 == f->len || t[i + 9] == '\t' || t[i + 9] == ' ' || t[i + 9] == ':'))
			n++;
	return n;
}

static void system_info(struct md_builder *b)
{
	const struct ptrec_dump_process *p = &b->d->process;
	const struct ptrec_dump_sysfile_rec *cpu = &b->d->sysfiles[PTREC_SYSFILE_CPUINFO];
	const struct ptrec_dump_sysfile_rec *un = &b->d->sysfiles[PTREC_SYSFILE_UNAME];
	struct md_out *o = &b->o;
	uint32_t at = md_alloc(o, MD_SYSINFO_SIZE, 8);
	/* The OS version string: the host's uname as Breakpad writes it ("Linux 6.1.0-18-amd64
	 * #1 SMP ... x86_64"), empty when the dump has none; the kernel release's first three
	 * numbers are the major, minor and build numbers. */
	char osv[1024] = "";
	uint32_t ver[3] = {0, 0, 0};
	if (un->present) {
		size_t n = un->len < sizeof(osv) - 1 ? un->len : sizeof(osv) - 1;
		memcpy(osv, un->bytes, n);
		osv[n] = '\0'; /* up to a NUL in it, too */
		const char *r = strchr(osv, ' ');
		for (int k = 0; r && k < 3; k++) {
			r++;
			if (*r < '0' || *r > '9')
				break;
			unsigned long v = strtoul(r, (char **)&r, 10);
			ver[k] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
			if (*r != '.')
				break;
		}
	}
	uint32_t csd = md_string(o, osv);

	put16(o, at, b->a64 ? MD_ARCH_ARM64 : MD_ARCH_AMD64);
	put16(o, at + 2, (uint16_t)p->cpu_family);
	put16(o, at + 4, (uint16_t)((p->cpu_model & 0xff) << 8 | (p->cpu_stepping & 0xff)));
	put32(o, at + 8, ver[0]);
	put32(o, at + 12, ver[1]);
	put32(o, at + 16, ver[2]);
	put32(o, at + 20, MD_OS_LINUX);
	put32(o, at + 24, csd);
	/* From the host's /proc/cpuinfo when the dump has it: the number of processors (a byte;
	 * unknown, 0, when the text was cut) and cpu.x86_cpu_info.vendor_id, CPUID 0's EBX, EDX,
	 * ECX: the vendor string's 12 bytes in order. */
	if (cpu->present) {
		size_t vlen = 0;
		const char *vendor = cpuinfo_value(cpu, "vendor_id", &vlen);
		unsigned n = cpuinfo_processors(cpu);
		o->p[at + 6] = (uint8_t)(n > 255 ? 255 : n);
		if (vendor && vlen == 12 && !o->err)
			memcpy(o->p + at + 32, vendor, 12);
	}
	/* cpu.x86_cpu_info.version_information; the ARM64 cpu_info (MIDR, hwcaps) is left 0 */
	if (!b->a64)
		put32(o, at + 32 + 12, cpuid_version(p));
	add_stream(b, MD_SYSTEM_INFO, at, MD_SYSINFO_SIZE);
}

static void misc_info(struct md_builder *b)
{
	struct md_out *o = &b->o;
	uint32_t at = md_alloc(o, MD_MISCINFO_SIZE, 8);
	put32(o, at, MD_MISCINFO_SIZE);
	put32(o, at + 4, MD_MISC_PROCESS_ID);
	put32(o, at + 8, b->d->process.pid);
	add_stream(b, MD_MISC_INFO, at, MD_MISCINFO_SIZE);
}

/* The memory the dump kept, lowest address first; a record that overlaps one already written
 * (or is empty) is left out: readers refuse overlapping ranges. */
static void memory(struct md_builder *b)
{
	const struct ptrec_dump *d = b->d;
	struct md_out *o = &b->o;
	size_t n = d->nmemory, kept = 0;
	size_t *order = calloc(n ? n : 1, sizeof(*order));

	if (!order) {
		o->err = -PTREC_ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++) { /* insertion sort by address (few records) */
		size_t j = i;
		while (j > 0 && d->memory[order[j - 1]].hdr.vaddr > d->memory[i].hdr.vaddr) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	uint64_t end = 0;
	for (size_t k = 0; k < n && !o->err; k++) {
		const struct ptrec_dump_memory_rec *m = &d->memory[order[k]];
		uint64_t size = m->hdr.size;
		if (!size || size > UINT32_MAX || m->hdr.vaddr + size < m->hdr.vaddr ||
		    (kept && m->hdr.vaddr < end))
			continue;
		b->mem_rva[order[k]] = md_bytes(o, m->bytes, (size_t)size, 16);
		b->mem_size[order[k]] = (uint32_t)size;
		end = m->hdr.vaddr + size;
		kept++;
	}
	uint32_t at = md_alloc(o, 4 + kept * MD_MEMDESC_SIZE, 8);
	put32(o, at, (uint32_t)kept);
	uint32_t w = at + 4;
	for (size_t k = 0; k < n && !o->err; k++) {
		size_t i = order[k];
		if (!b->mem_size[i])
			continue;
		put64(o, w, d->memory[i].hdr.vaddr);
		put_loc(o, w + 8, b->mem_size[i], b->mem_rva[i]);
		w += MD_MEMDESC_SIZE;
	}
	free(order);
	b->md->nmemory = (uint32_t)kept;
	add_stream(b, MD_MEMORY_LIST, at, (uint32_t)(4 + kept * MD_MEMDESC_SIZE));
}

/* A CONTEXT (ARM64) from g (indexed by enum ptrec_dump_reg_a64): x0..x30 and pstate (as cpsr)
 * when all, else only sp and pc (context flags CONTROL alone); returns its offset. */
static uint32_t context_a64(struct md_builder *b, const uint64_t *g, int all)
{
	struct md_out *o = &b->o;
	uint32_t at = md_alloc(o, MD_CONTEXT_ARM64_SIZE, 16);
	uint32_t flags = MD_CTX_ARM64 | MD_CTX_CONTROL;

	put64(o, at + CTX64_SP, g[PTREC_A64_SP]);
	put64(o, at + CTX64_PC, g[PTREC_A64_PC]);
	if (all) {
		for (unsigned i = 0; i <= PTREC_A64_LR; i++)
			put64(o, at + CTX64_X0 + 8 * i, g[PTREC_A64_X0 + i]);
		put32(o, at + CTX64_CPSR, (uint32_t)g[PTREC_A64_PSTATE]);
		flags |= MD_CTX_INTEGER;
	}
	put32(o, at + CTX64_FLAGS, flags);
	return at;
}

/* A CONTEXT (AMD64) from g (indexed by enum ptrec_dump_reg): every general register when all,
 * else only rsp and rip (context flags CONTROL alone); returns its offset.  On an aarch64 dump,
 * context_a64's. */
static uint32_t context(struct md_builder *b, const uint64_t *g, int all)
{
	struct md_out *o = &b->o;
	if (b->a64)
		return context_a64(b, g, all);
	uint32_t at = md_alloc(o, MD_CONTEXT_AMD64_SIZE, 16);
	uint32_t flags = MD_CTX_AMD64 | MD_CTX_CONTROL;

	put64(o, at + CTX_RSP, g[PTREC_REG_RSP]);
	put64(o, at + CTX_RIP, g[PTREC_REG_RIP]);
	if (all) {
		static const struct { uint8_t reg; uint16_t off; } ints[] = {
			{PTREC_REG_RAX, CTX_RAX}, {PTREC_REG_RCX, CTX_RCX}, {PTREC_REG_RDX, CTX_RDX},
			{PTREC_REG_RBX, CTX_RBX}, {PTREC_REG_RBP, CTX_RBP}, {PTREC_REG_RSI, CTX_RSI},
			{PTREC_REG_RDI, CTX_RDI},
		};
		for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
			put64(o, at + ints[i].off, g[ints[i].reg]);
		for (unsigned i = 0; i < 8; i++) /* r8..r15: PTREC_REG_R8.. and CTX_R8.. in order */
			put64(o, at + CTX_R8 + 8 * i, g[PTREC_REG_R8 + i]);
		uint64_t seg = g[PTREC_REG_CSGSFS]; /* cs, gs, fs, ss: 16 bits each */
		put16(o, at + CTX_CS, (uint16_t)seg);
		put16(o, at + CTX_GS, (uint16_t)(seg >> 16));
		put16(o, at + CTX_FS, (uint16_t)(seg >> 32));
		put16(o, at + CTX_SS, (uint16_t)(seg >> 48));
		put32(o, at + CTX_EFLAGS, (uint32_t)g[PTREC_REG_EFL]);
		flags |= MD_CTX_INTEGER;
	}
	put32(o, at + CTX_FLAGS, flags);
	return at;
}

/* The index of thread tid's STACK memory record (the event thread's may carry tid 0 in old
 * dumps), or SIZE_MAX. */
static size_t stack_record(const struct ptrec_dump *d, uint32_t tid, int event)
{
	for (size_t i = 0; i < d->nmemory; i++)
		if (d->memory[i].hdr.kind == PTREC_MEM_STACK &&
		    (d->memory[i].hdr.tid == tid || (event && d->memory[i].hdr.tid == 0)))
			return i;
	return SIZE_MAX;
}

static void thread_list(struct md_builder *b)
{
	const struct ptrec_report *r = b->r;
	const struct ptrec_dump *d = b->d;
	struct md_out *o = &b->o;
	uint32_t n = (uint32_t)r->nthreads;
	uint32_t *ctx = calloc(n ? n : 1, sizeof(*ctx));

	if (!ctx) {
		o->err = -PTREC_ENOMEM;
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct ptrec_report_thread *t = &r->threads[i];
		if (t->crashed && r->have_regs) {
			ctx[i] = context(b, d->regs.gregs, 1);
			b->crash_ctx = ctx[i];
		} else if (t->task && (t->task->state == PTREC_TASK_SYSCALL ||
		                       t->task->state == PTREC_TASK_BLOCKED)) {
			uint64_t g[PTREC_REG_MAX] = {0};
			g[b->a64 ? PTREC_A64_SP : PTREC_REG_RSP] = t->task->sp;
			g[b->a64 ? PTREC_A64_PC : PTREC_REG_RIP] = t->task->pc;
			ctx[i] = context(b, g, 0);
		}
	}
	uint32_t at = md_alloc(o, 4 + (size_t)n * MD_THREAD_SIZE, 8);
	put32(o, at, n);
	for (uint32_t i = 0; i < n && !o->err; i++) {
		const struct ptrec_report_thread *t = &r->threads[i];
		uint32_t w = at + 4 + i * MD_THREAD_SIZE;
		size_t m = stack_record(d, t->rec->hdr.tid, t->crashed);
		put32(o, w, t->rec->hdr.tid);
		if (m != SIZE_MAX && b->mem_size[m]) {
			put64(o, w + 24, d->memory[m].hdr.vaddr);
			put_loc(o, w + 32, b->mem_size[m], b->mem_rva[m]);
		}
		if (ctx[i])
			put_loc(o, w + 40, b->ctx_size, ctx[i]);
	}
	free(ctx);
	b->md->nthreads = n;
	add_stream(b, MD_THREAD_LIST, at, 4 + n * MD_THREAD_SIZE);
}

/* The BUILDID record of the mapping that starts at start, or NULL. */
static const struct ptrec_dump_buildid_rec *buildid_at(const struct ptrec_dump *d, uint64_t start)
{
	for (size_t i = 0; i < d->nbuildids; i++)
		if (d->buildids[i].start == start && d->buildids[i].id_len)
			return &d->buildids[i];
	return NULL;
}

/* A module is a file mapped from offset 0 (an absolute path) with an executable mapping among
 * the mappings of that file that follow it; it spans them all.  Sets *end to the index after
 * its last mapping; returns 1 if maps[i] starts a module. */
static int module_at(const struct ptrec_dump *d, size_t i, size_t *end)
{
	const struct ptrec_dump_map *m = &d->maps[i];
	int exec = 0;
	size_t j = i;

	if (m->offset != 0 || m->path[0] != '/')
		return 0;
	for (; j < d->nmaps && !strcmp(d->maps[j].path, m->path) &&
	       d->maps[j].inode == m->inode && (j == i || d->maps[j].offset != 0); j++)
		exec |= d->maps[j].perms[2] == 'x';
	*end = j;
	return exec;
}

static void module_list(struct md_builder *b)
{
	const struct ptrec_dump *d = b->d;
	struct md_out *o = &b->o;
	uint32_t n = 0;
	size_t end;

	for (size_t i = 0; i < d->nmaps; i++)
		if (module_at(d, i, &end)) {
			n++;
			i = end - 1;
		}
	uint32_t at = md_alloc(o, 4 + (size_t)n * MD_MODULE_SIZE, 8);
	put32(o, at, n);
	uint32_t w = at + 4;
	for (size_t i = 0; i < d->nmaps && !o->err; i++) {
		if (!module_at(d, i, &end))
			continue;
		const struct ptrec_dump_map *first = &d->maps[i], *last = &d->maps[end - 1];
		uint64_t size = last->end - first->start;
		const struct ptrec_dump_buildid_rec *id = buildid_at(d, first->start);
		put64(o, w, first->start);
		put32(o, w + 8, size > UINT32_MAX ? UINT32_MAX : (uint32_t)size);
		put32(o, w + 20, md_string(o, first->path));
		if (id) { /* cv_record: MDCVInfoELF, the signature then the build ID's bytes */
			uint32_t cv = md_alloc(o, 4 + id->id_len, 4);
			put32(o, cv, MD_CV_ELF);
			if (!o->err)
				memcpy(o->p + cv + 4, id->id, id->id_len);
			put_loc(o, w + 76, 4 + id->id_len, cv);
			b->md->nbuildids++;
		}
		w += MD_MODULE_SIZE;
		i = end - 1;
	}
	b->md->nmodules = n;
	add_stream(b, MD_MODULE_LIST, at, 4 + n * MD_MODULE_SIZE);
}

/* The exception of a crash or assertion: the signal as the code, si_code as the flags (as
 * Breakpad and Crashpad write them on Linux), the fault address when the signal has one. */
static void exception(struct md_builder *b)
{
	const struct ptrec_dump_process *p = &b->d->process;
	struct md_out *o = &b->o;
	uint32_t pid, uid;

	uint32_t at = md_alloc(o, MD_EXCEPTION_SIZE, 8);
	put32(o, at, p->tid);
	put32(o, at + 8, (uint32_t)p->signo);
	put32(o, at + 12, (uint32_t)p->si_code);
	if (ptrec_report_origin(p, &pid, &uid) == PTREC_ORIGIN_FAULT)
		put64(o, at + 24, p->fault_addr);
	if (b->crash_ctx)
		put_loc(o, at + 160, b->ctx_size, b->crash_ctx);
	b->md->has_exception = 1;
	add_stream(b, MD_EXCEPTION, at, MD_EXCEPTION_SIZE);
}

/* The Linux streams Breakpad writes from /proc and /etc, from the dump's SYSFILE records, as
 * they were read (doc/minidump.md). */
static void linux_files(struct md_builder *b)
{
	static const struct { uint32_t kind, stream; } map[] = {
		{PTREC_SYSFILE_CMDLINE, MD_LINUX_CMD_LINE},
		{PTREC_SYSFILE_AUXV, MD_LINUX_AUXV},
		{PTREC_SYSFILE_STATUS, MD_LINUX_PROC_STATUS},
		{PTREC_SYSFILE_CPUINFO, MD_LINUX_CPU_INFO},
		{PTREC_SYSFILE_LSB_RELEASE, MD_LINUX_LSB_RELEASE},
		{PTREC_SYSFILE_OS_RELEASE, MD_LINUX_LSB_RELEASE}, /* when there is no lsb-release */
	};
	const struct ptrec_dump_sysfile_rec *f = b->d->sysfiles;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		const struct ptrec_dump_sysfile_rec *r = &f[map[i].kind];
		if (!r->present || r->len > UINT32_MAX ||
		    (map[i].kind == PTREC_SYSFILE_OS_RELEASE && f[PTREC_SYSFILE_LSB_RELEASE].present))
			continue;
		add_stream(b, map[i].stream, md_bytes(&b->o, r->bytes, r->len, 8), (uint32_t)r->len);
	}
}

static void linux_maps(struct md_builder *b)
{
	const uint8_t *text = b->d->maps_bytes;
	size_t len = b->d->maps_size;
	if (len > UINT32_MAX) {
		b->o.err = -PTREC_EOVERFLOW;
		return;
	}
	add_stream(b, MD_LINUX_MAPS, md_bytes(&b->o, text, len, 8), (uint32_t)len);
}

/* PTREC_MINIDUMP_BRANCH_STREAM (doc/minidump.md): a 24-byte header, then per thread a 24-byte
 * header and its last branches, 32 bytes each, oldest first. */
#define BR_HEADER 24u
#define BR_THREAD 24u
#define BR_ENTRY 32u
#define BR_EVENT 0x1u     /* the thread that crashed, asserted or took the snapshot */
#define BR_CUT 0x2u       /* older branches of the history are left out */
#define BR_SOFT 0x4u      /* instrumented records: a call's `from` is its return address */

static void branches(struct md_builder *b)
{
	const struct ptrec_report *r = b->r;
	struct md_out *o = &b->o;
	uint32_t start = md_alloc(o, BR_HEADER, 8);

	put32(o, start, PTREC_MINIDUMP_BRANCH_VERSION);
	put32(o, start + 4, (uint32_t)r->nthreads);
	put32(o, start + 8, BR_THREAD);
	put32(o, start + 12, BR_ENTRY);
	put32(o, start + 16, b->d->process.backend);
	for (size_t i = 0; i < r->nthreads && !o->err; i++) {
		const struct ptrec_report_thread *t = &r->threads[i];
		size_t max = t->crashed ? r->opt.branches : r->opt.other_branches;
		size_t n = t->nbranches < max ? t->nbranches : max;
		const struct ptrec_branch *br = n ? t->branches + (t->nbranches - n) : NULL;
		uint32_t w = md_alloc(o, BR_THREAD + n * BR_ENTRY, 8);
		uint32_t flags = (t->crashed ? BR_EVENT : 0) | (t->soft ? BR_SOFT : 0) |
		                 (n < t->nbranches || t->total_branches > t->nbranches ? BR_CUT : 0);
		put32(o, w, t->rec->hdr.tid);
		put32(o, w + 4, flags);
		put32(o, w + 8, (uint32_t)n);
		put64(o, w + 16, t->total_branches > t->nbranches ? t->total_branches : t->nbranches);
		w += BR_THREAD;
		for (size_t k = 0; k < n && !o->err; k++, w += BR_ENTRY) {
			put64(o, w, br[k].from);
			put64(o, w + 8, br[k].to);
			put64(o, w + 16, (br[k].flags & PTREC_BRF_HAS_TIME) ? br[k].timestamp : 0);
			o->p[w + 24] = br[k].kind;
			o->p[w + 25] = br[k].flags;
			put16(o, w + 26, br[k].reason);
			put32(o, w + 28, br[k].kind == PTREC_BR_EVENT ? br[k].reserved : 0);
		}
	}
	if (!o->err)
		add_stream(b, PTREC_MINIDUMP_BRANCH_STREAM, start, (uint32_t)(o->n - start));
}

const char *ptrec_minidump_strerror(int rc)
{
	return rc == -PTREC_ENOSUPP ? "the dump's machine has no minidump context here (minidumps "
	                              "are written for x86-64 and aarch64 dumps)" : ptrec_strerror(rc);
}

int ptrec_minidump_build(const struct ptrec_report *r, struct ptrec_minidump *md)
{
	const struct ptrec_dump *d = r->dump;
	const struct ptrec_dump_process *p = &d->process;
	struct md_builder b;
	int crash = (p->event == PTREC_EVENT_CRASH || p->event == PTREC_EVENT_ASSERT) && p->signo;

	memset(md, 0, sizeof(*md));
	uint16_t arch = ptrec_dump_arch(p->arch);
	if (arch != 62u /* EM_X86_64 */ && arch != 183u /* EM_AARCH64 */)
		return -PTREC_ENOSUPP;
	memset(&b, 0, sizeof(b));
	b.a64 = arch == 183u;
	b.ctx_size = b.a64 ? MD_CONTEXT_ARM64_SIZE : MD_CONTEXT_AMD64_SIZE;
	b.r = r;
	b.d = d;
	b.md = md;
	b.maxstreams = 6 + (crash ? 1 : 0) + (d->maps_bytes ? 1 : 0) + 1 + 5 /* linux_files */;
	b.mem_rva = calloc(d->nmemory + 1, sizeof(*b.mem_rva));
	b.mem_size = calloc(d->nmemory + 1, sizeof(*b.mem_size));
	if (!b.mem_rva || !b.mem_size) {
		b.o.err = -PTREC_ENOMEM;
		goto out;
	}

	uint32_t hdr = md_alloc(&b.o, MD_HEADER_SIZE, 8);
	b.dir = md_alloc(&b.o, b.maxstreams * MD_DIRENT_SIZE, 4);
	system_info(&b);
	misc_info(&b);
	memory(&b);
	thread_list(&b);
	module_list(&b);
	if (crash)
		exception(&b);
	if (d->maps_bytes)
		linux_maps(&b);
	linux_files(&b);
	branches(&b);
	put32(&b.o, hdr, MD_SIGNATURE);
	put32(&b.o, hdr + 4, MD_VERSION);
	put32(&b.o, hdr + 8, b.nstreams);
	put32(&b.o, hdr + 12, b.dir);
	put32(&b.o, hdr + 20, (uint32_t)p->time_sec);
out:
	free(b.mem_rva);
	free(b.mem_size);
	if (b.o.err) {
		free(b.o.p);
		memset(md, 0, sizeof(*md));
		return b.o.err;
	}
	md->data = b.o.p;
	md->size = b.o.n;
	return 0;
}

int ptrec_minidump_from_dump(const char *dump_path, const struct ptrec_report_options *opt,
                             struct ptrec_minidump *md, struct ptrec_dump_error *err,
                             int *complete)
{
	struct ptrec_report_options o;
	struct ptrec_dump_file f;
	struct ptrec_dump d;
	struct ptrec_report r;
	int rc;

	memset(md, 0, sizeof(*md));
	if (opt)
		o = *opt;
	else
		ptrec_report_options_init(&o);
	o.crashed_only = 0;
	o.dump_path = dump_path;
	if ((rc = ptrec_dump_load(dump_path, &f, err)))
		return rc;
	if ((rc = ptrec_dump_parse(f.data, f.size, &d, err))) {
		ptrec_dump_file_free(&f);
		return rc;
	}
	if (complete)
		*complete = d.complete;
	rc = ptrec_report_build(&r, &d, &o);
	if (!rc)
		rc = ptrec_minidump_build(&r, md);
	if (rc) {
		err->offset = 0;
		snprintf(err->cause, sizeof(err->cause), "cannot build the minidump: %s",
		         ptrec_minidump_strerror(rc));
	}
	ptrec_report_free(&r);
	ptrec_dump_free(&d);
	ptrec_dump_file_free(&f);
	return rc;
}

int ptrec_minidump_write_fd(const struct ptrec_minidump *md, int fd)
{
	size_t done = 0;
	while (done < md->size) {
		ssize_t w = write(fd, md->data + done, md->size - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -PTREC_EIO;
		}
		done += (size_t)w;
	}
	return 0;
}

int ptrec_minidump_save(const struct ptrec_minidump *md, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -PTREC_EIO;
	int rc = ptrec_minidump_write_fd(md, fd);
	if (close(fd) != 0 && !rc)
		rc = -PTREC_EIO;
	if (rc) {
		int e = errno;
		unlink(path);
		errno = e;
	}
	return rc;
}

void ptrec_minidump_free(struct ptrec_minidump *md)
{
	free(md->data);
	memset(md, 0, sizeof(*md));
}

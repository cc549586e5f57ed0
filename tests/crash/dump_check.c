/* dump_check.c — a test-side reader of ptrec dumps, independent of libptrec's reader: checks
 * the structure of a dump (doc/dump-format.md) and prints what the crash tests compare.
 *
 *   dump_check DUMP [NM_OUTPUT]
 *
 * Prints "event E signo S tid T threads N complete C", one "thread ..." line per THREAD record
 * and, for the thread flagged CRASHED, "stack: f1 > f2 > ... > fN": the call stack rebuilt by
 * replaying its instrumented CALL/RET records ("kinds: ..." lists the record kinds seen and
 * "last: f" names the function of the newest record's source), symbolized with `nm` on the
 * executable (an independent oracle).  Also prints "rip 0x..." from REGS, one
 * "memory kind K vaddr 0x... size N covers_rip 0|1 rip_bytes XXXX" line per MEMORY record, and
 * one "buildid HEX PATH" line per BUILDID record, "sysfile KIND size N kept M flags F" per SYSFILE
 * record (the process's before END; the host's after it, appended by the report child and
 * closed by a second END), and "fault si_code C addr 0x..." from PROCESS.  Exits 1 with a
 * message when the dump is malformed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/branch.h"
#include "dump/dump_format.h"

struct sym { uint64_t addr; char name[128]; };
static struct sym *syms;
static size_t nsyms;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_nm(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	if (!f) { perror(path); exit(1); }
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a; char t; char name[128];
		if (sscanf(line, "%llx %c %127s", &a, &t, name) != 3 || (t != 'T' && t != 't'))
			continue;
		syms = realloc(syms, (nsyms + 1) * sizeof(*syms));
		syms[nsyms].addr = a;
		snprintf(syms[nsyms].name, sizeof(syms[nsyms].name), "%s", name);
		nsyms++;
	}
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), sym_cmp);
}

static uint64_t exe_base;

static const char *sym_name(uint64_t addr)
{
	static char buf[32];
	uint64_t off = addr - exe_base;
	const char *best = NULL;
	for (size_t i = 0; i < nsyms && syms[i].addr <= off; i++)
		best = syms[i].name;
	if (best)
		return best;
	snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
	return buf;
}

static void fail(const char *msg, long long off)
{
	fprintf(stderr, "dump_check: %s at offset %lld\n", msg, off);
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc < 2) { fprintf(stderr, "usage: dump_check DUMP [NM_OUTPUT]\n"); return 2; }
	FILE *f = fopen(argv[1], "rb");
	if (!f) { perror(argv[1]); return 1; }
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)size + 1);
	if (fread(buf, 1, (size_t)size, f) != (size_t)size) { perror("read"); return 1; }
	fclose(f);
	if (argc > 2)
		load_nm(argv[2]);

	struct ptrec_dump_header h;
	if ((size_t)size < sizeof(h)) fail("file shorter than the header", 0);
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, PTREC_DUMP_MAGIC, 8) || h.version != PTREC_DUMP_VERSION ||
	    h.header_size != sizeof(h))
		fail("bad header", 0);

	struct ptrec_dump_process p;
	int have_process = 0, complete = 0, nthread_recs = 0;
	size_t off = h.header_size;
	const uint8_t *crashed = NULL; size_t crashed_len = 0; uint64_t crashed_sp = 0;
	const char *maps = NULL; size_t maps_len = 0;
	uint64_t rip = 0;
	const uint8_t *mem_at[64]; size_t nmem = 0;
	while (off + sizeof(struct ptrec_dump_record) <= (size_t)size) {
		struct ptrec_dump_record r;
		memcpy(&r, buf + off, sizeof(r));
		size_t pay = off + sizeof(r);
		if (r.size > (uint64_t)size - pay) fail("record runs past the end", (long long)off);
		if (!have_process && r.type != PTREC_REC_PROCESS) fail("PROCESS is not first", (long long)off);
		switch (r.type) {
		case PTREC_REC_PROCESS:
			if (r.size != sizeof(p)) fail("PROCESS size", (long long)off);
			memcpy(&p, buf + pay, sizeof(p));
			have_process = 1;
			break;
		case PTREC_REC_THREAD: {
			struct ptrec_dump_thread t;
			if (r.size < sizeof(t)) fail("THREAD size", (long long)off);
			memcpy(&t, buf + pay, sizeof(t));
			if (t.data_size != r.size - sizeof(t)) fail("THREAD data_size", (long long)off);
			if (t.backend == 4 /* instrumented */ && t.data_size % sizeof(struct ptrec_soft_record))
				fail("soft ring bytes not whole records", (long long)off);
			printf("thread %u name %s flags 0x%x records %" PRIu64 "\n", t.tid, t.name,
			       t.flags, t.data_size / sizeof(struct ptrec_soft_record));
			if (t.flags & PTREC_THREAD_CRASHED) {
				crashed = buf + pay + sizeof(t);
				crashed_len = t.data_size;
				crashed_sp = t.stack_pointer;
			}
			nthread_recs++;
			break;
		}
		case PTREC_REC_REGS: {
			/* x86-64 or aarch64 registers, told by their count; "rip" is the pc */
			struct ptrec_dump_regs rg;
			if (r.size != PTREC_DUMP_REGS_SIZE(PTREC_REG_COUNT) &&
			    r.size != PTREC_DUMP_REGS_SIZE(PTREC_A64_COUNT))
				fail("REGS size", (long long)off);
			memset(&rg, 0, sizeof(rg));
			memcpy(&rg, buf + pay, r.size);
			if (rg.count != (r.size - 8) / 8) fail("REGS count", (long long)off);
			rip = rg.gregs[rg.count == PTREC_A64_COUNT ? PTREC_A64_PC : PTREC_REG_RIP];
			printf("rip 0x%" PRIx64 "\n", rip);
			break;
		}
		case PTREC_REC_MEMORY: {
			struct ptrec_dump_memory m;
			if (r.size < sizeof(m)) fail("MEMORY size", (long long)off);
			memcpy(&m, buf + pay, sizeof(m));
			if (m.size != r.size - sizeof(m)) fail("MEMORY size field", (long long)off);
			if (nmem < 64) mem_at[nmem++] = buf + off;
			break;
		}
		case PTREC_REC_BUILDID: {
			struct ptrec_dump_buildid b;
			if (r.size < sizeof(b)) fail("BUILDID size", (long long)off);
			memcpy(&b, buf + pay, sizeof(b));
			if (sizeof(b) + b.id_len + b.path_len != r.size) fail("BUILDID lengths", (long long)off);
			printf("buildid ");
			for (uint32_t i = 0; i < b.id_len; i++)
				printf("%02x", buf[pay + sizeof(b) + i]);
			printf(" %.*s\n", (int)b.path_len, (const char *)buf + pay + sizeof(b) + b.id_len);
			break;
		}
		case PTREC_REC_STATUS:
			for (size_t i = 0; i < r.size; i++)
				if (buf[pay + i] == 0) fail("NUL in STATUS text", (long long)off);
			printf("status %.*s", (int)r.size, (const char *)buf + pay);
			break;
		case PTREC_REC_MAPS:
			maps = (const char *)buf + pay;
			maps_len = r.size;
			break;
		case PTREC_REC_SYSFILE: {
			/* the process's files before END, the host's appended after it */
			struct ptrec_dump_sysfile sf;
			if (r.size < sizeof(sf)) fail("SYSFILE size", (long long)off);
			memcpy(&sf, buf + pay, sizeof(sf));
			int host = sf.kind >= PTREC_SYSFILE_CPUINFO && sf.kind <= PTREC_SYSFILE_UNAME;
			if (sf.kind < PTREC_SYSFILE_CMDLINE || sf.kind > PTREC_SYSFILE_UNAME ||
			    host != (complete > 0))
				fail("SYSFILE kind in the wrong place", (long long)off);
			if (sf.size < r.size - sizeof(sf) ||
			    !(sf.flags & PTREC_SYSFILE_CUT) != (sf.size == r.size - sizeof(sf)))
				fail("SYSFILE size field or CUT flag", (long long)off);
			printf("sysfile %u size %" PRIu64 " kept %" PRIu64 " flags 0x%x\n", sf.kind,
			       sf.size, (uint64_t)(r.size - sizeof(sf)), sf.flags);
			break;
		}
		case PTREC_REC_END:
			complete++;
			break;
		default:
			if (complete) fail("a record other than SYSFILE after END", (long long)off);
			break;
		}
		off = pay + ((r.size + 7) & ~7ull);
		if (complete == 2) break;
	}
	if (!have_process) fail("no PROCESS record", (long long)off);
	if (complete && off != (size_t)size) fail("bytes after END", (long long)off);
	if ((unsigned)nthread_recs != p.nthreads) fail("nthreads differs from THREAD records", 0);
	p.exe[sizeof(p.exe) - 1] = '\0';
	printf("event %u signo %d tid %u threads %u complete %d exe %s\n", p.event, p.signo, p.tid,
	       p.nthreads, complete > 0, p.exe);
	printf("fault si_code %d addr 0x%" PRIx64 "\n", p.si_code, p.fault_addr);

	/* The executable's load base: the lowest mapping of p.exe. */
	for (size_t i = 0; maps && i < maps_len;) {
		const char *eol = memchr(maps + i, '\n', maps_len - i);
		size_t n = eol ? (size_t)(eol - (maps + i)) : maps_len - i;
		char line[4200];
		if (n >= sizeof(line)) n = sizeof(line) - 1;
		memcpy(line, maps + i, n);
		line[n] = '\0';
		const char *path = strchr(line, '/');
		unsigned long long start;
		if (path && !strcmp(path, p.exe) && sscanf(line, "%llx", &start) == 1) {
			exe_base = start;
			break;
		}
		i += n + 1;
	}

	for (size_t i = 0; i < nmem; i++) {
		struct ptrec_dump_memory m;
		memcpy(&m, mem_at[i] + sizeof(struct ptrec_dump_record), sizeof(m));
		const uint8_t *bytes = mem_at[i] + sizeof(struct ptrec_dump_record) + sizeof(m);
		int covers = rip >= m.vaddr && rip - m.vaddr < m.size;
		printf("memory kind %u vaddr 0x%" PRIx64 " size %" PRIu64 " covers_rip %d", m.kind,
		       m.vaddr, m.size, covers);
		if (covers) {
			printf(" rip_bytes ");
			for (uint64_t k = rip - m.vaddr; k < m.size && k < rip - m.vaddr + 2; k++)
				printf("%02x", bytes[k]);
		}
		printf("\n");
	}

	if (crashed) {
		uint64_t stack[4096];
		uint32_t stack_sp[4096]; /* entry-only records: (sp >> 3) mod 2^28 of each frame */
		size_t depth = 0;
		unsigned kinds = 0;
		uint64_t last_from = 0;
		for (size_t i = 0; i + 16 <= crashed_len; i += 16) {
			struct ptrec_soft_record rec;
			memcpy(&rec, crashed + i, sizeof(rec));
			/* Dump format 2: 16-byte records, the kind in the top 4 bits of w0. */
			unsigned soft = PTREC_SOFT_KIND(rec.w0);
			unsigned kind = soft == PTREC_SOFT_CALL ? PTREC_BR_CALL
			                : soft == PTREC_SOFT_RET ? PTREC_BR_RET
			                : soft == PTREC_SOFT_EDGE ? PTREC_BR_EDGE : 0;
			if (soft == PTREC_SOFT_ENTRY) {
				/* Entry-only (-mfentry): frames entered at or below this entry's stack
				 * pointer have returned (the stack stays far from wrapping 2^31). */
				uint32_t sp = (uint32_t)PTREC_SOFT_X(rec.w0, rec.w1);
				while (depth && stack_sp[depth - 1] <= sp)
					depth--;
				kinds |= 1u << 31;
				last_from = PTREC_SOFT_A(rec.w0);
				if (depth < 4096) {
					stack_sp[depth] = sp;
					stack[depth++] = PTREC_SOFT_B(rec.w1);
				}
				continue;
			}
			if (!kind) fail("soft record of an unexpected kind", (long long)i);
			kinds |= 1u << (kind & 31);
			last_from = PTREC_SOFT_A(rec.w0);
			if (kind == PTREC_BR_CALL && depth < 4096)
				stack[depth++] = PTREC_SOFT_B(rec.w1);
			else if (kind == PTREC_BR_RET && depth)
				depth--;
		}
		/* Entry-only frames entered below the crash's stack pointer had returned. */
		while ((kinds >> 31) && depth && crashed_sp &&
		       stack_sp[depth - 1] < (uint32_t)((crashed_sp >> 3) & 0xfffffff))
			depth--;
		printf("kinds:%s%s%s%s\n", kinds & (1u << PTREC_BR_CALL) ? " call" : "",
		       kinds & (1u << PTREC_BR_RET) ? " ret" : "",
		       kinds & (1u << PTREC_BR_EDGE) ? " edge" : "", kinds >> 31 ? " entry" : "");
		if (crashed_len)
			printf("last: %s\n", sym_name(last_from));
		printf("stack:");
		for (size_t i = depth > 16 ? depth - 16 : 0; i < depth; i++)
			printf("%s %s", i == (depth > 16 ? depth - 16 : 0) ? "" : " >", sym_name(stack[i]));
		printf("\n");
	}
	free(buf);
	free(syms);
	return 0;
}

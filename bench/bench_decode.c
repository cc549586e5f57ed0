/* bench_decode.c — decode speed of libptrec's PT flow decoder against libipt (test-only peer).
 *
 *   bench_decode [--min-mb N] [DIR]
 *
 * DIR is a ptgen output directory (doc/ptgen.md): DIR/run.xl recorded from a real program under
 * single-step, DIR/image.txt its code image.  Without DIR, the bench records
 * tests/progs/workload with tests/ptgen/ptgen once into bench/decode-data (reused later).
 * The trace is ptgen's encoding of that one real run repeated as independent PSB-started
 * segments (`ptgen encode --repeat`) until it is at least N MB (default 16).
 *
 * Every decoder decodes the same bytes with the same code image in the same run:
 *   ptrec insn     ptrec_pt_flow_iter_next, one step per instruction (address hashed)
 *   ptrec runs     ptrec_pt_flow_next_run, every instruction address of each run hashed
 *   ptrec runs/cnt ptrec_pt_flow_next_run, instructions counted
 *   ptrec batch    ptrec_pt_flow_next_runs (64 runs per call), every instruction address hashed
 *   ptrec batch/cnt  the same, instructions counted
 *   ptrec last-64  ptrec_pt_flow_decode_last into a 64-event ring (instructions counted only)
 *   ptrec count    ptrec_pt_flow_count: totals without runs (`ptrec decode --stat`; before it,
 *                  --stat added up the runs of ptrec batch/cnt)
 *   libipt insn    pt_insn_next (address hashed)
 *   libipt block   pt_blk_next (instructions counted; the address hash is computed in a second,
 *                  untimed pass that expands each block with libptrec's length decoder)
 * "same" says whether the instruction count and the order-sensitive hash of all instruction
 * addresses equal those of libipt's instruction decoder.  A second table decodes one segment
 * with fresh decoders each time (cold caches).  A third takes the last 64 branch events of
 * rings of 64 KiB ... 128 MiB (the newest bytes of the segment repeated, so the oldest start
 * in the middle of a packet) tail-first (ptrec_pt_flow_decode_tail) and by decoding the whole
 * ring (ptrec_pt_flow_decode_last), and checks that both give the same 64 events.
 * A fourth decodes a trace that does not repeat: one long run of `workload 10` (ten rounds of
 * the work with other keys each: other hash chains, sort orders and strings), recorded once
 * into bench/decode-varied and encoded once; chains built there are reused far less.
 * A fifth decodes a real trace (bench/fetch_real_traces.sh fetches it at bench time: a 2 MB
 * trace of a QEMU process with its page cache, nyx-fuzz/libxdc_experiments test_data/qemu,
 * AGPL data never committed; PTREC_REAL_TRACES=DIR names another copy) with the decoders above
 * and with libxdc (a coverage-only decoder; the program bench_libxdc that the script builds,
 * PTREC_BENCH_LIBXDC names another), and says what is missing when they are not there:
 * "fresh" is a new decoder per pass in this process, "first" the first decode in a new process
 * (the process started again for each, best of 5), "warm" libxdc decoding again with its caches
 * built and ptrec counting again after ptrec_pt_flow_restart (block, chain and span caches kept).
 * --ring-sizes: only the ring-size table; --real: only the real-trace table; --real-first DIR:
 * one count of DIR's trace, printing its CPU seconds (the "first" rows). */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "ptrec.h"
#include "decode/branch_ring.h"
#include "decode/elf_load.h"
#include "decode/pt_flow.h"
#include "decode/pt_image.h"
#include "decode/pt_tail.h"
#include "decode/x86_ild.h"

/* One ELF object of the image: --elf FILE:BASE. */
struct obj {
	char path[4096]; /* file */
	uint64_t base;   /* where its lowest PT_LOAD goes */
	int has_base;    /* base given */
};

static struct obj objs[64];
static int nobj;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint64_t mix(uint64_t h, uint64_t ip)
{
	return (h ^ ip) * 0x100000001b3ull;
}

static unsigned char *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat st;
	if (fstat(fileno(f), &st) < 0) {
		fclose(f);
		return NULL;
	}
	unsigned char *b = malloc((size_t)st.st_size + 1);
	if (b && fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*size = (size_t)st.st_size;
	return b;
}

static int read_image_txt(const char *dir)
{
	char path[4200], line[4000];
	snprintf(path, sizeof(path), "%s/image.txt", dir);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "bench_decode: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) && nobj < 64) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "--elf ", 6))
			continue;
		struct obj *o = &objs[nobj++];
		snprintf(o->path, sizeof(o->path), "%s", line + 6);
		char *c = strrchr(o->path, ':');
		if (c && c[1] >= '0' && c[1] <= '9') {
			*c = 0;
			o->base = strtoull(c + 1, NULL, 0);
			o->has_base = 1;
		}
	}
	fclose(f);
	return nobj ? 0 : -1;
}

/* Adds the executable PT_LOAD segments of every object to libipt's section cache and image. */
static int ipt_load(struct pt_image *img, struct pt_image_section_cache *isc)
{
	for (int i = 0; i < nobj; i++) {
		size_t size;
		unsigned char *b = read_all(objs[i].path, &size);
		if (!b || size < sizeof(Elf64_Ehdr))
			return -1;
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
		uint64_t lowest = UINT64_MAX;
		for (unsigned k = 0; k < eh->e_phnum; k++) {
			const Elf64_Phdr *ph = (const Elf64_Phdr *)(b + eh->e_phoff + k * sizeof(*ph));
			if (ph->p_type == PT_LOAD && ph->p_vaddr < lowest)
				lowest = ph->p_vaddr;
		}
		uint64_t shift = objs[i].has_base ? objs[i].base - lowest : 0;
		for (unsigned k = 0; k < eh->e_phnum; k++) {
			const Elf64_Phdr *ph = (const Elf64_Phdr *)(b + eh->e_phoff + k * sizeof(*ph));
			if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !ph->p_filesz)
				continue;
			int isid = pt_iscache_add_file(isc, objs[i].path, ph->p_offset, ph->p_filesz,
			                               ph->p_vaddr + shift);
			if (isid < 0 || pt_image_add_cached(img, isc, isid, NULL) < 0) {
				free(b);
				return -1;
			}
		}
		free(b);
	}
	return 0;
}

static int our_load(struct ptrec_pt_img *img)
{
	for (int i = 0; i < nobj; i++)
		if (ptrec_elf_load_image(img, objs[i].path, objs[i].has_base, objs[i].base, NULL) < 0)
			return -1;
	return 0;
}

/* Result of one decoder pass. */
struct result {
	uint64_t insns;  /* instructions */
	uint64_t hash;   /* order-sensitive hash of their addresses */
	uint64_t errors; /* gaps / decoder errors */
	double secs;     /* wall time */
	int hashed;      /* hash is valid */
};

static struct ptrec_pt_img *our_img;

/* What both decoders are told about the clocks (the timed table: MTCFreq and the TSC/crystal
 * ratio ptgen encodes with; zeros elsewhere). */
static struct ptrec_pt_time_config clocks;

static struct result ours_insn(const uint8_t *buf, size_t len)
{
	struct result r = {0, 0, 0, 0, 1};
	struct ptrec_pt_flow_config cfg = {buf, len, our_img, 0, clocks};
	static struct ptrec_pt_flow_iter it;
	double t0 = now();
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	struct ptrec_pt_flow_insn insn;
	const struct ptrec_pt_flow_run *run;
	int e;
	uint64_t h = 0, n = 0;
	ptrec_pt_flow_iter_init(&it, f);
	while ((e = ptrec_pt_flow_iter_next(&it, &insn, &run)) > 0) {
		if (e == PT_FLOW_INSN) {
			h = mix(h, insn.ip);
			n++;
		}
	}
	r.errors = ptrec_pt_flow_stats(f)->gaps;
	ptrec_pt_flow_free(f);
	r.secs = now() - t0;
	r.insns = n;
	r.hash = h;
	return r;
}

static struct result ours_runs(const uint8_t *buf, size_t len)
{
	struct result r = {0, 0, 0, 0, 1};
	struct ptrec_pt_flow_config cfg = {buf, len, our_img, 0, clocks};
	double t0 = now();
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	struct ptrec_pt_flow_run run;
	uint64_t h = 0, n = 0;
	while (ptrec_pt_flow_next_run(f, &run) > 0) {
		uint64_t ip = run.ip;
		for (uint32_t i = 0; i < run.ninsn; i++) {
			h = mix(h, ip);
			ip += run.len[i];
		}
		n += run.ninsn;
	}
	r.errors = ptrec_pt_flow_stats(f)->gaps;
	ptrec_pt_flow_free(f);
	r.secs = now() - t0;
	r.insns = n;
	r.hash = h;
	return r;
}

static struct result ours_count(const uint8_t *buf, size_t len)
{
	struct result r = {0, 0, 0, 0, 0};
	struct ptrec_pt_flow_config cfg = {buf, len, our_img, 0, clocks};
	double t0 = now();
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	struct ptrec_pt_flow_run run;
	uint64_t n = 0;
	while (ptrec_pt_flow_next_run(f, &run) > 0)
		n += run.ninsn;
	r.errors = ptrec_pt_flow_stats(f)->gaps;
	ptrec_pt_flow_free(f);
	r.secs = now() - t0;
	r.insns = n;
	return r;
}

/* ptrec_pt_flow_next_runs in batches of 64 runs: every instruction address hashed, or (hash = 0)
 * instructions counted. */
static struct result ours_batch(const uint8_t *buf, size_t len, int hash)
{
	struct result r = {0, 0, 0, 0, hash};
	struct ptrec_pt_flow_config cfg = {buf, len, our_img, 0, clocks};
	static struct ptrec_pt_flow_run runs[64];
	double t0 = now();
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	uint64_t h = 0, n = 0;
	int m;
	while ((m = ptrec_pt_flow_next_runs(f, runs, 64)) > 0) {
		for (int j = 0; j < m; j++) {
			if (hash) {
				uint64_t ip = runs[j].ip;
				for (uint32_t i = 0; i < runs[j].ninsn; i++) {
					h = mix(h, ip);
					ip += runs[j].len[i];
				}
			}
			n += runs[j].ninsn;
		}
	}
	r.errors = ptrec_pt_flow_stats(f)->gaps;
	ptrec_pt_flow_free(f);
	r.secs = now() - t0;
	r.insns = n;
	r.hash = h;
	return r;
}

static struct result ours_total(const uint8_t *buf, size_t len)
{
	struct result r = {0, 0, 0, 0, 0};
	struct ptrec_pt_flow_config cfg = {buf, len, our_img, 0, clocks};
	struct ptrec_pt_flow_counts c;
	memset(&c, 0, sizeof(c));
	double t0 = now();
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	ptrec_pt_flow_count(f, &c);
	r.errors = ptrec_pt_flow_stats(f)->gaps;
	ptrec_pt_flow_free(f);
	r.secs = now() - t0;
	r.insns = c.insns;
	return r;
}

static struct result ours_last(const uint8_t *buf, size_t len)
{
	struct result r = {0, 0, 0, 0, 0};
	struct ptrec_branch slots[64];
	struct branch_ring ring;
	struct ptrec_pt_flow_stats st;
	ptrec_branch_ring_init(&ring, slots, 64);
	double t0 = now();
	int e = ptrec_pt_flow_decode_last(buf, len, our_img, NULL, &ring, &st);
	r.secs = now() - t0;
	r.insns = st.insns;
	r.errors = e > 0 ? (uint64_t)e : 0;
	return r;
}

static struct pt_image_section_cache *isc;
static struct pt_image *ipt_img;

/* The last 64 events of rings of growing size, tail-first and whole.  Returns 1 if they differ. */
static int ring_sizes(const uint8_t *segbuf, size_t seglen)
{
	static const size_t kib[] = {64, 256, 1024, 4096, 8192, 16384, 65536, 131072};
	const size_t nsz = sizeof(kib) / sizeof(kib[0]);
	size_t total = (kib[nsz - 1] * 1024 / seglen + 2) * seglen;
	uint8_t *buf = malloc(total);
	struct ptrec_branch slot_t[64], slot_w[64];
	struct branch_ring rt, rw;
	double t_first = 0, t_last = 0, t_8m = 0;
	int diff = 0;
	if (!buf)
		return 1;
	for (size_t o = 0; o < total; o += seglen)
		memcpy(buf + o, segbuf, seglen);
	ptrec_branch_ring_init(&rt, slot_t, 64);
	ptrec_branch_ring_init(&rw, slot_w, 64);
	printf("\nlast 64 branch events of a ring (the newest bytes of the segment repeated; CPU ms, "
	       "tail best of 5, whole best of 3 up to 16 MiB, else 1)\n");
	printf("%10s %10s %12s %9s %11s %10s  %s\n", "ring", "tail ms", "bytes decoded",
	       "segments", "whole ms", "whole/tail", "same 64 events");
	for (size_t i = 0; i < nsz; i++) {
		size_t len = kib[i] * 1024;
		const uint8_t *ring = buf + total - len;
		struct ptrec_pt_tail_info info;
		struct ptrec_pt_flow_stats st;
		double bt = 1e9, bw = 1e9;
		for (int k = 0; k < 5; k++) {
			double t0 = now();
			ptrec_pt_flow_decode_tail(ring, len, our_img, NULL, &rt, &info);
			double t = now() - t0;
			bt = t < bt ? t : bt;
		}
		for (int k = 0; k < (len <= (16u << 20) ? 3 : 1); k++) {
			double t0 = now();
			ptrec_pt_flow_decode_last(ring, len, our_img, NULL, &rw, &st);
			double t = now() - t0;
			bw = t < bw ? t : bw;
		}
		int same = ptrec_branch_ring_count(&rt) == ptrec_branch_ring_count(&rw);
		for (size_t k = 0; same && k < ptrec_branch_ring_count(&rt); k++)
			same = !memcmp(ptrec_branch_ring_get(&rt, k), ptrec_branch_ring_get(&rw, k),
			               sizeof(struct ptrec_branch));
		diff |= !same;
		printf("%6zu KiB %10.3f %12" PRIu64 " %9" PRIu32 " %11.3f %9.0fx  %s%s\n", kib[i],
		       bt * 1e3, info.bytes, info.segments, bw * 1e3, bw / bt, same ? "yes" : "NO",
		       info.whole ? " (whole)" : "");
		if (i == 0)
			t_first = bt;
		if (kib[i] == 8192)
			t_8m = bt;
		t_last = bt;
	}
	printf("\n128 MiB / 64 KiB tail-first time: %.2fx (goal: within 2x); 16 threads x 8 MiB rings: "
	       "%.1f ms of decoding (goal: < 150 ms)\n", t_last / t_first, 16 * t_8m * 1e3);
	free(buf);
	return diff;
}

static void ipt_config(struct pt_config *cfg, const uint8_t *buf, size_t len)
{
	pt_config_init(cfg);
	cfg->begin = (uint8_t *)(uintptr_t)buf;
	cfg->end = (uint8_t *)(uintptr_t)buf + len;
	cfg->mtc_freq = clocks.mtc_freq;
	cfg->cpuid_0x15_eax = clocks.ctc_den;
	cfg->cpuid_0x15_ebx = clocks.ctc_num;
}

static struct result ipt_insn(const uint8_t *buf, size_t len)
{
	struct result r = {0, 0, 0, 0, 1};
	struct pt_config cfg;
	ipt_config(&cfg, buf, len);
	double t0 = now();
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	pt_insn_set_image(d, ipt_img);
	uint64_t h = 0, n = 0;
	for (;;) {
		int st = pt_insn_sync_forward(d);
		if (st < 0)
			break;
		for (;;) {
			while (st & pts_event_pending) {
				struct pt_event ev;
				st = pt_insn_event(d, &ev, sizeof(ev));
				if (st < 0)
					break;
			}
			if (st < 0)
				break;
			struct pt_insn insn;
			st = pt_insn_next(d, &insn, sizeof(insn));
			if (st < 0)
				break;
			h = mix(h, insn.ip);
			n++;
		}
		if (st == -pte_eos)
			break;
		r.errors++;
	}
	pt_insn_free_decoder(d);
	r.secs = now() - t0;
	r.insns = n;
	r.hash = h;
	return r;
}

/* Expands a libipt block into instruction addresses with libptrec's length decoder (the block
 * gives its first address and instruction count only). */
static uint64_t expand_block(uint64_t h, const struct pt_block *b)
{
	uint64_t ip = b->ip;
	enum ptrec_x86_mode mode = b->mode == ptem_32bit ? X86_MODE_32
	                   : b->mode == ptem_16bit ? X86_MODE_16 : X86_MODE_64;
	for (unsigned i = 0; i < b->ninsn; i++) {
		uint8_t bytes[15];
		struct ptrec_x86_insn insn;
		size_t got = ptrec_pt_img_read(our_img, ip, bytes, sizeof(bytes));
		int l = ptrec_x86_ild_decode(bytes, got, ip, mode, &insn);
		h = mix(h, ip);
		if (l <= 0)
			return h ^ 0xdead; /* cannot expand: the hash will differ */
		/* A libipt block is "sequential": it may go on through direct jumps and calls. */
		if ((insn.iclass == X86_IC_JMP || insn.iclass == X86_IC_CALL) &&
		    (insn.flags & X86_INSN_HAS_TARGET))
			ip = insn.target;
		else
			ip += (uint64_t)l;
	}
	return h;
}

static struct result ipt_block(const uint8_t *buf, size_t len, int hash)
{
	struct result r = {0, 0, 0, 0, hash};
	struct pt_config cfg;
	ipt_config(&cfg, buf, len);
	double t0 = now();
	struct pt_block_decoder *d = pt_blk_alloc_decoder(&cfg);
	pt_blk_set_image(d, ipt_img);
	uint64_t h = 0, n = 0;
	for (;;) {
		int st = pt_blk_sync_forward(d);
		if (st < 0)
			break;
		for (;;) {
			while (st & pts_event_pending) {
				struct pt_event ev;
				st = pt_blk_event(d, &ev, sizeof(ev));
				if (st < 0)
					break;
			}
			if (st < 0)
				break;
			struct pt_block b;
			st = pt_blk_next(d, &b, sizeof(b));
			n += b.ninsn;
			if (hash && b.ninsn)
				h = expand_block(h, &b);
			if (st < 0)
				break;
		}
		if (st == -pte_eos)
			break;
		r.errors++;
	}
	pt_blk_free_decoder(d);
	r.secs = now() - t0;
	r.insns = n;
	r.hash = h;
	return r;
}

static void row(const char *name, const struct result *r, size_t bytes, const struct result *ref)
{
	const char *same = !r->hashed ? (r->insns == ref->insns ? "count" : "NO")
	                 : (r->insns == ref->insns && r->hash == ref->hash) ? "yes" : "NO";
	printf("%-16s %10.1f %11.1f %12" PRIu64 "  %016" PRIx64 " %6" PRIu64 "  %s\n", name,
	       (double)bytes / 1e6 / r->secs, (double)r->insns / 1e6 / r->secs, r->insns,
	       r->hashed ? r->hash : 0, r->errors, same);
}

static int run_cmd(char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", 1);
		if (fd >= 0)
			dup2(fd, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

/* Best of n passes (the machine is shared: the fastest pass is the least disturbed). */
#define BEST(expr, n) ({ \
	struct result best_ = expr; \
	for (int k_ = 1; k_ < (n); k_++) { \
		struct result r_ = expr; \
		if (r_.secs < best_.secs) \
			best_ = r_; \
	} \
	best_; })

/* Empty images for ours and libipt's (the old ones freed). */
static void fresh_images(void)
{
	if (our_img)
		ptrec_pt_img_free(our_img);
	if (ipt_img)
		pt_image_free(ipt_img);
	if (isc)
		pt_iscache_free(isc);
	our_img = ptrec_pt_img_new();
	isc = pt_iscache_alloc(NULL);
	ipt_img = pt_image_alloc(NULL);
}

/* Loads DIR/image.txt into fresh images. */
static int load_images(const char *dir)
{
	fresh_images();
	nobj = 0;
	if (read_image_txt(dir) || our_load(our_img) || ipt_load(ipt_img, isc)) {
		printf("bench_decode: cannot load the image of %s\n", dir);
		return -1;
	}
	return 0;
}

/* libipt insn, libipt block, ptrec batch (hashed) and ptrec count on buf: rows (names after
 * indent) and results in r[0..3].  Returns 1 when the instructions differ from libipt insn's. */
static int four_rows(const uint8_t *buf, size_t len, const char *indent, struct result r[4])
{
	static const char *const name[4] = {"libipt insn", "libipt block", "ptrec batch",
	                                    "ptrec count"};
	r[0] = BEST(ipt_insn(buf, len), 2);
	r[1] = BEST(ipt_block(buf, len, 0), 3);
	struct result ibh = ipt_block(buf, len, 1);
	r[1].hash = ibh.hash;
	r[1].hashed = ibh.insns == r[1].insns;
	r[2] = BEST(ours_batch(buf, len, 1), 3);
	r[3] = BEST(ours_total(buf, len), 5);
	for (int i = 0; i < 4; i++) {
		char n[64];
		snprintf(n, sizeof(n), "%s%s", indent, name[i]);
		row(n, &r[i], len, &r[0]);
	}
	return !(r[2].insns == r[0].insns && r[2].hash == r[0].hash && r[3].insns == r[0].insns);
}

/* The varied trace's table (see the top).  Returns 0, 1 when the decoders disagree, -1 when the
 * trace cannot be made. */
static int varied(const char *top, const char *ptgen)
{
	char dir[4096], prog[4096], trace[4200], xl[4200];
	snprintf(dir, sizeof(dir), "%s/bench/decode-varied", top);
	snprintf(prog, sizeof(prog), "%s/tests/progs/workload", top);
	snprintf(xl, sizeof(xl), "%s/run.xl", dir);
	snprintf(trace, sizeof(trace), "%s/varied.pt", dir);
	if (access(xl, R_OK) != 0) {
		printf("\nrecording `%s 10` under single-step (once; kept in %s)...\n", prog, dir);
		fflush(stdout);
		char *av[] = {(char *)ptgen, "record", "-o", dir, "--", prog, "10", NULL};
		if (run_cmd(av))
			return -1;
	}
	char *ave[] = {(char *)ptgen, "encode", "-o", trace, dir, NULL};
	size_t len;
	uint8_t *buf;
	if (run_cmd(ave) || load_images(dir) || !(buf = read_all(trace, &len)))
		return -1;
	printf("\nvaried: %s: %.2f MB, one run of tests/progs/workload 10 (not repeated; best of "
	       "2-5 passes)\n", trace, (double)len / 1e6);
	struct result r[4];
	int d = four_rows(buf, len, "", r);
	printf("\nvaried speed-up: ptrec count %.1fx libipt block, ptrec batch %.1fx libipt insn\n",
	       ((double)r[3].insns / r[3].secs) / ((double)r[1].insns / r[1].secs),
	       ((double)r[2].insns / r[2].secs) / ((double)r[0].insns / r[0].secs));
	free(buf);
	unlink(trace);
	return d;
}

/* One row group of the timed table: DIR/run.xl encoded with the ptgen options opts (NULL
 * ended), repeated reps times.  Returns 0, 1 when the decoders disagree, -1 when the trace
 * cannot be made. */
static int timed(const char *dir, const char *ptgen, const char *name, unsigned reps,
                 char *const *opts)
{
	char trace[4200], repstr[32];
	char *av[32];
	int n = 0;
	snprintf(trace, sizeof(trace), "%s/timed.pt", dir);
	snprintf(repstr, sizeof(repstr), "%u", reps);
	av[n++] = (char *)ptgen;
	av[n++] = "encode";
	while (*opts && n < 24)
		av[n++] = *opts++;
	av[n++] = "--repeat";
	av[n++] = repstr;
	av[n++] = "-o";
	av[n++] = trace;
	av[n++] = (char *)dir;
	av[n] = NULL;
	size_t len;
	uint8_t *buf;
	if (run_cmd(av) || load_images(dir) || !(buf = read_all(trace, &len)))
		return -1;
	printf("%s (%.1f MB)\n", name, (double)len / 1e6);
	struct result r[4];
	int d = four_rows(buf, len, "  ", r);
	free(buf);
	unlink(trace);
	return d;
}

/* The timed table: the bench and varied runs encoded with timing packets, as perf records by
 * default (tsc=1,mtc=1,mtc_period=3: a TSC in each PSB+ and an MTC about every thousand core
 * cycles; ptgen's crystal clock is TSC/2 and an instruction takes it 1-3 cycles, so --mtc-freq
 * 9) and cycle-accurate (--timing all: CYC before nearly every packet, MTC at MTCFreq 3). */
static int timed_table(const char *bench_dir, const char *varied_dir, const char *ptgen,
                       unsigned reps)
{
	static char *perf_default[] = {"--timing", "tsc,mtc", "--mtc-freq", "9", NULL};
	static char *all[] = {"--timing", "all", NULL};
	int d = 0, e;
	printf("\ntimed: the same runs with timing packets (times process CPU time, best of "
	       "2-3 passes)\n");
	printf("%-16s %10s %11s %12s  %-16s %6s  %s\n", "decoder", "trace MB/s", "M insn/s",
	       "insns", "address hash", "errors", "same as libipt insn");
	clocks = (struct ptrec_pt_time_config){1, 2, 9, 0, 0};
	e = timed(bench_dir, ptgen, "bench, --timing tsc,mtc --mtc-freq 9", reps, perf_default);
	d |= e;
	if (varied_dir && !e)
		d |= timed(varied_dir, ptgen, "varied, --timing tsc,mtc --mtc-freq 9", 1,
		           perf_default);
	clocks.mtc_freq = 3;
	/* (a quarter of the repetitions: CYCs make the trace 4-5 times as long) */
	d |= timed(bench_dir, ptgen, "bench, --timing all", reps / 4 + 1, all);
	clocks = (struct ptrec_pt_time_config){0, 0, 0, 0, 0};
	return d;
}

/* ---- the real trace (see the top) -------------------------------------------------------- */

/* A page cache as libxdc's experiments store it: page addresses (ADDR, 64-bit each) and their
 * 4 KiB pages (DUMP); an address with low bits set is a page that was not mapped. */
struct page_cache {
	uint8_t *addr, *dump;
	size_t naddr, ndump;
};

static int pc_load(const char *dir, struct page_cache *pc, uint8_t **trace, size_t *tlen)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/qemu/page_cache.addr", dir);
	pc->addr = read_all(p, &pc->naddr);
	snprintf(p, sizeof(p), "%s/qemu/page_cache.dump", dir);
	pc->dump = read_all(p, &pc->ndump);
	snprintf(p, sizeof(p), "%s/qemu/trace1", dir);
	*trace = read_all(p, tlen);
	return pc->addr && pc->dump && *trace ? 0 : -1;
}

/* The pages into our image (borrowed) and, with isc, libipt's (the dump file's ranges). */
static int pc_image(const char *dir, const struct page_cache *pc, struct ptrec_pt_img *img,
                    struct pt_image *ipt, struct pt_image_section_cache *ic)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/qemu/page_cache.dump", dir);
	for (size_t i = 0; i < pc->naddr / 8 && (i + 1) * 4096 <= pc->ndump; i++) {
		uint64_t a;
		memcpy(&a, pc->addr + 8 * i, 8);
		if (a & 0xfff)
			continue;
		if (ptrec_pt_img_add_bytes(img, a, pc->dump + 4096 * i, 4096, 0))
			return -1;
		if (ipt) {
			int isid = pt_iscache_add_file(ic, p, 4096 * i, 4096, a);
			if (isid < 0 || pt_image_add_cached(ipt, ic, isid, NULL) < 0)
				return -1;
		}
	}
	return 0;
}

/* --real-first DIR: one count in this fresh process; prints its CPU seconds and the insns. */
static int real_first(const char *dir)
{
	struct page_cache pc;
	uint8_t *trace;
	size_t tlen;
	our_img = ptrec_pt_img_new();
	if (pc_load(dir, &pc, &trace, &tlen) || pc_image(dir, &pc, our_img, NULL, NULL))
		return 1;
	struct result r = ours_total(trace, tlen);
	printf("%.9f %" PRIu64 "\n", r.secs, r.insns);
	return 0;
}

/* Runs argv (stdout into out, up to cap bytes) and returns 0 when it exited with 0. */
static int run_read(char *const argv[], char *out, size_t cap)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	size_t n = 0;
	ssize_t k;
	while (n + 1 < cap && (k = read(fd[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = 0;
	close(fd[0]);
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

/* One row of the real table for a decoder given as times only (ours first/warm, libxdc). */
static void time_row(const char *name, double secs, size_t bytes, uint64_t insns,
                     const char *note)
{
	char ins[32] = "-";
	if (insns)
		snprintf(ins, sizeof(ins), "%.1f", (double)insns / 1e6 / secs);
	printf("%-16s %10.1f %11s %8.2f ms  %s\n", name, (double)bytes / 1e6 / secs, ins,
	       secs * 1e3, note);
}

/* The real-trace table.  Returns 1 when our decoders disagree with libipt's, else 0 (also when
 * the trace is missing: then it says so). */
static int real_table(const char *top, const char *self)
{
	char dir[4096], xdc[4096], out[512];
	const char *e = getenv("PTREC_REAL_TRACES");
	snprintf(dir, sizeof(dir), "%s", e ? e : "");
	if (!e)
		snprintf(dir, sizeof(dir), "%s/bench/real-traces", top);
	e = getenv("PTREC_BENCH_LIBXDC");
	if (e)
		snprintf(xdc, sizeof(xdc), "%s", e);
	else
		snprintf(xdc, sizeof(xdc), "%s/ptrec-bench-libxdc/bench_libxdc",
		         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	struct page_cache pc;
	uint8_t *trace;
	size_t tlen;
	printf("\nreal trace: %s/qemu/trace1 (nyx-fuzz/libxdc_experiments test_data/qemu: QEMU under "
	       "Nyx, its page cache as the image)\n", dir);
	if (pc_load(dir, &pc, &trace, &tlen)) {
		printf("real trace: MISSING (bench/fetch_real_traces.sh fetches it at `make bench`; "
		       "PTREC_REAL_TRACES=DIR names a copy with DIR/qemu/{trace1,page_cache.addr,"
		       "page_cache.dump}); not measured.  Figures from the issue, not from this run: "
		       "ptrec decode --stat 20.6 ms, libxdc cold 11 ms\n");
		return 0;
	}
	fresh_images();
	if (pc_image(dir, &pc, our_img, ipt_img, isc)) {
		printf("real trace: cannot load its page cache\n");
		return 0;
	}
	printf("%.2f MB; times are process CPU time; fresh: a new decoder per pass, best of 2-5\n",
	       (double)tlen / 1e6);
	printf("%-16s %10s %11s %12s  %-16s %6s  %s\n", "decoder", "trace MB/s", "M insn/s",
	       "insns", "address hash", "errors", "same as libipt insn");
	struct result r[4];
	int d = four_rows(trace, tlen, "", r);

	/* ours: warm (counted again with the caches built) and first (a new process) */
	struct ptrec_pt_flow_config cfg = {trace, tlen, our_img, 0, clocks};
	struct ptrec_pt_flow *f = ptrec_pt_flow_new(&cfg);
	struct ptrec_pt_flow_counts c;
	memset(&c, 0, sizeof(c));
	ptrec_pt_flow_count(f, &c);
	double warm = 1e9;
	for (int k = 0; k < 5; k++) {
		ptrec_pt_flow_restart(f, 0, 0);
		memset(&c, 0, sizeof(c));
		double t0 = now();
		ptrec_pt_flow_count(f, &c);
		double t = now() - t0;
		warm = t < warm ? t : warm;
	}
	ptrec_pt_flow_free(f);
	double first = 1e9;
	uint64_t first_insns = 0;
	for (int k = 0; k < 5; k++) {
		char *av[] = {(char *)self, "--real-first", dir, NULL};
		double t;
		unsigned long long n;
		if (run_read(av, out, sizeof(out)) || sscanf(out, "%lf %llu", &t, &n) != 2) {
			first = 0;
			break;
		}
		first = t < first ? t : first;
		first_insns = n;
	}
	printf("\n%-16s %10s %11s %11s  %s\n", "decoder", "trace MB/s", "M insn/s", "time",
	       "what");
	time_row("ptrec count", r[3].secs, tlen, r[3].insns, "fresh (the row above)");
	if (first > 0)
		time_row("ptrec count", first, tlen, first_insns,
		         first_insns == r[3].insns ? "first in a new process (best of 5)"
		                                   : "first in a new process: OTHER COUNT");
	time_row("ptrec count", warm, tlen, c.insns,
	         c.insns == r[3].insns ? "warm (again after ptrec_pt_flow_restart, best of 5)"
	                               : "warm: OTHER COUNT");
	d |= c.insns != r[3].insns || (first > 0 && first_insns != r[3].insns);
	char path[3][4200];
	snprintf(path[0], sizeof(path[0]), "%s/qemu/trace1", dir);
	snprintf(path[1], sizeof(path[1]), "%s/qemu/page_cache.addr", dir);
	snprintf(path[2], sizeof(path[2]), "%s/qemu/page_cache.dump", dir);
	/* libxdc's filter range for this trace: its experiments' run_eval.py */
	double xf = 1e9, xfresh = 1e9, xwarm = 1e9;
	char res[64] = "";
	for (int k = 0; k < 5 && access(xdc, X_OK) == 0; k++) {
		char *av[] = {xdc, path[0], path[1], path[2], "0x555555554000", "0x555555d60000",
		              k ? "1" : "5", NULL};
		double a, b, w;
		int rc;
		char bm[32];
		if (run_read(av, out, sizeof(out)) ||
		    sscanf(out, "libxdc first %lf fresh %lf warm %lf result %d bitmap %31s", &a, &b,
		           &w, &rc, bm) != 5)
			break;
		xf = a < xf ? a : xf;
		xfresh = b < xfresh ? b : xfresh;
		xwarm = w < xwarm ? w : xwarm;
		snprintf(res, sizeof(res), "result %d, bitmap %s", rc, bm);
	}
	if (xf < 1e9) {
		char note[160];
		snprintf(note, sizeof(note), "first in a new process (best of 5; %s)", res);
		time_row("libxdc", xf / 1e3, tlen, 0, note);
		time_row("libxdc", xfresh / 1e3, tlen, 0, "fresh (best of 9)");
		time_row("libxdc", xwarm / 1e3, tlen, 0, "warm (again with its caches, best of 14)");
		printf("\nptrec count (exact flow) vs libxdc (coverage only), same trace: first %.2fx, "
		       "fresh %.2fx, warm %.2fx libxdc's speed\n", first > 0 ? xf / 1e3 / first : 0,
		       xfresh / 1e3 / r[3].secs, xwarm / 1e3 / warm);
	} else {
		printf("libxdc: MISSING (%s: bench/fetch_real_traces.sh builds it at `make bench` from "
		       "nyx-fuzz/libxdc; PTREC_BENCH_LIBXDC names another); not measured.  The issue's "
		       "figure, not from this run: libxdc cold 11 ms\n", xdc);
	}
	free(pc.addr);
	free(pc.dump);
	free(trace);
	return d;
}

int main(int argc, char **argv)
{
	double min_mb = 16;
	const char *dir = NULL;
	int ring_only = 0, real_only = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--min-mb") && i + 1 < argc)
			min_mb = atof(argv[++i]);
		else if (!strcmp(argv[i], "--ring-sizes"))
			ring_only = 1;
		else if (!strcmp(argv[i], "--real"))
			real_only = 1;
		else if (!strcmp(argv[i], "--real-first") && i + 1 < argc)
			return real_first(argv[i + 1]);
		else
			dir = argv[i];
	}
	char datadir[4096], ptgen[4096], prog[4096], seg[4200], big[4200];
	const char *top = getenv("top_builddir");
	if (!top)
		top = ".";
	if (real_only) {
		int d = real_table(top, argv[0]);
		if (d)
			printf("\nFAIL: the instruction sequences differ\n");
		return d;
	}
	snprintf(ptgen, sizeof(ptgen), "%s/tests/ptgen/ptgen", top);
	if (getenv("PTGEN")) /* another ptgen binary */
		snprintf(ptgen, sizeof(ptgen), "%s", getenv("PTGEN"));
	if (!dir) {
		snprintf(prog, sizeof(prog), "%s/tests/progs/workload", top);
		snprintf(datadir, sizeof(datadir), "%s/bench/decode-data", top);
		dir = datadir;
		snprintf(seg, sizeof(seg), "%s/run.xl", dir);
		if (access(seg, R_OK) != 0) {
			if (access(ptgen, X_OK) != 0 || access(prog, X_OK) != 0) {
				printf("bench_decode: needs %s and %s (built by `make check`)\n", ptgen, prog);
				return 1;
			}
			printf("recording %s under single-step (once; kept in %s)...\n", prog, dir);
			fflush(stdout);
			char *av[] = {ptgen, "record", "-o", (char *)dir, "--", prog, NULL};
			if (run_cmd(av)) {
				printf("bench_decode: ptgen record failed\n");
				return 1;
			}
		}
	}
	if (read_image_txt(dir))
		return 1;

	/* One segment, then as many repetitions as make min_mb. */
	snprintf(seg, sizeof(seg), "%s/bench-1.pt", dir);
	snprintf(big, sizeof(big), "%s/bench-n.pt", dir);
	char *av1[] = {ptgen, "encode", "-o", seg, (char *)dir, NULL};
	if (run_cmd(av1)) {
		printf("bench_decode: ptgen encode failed (%s)\n", ptgen);
		return 1;
	}
	size_t seglen, biglen;
	uint8_t *segbuf = read_all(seg, &seglen);
	if (!segbuf || !seglen)
		return 1;
	if (ring_only) {
		our_img = ptrec_pt_img_new();
		if (!our_img || our_load(our_img))
			return 1;
		int d = ring_sizes(segbuf, seglen);
		ptrec_pt_img_free(our_img);
		free(segbuf);
		if (d)
			printf("\nFAIL: tail-first and whole decodes differ\n");
		return d;
	}
	unsigned reps = (unsigned)(min_mb * 1e6 / (double)seglen) + 1;
	char repstr[32];
	snprintf(repstr, sizeof(repstr), "%u", reps);
	char *avn[] = {ptgen, "encode", "--repeat", repstr, "-o", big, (char *)dir, NULL};
	if (run_cmd(avn))
		return 1;
	uint8_t *bigbuf = read_all(big, &biglen);
	if (!bigbuf)
		return 1;

	our_img = ptrec_pt_img_new();
	isc = pt_iscache_alloc(NULL);
	ipt_img = pt_image_alloc(NULL);
	if (our_load(our_img) || ipt_load(ipt_img, isc)) {
		printf("bench_decode: cannot load the image\n");
		return 1;
	}

	printf("trace: %s: %.1f MB = %u x one PSB-started segment of %zu bytes (a real run of "
	       "tests/progs/workload, ptgen-encoded)\n\n", big, (double)biglen / 1e6, reps, seglen);
	printf("times are process CPU time (the machine is shared), best of 2-3 passes\n");
	printf("%-16s %10s %11s %12s  %-16s %6s  %s\n", "decoder", "trace MB/s", "M insn/s",
	       "insns", "address hash", "errors", "same as libipt insn");
	struct result ii = BEST(ipt_insn(bigbuf, biglen), 2);
	struct result ib = BEST(ipt_block(bigbuf, biglen, 0), 3);
	struct result ibh = ipt_block(bigbuf, biglen, 1);
	ib.hash = ibh.hash;
	ib.hashed = ibh.insns == ib.insns;
	struct result oi = BEST(ours_insn(bigbuf, biglen), 3);
	struct result orun = BEST(ours_runs(bigbuf, biglen), 3);
	struct result ocnt = BEST(ours_count(bigbuf, biglen), 3);
	struct result ol = BEST(ours_last(bigbuf, biglen), 3);
	struct result obh = BEST(ours_batch(bigbuf, biglen, 1), 3);
	struct result obc = BEST(ours_batch(bigbuf, biglen, 0), 3);
	struct result otot = BEST(ours_total(bigbuf, biglen), 3);
	row("libipt insn", &ii, biglen, &ii);
	row("libipt block", &ib, biglen, &ii);
	row("ptrec insn", &oi, biglen, &ii);
	row("ptrec runs", &orun, biglen, &ii);
	row("ptrec runs/cnt", &ocnt, biglen, &ii);
	row("ptrec last-64", &ol, biglen, &ii);
	row("ptrec batch", &obh, biglen, &ii);
	row("ptrec batch/cnt", &obc, biglen, &ii);
	row("ptrec count", &otot, biglen, &ii);
#define RATE(r) ((double)(r).insns / (r).secs)
	printf("\nspeed-up in instructions/s (goals: 20x libipt insn, 5x libipt block):\n"
	       "  every address hashed:  ptrec batch %.1fx, ptrec runs %.1fx, ptrec insn %.1fx "
	       "libipt insn\n"
	       "  instructions counted:  ptrec count %.1fx, ptrec batch %.1fx, ptrec runs %.1fx, "
	       "ptrec last-64 %.1fx libipt block\n"
	       "  --stat: ptrec count %.2fx ptrec batch/cnt (how --stat counted before)\n",
	       RATE(obh) / RATE(ii), RATE(orun) / RATE(ii), RATE(oi) / RATE(ii),
	       RATE(otot) / RATE(ib), RATE(obc) / RATE(ib), RATE(ocnt) / RATE(ib),
	       RATE(ol) / RATE(ib), RATE(otot) / RATE(obc));

	/* Cold: one segment, fresh decoders (and block caches) every pass. */
	printf("\ncold: one %zu-byte segment, fresh decoders each pass (best of 5)\n", seglen);
	struct result ci = BEST(ipt_insn(segbuf, seglen), 5);
	struct result cb = BEST(ipt_block(segbuf, seglen, 0), 5);
	struct result cbh = ipt_block(segbuf, seglen, 1);
	cb.hash = cbh.hash;
	cb.hashed = 1;
	struct result coi = BEST(ours_insn(segbuf, seglen), 5);
	struct result cor = BEST(ours_runs(segbuf, seglen), 5);
	struct result coc = BEST(ours_count(segbuf, seglen), 5);
	struct result col = BEST(ours_last(segbuf, seglen), 5);
	struct result cbb = BEST(ours_batch(segbuf, seglen, 1), 5);
	struct result cbc = BEST(ours_batch(segbuf, seglen, 0), 5);
	struct result ctot = BEST(ours_total(segbuf, seglen), 5);
	row("libipt insn", &ci, seglen, &ci);
	row("libipt block", &cb, seglen, &ci);
	row("ptrec insn", &coi, seglen, &ci);
	row("ptrec runs", &cor, seglen, &ci);
	row("ptrec runs/cnt", &coc, seglen, &ci);
	row("ptrec last-64", &col, seglen, &ci);
	row("ptrec batch", &cbb, seglen, &ci);
	row("ptrec batch/cnt", &cbc, seglen, &ci);
	row("ptrec count", &ctot, seglen, &ci);
	printf("\ncold speed-up: hashed: ptrec batch %.1fx, ptrec runs %.1fx, ptrec insn %.1fx "
	       "libipt insn; counted: ptrec batch %.1fx, ptrec runs %.1fx, last-64 %.1fx "
	       "libipt block\n",
	       RATE(cbb) / RATE(ci), RATE(cor) / RATE(ci), RATE(coi) / RATE(ci),
	       RATE(cbc) / RATE(cb), RATE(coc) / RATE(cb), RATE(col) / RATE(cb));

	int same = oi.insns == ii.insns && oi.hash == ii.hash && orun.hash == ii.hash &&
	           ocnt.insns == ii.insns && ol.insns == ii.insns && coi.hash == ci.hash &&
	           cor.hash == ci.hash && obh.insns == ii.insns && obh.hash == ii.hash &&
	           obc.insns == ii.insns && cbb.insns == ci.insns && cbb.hash == ci.hash &&
	           cbc.insns == ci.insns && otot.insns == ii.insns && ctot.insns == ci.insns;
	if (ring_sizes(segbuf, seglen)) {
		printf("\nFAIL: tail-first and whole decodes differ\n");
		same = 0;
	}
	int v = varied(top, ptgen);
	if (v < 0)
		printf("\nbench_decode: the varied trace could not be made (%s)\n", ptgen);
	if (v > 0)
		same = 0;
	char vdir[4200];
	snprintf(vdir, sizeof(vdir), "%s/bench/decode-varied", top);
	int tt = timed_table(dir, v < 0 ? NULL : vdir, ptgen, reps);
	if (tt < 0)
		printf("\nbench_decode: the timed traces could not be made (%s)\n", ptgen);
	if (tt > 0)
		same = 0;
	if (real_table(top, argv[0]))
		same = 0;
	ptrec_pt_img_free(our_img);
	pt_image_free(ipt_img);
	pt_iscache_free(isc);
	free(segbuf);
	free(bigbuf);
	unlink(big);
	if (!same) {
		printf("\nFAIL: the instruction sequences differ\n");
		return 1;
	}
	return 0;
}

/* ipt_oracle.c — libipt (Intel's reference decoder) as a test oracle.  Test-only.
 *
 *   ipt_oracle [--elf FILE:BASE]... [--mtc-freq N] TRACE
 *       decodes TRACE with libipt's instruction decoder (pt_insn_*) and prints one line per
 *       instruction, its address as 16 lowercase hex digits, and the events [enabled],
 *       [disabled], [overflow] and [gap: REASON] on their own lines: the format of
 *       `ptrec decode --insn`.  Exit 0 if the whole trace decoded, 1 if there were errors.
 *       With --time each instruction line ends in " @TSC", libipt's time (pt_insn_time).
 *   ipt_oracle --packets TRACE
 *       walks TRACE with libipt's packet decoder (pt_pkt_*) from its first byte, prints the
 *       count of each packet type, and exits 1 at the first byte that is not a valid packet.
 *
 * FILE:BASE places an ELF file's executable PT_LOAD segments so that its lowest PT_LOAD
 * segment starts at BASE (BASE omitted: at the addresses in the file).  The timing
 * configuration matches ptgen's synthetic clock (CPUID.15H ratio 2/1, nominal ratio 20). */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

static unsigned char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "ipt_oracle: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, len = 0;
	unsigned char *buf = malloc(cap);
	for (size_t n; buf && (n = fread(buf + len, 1, cap - len, f)) > 0;) {
		len += n;
		if (len == cap) {
			unsigned char *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	fclose(f);
	if (!buf)
		fprintf(stderr, "ipt_oracle: %s: out of memory\n", path);
	*size = len;
	return buf;
}

/* Adds FILE:BASE's executable segments to image.  Returns 0 or -1 (message printed). */
static int add_elf(struct pt_image *image, const char *arg)
{
	char path[4096];
	uint64_t base = 0;
	int have_base = 0;
	snprintf(path, sizeof(path), "%s", arg);
	char *colon = strrchr(path, ':');
	if (colon) {
		char *end;
		errno = 0;
		unsigned long long b = strtoull(colon + 1, &end, 0);
		if (!errno && colon[1] && !*end) {
			*colon = 0;
			base = b;
			have_base = 1;
		}
	}
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "ipt_oracle: %s: %s\n", path, strerror(errno));
		return -1;
	}
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	if (fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum > 64 || fseek(f, (long)eh.e_phoff, SEEK_SET) != 0 ||
	    fread(ph, sizeof(ph[0]), eh.e_phnum, f) != eh.e_phnum) {
		fprintf(stderr, "ipt_oracle: %s: not a 64-bit ELF file\n", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	uint64_t lo = UINT64_MAX;
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
	uint64_t shift = have_base ? base - lo : 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X) || !ph[i].p_filesz)
			continue;
		int err = pt_image_add_file(image, path, ph[i].p_offset, ph[i].p_filesz, NULL,
		                            ph[i].p_vaddr + shift);
		if (err < 0) {
			fprintf(stderr, "ipt_oracle: %s: %s\n", path, pt_errstr(pt_errcode(err)));
			return -1;
		}
	}
	return 0;
}

static int walk_packets(const char *path, struct pt_config *cfg, size_t size)
{
	static const char *const names[] = {
		[ppt_pad] = "pad", [ppt_psb] = "psb", [ppt_psbend] = "psbend", [ppt_fup] = "fup",
		[ppt_tip] = "tip", [ppt_tip_pge] = "tip.pge", [ppt_tip_pgd] = "tip.pgd",
		[ppt_tnt_8] = "tnt.8", [ppt_tnt_64] = "tnt.64", [ppt_mode] = "mode", [ppt_pip] = "pip",
		[ppt_vmcs] = "vmcs", [ppt_cbr] = "cbr", [ppt_tsc] = "tsc", [ppt_tma] = "tma",
		[ppt_mtc] = "mtc", [ppt_cyc] = "cyc", [ppt_stop] = "stop", [ppt_ovf] = "ovf",
		[ppt_mnt] = "mnt", [ppt_exstop] = "exstop", [ppt_mwait] = "mwait", [ppt_pwre] = "pwre",
		[ppt_pwrx] = "pwrx", [ppt_ptw] = "ptw",
	};
	uint64_t count[sizeof(names) / sizeof(names[0])] = {0};
	struct pt_packet_decoder *dec = pt_pkt_alloc_decoder(cfg);
	if (!dec)
		return 1;
	int rc = 0;
	uint64_t offset = 0;
	int err = pt_pkt_sync_set(dec, 0);
	for (; err >= 0;) {
		struct pt_packet pkt;
		pt_pkt_get_offset(dec, &offset);
		err = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (err < 0)
			break;
		if ((unsigned)pkt.type < sizeof(names) / sizeof(names[0]))
			count[pkt.type]++;
	}
	if (err != -pte_eos || offset > size) {
		fprintf(stderr, "ipt_oracle: %s: offset 0x%" PRIx64 ": %s\n", path, offset,
		        pt_errstr(pt_errcode(err)));
		rc = 1;
	}
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i] && count[i])
			printf("%s %" PRIu64 "\n", names[i], count[i]);
	pt_pkt_free_decoder(dec);
	return rc;
}

/* Prints pending events; returns the decoder status after them. */
static int drain_events(struct pt_insn_decoder *dec, int status)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;
		status = pt_insn_event(dec, &ev, sizeof(ev));
		if (status < 0)
			break;
		switch (ev.type) {
		case ptev_enabled:
			puts("[enabled]");
			break;
		case ptev_disabled:
		case ptev_async_disabled:
			puts("[disabled]");
			break;
		case ptev_overflow:
			puts("[overflow]");
			break;
		default:
			break;
		}
	}
	return status;
}

static int decode_insns(const char *path, struct pt_config *cfg, struct pt_image *image,
                        int with_time)
{
	struct pt_insn_decoder *dec = pt_insn_alloc_decoder(cfg);
	if (!dec || pt_insn_set_image(dec, image) < 0)
		return 1;
	int errors = 0;
	for (;;) {
		int status = pt_insn_sync_forward(dec);
		if (status < 0) {
			if (status != -pte_eos) {
				printf("[gap: %s]\n", pt_errstr(pt_errcode(status)));
				errors++;
			}
			break;
		}
		for (;;) {
			status = drain_events(dec, status);
			if (status < 0)
				break;
			if (status & pts_eos) {
				status = -pte_eos;
				break;
			}
			struct pt_insn insn;
			status = pt_insn_next(dec, &insn, sizeof(insn));
			if (status < 0)
				break;
			uint64_t tsc = 0;
			uint32_t lost_mtc = 0, lost_cyc = 0;
			if (with_time && pt_insn_time(dec, &tsc, &lost_mtc, &lost_cyc) >= 0)
				printf("%016" PRIx64 " @%" PRIu64 "\n", insn.ip, tsc);
			else
				printf("%016" PRIx64 "\n", insn.ip);
		}
		if (status != -pte_eos) {
			uint64_t off = 0;
			pt_insn_get_offset(dec, &off);
			printf("[gap: %s]\n", pt_errstr(pt_errcode(status)));
			fprintf(stderr, "ipt_oracle: %s: offset 0x%" PRIx64 ": %s\n", path, off,
			        pt_errstr(pt_errcode(status)));
			errors++;
		}
	}
	pt_insn_free_decoder(dec);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	struct pt_image *image = pt_image_alloc("ptgen");
	const char *trace = NULL;
	int packets = 0, with_time = 0;
	unsigned mtc_freq = 3;
	if (!image)
		return 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--elf") && i + 1 < argc) {
			if (add_elf(image, argv[++i]) != 0)
				return 2;
		} else if (!strcmp(argv[i], "--mtc-freq") && i + 1 < argc) {
			mtc_freq = (unsigned)strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--packets")) {
			packets = 1;
		} else if (!strcmp(argv[i], "--time")) {
			with_time = 1;
		} else if (argv[i][0] != '-' && !trace) {
			trace = argv[i];
		} else {
			fprintf(stderr, "usage: ipt_oracle [--elf FILE:BASE]... [--mtc-freq N] "
			                "[--time] [--packets] TRACE\n");
			return 2;
		}
	}
	if (!trace) {
		fprintf(stderr, "ipt_oracle: no trace file given\n");
		return 2;
	}
	size_t size;
	unsigned char *buf = read_file(trace, &size);
	if (!buf)
		return 2;
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	cfg.cpuid_0x15_eax = 1;
	cfg.cpuid_0x15_ebx = 2;
	cfg.mtc_freq = (uint8_t)mtc_freq;
	cfg.nom_freq = 20;
	int rc = packets ? walk_packets(trace, &cfg, size) : decode_insns(trace, &cfg, image, with_time);
	fflush(stdout);
	pt_image_free(image);
	free(buf);
	return rc;
}

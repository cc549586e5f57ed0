/* cmd_packets.c — `ptrec packets [--sync] [--lastip] TRACE`: one Intel PT packet per line.
 *
 * Ring-aware: a trace cut from a circular buffer may begin mid-packet and hold never-written
 * zero bytes (PAD).  --sync starts at the first PSB and says how many bytes it skipped.  A byte
 * that is not a packet gets an error line (and a message naming the file and offset on stderr),
 * then a gap line up to the next PSB, where decoding goes on; nothing is skipped silently.  A
 * packet cut off by the end of the trace is reported as truncated, which is not an error.
 * The line format is documented in doc/ptrec-packets.md. */
#include "config.h"

#include <stdio.h>

#include "ptrec.h"
#include "decode/pt_packet.h"
#include "tool/tool.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: ptrec packets [--sync] [--lastip] TRACE\n"
	        "Prints the Intel PT packets of TRACE, one per line: offset (hex), name, payload.\n"
	        "  --sync    start at the first PSB and report the bytes skipped before it\n"
	        "  --lastip  add the full IP of TIP/FUP packets (last-IP decompression) once synced\n"
	        "Exit status: 0 clean, 1 when errors or gaps were reported, 2 bad usage,\n"
	        "3 unreadable file.\n");
}

/* Formats up to 4 bytes at p as hex ("02 99 ff"), with " ..." if more follow. */
static const char *hex_bytes(const uint8_t *p, size_t avail, char buf[24])
{
	size_t n = avail < 4 ? avail : 4, k = 0;

	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(buf + k, 24 - k, "%s%02x", i ? " " : "", p[i]);
	snprintf(buf + k, 24 - k, "%s", avail > 4 ? " ..." : "");
	return buf;
}

/* Skips to the next PSB after an undecodable byte at off.  Prints the gap line and returns the
 * offset to continue at (the trace size when there is no further PSB). */
static size_t gap_to_next_psb(const struct tool_file *f, size_t off)
{
	long psb = ptrec_pt_packet_find_psb(f->data, f->size, off + 1);
	size_t next = psb >= 0 ? (size_t)psb : f->size;

	if (psb >= 0)
		printf("%08zx  [gap] skipped %zu bytes to the psb at 0x%zx\n", off, next - off, next);
	else
		printf("%08zx  [gap] skipped %zu bytes to the end of the trace (no psb)\n", off,
		       next - off);
	return next;
}

int cmd_packets(int argc, char **argv)
{
	int sync = 0, lastip = 0, troubles = 0, synced = 0;
	const char *path = NULL;
	struct tool_file f;
	enum ptrec_pt_packet_ctx ctx = PT_CTX_NONE;
	uint64_t last_ip = 0;
	size_t off = 0;
	static char outbuf[1 << 16];

	enum { OPT_SYNC = 256, OPT_LASTIP };
	static const struct option opts[] = {
		{"sync", no_argument, NULL, OPT_SYNC},
		{"lastip", no_argument, NULL, OPT_LASTIP},
		TOOL_OPT_HELP, TOOL_OPT_LAST,
	};
	struct tool_args a = TOOL_ARGS_INIT(argc, argv, opts, usage);
	for (int o; (o = tool_getopt(&a)) != TOOL_ARGS_END;) {
		switch (o) {
		case TOOL_ARGS_STOP:
			return a.status;
		case OPT_SYNC:
			sync = 1;
			break;
		case OPT_LASTIP:
			lastip = 1;
			break;
		case TOOL_ARGS_OPERAND:
			if (path)
				return tool_usage_error(&a, "one TRACE file only ('%s' and '%s')", path,
				                        a.arg);
			path = a.arg;
		}
	}
	if (!path)
		return tool_no_operand(&a, "TRACE file");
	if (tool_file_read(path, &f) < 0)
		return TOOL_EXIT_INPUT;
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	if (sync) {
		long psb = ptrec_pt_packet_find_psb(f.data, f.size, 0);

		if (psb < 0) {
			printf("%08x  [sync] no psb in %zu bytes\n", 0, f.size);
			fflush(stdout);
			tool_error(path, -1, "no PSB in %zu bytes: nothing to decode", f.size);
			tool_file_free(&f);
			return TOOL_EXIT_GAPS;
		}
		printf("%08x  [sync] skipped %ld bytes to the first psb at 0x%lx\n", 0, psb, psb);
		off = (size_t)psb;
	}

	while (off < f.size) {
		struct ptrec_pt_packet pkt;
		char text[160], hex[24];
		int r = ptrec_pt_packet_decode(f.data + off, f.size - off, &ctx, &pkt);

		if (r == -PTREC_ETRUNC) {
			printf("%08zx  [truncated] %zu bytes at the end of the trace: %s\n", off,
			       f.size - off, hex_bytes(f.data + off, f.size - off, hex));
			break;
		}
		if (r < 0) {
			hex_bytes(f.data + off, f.size - off, hex);
			printf("%08zx  [error] not a packet: %s\n", off, hex);
			fflush(stdout);
			tool_error(path, (long long)off, "not a valid PT packet (%s); "
			           "resynchronising at the next PSB", hex);
			troubles = 1;
			synced = 0;
			ctx = PT_CTX_NONE;
			off = gap_to_next_psb(&f, off);
			continue;
		}
		if (pkt.type == PT_PKT_PAD) {
			size_t run = 1;

			while (off + run < f.size && f.data[off + run] == 0)
				run++;
			if (run > 1)
				printf("%08zx  %-10s %zu bytes\n", off, "pad", run);
			else
				printf("%08zx  pad\n", off);
			off += run;
			continue;
		}
		if (pkt.type == PT_PKT_PSB) {
			synced = 1;
			last_ip = 0; /* the SDM resets the last IP at each PSB */
		}
		ptrec_pt_packet_format(&pkt, text, sizeof(text));
		if (text[0])
			printf("%08zx  %-10s %s", off, ptrec_pt_packet_name(&pkt), text);
		else
			printf("%08zx  %s", off, ptrec_pt_packet_name(&pkt));
		if (lastip && synced && (pkt.type == PT_PKT_TIP || pkt.type == PT_PKT_TIP_PGE ||
		                         pkt.type == PT_PKT_TIP_PGD || pkt.type == PT_PKT_FUP)) {
			uint64_t ip;

			if (ptrec_pt_last_ip_update(&last_ip, &pkt, &ip) == 0)
				printf(" (ip 0x%016llx)", (unsigned long long)ip);
		}
		printf("\n");
		off += (size_t)r;
	}

	fflush(stdout);
	tool_file_free(&f);
	if (ferror(stdout)) {
		tool_error(NULL, -1, "packets: write error on standard output");
		return TOOL_EXIT_GAPS;
	}
	return troubles ? TOOL_EXIT_GAPS : TOOL_EXIT_OK;
}

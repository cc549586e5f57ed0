/* test_pt_vectors.c — the 120 single-packet vectors of Linux perf's Intel PT packet decoder test
 * (tests/data/perf_pkt_vectors.txt), checked against ptrec_pt_packet_decode().
 *
 * Every vector gives bytes, the block context going in, and perf's expected type, length, count,
 * payload and context coming out.  perf's packet struct is not ours, so each expectation is
 * mapped onto our fields (the mapping is the table in check_vector() below):
 *
 *   perf TYPE            ours                       perf COUNT -> ours    perf PAYLOAD -> ours
 *   TNT                  TNT                        tnt_count             bits left-aligned at bit 63,
 *                                                                          oldest first: ours =
 *                                                                          perf >> (64 - count)
 *   TIP/TIP_PGE/PGD/FUP  same                       ipbytes               payload (raw IP bytes)
 *   MODE_EXEC            MODE_EXEC                  sub (CS.L|CS.D|IF)    address size 16/32/64 from
 *                                                                          sub's CS.L / CS.D bits
 *   MODE_TSX             MODE_TSX                   -                     sub (InTX|TXAbort)
 *   PIP                  PIP                        -                     raw (NR | CR3>>5<<1):
 *                                                                          payload = CR3 = raw>>1<<5,
 *                                                                          payload2 = NR = raw & 1
 *   VMCS                 VMCS                       (5 = perf's length)   payload = perf << 12
 *   TMA                  TMA                        payload2 (FastCounter) payload (CTC)
 *   PTWRITE[_IP]         PTW, ip_bit 0/1            sub = count ? 8 : 4    payload
 *   EXSTOP[_IP]          EXSTOP, ip_bit 0/1         -                     -
 *   BEP[_IP]             BEP, ip_bit 0/1            -                     -
 *   CFE[_IP]             CFE, ip_bit 0/1            sub (type)            payload (vector)
 *   EVD                  EVD                        sub (type)            payload
 *   BBP                  BBP                        sub bit 7 (SZ)        sub bits 4:0 (type)
 *   BIP                  BIP                        sub (ID)              payload
 *   MWAIT                MWAIT                      -                     payload (raw 8 bytes), and
 *                                                                          sub = hints = bits 7:0,
 *                                                                          payload2 = EXT = bits 33:32
 *   others               same name                  -                     payload
 *
 * Contexts: NO_CTX/BLK_4/BLK_8 are PT_CTX_NONE/BLK4/BLK8.  The context after the packet must equal
 * NEWCTX; a vector with UNCH = 1 must additionally leave each of the three contexts unchanged.
 * The file's LEN is both the bytes given and the size expected back. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ptrec.h"
#include "decode/pt_packet.h"

#define VECTORS_EXPECTED 120

struct vector {
	int line;              /* line in the file */
	unsigned len;          /* LEN */
	enum ptrec_pt_packet_ctx ctx; /* CTX */
	uint8_t bytes[32];     /* BYTES, zero-filled to len */
	char type[32];         /* perf TYPE */
	unsigned long long count;   /* perf COUNT */
	unsigned long long payload; /* perf PAYLOAD */
	enum ptrec_pt_packet_ctx newctx;  /* NEWCTX */
	int unch;              /* UNCH */
};

static int parse_ctx(const char *s, enum ptrec_pt_packet_ctx *ctx)
{
	if (!strcmp(s, "NO_CTX"))
		*ctx = PT_CTX_NONE;
	else if (!strcmp(s, "BLK_4"))
		*ctx = PT_CTX_BLK4;
	else if (!strcmp(s, "BLK_8"))
		*ctx = PT_CTX_BLK8;
	else
		return -1;
	return 0;
}

static int is_byte_token(const char *s)
{
	return strlen(s) == 2 && strchr("0123456789abcdefABCDEF", s[0]) &&
	       strchr("0123456789abcdefABCDEF", s[1]);
}

/* Parses one data line; returns 0, or -1 with a message for a malformed line. */
static int parse_line(char *line, int lineno, struct vector *v)
{
	char *tok[64];
	int n = 0, i;
	char *hash = strchr(line, '#');

	if (hash)
		*hash = '\0';
	for (char *save = NULL, *t = strtok_r(line, " \t\r\n", &save); t && n < 64;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;
	if (n == 0)
		return 1; /* blank */
	memset(v, 0, sizeof(*v));
	v->line = lineno;
	if (n < 7)
		goto bad;
	v->len = (unsigned)strtoul(tok[0], NULL, 10);
	if (v->len == 0 || v->len > sizeof(v->bytes) || parse_ctx(tok[1], &v->ctx))
		goto bad;
	for (i = 2; i < n && is_byte_token(tok[i]); i++) {
		if ((unsigned)(i - 2) >= v->len)
			goto bad;
		v->bytes[i - 2] = (uint8_t)strtoul(tok[i], NULL, 16);
	}
	if ((unsigned)(i - 2) != v->len || n - i != 5)
		goto bad;
	snprintf(v->type, sizeof(v->type), "%s", tok[i]);
	v->count = strtoull(tok[i + 1], NULL, 0);
	v->payload = strtoull(tok[i + 2], NULL, 16);
	if (parse_ctx(tok[i + 3], &v->newctx))
		goto bad;
	v->unch = atoi(tok[i + 4]);
	return 0;
bad:
	fprintf(stderr, "perf_pkt_vectors.txt:%d: malformed vector line\n", lineno);
	return -1;
}

/* perf type name -> our type and IP bit. */
static int map_type(const char *t, int *type, int *ip)
{
	static const struct { const char *perf; int type; int ip; } map[] = {
		{"PAD", PT_PKT_PAD, 0}, {"TNT", PT_PKT_TNT, 0}, {"TIP", PT_PKT_TIP, 0},
		{"TIP_PGE", PT_PKT_TIP_PGE, 0}, {"TIP_PGD", PT_PKT_TIP_PGD, 0}, {"FUP", PT_PKT_FUP, 0},
		{"PIP", PT_PKT_PIP, 0}, {"MODE_EXEC", PT_PKT_MODE_EXEC, 0},
		{"MODE_TSX", PT_PKT_MODE_TSX, 0}, {"TRACESTOP", PT_PKT_TRACESTOP, 0},
		{"CBR", PT_PKT_CBR, 0}, {"TSC", PT_PKT_TSC, 0}, {"MTC", PT_PKT_MTC, 0},
		{"TMA", PT_PKT_TMA, 0}, {"CYC", PT_PKT_CYC, 0}, {"VMCS", PT_PKT_VMCS, 0},
		{"OVF", PT_PKT_OVF, 0}, {"PSB", PT_PKT_PSB, 0}, {"PSBEND", PT_PKT_PSBEND, 0},
		{"MNT", PT_PKT_MNT, 0}, {"PTWRITE", PT_PKT_PTW, 0}, {"PTWRITE_IP", PT_PKT_PTW, 1},
		{"EXSTOP", PT_PKT_EXSTOP, 0}, {"EXSTOP_IP", PT_PKT_EXSTOP, 1},
		{"MWAIT", PT_PKT_MWAIT, 0}, {"PWRE", PT_PKT_PWRE, 0}, {"PWRX", PT_PKT_PWRX, 0},
		{"BBP", PT_PKT_BBP, 0}, {"BIP", PT_PKT_BIP, 0}, {"BEP", PT_PKT_BEP, 0},
		{"BEP_IP", PT_PKT_BEP, 1}, {"CFE", PT_PKT_CFE, 0}, {"CFE_IP", PT_PKT_CFE, 1},
		{"EVD", PT_PKT_EVD, 0},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].perf, t)) {
			*type = map[i].type;
			*ip = map[i].ip;
			return 0;
		}
	return -1;
}

static int failures_before;

/* Reports which vector a failing check belongs to. */
static void note_vector(const struct vector *v)
{
	if (check_failures != failures_before) {
		fprintf(stderr, "  ^ vector at perf_pkt_vectors.txt:%d (%s)\n", v->line, v->type);
		failures_before = check_failures;
	}
}

static void check_vector(const struct vector *v)
{
	struct ptrec_pt_packet pkt;
	enum ptrec_pt_packet_ctx ctx = v->ctx;
	int type = -1, ip = 0, ret;
	unsigned long long c = v->count, p = v->payload;

	CHECK(map_type(v->type, &type, &ip) == 0);
	ret = ptrec_pt_packet_decode(v->bytes, v->len, &ctx, &pkt);
	CHECK_EQ_U64(ret, v->len);
	CHECK_EQ_U64(pkt.size, v->len);
	CHECK_EQ_U64(pkt.type, type);
	CHECK_EQ_U64(ctx, v->newctx);

	switch (type) {
	case PT_PKT_TNT:
		CHECK_EQ_U64(pkt.tnt_count, c);
		CHECK(c >= 1 && c <= 47);
		CHECK_EQ_U64(pkt.payload, p >> (64 - c));
		break;
	case PT_PKT_TIP: case PT_PKT_TIP_PGE: case PT_PKT_TIP_PGD: case PT_PKT_FUP:
		CHECK_EQ_U64(pkt.ipbytes, c);
		CHECK_EQ_U64(pkt.payload, p);
		break;
	case PT_PKT_MODE_EXEC:
		CHECK_EQ_U64(pkt.sub, c);
		CHECK_EQ_U64((pkt.sub & 1) ? 64 : (pkt.sub & 2) ? 32 : 16, p);
		break;
	case PT_PKT_MODE_TSX:
		CHECK_EQ_U64(pkt.sub, p);
		break;
	case PT_PKT_PIP:
		CHECK_EQ_U64(pkt.payload, (p >> 1) << 5);
		CHECK_EQ_U64(pkt.payload2, p & 1);
		break;
	case PT_PKT_VMCS:
		CHECK_EQ_U64(pkt.payload, p << 12);
		break;
	case PT_PKT_TMA:
		CHECK_EQ_U64(pkt.payload2, c);
		CHECK_EQ_U64(pkt.payload, p);
		break;
	case PT_PKT_PTW:
		CHECK_EQ_U64(pkt.sub, c ? 8 : 4);
		CHECK_EQ_U64(pkt.payload, p);
		break;
	case PT_PKT_CFE:
	case PT_PKT_EVD:
	case PT_PKT_BIP:
		CHECK_EQ_U64(pkt.sub, c);
		CHECK_EQ_U64(pkt.payload, p);
		break;
	case PT_PKT_BBP:
		CHECK_EQ_U64(pkt.sub >> 7, c);
		CHECK_EQ_U64(pkt.sub & 0x1f, p);
		break;
	case PT_PKT_MWAIT:
		CHECK_EQ_U64(pkt.payload, p);
		CHECK_EQ_U64(pkt.sub, p & 0xff);
		CHECK_EQ_U64(pkt.payload2, (p >> 32) & 3);
		break;
	case PT_PKT_EXSTOP: case PT_PKT_BEP: case PT_PKT_PAD: case PT_PKT_PSB:
	case PT_PKT_PSBEND: case PT_PKT_OVF: case PT_PKT_TRACESTOP:
		CHECK_EQ_U64(pkt.payload, 0);
		CHECK_EQ_U64(p, 0);
		break;
	default: /* CBR, TSC, MTC, CYC, MNT, PWRE, PWRX */
		CHECK_EQ_U64(pkt.payload, p);
		break;
	}
	CHECK_EQ_U64(pkt.ip_bit, ip);

	if (v->unch) {
		static const enum ptrec_pt_packet_ctx all[] = {PT_CTX_NONE, PT_CTX_BLK4, PT_CTX_BLK8};
		for (size_t i = 0; i < 3; i++) {
			struct ptrec_pt_packet again;
			ctx = all[i];
			CHECK_EQ_U64(ptrec_pt_packet_decode(v->bytes, v->len, &ctx, &again), v->len);
			CHECK_EQ_U64(again.type, type);
			CHECK_EQ_U64(ctx, all[i]);
		}
	}
	note_vector(v);
}

int main(void)
{
	const char *srcdir = getenv("top_srcdir");
	char path[4096], line[512];
	FILE *f;
	int lineno = 0, checked = 0;

	snprintf(path, sizeof(path), "%s/tests/data/perf_pkt_vectors.txt", srcdir ? srcdir : ".");
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct vector v;
		int r;

		lineno++;
		if (line[0] == '#')
			continue;
		r = parse_line(line, lineno, &v);
		if (r > 0)
			continue;
		CHECK(r == 0);
		if (r < 0)
			continue;
		check_vector(&v);
		checked++;
	}
	fclose(f);
	printf("%d perf packet vectors checked\n", checked);
	CHECK_EQ_U64(checked, VECTORS_EXPECTED);
	return check_done();
}

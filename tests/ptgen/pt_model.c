/* pt_model.c — the processor model that turns an execution log into PT (see pt_model.h). */
#include "pt_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "insn_class.h"

#define RS_DEPTH 64    /* the processor's call stack for return compression */
#define DEFER_MAX 64   /* deferred TIPs held at most (then the TNT is forced out) */

struct model {
	const struct pm_config *cfg; /* settings */
	struct pe_buf *out;          /* output */
	struct pm_stats *st;         /* counters */
	int enabled;                 /* PacketEn */
	uint64_t tnt_bits;           /* pending TNT bits, newest in bit 0 */
	unsigned tnt_n;              /* number of pending TNT bits */
	int64_t tnt_seen;            /* TNT bits generated so far (for corrupt_tnt) */
	uint64_t last_ip;            /* IP compression reference */
	uint64_t rs[RS_DEPTH];       /* call stack ring: return addresses */
	unsigned rs_top;             /* index of the next free slot */
	unsigned rs_n;               /* entries held (<= RS_DEPTH) */
	size_t psb_at;               /* output offset of the last PSB */
	int mode_sent;               /* MODE.Exec sent since the last PSB */
	uint64_t cycles;             /* core cycles so far */
	uint64_t cyc_sent;           /* cycles at the last CYC */
	uint64_t rng;                /* PM_IP_MIX state */
	uint64_t deferred[DEFER_MAX]; /* targets of TIPs deferred behind the partial TNT */
	unsigned n_deferred;         /* deferred TIPs held */
	int dropping;                /* inside an overflow: packets are generated but lost */
	size_t drop_mark;            /* output length when the overflow began */
};

static const uint64_t tsc_start = 0x1000000000ull; /* TSC when the trace starts */

static uint64_t now_tsc(const struct model *m)
{
	return tsc_start + m->cycles;
}

static uint64_t now_ctc(const struct model *m)
{
	return now_tsc(m) / PM_TSC_PER_CTC;
}

static void cyc(struct model *m)
{
	if (!(m->cfg->timing & PM_T_CYC) || m->cycles == m->cyc_sent)
		return;
	pe_cyc(m->out, m->cycles - m->cyc_sent);
	m->cyc_sent = m->cycles;
	m->st->timing++;
}

static uint64_t next_rand(struct model *m)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return m->rng;
}

static enum pe_ipbytes choose_ipbytes(struct model *m, uint64_t ip)
{
	uint64_t diff = ip ^ m->last_ip;
	int sext_ok = (uint64_t)((int64_t)(ip << 16) >> 16) == ip;
	enum pe_ipbytes valid[5];
	unsigned n = 0;
	if (!(diff >> 16))
		valid[n++] = PE_IP_UPD16;
	if (!(diff >> 32))
		valid[n++] = PE_IP_UPD32;
	if (sext_ok)
		valid[n++] = PE_IP_SEXT48;
	if (!(diff >> 48))
		valid[n++] = PE_IP_UPD48;
	valid[n++] = PE_IP_FULL;
	switch (m->cfg->ipcomp) {
	case PM_IP_MIN:
		return valid[0];
	case PM_IP_SEXT:
		return sext_ok ? PE_IP_SEXT48 : PE_IP_FULL;
	case PM_IP_FULL:
		return PE_IP_FULL;
	case PM_IP_MIX:
	default:
		return valid[next_rand(m) % n];
	}
}

static void ip_packet(struct model *m, enum pe_ip_type type, uint64_t ip)
{
	enum pe_ipbytes ipb = choose_ipbytes(m, ip);
	pe_ip(m->out, type, ipb, ip);
	m->last_ip = ip;
}

/* Sends the pending TNT, then the TIPs deferred behind it (SDM "Deferred TIPs"). */
static void flush_tnt(struct model *m)
{
	if (!m->tnt_n)
		return;
	cyc(m);
	if (m->tnt_n <= 6)
		pe_tnt_short(m->out, m->tnt_bits, m->tnt_n);
	else
		pe_tnt_long(m->out, m->tnt_bits, m->tnt_n);
	m->st->tnt_packets++;
	m->tnt_bits = 0;
	m->tnt_n = 0;
	for (unsigned i = 0; i < m->n_deferred; i++) {
		ip_packet(m, PE_TIP, m->deferred[i]);
		m->st->tip++;
	}
	m->n_deferred = 0;
}

static void tnt_add(struct model *m, int taken)
{
	if (m->tnt_seen++ == m->cfg->corrupt_tnt)
		taken = !taken;
	m->tnt_bits = m->tnt_bits << 1 | (taken ? 1u : 0u);
	m->tnt_n++;
	m->st->tnt_bits++;
	if (m->tnt_n == m->cfg->tnt_max)
		flush_tnt(m);
}

/* TIP, TIP.PGE, or FUP with an IP (pending TNT goes first).  With defer_tip, a TIP while a
 * partial TNT is pending waits behind it instead, and goes out when the TNT does. */
static void tip(struct model *m, enum pe_ip_type type, uint64_t ip)
{
	if (type == PE_TIP && m->cfg->defer_tip && m->tnt_n && m->n_deferred < DEFER_MAX) {
		m->deferred[m->n_deferred++] = ip;
		return;
	}
	flush_tnt(m);
	cyc(m);
	ip_packet(m, type, ip);
	if (type == PE_TIP)
		m->st->tip++;
	else if (type == PE_TIP_PGE)
		m->st->pge++;
	else if (type == PE_FUP)
		m->st->fup++;
}

static void disable(struct model *m)
{
	flush_tnt(m);
	cyc(m);
	pe_ip(m->out, PE_TIP_PGD, PE_IP_SUPPRESSED, 0);
	m->st->pgd++;
	m->enabled = 0;
}

/* PSB+ at the boundary before the instruction at ip (ip unused while disabled). */
static void psb_plus(struct model *m, uint64_t ip)
{
	flush_tnt(m);
	m->psb_at = m->out->len;
	pe_psb(m->out);
	m->st->psb++;
	m->last_ip = 0;
	m->rs_n = 0;
	m->mode_sent = 0;
	unsigned t = m->cfg->timing;
	if (t & (PM_T_TSC | PM_T_MTC)) {
		pe_tsc(m->out, now_tsc(m));
		m->st->timing++;
	}
	if (t & PM_T_MTC) {
		pe_tma(m->out, (uint16_t)now_ctc(m), (uint16_t)(now_tsc(m) % PM_TSC_PER_CTC));
		m->st->timing++;
	}
	if (t & PM_T_CBR) {
		pe_cbr(m->out, PM_CBR);
		m->st->timing++;
	}
	if (m->enabled) {
		pe_mode_exec(m->out, 1, 0, 0);
		m->mode_sent = 1;
		ip_packet(m, PE_FUP, ip);
		m->st->fup++;
	}
	pe_psbend(m->out);
}

static void rs_push(struct model *m, uint64_t ret)
{
	m->rs[m->rs_top] = ret;
	m->rs_top = (m->rs_top + 1) % RS_DEPTH;
	if (m->rs_n < RS_DEPTH)
		m->rs_n++;
}

/* Pops the top if it equals target; returns whether it did. */
static int rs_match_pop(struct model *m, uint64_t target)
{
	if (!m->rs_n)
		return 0;
	unsigned top = (m->rs_top + RS_DEPTH - 1) % RS_DEPTH;
	if (m->rs[top] != target)
		return 0;
	m->rs_top = top;
	m->rs_n--;
	return 1;
}

static void advance_time(struct model *m, uint64_t ip)
{
	uint64_t ctc_before = now_ctc(m);
	m->cycles += 1 + ip % 3;
	if ((m->cfg->timing & PM_T_MTC) &&
	    (now_ctc(m) >> m->cfg->mtc_freq) != (ctc_before >> m->cfg->mtc_freq)) {
		cyc(m);
		pe_mtc(m->out, (uint8_t)(now_ctc(m) >> m->cfg->mtc_freq));
		m->st->timing++;
	}
}

static int encode_insn(struct model *m, const struct xl_rec *r)
{
	if (!m->enabled) {
		cyc(m);
		if (!m->mode_sent) {
			pe_mode_exec(m->out, 1, 0, 0);
			m->mode_sent = 1;
		}
		m->enabled = 1;
		tip(m, PE_TIP_PGE, r->ip);
	} else if (m->cfg->psb_period && !m->dropping &&
	           m->out->len - m->psb_at >= m->cfg->psb_period) {
		psb_plus(m, r->ip);
	}
	advance_time(m, r->ip);
	m->st->insns++;
	uint64_t fall = r->ip + r->len;
	switch (r->kind) {
	case IC_OTHER:
	case IC_JMP:
		break;
	case IC_JCC:
		tnt_add(m, r->next != fall);
		break;
	case IC_CALL:
		if (!(r->flags & XL_F_ZERO_CALL))
			rs_push(m, fall);
		break;
	case IC_CALL_IND:
		rs_push(m, fall);
		tip(m, PE_TIP, r->next);
		break;
	case IC_JMP_IND:
		tip(m, PE_TIP, r->next);
		break;
	case IC_RET:
		if (m->cfg->retcomp && rs_match_pop(m, r->next)) {
			m->st->ret_comp++;
			tnt_add(m, 1);
		} else {
			/* Never behind a partial TNT: a decoder takes a RET with TNT bits at hand
			 * for a compressed one (SDM: for an uncompressed RET "there will be no
			 * in-progress TNT and thus a TIP should be consumed"). */
			m->rs_n = 0;
			flush_tnt(m);
			tip(m, PE_TIP, r->next);
		}
		break;
	case IC_SYSCALL:
	case IC_FAR:
		disable(m);
		break;
	default:
		fprintf(stderr, "ptgen: log record at 0x%" PRIx64 " has unknown kind %u\n", r->ip,
		        r->kind);
		return -1;
	}
	return 0;
}

/* The internal buffer overflows before the next instruction: what is pending goes out, then
 * every packet until overflow_end is lost. */
static void overflow_begin(struct model *m)
{
	flush_tnt(m);
	m->dropping = 1;
	m->drop_mark = m->out->len;
}

/* The overflow resolves before the instruction at ip: OVF, then FUP(ip) with the full IP if
 * packet generation is on (else the next TIP.PGE resumes).  The lost packets' state (TNT bits,
 * deferred TIPs, the call stack) is gone. */
static void overflow_end(struct model *m, uint64_t ip)
{
	m->out->len = m->drop_mark;
	m->dropping = 0;
	m->tnt_bits = 0;
	m->tnt_n = 0;
	m->n_deferred = 0;
	m->rs_n = 0;
	pe_ovf(m->out);
	m->st->ovf++;
	if (m->enabled) {
		pe_ip(m->out, PE_FUP, PE_IP_FULL, ip);
		m->last_ip = ip;
		m->st->fup++;
	}
}

void pm_config_default(struct pm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->psb_period = 4096;
	cfg->retcomp = 1;
	cfg->tnt_max = 47;
	cfg->ipcomp = PM_IP_MIN;
	cfg->timing = 0;
	cfg->mtc_freq = 3;
	cfg->repeat = 1;
	cfg->seed = 1;
	cfg->corrupt_tnt = -1;
	cfg->ovf_at = -1;
}

int pm_encode(const struct xl_log *log, const struct pm_config *cfg, struct pe_buf *out,
              struct pm_stats *st)
{
	struct model m;
	memset(&m, 0, sizeof(m));
	memset(st, 0, sizeof(*st));
	m.cfg = cfg;
	m.out = out;
	m.st = st;
	m.rng = cfg->seed ? cfg->seed : 1;
	st->tsc_first = now_tsc(&m);
	if (cfg->tnt_max < 1 || cfg->tnt_max > 47 || cfg->mtc_freq > 15) {
		fprintf(stderr, "ptgen: bad encoder settings (tnt %u, mtc_freq %u)\n", cfg->tnt_max,
		        cfg->mtc_freq);
		return -1;
	}
	for (unsigned rep = 0; rep < (cfg->repeat ? cfg->repeat : 1); rep++) {
		if (m.enabled)
			disable(&m);
		psb_plus(&m, 0);
		int64_t k = 0; /* instruction index */
		for (size_t i = 0; i < log->count; i++) {
			const struct xl_rec *r = &log->recs[i];
			switch (r->type) {
			case XL_INSN:
				if (rep == 0 && k == cfg->ovf_at)
					overflow_begin(&m);
				if (m.dropping && k == cfg->ovf_at + (int64_t)cfg->ovf_len)
					overflow_end(&m, r->ip);
				k++;
				if (encode_insn(&m, r) != 0)
					return -1;
				break;
			case XL_ASYNC:
			case XL_STOP:
				/* A signal or fault (or the end of recording, like a WRMSR turning
				 * tracing off) in user mode: FUP(ip) + TIP.PGD. */
				if (m.enabled) {
					tip(&m, PE_FUP, r->ip);
					disable(&m);
				}
				break;
			default:
				fprintf(stderr, "ptgen: log record %zu has unknown type %u\n", i, r->type);
				return -1;
			}
			if (m.dropping)
				out->len = m.drop_mark;
		}
		flush_tnt(&m);
		if (m.dropping)
			out->len = m.drop_mark;
		m.dropping = 0;
	}
	st->tsc_last = now_tsc(&m);
	if (out->failed) {
		fprintf(stderr, "ptgen: out of memory\n");
		return -1;
	}
	return 0;
}

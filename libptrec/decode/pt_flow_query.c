/* pt_flow_query.c — the PT flow decoder's event/query state (pt_flow_query.h): the packet cursor
 * and its look-ahead item, the status packets and the items they queue or hold, PSB+, the sync
 * points where segments stop. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "decode/pt_flow_query.h"

static uint8_t exec_mode(uint32_t sub)
{
	if (sub & 1)
		return X86_MODE_64;
	return (sub & 2) ? X86_MODE_32 : X86_MODE_16;
}

static void set_err(struct ptrec_pt_flow *f, uint64_t off, int err, const char *why)
{
	f->nx.kind = NX_ERR;
	f->nx.err = err;
	f->nx.why = why;
	f->nx.off = off;
}

/* Reads one packet at pos, after passing over the PADs there (pos moves past them: a PAD says
 * nothing, and real traces pad between packets, a third of a trace's bytes may be PAD; the
 * packet's offset is pos afterwards).  Returns its size, 0 at the end of the trace (a partial
 * packet at the very end counts as the end), or a negative error.  Never returns a PAD. */
static int read_pkt(struct ptrec_pt_flow *f, struct ptrec_pt_packet *pkt)
{
	size_t p = f->pos;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (f->len - p >= 8) { /* eight at a time: the first non-zero byte ends the run */
		uint64_t w;
		memcpy(&w, f->buf + p, 8);
		if (w) {
			p += (unsigned)__builtin_ctzll(w) / 8;
			break;
		}
		p += 8;
	}
#endif
	while (p < f->len && !f->buf[p])
		p++;
	f->pos = p;
	if (p >= f->len)
		return 0;
	int n = ptrec_pt_packet_decode(f->buf + p, f->len - p, &f->ctx, pkt);
	if (n == -PTREC_ETRUNC)
		return 0;
	if (n <= 0)
		return n < 0 ? n : -PTREC_EFORMAT;
	/* SKD007: an OVF may replace the bytes after the first of a multi-byte CYC. */
	if (pkt->type == PT_PKT_CYC && n >= 2 && (f->errata & PT_ERRATUM_SKD007) &&
	    p + 2 < f->len && f->buf[p + 1] == 0x02 && f->buf[p + 2] == 0xf3)
		return 1;
	return n;
}

/* Queues an auxiliary item for delivery (dropped when the queue is full). */
void pt_flow_aux_push(struct ptrec_pt_flow *f, unsigned kind, uint64_t payload, uint64_t arg,
                     uint64_t ip)
{
	if (f->aux_n >= AUX_QUEUE)
		return;
	struct aux_item *a = &f->aux[(f->aux_head + f->aux_n) % AUX_QUEUE];
	a->kind = (uint8_t)kind;
	a->payload = payload;
	a->arg = arg;
	a->ip = ip;
	f->aux_n++;
}

/* Holds an item until its FUP (fup) or its branch (br). */
static void aux_hold(struct aux_item *held, unsigned *n, unsigned kind, uint64_t payload,
                     uint64_t arg)
{
	if (*n >= AUX_HELD)
		return;
	held[*n] = (struct aux_item){(uint8_t)kind, payload, arg, 0};
	(*n)++;
}

/* A PWRE read while an MWAIT or EXSTOP waited for its FUP is the C-state entry of that
 * MWAIT: it comes after them (once execution stopped there), or, when an OVF lost their FUP,
 * where the OVF is.  Empties the held items. */
static void release_held_pwre(struct ptrec_pt_flow *f)
{
	for (unsigned i = 0; i < f->fup_held_n; i++) {
		const struct aux_item *a = &f->fup_held[i];
		if (a->kind == PT_FLOW_AUX_PWRE)
			pt_flow_aux_push(f, a->kind, a->payload, a->arg, 0);
	}
	f->fup_held_n = 0;
}

/* An OVF lost the FUP the held items waited for: a PWRE is reported, then an MWAIT and an
 * EXSTOP without IP (they did happen; only where is lost); the others are dropped. */
static void release_held_lost_fup(struct ptrec_pt_flow *f)
{
	unsigned n = f->fup_held_n;
	release_held_pwre(f);
	for (unsigned i = 0; i < n; i++) {
		const struct aux_item *a = &f->fup_held[i];
		if (a->kind == PT_FLOW_AUX_MWAIT || a->kind == PT_FLOW_AUX_EXSTOP)
			pt_flow_aux_push(f, a->kind, a->payload, a->arg, 0);
	}
}

/* The FUP the held items waited for came: they happen at ip, before the instruction there.
 * A MODE.TSX begin or commit changes whether what follows is speculative. */
void pt_flow_release_fup_held(struct ptrec_pt_flow *f, uint64_t ip)
{
	for (unsigned i = 0; i < f->fup_held_n; i++) {
		const struct aux_item *a = &f->fup_held[i];
		if (a->kind == PT_FLOW_AUX_TSX)
			f->spec = (uint8_t)a->payload;
		if (a->kind == PT_FLOW_AUX_EXEC_MODE) {
			f->mode = (uint8_t)a->payload;
			f->mode_known = 1;
		}
		if (a->kind != PT_FLOW_AUX_PWRE)
			pt_flow_aux_push(f, a->kind, a->payload, a->arg, ip);
	}
	release_held_pwre(f);
}

/* CFE items hold CFE_WAIT_FUP in arg until the FUP their IP bit announces comes. */
#define CFE_WAIT_FUP 0x100u

const char pt_flow_why_evd[] = "unexpected packet context: EVD not of this event";

/* The CFE/EVD items held (event trace) happen now, before what else is bound to the branch or
 * event at hand: they are queued, those without an IP get ip.  Returns 1 if there were any. */
int pt_flow_release_cfe(struct ptrec_pt_flow *f, uint64_t ip)
{
	unsigned k = 0, n = f->br_held_n;
	for (unsigned i = 0; i < n; i++) {
		const struct aux_item *a = &f->br_held[i];
		if (a->kind == PT_FLOW_AUX_CFE || a->kind == PT_FLOW_AUX_EVD)
			pt_flow_aux_push(f, a->kind, a->payload,
			                 a->kind == PT_FLOW_AUX_CFE ? a->arg & 0xff : a->arg,
			                 a->ip ? a->ip : ip);
		else
			f->br_held[k++] = *a;
	}
	f->br_held_n = k;
	return k < n;
}

/* The FUP that a CFE with IP=1 announced: the IP of the event (of the IRET, VMRESUME, ...
 * that the branch after it takes). */
static void cfe_fup(struct ptrec_pt_flow *f, uint64_t ip)
{
	for (unsigned i = 0; i < f->br_held_n; i++) {
		struct aux_item *a = &f->br_held[i];
		if (a->kind == PT_FLOW_AUX_CFE && (a->arg & CFE_WAIT_FUP)) {
			a->arg &= ~(uint64_t)CFE_WAIT_FUP;
			a->ip = ip;
		}
	}
	if (f->state != ST_ENABLED) /* tracing off (BranchEn=0, or out of context): now */
		pt_flow_release_cfe(f, 0);
}

/* EVD: data for the CFE that follows.  SDM (Event Trace): "Page faults additionally include
 * the page fault address, when in context" and "VM exits include the values written to the
 * 'exit reason' and 'exit qualification' VMCS fields": a CR2 goes with a fault alone, an
 * exit qualification and reason with a VM exit, each once.  Any other combination is an
 * error where it shows (libipt reports it there too).  Types the SDM does not define are
 * ignored (data this decoder cannot use).  f->pos is at pkt. */
static void evd_read(struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt)
{
	unsigned t = pkt->sub, bit = 1u << (t & 7), have = f->evd_pending;
	if (t > PT_EVD_VMXR)
		return;
	if ((have & bit) || (t == PT_EVD_CR2 ? have : (have & (1u << PT_EVD_CR2)))) {
		set_err(f, f->pos, -PTREC_ESTATE, pt_flow_why_evd);
		return;
	}
	f->evd_pending = (uint8_t)(have | bit);
	aux_hold(f->br_held, &f->br_held_n, PT_FLOW_AUX_EVD, pkt->payload, t);
}

/* CFE: the compound event it starts (see pt_flow.h, "Event trace").  While tracing it waits
 * for the FUP pair or the branch it binds to (with the PIP/VMCS held there); while tracing is
 * off it happens now.  f->pos is at pkt. */
static void cfe_read(struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt)
{
	unsigned t = pkt->sub, have = f->evd_pending;
	f->evd_pending = 0;
	if (have && !(have == 1u << PT_EVD_CR2 ? t == PT_CFE_INTR
	                                       : t == PT_CFE_VMEXIT || t == PT_CFE_VMEXIT_INTR)) {
		set_err(f, f->pos, -PTREC_ESTATE, pt_flow_why_evd);
		return;
	}
	if (ptrec_pt_cfe_name(t)) {
		uint64_t vec = ptrec_pt_cfe_has_vector(t) ? pkt->payload & 0xff : 0;
		aux_hold(f->br_held, &f->br_held_n, PT_FLOW_AUX_CFE, t,
		         vec | (pkt->ip_bit ? CFE_WAIT_FUP : 0));
	}
	if (f->state != ST_ENABLED && !pkt->ip_bit)
		pt_flow_release_cfe(f, 0);
}

/* The branch the held PIP/VMCS belonged to was delivered (async: an interrupt or an
 * asynchronous disable, which report the VMCS first).  The CFE/EVD items held come first:
 * they say what the branch was. */
void pt_flow_release_br_held(struct ptrec_pt_flow *f, int async)
{
	pt_flow_release_cfe(f, 0);
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < f->br_held_n; i++) {
			const struct aux_item *a = &f->br_held[i];
			if (async && (pass == 0) != (a->kind == PT_FLOW_AUX_VMCS))
				continue;
			if (!async && pass == 1)
				continue;
			pt_flow_aux_push(f, a->kind, a->payload, a->arg, 0);
		}
	f->br_held_n = 0;
}

/* A MOV CR3 executed: the oldest PIP waiting for its instruction belongs to it. */
void pt_flow_release_one_pip(struct ptrec_pt_flow *f)
{
	for (unsigned i = 0; i < f->br_held_n; i++) {
		const struct aux_item *a = &f->br_held[i];
		if (a->kind != PT_FLOW_AUX_PAGING)
			continue;
		pt_flow_aux_push(f, a->kind, a->payload, a->arg, 0);
		memmove(&f->br_held[i], &f->br_held[i + 1], (f->br_held_n - i - 1) * sizeof(*a));
		f->br_held_n--;
		return;
	}
}

/* A MODE.Exec outside PSB+ took effect at the branch or enable just delivered. */
void pt_flow_apply_mode(struct ptrec_pt_flow *f, const struct nx *nx)
{
	if (!nx->has_mode)
		return;
	int report = !f->mode_known || f->mode != nx->new_mode;
	f->mode = nx->new_mode;
	f->mode_known = 1;
	if (report) /* a MODE.Exec that changes nothing known says nothing (ptxed: the same) */
		pt_flow_aux_push(f, PT_FLOW_AUX_EXEC_MODE, nx->new_mode, 0, 0);
	if (f->event_trace && !f->iflag_known) { /* its IF, unknown before (ptet-mode_exec-if) */
		f->iflag_known = 1;
		pt_flow_aux_push(f, PT_FLOW_AUX_IFLAGS, f->iflag, 0, 0);
	}
}

/* Follows code that needs no packet (straight line, direct JMP/CALL) from ip: returns the
 * address of the first PTWRITE (ptwrite != 0) or the address reached after n instructions;
 * 0 if a branch that needs a packet, or no code, comes first. */
uint64_t pt_flow_straight_walk(const struct ptrec_pt_flow *f, uint64_t ip, unsigned mode,
                              unsigned n, int ptwrite)
{
	for (unsigned i = 0; i <= STRAIGHT_MAX; i++) {
		if (!ptwrite && i == n)
			return ip;
		uint8_t b[15];
		struct ptrec_x86_insn insn;
		size_t got = ptrec_pt_img_read(f->image, ip, b, sizeof(b));
		int len = ptrec_x86_ild_decode(b, got, ip, (enum ptrec_x86_mode)mode, &insn);
		if (len <= 0)
			return 0;
		if (ptwrite && insn.iclass == X86_IC_PTWRITE)
			return ip;
		if (insn.iclass == X86_IC_OTHER || insn.iclass == X86_IC_PTWRITE)
			ip += (uint64_t)len;
		else if ((insn.iclass == X86_IC_JMP || insn.iclass == X86_IC_CALL) &&
		         (insn.flags & X86_INSN_HAS_TARGET))
			ip = insn.target;
		else
			return 0;
	}
	return 0;
}

/* TRIG without IP: the trigger fired ICNT instructions after its anchor (the last IP packet,
 * the end of the last TNT's branches when one came after it, or the previous TRIG); it is due
 * when the flow reaches the IP that many instructions on.
 * Without ICNT, while tracing is off, or when code that needs a packet lies in between, it is
 * delivered where it is read. */
static void trig_add(struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt)
{
	uint64_t ip = 0;
	/* A TNT read after the anchor's packet reported later branches: with all its bits used
	 * the flow is right after the last of them, and ICNT counts from there. */
	if (f->state == ST_ENABLED && f->trig_anchor && !f->tnt_n &&
	    f->tnt_off > f->trig_anchor_off)
		f->trig_anchor = f->ip;
	if ((pkt->sub & 0x10000u) && (pkt->sub & 0xffffu) <= STRAIGHT_MAX &&
	    f->state == ST_ENABLED && f->trig_anchor && f->trig_n < TRIG_QUEUE)
		ip = pt_flow_straight_walk(f, f->trig_anchor, f->mode, pkt->sub & 0xffffu, 0);
	if (!ip) {
		pt_flow_aux_push(f, PT_FLOW_AUX_TRIG, pkt->payload, pkt->payload2, 0);
		return;
	}
	f->trig_anchor = ip;
	f->trig_anchor_off = f->pos;
	unsigned i = (f->trig_head + f->trig_n++) % TRIG_QUEUE;
	f->trig[i].ip = ip;
	f->trig[i].trbv = pkt->payload;
	f->trig[i].mult = pkt->payload2;
}

/* Delivers the oldest waiting TRIG (the flow is at its IP). */
void pt_flow_trig_release(struct ptrec_pt_flow *f)
{
	unsigned i = f->trig_head;
	pt_flow_aux_push(f, PT_FLOW_AUX_TRIG, f->trig[i].trbv, f->trig[i].mult, f->trig[i].ip);
	f->trig_head = (i + 1) % TRIG_QUEUE;
	f->trig_n--;
}

/* The flow will not get to the waiting TRIGs' IPs (tracing went off, an overflow): deliver
 * them now. */
void pt_flow_trig_flush(struct ptrec_pt_flow *f)
{
	while (f->trig_n)
		pt_flow_trig_release(f);
}

/* Decodes into *pkt, without consuming, the first packet at or after pos that skip() does
 * not pass over; 0 at the end of the trace or at a bad packet.  Every step moves forward. */
static int first_pkt(const struct ptrec_pt_flow *f, size_t pos,
                     int (*skip)(const struct ptrec_pt_flow *, const struct ptrec_pt_packet *),
                     struct ptrec_pt_packet *pkt)
{
	enum ptrec_pt_packet_ctx ctx = f->ctx;
	while (pos < f->len) {
		int n = ptrec_pt_packet_decode(f->buf + pos, f->len - pos, &ctx, pkt);
		if (n <= 0)
			return 0;
		if (!skip(f, pkt))
			return 1;
		pos += (size_t)n;
	}
	return 0;
}

/* Status and timing packets, which say nothing of the flow (and APL11's spurious TIP.PGD
 * after OVF). */
static int skip_status(const struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt)
{
	switch (pkt->type) {
	case PT_PKT_PAD: case PT_PKT_TSC: case PT_PKT_MTC: case PT_PKT_TMA: case PT_PKT_CYC:
	case PT_PKT_CBR: case PT_PKT_MNT: case PT_PKT_PIP: case PT_PKT_VMCS:
	case PT_PKT_MODE_EXEC: case PT_PKT_MODE_TSX: case PT_PKT_PWRE: case PT_PKT_PWRX:
	case PT_PKT_MWAIT: case PT_PKT_EXSTOP: case PT_PKT_CFE: case PT_PKT_EVD:
		return 1;
	case PT_PKT_TIP_PGD:
		return (f->errata & PT_ERRATUM_APL11) != 0;
	default:
		return 0;
	}
}

/* What may stand between an MWAIT and the EXSTOP of its stop: timing, PAD, MNT, PWRE. */
static int skip_to_stop(const struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt)
{
	(void)f;
	switch (pkt->type) {
	case PT_PKT_PAD: case PT_PKT_TSC: case PT_PKT_MTC: case PT_PKT_TMA: case PT_PKT_CYC:
	case PT_PKT_CBR: case PT_PKT_MNT: case PT_PKT_PWRE:
		return 1;
	default:
		return 0;
	}
}

/* 1 if the next packet at or after pos, past timing, PAD, MNT and PWRE packets, is an
 * EXSTOP with IP=1: the stop whose FUP gives the IP of an MWAIT or PWRE read before pos; 2
 * if it is an EXSTOP without IP. */
static int exstop_follows(const struct ptrec_pt_flow *f, size_t pos)
{
	struct ptrec_pt_packet pkt;
	if (!first_pkt(f, pos, skip_to_stop, &pkt) || pkt.type != PT_PKT_EXSTOP)
		return 0;
	return pkt.ip_bit ? 1 : 2;
}

static int exstop_ip_follows(const struct ptrec_pt_flow *f, size_t pos)
{
	return exstop_follows(f, pos) == 1;
}

/* An EXSTOP without IP was delivered: the PWREs held for it come after it; the other held
 * items keep waiting for their FUP. */
static void release_held_pwre_only(struct ptrec_pt_flow *f)
{
	unsigned k = 0;
	for (unsigned i = 0; i < f->fup_held_n; i++) {
		const struct aux_item *a = &f->fup_held[i];
		if (a->kind == PT_FLOW_AUX_PWRE)
			pt_flow_aux_push(f, a->kind, a->payload, a->arg, 0);
		else
			f->fup_held[k++] = *a;
	}
	f->fup_held_n = k;
}

/* Applies a status-only packet (in_psb: inside PSB+, where PIP and VMCS only refresh the
 * state).  Returns 1 if pkt was one, else 0.  f->pos is at pkt. */
static int status_pkt(struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt, int in_psb)
{
	switch (pkt->type) {
	case PT_PKT_PAD:
	case PT_PKT_PSBEND:
	case PT_PKT_BBP:
	case PT_PKT_BIP:
		return 1;
	case PT_PKT_EVD:
		if (!in_psb)
			evd_read(f, pkt);
		return 1;
	case PT_PKT_MWAIT: /* binds to the IP of the FUP after the EXSTOP that follows */
		if (exstop_ip_follows(f, f->pos + pkt->size))
			aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_MWAIT,
			         pkt->payload & 0xffffffffu, pkt->payload >> 32);
		else /* no EXSTOP.IP, so no FUP of its own: it has no IP */
			pt_flow_aux_push(f, PT_FLOW_AUX_MWAIT, pkt->payload & 0xffffffffu, pkt->payload >> 32, 0);
		return 1;
	case PT_PKT_PWRE: {
		/* The C-state entry of an MWAIT or EXSTOP (IP=1) waiting for its FUP, or of the
		 * EXSTOP that follows (SDM 36.4.2.24: "When transitioning from C0.0 to a deeper
		 * C-state, the PWRE packet will be followed by an EXSTOP"): it comes after them,
		 * where execution stopped (release_held_pwre; without IP, right after that EXSTOP:
		 * release_held_pwre_only). */
		int stop = !in_psb && exstop_follows(f, f->pos + pkt->size);
		for (unsigned i = 0; i < f->fup_held_n && !in_psb && !stop; i++)
			stop = f->fup_held[i].kind == PT_FLOW_AUX_MWAIT ||
			       f->fup_held[i].kind == PT_FLOW_AUX_EXSTOP;
		if (stop)
			aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_PWRE, pkt->sub,
			         pkt->payload2);
		else
			pt_flow_aux_push(f, PT_FLOW_AUX_PWRE, pkt->sub, pkt->payload2, 0);
		return 1;
	}
	case PT_PKT_PWRX:
		pt_flow_aux_push(f, PT_FLOW_AUX_PWRX, pkt->payload2, 0, 0);
		return 1;
	case PT_PKT_TRACESTOP:
		pt_flow_aux_push(f, PT_FLOW_AUX_STOP, 0, 0, 0);
		return 1;
	case PT_PKT_MNT:
		pt_flow_aux_push(f, PT_FLOW_AUX_MNT, pkt->payload, 0, 0);
		return 1;
	case PT_PKT_TSC:
	case PT_PKT_MTC:
	case PT_PKT_TMA:
	case PT_PKT_CYC:
	case PT_PKT_CBR:
		ptrec_pt_time_update(&f->time, pkt);
		if (pkt->type == PT_PKT_CBR && !in_psb) /* a frequency change (in PSB+ it only
		                                            * restates the ratio) */
			pt_flow_aux_push(f, PT_FLOW_AUX_CBR, pkt->payload, 0, 0);
		return 1;
	case PT_PKT_PIP:
	case PT_PKT_VMCS: {
		unsigned kind = pkt->type == PT_PKT_PIP ? PT_FLOW_AUX_PAGING : PT_FLOW_AUX_VMCS;
		uint64_t arg = pkt->type == PT_PKT_PIP ? pkt->payload2 : 0;
		if (pkt->type == PT_PKT_PIP)
			f->cr3 = pkt->payload;
		else
			f->vmcs = pkt->payload;
		if (in_psb)
			return 1;
		if (f->state == ST_ENABLED) /* the SDM binds it to the far branch or async event */
			aux_hold(f->br_held, &f->br_held_n, kind, pkt->payload, arg);
		else
			pt_flow_aux_push(f, kind, pkt->payload, arg, 0);
		return 1;
	}
	case PT_PKT_MODE_EXEC: {
		unsigned iflag = (pkt->sub >> 2) & 1, changed = iflag != f->iflag;
		f->iflag = (uint8_t)iflag;
		/* Event trace: an instruction that changes RFLAGS.IF (STI, CLI, POPF) gives a
		 * MODE.Exec with the new IF and then a FUP with the IP where it took effect; the
		 * execution mode is the same and that FUP starts no asynchronous event.  (A far
		 * branch's MODE.Exec comes before its TIP, an interrupt's after its FUP.)  So a
		 * MODE.Exec right before a FUP binds to it also when nothing changed (ptxed's
		 * ptet-mode_exec-spurious): it says nothing then, and the FUP is not an event.  One
		 * that changes the execution mode is a far transfer's (after an OVF: before the FUP
		 * that says where tracing resumes): its mode applies next, as below. */
		if (!in_psb && (changed || exec_mode(pkt->sub) == f->mode) &&
		    pt_flow_peek(f, f->pos + pkt->size) == PT_PKT_FUP) {
			f->fup_skip = 1;
			if (f->event_trace && !f->iflag_known)
				changed = f->iflag_known = 1; /* first said here: reported */
			if (exec_mode(pkt->sub) != f->mode) /* (an IF change in a far transfer, or
			                                       without branches traced) */
				aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_EXEC_MODE,
				         exec_mode(pkt->sub), 0);
			if (changed)
				aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_IFLAGS, iflag, 0);
			return 1;
		}
		f->pending_mode = exec_mode(pkt->sub);
		f->has_pending_mode = 1;
		return 1;
	}
	case PT_PKT_MODE_TSX:
		f->in_tx = pkt->sub & 1;
		if (!in_psb && f->state != ST_ENABLED && f->state != ST_RESYNC &&
		    f->nx.kind != NX_OVF) {
			/* tracing off: no FUP follows; the state holds from the next TIP.PGE on */
			f->spec = pkt->sub & 1;
			pt_flow_aux_push(f, PT_FLOW_AUX_TSX, (pkt->sub & 2) ? 2 : pkt->sub & 1, 0, 0);
		} else if (pkt->sub & 2) {
			f->tsx_abort = 1;
		} else {
			f->fup_skip = 1;
			if (!in_psb)
				aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_TSX, pkt->sub & 1, 0);
		}
		return 1;
	case PT_PKT_PTW:
		f->ptw_fup = 0;
		if (f->ptw_n < PTW_QUEUE) {
			f->ptw[(f->ptw_head + f->ptw_n) % PTW_QUEUE] = pkt->payload;
			f->ptw_ip[(f->ptw_head + f->ptw_n) % PTW_QUEUE] = 0;
			f->ptw_n++;
			f->ptw_fup = pkt->ip_bit;
		}
		if (pkt->ip_bit)
			f->fup_skip = 1;
		return 1;
	case PT_PKT_EXSTOP:
		if (pkt->ip_bit) {
			f->fup_skip = 1;
			aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_EXSTOP, 0, 0);
		} else {
			pt_flow_aux_push(f, PT_FLOW_AUX_EXSTOP, 0, 0, 0);
			release_held_pwre_only(f);
		}
		return 1;
	case PT_PKT_TRIG:
		if (pkt->ip_bit) { /* a FUP follows: the IP of the triggering instruction */
			f->fup_skip = 1;
			if (!in_psb)
				aux_hold(f->fup_held, &f->fup_held_n, PT_FLOW_AUX_TRIG, pkt->payload,
				         pkt->payload2);
		} else if (!in_psb) {
			trig_add(f, pkt);
		}
		return 1;
	case PT_PKT_BEP:
		if (pkt->ip_bit)
			f->fup_skip = 1;
		return 1;
	case PT_PKT_CFE:
		if (pkt->ip_bit)
			f->fup_skip = 1;
		if (!in_psb)
			cfe_read(f, pkt);
		return 1;
	default:
		return 0;
	}
}

/* Decodes the IP of an IP packet into *ip.  Returns 1 with an IP, 0 when suppressed, or
 * -PTREC_EFORMAT. */
static int pkt_ip(struct ptrec_pt_flow *f, const struct ptrec_pt_packet *pkt, uint64_t *ip)
{
	int e = ptrec_pt_last_ip_update(&f->last_ip, pkt, ip);
	if (e == -PTREC_ENOMAP)
		return 0;
	if (e < 0)
		return -PTREC_EFORMAT;
	f->trig_anchor = *ip;
	f->trig_anchor_off = f->pos;
	return 1;
}

/* Processes PSB+ starting at the PSB at pos.  Sets have_fup and fup.  Returns 0, 1 if the trace
 * ended inside it, 2 if an OVF ended it (pos is at the OVF: "an overflow inside PSB+ ends it;
 * no PSBEND follows"), or a negative error (pos is then at the bad packet). */
int pt_flow_psb_plus(struct ptrec_pt_flow *f, int *have_fup, uint64_t *fup)
{
	struct ptrec_pt_packet pkt;
	*have_fup = 0;
	int n = read_pkt(f, &pkt);
	if (n <= 0 || pkt.type != PT_PKT_PSB)
		return n == 0 ? 1 : -PTREC_EFORMAT;
	f->pos += (size_t)n;
	f->last_ip = 0;
	f->ctx = PT_CTX_NONE;
	f->fup_skip = 0;
	f->tsx_abort = 0;
	int pending = f->has_pending_mode; /* a mode change whose TIP is still to come */
	f->has_pending_mode = 0;
	f->fup_held_n = f->br_held_n = 0;
	f->evd_pending = 0;
	f->psb_mode_bad = 0;
	ptrec_pt_time_psb(&f->time); /* the TSC in PSB+ starts the time again */
	for (;;) {
		n = read_pkt(f, &pkt);
		if (n == 0)
			return 1;
		if (n < 0)
			return n;
		switch (pkt.type) {
		case PT_PKT_PSBEND:
			f->pos += (size_t)n;
			f->spec = f->in_tx; /* MODE.TSX in PSB+ says whether execution is in a
			                       transaction there */
			return 0;
		case PT_PKT_FUP: {
			uint64_t ip;
			int e = pkt_ip(f, &pkt, &ip);
			if (e < 0)
				return e;
			if (e > 0) {
				*have_fup = 1;
				*fup = ip;
			}
			break;
		}
		case PT_PKT_MODE_EXEC:
			/* PSB+ restates the state: a mode other than the one the flow is in means
			 * the decode went wrong before it (the packets of a mode change are a
			 * MODE.Exec and the branch's TIP, never PSB+ alone) */
			if (f->state == ST_ENABLED && f->mode_known && !pending &&
			    f->mode != exec_mode(pkt.sub)) {
				f->psb_mode_bad = 1;
				f->psb_mode_off = f->pos;
			}
			f->mode = exec_mode(pkt.sub);
			f->mode_known = 1;
			f->iflag = (uint8_t)((pkt.sub >> 2) & 1);
			f->iflag_known = 1; /* PSB+ states it (not reported: a status update) */
			f->has_pending_mode = 0;
			break;
		case PT_PKT_MODE_TSX:
			f->in_tx = pkt.sub & 1;
			break;
		case PT_PKT_OVF:
			f->spec = f->in_tx;
			ptrec_pt_time_update(&f->time, &pkt);
			return 2;
		case PT_PKT_PSB:
		case PT_PKT_TNT:
		case PT_PKT_TIP:
		case PT_PKT_TIP_PGE:
		case PT_PKT_TIP_PGD:
			return -PTREC_EFORMAT;
		default:
			status_pkt(f, &pkt, 1);
			break;
		}
		f->pos += (size_t)n;
	}
}

/* The type of the first packet at or after pos that is not a status or timing packet
 * (PT_PKT_INVALID at the end or at a bad packet); reads without consuming. */
unsigned pt_flow_peek(const struct ptrec_pt_flow *f, size_t pos)
{
	struct ptrec_pt_packet pkt;
	return first_pkt(f, pos, skip_status, &pkt) ? pkt.type : (unsigned)PT_PKT_INVALID;
}

/* After OVF: 1 if a FUP (or, with SKD010, a TIP) says where execution resumes. */
static int ovf_fup_follows(struct ptrec_pt_flow *f)
{
	unsigned t = pt_flow_peek(f, f->pos);
	return t == PT_PKT_FUP || (t == PT_PKT_TIP && (f->errata & PT_ERRATUM_SKD010));
}

/* Reads packets until the look-ahead item is known or, unless want_tip, a TNT packet was
 * queued.  Bounded by the trace length: every iteration consumes at least one byte or stops. */
void pt_flow_lookahead(struct ptrec_pt_flow *f, int want_tip)
{
	struct ptrec_pt_packet pkt;
	if (f->nx.kind == NX_NONE)
		memset(&f->nx, 0, sizeof(f->nx));
	while (f->nx.kind == NX_NONE) {
		int n = read_pkt(f, &pkt);
		uint64_t off = f->pos;
		if (n == 0) {
			f->nx.kind = NX_END;
			f->nx.cut = off < f->len;
			f->nx.off = off;
			nx_time(f);
			return;
		}
		if (n < 0) {
			set_err(f, off, -PTREC_EFORMAT, "bad packet");
			return;
		}
		switch (pkt.type) {
		case PT_PKT_TNT:
			if (f->tnt_n + pkt.tnt_count > 64) {
				if (want_tip)
					set_err(f, off, -PTREC_ESTATE, "more than 64 TNT bits before a TIP");
				return;
			}
			f->tnt = (f->tnt << pkt.tnt_count) |
			         (pkt.payload & ((1ull << pkt.tnt_count) - 1));
			f->tnt_n += pkt.tnt_count;
			f->pos += (size_t)n;
			f->no_progress = 0;
			f->tnt_tflags = (uint8_t)ptrec_pt_time_now(&f->time, &f->tnt_tsc);
			f->tnt_off = off;
			if (!want_tip)
				return;
			continue;
		case PT_PKT_TIP:
		case PT_PKT_TIP_PGE:
		case PT_PKT_TIP_PGD: {
			uint64_t ip = 0;
			int e = pkt_ip(f, &pkt, &ip);
			if (e < 0) {
				set_err(f, off, e, "bad IP compression");
				return;
			}
			f->pos += (size_t)n;
			f->no_progress = 0;
			f->nx.kind = pkt.type == PT_PKT_TIP ? NX_TIP
			           : pkt.type == PT_PKT_TIP_PGE ? NX_PGE : NX_PGD;
			f->nx.has_ip = e > 0;
			f->nx.ip = ip;
			f->nx.off = off;
			f->nx.has_mode = f->has_pending_mode;
			f->nx.new_mode = f->pending_mode;
			if (pkt.type != PT_PKT_TIP_PGD)
				f->has_pending_mode = 0;
			else if (!f->nx.has_mode) { /* used up once read: the position is past it
			                                and the PADs after it */
				size_t p = f->pos;
				while (p < f->len && !f->buf[p] && p - off < UINT32_MAX)
					p++;
				f->nx.at = (uint32_t)(p - off);
			}
			nx_time(f);
			if (pkt.type == PT_PKT_TIP_PGE && !f->nx.has_ip)
				set_err(f, off, -PTREC_EFORMAT, "TIP.PGE without IP");
			return;
		}
		case PT_PKT_FUP: {
			uint64_t ip;
			int e = pkt_ip(f, &pkt, &ip);
			if (e <= 0) {
				set_err(f, off, -PTREC_EFORMAT, e < 0 ? "bad IP compression"
				                                      : "FUP without IP");
				return;
			}
			f->pos += (size_t)n;
			f->no_progress = 0;
			if (f->fup_skip) { /* bound to PTW/TSX/EXSTOP/...: nothing else to do */
				if (f->ptw_fup) { /* the PTWRITE's own IP: deliver it there */
					f->ptw_ip[(f->ptw_head + f->ptw_n - 1) % PTW_QUEUE] = ip;
					f->ptw_fup_off = off;
				}
				f->ptw_fup = 0;
				f->fup_skip = 0;
				cfe_fup(f, ip);
				/* what they say happens at ip; after an error, any FUP says where
				 * execution is (the resync resumes there) */
				if (f->fup_held_n || f->state == ST_RESYNC) {
					f->nx.kind = NX_FUP_AUX;
					f->nx.ip = ip;
					f->nx.has_ip = 1;
					f->nx.off = off;
					nx_time(f);
					return;
				}
				continue;
			}
			/* An asynchronous event: FUP then TIP or TIP.PGD. */
			f->nx.ip = ip;
			f->nx.off = off;
			f->nx.abort = f->tsx_abort;
			f->tsx_abort = 0;
			nx_time(f);
			for (;;) {
				n = read_pkt(f, &pkt);
				uint64_t off2 = f->pos;
				if (n == 0) {
					f->nx.kind = NX_FUP_END;
					return;
				}
				if (n < 0) {
					set_err(f, off2, -PTREC_EFORMAT, "bad packet");
					return;
				}
				if (pkt.type == PT_PKT_TIP || pkt.type == PT_PKT_TIP_PGD) {
					uint64_t to = 0;
					e = pkt_ip(f, &pkt, &to);
					if (e < 0) {
						set_err(f, off2, e, "bad IP compression");
						return;
					}
					f->pos += (size_t)n;
					f->nx.kind = pkt.type == PT_PKT_TIP ? NX_FUP_TIP : NX_FUP_PGD;
					if (!f->nx.abort) /* an abort is complete at its FUP ("a
					                     MODE.TSX, which binds to the same IP") */
						f->nx.at = (uint32_t)(off2 - off); /* the packet
						                                     that completes the pair */
					f->nx.has_ip2 = e > 0;
					f->nx.ip2 = to;
					f->nx.has_mode = f->has_pending_mode;
					f->nx.new_mode = f->pending_mode;
					if (pkt.type == PT_PKT_TIP)
						f->has_pending_mode = 0;
					if (pkt.type == PT_PKT_TIP && !f->nx.has_ip2)
						set_err(f, off2, -PTREC_EFORMAT, "async branch TIP without IP");
					return;
				}
				if (!status_pkt(f, &pkt, 0) || pkt.type == PT_PKT_PTW) {
					set_err(f, off2, -PTREC_ESTATE, "FUP not followed by TIP or TIP.PGD");
					return;
				}
				f->pos += (size_t)n;
				if (f->nx.kind == NX_ERR) /* (an EVD its CFE does not take) */
					return;
			}
		}
		case PT_PKT_PSB: {
			int have_fup;
			uint64_t ip = 0;
			int e = pt_flow_psb_plus(f, &have_fup, &ip);
			if (e == 1) {
				f->nx.kind = NX_END;
				f->nx.off = off;
				nx_time(f);
				return;
			}
			if (e < 0) {
				set_err(f, f->pos, e, "bad packet in PSB+");
				return;
			}
			f->no_progress = 0;
			if (have_fup && e != 2) { /* (an OVF ends PSB+: what it said is lost) */
				f->nx.kind = NX_SYNC;
				f->nx.ip = ip;
				f->nx.has_ip = 1;
				f->nx.off = off;
				f->nx.at = f->pos - 2 - off < UINT32_MAX /* its PSBEND (02 23) */
				           ? (uint32_t)(f->pos - 2 - off) : 0;
				f->nx.psb_off = off;
				nx_time(f);
				return;
			}
			/* Tracing is off here. */
			pt_flow_psb_reached(f, off);
			if (f->stop_sync && (size_t)off >= f->stop_sync) {
				f->nx.kind = NX_SYNC_OFF;
				f->nx.off = off;
				f->nx.psb_off = off;
				return;
			}
			continue;
		}
		case PT_PKT_OVF: {
			f->pos += (size_t)n;
			f->no_progress = 0;
			f->nx.kind = NX_OVF;
			f->nx.off = off;
			f->iflag_known = 0; /* (a MODE.Exec after it says IF again) */
			f->nx.has_ip = 0;
			f->nx.ip = 0;
			release_held_lost_fup(f);
			/* event trace: an event whose FUP pair or branch the overflow lost did
			 * happen, before it; where, only its own FUP says (IP=1).  So did the
			 * CR3/VMCS change of a PIP/VMCS still waiting for its MOV CR3, far
			 * branch or VMLAUNCH: the CFE/EVD first, then they, in packet order. */
			pt_flow_release_br_held(f, 0);
			f->evd_pending = 0;
			nx_time(f);
			ptrec_pt_time_update(&f->time, &pkt);
			if (!ovf_fup_follows(f))
				return; /* what follows OVF comes after the overflow */
			/* What follows says where execution resumes. */
			for (;;) {
				n = read_pkt(f, &pkt);
				if (n <= 0)
					return; /* end or error: reported when read again */
				if (pkt.type == PT_PKT_FUP || (pkt.type == PT_PKT_TIP &&
				                               (f->errata & PT_ERRATUM_SKD010))) {
					uint64_t ip;
					int e = pkt_ip(f, &pkt, &ip);
					if (e <= 0)
						return;
					f->pos += (size_t)n;
					if (pkt.type == PT_PKT_FUP && (f->errata & PT_ERRATUM_APL12) &&
					    pt_flow_peek(f, f->pos) == PT_PKT_TIP_PGE)
						return; /* APL12: tracing is off; the FUP was spurious */
					f->nx.has_ip = 1;
					f->nx.ip = ip;
					f->nx.has_mode = f->has_pending_mode;
					f->nx.new_mode = f->pending_mode;
					f->has_pending_mode = 0;
					f->fup_skip = 0;
					return;
				}
				if (pkt.type == PT_PKT_TIP_PGD && (f->errata & PT_ERRATUM_APL11)) {
					f->pos += (size_t)n;
					continue;
				}
				if (pkt.type == PT_PKT_PTW || !status_pkt(f, &pkt, 0))
					return; /* TIP.PGE, PSB, ...: handled in the following state */
				f->pos += (size_t)n;
				if (f->nx.kind == NX_ERR)
					return;
			}
		}
		default:
			if (!status_pkt(f, &pkt, 0)) {
				set_err(f, off, -PTREC_EFORMAT, "unknown packet");
				return;
			}
			f->pos += (size_t)n;
			continue;
		}
	}
}

int pt_flow_ptw_due(const struct ptrec_pt_flow *f)
{
	if (!f->ptw_n)
		return 0;
	if (f->ptw_done || !f->ptw_ip[f->ptw_head])
		return 1;
	/* with its PTWRITE's IP (from its FUP) it waits for the flow to get there, also when
	 * a resync resumes there (once: pt_flow_step_resync) */
	return f->state != ST_ENABLED && (f->state != ST_RESYNC || f->ptw_resumed);
}

/* ---- sync points -------------------------------------------------------------------------- */

/* Takes the state that decides what comes next (see ptrec_pt_flow_joined). */
void pt_flow_key_take(const struct ptrec_pt_flow *f, struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->valid = 1;
	k->state = f->state;
	k->ip = f->state == ST_ENABLED ? f->ip : 0;
	k->last_ip = f->last_ip;
	k->mode = f->mode;
	k->has_pending_mode = f->has_pending_mode;
	k->pending_mode = f->has_pending_mode ? f->pending_mode : 0;
	k->fup_skip = f->fup_skip;
	k->tsx_abort = f->tsx_abort;
	k->in_tx = f->in_tx;
	k->tnt_n = f->tnt_n;
	k->ret_n = f->ret_n;
	k->ptw_n = f->ptw_n;
	k->aux_n = f->aux_n;
	k->tnt_tsc = f->tnt_tsc;
	k->tnt_tflags = f->tnt_tflags;
	k->time = f->time;
}

/* Execution reached the PSB+ at psb_off: what happens from here depends only on PSB+ (its
 * state was applied when it was read).  Direct branches from here on carry its time. */
void pt_flow_psb_reached(struct ptrec_pt_flow *f, uint64_t psb_off)
{
	f->ret_n = 0; /* only calls after a PSB can be returned to by compressed RETs */
	f->tnt_tflags = (uint8_t)ptrec_pt_time_now(&f->time, &f->tnt_tsc);
	f->tnt_off = psb_off;
}

/* A PSB+ at psb_off was just bound: stop there if it is at or after stop_sync.  Returns 1 if
 * the decoder stopped (state ST_END). */
int pt_flow_stop_at_sync(struct ptrec_pt_flow *f, uint64_t psb_off)
{
	if (!f->stop_sync || psb_off < f->stop_sync)
		return 0;
	pt_flow_key_take(f, &f->key_stop);
	f->stopped = 1;
	f->state = ST_END;
	f->cur_blk = -1;
	return 1;
}

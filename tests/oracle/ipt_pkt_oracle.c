/* ipt_pkt_oracle.c — libipt's packet decoder mapped to neutral fields (test-only oracle).
 *
 * Field vectors v[] per packet, in our conventions (those of libptrec/pt_packet.h):
 *   tnt.8/tnt.64: v0 = bit count, v1 = bits (libipt keeps the oldest branch in the highest of
 *                 the counted bits, as we do)
 *   tip/tip.pge/tip.pgd/fup: v0 = IPBytes, v1 = raw IP bytes
 *   mode.exec: v0 = CS.L | CS.D << 1    mode.tsx: v0 = InTX | TXAbort << 1
 *   pip: v0 = CR3, v1 = NR             vmcs: v0 = pointer
 *   cbr/tsc/mtc/cyc/mnt: v0 = value     tma: v0 = CTC, v1 = FastCounter
 *   ptw: v0 = payload bytes, v1 = payload, v2 = IP bit     exstop: v0 = IP bit
 *   mwait: v0 = hints, v1 = EXT (the defined bits only)
 *   pwre: v0 = C-state, v1 = sub-state, v2 = HW bit
 *   pwrx: v0 = last core C-state, v1 = deepest, v2 = wake reason bits (interrupt bit 0,
 *         store to monitored address bit 2, autonomous/HW bit 3) */
#include "config.h"

#include <string.h>

#include <intel-pt.h>

#include "ipt_pkt_oracle.h"

struct oracle {
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
};

static struct oracle the_oracle; /* one at a time is all the test needs */

void *ipt_pkt_open(const uint8_t *buf, size_t len)
{
	struct oracle *o = &the_oracle;

	memset(o, 0, sizeof(*o));
	o->cfg.size = sizeof(o->cfg);
	o->cfg.begin = (uint8_t *)buf;
	o->cfg.end = (uint8_t *)buf + len;
	o->dec = pt_pkt_alloc_decoder(&o->cfg);
	if (!o->dec || pt_pkt_sync_set(o->dec, 0) < 0) {
		if (o->dec)
			pt_pkt_free_decoder(o->dec);
		return NULL;
	}
	return o;
}

void ipt_pkt_close(void *dec)
{
	struct oracle *o = dec;

	if (o && o->dec)
		pt_pkt_free_decoder(o->dec);
	if (o)
		o->dec = NULL;
}

int ipt_pkt_seek(void *dec, size_t off)
{
	struct oracle *o = dec;

	return pt_pkt_sync_set(o->dec, off) < 0 ? -1 : 0;
}

int ipt_pkt_next(void *dec, struct ipt_pkt *out)
{
	struct oracle *o = dec;
	struct pt_packet p;
	int r = pt_pkt_next(o->dec, &p, sizeof(p));

	memset(out, 0, sizeof(*out));
	if (r == -pte_eos)
		return IPT_PKT_EOS;
	if (r == -pte_bad_opc || r == -pte_bad_packet)
		return IPT_PKT_BAD;
	if (r < 0)
		return IPT_PKT_OTHER;
	out->size = p.size;
	switch (p.type) {
	case ppt_pad: out->name = "pad"; break;
	case ppt_psb: out->name = "psb"; break;
	case ppt_psbend: out->name = "psbend"; break;
	case ppt_ovf: out->name = "ovf"; break;
	case ppt_stop: out->name = "stop"; break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		out->name = p.type == ppt_tnt_8 ? "tnt.8" : "tnt.64";
		out->v[0] = p.payload.tnt.bit_size;
		out->v[1] = p.payload.tnt.payload;
		break;
	case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd: case ppt_fup:
		out->name = p.type == ppt_tip ? "tip" : p.type == ppt_tip_pge ? "tip.pge" :
		            p.type == ppt_tip_pgd ? "tip.pgd" : "fup";
		out->v[0] = (uint64_t)p.payload.ip.ipc;
		out->v[1] = p.payload.ip.ip;
		break;
	case ppt_mode:
		if (p.payload.mode.leaf == pt_mol_exec) {
			out->name = "mode.exec";
			out->v[0] = p.payload.mode.bits.exec.csl | p.payload.mode.bits.exec.csd << 1;
		} else {
			out->name = "mode.tsx";
			out->v[0] = p.payload.mode.bits.tsx.intx | p.payload.mode.bits.tsx.abrt << 1;
		}
		break;
	case ppt_pip:
		out->name = "pip";
		out->v[0] = p.payload.pip.cr3;
		out->v[1] = p.payload.pip.nr;
		break;
	case ppt_vmcs: out->name = "vmcs"; out->v[0] = p.payload.vmcs.base; break;
	case ppt_cbr: out->name = "cbr"; out->v[0] = p.payload.cbr.ratio; break;
	case ppt_tsc: out->name = "tsc"; out->v[0] = p.payload.tsc.tsc; break;
	case ppt_mtc: out->name = "mtc"; out->v[0] = p.payload.mtc.ctc; break;
	case ppt_cyc: out->name = "cyc"; out->v[0] = p.payload.cyc.value; break;
	case ppt_mnt: out->name = "mnt"; out->v[0] = p.payload.mnt.payload; break;
	case ppt_tma:
		out->name = "tma";
		out->v[0] = p.payload.tma.ctc;
		out->v[1] = p.payload.tma.fc;
		break;
	case ppt_exstop: out->name = "exstop"; out->v[0] = p.payload.exstop.ip; break;
	case ppt_mwait:
		out->name = "mwait";
		/* the SDM defines hints[7:0] and EXT[1:0]; libipt also returns reserved bits */
		out->v[0] = p.payload.mwait.hints & 0xff;
		out->v[1] = p.payload.mwait.ext & 3;
		break;
	case ppt_pwre:
		out->name = "pwre";
		out->v[0] = p.payload.pwre.state;
		out->v[1] = p.payload.pwre.sub_state;
		out->v[2] = p.payload.pwre.hw;
		break;
	case ppt_pwrx:
		out->name = "pwrx";
		out->v[0] = p.payload.pwrx.last;
		out->v[1] = p.payload.pwrx.deepest;
		out->v[2] = p.payload.pwrx.interrupt | p.payload.pwrx.store << 2 |
		            p.payload.pwrx.autonomous << 3;
		break;
	case ppt_ptw:
		out->name = "ptw";
		out->v[0] = (uint64_t)pt_ptw_size(p.payload.ptw.plc);
		out->v[1] = p.payload.ptw.payload;
		out->v[2] = p.payload.ptw.ip;
		break;
	default:
		out->name = "?";
		break;
	}
	return p.size;
}

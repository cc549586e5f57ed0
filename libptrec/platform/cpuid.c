/* cpuid.c — CPUID leaves for Intel PT: reading them and decoding them field by field.
 * ptrec_cpu_fms() is ASYNC-SIGNAL-SAFE (one CPUID instruction, no libc call); the rest runs
 * at init or in the ptrec tool. */
#include "config.h"

#include <string.h>

#include "platform/cpuid.h"

static void cpuid_exec(uint32_t leaf, uint32_t subleaf, struct ptrec_cpuid_regs *r)
{
	uint32_t a = 0, b = 0, c = 0, d = 0;

#if defined(__x86_64__)
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(leaf), "c"(subleaf));
#else
	(void)leaf; /* no CPUID: every leaf reads 0, so nothing (no PT, no vendor) is enumerated */
	(void)subleaf;
#endif
	r->eax = a;
	r->ebx = b;
	r->ecx = c;
	r->edx = d;
}

static uint8_t bit(uint32_t v, unsigned n)
{
	return (uint8_t)((v >> n) & 1u);
}

/* Copies four little-endian register bytes into s. */
static void put_reg(char *s, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		s[i] = (char)((v >> (8 * i)) & 0xff);
}

void ptrec_cpuid_fms_from_eax(uint32_t eax, uint32_t *family, uint32_t *model,
                              uint32_t *stepping)
{
	uint32_t fam_id = (eax >> 8) & 0xf;      /* EAX[11:8] Family ID */
	uint32_t model_id = (eax >> 4) & 0xf;    /* EAX[7:4] Model */
	uint32_t ext_model = (eax >> 16) & 0xf;  /* EAX[19:16] Extended Model ID */
	uint32_t ext_fam = (eax >> 20) & 0xff;   /* EAX[27:20] Extended Family ID */
	uint32_t f = fam_id, m = model_id;

	if (fam_id == 0x0f)
		f = fam_id + ext_fam;
	if (fam_id == 0x06 || fam_id == 0x0f)
		m = (ext_model << 4) + model_id;
	if (family)
		*family = f;
	if (model)
		*model = m;
	if (stepping)
		*stepping = eax & 0xf;
}

void ptrec_cpu_fms(uint32_t *family, uint32_t *model, uint32_t *stepping)
{
	struct ptrec_cpuid_regs r;

	cpuid_exec(1, 0, &r);
	ptrec_cpuid_fms_from_eax(r.eax, family, model, stepping);
}

/* SDM Vol. 3C "Intel PT and LBRs": on these DisplayFamily_DisplayModel signatures the use of
 * Intel PT and LBRs is mutually exclusive. */
static int pt_lbr_exclusive(uint32_t family, uint32_t model)
{
	static const uint32_t models[] = {0x3d, 0x47, 0x4e, 0x4f, 0x56, 0x5e};

	if (family != 6)
		return 0;
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (models[i] == model)
			return 1;
	return 0;
}

void ptrec_cpuid_decode(const struct ptrec_cpuid_raw *raw, struct ptrec_cpu_info *info)
{
	memset(info, 0, sizeof(*info));

	if (raw->have & PTREC_CPUID_HAVE_0) {
		info->max_leaf = raw->leaf0.eax;
		put_reg(info->vendor + 0, raw->leaf0.ebx);
		put_reg(info->vendor + 4, raw->leaf0.edx);
		put_reg(info->vendor + 8, raw->leaf0.ecx);
		info->vendor[12] = '\0';
		info->is_intel = !strcmp(info->vendor, "GenuineIntel");
	}

	if ((raw->have & PTREC_CPUID_HAVE_1) && info->max_leaf >= 1) {
		info->signature = raw->leaf1.eax;
		ptrec_cpuid_fms_from_eax(raw->leaf1.eax, &info->family, &info->model,
		                         &info->stepping);
		info->hypervisor = bit(raw->leaf1.ecx, 31);
		info->ds = bit(raw->leaf1.edx, 21);
		info->dtes64 = bit(raw->leaf1.ecx, 2);
		info->pt_lbr_exclusive = (uint8_t)(info->is_intel &&
		                                   pt_lbr_exclusive(info->family, info->model));
	}

	if (info->hypervisor && (raw->have & PTREC_CPUID_HAVE_HV)) {
		put_reg(info->hv_vendor + 0, raw->hv.ebx);
		put_reg(info->hv_vendor + 4, raw->hv.ecx);
		put_reg(info->hv_vendor + 8, raw->hv.edx);
		info->hv_vendor[12] = '\0';
	}

	if ((raw->have & PTREC_CPUID_HAVE_7) && info->max_leaf >= 7)
		info->pt = bit(raw->leaf7.ebx, 25);

	if (info->pt && info->max_leaf >= 0x14 && (raw->have & PTREC_CPUID_HAVE_14_0)) {
		const struct ptrec_cpuid_regs *r = &raw->leaf14_0;

		info->pt_leaf_valid = 1;
		info->pt_max_subleaf = r->eax;
		info->cr3_filtering = bit(r->ebx, 0);
		info->psb_cyc = bit(r->ebx, 1);
		info->ip_filtering = bit(r->ebx, 2);
		info->mtc = bit(r->ebx, 3);
		info->ptwrite = bit(r->ebx, 4);
		info->power_event_trace = bit(r->ebx, 5);
		info->psb_pmi_preserve = bit(r->ebx, 6);
		info->event_trace = bit(r->ebx, 7);
		info->tnt_disable = bit(r->ebx, 8);
		info->topa_output = bit(r->ecx, 0);
		info->topa_multiple_entries = bit(r->ecx, 1);
		info->single_range_output = bit(r->ecx, 2);
		info->trace_transport_output = bit(r->ecx, 3);
		info->lip = bit(r->ecx, 31);
	}

	if (info->pt_leaf_valid && info->pt_max_subleaf >= 1 &&
	    (raw->have & PTREC_CPUID_HAVE_14_1)) {
		const struct ptrec_cpuid_regs *r = &raw->leaf14_1;

		info->pt_subleaf1_valid = 1;
		info->num_address_ranges = r->eax & 0x7;
		info->mtc_periods = (uint16_t)(r->eax >> 16);
		info->cycle_thresholds = (uint16_t)(r->ebx & 0xffff);
		info->psb_periods = (uint16_t)(r->ebx >> 16);
	}

	if (info->max_leaf >= 0x15 && (raw->have & PTREC_CPUID_HAVE_15)) {
		info->tsc_leaf_valid = 1;
		info->tsc_ratio_den = raw->leaf15.eax;
		info->tsc_ratio_num = raw->leaf15.ebx;
		info->crystal_hz = raw->leaf15.ecx;
	}
}

void ptrec_cpuid_read(struct ptrec_cpuid_raw *raw)
{
	memset(raw, 0, sizeof(*raw));
	cpuid_exec(0, 0, &raw->leaf0);
	raw->have |= PTREC_CPUID_HAVE_0;
	uint32_t max = raw->leaf0.eax;

	if (max >= 1) {
		cpuid_exec(1, 0, &raw->leaf1);
		raw->have |= PTREC_CPUID_HAVE_1;
	}
	if (max >= 7) {
		cpuid_exec(7, 0, &raw->leaf7);
		raw->have |= PTREC_CPUID_HAVE_7;
	}
	if (max >= 0x14 && ((raw->leaf7.ebx >> 25) & 1)) {
		cpuid_exec(0x14, 0, &raw->leaf14_0);
		raw->have |= PTREC_CPUID_HAVE_14_0;
		if (raw->leaf14_0.eax >= 1) {
			cpuid_exec(0x14, 1, &raw->leaf14_1);
			raw->have |= PTREC_CPUID_HAVE_14_1;
		}
	}
	if (max >= 0x15) {
		cpuid_exec(0x15, 0, &raw->leaf15);
		raw->have |= PTREC_CPUID_HAVE_15;
	}
	if ((raw->leaf1.ecx >> 31) & 1) {
		cpuid_exec(0x40000000u, 0, &raw->hv);
		raw->have |= PTREC_CPUID_HAVE_HV;
	}
}

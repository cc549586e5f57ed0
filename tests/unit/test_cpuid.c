/* test_cpuid.c — CPUID decoding against register values of real parts, with every expected
 * field worked out by hand from the SDM bit definitions (Vol. 2A CPUID leaf 01H/07H/14H/15H,
 * Vol. 3C "CPUID Leaf 14H Enumeration of Intel Processor Trace Capabilities"), then the reader
 * and ptrec_cpu_fms() on this machine against the kernel's /proc/cpuinfo. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "platform/cpuid.h"

#define R(a, b, c, d) {(a), (b), (c), (d)}

/* Intel Core i5-6600K (Skylake client, 06_5EH stepping 3).  Register values from the libcpuid
 * test corpus, tests/intel/core_6th_gen/skylake-i5.test (basic_cpuid[0,1,7,20,21]); that
 * dump has no leaf 14H sub-leaf 1, so it is left out here. */
static void test_skylake_client(void)
{
	struct ptrec_cpuid_raw raw = {
		.have = PTREC_CPUID_HAVE_0 | PTREC_CPUID_HAVE_1 | PTREC_CPUID_HAVE_7 |
		        PTREC_CPUID_HAVE_14_0 | PTREC_CPUID_HAVE_15,
		.leaf0 = R(0x00000016, 0x756e6547, 0x6c65746e, 0x49656e69),
		.leaf1 = R(0x000506e3, 0x00100800, 0x7ffafbbf, 0xbfebfbff),
		.leaf7 = R(0x00000000, 0x029c6fbb, 0x00000000, 0x00000000),
		.leaf14_0 = R(0x00000001, 0x0000000f, 0x00000007, 0x00000000),
		.leaf15 = R(0x00000002, 0x00000124, 0x00000000, 0x00000000),
	};
	struct ptrec_cpu_info ci;

	ptrec_cpuid_decode(&raw, &ci);
	/* EBX,EDX,ECX = "Genu" "ineI" "ntel" */
	CHECK_STR(ci.vendor, "GenuineIntel");
	CHECK(ci.is_intel);
	CHECK_EQ_U64(ci.max_leaf, 0x16);
	/* 0x506E3: stepping [3:0]=3, model [7:4]=0xE, family [11:8]=6, ext model [19:16]=5:
	 * family 06H so DisplayModel = 5<<4 | 0xE = 0x5E. */
	CHECK_EQ_U64(ci.signature, 0x000506e3);
	CHECK_EQ_U64(ci.family, 6);
	CHECK_EQ_U64(ci.model, 0x5e);
	CHECK_EQ_U64(ci.stepping, 3);
	CHECK_EQ_U64(ci.hypervisor, 0);         /* ECX 0x7ffafbbf: bit 31 clear */
	CHECK_EQ_U64(ci.dtes64, 1);             /* ECX 0x7ffafbbf: bit 2 (0x4) set */
	CHECK_EQ_U64(ci.ds, 1);                 /* EDX 0xbfebfbff: bit 21 (0x200000) set */
	CHECK_STR(ci.hv_vendor, "");
	CHECK_EQ_U64(ci.pt, 1);                 /* EBX 0x029c6fbb: bit 25 (0x02000000) set */
	CHECK_EQ_U64(ci.pt_lbr_exclusive, 1);   /* 06_5EH is on the SDM's list */
	CHECK_EQ_U64(ci.pt_leaf_valid, 1);
	CHECK_EQ_U64(ci.pt_max_subleaf, 1);
	/* EBX = 0xF: bits 0..3 */
	CHECK_EQ_U64(ci.cr3_filtering, 1);
	CHECK_EQ_U64(ci.psb_cyc, 1);
	CHECK_EQ_U64(ci.ip_filtering, 1);
	CHECK_EQ_U64(ci.mtc, 1);
	CHECK_EQ_U64(ci.ptwrite, 0);
	CHECK_EQ_U64(ci.power_event_trace, 0);
	CHECK_EQ_U64(ci.psb_pmi_preserve, 0);
	CHECK_EQ_U64(ci.event_trace, 0);
	CHECK_EQ_U64(ci.tnt_disable, 0);
	/* ECX = 7: bits 0..2 */
	CHECK_EQ_U64(ci.topa_output, 1);
	CHECK_EQ_U64(ci.topa_multiple_entries, 1);
	CHECK_EQ_U64(ci.single_range_output, 1);
	CHECK_EQ_U64(ci.trace_transport_output, 0);
	CHECK_EQ_U64(ci.lip, 0);
	/* Sub-leaf 1 is not in the dump: nothing decoded from it. */
	CHECK_EQ_U64(ci.pt_subleaf1_valid, 0);
	CHECK_EQ_U64(ci.mtc_periods, 0);
	/* Leaf 15H: TSC/crystal = 0x124/2 = 292/2, crystal frequency not enumerated. */
	CHECK_EQ_U64(ci.tsc_leaf_valid, 1);
	CHECK_EQ_U64(ci.tsc_ratio_den, 2);
	CHECK_EQ_U64(ci.tsc_ratio_num, 292);
	CHECK_EQ_U64(ci.crystal_hz, 0);
}

/* Intel Core i5-8350U (Kaby Lake R, Skylake microarchitecture, 06_8EH stepping 0xA), Dell XPS
 * 13 9370: `cpuid -1 --raw` posted to linux-kernel by Paul Menzel, 2022-08-23 ("WARNING: CPU:
 * 1 PID: 83 at arch/x86/kernel/cpu/sgx/main.c:446").  Includes leaf 14H sub-leaf 1. */
static void test_kaby_lake_r(void)
{
	struct ptrec_cpuid_raw raw = {
		.have = PTREC_CPUID_HAVE_0 | PTREC_CPUID_HAVE_1 | PTREC_CPUID_HAVE_7 |
		        PTREC_CPUID_HAVE_14_0 | PTREC_CPUID_HAVE_14_1 | PTREC_CPUID_HAVE_15,
		.leaf0 = R(0x00000016, 0x756e6547, 0x6c65746e, 0x49656e69),
		.leaf1 = R(0x000806ea, 0x00100800, 0x7ffafbff, 0xbfebfbff),
		.leaf7 = R(0x00000000, 0x029c67af, 0x00000000, 0xbc002e00),
		.leaf14_0 = R(0x00000001, 0x0000000f, 0x00000007, 0x00000000),
		.leaf14_1 = R(0x02490002, 0x003f3fff, 0x00000000, 0x00000000),
		.leaf15 = R(0x00000002, 0x0000009e, 0x00000000, 0x00000000),
	};
	struct ptrec_cpu_info ci;

	ptrec_cpuid_decode(&raw, &ci);
	CHECK_STR(ci.vendor, "GenuineIntel");
	/* 0x806EA: stepping 0xA, model 0xE, family 6, ext model 8 -> 06_8EH */
	CHECK_EQ_U64(ci.family, 6);
	CHECK_EQ_U64(ci.model, 0x8e);
	CHECK_EQ_U64(ci.stepping, 0xa);
	CHECK_EQ_U64(ci.hypervisor, 0);
	CHECK_EQ_U64(ci.pt, 1);                 /* 0x029c67af & 0x02000000 */
	CHECK_EQ_U64(ci.pt_lbr_exclusive, 0);   /* 06_8EH is not on the list */
	CHECK_EQ_U64(ci.pt_leaf_valid, 1);
	CHECK_EQ_U64(ci.psb_cyc, 1);
	CHECK_EQ_U64(ci.ptwrite, 0);
	CHECK_EQ_U64(ci.topa_multiple_entries, 1);
	/* 14H.1 EAX = 0x02490002: [2:0] = 2 ranges, [31:16] = 0x0249 = encodings 0, 3, 6, 9 */
	CHECK_EQ_U64(ci.pt_subleaf1_valid, 1);
	CHECK_EQ_U64(ci.num_address_ranges, 2);
	CHECK_EQ_U64(ci.mtc_periods, 0x0249);
	/* 14H.1 EBX = 0x003f3fff: cycle thresholds 0..13, PSB frequencies 0..5 */
	CHECK_EQ_U64(ci.cycle_thresholds, 0x3fff);
	CHECK_EQ_U64(ci.psb_periods, 0x003f);
	CHECK_EQ_U64(ci.tsc_ratio_num, 158);
	CHECK_EQ_U64(ci.tsc_ratio_den, 2);
}

/* Intel Core i7-1065G7 (Ice Lake client, 06_7EH stepping 5).  Register values from the
 * libcpuid test corpus, tests/intel/core_10th_gen/ice-lake-i7.test (no sub-leaf 1 there). */
static void test_ice_lake_client(void)
{
	struct ptrec_cpuid_raw raw = {
		.have = PTREC_CPUID_HAVE_0 | PTREC_CPUID_HAVE_1 | PTREC_CPUID_HAVE_7 |
		        PTREC_CPUID_HAVE_14_0 | PTREC_CPUID_HAVE_15,
		.leaf0 = R(0x0000001b, 0x756e6547, 0x6c65746e, 0x49656e69),
		.leaf1 = R(0x000706e5, 0x00100800, 0x7ffafbbf, 0xbfebfbff),
		.leaf7 = R(0x00000000, 0xf2bf27ef, 0x40405f4e, 0xbc000410),
		.leaf14_0 = R(0x00000001, 0x0000000f, 0x00000007, 0x00000000),
		.leaf15 = R(0x00000002, 0x0000004e, 0x0249f000, 0x00000000),
	};
	struct ptrec_cpu_info ci;

	ptrec_cpuid_decode(&raw, &ci);
	CHECK_EQ_U64(ci.max_leaf, 0x1b);
	/* 0x706E5: stepping 5, model 0xE, family 6, ext model 7 -> 06_7EH */
	CHECK_EQ_U64(ci.family, 6);
	CHECK_EQ_U64(ci.model, 0x7e);
	CHECK_EQ_U64(ci.stepping, 5);
	CHECK_EQ_U64(ci.pt, 1);                 /* EBX 0xf2bf27ef: top byte 0xf2 has bit 1 */
	CHECK_EQ_U64(ci.pt_lbr_exclusive, 0);
	CHECK_EQ_U64(ci.cr3_filtering, 1);
	CHECK_EQ_U64(ci.ptwrite, 0);            /* EBX 0xF: this client part has no PTWRITE */
	CHECK_EQ_U64(ci.lip, 0);
	/* Leaf 15H ECX = 0x0249f000 = 38,400,000 Hz crystal; TSC = 38.4 MHz * 78 / 2 */
	CHECK_EQ_U64(ci.crystal_hz, 38400000);
	CHECK_EQ_U64(ci.tsc_ratio_num, 78);
}

/* Every 14H.0 EBX/ECX bit the SDM defines, one at a time, and the reserved bits ignored
 * (values constructed for the test). */
static void test_pt_bits_one_by_one(void)
{
	struct ptrec_cpuid_raw raw = {
		.have = PTREC_CPUID_HAVE_0 | PTREC_CPUID_HAVE_1 | PTREC_CPUID_HAVE_7 |
		        PTREC_CPUID_HAVE_14_0 | PTREC_CPUID_HAVE_14_1,
		.leaf0 = R(0x20, 0x756e6547, 0x6c65746e, 0x49656e69),
		.leaf1 = R(0x000906ea, 0, 0, 0),
		.leaf7 = R(0, 1u << 25, 0, 0),
	};
	struct ptrec_cpu_info ci;

	raw.leaf14_0 = (struct ptrec_cpuid_regs)R(0, 1u << 4, 0, 0);
	ptrec_cpuid_decode(&raw, &ci);
	CHECK(ci.ptwrite && !ci.mtc && !ci.power_event_trace);
	CHECK_EQ_U64(ci.pt_subleaf1_valid, 0);  /* EAX = 0: no sub-leaf 1 even if recorded */
	raw.leaf14_0.ebx = 1u << 5;
	ptrec_cpuid_decode(&raw, &ci);
	CHECK(ci.power_event_trace && !ci.ptwrite && !ci.psb_pmi_preserve);
	raw.leaf14_0.ebx = 1u << 6;
	ptrec_cpuid_decode(&raw, &ci);
	CHECK(ci.psb_pmi_preserve && !ci.event_trace && !ci.power_event_trace);
	raw.leaf14_0.ebx = 1u << 7;
	ptrec_cpuid_decode(&raw, &ci);
	CHECK(ci.event_trace && !ci.tnt_disable && !ci.psb_pmi_preserve);
	raw.leaf14_0.ebx = 1u << 8;
	ptrec_cpuid_decode(&raw, &ci);
	CHECK(ci.tnt_disable && !ci.event_trace);
	raw.leaf14_0.ebx = 0xfffffe00u;           /* reserved bits 31:9 only */
	raw.leaf14_0.ecx = 0x7ffffff0u;           /* reserved bits 30:4 only */
	ptrec_cpuid_decode(&raw, &ci);
	CHECK(!ci.cr3_filtering && !ci.psb_cyc && !ci.ip_filtering && !ci.mtc && !ci.ptwrite &&
	      !ci.power_event_trace && !ci.psb_pmi_preserve && !ci.event_trace &&
	      !ci.tnt_disable);
	CHECK(!ci.topa_output && !ci.topa_multiple_entries && !ci.single_range_output &&
	      !ci.trace_transport_output && !ci.lip);
	raw.leaf14_0.ebx = 0;
	raw.leaf14_0.ecx = 1u << 3;
	ptrec_cpuid_decode(&raw, &ci);
	CHECK(ci.trace_transport_output && !ci.single_range_output && !ci.lip);
	raw.leaf14_0.ecx = 1u << 31;
	ptrec_cpuid_decode(&raw, &ci);
	CHECK(ci.lip && !ci.topa_output);

	/* Sub-leaf 1: EAX[2:0] ranges, EAX[15:3] reserved. */
	raw.leaf14_0 = (struct ptrec_cpuid_regs)R(1, 0, 0, 0);
	raw.leaf14_1 = (struct ptrec_cpuid_regs)R(0x8001fffcu, 0x12345678u, 0, 0);
	ptrec_cpuid_decode(&raw, &ci);
	CHECK_EQ_U64(ci.pt_subleaf1_valid, 1);
	CHECK_EQ_U64(ci.num_address_ranges, 4);     /* 0xc & 7 */
	CHECK_EQ_U64(ci.mtc_periods, 0x8001);
	CHECK_EQ_U64(ci.cycle_thresholds, 0x5678);
	CHECK_EQ_U64(ci.psb_periods, 0x1234);
}

/* A guest whose virtual CPU does not enumerate PT (values constructed for the test: leaf 14H
 * registers hold junk that must be ignored because 07H EBX[25] is clear). */
static void test_guest_without_pt(void)
{
	struct ptrec_cpuid_raw raw = {
		.have = PTREC_CPUID_HAVE_0 | PTREC_CPUID_HAVE_1 | PTREC_CPUID_HAVE_7 |
		        PTREC_CPUID_HAVE_14_0 | PTREC_CPUID_HAVE_HV,
		.leaf0 = R(0x16, 0x756e6547, 0x6c65746e, 0x49656e69),
		.leaf1 = R(0x000506e3, 0, 0x80000000u, 0),
		.leaf7 = R(0, 0xfdffffffu, 0, 0),       /* everything but bit 25 */
		.leaf14_0 = R(1, 0xf, 7, 0),
		/* "KVMKVMKVM\0\0\0" in EBX, ECX, EDX */
		.hv = R(0x40000001u, 0x4b4d564b, 0x564b4d56, 0x0000004d),
	};
	struct ptrec_cpu_info ci;

	ptrec_cpuid_decode(&raw, &ci);
	CHECK_EQ_U64(ci.hypervisor, 1);
	CHECK_STR(ci.hv_vendor, "KVMKVMKVM");
	CHECK_EQ_U64(ci.ds, 0);                 /* EDX = 0 */
	CHECK_EQ_U64(ci.dtes64, 0);             /* ECX = 0x80000000 */
	CHECK_EQ_U64(ci.pt, 0);
	CHECK_EQ_U64(ci.pt_leaf_valid, 0);
	CHECK_EQ_U64(ci.topa_output, 0);
	CHECK_EQ_U64(ci.pt_lbr_exclusive, 1);   /* the model still says 06_5EH */

	/* Leaves above max_leaf are not trusted even when recorded. */
	raw.leaf0.eax = 0x0d;
	raw.leaf7.ebx = 1u << 25;
	ptrec_cpuid_decode(&raw, &ci);
	CHECK_EQ_U64(ci.pt, 1);
	CHECK_EQ_U64(ci.pt_leaf_valid, 0);      /* 14H > max leaf 0DH */
	raw.leaf0.eax = 0x06;
	ptrec_cpuid_decode(&raw, &ci);
	CHECK_EQ_U64(ci.pt, 0);                 /* 07H > max leaf 06H */
}

static void test_display_family_model(void)
{
	uint32_t f, m, s;

	/* Family 0FH: DisplayFamily = 0xF + Extended Family; model gets the extended model.
	 * 0x00800F12 (AMD EPYC 7001): ext family 8, family F, model 1, stepping 2 -> 17H/01H. */
	ptrec_cpuid_fms_from_eax(0x00800f12, &f, &m, &s);
	CHECK_EQ_U64(f, 0x17);
	CHECK_EQ_U64(m, 0x01);
	CHECK_EQ_U64(s, 2);
	/* 0x00A00F11 (AMD EPYC 7003): 0xF + 0xA = 19H, model 01H */
	ptrec_cpuid_fms_from_eax(0x00a00f11, &f, &m, &s);
	CHECK_EQ_U64(f, 0x19);
	CHECK_EQ_U64(m, 0x01);
	/* 0x00000F29 (Pentium 4 Northwood): family 0FH, model 2, stepping 9 */
	ptrec_cpuid_fms_from_eax(0x00000f29, &f, &m, &s);
	CHECK_EQ_U64(f, 0x0f);
	CHECK_EQ_U64(m, 0x02);
	CHECK_EQ_U64(s, 9);
	/* Family 5: the extended fields are not used (constructed value with ext model 1). */
	ptrec_cpuid_fms_from_eax(0x00010543, &f, &m, &s);
	CHECK_EQ_U64(f, 5);
	CHECK_EQ_U64(m, 4);
	CHECK_EQ_U64(s, 3);
	/* Family 6 ignores the extended family field (constructed: ext family 1). */
	ptrec_cpuid_fms_from_eax(0x001506e3, &f, &m, &s);
	CHECK_EQ_U64(f, 6);
	CHECK_EQ_U64(m, 0x5e);
	/* NULL outputs are allowed. */
	ptrec_cpuid_fms_from_eax(0x000506e3, NULL, &m, NULL);
	CHECK_EQ_U64(m, 0x5e);
}

/* The kernel's view of this CPU, from /proc/cpuinfo's first processor. */
struct kernel_cpu {
	char vendor[32];
	long family, model, stepping;
	int hypervisor, intel_pt;
	int ok;
};

static void read_proc_cpuinfo(struct kernel_cpu *k)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	int seen = 0;

	memset(k, 0, sizeof(*k));
	k->stepping = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "processor", 9) && seen++)
			break;
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *val = colon + 1;
		while (*val == ' ')
			val++;
		val[strcspn(val, "\n")] = '\0';
		if (!strncmp(line, "vendor_id", 9))
			snprintf(k->vendor, sizeof(k->vendor), "%s", val);
		else if (!strncmp(line, "cpu family", 10))
			k->family = strtol(val, NULL, 10);
		else if (!strncmp(line, "model\t", 6))
			k->model = strtol(val, NULL, 10);
		else if (!strncmp(line, "stepping", 8))
			k->stepping = strtol(val, NULL, 10);
		else if (!strncmp(line, "flags", 5)) {
			char padded[8200];
			snprintf(padded, sizeof(padded), " %s ", val);
			k->hypervisor = strstr(padded, " hypervisor ") != NULL;
			k->intel_pt = strstr(padded, " intel_pt ") != NULL;
			k->ok = 1;
		}
	}
	fclose(f);
}

static void test_this_machine(void)
{
	struct kernel_cpu k;
	struct ptrec_cpuid_raw raw;
	struct ptrec_cpu_info ci;
	uint32_t f = 0, m = 0, s = 0;

#if !defined(__x86_64__)
	printf("note: no CPUID on this machine; this-machine checks skipped\n");
	return;
#endif
	read_proc_cpuinfo(&k);
	if (!k.ok) {
		printf("note: /proc/cpuinfo unreadable; this-machine checks skipped\n");
		return;
	}
	ptrec_cpuid_read(&raw);
	ptrec_cpuid_decode(&raw, &ci);
	ptrec_cpu_fms(&f, &m, &s);
	printf("this machine: %s family %ld model %ld stepping %ld hypervisor %d intel_pt %d\n",
	       k.vendor, k.family, k.model, k.stepping, k.hypervisor, k.intel_pt);
	CHECK_STR(ci.vendor, k.vendor);
	CHECK_EQ_U64(f, (uint64_t)k.family);
	CHECK_EQ_U64(m, (uint64_t)k.model);
	if (k.stepping >= 0)
		CHECK_EQ_U64(s, (uint64_t)k.stepping);
	CHECK_EQ_U64(ci.family, f);
	CHECK_EQ_U64(ci.model, m);
	CHECK_EQ_U64(ci.hypervisor, k.hypervisor);
	/* The kernel's intel_pt flag is CPUID.07H:EBX[25] (it may also clear it, never set it). */
	if (k.intel_pt)
		CHECK_EQ_U64(ci.pt, 1);
	CHECK((raw.have & PTREC_CPUID_HAVE_14_0) ? ci.pt : 1);
}

int main(void)
{
	test_skylake_client();
	test_kaby_lake_r();
	test_ice_lake_client();
	test_pt_bits_one_by_one();
	test_guest_without_pt();
	test_display_family_model();
	test_this_machine();
	return check_done();
}

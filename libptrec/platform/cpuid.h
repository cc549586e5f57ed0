/* cpuid.h — what CPUID says about Intel Processor Trace on this CPU.
 *
 * Two layers: struct ptrec_cpuid_raw holds the register values of the leaves that matter
 * (00H, 01H, 07H.0, 14H.0, 14H.1, 15H, and 40000000H when a hypervisor is present);
 * ptrec_cpuid_decode() turns them into named fields as the Intel SDM (Vol. 2A "CPUID", Vol. 3C
 * "Intel Processor Trace", Table "CPUID Leaf 14H Enumeration") defines them.  The decoder is
 * pure, so it is tested against register values of real parts.  ptrec_cpuid_read() executes
 * CPUID on this machine. */
#ifndef PTREC_CPUID_H
#define PTREC_CPUID_H

#include <stdint.h>

/* One CPUID result. */
struct ptrec_cpuid_regs {
	uint32_t eax, ebx, ecx, edx; /* output registers */
};

/* Bits of ptrec_cpuid_raw.have: which leaves hold values. */
#define PTREC_CPUID_HAVE_0    0x01u /* leaf 00H */
#define PTREC_CPUID_HAVE_1    0x02u /* leaf 01H */
#define PTREC_CPUID_HAVE_7    0x04u /* leaf 07H sub-leaf 0 */
#define PTREC_CPUID_HAVE_14_0 0x08u /* leaf 14H sub-leaf 0 */
#define PTREC_CPUID_HAVE_14_1 0x10u /* leaf 14H sub-leaf 1 */
#define PTREC_CPUID_HAVE_15   0x20u /* leaf 15H */
#define PTREC_CPUID_HAVE_HV   0x40u /* leaf 40000000H (hypervisor vendor) */

/* Register values of the leaves ptrec looks at.  A leaf whose `have` bit is clear was not
 * executed (or not recorded) and is all zeros. */
struct ptrec_cpuid_raw {
	unsigned have;                  /* PTREC_CPUID_HAVE_* */
	struct ptrec_cpuid_regs leaf0;  /* vendor, maximum basic leaf */
	struct ptrec_cpuid_regs leaf1;  /* version information, feature flags */
	struct ptrec_cpuid_regs leaf7;  /* structured extended features, sub-leaf 0 */
	struct ptrec_cpuid_regs leaf14_0; /* Intel PT main leaf */
	struct ptrec_cpuid_regs leaf14_1; /* Intel PT sub-leaf 1 */
	struct ptrec_cpuid_regs leaf15; /* TSC / core crystal clock ratio */
	struct ptrec_cpuid_regs hv;     /* 40000000H: hypervisor vendor signature */
};

/* The decoded facts.  Flags are 0 or 1.  A field whose leaf is not valid (see the *_valid
 * flags) is 0. */
struct ptrec_cpu_info {
	char vendor[13];          /* "GenuineIntel", "AuthenticAMD", ... (leaf 00H EBX,EDX,ECX) */
	uint32_t max_leaf;        /* leaf 00H EAX: highest basic leaf */
	uint32_t signature;       /* leaf 01H EAX as read */
	uint32_t family;          /* DisplayFamily: Family_ID, + Extended_Family_ID if 0FH */
	uint32_t model;           /* DisplayModel: (Extended_Model_ID << 4) + Model_ID when
	                             Family_ID is 06H or 0FH, else Model_ID */
	uint32_t stepping;        /* leaf 01H EAX[3:0] */
	uint8_t hypervisor;       /* leaf 01H ECX[31]: running under a hypervisor */
	char hv_vendor[13];       /* leaf 40000000H EBX,ECX,EDX when hypervisor ("KVMKVMKVM"),
	                             else "" */
	uint8_t is_intel;         /* vendor is GenuineIntel */
	uint8_t ds;               /* leaf 01H EDX[21]: Debug Store (BTS and PEBS buffers) */
	uint8_t dtes64;           /* leaf 01H ECX[2]: 64-bit DS area layout (the kernel's
	                             intel_bts driver requires it) */

	uint8_t pt;               /* CPUID.(EAX=07H,ECX=0):EBX[25]: Intel PT supported */
	uint8_t pt_lbr_exclusive; /* DisplayFamily_DisplayModel is 06_3DH, 06_47H, 06_4EH,
	                             06_4FH, 06_56H or 06_5EH: PT and LBR are mutually exclusive */

	uint8_t pt_leaf_valid;    /* leaf 14H sub-leaf 0 decoded (max_leaf >= 14H and pt) */
	uint32_t pt_max_subleaf;  /* 14H.0 EAX: highest valid sub-leaf of leaf 14H */
	/* 14H.0 EBX */
	uint8_t cr3_filtering;    /* [0] IA32_RTIT_CTL.CR3Filter, IA32_RTIT_CR3_MATCH usable */
	uint8_t psb_cyc;          /* [1] configurable PSB frequency and cycle-accurate mode */
	uint8_t ip_filtering;     /* [2] IP filtering, TraceStop, PT MSRs kept across warm reset */
	uint8_t mtc;              /* [3] MTC timing packet, suppression of COFI-based packets */
	uint8_t ptwrite;          /* [4] PTWRITE (PTWEn, FUPonPTW) */
	uint8_t power_event_trace;/* [5] power event trace (PwrEvtEn) */
	uint8_t psb_pmi_preserve; /* [6] PSB and PMI preservation (InjectPsbPmiOnEnable) */
	uint8_t event_trace;      /* [7] event trace packets (EventEn) */
	uint8_t tnt_disable;      /* [8] TNT packet disable (DisTNT) */
	/* 14H.0 ECX */
	uint8_t topa_output;      /* [0] ToPA output scheme */
	uint8_t topa_multiple_entries; /* [1] ToPA tables hold any number of output entries */
	uint8_t single_range_output;   /* [2] single-range output scheme */
	uint8_t trace_transport_output;/* [3] output to trace transport subsystem (FabricEn) */
	uint8_t lip;              /* [31] IP payloads are linear addresses (include CS base) */

	uint8_t pt_subleaf1_valid;/* leaf 14H sub-leaf 1 decoded (pt_max_subleaf >= 1) */
	uint32_t num_address_ranges; /* 14H.1 EAX[2:0]: ADDRn_CFG ranges for IP filtering */
	uint16_t mtc_periods;     /* 14H.1 EAX[31:16]: bit n set = MTCFreq encoding n allowed */
	uint16_t cycle_thresholds;/* 14H.1 EBX[15:0]: bit n set = CycThresh encoding n allowed */
	uint16_t psb_periods;     /* 14H.1 EBX[31:16]: bit n set = PSBFreq encoding n allowed */

	uint8_t tsc_leaf_valid;   /* leaf 15H decoded (max_leaf >= 15H) */
	uint32_t tsc_ratio_den;   /* 15H EAX: denominator of TSC / core crystal clock */
	uint32_t tsc_ratio_num;   /* 15H EBX: numerator (0 = ratio not enumerated) */
	uint32_t crystal_hz;      /* 15H ECX: core crystal clock in Hz (0 = not enumerated) */
};

/* Decodes raw into info.  Pure; never fails (missing leaves give zero fields). */
void ptrec_cpuid_decode(const struct ptrec_cpuid_raw *raw, struct ptrec_cpu_info *info);

/* Executes CPUID for every leaf of struct ptrec_cpuid_raw that this CPU has (by leaf 00H
 * EAX, 07H EBX[25], 14H.0 EAX and 01H ECX[31]) and fills raw. */
void ptrec_cpuid_read(struct ptrec_cpuid_raw *raw);

/* Executes CPUID leaf 01H and returns DisplayFamily, DisplayModel and stepping (any pointer
 * may be NULL).  ASYNC-SIGNAL-SAFE: one CPUID instruction, no memory but the outputs. */
void ptrec_cpu_fms(uint32_t *family, uint32_t *model, uint32_t *stepping);

/* The SDM's DisplayFamily/DisplayModel/stepping rule applied to a leaf 01H EAX value. */
void ptrec_cpuid_fms_from_eax(uint32_t eax, uint32_t *family, uint32_t *model,
                              uint32_t *stepping);

#endif
